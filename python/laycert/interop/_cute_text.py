"""laycert layouts as CuTe's nested tuples (``(4, (2, 4))``, ``(2, (1, 8))``) for the peers that
take shapes and strides as tuples, and back as text."""

from __future__ import annotations

from typing import Optional, Tuple, Union

from .._laycert import Layout

IntTuple = Union[int, Tuple["IntTuple", ...]]


def int_tuple_text(t: IntTuple) -> str:
    """pycute's spelling of an IntTuple: ``(4, (2, 4))``; a 1-tuple keeps its comma."""
    if isinstance(t, int):
        return str(t)
    inner = ", ".join(int_tuple_text(x) for x in t)
    return f"({inner},)" if len(t) == 1 else f"({inner})"


def cute_parts(
    layout: Layout, what: str
) -> Tuple[Optional[Tuple[int, int, int]], int, IntTuple, IntTuple]:
    """``(swizzle, offset, shape, stride)`` of a layout converted to CuTe (``swizzle`` is
    ``(B, M, S)`` or None, ``offset`` 0 unless swizzled), read from the native value, not from
    printed text. Raises TypeError when ``layout`` is no :class:`laycert.Layout`, LaycertError
    (naming ``what``) when it has no CuTe ``shape:stride`` form."""
    if not isinstance(layout, Layout):
        raise TypeError(
            f"{what}: expected a laycert.Layout, got {type(layout).__name__}"
            + (" (make one with laycert.Layout(text))" if isinstance(layout, str) else "")
        )
    return layout._cute_parts(what)
