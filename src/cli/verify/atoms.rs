//! Self-checks of the corpus atoms, by the trusted semantics and certify:
//! - facts: injective / surjective in the layout's own direction, as the atom states them
//!   (a TV atom that is both holds every tile element in exactly one (thread, value)); the
//!   facts of one atom are computed once and shared by its two checks;
//! - recast views: the bit layout recast to N-bit elements is the stated `elementsN` map;
//! - CUTLASS spelling of a swizzled bit atom: its swizzle acts on the BYTE address, so
//!   `cutlass` with the swizzle applied to `offset / 8` is the atom's bit map.

use std::sync::OnceLock;
use std::time::Instant;

use certify::{equivalent, Policy};
use corpus::Atom;
use layout::cute::{recast, recast_swizzled};
use layout::facts::{facts, Fact, Facts};
use layout::{Layout, LayoutError, TvLayout};

use super::check::{subject, Check, Suite};

enum Step {
    Injective(bool),
    Surjective(bool),
    Recast(i64),
    Cutlass,
}

/// Every atom's checks.
pub struct Atoms {
    /// `(atom index, step)`.
    steps: Vec<(usize, Step)>,
    atoms: Vec<Atom>,
    facts: Vec<OnceLock<Result<Facts, LayoutError>>>,
}

impl Atoms {
    /// The checks of `atoms`: facts where stated, each recast view, each CUTLASS spelling.
    pub fn new(atoms: &[Atom]) -> Atoms {
        let mut steps = Vec::new();
        for (k, a) in atoms.iter().enumerate() {
            steps.extend(a.injective.map(|b| (k, Step::Injective(b))));
            steps.extend(a.surjective.map(|b| (k, Step::Surjective(b))));
            steps.extend(a.recast.keys().map(|&n| (k, Step::Recast(n))));
            if a.spellings.contains_key("cutlass") {
                steps.push((k, Step::Cutlass));
            }
        }
        Atoms {
            steps,
            atoms: atoms.to_vec(),
            facts: atoms.iter().map(|_| OnceLock::new()).collect(),
        }
    }
}

impl Suite for Atoms {
    fn kind(&self) -> &'static str {
        "atom"
    }

    fn len(&self) -> usize {
        self.steps.len()
    }

    fn run(&self, i: usize) -> Check {
        let (k, step) = &self.steps[i];
        let a = &self.atoms[*k];
        let t = Instant::now();
        let facts = || {
            self.facts[*k]
                .get_or_init(|| facts(&parse(a)?, None))
                .clone()
        };
        let mut subjects = vec![subject("atom", &a.layout, a.shape.as_deref())];
        let (what, expected, result) = match step {
            Step::Injective(b) => (
                "injective".to_string(),
                yes_no(*b).to_string(),
                facts().map(|f| word(&f.injective)),
            ),
            Step::Surjective(b) => (
                "surjective".to_string(),
                yes_no(*b).to_string(),
                facts().map(|f| word(&f.surjective)),
            ),
            Step::Recast(n) => {
                subjects.push(subject(&format!("elements{n}"), &a.recast[n], None));
                (
                    format!("recast to {n}-bit"),
                    "equivalent".to_string(),
                    recast_view(a, *n),
                )
            }
            Step::Cutlass => (
                "cutlass spelling".to_string(),
                "byte-address swizzle".to_string(),
                cutlass_spelling(a),
            ),
        };
        let (got, detail) = match result {
            Ok(got) => (got, None),
            Err(e) => ("error".to_string(), Some(e.to_string())),
        };
        Check {
            kind: self.kind(),
            name: format!("{} {what}", a.name),
            source: a.source.clone(),
            expected,
            got,
            detail,
            deciders: vec![match step {
                Step::Recast(_) => "certify".into(),
                _ => "semantics".into(),
            }],
            micros: t.elapsed().as_micros(),
            subjects,
        }
    }
}

fn parse(a: &Atom) -> Result<Layout, LayoutError> {
    Layout::parse(&a.layout, a.shape.as_deref())
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn word(x: &Fact) -> String {
    match x {
        Fact::Yes => "yes".to_string(),
        Fact::No(_) => "no".to_string(),
        Fact::Unknown(why) => format!("unknown ({why})"),
    }
}

/// The atom (in bits) recast to `n`-bit elements, compared with its view as relations.
fn recast_view(a: &Atom, n: i64) -> Result<String, LayoutError> {
    let recast_layout = match parse(a)? {
        Layout::Cute(l) => Layout::Cute(recast(&l, 1, n)?),
        Layout::Swizzled(l) => Layout::Swizzled(recast_swizzled(&l, 1, n)?),
        Layout::Tv(tv) => {
            let [cells] = tv.tile() else {
                return Err(LayoutError::invalid(
                    format!("recast of {}", a.name),
                    "a TV atom in bits needs a one-dimensional tile of bits",
                ));
            };
            let tile = cells / n;
            Layout::Tv(TvLayout::new(recast(tv.layout(), 1, n)?, vec![tile])?)
        }
        _ => {
            return Err(LayoutError::invalid(
                format!("recast of {}", a.name),
                "only CuTe, swizzled and TV layouts recast",
            ))
        }
    };
    let view = Layout::parse(&a.recast[&n], None)?;
    let d = equivalent(&recast_layout, &view, None, &Policy::default())?;
    Ok(match d.verdict() {
        "equivalent" => "equivalent".to_string(),
        other => format!("{other} (the recast is {})", recast_layout.print()),
    })
}

/// CUTLASS's text swizzles byte addresses: `sw(o / 8) * 8 + o % 8` must be the bit map.
fn cutlass_spelling(a: &Atom) -> Result<String, LayoutError> {
    let (Layout::Swizzled(bits), Layout::Swizzled(cutlass)) =
        (parse(a)?, Layout::parse(&a.spellings["cutlass"], None)?)
    else {
        return Err(LayoutError::invalid(
            format!("cutlass spelling of {}", a.name),
            "both the atom and its CUTLASS spelling must be swizzled layouts",
        ));
    };
    if bits.layout() != cutlass.layout() {
        return Ok("a different layout under the swizzle".into());
    }
    for i in 0..bits.layout().size() {
        let o = bits.layout().eval_index(i)?;
        let byte = cutlass.swizzle().apply(o / 8)?;
        if bits.eval_index(i)? != byte * 8 + o % 8 {
            return Ok(format!("differs at index {i}"));
        }
    }
    Ok("byte-address swizzle".into())
}
