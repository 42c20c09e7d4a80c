#!/usr/bin/env bash
# Side by side with Hexcute (hidet 0.6.1): the synthesized layouts of the sm80 GEMM tile against
# what Hexcute's synthesis infers for the same tile program, decided by `laycert equiv`.
# Hexcute runs on the CPU (bench/synth/hexcute.py: hidet's cute passes only, no code generation).
# Needs a release build and a venv with hidet:
#   python3 -m venv /tmp/hexcute/venv && /tmp/hexcute/venv/bin/pip install hidet==0.6.1
# Run from the repository root: bash bench/synth/compare_hexcute.sh  (HEXCUTE_PY overrides the venv)
set -euo pipefail
L=target/release/laycert
P=corpus/data/programs
PY=${HEXCUTE_PY:-/tmp/hexcute/venv/bin/python}
HX=$(mktemp); trap 'rm -f "$HX"' EXIT
"$PY" bench/synth/hexcute.py --json 2>/dev/null | tail -1 > "$HX"
layout() { # program target tensor -> its synthesized layout text
  $L synth "$P/$1.tile" --target "$2" --json | python3 -c "
import json,sys; v=json.load(sys.stdin); print([t['layout'] for t in v['tensors'] if t['name']=='$3'][0])"
}
hexcute() { # config tensor -> Hexcute's layout text
  python3 -c "
import json,sys; v=json.load(open('$HX')); print([r for r in v['results'] if r['config']=='$1'][0]['layouts']['$2'])"
}
rename_like() { # TV A, TV B -> A with its value (register) modes put in B's order, when the two
  # have the same value modes up to order (split into extent-2 modes): a renaming of each
  # thread's registers, no data movement. Prints nothing when they do not.
  python3 - "$1" "$2" <<'PY'
import re,sys
def parse(s):
    m=re.match(r'\(\((.*)\), \((.*)\)\):\(\((.*)\), \((.*)\)\) -> \((\d+), (\d+)\)$', s)
    ints=lambda g:[int(x) for x in g.split(",")]
    return ints(m.group(1)),ints(m.group(2)),ints(m.group(3)),ints(m.group(4)),m.group(5),m.group(6)
def bits(ext,strd):
    out=[]
    for e,s in zip(ext,strd):
        while e>1:
            if e%2: return None
            out.append(s); e//=2; s*=2
    return out
at,av,ats,avs,M,N=parse(sys.argv[1]); _,bv,_,bvs,_,_=parse(sys.argv[2])
a,b=bits(av,avs),bits(bv,bvs)
if a is None or b is None or sorted(a)!=sorted(b): sys.exit(0)
j=lambda xs:",".join(str(x) for x in xs)
print("((%s),(%s)):((%s),(%s)) -> (%s,%s)"%(j(at),j([2]*len(b)),j(ats),j(b),M,N))
PY
}
check() { # label, laycert's layout, Hexcute's layout, shape
  printf '%-40s ' "$1"
  if out=$($L equiv "$2" "$3" --shape "$4"); then echo "equivalent"; return; fi
  r=$(rename_like "$3" "$2")
  if [ -n "$r" ] && $L equiv "$2" "$r" --shape "$4" >/dev/null; then
    echo "equivalent up to register order"; return
  fi
  echo "not equivalent: $(echo "$out" | grep -m1 -A2 'counterexample' | tr -s ' \n' ' ')"
}
for cfg in hidet laycert-anchor; do
  check "sm80 C   vs Hexcute ($cfg)" "$(layout gemm_f16_sm80 sm80 c)" "$(hexcute $cfg c)" 128,128
  check "sm80 A   vs Hexcute ($cfg)" "$(layout gemm_f16_sm80 sm80 a)" "$(hexcute $cfg a)" 128,32
  check "sm80 B   vs Hexcute ($cfg)" "$(layout gemm_f16_sm80 sm80 b)" "$(hexcute $cfg b)" 128,32
  check "sm80 A_s vs Hexcute ($cfg)" "$(layout gemm_f16_sm80 sm80 a_s)" "$(hexcute $cfg a_s)" 128,32
  check "sm80 B_s vs Hexcute ($cfg)" "$(layout gemm_f16_sm80 sm80 b_s)" "$(hexcute $cfg b_s)" 128,32
