"""Types of laycert's native module (Rust, PyO3). The public names are re-exported by
``laycert``; see its docstring."""

import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union, final

__version__: str
__all__ = [
    "AlgebraError",
    "Certificate",
    "CheckResult",
    "CopyKernel",
    "Counterexample",
    "GemmKernel",
    "InfeasibleError",
    "SynthPlan",
    "Decider",
    "LaycertError",
    "Layout",
    "ParseError",
    "PropertyReport",
    "Report",
    "RuleFileError",
    "RuleReport",
    "RulesReport",
    "UnknownError",
    "__version__",
    "canonicalize",
    "check",
    "cute_op",
    "direct_sum",
    "equiv",
    "gen_copy",
    "gen_gemm",
    "group",
    "prove_property",
    "prove_text",
    "slice",
    "synth",
    "tile",
    "tile_of",
    "validate_text",
]

_ShapeLike = Union[int, Sequence[int], str]
_IntTuple = Union[int, Tuple["_IntTuple", ...]]
_Point = Dict[str, int]

class LaycertError(Exception):
    """Base class of laycert's errors; ``str(e)`` is the message the CLI prints."""

class ParseError(LaycertError):
    """Text that is not valid in its notation; the message has a caret under the bad span."""

class AlgebraError(LaycertError):
    """An algebraic "no": not a tile, not a slice of this form, not a direct sum, not groupable."""

class RuleFileError(LaycertError):
    """A rule file or a validate log that does not parse (``file:line:col`` and a caret)."""

class InfeasibleError(LaycertError):
    """A proof that no plan exists (``synth``'s ``infeasible``, the CLI's exit 1)."""

class UnknownError(LaycertError):
    """A search that found no plan without proving none exists (``synth``'s ``unknown``, exit 3)."""

@final
class Layout:
    """A layout in any notation: Axe ``S[..]``, CuTe ``(4,2):(2,1)``, ``Sw<B,M,S> o L``, TV
    ``.. -> (16,8)``, Triton ``#ttg.*`` attributes (with ``shape``), ``LinearLayout::toString()``
    text, or ``atom:NAME`` (an atom of the embedded corpus). ``str(L)`` is one line laycert
    parses back."""

    def __new__(cls, text: str, shape: Optional[_ShapeLike] = None) -> Layout: ...
    @property
    def text(self) -> str:
        """The layout as laycert prints it (linear layouts: multi-line ``toString()`` text)."""
    @property
    def notation(self) -> str:
        """``axe``, ``cute``, ``swizzled``, ``tv`` or ``linear-attr`` (as the CLI's ``--json`` says)."""
    @property
    def shape(self) -> List[int]:
        """The logical domain's shape."""
    @property
    def size(self) -> int:
        """The number of logical coordinates."""
    @property
    def linear(self) -> Optional[Tuple[List[Tuple[str, List[List[int]]]], List[Tuple[str, int]]]]:
        """For a linear layout: ``(in-dims as (name, bases), out-dims as (name, size))``."""
    def eval(self, coord: Union[int, Sequence[int], Mapping[str, int]]) -> List[_Point]:
        """The points one coordinate maps to, as ``{axis: value}`` dicts:
        ``Layout('(4,(2,4)):(2,(1,8))').eval((3, 5)) == [{'m': 23}]``."""
    def show(self) -> str:
        """What ``laycert show`` prints: notation, domain, span, range, injective, surjective."""
    def convert(self, to: str) -> Layout:
        """The exact equivalent in ``axe``, ``cute`` or ``linear``; raises LaycertError when
        there is none."""
    def to_ttg(self) -> str:
        """The layout as ``#ttg.linear<{...}>`` text (converted to F2 linear first)."""
    def draw(self, banks: Optional[int] = None, access: str = "row", title: Optional[str] = None) -> str:
        """An SVG picture (``laycert draw``); with ``banks`` (element bytes) a bank map."""
    def _repr_svg_(self) -> Optional[str]: ...
    def _cute_parts(self, what: str) -> Tuple[Optional[Tuple[int, int, int]], int, _IntTuple, _IntTuple]:
        """``(swizzle, offset, shape, stride)`` of the CuTe form (for ``laycert.interop``)."""
    def to_pycute(self) -> object:
        """The pycute layout (``pip install nvidia-cutlass``)."""
    def to_tensor_layouts(self) -> object:
        """The tensor-layouts layout (``pip install tensor-layouts``)."""
    def to_gluon(self) -> object:
        """The Gluon ``DistributedLinearLayout`` (``pip install triton``)."""

