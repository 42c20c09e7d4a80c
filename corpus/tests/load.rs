//! Loading the corpus: the embedded list matches the data directory, and every malformed
//! entry is an error naming file, entry and field.

use std::path::Path;

use corpus::{ClaimKind, Corpus, CorpusError};
use proptest::prelude::*;

const ATOM: &str = "[[atom]]\nname = \"a\"\nsource = \"s\"\nlayout = \"(4,2):(2,1)\"\n";

fn load(text: &str) -> Result<Corpus, CorpusError> {
    Corpus::from_texts(&[("f.toml".to_string(), text.to_string())], &[])
}

fn field_error(text: &str) -> (String, String, String) {
    match load(text) {
        Err(CorpusError::Field {
            file, entry, field, ..
        }) => (file, entry, field),
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[test]
fn embedded_list_names_every_data_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let mut on_disk = Vec::new();
    corpus::load::collect_toml(&root, &root, &mut on_disk).unwrap();
    let listed: Vec<&str> = corpus::embedded::FILES.iter().map(|(p, _)| *p).collect();
    assert_eq!(listed, on_disk, "update corpus/src/embedded.rs");
    for (p, text) in corpus::embedded::FILES {
        assert_eq!(std::fs::read_to_string(root.join(p)).unwrap(), *text, "{p}");
    }
}

#[test]
fn embedded_corpus_loads_with_sources_and_enough_claims() {
    let c = Corpus::embedded().unwrap();
    assert!(c.claims.len() >= 150, "{} claims", c.claims.len());
    assert!(c.atoms.len() >= 100, "{} atoms", c.atoms.len());
    assert!(c.atoms.iter().all(|a| !a.source.trim().is_empty()));
    assert!(c.claims.iter().all(|c| !c.source.trim().is_empty()));
    let false_ones = c.claims.iter().filter(|c| !c.holds).count();
    let with_witness = c.claims.iter().filter(|c| c.witness.is_some()).count();
    assert!(
        false_ones >= 20 && with_witness >= 15,
        "{false_ones} / {with_witness}"
    );
    for kind in [
        ClaimKind::Equivalent,
        ClaimKind::Injective,
        ClaimKind::Surjective,
        ClaimKind::Bijective,
        ClaimKind::Refines,
        ClaimKind::EqualOnRegion,
    ] {
        assert!(c.claims.iter().any(|x| x.kind == kind), "{kind:?}");
    }
}

#[test]
fn every_gmma_accumulator_n_is_present() {
    let c = Corpus::embedded().unwrap();
    for n in (8..=256).step_by(8) {
        let a = c.atom(&format!("SM90_64x{n}x16.C")).expect("atom");
        assert!(a.layout.ends_with(&format!("-> (64,{n})")), "{}", a.layout);
    }
}

#[test]
fn directory_on_disk_loads_like_the_embedded_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    assert_eq!(
        Corpus::from_path(&root).unwrap(),
        Corpus::embedded().unwrap()
    );
}

#[test]
fn claims_resolve_atom_references() {
    let c = Corpus::embedded().unwrap();
    let claim = c
        .claims
        .iter()
        .find(|c| c.name == "sm80-c-equals-triton-mmav2-16x8")
        .unwrap();
    assert_eq!(
        claim.left.atom.as_deref(),
        Some("SM80_16x8x16_F16F16F16F16_TN.C")
    );
    assert_eq!(claim.left.text, "((4,8),(2,2)):((32,1),(16,8)) -> (16,8)");
    assert_eq!(claim.expected(), "equivalent");
}

#[test]
fn bad_layout_names_file_entry_and_field() {
    let text = ATOM.replace("(4,2):(2,1)", "(4,2):(2,");
    let (file, entry, field) = field_error(&text);
    assert_eq!(
        (file.as_str(), entry.as_str(), field.as_str()),
        ("f.toml", "[[atom]] #1 \"a\"", "layout")
    );
}

