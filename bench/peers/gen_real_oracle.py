#!/usr/bin/env python3
"""Oracle values for the real layout strings of corpus/data/real/layouts.toml (issue 16).

- CuTe strings (`shape:stride` with or without `_N` statics; C++ `Layout<Shape<..>,
  Stride<..>>`, whose stride defaults to CuTe's LayoutLeft; `ComposedLayout<Swizzle<B,M,S>,
  smem_ptr_flag, Layout<..>>`): pycute's evaluation at every flat index, as its size and a
  digest (the digest of corpus/tests/atom_oracles.rs: h = (h * 1000003 + v + 1) mod 2^61-1).
  `smem_ptr_flag` is CuTe's `smem_ptr_flag_bits<1>`: the layout counts bits and the swizzle
  acts on byte addresses, so on the bit offsets pycute sees it is `Swizzle(B, M + 3, S)`.
- Triton strings on their `shape`, by Triton 3.9 itself:
  * a TTGIR attribute is parsed by Triton's MLIR parser (as the encoding of a tensor, or of a
    shared memdesc) and read back as a Gluon layout; `#alias` names are first replaced by the
    string's `defs` lines; the old dialect name `#triton_gpu.` is read as `#ttg.`, and the
    pre-3.2 `shared` attribute as the attribute Triton 3.2 rewrote it to (swizzled_shared
    without hasLeadingOffset; with it nvmma_shared: swizzle bytes from (perPhase, maxPhase) =
    (4, 2), (2, 4), (1, 8), transposed = order [0, 1], 128 / vec-bit elements). An attribute
    Triton 3.9 no longer reads (the old single-CTA fields of `blocked`, `amd_mfma` with
    `versionMajor` or a 2-element `instrShape`, `amd_wmma` with `warpsPerCTA`) is built by a
    Gluon constructor from its fields instead (the small regex reader below).
  * a Gluon constructor (`ttgl.BlockedLayout(...)`) is evaluated by Python with Gluon's
    classes.
  Distributed layouts record Gluon's linear layout as the `#ttg.linear` attribute Gluon prints
  ("gluon_linear"); shared ones their offset and block bases, written as a `#ttg.linear`
  attribute with in-dims offset and block ("gluon_shared"); padded shared ones their offset
  bases and interval/padding pairs ("gluon_padded"; Triton has no linear layout of the
  padding, the test applies the documented rule).
- TIRx strings have no oracle (corpus/data/claims/real_tirx.toml checks them through `equiv`).

No laycert code is used. Each string is converted in a child process, since Triton aborts the
process on some inputs. Writes tests/data/real/oracle.jsonl, one record per string with an
oracle: {"text", "pycute": {"size", "digest"}} or {"text", "shape", ["defs",] "gluon_linear" |
"gluon_shared" | "gluon_padded"}. Records of strings already in the file must come out
identical (checked). Run from the repository root:  python3 bench/peers/gen_real_oracle.py
(Triton 3.9, pycute from `pip install nvidia-cutlass`).
"""
import ast
import json
import os
import re
import sys
import tempfile
import tomllib

import pycute

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_triton_layouts import in_child  # noqa: E402

SRC = "corpus/data/real/layouts.toml"
OUT = "tests/data/real/oracle.jsonl"
P = (1 << 61) - 1


def digest(values):
    h = 0
    for v in values:
        h = (h * 1000003 + v + 1) % P
    return h


def tup(s):
    s = s.strip()
    return ast.literal_eval(re.sub(r"\)", ",)", s)) if s.startswith("(") else int(s)


def split_top(t):
    """`shape,stride` at the top-level comma (or the whole text and None)."""
    depth = 0
    for i, ch in enumerate(t):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            return t[:i], t[i + 1:]
    return t, None


def cpp_layout(t):
    """pycute Layout of `Layout<Shape<..>[,Stride<..>]>` (whitespace removed)."""
    t = t.replace("Shape<", "(").replace("Stride<", "(").replace(">", ")")
    t = re.sub(r"_(\d+)", r"\1", t[len("Layout<"):-1])
    shape, stride = split_top(t)
    if shape.startswith("("):
        shape = tup(shape)
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
        if stride is None:
            return pycute.Layout(shape)  # LayoutLeft
        stride = tup(stride)
        stride = stride[0] if len(stride) == 1 and isinstance(stride[0], tuple) else stride
        return pycute.Layout(shape, stride)
    return pycute.Layout(int(shape), int(stride) if stride is not None else 1)


