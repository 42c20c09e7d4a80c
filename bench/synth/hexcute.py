"""Hexcute's layout synthesis (hidet 0.6.1, `hidet.transforms.cute`) on laycert's sm80 GEMM tile
(corpus/data/programs/gemm_f16_sm80.tile: 128x128x32, 4 warps, f16 A/B K-major, f32 C), run on the
CPU: the program is built as hidet IR and only hidet's cute passes run (layout inference,
instruction selection, bank-conflict swizzle), stopping before code generation. No GPU, no nvcc.

Prints, per configuration, the register TV layouts of A, B, C and the shared layouts of A, B as
CuTe text that `laycert equiv` reads, the instruction chosen for every copy / mma, and the time of
the synthesis passes (median of 11 runs after one warm-up).

Run in a venv with hidet: /tmp/hexcute/venv/bin/python bench/synth/hexcute.py [--json]"""
import json
import statistics
import sys
import time

import hidet
from hidet.ir.cute import layout_auto
from hidet.ir.cute.algorithm import MmaAtom, TiledMma, auto_copy
from hidet.ir.cute.layout import ComposedTensorLayout, Level, TensorLayout, TiledTensorLayout
from hidet.ir.cute.ops import copy, fill, make_tensor, mma, partition_dst, partition_src, tensor_view
from hidet.ir.cute.ops.copy import Copy
from hidet.ir.cute.ops.mma import Mma
from hidet.ir.cute.expr import CallOp
from hidet.ir.functors import IRVisitor
from hidet.ir.stmt import DeclareStmt
from hidet.lang import attrs
from hidet.lang.cuda import cp_async_wait_all, syncthreads
from hidet.lang.types import f16, f32
from hidet.transforms import (
    canonicalize_arithmetic_expression_pass,
    canonicalize_pass,
    deadcode_elimination_pass,
    inline_function_pass,
    instantiate_auto_annotation_pass,
    instruction_selection_pass,
    lower_cute_dialect_pass,
    lower_with,
    resolve_bank_conflict_pass,
    vectorize_elementwise_pass,
)
from hidet.ir.cute.collective import CollectiveStore

BM, BN, BK, LD, THREADS = 128, 128, 32, 4096, 128

# The mma.sync m16n8k16 atom as hidet declares it (hidet/graph/ops/matmul/matmul_f16_cute*.py).
ATOM_A = TensorLayout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128)))
ATOM_B = TensorLayout(((4, 8), (2, 2)), ((16, 1), (8, 64)))
ATOM_C = TensorLayout(((4, 8), (2, 2)), ((32, 1), (16, 8)))


def hidet_tiled_mma():
    """What hidet itself uses for a 128x128 tile with 4 warps: the first entry of its matmul
    operator's search space (`register_tiled_mma` in matmul_f16_cute_experimental.py, the
    CUTLASS-style 2x2 warps over 16x16 warp tiles, i.e. two m16n8k16 atoms along N)."""
    atom = MmaAtom("warp", (16, 8, 16), ATOM_A, ATOM_B, ATOM_C, ATOM_C, (1, 2))
    warps = Level("warp", "thread_block", (2, 2), TensorLayout((2, 2)), (4, 4))
    return TiledMma(atom, [warps])


def laycert_tiled_mma():
    """The anchor laycert's search picks (and Triton's nvidia_mma v2 [2,2]): warp ids along N
    first, warps interleaved at m16n8 atom granularity. (Triton and laycert also put C's value
    repeats along N before M; hidet 0.6.1 rejects that repeat_layout, (4, 8):(8, 1), with an
    IndexError in compact_coshape, so here C's repeats run along M first: a register renaming.)"""
    atom = MmaAtom("warp", (16, 8, 16), ATOM_A, ATOM_B, ATOM_C, ATOM_C, (1, 1))
    warps = Level("warp", "thread_block", (2, 2), TensorLayout((2, 2), (2, 1)), (4, 8))
    return TiledMma(atom, [warps])


