"""The CuTe DSL (``nvidia-cutlass-dsl``): its static layouts print as ``(4,(2,4)):(2,(1,8))``,
swizzled ones as ``S<3,3,3> o 0 o (8,64):(64,1)`` and their MLIR types as
``!cute.layout<"(4,8):(8,1)">`` and ``!cute.composed_layout<"S<3,4,3> o 0 o (8,64):(64,1)">``;
:func:`from_cute_dsl` reads each of these with laycert's one parser (the Rust one), which
gives every form the DSL's meaning. DSL layouts exist only while a ``@cute.jit`` function is
traced, so pass ``str(layout)`` or the layout itself from inside one."""

from __future__ import annotations

from typing import Any

from .._laycert import Layout


def from_cute_dsl(layout: Any) -> Layout:
    """The laycert layout of a static CuTe DSL layout or its printed form: ``S<B,M,S> o off o L``
    is the swizzle of ``off + L(c)``, as in the DSL. Dynamic values (the DSL prints ``?``) are
    refused with the position of the first."""
    return Layout(str(layout).strip())