def cute_of(text):
    """pycute layout of a CuTe string, or None when it is not CuTe."""
    t = re.sub(r"\s+", "", text)
    m = re.fullmatch(r"ComposedLayout<Swizzle<(\d+),(\d+),(\d+)>,smem_ptr_flag,(Layout<.*>)>", t)
    if m:
        b, base, s = (int(x) for x in m.groups()[:3])
        return pycute.ComposedLayout(pycute.Swizzle(b, base + 3, s), 0, cpp_layout(m.group(4)))
    if t.startswith("Layout<"):
        return cpp_layout(t)
    m = re.fullmatch(r"([\d_(),]+):([\d_(),]+)", t)
    if not m:
        return None
    shape, stride = (tup(re.sub(r"_(\d+)", r"\1", x)) for x in m.groups())
    return pycute.Layout(shape, stride)


def resolve(text, defs):
    """`text` with every `#name` of `defs` (`#name = value` lines) replaced, recursively."""
    if not defs:
        return text
    table = dict(re.findall(r"^\s*#([\w$.]+)\s*=\s*(.*?)\s*$", defs, re.M))

    def sub(t, depth=0):
        assert depth < 16, "aliases nest too deep"
        return re.sub(r"#([A-Za-z_][\w$]*)(?![\w$.])",
                      lambda m: sub(table[m.group(1)], depth + 1) if m.group(1) in table
                      else m.group(0), t)
    return sub(text)


def ints(s):
    return [int(x) for x in s.split(",")] if s.strip() else []


def legacy_shared(text):
    """Triton 3.2's rewrite of the pre-3.2 `shared` attribute (single CTA)."""
    f = dict(re.findall(r"(\w+) = (\[[^\]]*\]|\w+)", text))
    if "CTAsPerCGA" in f and set(ints(f["CTAsPerCGA"][1:-1])) != {1}:
        raise ValueError("multi-CTA pre-3.2 shared layouts are not rewritten here")
    vec, per, mx, order = int(f["vec"]), int(f["perPhase"]), int(f["maxPhase"]), f["order"]
    if f.get("hasLeadingOffset") == "true":
        swizzle = {(4, 2): 32, (2, 4): 64, (1, 8): 128}[(per, mx)]
        transposed = {"[1, 0]": "false", "[0, 1]": "true"}[order]
        return (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {swizzle}, transposed = {transposed}, "
                f"elementBitWidth = {128 // vec}}}>")
    return f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = {mx}, order = {order}}}>"


def constructed(text, shape, ttgl):
    """Gluon constructor built from an attribute's fields, for the attributes Triton 3.9's
    parser (or its Gluon reading) no longer takes: the old single-CTA fields of `blocked`,
    `amd_mfma` with `versionMajor` or a 2-element `instrShape`, `amd_wmma` with `warpsPerCTA`
    (the regex reader of the first version of this script)."""
    f = dict(re.findall(r"(\w+) = \[([^\]]*)\]", text))
    if text.startswith("#ttg.blocked"):
        return ttgl.BlockedLayout(ints(f["sizePerThread"]), ints(f["threadsPerWarp"]),
                                  ints(f["warpsPerCTA"]), ints(f["order"]))
    if text.startswith("#ttg.nvidia_mma"):
        v = [int(re.search(r"versionMajor = (\d+)", text).group(1)),
             int(re.search(r"versionMinor = (\d+)", text).group(1))]
        return ttgl.NVMMADistributedLayout(v, ints(f["warpsPerCTA"]), ints(f["instrShape"]))
    if text.startswith("#ttg.amd_mfma"):
        from triton.experimental.gluon.language.amd import AMDMFMALayout
        v = re.search(r"version(?:Major)? = (\d+)", text).group(1)
        instr = ints(f["instrShape"])
        if len(instr) == 2:
            instr.append({32: 8, 16: 16, 4: 4, 64: 4}[instr[0]])
        return AMDMFMALayout(version=int(v), instr_shape=instr,
                             transposed="isTransposed = true" in text,
                             warps_per_cta=ints(f["warpsPerCTA"]))
    if text.startswith("#ttg.amd_wmma") and "warpsPerCTA" in text:
        from triton.experimental.gluon.language.amd import AMDWMMALayout
        if any(w != 1 for w in ints(f["warpsPerCTA"])):
            return None
        v = int(re.search(r"version = (\d+)", text).group(1))
        return AMDWMMALayout(version=v, transposed="isTranspose = true" in text, warp_bases=[],
                             reg_bases=[], instr_shape=[16, 16, 16], rank=len(shape))
    m = re.fullmatch(r"#ttg\.dot_op<\{opIdx = (\d), parent = (#.*>), kWidth = (\d+)\}>", text)
    if m:
        parent = constructed(m.group(2), shape, ttgl)
        return parent and ttgl.DotOperandLayout(int(m.group(1)), parent, int(m.group(3)))
    return None


SHARED_KINDS = ("swizzled_shared", "nvmma_shared", "padded_shared", "shared")


