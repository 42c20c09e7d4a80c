#!/usr/bin/env python3
"""Oracle values for the real layout strings of corpus/data/real/layouts.toml (issue 16).

- CuTe strings (`shape:stride` with or without `_N` statics, and C++ `Layout<Shape<..>,
  Stride<..>>`): pycute's evaluation at every flat index, as its size and a digest (the digest
  of corpus/tests/atom_oracles.rs: h = (h * 1000003 + v + 1) mod 2^61-1).
- Triton attributes (`#ttg.blocked`, `#ttg.nvidia_mma`, `#ttg.amd_mfma`, `#ttg.amd_wmma`,
  `#ttg.linear`) on their `shape`:
  Triton 3.9 Gluon's linear layout (BlockedLayout / NVMMADistributedLayout /
  DistributedLinearLayout built from the attribute's parameters, then to_linear_layout), printed
  as the `#ttg.linear` attribute Gluon writes.

Each string is read here by a small regex reader of its own: no laycert code. Writes
tests/data/real/oracle.jsonl, one record per string it has an oracle for:
{"text", "pycute": {"size", "digest"}} or {"text", "shape", "gluon_linear"}.
Run from the repository root:  python3 bench/peers/gen_real_oracle.py
"""
import ast
import json
import os
import re
import sys
import tomllib

import pycute

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


def cute_of(text):
    """pycute Layout of a CuTe string, or None when it is not plain CuTe."""
    t = re.sub(r"\s+", "", text)
    if t.startswith("Layout<"):
        t = t.replace("Shape<", "(").replace("Stride<", "(").replace(">", ")")
        t = t[len("Layout<"):-1]
        t = re.sub(r"_(\d+)", r"\1", t)
        depth = 0
        for i, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                shape, stride = t[:i], t[i + 1:]
                break
        else:
            shape, stride = t, "1"
        if shape.startswith("("):
            shape, stride = tup(shape), tup(stride)
            shape = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
            stride = stride[0] if len(stride) == 1 and isinstance(stride[0], tuple) else stride
        else:
            shape, stride = int(shape), int(stride)
        return pycute.Layout(shape, stride)
    m = re.fullmatch(r"([\d_(),]+):([\d_(),]+)", t)
    if not m:
        return None
    shape, stride = (tup(re.sub(r"_(\d+)", r"\1", x)) for x in m.groups())
    return pycute.Layout(shape, stride)


def ints(s):
    return [int(x) for x in s.split(",")] if s.strip() else []


def gluon_of(text, shape, b, ttgl):
    text = text.replace("#triton_gpu.", "#ttg.", 1)
    if text.startswith("#ttg.blocked"):
        f = dict(re.findall(r"(\w+) = \[([^\]]*)\]", text))
        lay = ttgl.BlockedLayout(ints(f["sizePerThread"]), ints(f["threadsPerWarp"]),
                                 ints(f["warpsPerCTA"]), ints(f["order"]))
    elif text.startswith("#ttg.nvidia_mma"):
        f = dict(re.findall(r"(\w+) = \[([^\]]*)\]", text))
        v = [int(re.search(r"versionMajor = (\d+)", text).group(1)),
             int(re.search(r"versionMinor = (\d+)", text).group(1))]
        lay = ttgl.NVMMADistributedLayout(v, ints(f["warpsPerCTA"]), ints(f["instrShape"]))
    elif text.startswith("#ttg.amd_mfma"):
        from triton.experimental.gluon.language.amd import AMDMFMALayout
        f = dict(re.findall(r"(\w+) = \[([^\]]*)\]", text))
        v = re.search(r"version(?:Major)? = (\d+)", text).group(1)
        instr = ints(f["instrShape"])
        if len(instr) == 2:
            instr.append({32: 8, 16: 16, 4: 4, 64: 4}[instr[0]])
        lay = AMDMFMALayout(version=int(v), instr_shape=instr,
                            transposed="isTransposed = true" in text,
                            warps_per_cta=ints(f["warpsPerCTA"]))
    elif text.startswith("#ttg.amd_wmma") and "warpsPerCTA" in text:
        from triton.experimental.gluon.language.amd import AMDWMMALayout
        f = dict(re.findall(r"(\w+) = \[([^\]]*)\]", text))
        wpc = ints(f["warpsPerCTA"])
        if any(w != 1 for w in wpc):
            return None
        v = int(re.search(r"version = (\d+)", text).group(1))
        lay = AMDWMMALayout(version=v, transposed="isTranspose = true" in text, warp_bases=[],
                            reg_bases=[], instr_shape=[16, 16, 16], rank=len(shape))
    elif text.startswith("#ttg.linear"):
        f = {k: ast.literal_eval(v) for k, v in
             re.findall(r"(register|lane|warp|block) = (\[(?:\[[^\]]*\](?:, )?)*\])", text)}
        lay = ttgl.DistributedLinearLayout(f["register"], f["lane"], f["warp"], f["block"], shape)
    else:
        return None
    ll = b.to_linear_layout(lay._to_ir(b), shape)
    ty = str(b.get_distributed_ty(b.get_float_ty(), shape, ll._to_ir(b)))
    return re.fullmatch(r"tensor<[^,]*, (#ttg\..*)>", ty).group(1)


def main():
    from triton._C.libtriton import gluon_ir, ir
    import triton.experimental.gluon.language as ttgl

    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    with open(SRC, "rb") as f:
        reals = tomllib.load(f)["real"]
    out = []
    for r in reals:
        if r.get("expect") == "error":
            continue
        text = r["text"]
        lay = cute_of(text)
        if lay is not None:
            n = pycute.size(lay.shape)
            out.append({"text": text, "pycute": {"size": n,
                                                 "digest": digest(lay(i) for i in range(n))}})
            continue
        if "shape" in r:
            g = gluon_of(text, r["shape"], b, ttgl)
            if g:
                out.append({"text": text, "shape": r["shape"], "gluon_linear": g})
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for rec in out:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    print(f"{len(out)} oracle records of {len(reals)} strings")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
