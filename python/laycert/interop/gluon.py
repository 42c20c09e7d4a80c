"""Triton Gluon (``pip install triton``): any Gluon distributed layout object, with the tensor
shape it lays out, to :class:`laycert.Layout` (Gluon converts it to linear bases on the CPU),
and laycert linear layouts back to ``DistributedLinearLayout``."""

from __future__ import annotations

from typing import Any, List, Sequence

from .._laycert import LaycertError, Layout

_IN_DIMS = [("register", "reg_bases"), ("lane", "lane_bases"), ("warp", "warp_bases"),
            ("block", "block_bases")]


def _linear_of(layout: Any, shape: Sequence[int]) -> Any:
    """Gluon's own ``DistributedLinearLayout`` for ``layout`` over ``shape``."""
    from triton._C.libtriton import gluon_ir, ir  # type: ignore[import-untyped]

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    return builder.to_linear_layout(layout._to_ir(builder), list(shape))


def _bases_text(bases: List[List[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(str(x) for x in b) + "]" for b in bases) + "]"


def from_gluon(layout: Any, shape: Sequence[int]) -> Layout:
    """The laycert layout of a Gluon layout object (``BlockedLayout``, ``NVMMADistributedLayout``,
    ``SliceLayout``, ``DotOperandLayout``, ``DistributedLinearLayout``, ...) over ``shape``."""
    ll = _linear_of(layout, shape)
    parts = [f"{name}={_bases_text(getattr(ll, attr))}" for name, attr in _IN_DIMS]
    return Layout("#ttg.linear<{" + ", ".join(parts) + "}>", shape=list(shape))


def to_gluon(layout: Layout) -> Any:
    """The Gluon ``DistributedLinearLayout`` of a laycert layout (converted to F2 linear
    first)."""
    import triton.experimental.gluon.language as ttgl  # type: ignore[import-untyped]

    lin = layout if layout.linear is not None else layout.convert("linear")
    parts = lin.linear
    if parts is None:
        raise LaycertError("error: to_gluon: the conversion gave no linear layout")
    ins, outs = parts
    by_name = dict(ins)
    unknown = sorted(set(by_name) - {n for n, _ in _IN_DIMS})
    if unknown:
        raise LaycertError(f"error: to_gluon: in-dims {unknown} are not Gluon's")
    kwargs = {attr: by_name.get(name, []) for name, attr in _IN_DIMS}
    return ttgl.DistributedLinearLayout(shape=[size for _, size in outs], **kwargs)
