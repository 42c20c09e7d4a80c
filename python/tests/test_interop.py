"""Interop round trips, each checked by evaluating both sides at every coordinate. Tests of a
peer that is not installed are skipped (``-rs`` lists them)."""

import random

import pytest

import laycert
from laycert import Layout
from laycert.interop import to_gluon, to_pycute, to_tensor_layouts

from layout_helpers import offsets, random_shape_stride, size

N_RANDOM = 200


def test_pycute_round_trips_on_random_layouts():
    pycute = pytest.importorskip("pycute")
    rng = random.Random(20)
    for _ in range(N_RANDOM):
        shape, stride = random_shape_stride(rng)
        p = pycute.Layout(shape, stride)
        mine = laycert.from_pycute(p)
        assert offsets(mine) == [p(i) for i in range(pycute.size(p))], str(p)
        back = mine.to_pycute()
        assert (back.shape, back.stride) == (p.shape, p.stride)
        assert to_pycute(mine).shape == p.shape


def test_pycute_swizzled_round_trip():
    pycute = pytest.importorskip("pycute")
    p = pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1)))
    mine = laycert.from_pycute(p)
    assert str(mine) == "Sw<3,3,3> o (8, 64):(64, 1)"
    assert offsets(mine) == [p(i) for i in range(512)]
    back = mine.to_pycute()
    assert [back(i) for i in range(512)] == [p(i) for i in range(512)]
    with pytest.raises(laycert.LaycertError, match="Swizzle o offset o Layout"):
        laycert.from_pycute(pycute.ComposedLayout(pycute.Layout(8, 1), 0, pycute.Layout(8, 1)))


@pytest.mark.parametrize(
    "text",
    [
        "S<3,3,3> o 32 o (8,64):(64,1)",
        "Sw<3,3,3> o 511 o (8,64):(-64,-1)",
        "Sw<2,4,-3> o 7 o ((4,2),16):((16,1),2)",
    ],
)
def test_pycute_converts_a_swizzle_with_an_offset_exactly(text):
    # The offset is pycute's ComposedLayout(Swizzle, offset, Layout): no longer a SyntaxError
    # from reading `32 o (8, 64)` back as a tuple.
    pycute = pytest.importorskip("pycute")
    mine = Layout(text)
    p = mine.to_pycute()
    assert isinstance(p, pycute.ComposedLayout) and p.offset != 0
    assert [p(i) for i in range(mine.size)] == offsets(mine)
    again = laycert.from_pycute(p)
    assert str(again) == str(mine)
    assert laycert.equiv(again, mine).verdict == "equivalent"


def test_pycute_swizzled_round_trips_with_random_offsets():
    pycute = pytest.importorskip("pycute")
    rng = random.Random(22)
    for _ in range(50):
        shape, stride = random_shape_stride(rng)
        shift = rng.choice([-3, -2, 2, 3, 4])
        sw = pycute.Swizzle(rng.randint(0, abs(shift)), rng.randint(0, 3), shift)
        p = pycute.ComposedLayout(sw, rng.randint(0, 100), pycute.Layout(shape, stride))
        mine = laycert.from_pycute(p)
        n = pycute.size(p.layoutA)
        assert offsets(mine) == [p(i) for i in range(n)], str(p)
        back = mine.to_pycute()
        assert [back(i) for i in range(n)] == [p(i) for i in range(n)], str(p)


def test_a_layout_whose_cute_form_is_thread_value_is_refused_with_why():
    # A linear layout's CuTe form is a TV layout `.. -> (2, 2)`: no shape:stride function, so
    # a LaycertError saying so (it was a bare SyntaxError). Raised before the peer is imported.
    lin = Layout("#ttg.linear<{register=[[0,1],[1,0]], lane=[], warp=[], block=[]}>")
    for convert in (lin.to_pycute, lin.to_tensor_layouts):
        with pytest.raises(laycert.LaycertError, match="thread-value layout") as e:
            convert()
        assert "to_pycute" in str(e.value) or "to_tensor_layouts" in str(e.value)
    with pytest.raises(laycert.LaycertError, match="thread-value"):
        Layout("(32,4):(4,1) -> (16,8)").to_pycute()


def test_interop_arguments_of_the_wrong_type_say_what_was_expected():
    with pytest.raises(TypeError, match=r"to_pycute: expected a laycert\.Layout, got str"):
        to_pycute("(4,8):(8,1)")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"to_tensor_layouts: expected a laycert\.Layout"):
        to_tensor_layouts(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"from_tensor_layouts: expected a tensor_layouts\.Layout, got NoneType"):
        laycert.from_tensor_layouts(None)
    pytest.importorskip("pycute")
    for bad, name in (("(4,8):(8,1)", "str"), (None, "NoneType")):
        with pytest.raises(TypeError, match=rf"from_pycute: expected a pycute\.Layout .*got {name}"):
            laycert.from_pycute(bad)


def test_to_pycute_converts_other_notations_first():
    pycute = pytest.importorskip("pycute")
    axe = Layout("S[(4,8):(1,4)]")
    p = axe.to_pycute()
    assert [p(i) for i in range(32)] == offsets(Layout(str(axe.convert("cute"))))
    with pytest.raises(laycert.LaycertError):
        Layout("S[(2,2):(1,1@laneid)]").to_pycute()


def test_tensor_layouts_round_trips_on_random_layouts():
    tl = pytest.importorskip("tensor_layouts")
    rng = random.Random(21)
    for _ in range(N_RANDOM):
        shape, stride = random_shape_stride(rng)
        t = tl.Layout(shape, stride)
        mine = laycert.from_tensor_layouts(t)
        assert offsets(mine) == [t(i) for i in range(size(shape))], str(t)
        back = mine.to_tensor_layouts()
        assert (back.shape, back.stride) == (t.shape, t.stride)
    assert to_tensor_layouts(Layout("8:2")).stride == 2
    with pytest.raises(laycert.LaycertError, match="swizzled"):
        Layout("Sw<3,3,3> o (8,64):(64,1)").to_tensor_layouts()


