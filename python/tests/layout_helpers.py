"""Test helpers: random CuTe layouts and evaluation at every coordinate."""

import random
from typing import List, Tuple, Union

IntTuple = Union[int, Tuple["IntTuple", ...]]


def random_shape_stride(rng: random.Random, max_size: int = 512) -> Tuple[IntTuple, IntTuple]:
    """A random (possibly nested) CuTe shape and stride of at most ``max_size`` elements."""

    def mode(depth: int) -> Tuple[IntTuple, IntTuple]:
        if depth < 2 and rng.random() < 0.3:
            parts = [mode(depth + 1) for _ in range(rng.randint(1, 3))]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        return rng.choice([1, 2, 2, 3, 4, 4, 5, 8]), rng.choice([0, 1, 1, 2, 3, 4, 8, 16, 24])

    while True:
        rank = rng.randint(1, 3)
        parts = [mode(1) for _ in range(rank)]
        shape = parts[0][0] if rank == 1 else tuple(p[0] for p in parts)
        stride = parts[0][1] if rank == 1 else tuple(p[1] for p in parts)
        if size(shape) <= max_size:
            return shape, stride


def size(t: IntTuple) -> int:
    if isinstance(t, int):
        return t
    n = 1
    for x in t:
        n *= size(x)
    return n


def top_sizes(shape: IntTuple) -> List[int]:
    return [shape] if isinstance(shape, int) else [size(m) for m in shape]


def colex(i: int, sizes: List[int]) -> List[int]:
    out = []
    for s in sizes:
        out.append(i % s)
        i //= s
    return out


def offsets(layout) -> List[int]:
    """A laycert CuTe layout's offset at every flat index (colexicographic, as CuTe reads it)."""
    sizes = layout.shape
    n = layout.size
    result = []
    for i in range(n):
        (p,) = layout.eval(colex(i, sizes))
        result.append(p["m"])
    return result
