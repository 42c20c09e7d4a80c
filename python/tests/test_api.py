"""The public API: every exported name is exercised by a test, documented and typed."""

import inspect
import pathlib

import pytest

import laycert

HERE = pathlib.Path(__file__).parent


def test_every_public_name_is_used_by_a_test():
    sources = "\n".join(p.read_text() for p in HERE.glob("test_*.py") if p.name != "test_api.py")
    unused = [n for n in laycert.__all__ if n != "__version__" and n not in sources]
    assert unused == []


def test_every_public_name_is_documented():
    undocumented = [n for n in laycert.__all__ if n != "__version__" and not inspect.getdoc(getattr(laycert, n))]
    assert undocumented == []


def test_the_package_ships_its_types():
    pkg = pathlib.Path(laycert.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = (pkg / "_laycert.pyi").read_text()
    native = [n for n in laycert.__all__ if n != "__version__" and hasattr(laycert._laycert, n)]
    missing = [n for n in native if f"class {n}" not in stub and f"def {n}(" not in stub]
    assert missing == []


def test_errors_form_one_hierarchy():
    for e in (laycert.ParseError, laycert.AlgebraError, laycert.RuleFileError):
        assert issubclass(e, laycert.LaycertError)
    assert issubclass(laycert.LaycertError, Exception)
    assert laycert.__version__ == "0.1.0"


def test_the_stub_matches_the_native_module():
    pytest.importorskip("mypy")
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "laycert._laycert"],
        capture_output=True, text=True, cwd=HERE.parent.parent,
    )
    # "disjoint base" (PEP 800) needs a newer typing_extensions than the package requires.
    errors = [l for l in out.stdout.splitlines() if l.startswith("error") and "disjoint base" not in l]
    assert errors == [], out.stdout[-4000:]
