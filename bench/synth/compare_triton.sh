#!/usr/bin/env bash
# Side by side with Triton 3.9 (Gluon): the synthesized GEMM-tile layouts against Triton's
# nvidia_mma, dot_op and nvmma_shared, decided by `laycert equiv`. Needs a release build.
# Run from the repository root: bash bench/synth/compare_triton.sh
set -euo pipefail
L=target/release/laycert
P=corpus/data/programs
layout() { # program target tensor -> its synthesized layout text
  $L synth "$P/$1.tile" --target "$2" --json | python3 -c "
import json,sys; v=json.load(sys.stdin); print([t['layout'] for t in v['tensors'] if t['name']=='$3'][0])"
}
transpose_nk() { # a TV over (N,K) col-major -> the same map over (K,N)
  python3 - "$1" <<'PY'
import re,sys
lay=sys.argv[1]
m=re.match(r'\(\((.*)\), \((.*)\)\):\(\((.*)\), \((.*)\)\) -> \((\d+), (\d+)\)', lay)
N,K=int(m.group(5)),int(m.group(6))
tr=lambda s:(s%N)*K+s//N
f=lambda g:",".join(g.split(", "))
print("((%s),(%s)):((%s),(%s)) -> (%d,%d)"%(f(m.group(1)),f(m.group(2)),
  ",".join(str(tr(int(x))) for x in m.group(3).split(", ")),
  ",".join(str(tr(int(x))) for x in m.group(4).split(", ")),K,N))
PY
}
MMA2='#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>'
MMA3='#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>'
SH64='#ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>'
check() { printf '%-44s ' "$1"; $L equiv "$2" "$3" --shape "$4" | head -1; }
check "sm80 C  vs nvidia_mma v2 [2,2]" "$(layout gemm_f16_sm80 sm80 c)" "$MMA2" 128,128
check "sm80 A  vs dot_op(0, kWidth 2)" "$(layout gemm_f16_sm80 sm80 a)" "#ttg.dot_op<{opIdx = 0, parent = $MMA2, kWidth = 2}>" 128,32
check "sm80 B (as K,N) vs dot_op(1, kWidth 2)" "$(transpose_nk "$(layout gemm_f16_sm80 sm80 b)")" "#ttg.dot_op<{opIdx = 1, parent = $MMA2, kWidth = 2}>" 32,128
check "sm80 A_s vs nvmma_shared 64B" "$(layout gemm_f16_sm80 sm80 a_s)" "$SH64" 128,32
check "sm90 C  vs nvidia_mma v3 [4,1]" "$(layout gemm_f16_sm90 sm90 c)" "$MMA3" 128,128
check "sm90 A_s vs nvmma_shared 64B" "$(layout gemm_f16_sm90 sm90 a_s)" "$SH64" 128,32
check "sm90 B_s vs nvmma_shared 64B" "$(layout gemm_f16_sm90 sm90 b_s)" "$SH64" 128,32