def build(tiled_mma):
    """laycert's gemm_f16_sm80.tile, line for line, in Hexcute: every register and shared layout
    and every copy is `auto`; only the global views and the mma's TiledMma are given."""
    with hidet.script_module() as sm:

        @hidet.script
        def gemm_tile(ga: f16[LD, LD], gb: f16[LD, LD], gc: f32[LD, LD]):
            attrs.func_kind = "cuda_kernel"
            attrs.cuda.block_dim = THREADS
            attrs.cuda.grid_dim = 1
            a_s = make_tensor("float16", layout_auto((BM, BK)), "shared")
            b_s = make_tensor("float16", layout_auto((BN, BK)), "shared")
            a = make_tensor("float16", layout_auto((BM, BK)), "register")
            b = make_tensor("float16", layout_auto((BN, BK)), "register")
            c = make_tensor("float32", layout_auto((BM, BN)), "register")
            fill(c, 0.0)
            a_g = tensor_view(ga, TensorLayout((BM, BK), (LD, 1)), "global")
            b_g = tensor_view(gb, TensorLayout((BN, BK), (LD, 1)), "global")
            c_g = tensor_view(gc, TensorLayout((BM, BN), (LD, 1)), "global")
            # copy(a_g, a_s); copy(b_g, b_s)
            copy(auto_copy((BM, BK)), partition_src(a_g, auto_copy()), partition_dst(a_s, auto_copy()))
            copy(auto_copy((BN, BK)), partition_src(b_g, auto_copy()), partition_dst(b_s, auto_copy()))
            cp_async_wait_all()
            syncthreads()
            # copy(a_s, a); copy(b_s, b): the mma consumes K in two k16 slices
            txSa = partition_src(a_s, auto_copy())
            txra = partition_dst(a, auto_copy())
            txSb = partition_src(b_s, auto_copy())
            txrb = partition_dst(b, auto_copy())
            copy(auto_copy(), txSa[:, :, 0], txra[:, :, 0])
            copy(auto_copy(), txSb[:, :, 0], txrb[:, :, 0])
            copy(auto_copy(), txSa[:, :, 1], txra[:, :, 1])
            copy(auto_copy(), txSb[:, :, 1], txrb[:, :, 1])
            # mma(c, a, b)
            mma(tiled_mma, c, txra[:, :, 0], txrb[:, :, 0], c)
            mma(tiled_mma, c, txra[:, :, 1], txrb[:, :, 1], c)
            # copy(c, c_g)
            copy(auto_copy((BM, BN)), partition_src(c, auto_copy()), partition_dst(c_g, auto_copy()))

    return sm.ir_module()


PRE = [inline_function_pass(), canonicalize_arithmetic_expression_pass(), canonicalize_pass(),
       deadcode_elimination_pass(), lower_cute_dialect_pass((CollectiveStore,))]
# Hexcute's synthesis as hidet.transforms.lower runs it (before shared-memory allocation and
# code generation): TV layouts + memory layouts (with the latency model choosing among variants),
# instruction selection, the bank-conflict swizzle, instruction selection again.
SYNTH = [instantiate_auto_annotation_pass(), vectorize_elementwise_pass(), instruction_selection_pass(),
         resolve_bank_conflict_pass(), instruction_selection_pass()]


def cute(layout):
    """CuTe text of a hidet layout in laycert's notation."""
    if isinstance(layout, TiledTensorLayout):
        assert not layout.levels
        m, n = layout.atom.shape
        return "%s -> (%d, %d)" % (layout.atom.layout, m, n)
    if isinstance(layout, ComposedTensorLayout):
        sw = layout.functor
        return "Sw<%d,%d,%d> o %s" % (sw.bits, sw.base, sw.shift, layout.layout)
    return str(layout)


