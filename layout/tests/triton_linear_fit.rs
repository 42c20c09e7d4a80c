//! `#ttg.linear` on a tensor shape other than its own, against Triton 3.9: every case of
//! `tests/data/triton/linear_fit.jsonl` (written by `bench/peers/gen_triton_linear_fit.py`:
//! random permutation layouts with broadcast bases, rank 1 to 4, at all-ones, smaller, equal,
//! larger and mixed shapes) must fit to exactly Triton's bases.

use layout::notation::linear::parse_attr;

mod triton_support;

#[test]
fn linear_attr_fits_every_shape_as_triton_does() {
    let cases = triton_support::cases("linear_fit.jsonl");
    assert!(cases.len() >= 300, "{} cases", cases.len());
    let mut fits = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for c in &cases {
        let attr = c["attr"].as_str().unwrap();
        let shape = triton_support::ints(&c["shape"]);
        fits.insert(c["fit"].as_str().unwrap().to_string());
        let names = ["register", "lane", "warp", "block"];
        let want: Vec<_> = names
            .iter()
            .map(|k| triton_support::bases(&c[*k]))
            .collect();
        match parse_attr(attr, Some(&shape)) {
            Ok(got) => {
                let ours = triton_support::our_bases(&got, &names);
                if ours != want {
                    failures.push(format!(
                        "{attr} on {shape:?}:\n  want {want:?}\n  got  {ours:?}"
                    ));
                }
                let outs: Vec<i64> = got.outs().iter().map(|o| o.size()).collect();
                assert_eq!(outs, shape, "{attr}: out-dim sizes are the tensor shape");
            }
            Err(e) => failures.push(format!("{attr} on {shape:?}: {e}")),
        }
    }
    for fit in ["ones", "small", "equal", "large", "mixed"] {
        assert!(fits.contains(fit), "no {fit} case");
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ from Triton:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The fit is refused where Triton's cut is not defined (a dim whose bases repeat a value),
/// naming the dim; Triton's verifier refuses such an attribute outright.
#[test]
fn a_cut_of_repeated_bases_is_refused_naming_the_dim() {
    let attr = "#ttg.linear<{register = [[4]], lane = [[1], [2], [4]], warp = [], block = []}>";
    let e = parse_attr(attr, Some(&[4])).unwrap_err().to_string();
    assert!(e.contains("dim0") && e.contains("[1, 2, 4, 4]"), "{e}");
    // At its own size it is read as written.
    assert!(parse_attr(attr, Some(&[8])).is_ok());
    assert!(parse_attr(attr, Some(&[6])).is_err());
}
