#!/usr/bin/env python3
"""Oracle TV layouts of MMA and copy atoms from the CuTe DSL 4.8.1 (pip nvidia-cutlass-dsl),
printed inside a `@cute.jit` function on the CPU, for corpus/tests/atom_oracles.rs.

Writes tests/data/atoms/cutedsl.jsonl: one record per atom operand, {"atom": laycert's name,
"dsl": the DSL call, "layout": the TV layout the DSL prints, "elem_bits": for copy atoms the
value type's width (the DSL counts elements, CUTLASS's traits and the corpus count bits)}.
Also writes corpus/data/atoms/sm100_tmem.toml: Blackwell tensor-memory load/store atoms
(tcgen05.ld/st, CUTLASS's SM100_TMEM_LOAD/STORE_*), whose only source here is the DSL itself.

Each architecture runs in its own process (the DSL reads CUTE_DSL_ARCH when imported).
Run from the repository root:  python3 bench/peers/gen_atoms_cutedsl.py
"""
import json
import os
import subprocess
import sys

OUT = "tests/data/atoms/cutedsl.jsonl"
TMEM = "corpus/data/atoms/sm100_tmem.toml"


def child(arch):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.nvgpu import OperandMajorMode as Major
    from cutlass.cute.nvgpu import tcgen05, warp, warpgroup

    T = {"F16": cutlass.Float16, "BF16": cutlass.BFloat16, "F32": cutlass.Float32,
         "E4M3": cutlass.Float8E4M3FN, "E5M2": cutlass.Float8E5M2, "S8": cutlass.Int8,
         "S32": cutlass.Int32}
    jobs = []  # (laycert name prefix, DSL call text, thunk making the atom, kind)
    if arch == "sm_90a":
        for n in (8, 16, 24, 32, 48, 64, 96, 128, 192, 256):
            for acc, ab in (("F16", "F16"), ("F32", "F16"), ("F32", "BF16")):
                jobs.append((f"SM90_64x{n}x16_{acc}{ab}{ab}_SS",
                             f"warpgroup.MmaF16BF16Op({ab}, {acc}, (64,{n},16), SMEM, K, K)",
                             lambda ab=ab, acc=acc, n=n: cute.make_mma_atom(
                                 warpgroup.MmaF16BF16Op(T[ab], T[acc], (64, n, 16),
                                                        warpgroup.OperandSource.SMEM,
                                                        Major.K, Major.K)), "mma"))
            for acc in ("F32", "F16"):
                for ab in ("E4M3", "E5M2"):
                    jobs.append((f"SM90_64x{n}x32_{acc}{ab}{ab}_SS",
                                 f"warpgroup.MmaF8Op({ab}, {ab}, {acc}, (64,{n},32), SMEM, K, K)",
                                 lambda ab=ab, acc=acc, n=n: cute.make_mma_atom(
                                     warpgroup.MmaF8Op(T[ab], T[ab], T[acc], (64, n, 32),
                                                       warpgroup.OperandSource.SMEM,
                                                       Major.K, Major.K)), "mma"))
            jobs.append((f"SM90_64x{n}x32_S32S8S8_SS",
                         f"warpgroup.MmaI8Op(S8, S8, S32, (64,{n},32), SMEM, K, K)",
                         lambda n=n: cute.make_mma_atom(
                             warpgroup.MmaI8Op(T["S8"], T["S8"], T["S32"], (64, n, 32),
                                               warpgroup.OperandSource.SMEM, Major.K,
                                               Major.K)), "mma"))
    else:
        for k in (8, 16):
            for acc, ab, name in (("F16", "F16", "F16F16F16F16"), ("F32", "F16", "F32F16F16F32"),
                                  ("F32", "BF16", "F32BF16BF16F32")):
                jobs.append((f"SM80_16x8x{k}_{name}_TN",
                             f"warp.MmaF16BF16Op({ab}, {acc}, (16,8,{k}))",
                             lambda ab=ab, acc=acc, k=k: cute.make_mma_atom(
                                 warp.MmaF16BF16Op(T[ab], T[acc], (16, 8, k))), "mma"))
        for k in (4, 8):
            jobs.append((f"SM80_16x8x{k}_F32TF32TF32F32_TN", f"warp.MmaTF32Op((16,8,{k}))",
                         lambda k=k: cute.make_mma_atom(warp.MmaTF32Op((16, 8, k))), "mma"))
        for acc in ("F32", "F16"):
            for ab in ("E4M3", "E5M2"):
                jobs.append((f"SM89_16x8x32_{acc}{ab}{ab}{acc}_TN",
                             f"warp.MmaFP8Op({ab}, {acc}, (16,8,32))",
                             lambda ab=ab, acc=acc: cute.make_mma_atom(
                                 warp.MmaFP8Op(T[ab], T[acc], (16, 8, 32))), "mma"))
        for op, cls, base in (("LDSM", warp.LdMatrix8x8x16bOp, "SM75"),
                              ("STSM", warp.StMatrix8x8x16bOp, "SM90")):
            for n in (1, 2, 4):
                jobs.append((f"{base}_U32x{n}_{op}_N", f"warp.{cls.__name__}(False, {n}), F16",
                             lambda cls=cls, n=n: cute.make_copy_atom(cls(False, n),
                                                                      cutlass.Float16), "copy"))
                jobs.append((f"{base}_U16x{2 * n}_{op}_T", f"warp.{cls.__name__}(True, {n}), F16",
                             lambda cls=cls, n=n: cute.make_copy_atom(cls(True, n),
                                                                      cutlass.Float16), "copy"))
        for m in (64, 128):
            for n in (64, 128, 256):
                for acc, ab in (("F16", "F16"), ("F32", "F16"), ("F32", "BF16"), ("F16", "BF16")):
                    jobs.append((f"SM100_{m}x{n}x16_{acc}{ab}{ab}_SS",
                                 f"tcgen05.MmaF16BF16Op({ab}, {acc}, ({m},{n},16), ONE, SMEM, K, K)",
                                 lambda ab=ab, acc=acc, m=m, n=n: cute.make_mma_atom(
                                     tcgen05.MmaF16BF16Op(T[ab], T[acc], (m, n, 16),
                                                          tcgen05.CtaGroup.ONE,
                                                          tcgen05.OperandSource.SMEM,
                                                          Major.K, Major.K)), "mma"))
            jobs.append((f"SM100_{m}x{m}x8_F32TF32TF32F32_SS",
                         f"tcgen05.MmaTF32Op(({m},{m},8), ONE, SMEM, K, K)",
                         lambda m=m: cute.make_mma_atom(
                             tcgen05.MmaTF32Op((m, m, 8), tcgen05.CtaGroup.ONE,
                                               tcgen05.OperandSource.SMEM, Major.K, Major.K)),
                         "mma"))
        for ld, st, cname in (("Ld32x32bOp", "St32x32bOp", "32dp32b"),
                              ("Ld16x64bOp", "St16x64bOp", "16dp64b"),
                              ("Ld16x128bOp", "St16x128bOp", "16dp128b"),
                              ("Ld16x256bOp", "St16x256bOp", "16dp256b"),
                              ("Ld16x32bx2Op", "St16x32bx2Op", "16dp32b")):
            for rep in (1, 2, 4, 8, 16, 32):
                r = getattr(tcgen05.Repetition, f"x{rep}")
                for kind, cls in (("LOAD", ld), ("STORE", st)):
                    jobs.append((f"SM100_TMEM_{kind}_{cname}{rep}x",
                                 f"tcgen05.{cls}(Repetition.x{rep}), F32",
                                 lambda cls=cls, r=r: cute.make_copy_atom(
                                     getattr(tcgen05, cls)(r), cutlass.Float32), "tmem"))
    out = []

    def each():  # a plain function: the DSL rewrites the loops of a @cute.jit body
        for name, call, make, kind in jobs:
            try:
                atom = make()
            except Exception as e:  # noqa: BLE001 - an op the DSL lacks is recorded, not fatal
                out.append({"atom": name, "dsl": call, "error": str(e).splitlines()[0][:120]})
                continue
            if kind == "mma":
                for op, lay in (("A", atom.tv_layout_A), ("B", atom.tv_layout_B),
                                ("C", atom.tv_layout_C)):
                    out.append({"atom": f"{name}.{op}", "dsl": call, "layout": str(lay)})
            else:
                bits = 16 if kind == "copy" else 32
                for op, lay in (("src", atom.layout_src_tv), ("dst", atom.layout_dst_tv)):
                    out.append({"atom": f"{name}.{op}", "dsl": call, "layout": str(lay),
                                "elem_bits": bits, "kind": kind})

    @cute.jit
    def run():
        each()

    run()
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)