class Collect(IRVisitor):
    def __init__(self):
        super().__init__()
        self.layouts, self.insts, self.smem_access = {}, [], []

    def visit_DeclareStmt(self, stmt: DeclareStmt):
        if stmt.var.hint in ("a", "b", "c", "a_s", "b_s"):
            self.layouts[stmt.var.hint] = cute(stmt.var.type.layout)
        super().visit_DeclareStmt(stmt)

    def visit_CallOp(self, e: CallOp):
        op = e.op
        if isinstance(op, (Copy, Mma)) and op.annotations and "inst" in op.annotations:
            inst = op.annotations["inst"]
            if isinstance(op, Copy):
                src, dst = (self.scope(op.src), self.scope(op.dst))
                kind = type(inst).__name__
                if kind == "LdMatrix":  # bytes per thread: x1 4, x2 8, x4 16
                    kind = "ldmatrix.x%d%s" % (inst.bytes_per_inst // 4, ".trans" if inst.trans else "")
                elif kind == "AsyncCopyInstruction":
                    kind = "cp.async %d B" % inst.bytes_per_inst
                else:
                    kind = "%s %d B" % ({"g": "ld.global", "s": "ld.shared"}.get(src, "st.global" if dst == "g"
                                        else "st.shared"), inst.bytes_per_inst)
                self.insts.append("copy %s->%s: %s" % (src, dst, kind))
                # The TV layout of the shared-memory side of the access, over the copy's tile
                # (hidet's codomain is the column-major index of that tile, as in laycert).
                if "s" in (src, dst):
                    self.smem_access.append(self.access(op.tiled_copy, dst == "s", src, dst, kind))
            else:
                self.insts.append("mma: %s m%dn%dk%d" % ((type(inst).__name__,) + tuple(inst.shape_mnk)))
        super().visit_CallOp(e)

    @staticmethod
    def access(tc, write, src, dst, kind):
        """The TV layout of the shared-memory side of a copy, as laycert text over the whole
        (M, 32) buffer: a copy over an (M, 16) slice gets a value mode for its two K slices
        (the program issues it once per slice), so the text covers every access of the buffer."""
        assert not tc.levels and tc.copy_atom.repeat_shape in ((1, 1), None)
        m, k = tc.copy_atom.shape
        tv = tc.copy_atom.dst_thrval_layout if write else tc.copy_atom.src_thrval_layout
        t, v = tv[0], tv[1]
        flat = lambda x: list(x) if isinstance(x, tuple) else [x]
        ts, tst = flat(t.shape_tuple), flat(t.stride_tuple)
        vs, vst = flat(v.shape_tuple), flat(v.stride_tuple)
        if k < BK:
            vs, vst = vs + [BK // k], vst + [m * k]
        j = lambda xs: ", ".join(str(x) for x in xs)
        text = "((%s), (%s)):((%s), (%s)) -> (%d, %d)" % (j(ts), j(vs), j(tst), j(vst), m, BK)
        return {"copy": "%s->%s" % (src, dst), "inst": kind, "tv": text}

    @staticmethod
    def scope(x):
        from hidet.ir.tools import infer_type
        s = infer_type(x).scope
        return "g" if s.is_global() else "s" if s.is_shared() else "r"


def run(name, make_mma, runs=11):
    times, infer, out = [], [], None
    for i in range(runs + 1):
        mod = lower_with(build(make_mma()), PRE)
        t0 = time.perf_counter()
        mid = lower_with(mod, SYNTH[:1])
        t1 = time.perf_counter()
        res = lower_with(mid, SYNTH[1:])
        t2 = time.perf_counter()
        if i > 0:
            times.append((t2 - t0) * 1e3)
            infer.append((t1 - t0) * 1e3)
        out = res
    col = Collect()
    for fn in out.functions.values():
        col.visit(fn)
    seen, insts = set(), []
    for s in col.insts:  # one line per distinct instruction use, in program order
        if s not in seen:
            seen.add(s)
            insts.append(s)
    # Program order: a_g->a_s, b_g->b_s, then the k16 slices a_s->a, b_s->b, a_s->a, b_s->b
    # with the same tiled copies; the first two s->r entries already cover both slices.
    acc = col.smem_access
    assert len(acc) == 6 and acc[4:] == acc[2:4], acc
    acc = [dict(x, buffer=b) for x, b in zip(acc[:4], ("a_s", "b_s", "a_s", "b_s"))]
    return {"config": name, "layouts": col.layouts, "instructions": insts, "smem_accesses": acc,
            "median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "infer_median_ms": statistics.median(infer),
            "runs": runs}


def main():
    results = [run("hidet", hidet_tiled_mma), run("laycert-anchor", laycert_tiled_mma)]
    if "--json" in sys.argv:
        print(json.dumps({"hidet": hidet.__version__, "results": results}))
        return
    print("hidet", hidet.__version__)
    for r in results:
        print("== %s: synthesis median %.1f ms (min %.1f, max %.1f, %d runs; layout inference %.1f)" % (
            r["config"], r["median_ms"], r["min_ms"], r["max_ms"], r["runs"], r["infer_median_ms"]))
        for k in ("a", "b", "c", "a_s", "b_s"):
            print("  %-4s %s" % (k, r["layouts"][k]))
        for s in r["instructions"]:
            print("  inst", s)


if __name__ == "__main__":
    main()
