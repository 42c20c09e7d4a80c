"""laycert.Layout: every notation parses, evaluates, shows, converts and draws itself."""

import xml.etree.ElementTree as ET

import pytest

import laycert
from laycert import Layout

NOTATIONS = [
    ("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid", None, "axe"),
    ("(4,(2,4)):(2,(1,8))", None, "cute"),
    ("Sw<3,3,3> o (8,64):(64,1)", None, "swizzled"),
    ("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)", None, "tv"),
    ("#ttg.linear<{register=[[0,1],[1,0]], lane=[[0,2],[0,4],[0,8],[2,0],[4,0]], warp=[[8,0]]}>",
     (16, 16), "linear-attr"),
    ("#ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[1,1], order=[1,0]}>",
     (16, 16), "linear-attr"),
]


@pytest.mark.parametrize("text,shape,notation", NOTATIONS)
def test_every_notation_parses_and_prints_back(text, shape, notation):
    a = Layout(text, shape=shape)
    assert a.notation == notation
    b = Layout(str(a), shape=shape)
    assert laycert.equiv(a, b, shape=shape).verdict == "equivalent"
    assert repr(a).startswith("laycert.Layout(")


def test_linear_to_string_text_parses():
    a = Layout("#ttg.linear<{register=[[0,1],[1,0]], lane=[], warp=[]}>", shape=(2, 2))
    b = Layout(a.text)
    assert b.notation == "linear-attr"
    assert laycert.equiv(a, b).verdict == "equivalent"


def test_atom_names_read_the_embedded_corpus():
    with pytest.raises(laycert.LaycertError, match="no atom of that name"):
        Layout("atom:no-such-atom")


def test_eval_gives_the_readme_vectors():
    assert Layout("(4,(2,4)):(2,(1,8))").eval((3, 5)) == [{"m": 23}]
    axe = Layout("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid",
                 shape=(8, 16))
    assert axe.eval([2, 9]) == [{"laneid": 8, "reg": 1, "warpid": 6},
                                {"laneid": 8, "reg": 1, "warpid": 10}]
    lin = Layout(NOTATIONS[4][0], shape=(16, 16))
    assert lin.eval({"register": 1, "lane": 9}) == [{"dim0": 2, "dim1": 3}]
    assert Layout("8:2").eval(3) == [{"m": 6}]


def test_eval_outside_the_domain_raises_with_the_coordinate():
    with pytest.raises(laycert.LaycertError, match="outside the domain"):
        Layout("(4,8):(8,1)").eval((4, 0))
    with pytest.raises(laycert.LaycertError, match="named components"):
        Layout("(4,8):(8,1)").eval({"lane": 1})


def test_properties_shape_size_text():
    a = Layout("(4,(2,4)):(2,(1,8))")
    assert a.shape == [4, 8] and a.size == 32
    assert a.text == "(4, (2, 4)):(2, (1, 8))"
    assert Layout("S[30:1]", shape=(6, 5)).shape == [6, 5]
    ins, outs = Layout(NOTATIONS[4][0], shape=(16, 16)).linear
    assert [n for n, _ in ins] == ["register", "lane", "warp"] and outs == [("dim0", 16), ("dim1", 16)]
    assert a.linear is None


def test_show_prints_the_cli_facts():
    text = Layout("S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid").show()
    lines = text.splitlines()
    assert lines[0] == "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1@reg)] + R[2:4@warpid] + 5@warpid"
    assert "span: laneid=32, reg=2, warpid=6" in lines
    assert "range: reg=0..1, tx=160..351" in lines
    assert "injective: yes" in lines


def test_convert_is_exact_or_says_why():
    a = Layout("((4,8),(2,2)):((32,1),(16,8)) -> (16,8)")
    assert str(a.convert("axe")) == "S[(2,8,4,2):(2@reg,4@tx,1@tx,1@reg)]"
    with pytest.raises(laycert.LaycertError, match="not representable as F2 linear"):
        Layout("(4,3):(1,4)").convert("linear")
    with pytest.raises(laycert.LaycertError):
        Layout("(4,3):(1,4)").convert("klingon")
    c = Layout("(4,8):(8,1)")
    assert laycert.equiv(c, c.convert("axe"), shape=(4, 8)).verdict == "equivalent"


def test_to_ttg_prints_linear_text_that_parses_back():
    a = Layout("(8,8):(8,1)")
    t = a.to_ttg()
    assert t.startswith("#ttg.linear<{offset = ")
    assert laycert.equiv(a, Layout(t, shape=(8, 8))).verdict == "equivalent"


def _svg(text):
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


@pytest.mark.parametrize("text,shape,notation", NOTATIONS)
def test_repr_svg_is_valid_svg(text, shape, notation):
    svg = Layout(text, shape=shape)._repr_svg_()
    assert svg is not None
    root = _svg(svg)
    assert len(list(root.iter())) > 4


def test_draw_bank_map_and_title():
    svg = Layout("Sw<3,3,3> o (8,64):(64,1)").draw(banks=2, access="col", title="sw128")
    assert "sw128" in svg
    _svg(svg)
    with pytest.raises(laycert.LaycertError):
        Layout("(8,64):(64,1)").draw(banks=2, access="diagonal")


def test_repr_svg_is_none_when_there_is_no_picture():
    assert Layout("(1048576,1048576):(1,1048576)")._repr_svg_() is None


def test_bad_layout_text_raises_with_the_clis_caret_message():
    with pytest.raises(laycert.ParseError) as e:
        Layout("S[(8,0):(1,1)]")
    assert str(e.value) == (
        'error: Axe notation: expected extents >= 1 (extent 1 is 0), found "(8,0)" at bytes 2..7\n'
        "  S[(8,0):(1,1)]\n"
        "    ^^^^^\n"
        "  (in the layout)"
    )
    with pytest.raises(laycert.LaycertError, match="give one"):
        Layout("#ttg.blocked<{sizePerThread=[1,4], threadsPerWarp=[8,4], warpsPerCTA=[1,1], order=[1,0]}>")
    with pytest.raises(laycert.LaycertError, match="does not fit|shape"):
        Layout("(4,8):(8,1)", shape=(5, 7))


def test_tvm_data_layouts_read_as_their_index_maps():
    a = Layout('bijective_layout("NCHW", "NCHW16c")', shape=(2, 32, 3, 3))
    assert str(a) == "S[(2,2,16,3,3):(288,144,1,48,16)]"
    b = Layout("lambda n, c, h, w: (n, c // 16, h, w, c % 16)", shape=(2, 32, 3, 3))
    assert laycert.equiv(a, b, shape=(2, 32, 3, 3)).verdict == "equivalent"
    with pytest.raises(laycert.LaycertError, match="TVM pads it"):
        Layout('layout("NCHW16c")', shape=(2, 20, 3, 3))


def test_tvm_index_maps_read_on_their_buffer():
    a = Layout('A = T.Buffer((128, 64), "float16")\n'
               "T.index_map(lambda i, j: (i // 16, j // 16, i % 16, j % 16))")
    assert str(a) == "S[(8,16,4,16):(1024,16,256,1)]"
    b = Layout("lambda i, j: (i // 16, j // 16, i % 16, j % 16)", shape=(128, 64))
    assert laycert.equiv(a, b, shape=(128, 64)).verdict == "equivalent"
    # Where TVM pads, the transformed buffer must be pasted: a clear error otherwise.
    with pytest.raises(laycert.LaycertError, match="transformed buffer"):
        Layout("lambda i: (i // 16, i % 16)", shape=(100,))
