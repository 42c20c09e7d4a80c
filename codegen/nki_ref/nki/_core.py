"""The tensor model of the laycert NKI reference interpreter.

A CPU interpreter for exactly the NKI subset laycert emits. It validates kernels against the
rules of the public NKI documentation (nki.language / nki.isa API pages and the Trainium
architecture guides), NOT against hardware: it cannot say anything about timing, engine
concurrency, or behaviour the documentation leaves open. Every rule it enforces raises
NkiRuleError whose message starts with the rule's name.
"""

import os
import weakref

import numpy as np

PMAX = 128  # partitions of SBUF and PSUM
PSUM_BANK_BYTES = 2048  # per partition, per bank
PSUM_BANKS = 8
SBUF_BYTES = {"trn1": 192 * 1024, "trn2": 224 * 1024}  # per partition
GEMM_STATIONARY_FMAX = 128
GEMM_MOVING_FMAX = 512


class NkiRuleError(Exception):
    """A documented NKI rule was violated; str(e) starts with the rule name."""

    def __init__(self, rule, message):
        super().__init__(f"{rule}: {message}")
        self.rule = rule


def target():
    t = os.environ.get("NKI_REF_TARGET", "trn1")
    if t not in SBUF_BYTES:
        raise NkiRuleError("target", f"unknown target {t!r} (trn1 or trn2)")
    return t


class Dtype:
    """A NKI dtype: its name, element bytes and the NumPy type values are kept in."""

    def __init__(self, name, itemsize, store):
        self.name = name
        self.itemsize = itemsize
        self.store = store

    def round(self, values):
        values = np.asarray(values, dtype=np.float64)
        if self.name == "bfloat16":
            return round_bf16(values).astype(np.float32)
        return values.astype(self.store)

    def __repr__(self):
        return f"nl.{self.name}"