_LayoutLike = Union[Layout, str]

@final
class Counterexample:
    """A coordinate where two layouts differ, confirmed by the trusted semantics."""

    @property
    def coord(self) -> List[int]: ...
    @property
    def index(self) -> int: ...
    @property
    def left(self) -> List[_Point]: ...
    @property
    def right(self) -> List[_Point]: ...
    @property
    def explanation(self) -> Optional[str]: ...

@final
class Decider:
    """One decider's run."""

    @property
    def name(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def micros(self) -> int: ...
    @property
    def detail(self) -> Optional[str]: ...

@final
class CheckResult:
    """What ``check`` found; true only for a proof that re-verifies."""

    @property
    def status(self) -> str:
        """``valid``, ``invalid``, ``unknown`` or ``refuted``."""
    @property
    def message(self) -> str: ...
    @property
    def claim(self) -> Optional[str]: ...
    @property
    def valid(self) -> bool: ...
    def __bool__(self) -> bool: ...

@final
class Certificate:
    """A certificate that ``check()`` re-verifies with certify's checker."""

    @staticmethod
    def from_json(text: str) -> Certificate: ...
    @staticmethod
    def load(path: Union[str, os.PathLike[str]]) -> Certificate: ...
    @property
    def json(self) -> str: ...
    @property
    def kind(self) -> str:
        """``equivalence``, ``rule``, ``movement`` or ``explanation``."""
    def check(self) -> CheckResult: ...
    def save(self, path: Union[str, os.PathLike[str]]) -> None: ...

@final
class Report:
    """The answer of :func:`equiv`; ``str(report)`` is what ``laycert equiv`` prints."""

    @property
    def verdict(self) -> str:
        """``equivalent``, ``not equivalent`` or ``unknown``."""
    @property
    def equivalent(self) -> Optional[bool]: ...
    @property
    def shape(self) -> List[int]: ...
    @property
    def domain(self) -> str: ...
    @property
    def axes(self) -> List[str]: ...
    @property
    def deciders(self) -> List[Decider]: ...
    @property
    def counterexample(self) -> Optional[Counterexample]: ...
    @property
    def rechecked(self) -> Optional[int]: ...
    @property
    def unconfirmed(self) -> Optional[str]: ...
    @property
    def certificate(self) -> Certificate: ...
    @property
    def smt_query(self) -> Optional[str]: ...

@final
class PropertyReport:
    """The answer of :func:`prove_property`."""

    @property
    def verdict(self) -> str: ...
    @property
    def deciders(self) -> List[Tuple[str, str]]: ...
    @property
    def detail(self) -> Optional[str]: ...

@final
class RuleReport:
    """One rule's verdict; ``str(r)`` is the CLI's line for it."""

    @property
    def name(self) -> str: ...
    @property
    def verdict(self) -> str:
        """``PROVED``, ``REFUTED`` or ``UNKNOWN``."""
    @property
    def method(self) -> Optional[str]: ...
    @property
    def instances(self) -> Optional[int]: ...
    @property
    def counterexample(self) -> Optional[Dict[str, object]]: ...
    @property
    def reason(self) -> Optional[str]: ...
    @property
    def seconds(self) -> float: ...
    @property
    def certificate(self) -> Certificate: ...

@final
class RulesReport:
    """The reports of a rule file or a log; true when every rule is PROVED."""

    @property
    def rules(self) -> List[RuleReport]: ...
    @property
    def proved(self) -> int: ...
    @property
    def refuted(self) -> int: ...
    @property
    def unknown(self) -> int: ...
    @property
    def seconds(self) -> float: ...
    @property
    def ok(self) -> bool: ...
    def __bool__(self) -> bool: ...
    def __len__(self) -> int: ...

@final
class CopyKernel:
    """A certified copy kernel (``laycert gen copy``)."""

    @property
    def source(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def grid(self) -> List[int]: ...
    @property
    def threads(self) -> int: ...
    @property
    def shared(self) -> str: ...
    @property
    def digest(self) -> str: ...
    @property
    def certificate(self) -> Optional[Certificate]: ...

def equiv(a: _LayoutLike, b: _LayoutLike, shape: Optional[_ShapeLike] = None, axes: Optional[str] = None) -> Report:
    """Decides whether ``a`` and ``b`` relate the same (logical coordinate, physical point)
    pairs over one claim domain: ``shape``, else the shape the ``Layout`` arguments were made
    with, else chosen from both sides as the CLI does."""

def check(cert: Union[Certificate, str, os.PathLike[str]], kernel: Optional[str] = None) -> CheckResult:
    """Re-verifies a certificate (an object or a file) from scratch; with ``kernel`` (a GEMM
    kernel's CUDA source, e.g. ``gen_gemm(..).source``), also that it is byte for byte the
    kernel laycert emits for that certificate."""

def prove_property(prop: str, layout: _LayoutLike, shape: Optional[_ShapeLike] = None) -> PropertyReport:
    """Decides ``injective``, ``surjective`` or ``bijective``."""

def cute_op(op: str, args: List[str]) -> str:
    """One CuTe operation on text operands; the result in pycute's spelling."""

def canonicalize(layout: _LayoutLike, target: Optional[str] = None) -> Layout:
    """The canonical form of an Axe layout (``target="cuda"`` merges lane/warp into ``tx``)."""

def group(layout: _LayoutLike, shapes: Sequence[Sequence[int]]) -> Layout:
    """An Axe layout grouped by a shape (several: their common refinement)."""

def tile(inner: _LayoutLike, outer: _LayoutLike, inner_shape: Sequence[int], outer_shape: Sequence[int]) -> Layout:
    """The canonical tiled layout of ``inner`` by ``outer``."""

def tile_of(
    layout: _LayoutLike,
    shape: Sequence[int],
    inner: Optional[_LayoutLike] = None,
    inner_shape: Optional[Sequence[int]] = None,
    outer: Optional[_LayoutLike] = None,
    outer_shape: Optional[Sequence[int]] = None,
) -> Layout:
    """The other factor of a tile; raises AlgebraError when ``layout`` is not such a tile."""

def slice(layout: _LayoutLike, shape: Sequence[int], region: Sequence[Tuple[int, int]]) -> Layout:
    """The layout of a region (half-open ranges) of an Axe or swizzled layout."""

def direct_sum(a: _LayoutLike, b: _LayoutLike, a_shape: Sequence[int], b_shape: Sequence[int]) -> Layout:
    """The canonical direct sum."""

def prove_text(text: str, name: str = "<rules>", max_instances: Optional[int] = None) -> RulesReport:
    """Proves every rule of a rule file's text."""

def validate_text(text: str, name: str = "<pairs>", max_instances: Optional[int] = None) -> RulesReport:
    """Validates a JSON-lines log of (before, after) pairs."""

@final
class SynthPlan:
    """A synthesized, certified plan of a tile program (``laycert synth``)."""

    @property
    def program(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def instructions(self) -> List[str]: ...
    @property
    def layouts(self) -> Dict[str, str]: ...
    @property
    def cost(self) -> float: ...
    @property
    def digest(self) -> str: ...
    @property
    def certificate(self) -> Certificate: ...

@final
class GemmKernel:
    """A GEMM kernel from a synthesized plan (``laycert gen gemm``)."""

    @property
    def source(self) -> str: ...
    @property
    def entry(self) -> str: ...
    @property
    def target(self) -> str:
        """``sm80`` or ``sm90``: the path that serves the problem (an sm90 problem whose K is
        not a multiple of 8 runs the sm80 path; ``note`` says why)."""
    @property
    def note(self) -> Optional[str]: ...
    @property
    def config(self) -> Dict[str, int]: ...
    @property
    def threads(self) -> int: ...
    @property
    def smem_bytes(self) -> int: ...
    @property
    def plan(self) -> List[str]: ...
    @property
    def validation(self) -> Dict[str, int]: ...
    @property
    def digest(self) -> str: ...
    @property
    def certificate(self) -> Certificate: ...

def synth(program: str, target: str = "sm80") -> SynthPlan:
    """Synthesizes and certifies the layouts of a tile program for ``target``; raises
    ``InfeasibleError`` (a proof that no plan exists) or ``UnknownError`` (none found)."""

def gen_gemm(m: int, n: int, k: int, dtype: str = "bf16", target: str = "sm90") -> GemmKernel:
    """Emits a GEMM ``C = A B^T`` from a synthesized, certified plan, index text validated."""

def gen_copy(
    src: _LayoutLike,
    dst: _LayoutLike,
    shape: _ShapeLike,
    dtype: str,
    swizzle: bool = True,
    tile_bytes: Optional[int] = None,
    threads: Optional[int] = None,
    vector: Optional[int] = None,
) -> CopyKernel:
    """Plans, certifies and emits a copy kernel from ``src`` to ``dst`` over ``shape``."""
