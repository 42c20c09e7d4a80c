"""Reading laycert's CuTe text (``(4, (2, 4)):(2, (1, 8))``, ``Sw<3,3,3> o 8:1``) back into
Python tuples, for the peers that take shapes and strides as tuples."""

from __future__ import annotations

import ast
from typing import Optional, Tuple, Union

from .._laycert import Layout

IntTuple = Union[int, Tuple["IntTuple", ...]]


def int_tuple_text(t: IntTuple) -> str:
    """pycute's spelling of an IntTuple: ``(4, (2, 4))``; a 1-tuple keeps its comma."""
    if isinstance(t, int):
        return str(t)
    inner = ", ".join(int_tuple_text(x) for x in t)
    return f"({inner},)" if len(t) == 1 else f"({inner})"


def _tuple(text: str) -> IntTuple:
    v: IntTuple = ast.literal_eval(text.strip())
    return v


def cute_parts(layout: Layout) -> Tuple[Optional[Tuple[int, int, int]], IntTuple, IntTuple]:
    """``(swizzle, shape, stride)`` of a layout converted to CuTe (``swizzle`` is ``(B, M, S)``
    or None). Raises LaycertError when the layout has no exact CuTe form."""
    cute = layout if layout.notation in ("cute", "swizzled") else layout.convert("cute")
    text = str(cute)
    swizzle = None
    if text.startswith("Sw<"):
        head, _, text = text.partition(" o ")
        b, m, s = (int(x) for x in head[3:-1].split(","))
        swizzle = (b, m, s)
    shape, _, stride = text.partition(":")
    return swizzle, _tuple(shape), _tuple(stride)
