"""pycute (``pip install nvidia-cutlass``): ``pycute.Layout`` and swizzled
``pycute.ComposedLayout(Swizzle(B, M, S), 0, Layout)`` to and from :class:`laycert.Layout`."""

from __future__ import annotations

from typing import Any

from .._laycert import LaycertError, Layout
from ._cute_text import cute_parts, int_tuple_text


def from_pycute(layout: Any) -> Layout:
    """The laycert layout of a pycute ``Layout`` (or ``ComposedLayout`` of a ``Swizzle``,
    offset 0, and a ``Layout``)."""
    import pycute  # type: ignore[import-untyped]

    if isinstance(layout, pycute.ComposedLayout):
        sw, offset, inner = layout.layoutB, layout.offset, layout.layoutA
        if not isinstance(sw, pycute.Swizzle) or offset != 0:
            raise LaycertError(
                "error: from_pycute: only Swizzle o 0 o Layout composed layouts are supported"
            )
        return Layout(f"Sw<{sw.bits},{sw.base},{sw.shift}> o {_text(inner)}")
    return Layout(_text(layout))


def _text(layout: Any) -> str:
    return f"{int_tuple_text(layout.shape)}:{int_tuple_text(layout.stride)}"


def to_pycute(layout: Layout) -> Any:
    """The pycute ``Layout`` (or swizzled ``ComposedLayout``) of a laycert layout, converted to
    CuTe first (raises LaycertError when it has no exact CuTe form)."""
    import pycute

    swizzle, shape, stride = cute_parts(layout)
    plain = pycute.Layout(shape, stride)
    if swizzle is None:
        return plain
    return pycute.ComposedLayout(pycute.Swizzle(*swizzle), 0, plain)
