"""Triton 3.9's choice for the reference GEMM tiles, via Gluon (CPU only): the MMAv2 accumulator
(nvidia_mma), the operand layouts (dot_op) and the shared layout (nvmma_shared), printed as
#ttg.linear text that `laycert equiv` reads. Run: python3 bench/synth/triton_layouts.py"""
import os
from triton._C.libtriton import ir, gluon_ir
import triton.experimental.gluon.language as ttgl

ctx = ir.context(); ir.load_dialects(ctx); b = gluon_ir.GluonOpBuilder(ctx)

def lin(L, shape):
    d = b.to_linear_layout(L._to_ir(b), shape)
    return d

def text(d):
    f = lambda bs: "[" + ", ".join("[" + ", ".join(str(x) for x in v) + "]" for v in bs) + "]"
    return "#ttg.linear<{register = %s, lane = %s, warp = %s, block = []}>" % (
        f(d.reg_bases), f(d.lane_bases), f(d.warp_bases))

# sm80 GEMM 128x128x32, 4 warps: Triton picks warpsPerCTA [2, 2] for a 128x128 dot.
mma = ttgl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8])
print("C nvidia_mma [128,128]:", text(lin(mma, [128, 128])))
a = ttgl.DotOperandLayout(operand_index=0, parent=mma, k_width=2)
print("A dot_op(0) [128,32]:", text(lin(a, [128, 32])))
bop = ttgl.DotOperandLayout(operand_index=1, parent=mma, k_width=2)
print("B dot_op(1) [32,128] (K,N):", text(lin(bop, [32, 128])))
for sw in (32, 64):  # 128-byte swizzling needs 64-element rows; Triton aborts on [128, 32]
    try:
        s = ttgl.NVMMASharedLayout(swizzle_byte_width=sw, element_bitwidth=16, rank=2)
        print(f"nvmma_shared swizzle {sw} [128,32]:", lin(s, [128, 32]))
    except Exception as e:
        print(f"nvmma_shared swizzle {sw}: {e}")
# sm90: wgmma accumulator, one warpgroup, instrShape [16, 128, 16]... (version 3).
mma3 = ttgl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 128, 16])
print("C nvidia_mma v3 [128,128]:", text(lin(mma3, [128, 128])))
os._exit(0)
