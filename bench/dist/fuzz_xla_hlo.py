"""Mutates XLA's oracle programs (bench/dist/xla_plans.jsonl) and runs `laycert dist check
--xla-hlo` on each: byte flips, cuts, digit changes, swapped or dropped lines, huge numbers.
Every run must exit 0, 1, 2 or 3 (certified, refuted, bad input, unknown) within 20 s, with no
panic and bounded output. Usage: python3 bench/dist/fuzz_xla_hlo.py RUNS [SEED]
(needs target/release/laycert; 2,000 runs take about 10 s).
"""
import json, os, random, subprocess, sys, tempfile, time
HERE = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(os.path.join(HERE, 'xla_plans.jsonl'))]
rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
B = os.environ.get('LAYCERT', os.path.join(HERE, '..', '..', 'target', 'release', 'laycert'))
work = tempfile.mkdtemp()
bad = 0; n = 0; codes = {}
t0 = time.time()
for it in range(int(sys.argv[1])):
    r = rnd.choice(rows)
    text = r['hlo']
    k = rnd.randrange(6)
    if k == 0:   # byte flip
        i = rnd.randrange(len(text)); text = text[:i] + chr(rnd.randrange(32, 127)) + text[i+1:]
    elif k == 1: # truncate
        text = text[:rnd.randrange(len(text))]
    elif k == 2: # digit change
        idx = [i for i, c in enumerate(text) if c.isdigit()]
        i = rnd.choice(idx); text = text[:i] + str(rnd.randrange(10)) + text[i+1:]
    elif k == 3: # line swap
        ls = text.split('\n'); i, j = rnd.randrange(len(ls)), rnd.randrange(len(ls)); ls[i], ls[j] = ls[j], ls[i]; text = '\n'.join(ls)
    elif k == 4: # line drop
        ls = text.split('\n'); del ls[rnd.randrange(len(ls))]; text = '\n'.join(ls)
    else:        # huge number
        idx = [i for i, c in enumerate(text) if c.isdigit()]
        i = rnd.choice(idx); text = text[:i] + '99999999999' + text[i+1:]
    p = os.path.join(work, 'x.hlo'); open(p, 'w').write(text)
    mesh = r['mesh']
    shape = ','.join(map(str, r['shape']))
    cmd = [B, 'dist', 'check', '--mesh', mesh, '--shape', shape, '--dtype', 'f32', '--from', r['src'], '--to', r['dst'], '--xla-hlo', p]
    try:
        o = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        print('HANG', it, k); bad += 1; continue
    n += 1
    codes[o.returncode] = codes.get(o.returncode, 0) + 1
    if o.returncode not in (0, 1, 2, 3) or 'panicked' in o.stderr or len(o.stdout) + len(o.stderr) > 100000:
        bad += 1
        print('BAD', it, k, o.returncode, o.stderr[-300:])
        open(os.path.join(work, f'bad{it}.hlo'), 'w').write(text)
        print('  kept as', os.path.join(work, f'bad{it}.hlo'))
print('runs', n, 'codes', dict(sorted(codes.items())), 'bad', bad, 'secs %.0f' % (time.time() - t0))
sys.exit(1 if bad else 0)
