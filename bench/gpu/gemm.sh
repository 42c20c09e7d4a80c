#!/usr/bin/env bash
# Issue 24's GEMM measurements, in two halves (the device machine has no Rust):
#   here:       LAYCERT=target/release/laycert bash bench/gpu/gemm.sh emit [DIR]
#               (emits every kernel of the acceptance set into DIR/gemm, default gpu-carry,
#               and copies this script, gemm.py and gemm_triton.py beside them)
#   the device: bash gpu-carry/gemm.sh run [DIR] [OUT.json]   (device tool, carry gpu-carry)
# Acceptance set: sm90 bf16 and f16 at 8192^3 and 4096^3, 5120x3584x4096, 1000^3 (ragged), and
# the LLM shapes M in {1, 16, 128, 4096} x N, K in {4096, 8192, 14336} (bf16).
set -euo pipefail
what=${1:-run}
D=${2:-gpu-carry}
case "$what" in
emit)
    B=${LAYCERT:-target/release/laycert}
    mkdir -p "$D/gemm"
    rm -f "$D"/gemm/*.cu "$D"/gemm/*.so
    for dt in bf16 f16; do
        for s in 8192 4096; do
            "$B" gen gemm --m $s --n $s --k $s --dtype $dt -o "$D/gemm/sq_${s}_$dt.cu" >/dev/null
        done
        "$B" gen gemm --m 5120 --n 3584 --k 4096 --dtype $dt -o "$D/gemm/r_5120x3584x4096_$dt.cu" >/dev/null
        "$B" gen gemm --m 1000 --n 1000 --k 1000 --dtype $dt -o "$D/gemm/r_1000_$dt.cu" >/dev/null
    done
    for m in 1 16 128 4096; do
        for n in 4096 8192 14336; do
            for k in 4096 8192 14336; do
                "$B" gen gemm --m $m --n $n --k $k -o "$D/gemm/llm_${m}x${n}x${k}.cu" >/dev/null
            done
        done
    done
    here=$(dirname "$0")
    cp "$here/gemm.sh" "$here/gemm.py" "$here/gemm_triton.py" "$D/"
    echo "emitted $(ls "$D"/gemm/*.cu | wc -l) kernels into $D/gemm"
    ;;
run)
    OUTF=${3:-${OUT:-.}/gemm.json}
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    python3 "$D/gemm.py" --reps 20 --json "$OUTF" "$D"/gemm/*.cu
    ;;
*)
    echo "usage: gemm.sh emit|run [DIR] [OUT.json]" >&2
    exit 2
    ;;
esac
