"""tensor-layouts (``pip install tensor-layouts``): its ``Layout(shape, stride)`` to and from
:class:`laycert.Layout`."""

from __future__ import annotations

from typing import Any

from .._laycert import LaycertError, Layout
from ._cute_text import cute_parts, int_tuple_text


def from_tensor_layouts(layout: Any) -> Layout:
    """The laycert layout of a tensor-layouts ``Layout``."""
    if not _is_tensor_layouts_layout(layout):
        raise TypeError(
            f"from_tensor_layouts: expected a tensor_layouts.Layout, got {type(layout).__name__}"
        )
    return Layout(f"{int_tuple_text(layout.shape)}:{int_tuple_text(layout.stride)}")


def _is_tensor_layouts_layout(layout: Any) -> bool:
    try:
        import tensor_layouts  # type: ignore[import-untyped]
    except ImportError:  # then it is no tensor-layouts object either
        return False
    return isinstance(layout, tensor_layouts.Layout)


def to_tensor_layouts(layout: Layout) -> Any:
    """The tensor-layouts ``Layout`` of a laycert layout (converted to CuTe first; raises
    LaycertError when it has no exact CuTe ``shape:stride`` form, or is swizzled)."""
    swizzle, _, shape, stride = cute_parts(layout, "to_tensor_layouts")
    if swizzle is not None:
        raise LaycertError("error: to_tensor_layouts: swizzled layouts are not supported")
    import tensor_layouts

    return tensor_layouts.Layout(shape, stride)