done
# Hexcute's plans priced by laycert's cost model (solver/src/synth/cost.rs: warp instructions +
# shared wavefronts + global 32-byte sectors + 32-bit registers per thread; no rearranges).
# Wavefronts come from laycert's bank simulator on each shared access of Hexcute's plan.
wavefronts() { # TV text over (M, 32) -> total wavefronts against the buffer's layout
  $L bank-conflicts --regs "$($L convert "$1" --to linear | head -1)" --smem "$2" --dtype f16 --vec 8 \
    | sed -n 's/^total wavefronts: //p'
}
echo "laycert's plan: cost $($L synth $P/gemm_f16_sm80.tile --target sm80 --json | python3 -c '
import json,sys; v=json.load(sys.stdin); o=v["ops"]
print("%d = instructions %d + wavefronts %d + sectors %d + registers %d" % (v["cost"],
  sum(x["instructions"] for x in o), sum(x["wavefronts"] for x in o), sum(x["sectors"] for x in o),
  v["registers_per_thread"]))')"
for cfg in hidet laycert-anchor; do
  W=""
  for i in 0 1 2 3; do
    tv=$(python3 -c "import json; v=json.load(open('$HX')); print([r for r in v['results'] if r['config']=='$cfg'][0]['smem_accesses'][$i]['tv'])")
    buf=$(python3 -c "import json; v=json.load(open('$HX')); print([r for r in v['results'] if r['config']=='$cfg'][0]['smem_accesses'][$i]['buffer'])")
    W="$W $(wavefronts "$tv" "$(hexcute $cfg $buf)")"
  done
  python3 - "$HX" "$cfg" $W <<'PY'
import json,re,sys
from math import prod
v=json.load(open(sys.argv[1])); r=[r for r in v['results'] if r['config']==sys.argv[2]][0]
wf=[int(x) for x in sys.argv[3:]]
def parse(s):
    m=re.match(r'\(\((.*)\), \((.*)\)\):\(\((.*)\), \((.*)\)\) -> \((\d+), (\d+)\)$', s)
    g=[[int(x) for x in m.group(i).split(",")] for i in range(1,5)]
    return g[0],g[1],g[2],g[3],int(m.group(5))
def at(ext,strd,i):
    o=0
    for e,s in zip(ext,strd): o+=(i%e)*s; i//=e
    return o
def sectors(tv,vec,ebytes,ld=4096):  # 32-byte sectors per warp instruction, summed
    te,ve,ts,vs,M=parse(tv); n=0
    for w in range(prod(te)//32):
        for i in range(prod(ve)//vec):
            sec=set()
            for lane in range(32):
                for e in range(vec):
                    x=at(te,ts,32*w+lane)+at(ve,vs,vec*i+e); m,k=x%M,x//M
                    sec.add((m*ld+k)*ebytes//32)
            n+=len(sec)
    return n
vals=lambda tv: prod(parse(tv)[1])
L=r['layouts']; acc=r['smem_accesses']
# warp instructions, counted as laycert counts them: copies summed over the 4 warps; the mma as
# laycert's plan.rs counts it, m*n*k / atom / (threads / 32) = 64 (per warp, not 256 in all)
inst=sum(vals(a['tv'])//8*4 for a in acc) + 128*128*32//(16*8*16)//4 + vals(L['c'])//2*4
sect=sum(sectors(a['tv'],8,2) for a in acc[:2]) + sectors(L['c'],2,4)
regs=(vals(L['a'])*2+vals(L['b'])*2+vals(L['c'])*4)//4
print("Hexcute (%s) priced by laycert: cost %d = instructions %d + wavefronts %d %s + sectors %d + registers %d"
      % (sys.argv[2], inst+sum(wf)+sect+regs, inst, sum(wf), wf, sect, regs))
PY
done
python3 -c "
import json; v=json.load(open('$HX'))
for r in v['results']:
    print('Hexcute (%s) synthesis: median %.0f ms over %d runs (layout inference %.0f ms); %s' % (r['config'],
          r['median_ms'], r['runs'], r['infer_median_ms'], '; '.join(r['instructions'])))"
