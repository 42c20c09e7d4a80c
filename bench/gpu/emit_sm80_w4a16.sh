#!/usr/bin/env bash
# Emits issue 24's sm80 GEMM and W4A16 kernels (no GPU needed) into DIR (default gpu-carry/gemm):
#   LAYCERT=target/release/laycert bash bench/gpu/emit_sm80_w4a16.sh [DIR]
# then on the device:  python3 gemm.py DIR/sm80_*.cu   and   python3 w4a16.py DIR/w4a16_*.cu
set -euo pipefail
L=${LAYCERT:-target/release/laycert}
D=${1:-gpu-carry/gemm}
mkdir -p "$D"
# The kernels run on an H100/H200, which gives a CTA 227 KiB of shared memory: --smem-limit
# 232448 builds them for it (sm80's own 163 KiB would take 3 stages of the 128x256x64 tile).
# Every measured figure in bench/gpu/README.md came from kernels built this way.
H=(--smem-limit 232448)
g() { "$L" gen gemm --target sm80 "${H[@]}" "$@" | head -1; }
for t in bf16 f16; do
  g --m 8192 --n 8192 --k 8192 --dtype $t -o "$D/sm80_8192_$t.cu"
  g --m 4096 --n 4096 --k 4096 --dtype $t -o "$D/sm80_4096_$t.cu"
done
# the default is --bk 64 --stages 4 (session 17: pipelined across k-blocks); k-blocks of 32
# (no pipelining: the two k-steps share every B group) and 3 stages for comparison
g --m 8192 --n 8192 --k 8192 --dtype bf16 --bk 64 --stages 3 -o "$D/sm80_8192_bf16_bk64_st3.cu"
g --m 8192 --n 8192 --k 8192 --dtype bf16 --bk 32 --stages 4 -o "$D/sm80_8192_bf16_bk32_st4.cu"
g --m 8192 --n 8192 --k 8192 --dtype bf16 --bk 32 --stages 5 -o "$D/sm80_8192_bf16_bk32_st5.cu"
g --m 5120 --n 3584 --k 4096 --dtype bf16 -o "$D/sm80_5120x3584x4096_bf16.cu"
g --m 1000 --n 1000 --k 1000 --dtype bf16 -o "$D/sm80_1000_bf16.cu"
for m in 1 16 128; do
  g --m $m --n 4096 --k 4096 --dtype bf16 -o "$D/sm80_m${m}_4096_bf16.cu"
  g --m $m --n 14336 --k 4096 --dtype bf16 -o "$D/sm80_m${m}_14336x4096_bf16.cu"
done
w() { "$L" gen gemm --dtype f16 --weights int4 "${H[@]}" "$@" | head -1; }
for m in 1 16; do
  # the default at N = 8192: K-group CTAs, the interleaved (TensorRT-LLM) packing, nibble
  # pairs (M = 1: 1 column warp; M = 16: 2); the sequential packing's default (before session
  # 19: M = 1 pairs over a k-permuted mma, M = 16 bytes) for comparison
  w --m $m --n 8192 --k 8192 -o "$D/w4a16_m${m}_8192.cu"
  w --m $m --n 8192 --k 8192 --packing sequential -o "$D/w4a16_m${m}_8192_seq.cu"
  # the split-K CTA (the default before session 16) and its variants
  w --m $m --n 8192 --k 8192 --kwarps 1 -o "$D/w4a16_m${m}_8192_splitk.cu"
  w --m $m --n 8192 --k 8192 --splits 4 -o "$D/w4a16_m${m}_8192_s4.cu"
  w --m $m --n 8192 --k 8192 --splits 16 -o "$D/w4a16_m${m}_8192_s16.cu"
  w --m $m --n 8192 --k 8192 --bn 256 --splits 8 -o "$D/w4a16_m${m}_8192_bn256.cu"
  w --m $m --n 8192 --k 8192 --kwarps 1 --stages 3 -o "$D/w4a16_m${m}_8192_d3.cu"
  w --m $m --n 8192 --k 8192 --kwarps 1 --packing sequential --dequant pairs -o "$D/w4a16_m${m}_8192_seqpairs.cu"
done
# M between: the default (K-group: pairs up to M = 8) against split-K
for m in 2 4 8; do
  w --m $m --n 8192 --k 8192 -o "$D/w4a16_m${m}_8192.cu"
  w --m $m --n 8192 --k 8192 --kwarps 1 -o "$D/w4a16_m${m}_8192_splitk.cu"
done
# K-group CTAs with the sequential packing's other dequantization, and other shapes of them
w --m 1 --n 8192 --k 8192 --packing sequential --dequant bytes -o "$D/w4a16_m1_8192_kg_seqbytes.cu"
w --m 16 --n 8192 --k 8192 --packing sequential --dequant pairs -o "$D/w4a16_m16_8192_kg_seqpairs.cu"
w --m 3 --n 4096 --k 14336 --group 256 --kwarps 4 --cwarps 4 --aslots 3 -o "$D/w4a16_m3_4096x14336_kg.cu"
w --m 16 --n 384 --k 640 --kwarps 5 --cwarps 1 --aslots 3 -o "$D/w4a16_m16_384x640_kg.cu"
w --m 16 --n 14336 --k 4096 --group 128 --packing sequential -o "$D/w4a16_m16_14336x4096_seq.cu"
w --m 3 --n 384 --k 640 --packing sequential --dequant pairs -o "$D/w4a16_m3_384x640_seqpairs.cu"
w --m 16 --n 14336 --k 4096 --group 128 -o "$D/w4a16_m16_14336x4096.cu"
w --m 16 --n 14336 --k 4096 --group 128 --cluster 1 -o "$D/w4a16_m16_14336x4096_ws.cu"
w --m 16 --n 8192 --k 8192 --cluster 8 -o "$D/w4a16_m16_8192_c8.cu"
