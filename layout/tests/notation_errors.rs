//! Bad input is a clear error carrying the byte span and what was expected, never a panic.

use layout::{Layout, LayoutError, ParseError};

fn parse_error(text: &str) -> ParseError {
    match Layout::parse(text, Some(&[16, 16])) {
        Err(LayoutError::Parse(p)) => p,
        other => panic!("{text:?}: expected a parse error, got {other:?}"),
    }
}

fn spanned(text: &str) -> (String, String) {
    let e = parse_error(text);
    (text[e.span.clone()].to_string(), e.expected)
}

#[test]
fn axe_errors_name_the_span_and_the_expectation() {
    let (at, want) = spanned("S[(8,0):(1,1)]");
    assert_eq!(at, "(8,0)");
    assert!(want.contains("extents >= 1"), "{want}");
    let (at, want) = spanned("S[(8,2):(1)]");
    assert!(want.contains("2 strides"), "{want}");
    assert!(at.starts_with("(8,2)"), "{at}");
    let (at, want) = spanned("S[(8,2):(1,1)");
    assert_eq!(at, "");
    assert!(want.contains("']'"), "{want}");
    let (at, want) = spanned("S[(8,x):(1,1)]");
    assert_eq!(at, "x");
    assert!(want.contains("an integer"), "{want}");
    let (at, want) = spanned("S[99999999999999999999:1]");
    assert_eq!(at, "99999999999999999999");
    assert!(want.contains("64 bits"), "{want}");
    let (at, want) = spanned("S[4:1@]");
    assert_eq!(at, "]");
    assert!(want.contains("axis name"), "{want}");
    let (_, want) = spanned("S[4:1] + 2@warpid + 3@warpid");
    assert!(want.contains("warpid already"), "{want}");
    // Reachable coordinates must fit in i64.
    let (_, want) = spanned("S[(4611686018427387904,4):(4,1)]");
    assert!(want.contains("overflow"), "{want}");
}

#[test]
fn cute_errors_name_the_span_and_the_expectation() {
    let (at, want) = spanned("(4,2):(1,2,3)");
    assert_eq!(at, "(4,2):(1,2,3)");
    assert!(want.contains("congruent"), "{want}");
    let (at, want) = spanned("(4,2)(1,2)");
    assert_eq!(at, "(");
    assert!(want.contains("':'"), "{want}");
    let (at, _) = spanned("((4,2):(1,2)");
    assert_eq!(at, ":");
    let (_, want) = spanned("Sw<3,4> o 8:1");
    assert!(want.contains("','"), "{want}");
    let (_, want) = spanned("Sw<40,40,3> o 8:1");
    assert!(want.contains("bit"), "{want}");
    let (at, want) = spanned("(4,8):(8,1) -> (3,3)");
    assert!(want.contains("tile"), "{want}");
    assert_eq!(at, "(4,8):(8,1) -> (3,3)");
    let (_, want) = spanned(&format!("{}8{}:1", "(".repeat(100), ")".repeat(100)));
    assert!(want.contains("nesting"), "{want}");
}

#[test]
fn linear_errors_name_the_span_and_the_expectation() {
    let (at, want) = spanned("#ttg.linear<{register = [[0, 1], [1]]}>");
    assert_eq!(at, "[1]");
    assert!(want.contains("2 values"), "{want}");
    let (_, want) = spanned("#ttg.linear<{register = [[0, 1]], register = []}>");
    assert!(want.contains("twice"), "{want}");
    let (at, want) = spanned(" - register=1 -> (0, 1)\n   register=4 -> (1, 0)\nwhere out dims are: [dim0 (size 2), dim1 (size 2)]");
    assert_eq!(at, "4");
    assert!(want.contains("register=2"), "{want}");
    let (_, want) = spanned(" - lane=1 -> (0, 1)\nwhere out dims are: [dim0 (size 3)]");
    assert!(want.contains("power-of-two"), "{want}");
}

/// `toString()` text quoted in `//` comments (as lit tests and C++ sources quote it) reads as
/// the bare text; an error points into the text as pasted. Triton's
/// `test/TritonGPU/amd/invalid.mlir` quotes one with a FileCheck `}}` left on a line.
#[test]
fn commented_to_string_reads_and_errors_point_into_the_pasted_text() {
    let bare = " - register=1 -> (0, 1)\n   register=2 -> (1, 0)\nwhere out dims are: [dim0 (size 2), dim1 (size 2)]";
    let quoted: String = bare.lines().map(|l| format!("  // {l}\n")).collect();
    assert_eq!(
        Layout::parse(&quoted, None).unwrap(),
        Layout::parse(bare, None).unwrap()
    );
    let typo = "// - register=1 -> (1, 0)\n//   register=2 -> (2, 0)}}\n// where out dims are: [dim0 (size 4)]";
    let (at, want) = spanned(typo);
    assert_eq!(at, "}");
    assert!(want.contains("in-dim name"), "{want}");
    // Only a fully commented text loses its markers.
    assert!(Layout::parse(
        "// - register=1 -> (1)\nwhere out dims are: [dim0 (size 2)]",
        None
    )
    .is_err());
}

#[test]
fn render_draws_a_caret_under_the_span() {
    let text = "S[(8,0):(1,1)]";
    let r = parse_error(text).render(text);
    assert!(r.ends_with("  S[(8,0):(1,1)]\n    ^^^^^"), "{r}");
}

#[test]
fn no_input_of_these_shapes_panics() {
    let pieces = [
        "S[",
        "R[",
        "(",
        ")",
        ",",
        ":",
        "@",
        "m",
        "-",
        "0",
        "9",
        "+",
        "]",
        "Sw<",
        ">",
        " o ",
        "->",
        "#ttg.linear<{",
        "}>",
        "[",
        "=",
        "_",
        "x",
    ];
    // Every string of up to 4 pieces: a small exhaustive sweep (the fuzzers go further).
    let mut count = 0;
    let n = pieces.len();
    for len in 1..=4u32 {
        for code in 0..n.pow(len) {
            let mut c = code;
            let mut s = String::new();
            for _ in 0..len {
                s += pieces[c % n];
                c /= n;
            }
            let _ = Layout::parse(&s, None);
            let _ = Layout::parse(&s, Some(&[4, 4]));
            count += 1;
        }
    }
    assert!(count > 250_000);
}