def round_bf16(values):
    """Round to the nearest bfloat16 (ties to even), returned as float32."""
    f = np.asarray(values, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounding = ((bits >> 16) & 1) + 0x7FFF
    out = ((bits + rounding) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(f), f, out)


float32 = Dtype("float32", 4, np.float32)
float16 = Dtype("float16", 2, np.float16)
bfloat16 = Dtype("bfloat16", 2, np.float32)


def dtype_of(d):
    if isinstance(d, Dtype):
        return d
    for known in (float32, float16, bfloat16):
        if d == known.store and known is not bfloat16:
            return known
    raise NkiRuleError("dtype", f"unsupported dtype {d!r} (float32, float16, bfloat16)")


class Buffer:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"nl.{self.name}"


sbuf = Buffer("sbuf")
psum = Buffer("psum")
hbm = Buffer("hbm")
shared_hbm = Buffer("shared_hbm")
private_hbm = Buffer("private_hbm")
ON_CHIP = (sbuf, psum)


class Memory:
    """Live on-chip allocations, per partition, freed when a tensor is garbage collected."""

    def __init__(self):
        self.live = {"sbuf": 0, "psum": 0}
        self.peak = {"sbuf": 0, "psum": 0}

    def allocate(self, buffer, nbytes):
        if buffer is psum:
            nbytes = -(-nbytes // PSUM_BANK_BYTES) * PSUM_BANK_BYTES
            cap = PSUM_BANK_BYTES * PSUM_BANKS
            rule = "psum-capacity"
        else:
            cap = SBUF_BYTES[target()]
            rule = "sbuf-capacity"
        new = self.live[buffer.name] + nbytes
        if new > cap:
            raise NkiRuleError(
                rule,
                f"{buffer!r} would hold {new} bytes per partition, the {target()} capacity "
                f"is {cap}",
            )
        self.live[buffer.name] = new
        self.peak[buffer.name] = max(self.peak[buffer.name], new)
        return nbytes

    def release(self, name, nbytes):
        self.live[name] -= nbytes


MEMORY = Memory()


class Tensor:
    """A NKI tensor: values (float32/float16 storage), its buffer and which cells were written."""

    def __init__(self, shape, dtype, buffer, values=None, name=""):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype_of(dtype)
        self.buffer = buffer
        self.name = name
        if any(s < 1 for s in self.shape):
            raise NkiRuleError("tensor-shape", f"shape {self.shape} has an empty dimension")
        if buffer in ON_CHIP:
            if len(self.shape) < 2:
                raise NkiRuleError(
                    "tile-rank",
                    f"a {buffer!r} tensor has dim 0 the partition axis and at least one "
                    f"free dim; shape {self.shape} is {len(self.shape)}-D",
                )
            if self.shape[0] > PMAX:
                raise NkiRuleError(
                    "partition-dim",
                    f"{buffer!r} tensor of shape {self.shape}: partition dim "
                    f"{self.shape[0]} > {PMAX}",
                )
            per_partition = int(np.prod(self.shape[1:])) * self.dtype.itemsize
            if buffer is psum and self.shape[1:] and per_partition > PSUM_BANK_BYTES * PSUM_BANKS:
                raise NkiRuleError(
                    "psum-capacity",
                    f"psum tensor {self.shape} needs {per_partition} bytes per partition > "
                    f"{PSUM_BANK_BYTES * PSUM_BANKS}",
                )
            held = MEMORY.allocate(buffer, per_partition)
            weakref.finalize(self, MEMORY.release, buffer.name, held)
        if values is None:
            self.values = np.zeros(self.shape, dtype=self.dtype.store)
            self.written = np.zeros(self.shape, dtype=bool)
        else:
            self.values = self.dtype.round(values).reshape(self.shape)
            self.written = np.ones(self.shape, dtype=bool)

    def __getitem__(self, index):
        return View(self, index)

    def full(self):
        return View(self, tuple(slice(None) for _ in self.shape))

    def __repr__(self):
        return f"Tensor({self.shape}, {self.dtype!r}, {self.buffer!r})"


class View:
    """A rectangular (possibly strided) region of a tensor; integer indices drop a dim."""

    def __init__(self, tensor, index):
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) > len(tensor.shape):
            raise NkiRuleError("index", f"{len(index)} indices into a {len(tensor.shape)}-D tensor")
        index = index + tuple(slice(None) for _ in range(len(tensor.shape) - len(index)))
        for axis, (i, n) in enumerate(zip(index, tensor.shape)):
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                if (i.start is not None and not 0 <= i.start <= n) or (
                    i.stop is not None and not 0 <= i.stop <= n
                ):
                    raise NkiRuleError(
                        "out-of-bounds",
                        f"slice {i.start}:{i.stop} on dim {axis} of size {n} of {tensor!r}",
                    )
                if step < 1 or stop <= start:
                    raise NkiRuleError("out-of-bounds", f"empty or reversed slice on dim {axis}")
            elif isinstance(i, (int, np.integer)):
                if not 0 <= int(i) < n:
                    raise NkiRuleError(
                        "out-of-bounds", f"index {int(i)} on dim {axis} of size {n} of {tensor!r}"
                    )
            else:
                raise NkiRuleError("index", f"unsupported index {i!r}")
        if tensor.buffer in ON_CHIP and not isinstance(index[0], slice):
            raise NkiRuleError(
                "partition-dim", "indexing away the partition dim of an on-chip tensor"
            )
        self.tensor = tensor
        self.index = index
        self.shape = tensor.values[index].shape
        self.dtype = tensor.dtype
        self.buffer = tensor.buffer

    def __getitem__(self, index):
        raise NkiRuleError("index", "index the tensor, not a view of it")

    def read(self, rule_context):
        if not self.tensor.written[self.index].all():
            raise NkiRuleError(
                "uninitialized-read",
                f"{rule_context} reads cells of {self.tensor!r} that were never written",
            )
        return self.tensor.values[self.index].astype(np.float64)

    def write(self, values, accumulate=False):
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self.shape:
            values = np.broadcast_to(values, self.shape)
        if accumulate:
            values = values + self.tensor.values[self.index].astype(np.float64)
        self.tensor.values[self.index] = self.dtype.round(values)
        self.tensor.written[self.index] = True

    def partition_size(self):
        return self.shape[0]

    def free_size(self):
        return int(np.prod(self.shape[1:]))

    def free_bytes_span(self):
        """First and last byte offset, within a partition, that this view touches."""
        t = self.tensor
        flat = np.arange(int(np.prod(t.shape[1:]))).reshape(t.shape[1:])
        offs = flat[self.index[1:]]
        return int(offs.min()) * t.dtype.itemsize, (int(offs.max()) + 1) * t.dtype.itemsize - 1


def as_view(x, what):
    if isinstance(x, Tensor):
        return x.full()
    if isinstance(x, View):
        return x
    raise NkiRuleError("operand", f"{what} must be a NKI tensor or a slice of one, not {type(x).__name__}")
