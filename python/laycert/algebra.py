"""The CuTe layout algebra: each function calls the Rust implementation the CLI's
``laycert cute OP`` calls (``layout::cute::cli_op``) and returns a :class:`~laycert.Layout`.
Results are what CUTLASS computes, printed in pycute's spelling; where CUTLASS's answer fails
the operation's own definition laycert refuses with a :class:`~laycert.LaycertError` naming the
condition (see the repository README, "The layout algebra").

Operands are :class:`~laycert.Layout` objects or CuTe text. A tiler is a layout, or a tuple of
tilers applied mode by mode (ints are shapes, ``None`` is ``_``).
"""

from __future__ import annotations

from typing import Optional, Tuple, Union

from ._laycert import Layout, cute_op

LayoutLike = Union[Layout, str]
Tiler = Union[Layout, str, int, None, Tuple["Tiler", ...]]


def _text(x: Tiler) -> str:
    if x is None:
        return "_"
    if isinstance(x, (Layout, str)):
        return str(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, tuple):
        inner = ", ".join(_text(e) for e in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    raise TypeError(f"expected a Layout, layout text, an int or a tuple, got {type(x).__name__}")


def _op(op: str, *args: Tiler) -> Layout:
    return Layout(cute_op(op, [_text(a) for a in args]))


def compose(a: LayoutLike, b: Tiler) -> Layout:
    """``a ∘ b``: ``compose('(6,2):(8,2)', '(4,3):(3,1)')`` is ``((2, 2), 3):((24, 2), 8)``.
    ``a`` may be swizzled (``Sw<B,M,S> o L``); ``b`` may be a tiler."""
    return _op("compose", a, b)


def complement(a: LayoutLike, cotarget: Union[int, Tuple[int, ...], LayoutLike]) -> Layout:
    """The complement of ``a`` in a size, a shape or a layout's shape:
    ``complement('4:2', 24)`` is ``(2, 3):(1, 8)``."""
    return _op("complement", a, cotarget)


def coalesce(a: LayoutLike, profile: Optional[Tuple[int, ...]] = None) -> Layout:
    """``a`` with mergeable modes merged (by mode, when a profile is given):
    ``coalesce('(4,5):(1,4)')`` is ``20:1``."""
    return _op("coalesce", a) if profile is None else _op("coalesce", a, profile)


def logical_divide(a: LayoutLike, tiler: Tiler) -> Layout:
    """CuTe's ``logical_divide(a, tiler)``."""
    return _op("divide", a, tiler, "logical")


def zipped_divide(a: LayoutLike, tiler: Tiler) -> Layout:
    """CuTe's ``zipped_divide(a, tiler)``."""
    return _op("divide", a, tiler, "zipped")


def tiled_divide(a: LayoutLike, tiler: Tiler) -> Layout:
    """CuTe's ``tiled_divide(a, tiler)``."""
    return _op("divide", a, tiler, "tiled")


def flat_divide(a: LayoutLike, tiler: Tiler) -> Layout:
    """CuTe's ``flat_divide(a, tiler)``."""
    return _op("divide", a, tiler, "flat")


def logical_product(a: LayoutLike, b: Tiler) -> Layout:
    """CuTe's ``logical_product(a, b)``."""
    return _op("product", a, b, "logical")


def zipped_product(a: LayoutLike, b: Tiler) -> Layout:
    """CuTe's ``zipped_product(a, b)``."""
    return _op("product", a, b, "zipped")


def tiled_product(a: LayoutLike, b: Tiler) -> Layout:
    """CuTe's ``tiled_product(a, b)``."""
    return _op("product", a, b, "tiled")


def blocked_product(a: LayoutLike, b: LayoutLike) -> Layout:
    """CuTe's ``blocked_product(a, b)``: ``blocked_product('(3,4):(4,1)', '(2,5):(1,2)')`` is
    ``((3, 2), (4, 5)):((4, 12), (1, 24))``."""
    return _op("product", a, b, "blocked")


def raked_product(a: LayoutLike, b: LayoutLike) -> Layout:
    """CuTe's ``raked_product(a, b)``."""
    return _op("product", a, b, "raked")


def left_inverse(a: LayoutLike) -> Layout:
    """A left inverse of ``a`` (CUTLASS's values on ``a``'s image)."""
    return _op("left-inverse", a)


def right_inverse(a: LayoutLike) -> Layout:
    """CuTe's right inverse of ``a``."""
    return _op("right-inverse", a)


def nullspace(a: LayoutLike) -> Layout:
    """CuTe's ``nullspace(a)``: the coordinates ``a`` maps to 0."""
    return _op("nullspace", a)


def recast(a: LayoutLike, from_bits: int, to_bits: int) -> Layout:
    """``a`` over elements of ``from_bits`` re-read as elements of ``to_bits`` (CuTe's
    ``recast_layout``); ``a`` may be swizzled."""
    return _op("recast", a, from_bits, to_bits)


__all__ = [
    "compose",
    "complement",
    "coalesce",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "blocked_product",
    "raked_product",
    "left_inverse",
    "right_inverse",
    "nullspace",
    "recast",
]