#[test]
fn missing_source_is_named() {
    let (_, _, field) = field_error("[[atom]]\nname = \"a\"\nlayout = \"4:1\"\n");
    assert_eq!(field, "source");
}

#[test]
fn misspelt_field_is_unknown() {
    let (_, entry, field) = field_error(&format!("{ATOM}injectve = true\n"));
    assert_eq!(
        (entry.as_str(), field.as_str()),
        ("[[atom]] #1 \"a\"", "injectve")
    );
}

#[test]
fn wrong_type_is_named() {
    let (_, _, field) = field_error(&format!("{ATOM}injective = \"yes\"\n"));
    assert_eq!(field, "injective");
    let e = load(&format!("{ATOM}shape = [4, \"x\"]\n")).unwrap_err();
    assert!(
        e.to_string().contains("field `shape`: item 1 is string"),
        "{e}"
    );
}

#[test]
fn second_entry_is_numbered() {
    let text =
        format!("{ATOM}\n[[atom]]\nname = \"b\"\nsource = \"s\"\nbits = \"Sw<1,4> o 8:1\"\n");
    let (_, entry, field) = field_error(&text);
    assert_eq!(
        (entry.as_str(), field.as_str()),
        ("[[atom]] #2 \"b\"", "bits")
    );
}

#[test]
fn claim_with_unknown_atom_is_named() {
    let text = "[[claim]]\nname = \"c\"\nkind = \"bijective\"\nleft = \"atom:nope\"\n\
                expect = \"proved\"\nsource = \"s\"\n";
    let e = load(text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "f.toml: [[claim]] \"c\": field `left`: no atom named \"nope\""
    );
}

#[test]
fn claim_expectation_must_fit_its_kind() {
    let text = "[[claim]]\nname = \"c\"\nkind = \"bijective\"\nleft = \"4:1\"\n\
                expect = \"equivalent\"\nsource = \"s\"\n";
    assert_eq!(field_error(text).2, "expect");
    let binary = "[[claim]]\nname = \"c\"\nkind = \"equivalent\"\nleft = \"4:1\"\n\
                  expect = \"equivalent\"\nsource = \"s\"\n";
    assert_eq!(field_error(binary).2, "right");
    let kind = binary.replace("\"equivalent\"\nleft", "\"equals\"\nleft");
    assert_eq!(field_error(&kind).2, "kind");
}

#[test]
fn duplicate_names_are_rejected() {
    let e = load(&format!("{ATOM}\n{ATOM}")).unwrap_err();
    assert!(
        e.to_string()
            .contains("duplicate: already defined in f.toml"),
        "{e}"
    );
}

#[test]
fn not_toml_and_unknown_tables_are_file_errors() {
    assert!(matches!(load("[[atom]\n"), Err(CorpusError::Toml { .. })));
    let e = load("[[rule]]\nname = \"r\"\n").unwrap_err();
    assert!(e.to_string().contains("unknown table [[rule]]"), "{e}");
    let e = load("name = \"x\"\n").unwrap_err();
    assert!(e.to_string().starts_with("f.toml: top-level `name`"), "{e}");
}

#[test]
fn recast_view_needs_a_bit_layout() {
    let (_, _, field) = field_error(&format!("{ATOM}elements16 = \"4:1\"\n"));
    assert_eq!(field, "elements16");
}

proptest! {
    /// Whatever text stands in a layout field, loading never panics, and a failure names that
    /// field of that entry.
    #[test]
    fn any_layout_text_loads_or_names_the_field(text in "[-()0-9,:@a-zA-Z<>+ \\[\\]]{0,24}") {
        let toml_text = format!(
            "[[atom]]\nname = \"a\"\nsource = \"s\"\nlayout = {}\n",
            toml::Value::String(text.clone())
        );
        match load(&toml_text) {
            Ok(c) => prop_assert_eq!(&c.atoms[0].layout, &text),
            Err(CorpusError::Field { entry, field, .. }) => {
                prop_assert_eq!(entry, "[[atom]] #1 \"a\"");
                prop_assert_eq!(field, "layout");
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}
