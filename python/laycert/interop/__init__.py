"""Interop with the layout tools kernel authors already use. Each peer is optional and
imported only when its functions are called:

- pycute (``pip install nvidia-cutlass``): :func:`from_pycute`, :func:`to_pycute`;
- the CuTe DSL (``nvidia-cutlass-dsl``): :func:`from_cute_dsl` reads a static layout's
  printed form (``str(layout)`` inside ``@cute.jit``);
- tensor-layouts (``pip install tensor-layouts``): :func:`from_tensor_layouts`,
  :func:`to_tensor_layouts`;
- Triton Gluon (``pip install triton``): :func:`from_gluon` (a layout object with a shape),
  :func:`to_gluon`;
- ``#ttg`` attribute text: :func:`from_ttg`, and ``Layout.to_ttg()``.

Every conversion is exact: it goes through the peer's printed or structural form and
laycert's parser, and the tests evaluate both sides at every coordinate.
"""

from .cute_dsl import from_cute_dsl
from .gluon import from_gluon, to_gluon
from .pycute import from_pycute, to_pycute
from .tensor_layouts import from_tensor_layouts, to_tensor_layouts
from .ttg import from_ttg

__all__ = [
    "from_pycute",
    "to_pycute",
    "from_cute_dsl",
    "from_tensor_layouts",
    "to_tensor_layouts",
    "from_gluon",
    "to_gluon",
    "from_ttg",
]
