"""Bad input gets a typed exception that names what was wrong and where, bounded as the CLI
bounds its messages. (That long native calls release the GIL is not tested here: a test of it
would depend on timing; `show()` and `Certificate.check()` run inside `py.detach`.)"""

import pytest

import laycert
from laycert import Layout

HUGE = "(" * 3_000_000

# The CLI's bound (layout::error::bounded_message): lines of at most 1,000 characters plus the
# counts of what was cut, at most 60 lines.
MAX_MESSAGE = 70 * 1100


@pytest.mark.parametrize(
    "call",
    [
        lambda: Layout(HUGE),
        lambda: laycert.coalesce(HUGE),
        lambda: laycert.equiv(HUGE, "8:1"),
        lambda: laycert.equiv("8:1", HUGE),
        lambda: laycert.prove_property("injective", HUGE),
        lambda: laycert.compose(HUGE, "8:1"),
        lambda: laycert.canonicalize("S[" + HUGE),
        lambda: laycert.from_ttg("#ttg.blocked<{sizePerThread=[" + "1," * 1_000_000, [64]),
        lambda: Layout("8:1", shape="4," * 1_000_000 + "x"),
    ],
    ids=["Layout", "coalesce", "equiv-a", "equiv-b", "prove_property", "compose", "canonicalize",
         "from_ttg", "shape"],
)
def test_a_huge_bad_input_gives_a_bounded_message(call):
    with pytest.raises(laycert.LaycertError) as e:
        call()
    message = str(e.value)
    assert message.startswith("error: ")
    assert len(message) < MAX_MESSAGE, len(message)
    assert "chars]" in message  # what was cut is counted where it was cut


def test_a_bounded_message_keeps_the_caret_under_the_bad_text():
    text = "(" + "4," * 100_000 + "x):(1)"
    with pytest.raises(laycert.ParseError) as e:
        Layout(text)
    lines = str(e.value).splitlines()
    assert len(str(e.value)) < 3000
    source, caret = next((a, b) for a, b in zip(lines, lines[1:]) if b.strip().startswith("^"))
    col = caret.index("^")
    assert source[col] == "x", (source[col - 5: col + 5], col)
    assert source.startswith("[199503 chars] 4,4,") and source.endswith("x):(1)")
    # A short input is echoed whole, as before.
    with pytest.raises(laycert.ParseError) as e:
        Layout("(4,x):(1,4)")
    assert "  (4,x):(1,4)\n     ^" in str(e.value)


def test_an_integer_beyond_i64_is_an_error_naming_the_argument():
    l = Layout("(4,8):(8,1)")
    with pytest.raises(laycert.LaycertError, match=r"coord: 1180591620717411303424 does not fit in a signed 64-bit"):
        l.eval(2**70)
    with pytest.raises(laycert.LaycertError, match=r"coord\[1\]: -1180591620717411303424 does not fit"):
        l.eval((1, -(2**70)))
    with pytest.raises(laycert.LaycertError, match=r"shape: 18446744073709551616 does not fit"):
        Layout("(4,8):(8,1)", shape=2**64)
    with pytest.raises(laycert.LaycertError, match=r"shape\[0\]: 18446744073709551616 does not fit"):
        Layout("(4,8):(8,1)", shape=[2**64, 1])
    with pytest.raises(laycert.LaycertError, match=r"shape\[1\]: an integer of 33220 bits") as e:
        laycert.equiv("(4,8):(8,1)", "(4,8):(8,1)", shape=(4, 10**10000))
    assert len(str(e.value)) < 300
    lin = Layout("#ttg.linear<{register=[[0,1],[1,0]], lane=[], warp=[], block=[]}>")
    with pytest.raises(laycert.LaycertError, match=r"coord\[\"register\"\]: .* does not fit"):
        lin.eval({"register": 2**64})


def test_arguments_of_the_wrong_type_say_what_was_expected():
    l = Layout("(4,8):(8,1)")
    with pytest.raises(TypeError, match=r"coord: expected an int, a sequence of ints .*got str"):
        l.eval("3,5")
    with pytest.raises(TypeError, match=r"coord\[1\]: expected an int, got float"):
        l.eval((3, 5.0))
    with pytest.raises(TypeError, match=r"shape: expected an int, a sequence of ints .*got float"):
        Layout("(4,8):(8,1)", shape=4.0)
    # What was accepted before still is: ints, sequences, anything with __index__.
    assert l.eval((3, 5)) == l.eval([3, 5]) == l.eval(range(3, 6, 2)) == [{"m": 29}]
    assert Layout("8:1").eval(True) == [{"m": 1}]


def test_check_bounds_the_claim_it_reports_of_a_certificate_with_a_huge_layout():
    # 20,001 modes on each side: the claim line would be 160,000 characters.
    n = 20_000
    big = "(" + "1," * n + "2):(" + "0," * n + "1)"
    r = laycert.equiv(big, big).certificate.check()
    assert r.status == "valid"
    assert len(str(r)) < MAX_MESSAGE, len(str(r))
    assert "chars]" in str(r)
