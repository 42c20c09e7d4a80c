"""``#ttg`` attribute text (``#ttg.blocked<{...}>``, ``#ttg.nvidia_mma<{...}>``,
``#ttg.linear<{...}>``, ...) with the tensor shape it lays out. ``Layout.to_ttg()`` prints any
layout with an exact F2 form as ``#ttg.linear<{...}>``."""

from __future__ import annotations

from typing import Optional, Sequence, Union

from .._laycert import Layout


def from_ttg(text: str, shape: Optional[Union[int, Sequence[int], str]] = None) -> Layout:
    """The laycert layout of a ``#ttg`` attribute over ``shape`` (needed by every attribute
    but ``#ttg.linear``): an int, a sequence of ints or ``"128,64"``, as ``Layout`` takes it."""
    return Layout(text, shape=shape)
