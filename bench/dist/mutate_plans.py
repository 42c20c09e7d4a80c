#!/usr/bin/env python3
"""Mutated plans against an independent simulator. For redistributions between Shard/Replicate
layouts whose plan is one send-recv step, this script asks laycert for the certified plan
(`dist plan --cert`), mutates the plan (a number changed, a message dropped or duplicated) and
runs `dist check --plan` on each mutant. Its own simulator (torch.chunk's rule for the blocks,
the messages copied box by box; it shares nothing with laycert) decides whether the mutant
delivers every element of every target block. Fails on a mutant laycert certifies that the
simulator finds wrong, and on any exit other than 0-3 or a panic.

Usage: python3 bench/dist/mutate_plans.py [RUNS] [SEED]   (needs target/release/laycert;
1,000 runs take about 6 s). laycert also refutes mutants the simulator accepts: those read or
write outside a buffer, or leave a buffer of another shape than the target's local shape,
which laycert's plans must not do and this simulator does not look at.
"""
import copy, itertools, json, math, os, random, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
B = os.environ.get("LAYCERT", os.path.join(HERE, "..", "..", "target", "release", "laycert"))
SPECS = [
    ("dp=2,tp=3", "13,7", "[Shard(0), Shard(1)]", "[Shard(1), Shard(0)]"),
    ("a=2,b=2,c=2", "6,5,4", "[Shard(0),Shard(1),Shard(2)]", "[Shard(2),Replicate(),Shard(0)]"),
    ("a=2,b=4", "12,12", "[Shard(0),Replicate()]", "[Replicate(),Shard(1)]"),
    ("a=3", "7,5", "[Shard(0)]", "[Shard(1)]"),
]


def chunks(n, k):
    size = -(-n // k)  # torch.chunk: ceil-sized chunks, the last short or missing
    return [(min(i * size, n), min(min(i * size, n) + size, n)) for i in range(k)]


def blocks(mesh, shape, placements):
    ext = [int(a.split("=")[1]) for a in mesh.split(",")]
    pl = [p.strip() for p in placements.strip()[1:-1].split(",")]
    res = {}
    for r, coord in enumerate(itertools.product(*[range(e) for e in ext])):
        box = [(0, n) for n in shape]
        for i, p in enumerate(pl):
            if p.startswith("Shard("):
                d = int(p[6:-1])
                a, b = box[d]
                ca, cb = chunks(b - a, ext[i])[coord[i]]
                box[d] = (a + ca, a + cb)
        res[r] = box
    return res


def delivers(plan, mesh, shape, src_pl, dst_pl):
    """True when the one send-recv step puts every target element in place."""
    src, dst = blocks(mesh, shape, src_pl), blocks(mesh, shape, dst_pl)
    steps = plan["steps"]
    if len(steps) != 1 or "SendRecv" not in steps[0]:
        return False
    sr = steps[0]["SendRecv"]
    nd = len(shape)
    gid = lambda c: sum(c[d] * math.prod(shape[d + 1:]) for d in range(nd))
    out = {r: {} for r in dst}
    for m in sr["messages"]:
        if m["src"] not in src or m["dst"] not in dst or any(l < 0 for l in m["len"]):
            return False
        if not len(m["src_start"]) == len(m["dst_start"]) == len(m["len"]) == nd:
            return False
        box = src[m["src"]]
        for off in itertools.product(*[range(l) for l in m["len"]]):
            sc = [m["src_start"][d] + off[d] for d in range(nd)]
            g = [box[d][0] + sc[d] for d in range(nd)]
            inside = all(box[d][0] <= g[d] < box[d][1] for d in range(nd))
            out[m["dst"]][tuple(m["dst_start"][d] + off[d] for d in range(nd))] = gid(g) if inside else None
    for r, box in dst.items():
        for c in itertools.product(*[range(a, b) for a, b in box]):
            if out[r].get(tuple(c[d] - box[d][0] for d in range(nd))) != gid(c):
                return False
    return True


def paths(x, want, p=()):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from paths(v, want, p + (k,))
    elif isinstance(x, list):
        if want == "list" and x:
            yield p
        for i, v in enumerate(x):
            yield from paths(v, want, p + (i,))
    elif want == "int" and isinstance(x, int) and not isinstance(x, bool):
        yield p


def at(x, p):
    for k in p:
        x = x[k]
    return x


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rnd = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    work = tempfile.mkdtemp()
    base = []
    for i, (m, s, f, t) in enumerate(SPECS):
        cert = os.path.join(work, f"c{i}.json")
        subprocess.run([B, "dist", "plan", "--mesh", m, "--shape", s, "--dtype", "f32", "--from", f,
                        "--to", t, "--cert", cert], check=True, capture_output=True)
        plan = json.load(open(cert))["plan"]
        shape = [int(x) for x in s.split(",")]
        assert delivers(plan, m, shape, f, t), f"the simulator rejects laycert's own plan for {SPECS[i]}"
        base.append((plan, m, s, shape, f, t))
    tally, wrong, crashes = {}, 0, 0
    for it in range(runs):
        plan, m, s, shape, f, t = rnd.choice(base)
        x = copy.deepcopy(plan)
        for _ in range(rnd.randrange(1, 3)):
            k = rnd.randrange(4)
            ints, lists = list(paths(x["steps"], "int")), list(paths(x["steps"], "list"))
            if k <= 1 and ints:
                p = rnd.choice(ints)
                v = at(x["steps"], p)
                at(x["steps"], p[:-1])[p[-1]] = rnd.choice([v + 1, v - 1, 0, 2 * v])
            elif lists:
                p = rnd.choice(lists)
                l = at(x["steps"], p)
                if k == 2:
                    del l[rnd.randrange(len(l))]
                else:
                    l.append(copy.deepcopy(rnd.choice(l)))
        path = os.path.join(work, "m.json")
        json.dump(x, open(path, "w"))
        o = subprocess.run([B, "dist", "check", "--mesh", m, "--shape", s, "--dtype", "f32", "--from", f,
                            "--to", t, "--plan", path], capture_output=True, text=True, timeout=60)
        truth = delivers(x, m, shape, f, t)
        tally[(o.returncode, truth)] = tally.get((o.returncode, truth), 0) + 1
        if o.returncode not in (0, 1, 2, 3) or "panicked" in o.stderr or "internal error" in o.stderr:
            crashes += 1
            print("CRASH", o.returncode, o.stderr[-300:])
        elif o.returncode == 0 and not truth:
            wrong += 1
            kept = os.path.join(work, f"wrong{it}.json")
            json.dump(x, open(kept, "w"))
            print("CERTIFIED BUT WRONG", SPECS[base.index((plan, m, s, shape, f, t))], kept)
    print("runs", runs, "(laycert exit, simulator verdict):",
          {f"{k[0]}/{k[1]}": v for k, v in sorted(tally.items(), key=str)},
          "certified but wrong", wrong, "crashes", crashes)
    sys.exit(1 if wrong or crashes else 0)


if __name__ == "__main__":
    main()