def _dsl_prints(cute, layouts):
    """The CuTe DSL's printed form of each (shape, stride), made while a function is traced."""
    out = []

    @cute.jit
    def traced():
        for shape, stride in layouts:
            out.append(str(cute.make_layout(shape, stride=stride)))
        sw = cute.make_composed_layout(
            cute.make_swizzle(3, 3, 3), 0, cute.make_layout((8, 64), stride=(64, 1))
        )
        out.append(str(sw))

    traced()
    return out


def test_cute_dsl_printed_layouts_read_back_on_random_layouts():
    pytest.importorskip("cutlass")
    pycute = pytest.importorskip("pycute")
    import cutlass.cute as cute

    rng = random.Random(22)
    layouts = [random_shape_stride(rng) for _ in range(N_RANDOM)]
    printed = _dsl_prints(cute, layouts)
    for (shape, stride), text in zip(layouts, printed):
        p = pycute.Layout(shape, stride)
        assert offsets(laycert.from_cute_dsl(text)) == [p(i) for i in range(pycute.size(p))], text
    sw = laycert.from_cute_dsl(printed[-1])
    assert printed[-1] == "S<3,3,3> o 0 o (8,64):(64,1)"
    assert str(sw) == "Sw<3,3,3> o (8, 64):(64, 1)"


def test_cute_dsl_refuses_dynamic_layouts_and_reads_offsets():
    with pytest.raises(laycert.LaycertError, match="known only at run time"):
        laycert.from_cute_dsl("(?,8):(8,1)")
    assert str(laycert.from_cute_dsl("S<3,3,3> o 4 o (8,64):(64,1)")) == "Sw<3,3,3> o 4 o (8, 64):(64, 1)"
    assert str(laycert.from_cute_dsl('!cute.layout<"(4,8):(8,1)">')) == "(4, 8):(8, 1)"


def _xor_eval(bases_by_dim, coord_by_dim, rank):
    """A linear layout by its definition: the XOR of the bases of the set input bits."""
    out = [0] * rank
    for dim, bases in bases_by_dim.items():
        v = coord_by_dim.get(dim, 0)
        for bit, basis in enumerate(bases):
            if v >> bit & 1:
                out = [o ^ b for o, b in zip(out, basis)]
    return out


def _gluon_layouts(ttgl):
    return [
        (ttgl.BlockedLayout([1, 4], [8, 4], [1, 1], [1, 0]), [16, 16]),
        (ttgl.BlockedLayout([2, 1], [4, 8], [2, 2], [0, 1]), [32, 64]),
        (ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]), [128, 64]),
        (ttgl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[2, 2], instr_shape=[16, 8]), [64, 32]),
        (ttgl.SliceLayout(0, ttgl.BlockedLayout([1, 4], [8, 4], [1, 1], [1, 0])), [32]),
    ]


def test_gluon_layouts_convert_and_round_trip():
    pytest.importorskip("triton")
    import triton.experimental.gluon.language as ttgl

    for g, shape in _gluon_layouts(ttgl):
        mine = laycert.from_gluon(g, shape)
        ll = to_gluon(mine)
        bases = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                 "block": ll.block_bases}
        ins, outs = mine.linear
        assert [s for _, s in outs] == list(shape)
        # Every hardware coordinate, by laycert's semantics and by the bases' definition.
        sizes = {name: 1 << len(b) for name, b in ins}
        names = [name for name, _ in ins]
        total = 1
        for n in names:
            total *= sizes[n]
        for i in range(total):
            coord, rest = {}, i
            for n in names:
                coord[n] = rest % sizes[n]
                rest //= sizes[n]
            (got,) = mine.eval(coord)
            assert [got[f"dim{k}"] for k in range(len(shape))] == _xor_eval(bases, coord, len(shape))
        again = laycert.from_gluon(ll, shape)
        assert laycert.equiv(mine, again).verdict == "equivalent"


def test_ttg_text_matches_gluon():
    pytest.importorskip("triton")
    import triton.experimental.gluon.language as ttgl

    text = "#ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[1,1], order=[1,0]}>"
    mine = laycert.from_ttg(text, (16, 16))
    theirs = laycert.from_gluon(ttgl.BlockedLayout([1, 4], [8, 4], [1, 1], [1, 0]), [16, 16])
    assert laycert.equiv(mine, theirs).verdict == "equivalent"
    assert laycert.equiv(mine, laycert.from_ttg(mine.to_ttg(), (16, 16))).verdict == "equivalent"


def test_ttg_round_trips_without_triton():
    a = laycert.from_ttg(
        "#ttg.blocked<{sizePerThread=[2,2], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[0,1]}>",
        [32, 32],
    )
    b = laycert.from_ttg(a.to_ttg(), [32, 32])
    assert laycert.equiv(a, b).verdict == "equivalent"
    with pytest.raises(laycert.LaycertError, match="give one"):
        laycert.from_ttg("#ttg.blocked<{sizePerThread=[2,2], threadsPerWarp=[4,8], warpsPerCTA=[2,1], order=[0,1]}>")


def test_from_ttg_takes_the_shapes_layout_takes():
    text = "#ttg.blocked<{sizePerThread=[2], threadsPerWarp=[32], warpsPerCTA=[1], order=[0]}>"
    want = Layout(text, shape=64)
    for shape in (64, [64], (64,), "64"):
        assert laycert.equiv(laycert.from_ttg(text, shape), want).verdict == "equivalent"
