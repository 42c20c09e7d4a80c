"""nki.isa for the laycert reference interpreter: the instructions laycert emits, each checking
the rules its public documentation page states before computing with NumPy."""

import numpy as np

from . import _core
from ._core import NkiRuleError, as_view, psum, sbuf, ON_CHIP

# Counters the harness reports (matmul instructions, their MxKxN volume, DMA bytes).
STATS = {"nc_matmul": 0, "matmul_volume": 0, "dma_bytes": 0, "nc_transpose": 0, "max_accumulation": 0}


def _on_chip(view, what, engine):
    if view.buffer not in ON_CHIP:
        raise NkiRuleError(
            "engine-operand-buffer",
            f"{engine} {what} must be in SBUF or PSUM, not {view.buffer!r}",
        )
    if view.partition_size() > _core.PMAX:
        raise NkiRuleError("partition-dim", f"{engine} {what} partition dim {view.partition_size()} > 128")


def _same_partitions(a, b, engine):
    if a.shape[0] != b.shape[0]:
        raise NkiRuleError(
            "partition-mismatch",
            f"{engine}: operands have {a.shape[0]} and {b.shape[0]} partitions",
        )


def dma_copy(dst, src, **kwargs):
    """dst = src between HBM and SBUF (DMA engines)."""
    dst, src = as_view(dst, "dst"), as_view(src, "src")
    for v, what in ((dst, "dst"), (src, "src")):
        if v.buffer is psum:
            raise NkiRuleError("dma-buffer", f"dma_copy {what} is in PSUM; DMA moves between HBM and SBUF")
    if dst.shape != src.shape:
        if int(np.prod(dst.shape)) != int(np.prod(src.shape)) or [s for s in dst.shape if s != 1] != [
            s for s in src.shape if s != 1
        ]:
            raise NkiRuleError("dma-shape", f"dma_copy dst shape {dst.shape} != src shape {src.shape}")
    values = src.read("dma_copy src").reshape(dst.shape)
    dst.write(values)
    STATS["dma_bytes"] += int(np.prod(dst.shape)) * src.dtype.itemsize


def nc_matmul(dst, stationary, moving, accumulate=None, **kwargs):
    """dst (PSUM, fp32) (+)= stationary.T @ moving on the Tensor Engine."""
    dst, st, mv = as_view(dst, "dst"), as_view(stationary, "stationary"), as_view(moving, "moving")
    if kwargs:
        raise NkiRuleError("unsupported", f"nc_matmul options {sorted(kwargs)} are outside the emitted subset")
    for v, what in ((st, "stationary"), (mv, "moving")):
        if v.buffer is not sbuf:
            raise NkiRuleError("matmul-operand-buffer", f"nc_matmul {what} must be in SBUF, not {v.buffer!r}")
        if len(v.shape) != 2:
            raise NkiRuleError("matmul-operand-rank", f"nc_matmul {what} must be a 2-D tile, got {v.shape}")
        if v.dtype.name not in ("bfloat16", "float16", "float32"):
            raise NkiRuleError("matmul-dtype", f"nc_matmul {what} dtype {v.dtype!r}")
    if dst.buffer is not psum:
        raise NkiRuleError("matmul-dst-buffer", f"nc_matmul dst must be in PSUM, not {dst.buffer!r}")
    if dst.dtype.name != "float32":
        raise NkiRuleError("psum-fp32", f"nc_matmul accumulates in float32; dst is {dst.dtype!r}")
    k, m = st.shape
    k2, n = mv.shape
    if k != k2:
        raise NkiRuleError("matmul-partition", f"stationary has {k} partitions, moving {k2}: they must be identical")
    if k > _core.PMAX:
        raise NkiRuleError("matmul-partition", f"contraction (partition) size {k} > {_core.PMAX}")
    if m > _core.GEMM_STATIONARY_FMAX:
        raise NkiRuleError("matmul-stationary-free", f"stationary free size {m} > {_core.GEMM_STATIONARY_FMAX}")
    if n > _core.GEMM_MOVING_FMAX:
        raise NkiRuleError("matmul-moving-free", f"moving free size {n} > {_core.GEMM_MOVING_FMAX}")
    if dst.shape != (m, n):
        raise NkiRuleError("matmul-dst-shape", f"dst shape {dst.shape} != ({m}, {n})")
    first, last = dst.free_bytes_span()
    if first // _core.PSUM_BANK_BYTES != last // _core.PSUM_BANK_BYTES:
        raise NkiRuleError(
            "psum-bank",
            f"nc_matmul output spans bytes {first}..{last} of a partition: it must fit one "
            f"{_core.PSUM_BANK_BYTES}-byte PSUM bank",
        )
    product = st.read("nc_matmul stationary").T @ mv.read("nc_matmul moving")
    if accumulate is None:
        # An accumulation group: the first matmul into fresh PSUM cells writes, later ones add.
        written = dst.tensor.written[dst.index]
        if written.any() and not written.all():
            raise NkiRuleError("psum-accumulate", "nc_matmul dst is partly written: accumulation would mix groups")
        adds = bool(written.all())
    else:
        if accumulate:
            dst.read("nc_matmul accumulate")
        adds = bool(accumulate)
    dst.write(product, accumulate=adds)
    # How many matmuls each PSUM cell has summed since its group began: every one rounds the
    # running sum to float32 once, which bounds the harness's tolerance.
    t = dst.tensor
    if getattr(t, "matmuls", None) is None:
        t.matmuls = np.zeros(t.shape, dtype=np.int64)
    t.matmuls[dst.index] = t.matmuls[dst.index] + 1 if adds else 1
    STATS["max_accumulation"] = max(STATS["max_accumulation"], int(t.matmuls[dst.index].max()))
    STATS["nc_matmul"] += 1
    STATS["matmul_volume"] += k * m * n


