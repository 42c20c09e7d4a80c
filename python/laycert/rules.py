"""Rewrite rules proved in CI (``laycert prove``) and compiler logs validated
(``laycert validate``); see the repository README, "Rewrite rules proved in CI"."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from ._laycert import RulesReport, prove_text, validate_text

PathLike = Union[str, "os.PathLike[str]"]
Pair = Union[Mapping[str, Any], Sequence[str]]


def prove(rule_file: PathLike, max_instances: Optional[int] = None) -> RulesReport:
    """Proves every rule of ``rule_file`` for every parameter assignment within its bounds.
    ``report.ok`` is True when every rule is PROVED; ``str(report)`` is what the CLI prints.
    Raises :class:`~laycert.RuleFileError` (``file:line:col`` and a caret) on a bad file."""
    path = os.fspath(rule_file)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return prove_text(text, name=path, max_instances=max_instances)


def _line(pair: Pair) -> str:
    if isinstance(pair, Mapping):
        return json.dumps(dict(pair))
    before, after = pair
    return json.dumps({"before": before, "after": after})


def validate(
    pairs: Union[PathLike, Iterable[Pair]], max_instances: Optional[int] = None
) -> RulesReport:
    """Proves or refutes each concrete (before, after) pair a compiler logged: ``pairs`` is a
    JSON-lines file, or an iterable of dicts ``{"before", "after", "relation", "name",
    "shape"}`` or ``(before, after)`` tuples. Consecutive pairs where one's ``before`` is the
    previous ``after`` form a chain, decided over one domain."""
    if isinstance(pairs, (str, os.PathLike)):
        path = os.fspath(pairs)
        with open(path, encoding="utf-8") as f:
            return validate_text(f.read(), name=path, max_instances=max_instances)
    text = "\n".join(_line(p) for p in pairs)
    return validate_text(text, name="<pairs>", max_instances=max_instances)


__all__ = ["prove", "prove_text", "validate"]
