"""laycert.equiv, its report and certificates; check; prove_property."""

import json

import pytest

import laycert


def test_acceptance_example_prints_verdict_and_counterexample():
    r = laycert.equiv("(4,8):(8,1)", "S[(8,4):(1,8)]", shape=(4, 8))
    text = str(r)
    assert text.splitlines()[0] == "not equivalent"
    assert "counterexample at logical (0,1):" in text
    assert "  left:  {{m:1}}" in text and "  right: {{m:8}}" in text
    assert r.verdict == "not equivalent" and r.equivalent is False
    c = r.counterexample
    assert isinstance(c, laycert.Counterexample)
    assert all(isinstance(d, laycert.Decider) for d in r.deciders)
    assert c.coord == [0, 1] and c.left == [{"m": 1}] and c.right == [{"m": 8}]
    assert "differs at 30 of 32" in c.explanation
    assert r.shape == [4, 8] and r.axes == ["m"]
    assert repr(r) == "<laycert.Report not equivalent>"


def test_equivalent_layouts_give_a_certificate_that_checks():
    r = laycert.equiv(
        "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [1, 1], instrShape = [16, 8]}>",
        "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)",
        shape=(16, 8),
    )
    assert r.verdict == "equivalent" and r.equivalent is True
    assert r.counterexample is None
    assert {d.name for d in r.deciders} >= {"normal-form", "exhaustive"}
    assert all(d.outcome in ("proved", "unknown") for d in r.deciders)
    assert r.rechecked and r.rechecked > 0
    cert = r.certificate
    assert cert.kind == "equivalence"
    result = cert.check()
    assert isinstance(result, laycert.CheckResult)
    assert result.valid and result.status == "valid" and bool(result)
    assert laycert.check(cert).valid


def test_a_tampered_certificate_is_invalid(tmp_path):
    r = laycert.equiv("(4,8):(8,1)", "S[(4,8):(8,1)]", shape=(4, 8))
    assert r.verdict == "equivalent"
    doc = json.loads(r.certificate.json)
    doc["claim"]["right"] = doc["claim"]["right"].replace("8,1", "8,2")
    bad = laycert.Certificate.from_json(json.dumps(doc))
    result = bad.check()
    assert not result.valid and result.status == "invalid"
    assert result.message.startswith("invalid: ")
    path = tmp_path / "c.json"
    r.certificate.save(path)
    assert laycert.Certificate.load(path).check().valid
    assert laycert.check(str(path)).valid


def test_a_refutation_certificate_is_never_valid():
    r = laycert.equiv("(4,8):(8,1)", "S[(8,4):(1,8)]", shape=(4, 8))
    result = r.certificate.check()
    assert not result.valid and result.status in ("refuted", "invalid")


def test_a_refutation_certificate_rechecks_as_refuted_in_one_process():
    laycert.equiv("(4,8):(8,1)", "S[(8,4):(1,2)]", shape=(4, 8))
    r = laycert.equiv("(4,8):(8,1)", "S[(8,4):(1,8)]", shape=(4, 8))
    assert r.certificate.check().status == "refuted"
    assert r.certificate.check().status == "refuted"


def test_equiv_is_symmetric_and_takes_layout_objects():
    a, b = laycert.Layout("S[(3,3):(3,1)]"), laycert.Layout("(3,3):(1,3)")
    # The sides read (3,3) in different orders and their own domains differ: the verdict
    # depends on the shape, so without one both orders ask for it.
    for x, y in ((a, b), (b, a)):
        with pytest.raises(laycert.LaycertError) as e:
            laycert.equiv(x, y)
        assert "ambiguous" in str(e.value) and "--shape" in str(e.value)
    ab, ba = laycert.equiv(a, b, shape=(3, 3)), laycert.equiv(b, a, shape=(3, 3))
    assert ab.verdict == ba.verdict == "not equivalent"
    assert "given" in ab.domain
    assert laycert.equiv(a, b, shape=9).verdict == "equivalent"
    c = laycert.Layout("(3,3):(3,1)")
    ac = laycert.equiv("S[(3,3):(1,3)]", "((3,3)):((3,1))")
    assert ac.verdict == "equivalent" and "both sides' natural domain" in ac.domain
    assert laycert.equiv("((3,3)):((3,1))", c).verdict == "equivalent"


def test_equiv_renames_axes():
    r = laycert.equiv("S[32:1@lane_id]", "S[32:1@laneid]", axes="lane_id=laneid")
    assert r.verdict == "equivalent"


def test_equiv_bad_input_raises_with_the_caret_message():
    with pytest.raises(laycert.ParseError) as e:
        laycert.equiv("(4,8):(8,1", "(4,8):(8,1)")
    msg = str(e.value)
    assert msg.startswith("error: ") and "^" in msg and "(in the left layout)" in msg
    with pytest.raises(laycert.LaycertError, match="give one"):
        laycert.equiv("#ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[1,1], order=[1,0]}>", "8:1")


def test_prove_property():
    assert laycert.prove_property("bijective", "(4,8):(8,1)").verdict == "proved"
    r = laycert.prove_property("injective", "(4,8):(0,1)")
    assert isinstance(r, laycert.PropertyReport)
    assert r.verdict == "refuted" and r.detail
    assert str(r).splitlines()[0] == "refuted"
    with pytest.raises(laycert.LaycertError):
        laycert.prove_property("sideways", "8:1")


def test_check_of_an_unreadable_file_raises(tmp_path):
    with pytest.raises(laycert.LaycertError, match="cannot read"):
        laycert.check(tmp_path / "missing.json")


def test_layouts_made_with_a_shape_give_the_claim_its_domain():
    a, b = laycert.Layout("S[(3,3):(3,1)]", shape=9), laycert.Layout("(3,3):(1,3)", shape=9)
    assert laycert.equiv(a, b).verdict == "equivalent"
    assert laycert.equiv(a, b, shape=(3, 3)).verdict == "not equivalent"
    with pytest.raises(laycert.LaycertError, match="different shapes"):
        laycert.equiv(a, laycert.Layout("(3,3):(1,3)", shape=(3, 3)))
    assert laycert.prove_property("bijective", laycert.Layout("S[30:1]", shape=(6, 5))).verdict == "proved"


def test_check_reads_every_certificate_kind_the_cli_reads():
    # `dist plan --cert` and `nki dispatch --cert` certificates (audit 33: Python
    # called them invalid, the CLI valid); a tampered copy is invalid.
    import json
    import os

    data = os.path.join(os.path.dirname(__file__), "data")
    for name, what in [
        ("dist_allgather.cert.json", "dist plan: "),
        ("tensore_dispatch.cert.json", "TensorE dispatch proved"),
    ]:
        path = os.path.join(data, name)
        ok = laycert.check(path)
        assert ok.valid and what in ok.claim, (name, ok.message)
        cert = json.load(open(path))
        if "plan" in cert:
            step = cert["plan"]["steps"][0]["AllGather"]
            step["groups"] = [list(reversed(g)) for g in step["groups"]]
        else:
            cert["dims"][0] += 128
        bad = laycert.check(laycert.Certificate.from_json(json.dumps(cert)))
        assert not bad.valid, (name, bad.message)
