"""The CuTe DSL (``nvidia-cutlass-dsl``): its static layouts print as ``(4,(2,4)):(2,(1,8))``
and swizzled ones as ``S<3,3,3> o 0 o (8,64):(64,1)``; :func:`from_cute_dsl` reads that form.
DSL layouts exist only while a ``@cute.jit`` function is traced, so pass ``str(layout)`` or the
layout itself from inside one."""

from __future__ import annotations

import re
from typing import Any

from .._laycert import LaycertError, Layout

_COMPOSED = re.compile(r"^\s*S<(\d+),(\d+),(\d+)>\s+o\s+(\S+)\s+o\s+(.*)$", re.S)


def from_cute_dsl(layout: Any) -> Layout:
    """The laycert layout of a static CuTe DSL layout or its printed form. Dynamic extents
    (``?``) and composed layouts with a non-zero offset are refused."""
    text = str(layout).strip()
    if "?" in text:
        raise LaycertError(f"error: from_cute_dsl: {text!r} has dynamic parts; give a static layout")
    m = _COMPOSED.match(text)
    if m:
        b, mm, s, offset, inner = m.groups()
        if offset != "0":
            raise LaycertError(
                f"error: from_cute_dsl: {text!r}: only swizzles at offset 0 are supported"
            )
        return Layout(f"Sw<{b},{mm},{s}> o {inner}")
    return Layout(text)
