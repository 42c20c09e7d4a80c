"""laycert's reference interpreter for the NKI subset its emitters use.

It provides `nki.jit`, `nki.language` and `nki.isa` over NumPy and checks the rules of the
public NKI documentation at run time. It validates against the documented ISA, not hardware.
"""

from . import isa, language  # noqa: F401
from ._core import NkiRuleError  # noqa: F401

REFERENCE_INTERPRETER = True


def jit(fn=None, **kwargs):
    """The kernel decorator: here the kernel runs eagerly on the interpreter."""
    if fn is None:
        return lambda f: f
    return fn
