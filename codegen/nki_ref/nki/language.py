"""nki.language for the laycert reference interpreter: allocation, dtypes, buffers, loops and
the math operators the emitted kernels pass to nki.isa. See nki/_core.py for what is checked."""

import numpy as np

from . import _core
from ._core import (  # noqa: F401  (re-exported names of the public API)
    bfloat16,
    float16,
    float32,
    hbm,
    private_hbm,
    psum,
    sbuf,
    shared_hbm,
)


class tile_size:  # noqa: N801  (the public API's name)
    pmax = _core.PMAX
    gemm_stationary_fmax = _core.GEMM_STATIONARY_FMAX
    gemm_moving_fmax = _core.GEMM_MOVING_FMAX
    psum_fmax = _core.PSUM_BANK_BYTES // 4
    psum_bank_fmax = _core.PSUM_BANK_BYTES // 4
    psum_num_banks = _core.PSUM_BANKS


def ndarray(shape, dtype, buffer=None, name=""):
    """Allocates an (uninitialized) tensor."""
    if buffer is None:
        buffer = sbuf
    if not isinstance(buffer, _core.Buffer):
        raise _core.NkiRuleError("buffer", f"unknown buffer {buffer!r}")
    return _core.Tensor(shape, dtype, buffer, name=name)


def affine_range(*args):
    """A loop whose iterations carry no dependency (except PSUM accumulation)."""
    return range(*args)


def sequential_range(*args):
    """A loop whose iterations run in order."""
    return range(*args)


def static_range(*args):
    """A loop unrolled at trace time."""
    return range(*args)


class _Op:
    def __init__(self, name, fn, reduce=None):
        self.name = name
        self.fn = fn
        self.reduce = reduce

    def __repr__(self):
        return f"nl.{self.name}"


add = _Op("add", np.add, np.sum)
subtract = _Op("subtract", np.subtract)
multiply = _Op("multiply", np.multiply, np.prod)
maximum = _Op("maximum", np.maximum, np.max)
minimum = _Op("minimum", np.minimum, np.min)
max = _Op("max", np.maximum, np.max)  # noqa: A001  (the public API's name)
min = _Op("min", np.minimum, np.min)  # noqa: A001
exp = _Op("exp", np.exp)
copy = _Op("copy", lambda x: x)
