//! NKI access patterns (`t.ap(pattern=[[step, num], ...], offset=...)`) read by
//! `Layout::parse`, checked at every coordinate against an independent evaluator of the NKI
//! docs' pseudo-code (nki-aps.html, "Semantics of the Access Pattern"):
//!
//! ```text
//! for w in range(p_size): for z in range(z_num): ...
//!     access[w, z, ...] = t_flatten[offset + (w * N) + (z * z_step) + ...]
//! ```
//!
//! plus the docs page's own examples. No NKI runs here (its wheels are placeholders), so the
//! pseudo-code is the oracle.

use std::collections::BTreeSet;

use layout::axis::{Axis, Point};
use layout::notation::{nki, Notation};
use layout::{Layout, LayoutError};
use proptest::prelude::*;

/// The docs' loop nest: the flat index of `access[coord]`, first entry outermost.
fn docs_index(pattern: &[(i64, i64)], offset: i64, coord: &[i64]) -> i64 {
    offset
        + pattern
            .iter()
            .zip(coord)
            .map(|(&(step, _), &i)| i * step)
            .sum::<i64>()
}

/// Every coordinate of the pattern's shape, in the loops' order.
fn coords(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &n in shape {
        all = all
            .into_iter()
            .flat_map(|c| {
                (0..n).map(move |i| {
                    let mut c = c.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    all
}

fn axe(text: &str) -> layout::axe::AxeLayout {
    match Layout::parse(text, None) {
        Ok(Layout::Axe(l)) => l,
        other => panic!("{text}: {other:?}"),
    }
}

fn ax(name: &str) -> Axis {
    Axis::new(name).unwrap()
}

/// The one point of `l` at `coord` of the pattern's shape.
fn point(l: &layout::axe::AxeLayout, shape: &[i64], coord: &[i64]) -> Point {
    let set: BTreeSet<Point> = l.eval(shape, coord).unwrap();
    assert_eq!(set.len(), 1);
    set.into_iter().next().unwrap()
}

fn get(p: &Point, a: &str) -> i64 {
    p.get(&ax(a)).copied().unwrap_or(0)
}

fn pattern_text(pattern: &[(i64, i64)]) -> String {
    let e: Vec<String> = pattern.iter().map(|(s, n)| format!("[{s}, {n}]")).collect();
    format!("[{}]", e.join(", "))
}

fn shape_of(pattern: &[(i64, i64)]) -> Vec<i64> {
    pattern.iter().map(|&(_, n)| n).collect()
}

/// Checks a pattern on an unknown tensor (axis `m`) against the docs' loop.
fn check_flat(pattern: &[(i64, i64)], offset: i64) -> Result<(), LayoutError> {
    let text = format!("t.ap(pattern={}, offset={offset})", pattern_text(pattern));
    let shape = shape_of(pattern);
    let all = coords(&shape);
    let least = all
        .iter()
        .map(|c| docs_index(pattern, offset, c))
        .min()
        .unwrap();
    match Layout::parse(&text, None) {
        Ok(Layout::Axe(l)) => {
            assert!(least >= 0, "{text} read with index {least}");
            for c in &all {
                let p = point(&l, &shape, c);
                assert!(p.keys().all(|a| a.is_m()), "{text}: {p:?}");
                assert_eq!(
                    get(&p, "m"),
                    docs_index(pattern, offset, c),
                    "{text} at {c:?}"
                );
            }
            Ok(())
        }
        Ok(other) => panic!("{text}: {other:?}"),
        Err(e) => {
            assert!(least < 0, "{text} refused: {e}");
            Err(e)
        }
    }
}

/// Checks a pattern on a declared SBUF tensor `(p, free...)` (axes `P`, `F`) against the docs'
/// loop: the flat index `idx` is partition `idx / F`, free element `idx % F`, and the access is
/// read only when every index lies in the tensor and every free index in its partition's row.
fn check_sbuf(tensor: &[i64], free_pattern: &[(i64, i64)], p_num: i64, offset: i64) {
    let f: i64 = tensor[1..].iter().product();
    let size = f * tensor[0];
    let mut pattern = vec![(f, p_num)];
    pattern.extend_from_slice(free_pattern);
    let dims: Vec<String> = tensor.iter().map(i64::to_string).collect();
    let text = format!(
        "t = nl.ndarray(({},), dtype=nl.float32, buffer=nl.sbuf)\nt.ap(pattern={}, offset={offset})",
        dims.join(", "),
        pattern_text(&pattern)
    );
    let shape = shape_of(&pattern);
    let all = coords(&shape);
    let free_of = |c: &[i64]| docs_index(&pattern[1..], offset.rem_euclid(f), &c[1..]);
    let legal = all.iter().all(|c| {
        let idx = docs_index(&pattern, offset, c);
        (0..size).contains(&idx) && (0..f).contains(&free_of(c))
    });
    match Layout::parse(&text, None) {
        Ok(Layout::Axe(l)) => {
            assert!(legal, "{text} was read");
            for c in &all {
                let idx = docs_index(&pattern, offset, c);
                let p = point(&l, &shape, c);
                assert_eq!(
                    (get(&p, "P"), get(&p, "F")),
                    (idx / f, idx % f),
                    "{text} at {c:?}"
                );
                assert!(p.keys().all(|a| a.as_str() == "P" || a.as_str() == "F"));
            }
        }
        Ok(other) => panic!("{text}: {other:?}"),
        Err(e) => assert!(!legal, "{text} refused: {e}"),
    }
}

fn entry() -> impl Strategy<Value = (i64, i64)> {
    (-9i64..=9, 1i64..=7)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn flat_access_matches_the_docs_loop(
        pattern in prop::collection::vec(entry(), 1..=5),
        offset in 0i64..120,
    ) {
        let _ = check_flat(&pattern, offset);
    }

    #[test]
    fn sbuf_access_matches_the_docs_loop_on_partitions(
        tensor in prop::collection::vec(1i64..=6, 2..=3),
        free in prop::collection::vec(entry(), 1..=4),
        p_num in 1i64..=6,
        offset in 0i64..60,
    ) {
        check_sbuf(&tensor, &free, p_num, offset);
    }
}

#[test]
fn docs_concrete_example_reads_t_0_16_8_16() {
    // "Given a tensor t of size (16P, 16F), to iterate all the elements in t[0:16, 8:16]".
    let l = axe("t.ap(pattern=[[16, 16], [1, 8]], offset=8)");
    assert_eq!(l, axe("S[(16,8):(16,1)] + 8"));
    assert_eq!(get(&point(&l, &[16, 8], &[2, 3]), "m"), 43);
    let decl = "t = nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.sbuf)\n";
    let on_sbuf = axe(&format!(
        "{decl}access = t.ap(pattern=[[16, 16], [1, 8]], offset=8)"
    ));
    assert_eq!(on_sbuf, axe("S[(16,8):(1@P,1@F)] + 8@F"));
    let p = point(&on_sbuf, &[16, 8], &[2, 3]);
    assert_eq!((get(&p, "P"), get(&p, "F")), (2, 11));
    for w in 0..16 {
        for z in 0..8 {
            let idx = 8 + w * 16 + z;
            let p = point(&on_sbuf, &[16, 8], &[w, z]);
            assert_eq!((get(&p, "P"), get(&p, "F")), (idx / 16, idx % 16));
        }
    }
}

#[test]
fn docs_slice_example_is_its_hand_written_ap() {
    // t.slice(dim=1, start=8, end=24) on (128, 64): get_pattern() == [[64, 128], [1, 16]],
    // offset 8.
    let l = axe(
        "t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)\n\
         v = t.ap(pattern=[[64, 128], [1, 16]], offset=8)",
    );
    assert_eq!(l, axe("S[(128,16):(1@P,1@F)] + 8@F"));
}

#[test]
fn docs_illegal_every_other_partition_is_refused() {
    let e = Layout::parse(
        "t = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)\n\
         # The following is illegal, because the first stride is 32*2\n\
         t.ap(pattern=[[64, 8], [1, 32]], offset=0)",
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("must be contiguous") && e.contains("32"), "{e}");
    // Without the declaration it is an index map of the flattened tensor.
    assert_eq!(
        axe("t.ap(pattern=[[64, 8], [1, 32]], offset=0)"),
        axe("S[(8,32):(64,1)]")
    );
}

#[test]
fn docs_reinterpret_cast_counts_elements_of_the_new_dtype() {
    let text = "t = nl.ndarray((128, 256), dtype=nl.int32, buffer=nl.sbuf)\n\
                cast_to_bf16 = t.ap(pattern=[\n  [512, 128], [1, 512]\n ], # doubled\n\
                offset = 0, dtype=nl.bfloat16)";
    assert_eq!(axe(text), axe("S[(128,512):(1@P,1@F)]"));
    // The int32 step read as bfloat16 is half the row: not contiguous on partitions.
    let e = Layout::parse(&text.replace("[512, 128]", "[256, 128]"), None).unwrap_err();
    assert!(e.to_string().contains("512"), "{e}");
    // A width the dtype table does not give.
    let e = Layout::parse(&text.replace("bfloat16", "tfloat32"), None).unwrap_err();
    assert!(e.to_string().contains("tfloat32"), "{e}");
}

#[test]
fn docs_hbm_and_positional_forms_read_on_the_flat_index() {
    let l = axe(
        "A = nl.ndarray((512, 512), nl.float32, buffer=nl.shared_hbm)\n\
         A.ap([[512, 128], [1, 256]], 3*128*512)",
    );
    assert_eq!(l, axe("S[(128,256):(512,1)] + 196608"));
    // Past the end of the declared tensor.
    let e = Layout::parse(
        "A = nl.ndarray((512, 512), nl.float32, buffer=nl.shared_hbm)\n\
         A.ap([[512, 128], [1, 256]], 4*128*512)",
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("262144 elements"), "{e}");
    assert_eq!(
        axe("[[16, 16], [1, 8]]"),
        axe("t.ap(pattern=((16, 16), (1, 8)))")
    );
    assert_eq!(
        axe("nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.psum).ap(pattern=[[16, 16], [1, 8]], offset=None)"),
        axe("S[(16,8):(1@P,1@F)]")
    );
}

#[test]
fn dynamic_and_ambiguous_forms_are_refused_by_name() {
    let cases = [
        // The docs' own example passes the pairs as two arguments.
        ("src.ap([32, 16], [1, 32])", "[step, num] pair"),
        (
            "A.ap(pattern=[[512, 128], [1, 256]], offset=0, scalar_offset=batch_idx, indirect_dim=0)",
            "runtime value",
        ),
        (
            "A.ap([[512, 64], [1, 512]], 0, vector_offset=dynamic_idx_legal, indirect_dim=0)",
            "runtime value",
        ),
        (
            "t.ap(pattern=[[256, 128], [2, 128]]).ap(pattern=[[256, 128], [1, 64]])",
            "chained",
        ),
        ("nisa.iota(dst, [[1, 1]], 0, 2)", "generates values"),
        ("t.ap(pattern=[[16, 16], [1, 0]])", "num >= 1"),
        ("t.ap(pattern=[[1, 2]], offset=N)", "names"),
        ("t.ap(pattern=[[1, 2]], ofset=3)", "an argument of .ap"),
        ("t.ap(pattern=[[1, 2]], offset=1, offset=2)", "offset only once"),
        ("t.ap(pattern=[[-1, 4]], offset=2)", "index -1"),
        ("t.ap(pattern=[[1,2],[1,2],[1,2],[1,2],[1,2],[1,2]])", "at most 5"),
        ("t.ap(pattern=[])", "at least one"),
        ("t = nl.ndarray((4, 4), dtype=nl.float33)\nt.ap([[4, 4]])", "NKI dtype"),
        ("t = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)", "calls no .ap"),
        (
            "t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)\nt.ap([[4, 4]])",
            "128",
        ),
        (
            "t = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)\nt.ap([[4, 2], [1, 4]], 2)",
            "another partition",
        ),
    ];
    for (text, why) in cases {
        assert_eq!(Notation::detect(text), Notation::NkiAp, "{text}");
        let e = Layout::parse(text, None).unwrap_err().to_string();
        assert!(e.contains(why), "{text}: {e}");
    }
}

#[test]
fn sizes_near_overflow_are_refused_cleanly() {
    let max = i64::MAX;
    for text in [
        format!("t.ap(pattern=[[1, 2]], offset={max})"),
        format!("t.ap(pattern=[[{max}, 3]])"),
        format!("t.ap(pattern=[[1, {max}], [1, {max}]])"),
        format!("t.ap(pattern=[[1, 2]], offset={max}+1)"),
        format!("t.ap(pattern=[[1, 2]], offset=-{max}-2)"),
        "t.ap(pattern=[[1, 2]], offset=99999999999999999999)".to_string(),
        format!("t.ap(pattern=[[-{max}, 2]], offset={max})"),
        format!("t = nl.ndarray(({max}, {max}), dtype=nl.int32, buffer=nl.hbm)\nt.ap([[1, 2]], dtype=nl.int8)"),
    ] {
        assert!(Layout::parse(&text, None).is_err(), "{text}");
    }
    // Hostile nesting is an error, not a stack overflow.
    for text in [
        format!(
            "t.ap(pattern=[[1, 2]], offset={}1{})",
            "(".repeat(50_000),
            ")".repeat(50_000)
        ),
        format!("t.ap(pattern=[[1, 2]], offset={}1)", "-".repeat(50_000)),
        format!(
            "t.ap(pattern={}1{})",
            "[".repeat(50_000),
            "]".repeat(50_000)
        ),
        format!("{}1{}", "[".repeat(50_000), "]".repeat(50_000)),
    ] {
        assert!(Layout::parse(&text, None).is_err());
    }
    assert_eq!(
        axe(&format!(
            "t.ap(pattern=[[1, 2]], offset={}7{})",
            "(".repeat(20),
            ")".repeat(20)
        )),
        axe("S[2:1] + 7")
    );
    // The largest offset that still fits is read.
    let near = max - 10;
    assert!(Layout::parse(&format!("t.ap(pattern=[[1, 4]], offset={near})"), None).is_ok());
}

#[test]
fn detection_reads_python_around_the_pattern() {
    for text in [
        "[[1, 4]]",
        "[ (1, 4) ]",
        "# a comment first\nt.ap([[1, 4]])",
        "import nki.language as nl\nt = nl.ndarray((2, 4), dtype=nl.float32, buffer=nl.sbuf); t.ap([[4, 2], [1, 4]])",
    ] {
        assert_eq!(Notation::detect(text), Notation::NkiAp, "{text}");
        assert!(Layout::parse(text, None).is_ok(), "{text}");
    }
    // Other notations are not taken.
    for text in [
        "S[(4,4):(4,1)]",
        "(4,4):(4,1)",
        "#ttg.linear<{register = [[0, 1]]}>",
    ] {
        assert_ne!(Notation::detect(text), Notation::NkiAp, "{text}");
    }
    assert_eq!(nki::dtype_bytes("bfloat16"), Some(2));
}

/// A seeded sweep over small SBUF accesses, read and refused alike: both outcomes occur, so the
/// comparison above is not vacuous on either side.
#[test]
fn seeded_sbuf_sweep_reads_and_refuses() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: i64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % n as u64) as i64
    };
    let (mut read, mut refused) = (0, 0);
    for _ in 0..600 {
        let tensor: Vec<i64> = (0..2 + next(2)).map(|_| 1 + next(5)).collect();
        let free: Vec<(i64, i64)> = (0..1 + next(4))
            .map(|_| (next(7) - 3, 1 + next(4)))
            .collect();
        let p_num = 1 + next(tensor[0]);
        let offset = next(12);
        check_sbuf(&tensor, &free, p_num, offset);
        let f: i64 = tensor[1..].iter().product();
        let mut pattern = vec![(f, p_num)];
        pattern.extend_from_slice(&free);
        let dims: Vec<String> = tensor.iter().map(i64::to_string).collect();
        let text = format!(
            "t = nl.ndarray(({},), dtype=nl.float32, buffer=nl.sbuf)\nt.ap({}, {offset})",
            dims.join(", "),
            pattern_text(&pattern)
        );
        if Layout::parse(&text, None).is_ok() {
            read += 1;
        } else {
            refused += 1;
        }
    }
    assert!(
        read > 100 && refused > 100,
        "read {read}, refused {refused}"
    );
}