def parsed(attr, shape, b, ir, ctx):
    """Triton's MLIR parse of `attr` as a tensor's (or shared memdesc's) encoding."""
    kind = re.match(r"#ttg\.(\w+)", attr).group(1)
    dims = "x".join(str(d) for d in shape)
    shared = kind in SHARED_KINDS
    if shared:
        bits = re.search(r"elementBitWidth = (\d+)", attr)
        elt = {"8": "i8", "16": "f16", "32": "f32"}[bits.group(1)] if bits else "f16"
        ty = f"!ttg.memdesc<{dims}x{elt}, {attr}, #ttg.shared_memory>"
    else:
        ty = f"tensor<{dims}xf32, {attr}>"
    src = ('module attributes {"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, '
           '"ttg.threads-per-warp" = 32 : i32} {\n  tt.func @f(%a: ' + ty + ") {\n"
           "    tt.return\n  }\n}\n")
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(src)
    try:
        arg = ir.parse_mlir_module(f.name, ctx).get_function("f").args(0)
    finally:
        os.unlink(f.name)
    return b.get_gluon_layout_from_memdesc(arg) if shared else b.get_gluon_layout_from_tensor(arg)


def gluon_namespace():
    import triton.experimental.gluon.language as ttgl
    from triton.experimental.gluon.language import amd
    return {"__builtins__": {}, "ttgl": ttgl, "gl": ttgl, "amd": amd}


def triton_record(r):
    """The oracle fields of a Triton string (run in a child process)."""
    from triton._C.libtriton import gluon_ir, ir
    import triton.experimental.gluon.language as ttgl

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    shape = r["shape"]
    text = resolve(r["text"], r.get("defs")).strip()
    if text.startswith("#"):
        attr = text.replace("#triton_gpu.", "#ttg.")
        if re.match(r"#ttg\.shared<", attr):
            attr = legacy_shared(attr)
        try:
            lay = parsed(attr, shape, b, ir, ctx)
        except (RuntimeError, AssertionError):
            lay = constructed(attr, shape, ttgl)
            if lay is None:
                raise
    else:
        lay = eval(text, gluon_namespace())  # Gluon evaluates its own constructor text
    if isinstance(lay, ttgl.PaddedSharedLayout):
        return {"gluon_padded": {"offset": [list(x) for x in lay.offset_bases],
                                 "pairs": [list(p) for p in lay.interval_padding_pairs]}}
    ll = b.to_linear_layout(lay._to_ir(b), shape)
    if hasattr(ll, "offset_bases"):
        def bases(xs):
            return "[" + ", ".join("[" + ", ".join(map(str, x)) + "]" for x in xs) + "]"
        return {"gluon_shared": f"#ttg.linear<{{offset = {bases(ll.offset_bases)}, "
                                f"block = {bases(ll.block_bases)}}}>"}
    ty = str(b.get_distributed_ty(b.get_float_ty(), shape, ll._to_ir(b)))
    return {"gluon_linear": re.fullmatch(r"tensor<[^,]*, (#ttg\..*)>", ty).group(1)}


def main():
    with open(SRC, "rb") as f:
        reals = tomllib.load(f)["real"]
    previous = {}
    if os.path.exists(OUT):
        for line in open(OUT):
            rec = json.loads(line)
            previous[(rec["text"], json.dumps(rec.get("shape")), rec.get("defs"))] = line.rstrip("\n")
    out, missing = [], []
    for r in reals:
        if r.get("expect") == "error":
            continue
        text = r["text"]
        lay = cute_of(text)
        if lay is not None:
            n = pycute.size(lay.shape) if hasattr(lay, "shape") else pycute.size(lay.layoutA.shape)
            out.append({"text": text, "pycute": {"size": n,
                                                 "digest": digest(lay(i) for i in range(n))}})
            continue
        if "shape" not in r:
            continue  # TIRx: no oracle
        fields, why = in_child(triton_record, r)
        if fields is None:
            missing.append(f"{text!r} on {r['shape']}: {why}")
            continue
        rec = {"text": text, "shape": r["shape"]}
        if "defs" in r:
            rec["defs"] = r["defs"]
        rec.update(fields)
        out.append(rec)
    lines = [json.dumps(rec, separators=(",", ":")) for rec in out]
    changed = []
    for rec, line in zip(out, lines):
        old = previous.get((rec["text"], json.dumps(rec.get("shape")), rec.get("defs")))
        if old is not None and old != line:
            changed.append(f"{rec['text']!r}:\n  was {old}\n  now {line}")
    if changed:
        print("existing records would change:\n" + "\n".join(changed))
        sys.stdout.flush()
        os._exit(1)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    print(f"{len(out)} oracle records of {len(reals)} strings")
    for m in missing:
        print("no oracle:", m)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
