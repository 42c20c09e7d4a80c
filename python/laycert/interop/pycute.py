"""pycute (``pip install nvidia-cutlass``): ``pycute.Layout`` and swizzled
``pycute.ComposedLayout(Swizzle(B, M, S), offset, Layout)`` to and from :class:`laycert.Layout`."""

from __future__ import annotations

from typing import Any

from .._laycert import LaycertError, Layout
from ._cute_text import cute_parts, int_tuple_text


def from_pycute(layout: Any) -> Layout:
    """The laycert layout of a pycute ``Layout`` (or ``ComposedLayout`` of a ``Swizzle``, an
    offset, and a ``Layout``)."""
    import pycute  # type: ignore[import-untyped]

    if isinstance(layout, pycute.ComposedLayout):
        sw, offset, inner = layout.layoutB, layout.offset, layout.layoutA
        if (
            not isinstance(sw, pycute.Swizzle)
            or not isinstance(inner, pycute.Layout)
            or not isinstance(offset, int)
        ):
            raise LaycertError(
                "error: from_pycute: only Swizzle o offset o Layout composed layouts are "
                f"supported, got {type(sw).__name__} o {type(offset).__name__} o "
                f"{type(inner).__name__}"
            )
        offset_text = f"{offset} o " if offset != 0 else ""
        return Layout(f"Sw<{sw.bits},{sw.base},{sw.shift}> o {offset_text}{_text(inner)}")
    if not isinstance(layout, pycute.Layout):
        raise TypeError(
            "from_pycute: expected a pycute.Layout or pycute.ComposedLayout, got "
            f"{type(layout).__name__}"
        )
    return Layout(_text(layout))


def _text(layout: Any) -> str:
    return f"{int_tuple_text(layout.shape)}:{int_tuple_text(layout.stride)}"


def to_pycute(layout: Layout) -> Any:
    """The pycute ``Layout`` (or swizzled ``ComposedLayout``, with its offset) of a laycert
    layout, converted to CuTe first (raises LaycertError when it has no exact CuTe
    ``shape:stride`` form, as for a thread-value layout)."""
    swizzle, offset, shape, stride = cute_parts(layout, "to_pycute")
    import pycute

    plain = pycute.Layout(shape, stride)
    if swizzle is None:
        return plain
    return pycute.ComposedLayout(pycute.Swizzle(*swizzle), offset, plain)