def nc_transpose(dst, data, **kwargs):
    """dst = data.T: partition and free axis swapped, on the Tensor Engine (SBUF -> PSUM)."""
    dst, data = as_view(dst, "dst"), as_view(data, "data")
    if data.buffer is not sbuf or dst.buffer is not psum:
        raise NkiRuleError("transpose-buffer", "nc_transpose on the Tensor Engine reads SBUF and writes PSUM")
    if len(data.shape) != 2 or data.shape[0] > _core.PMAX or data.shape[1] > _core.PMAX:
        raise NkiRuleError("transpose-size", f"nc_transpose input {data.shape}: at most 128x128 on the Tensor Engine")
    if dst.shape != data.shape[::-1]:
        raise NkiRuleError("transpose-shape", f"dst {dst.shape} is not the transpose of {data.shape}")
    dst.write(data.read("nc_transpose data").T)
    STATS["nc_transpose"] += 1


def tensor_copy(dst, src, **kwargs):
    """dst = src (with a cast), SBUF/PSUM to SBUF/PSUM."""
    dst, src = as_view(dst, "dst"), as_view(src, "src")
    _on_chip(dst, "dst", "tensor_copy")
    _on_chip(src, "src", "tensor_copy")
    if dst.shape != src.shape:
        raise NkiRuleError("shape", f"tensor_copy dst {dst.shape} != src {src.shape}")
    dst.write(src.read("tensor_copy src"))


def _operand(x, data, what, engine):
    """A scalar, or a [P, 1] vector broadcast along the free axes."""
    if isinstance(x, (int, float)):
        return float(x)
    v = as_view(x, what)
    _on_chip(v, what, engine)
    if v.shape[0] != data.shape[0] or int(np.prod(v.shape[1:])) != 1:
        raise NkiRuleError(
            "operand-shape",
            f"{engine} {what} must be a scalar or a [{data.shape[0]}, 1] vector, got {v.shape}",
        )
    vals = v.read(f"{engine} {what}").reshape((v.shape[0],) + (1,) * (len(data.shape) - 1))
    return vals


