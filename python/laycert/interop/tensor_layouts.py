"""tensor-layouts (``pip install tensor-layouts``): its ``Layout(shape, stride)`` to and from
:class:`laycert.Layout`."""

from __future__ import annotations

from typing import Any

from .._laycert import LaycertError, Layout
from ._cute_text import cute_parts, int_tuple_text


def from_tensor_layouts(layout: Any) -> Layout:
    """The laycert layout of a tensor-layouts ``Layout``."""
    return Layout(f"{int_tuple_text(layout.shape)}:{int_tuple_text(layout.stride)}")


def to_tensor_layouts(layout: Layout) -> Any:
    """The tensor-layouts ``Layout`` of a laycert layout (converted to CuTe first)."""
    import tensor_layouts  # type: ignore[import-untyped]

    swizzle, shape, stride = cute_parts(layout)
    if swizzle is not None:
        raise LaycertError("error: to_tensor_layouts: swizzled layouts are not supported")
    return tensor_layouts.Layout(shape, stride)