def cosize(text):
    """1 + the largest offset of a printed `shape:stride` layout."""
    import ast
    shape, stride = text.split(":")

    def tup(s):
        return ast.literal_eval(s.replace("(", "[").replace(")", "]")) if "(" in s else int(s)

    def leaves(t):
        return [t] if isinstance(t, int) else [x for y in t for x in leaves(y)]

    return 1 + sum((s - 1) * d for s, d in zip(leaves(tup(shape)), leaves(tup(stride))))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    records = []
    for arch in ("sm_100a", "sm_90a"):
        env = dict(os.environ, CUTE_DSL_ARCH=arch)
        run = subprocess.run([sys.executable, __file__, "--child", arch], env=env,
                             capture_output=True, text=True, timeout=1200)
        line = [x for x in run.stdout.splitlines() if x.startswith("[")]
        if not line:
            raise SystemExit(f"{arch}: no output\n{run.stderr[-2000:]}")
        records += json.loads(line[-1])
    errors = [r for r in records if "error" in r]
    for r in errors:
        print(f"  no DSL atom {r['atom']}: {r['error']}")
    tmem = [r for r in records if r.get("kind") == "tmem" and "layout" in r]
    blocks = []
    for r in tmem:
        op = "SrcLayout" if r["atom"].endswith(".src") else "DstLayout"
        blocks.append("\n".join([
            "[[atom]]", f'name = "{r["atom"]}"',
            f'source = "CuTe DSL 4.8.1 {r["dsl"]} make_copy_atom, layout_{op[:3].lower()}_tv '
            f'(CUTLASS include/cute/atom/copy_traits_sm100.hpp, {op}; PTX ISA tcgen05.ld/st)"',
            f'layout = "{r["layout"]} -> ({cosize(r["layout"])})"',
            'note = "TMEM atom as the CuTe DSL prints it for value type Float32, in its units '
            '(tensor memory is addressed in 32-bit columns)"']))
    with open(TMEM, "w") as f:
        f.write("# GENERATED by bench/peers/gen_atoms_cutedsl.py; edit that script, not this "
                "file.\n# Blackwell (SM100) tensor-memory load/store atoms (tcgen05.ld/st), "
                "(thread, value) -> offset as the DSL prints them.\n\n" + "\n\n".join(blocks) + "\n")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for r in sorted((r for r in records if "layout" in r), key=lambda r: r["atom"]):
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    print(f"{len(records) - len(errors)} DSL records ({len(tmem)} TMEM atoms), "
          f"{len(errors)} ops the DSL lacks")


if __name__ == "__main__":
    main()