def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, **kwargs):
    """dst = op-reduce of data over free axes (Vector Engine); -1 times it when negate."""
    dst, data = as_view(dst, "dst"), as_view(data, "data")
    _on_chip(dst, "dst", "tensor_reduce")
    _on_chip(data, "data", "tensor_reduce")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if 0 in axes:
        raise NkiRuleError("reduce-axis", "tensor_reduce cannot reduce the partition axis 0")
    if op.reduce is None:
        raise NkiRuleError("reduce-op", f"{op!r} is not a reduction operator")
    out = op.reduce(data.read("tensor_reduce data"), axis=axes, keepdims=keepdims)
    if negate:
        out = -out
    if int(np.prod(out.shape)) != int(np.prod(dst.shape)) or out.shape[0] != dst.shape[0]:
        raise NkiRuleError("shape", f"tensor_reduce result {out.shape} does not fit dst {dst.shape}")
    dst.write(out.reshape(dst.shape))


def activation(dst, op, data, bias=None, scale=1.0, **kwargs):
    """dst = op(data * scale + bias) on the Scalar Engine (float32 math)."""
    if kwargs:
        raise NkiRuleError("unsupported", f"activation options {sorted(kwargs)} are outside the emitted subset")
    dst, data = as_view(dst, "dst"), as_view(data, "data")
    _on_chip(dst, "dst", "activation")
    _on_chip(data, "data", "activation")
    if dst.shape != data.shape:
        raise NkiRuleError("shape", f"activation dst {dst.shape} != data {data.shape}")
    x = data.read("activation data") * _operand(scale, data, "scale", "activation")
    if bias is not None:
        x = x + _operand(bias, data, "bias", "activation")
    dst.write(op.fn(x))


def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, **kwargs):
    """dst = (data op0 operand0) op1 operand1, operands scalars or [P,1] vectors."""
    dst, data = as_view(dst, "dst"), as_view(data, "data")
    _on_chip(dst, "dst", "tensor_scalar")
    _on_chip(data, "data", "tensor_scalar")
    if dst.shape != data.shape:
        raise NkiRuleError("shape", f"tensor_scalar dst {dst.shape} != data {data.shape}")
    x = data.read("tensor_scalar data")
    a = _operand(operand0, data, "operand0", "tensor_scalar")
    x = op0.fn(a, x) if reverse0 else op0.fn(x, a)
    if op1 is not None:
        b = _operand(operand1, data, "operand1", "tensor_scalar")
        x = op1.fn(b, x) if reverse1 else op1.fn(x, b)
    dst.write(x)


def tensor_tensor(dst, data1, data2, op, **kwargs):
    """dst = data1 op data2, elementwise (both on chip, same shape, at most one in PSUM)."""
    dst, a, b = as_view(dst, "dst"), as_view(data1, "data1"), as_view(data2, "data2")
    for v, what in ((dst, "dst"), (a, "data1"), (b, "data2")):
        _on_chip(v, what, "tensor_tensor")
    if a.shape != b.shape or dst.shape != a.shape:
        raise NkiRuleError("shape", f"tensor_tensor shapes {dst.shape} = {a.shape} op {b.shape}")
    if a.buffer is psum and b.buffer is psum:
        raise NkiRuleError("tensor-tensor-psum", "tensor_tensor: at most one input may be in PSUM")
    dst.write(op.fn(a.read("tensor_tensor data1"), b.read("tensor_tensor data2")))


def reciprocal(dst, data, **kwargs):
    """dst = 1 / data."""
    dst, data = as_view(dst, "dst"), as_view(data, "data")
    _on_chip(dst, "dst", "reciprocal")
    _on_chip(data, "data", "reciprocal")
    if dst.shape != data.shape:
        raise NkiRuleError("shape", f"reciprocal dst {dst.shape} != data {data.shape}")
    dst.write(1.0 / data.read("reciprocal data"))


def memset(dst, value, **kwargs):
    """dst = value everywhere."""
    dst = as_view(dst, "dst")
    _on_chip(dst, "dst", "memset")
    dst.write(np.full(dst.shape, float(value)))
