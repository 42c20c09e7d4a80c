"""prove / prove_text / validate and the `python -m laycert` entry the pre-commit hook runs."""

import json
import subprocess
import sys

import pytest

import laycert

RULES = """// two rules: one sound, one not
rule coalesce_2d forall a b : int where 1 <= a <= 4, 1 <= b <= 4
   (a,b):(1,a) == (a*b):1
rule wrong forall a b : int where 1 <= a <= 4, 2 <= b <= 4
   (a,b):(1,a) == (a*b):2
"""


def test_prove_reports_each_rule(tmp_path):
    path = tmp_path / "r.rules"
    path.write_text(RULES)
    r = laycert.prove(path)
    assert isinstance(r, laycert.RulesReport)
    assert all(isinstance(x, laycert.RuleReport) for x in r.rules)
    assert (r.proved, r.refuted, r.unknown) == (1, 1, 0) and len(r) == 2
    assert not r.ok and not r
    ok, wrong = r.rules
    assert ok.name == "coalesce_2d" and ok.verdict == "PROVED" and ok.method == "exhaustive"
    assert ok.instances == 16
    assert str(ok).startswith("PROVED coalesce_2d")
    assert wrong.verdict == "REFUTED" and set(wrong.counterexample) >= {"params", "coordinate"}
    assert str(r).splitlines()[-1].startswith("2 rules: 1 proved, 1 refuted, 0 unknown")
    assert ok.certificate.kind == "rule" and ok.certificate.check().valid
    assert wrong.certificate.check().status == "refuted"


def test_prove_text_and_max_instances():
    r = laycert.prove_text(RULES.split("rule wrong")[0], name="one.rules", max_instances=1000)
    assert r.ok and r.proved == 1
    with pytest.raises(laycert.LaycertError, match="above the maximum"):
        laycert.prove_text(RULES, max_instances=1 << 40)


def test_a_bad_rule_file_raises_with_file_line_and_caret():
    with pytest.raises(laycert.RuleFileError) as e:
        laycert.prove_text("rule x forall a : int where 1 <= a <= 4\n  (a):(1) == ", name="bad.rules")
    msg = str(e.value)
    assert msg.startswith("error: bad.rules:2:") and "^" in msg
    with pytest.raises(OSError):
        laycert.prove("/no/such/file.rules")


def test_validate_pairs_from_tuples_dicts_and_files(tmp_path):
    r = laycert.validate([("(4,8):(1,4)", "32:1"), {"before": "(2,2):(1,2)", "after": "(2,2):(2,1)", "name": "swap"}])
    assert [x.verdict for x in r.rules] == ["PROVED", "REFUTED"]
    assert r.rules[1].name == "swap"
    log = tmp_path / "pairs.jsonl"
    log.write_text(
        json.dumps({"before": "(4,8):(1,4)", "after": "32:1"}) + "\n"
        + json.dumps({"before": "32:1", "after": "(4,8):(8,1)", "shape": [4, 8]}) + "\n"
    )
    r = laycert.validate(log)
    # One chain, one domain (4,8): the second step fails over it.
    assert [x.verdict for x in r.rules] == ["PROVED", "REFUTED"]


def test_validate_bad_lines_raise_naming_the_line(tmp_path):
    log = tmp_path / "bad.jsonl"
    log.write_text('{"before": "8:1"}\n')
    with pytest.raises(laycert.RuleFileError, match=r"bad.jsonl:1: missing string field \"after\""):
        laycert.validate(log)


def _main(args, cwd):
    return subprocess.run([sys.executable, "-m", "laycert", *args], capture_output=True, text=True, cwd=cwd)


def test_module_entry_exit_codes(tmp_path):
    good = tmp_path / "good.rules"
    good.write_text(RULES.split("rule wrong")[0])
    bad = tmp_path / "bad.rules"
    bad.write_text(RULES)
    assert _main(["prove", str(good)], tmp_path).returncode == 0
    out = _main(["prove", str(good), str(bad)], tmp_path)
    assert out.returncode == 1 and "REFUTED wrong" in out.stdout
    broken = tmp_path / "broken.rules"
    broken.write_text("rule")
    out = _main(["prove", str(broken)], tmp_path)
    assert out.returncode == 2 and "broken.rules" in out.stderr
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"before": "(4,8):(1,4)", "after": "32:1"}) + "\n")
    assert _main(["validate", str(pairs)], tmp_path).returncode == 0
