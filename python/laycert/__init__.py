"""laycert: a verification-first tensor-layout solver and prover, in Python.

A thin face over laycert's Rust crates (the same functions the ``laycert`` CLI calls)::

    >>> import laycert
    >>> r = laycert.equiv('(4,8):(8,1)', 'S[(8,4):(1,8)]', shape=(4, 8))
    >>> r.verdict, r.counterexample.coord
    ('not equivalent', [0, 1])
    >>> laycert.compose('(6,2):(8,2)', '(4,3):(3,1)')
    laycert.Layout('((2, 2), 3):((24, 2), 8)')

Layouts are read in every notation laycert knows (Axe/TIRx ``S[..]``, CuTe ``(4,2):(2,1)``,
``Sw<B,M,S> o L``, TV ``.. -> (16,8)``, Triton ``#ttg.*`` attributes with a shape,
``LinearLayout::toString()`` text) and draw themselves in Jupyter (``_repr_svg_``). Errors are
:class:`LaycertError` subclasses whose message is what the CLI prints (a caret under bad text).

Interop with pycute, the CuTe DSL, tensor-layouts and Triton Gluon is in
:mod:`laycert.interop` (each peer is imported only when used).
"""

from ._laycert import (
    AlgebraError,
    Certificate,
    CheckResult,
    CopyKernel,
    Counterexample,
    GemmKernel,
    InfeasibleError,
    SynthPlan,
    Decider,
    LaycertError,
    Layout,
    ParseError,
    PropertyReport,
    Report,
    RuleFileError,
    UnknownError,
    RuleReport,
    RulesReport,
    __version__,
    canonicalize,
    check,
    direct_sum,
    equiv,
    gen_copy,
    gen_gemm,
    group,
    prove_property,
    slice,
    synth,
    tile,
    tile_of,
)
from .algebra import (
    blocked_product,
    coalesce,
    complement,
    compose,
    flat_divide,
    left_inverse,
    logical_divide,
    logical_product,
    nullspace,
    raked_product,
    recast,
    right_inverse,
    tiled_divide,
    tiled_product,
    zipped_divide,
    zipped_product,
)
from .interop import (
    from_cute_dsl,
    from_gluon,
    from_pycute,
    from_tensor_layouts,
    from_ttg,
)
from .rules import prove, prove_text, validate

__all__ = [
    # layouts and claims
    "Layout",
    "equiv",
    "Report",
    "Counterexample",
    "Decider",
    "Certificate",
    "CheckResult",
    "check",
    "prove_property",
    "PropertyReport",
    # Axe algebra
    "canonicalize",
    "group",
    "tile",
    "tile_of",
    "slice",
    "direct_sum",
    # CuTe algebra
    "compose",
    "complement",
    "coalesce",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "blocked_product",
    "raked_product",
    "left_inverse",
    "right_inverse",
    "nullspace",
    "recast",
    # rules
    "prove",
    "prove_text",
    "validate",
    "RuleReport",
    "RulesReport",
    # generators
    "gen_copy",
    "CopyKernel",
    "synth",
    "SynthPlan",
    "gen_gemm",
    "GemmKernel",
    # interop
    "from_pycute",
    "from_cute_dsl",
    "from_tensor_layouts",
    "from_gluon",
    "from_ttg",
    # errors
    "LaycertError",
    "ParseError",
    "AlgebraError",
    "RuleFileError",
    "InfeasibleError",
    "UnknownError",
    "__version__",
]
