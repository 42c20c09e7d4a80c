//! Hardware and notation atoms: named layouts with their source, and the facts `laycert verify`
//! checks about each.
//!
//! ```toml
//! [[atom]]
//! name = "SM80_16x8x16_F16F16F16F16_TN.A"
//! source = "CUTLASS include/cute/atom/mma_traits_sm80.hpp, MMA_Traits<SM80_16x8x16_F16F16F16F16_TN>::ALayout"
//! layout = "((4,8),(2,2,2)):((32,1),(16,8,128)) -> (16,16)"
//! injective = true     # in the notation's own direction: no element held twice
//! surjective = true    # every element of the tile held
//! ```
//!
//! A memory atom indexed in bits gives `bits` instead of `layout`, and may give views:
//! `elementsN` (the same map recast to N-bit elements; verify checks the recast) and
//! `cutlass` (CUTLASS's own spelling). Triton attributes name their tensor shape in `shape`.

use std::collections::BTreeMap;

use crate::entry::Entry;
use crate::error::CorpusError;

/// One atom of the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// Unique name across the corpus (claims refer to it as `atom:NAME`).
    pub name: String,
    /// The file it is in, relative to the corpus root.
    pub file: String,
    /// Where the fact comes from: a CUTLASS traits file, PTX ISA section, Triton test, paper.
    pub source: String,
    /// The layout text, in any notation `layout` parses.
    pub layout: String,
    /// The tensor shape a Triton attribute needs.
    pub shape: Option<Vec<i64>>,
    /// Whether the layout indexes bits (`bits = ...` instead of `layout = ...`).
    pub in_bits: bool,
    /// Expected injectivity in the notation's own direction.
    pub injective: Option<bool>,
    /// Expected surjectivity onto the image's bounding box, in the notation's own direction.
    pub surjective: Option<bool>,
    /// Recast views: element width in bits -> the layout text in such elements.
    pub recast: BTreeMap<i64, String>,
    /// Other spellings of the same map (`cutlass`), by field name.
    pub spellings: BTreeMap<String, String>,
    /// Free-form descriptive fields (`major`, `swizzle`, `note`).
    pub meta: BTreeMap<String, String>,
}

impl Atom {
    /// Reads and validates an `[[atom]]` entry: every layout text must parse.
    pub fn read(e: &mut Entry) -> Result<Atom, CorpusError> {
        let name = e.str("name")?;
        let source = e.str("source")?;
        let shape = e.opt_ints("shape")?;
        let (layout, in_bits) = match (e.opt_str("layout")?, e.opt_str("bits")?) {
            (Some(l), None) => (l, false),
            (None, Some(b)) => (b, true),
            (Some(_), Some(_)) => return Err(e.error("bits", "give `layout` or `bits`, not both")),
            (None, None) => {
                return Err(e.error(
                    "layout",
                    "missing (give `layout`, or `bits` for a bit layout)",
                ))
            }
        };
        e.check_layout(
            if in_bits { "bits" } else { "layout" },
            &layout,
            shape.as_deref(),
        )?;
        let injective = e.opt_bool("injective")?;
        let surjective = e.opt_bool("surjective")?;
        let mut recast = BTreeMap::new();
        let views = e.fields_with_prefix("elements");
        for field in &views {
            let bits: i64 = field["elements".len()..]
                .parse()
                .ok()
                .filter(|b: &i64| *b > 1)
                .ok_or_else(|| e.error(field, "a recast view is named elementsN, N > 1 bits"))?;
            if !in_bits {
                return Err(e.error(field, "a recast view needs the atom's layout in `bits`"));
            }
            let text = e.dynamic_str(field)?;
            e.check_layout(field, &text, None)?;
            recast.insert(bits, text);
        }
        let mut spellings = BTreeMap::new();
        if let Some(text) = e.opt_str("cutlass")? {
            e.check_layout("cutlass", &text, None)?;
            spellings.insert("cutlass".to_string(), text);
        }
        let mut meta = BTreeMap::new();
        for key in ["major", "swizzle", "note"] {
            if let Some(v) = e.opt_str(key)? {
                meta.insert(key.to_string(), v);
            }
        }
        e.finish_with(&views)?;
        Ok(Atom {
            name,
            file: e.file().to_string(),
            source,
            layout,
            shape,
            in_bits,
            injective,
            surjective,
            recast,
            spellings,
            meta,
        })
    }
}

/// The atoms a decomposition search tiles by, parsed: element-indexed ones only (bit-indexed
/// ones describe the same memory at another grain); every hand-written CUTLASS-sourced atom,
/// then each catalog atom whose layout is not already there (many share one: an MMA's C for
/// every input type); no atom of one thread (dp4a, a UMMA issued by one thread, AMX), which
/// would tile anything trivially: those are [`one_thread_atoms`], matched only whole.
pub fn tiling_atoms(atoms: &[Atom]) -> Vec<(String, layout::Layout)> {
    distinct_atoms(atoms)
        .into_iter()
        .filter(|(_, l)| !one_thread(l))
        .collect()
}

/// The atoms of one thread, parsed and distinct as [`tiling_atoms`] are: a layout is one of
/// them only when it is the whole atom (a tiling by one would fit any layout).
pub fn one_thread_atoms(atoms: &[Atom]) -> Vec<(String, layout::Layout)> {
    distinct_atoms(atoms)
        .into_iter()
        .filter(|(_, l)| one_thread(l))
        .collect()
}

fn one_thread(l: &layout::Layout) -> bool {
    matches!(l, layout::Layout::Tv(tv) if tv.threads() <= 1)
}

fn distinct_atoms(atoms: &[Atom]) -> Vec<(String, layout::Layout)> {
    let elements = || atoms.iter().filter(|a| !a.in_bits);
    let handwritten = elements().filter(|a| a.source.starts_with("CUTLASS"));
    let mut seen: std::collections::BTreeSet<(&str, Option<&[i64]>)> = handwritten
        .clone()
        .map(|a| (a.layout.as_str(), a.shape.as_deref()))
        .collect();
    let catalog = elements()
        .filter(|a| !a.source.starts_with("CUTLASS"))
        .filter(|a| seen.insert((a.layout.as_str(), a.shape.as_deref())));
    handwritten
        .chain(catalog)
        .filter_map(|a| {
            layout::Layout::parse(&a.layout, a.shape.as_deref())
                .ok()
                .map(|l| (a.name.clone(), l))
        })
        .collect()
}
