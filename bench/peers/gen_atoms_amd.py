"""AMD MFMA/WMMA atoms for gen_atoms.py, from Triton 3.9's Gluon (the layouts Triton compiles
with), named after tensor-layouts 0.3.2's atoms_amd catalog. One warp: C is
AMDMFMALayout/AMDWMMALayout on the (M, N) tile, A and B are DotOperandLayout(0/1, C, k_width)
on (M, K) and (K, N); k_width is the operand elements one lane holds. Each is written as the
`#ttg.linear` attribute Gluon prints, with its tensor shape. An atom Gluon cannot build (no such
instruction shape in Triton) keeps tensor-layouts' TV layout as its fact.

Also compares tensor-layouts' layouts with Gluon's, element by element: which lanes hold each
element of the tile, under tensor-layouts' own thread numbering and under the half-wave-fastest
numbering (thread t = lane // 32 + 2 * (lane % 32), seen in its 32-row MFMA layouts), and
prints each disagreement (the report of issue 16 lists them).
"""
import re

EB = {"F16": 16, "BF16": 16, "F32": 32, "I32": 32, "F64": 64}  # accumulator bits


def builder():
    from triton._C.libtriton import gluon_ir, ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx, gluon_ir.GluonOpBuilder(ctx)


def attr_text(b, layout, shape):
    ty = str(b.get_distributed_ty(b.get_float_ty(), shape, layout._to_ir(b)))
    m = re.fullmatch(r"tensor<[^,]*, (#ttg\..*)>", ty)
    return m.group(1)


def holders_gluon(ll, shape):
    """element (r, c) -> sorted lanes holding it."""
    out = {}
    for lane in range(1 << len(ll.lane_bases)):
        for r in range(1 << len(ll.reg_bases)):
            c = [0] * len(shape)
            for i, b in enumerate(ll.reg_bases):
                if r >> i & 1:
                    c = [x ^ y for x, y in zip(c, b)]
            for i, b in enumerate(ll.lane_bases):
                if lane >> i & 1:
                    c = [x ^ y for x, y in zip(c, b)]
            out.setdefault(tuple(c), set()).add(lane)
    return {k: sorted(v) for k, v in out.items()}


def holders_tl(layout, rows, lanes, size, perm, transpose):
    out = {}
    for i in range(size(layout.shape)):
        t, off = i % lanes, layout(i)
        r, c = off % rows, off // rows
        out.setdefault((c, r) if transpose else (r, c), set()).add(perm(t))
    return {k: sorted(v) for k, v in out.items()}


def gluon_parts(b, name, a, ttgl, amd):
    m, n, k = a.shape_mnk
    kind, types = name.split("_")[0], name.split("_")[2]
    acc = re.match(r"(F32|F16|BF16|I32|F64)", types).group(1)
    if "WMMA" in name:
        lanes = 32
        version = 1 if kind == "RDNA3" else 2
        if [m, n, k] != [16, 16, 16]:  # Triton aborts the process on other WMMA shapes
            raise ValueError(f"Triton's WMMA v{version} has no instruction shape {[m, n, k]}")
        c = amd.AMDWMMALayout(version, False, [], instr_shape=[m, n, k])
    else:
        lanes = 64
        version = {"CDNA": 2, "CDNA3": 3, "CDNA3P": 4}[kind]
        c = amd.AMDMFMALayout(version, [m, n, k], False, [1, 1], element_bitwidth=EB[acc])
    kw = m * k // lanes if version != 1 else k
    parts = {"C": (c, [m, n])}
    parts["A"] = (ttgl.DotOperandLayout(0, c, kw), [m, k])
    parts["B"] = (ttgl.DotOperandLayout(1, c, kw), [k, n])
    return parts, lanes, version, kw


def run(files, oracle, existing, tl_amd, entry, tv_text, fit_tile, values, digest, size,
        mma_tiles, step_of):
    import triton.experimental.gluon.language as ttgl
    from triton.experimental.gluon.language import amd

    _ctx, b = builder()
    atoms = {}
    for v in vars(tl_amd).values():
        for x in v if isinstance(v, list) else [v]:
            if type(x).__name__ == "MMAAtom":
                atoms.setdefault(x.name, x)
    disagree = []
    for name, a in sorted(atoms.items()):
        fam = "amd_wmma" if "WMMA" in name else "amd_mfma"
        tl = mma_tiles(a)
        for op, (lay, tile) in tl.items():
            t2, _ = fit_tile(lay, tile)
            st = step_of(lay)
            oracle.append({"atom": f"{name}.{op}", "size": size(lay.shape), "step": st,
                           "digest": digest(values(lay, st)), "first": values(lay)[:8],
                           "tile": list(t2), "facts": "tensor-layouts"})
        try:
            parts, lanes, version, kw = gluon_parts(b, name, a, ttgl, amd)
            lls = {op: (b.to_linear_layout(l._to_ir(b), s), l, s) for op, (l, s) in parts.items()}
            for op, (ll, _l, s) in lls.items():
                if (1 << (len(ll.reg_bases) + len(ll.lane_bases))) < s[0] * s[1]:
                    raise ValueError(f"{op} does not cover its tile")
        except Exception as e:  # no such instruction in Triton: keep tensor-layouts' facts
            print(f"  {name}: no Gluon layout ({str(e).splitlines()[0][:90]}); "
                  "tensor-layouts facts kept")
            for op, (lay, tile) in tl.items():
                t2, why = fit_tile(lay, tile)
                note = "; ".join(x for x in (a.ptx, "no Gluon oracle", why) if x)
                files.setdefault(fam, []).append(entry(
                    f"{name}.{op}", f"tensor-layouts 0.3.2 atoms_amd.{name}",
                    tv_text(lay, t2), note))
            continue
        for op, (ll, l, s) in lls.items():
            text = attr_text(b, ll, s)
            ctor = (f"AMDWMMALayout(version={version}, transposed=False, warp_bases=[], "
                    f"instr_shape={list(a.shape_mnk)})" if "WMMA" in name else
                    f"AMDMFMALayout(version={version}, instr_shape={list(a.shape_mnk)}, "
                    "transposed=False, warps_per_cta=[1, 1])")
            if op != "C":
                ctor = f"DotOperandLayout({'AB'.index(op)}, {ctor}, k_width={kw})"
            src = f"Triton 3.9 Gluon {ctor}.to_linear_layout({s}) ({a.ptx}; tensor-layouts " \
                  f"0.3.2 atoms_amd.{name})"
            files.setdefault(fam, []).append(entry(f"{name}.{op}", src, text, shape=s))
            g = holders_gluon(ll, s)
            lay, tile = tl[op]
            same = [p for p, perm in (("own", lambda t: t),
                                      ("half-wave", lambda t: (t % 2) * 32 + t // 2))
                    if holders_tl(lay, tile[0], lanes, size, perm, op == "B") == g]
            oracle.append({"atom": f"{name}.{op}", "gluon_linear": text, "shape": s,
                           "tensor_layouts_agrees": same})
            if not same:
                disagree.append(f"{name}.{op}")
    print(f"AMD: tensor-layouts disagrees with Gluon on {len(disagree)} operands: "
          + ", ".join(disagree))
