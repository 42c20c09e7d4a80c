//! Instruction atoms (corpus/data/atoms/instructions.toml) for `sm80` and `sm90`: mma.sync and
//! wgmma with their operand TV layouts (references to corpus atoms), ldmatrix/stmatrix, vector
//! ld/st of global and shared memory, cp.async and TMA with its shared-memory swizzle atoms.

use std::sync::OnceLock;

use layout::cute::recast_swizzled;
use layout::{Layout, SwizzledLayout, TvLayout};

use super::program::{Elem, SynthError};

/// The instruction file, compiled in.
pub const INSTRUCTIONS_TOML: &str = include_str!("../../../corpus/data/atoms/instructions.toml");

/// Compilation target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// Ampere.
    Sm80,
    /// Hopper.
    Sm90,
}

impl Target {
    /// Parses `sm80` / `sm90`.
    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "sm80" => Some(Target::Sm80),
            "sm90" => Some(Target::Sm90),
            _ => None,
        }
    }

    /// `sm80` / `sm90`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Sm80 => "sm80",
            Target::Sm90 => "sm90",
        }
    }
}

/// A matrix-multiply atom.
#[derive(Clone, Debug)]
pub struct MmaAtom {
    /// PTX name.
    pub name: String,
    /// Where it comes from.
    pub source: String,
    /// Targets.
    pub targets: Vec<Target>,
    /// `mma` (a warp) or `wgmma` (a warpgroup).
    pub kind: String,
    /// (m, n, k).
    pub shape: [i64; 3],
    /// A/B element types.
    pub ab: Vec<Elem>,
    /// Accumulator type.
    pub c: Elem,
    /// Threads per atom.
    pub threads: i64,
    /// A's TV layout when A comes from registers (None: from shared memory).
    pub a: Option<TvLayout>,
    /// B's TV layout when B comes from registers (None: shared, wgmma).
    pub b: Option<TvLayout>,
    /// C's TV layout.
    pub c_layout: TvLayout,
}

/// Kinds of data-movement instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CopyKind {
    /// ld.global (vector).
    LdGlobal,
    /// st.global.
    StGlobal,
    /// ld.shared.
    LdShared,
    /// st.shared.
    StShared,
    /// ldmatrix.
    Ldmatrix,
    /// stmatrix.
    Stmatrix,
    /// cp.async global -> shared.
    CpAsync,
    /// TMA bulk tensor copy global -> shared.
    Tma,
}

/// A data-movement instruction.
#[derive(Clone, Debug)]
pub struct CopyInstr {
    /// PTX name.
    pub name: String,
    /// Kind.
    pub kind: CopyKind,
    /// Targets.
    pub targets: Vec<Target>,
    /// Bits per thread access (vector kinds).
    pub bits: i64,
    /// Matrices (ldmatrix / stmatrix).
    pub count: i64,
    /// `.trans`.
    pub trans: bool,
    /// TMA: the swizzle atom's name and layout in bits.
    pub swizzle_atom: Option<(String, SwizzledLayout)>,
}

impl CopyInstr {
    /// The swizzle atom in `bits`-bit elements.
    pub fn atom_in(&self, bits: i64) -> Option<SwizzledLayout> {
        self.swizzle_atom
            .as_ref()
            .and_then(|(_, l)| recast_swizzled(l, 1, bits).ok())
    }
}

/// All instruction atoms.
#[derive(Clone, Debug)]
pub struct Instructions {
    /// Matrix multiplies.
    pub mma: Vec<MmaAtom>,
    /// Data movement.
    pub copy: Vec<CopyInstr>,
}

fn corpus_atom(name: &str) -> Result<Layout, SynthError> {
    static CORPUS: OnceLock<Result<corpus::Corpus, String>> = OnceLock::new();
    let c = CORPUS
        .get_or_init(|| corpus::Corpus::embedded().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| SynthError::Internal(e.clone()))?;
    let key = name.strip_prefix("atom:").unwrap_or(name);
    let a = c.atom(key).ok_or_else(|| {
        SynthError::Internal(format!("instructions.toml names unknown atom {key}"))
    })?;
    Layout::parse(&a.layout, a.shape.as_deref())
        .map_err(|e| SynthError::Internal(format!("atom {key}: {e}")))
}

fn tv_atom(name: &str) -> Result<TvLayout, SynthError> {
    match corpus_atom(name)? {
        Layout::Tv(t) => Ok(t),
        l => Err(SynthError::Internal(format!(
            "atom {name} is {}, not a TV layout",
            l.print()
        ))),
    }
}

fn field<'a>(t: &'a toml::Table, k: &str) -> Result<&'a toml::Value, SynthError> {
    t.get(k)
        .ok_or_else(|| SynthError::Internal(format!("instructions.toml: an entry lacks `{k}`")))
}

fn s<'a>(t: &'a toml::Table, k: &str) -> Result<&'a str, SynthError> {
    field(t, k)?
        .as_str()
        .ok_or_else(|| SynthError::Internal(format!("instructions.toml: `{k}` is not a string")))
}

fn int(t: &toml::Table, k: &str) -> Result<i64, SynthError> {
    field(t, k)?
        .as_integer()
        .ok_or_else(|| SynthError::Internal(format!("instructions.toml: `{k}` is not an integer")))
}

fn strs(t: &toml::Table, k: &str) -> Result<Vec<String>, SynthError> {
    field(t, k)?
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .ok_or_else(|| SynthError::Internal(format!("instructions.toml: `{k}` is not a list")))
}

impl Instructions {
    /// The compiled-in instruction file, parsed once.
    pub fn get() -> Result<&'static Instructions, SynthError> {
        static ONE: OnceLock<Result<Instructions, SynthError>> = OnceLock::new();
        ONE.get_or_init(|| Instructions::parse(INSTRUCTIONS_TOML))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses an instruction file.
    pub fn parse(text: &str) -> Result<Instructions, SynthError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e| SynthError::Internal(format!("instructions.toml: {e}")))?;
        let items = table
            .get("instruction")
            .and_then(|v| v.as_array())
            .ok_or_else(|| {
                SynthError::Internal("instructions.toml: no [[instruction]] tables".into())
            })?;
        let mut out = Instructions {
            mma: Vec::new(),
            copy: Vec::new(),
        };
        for it in items {
            let t = it
                .as_table()
                .ok_or_else(|| SynthError::Internal("instructions.toml: not a table".into()))?;
            let targets = strs(t, "targets")?
                .iter()
                .map(|x| {
                    Target::parse(x)
                        .ok_or_else(|| SynthError::Internal(format!("unknown target {x}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let name = s(t, "name")?.to_string();
            s(t, "source")?;
            let kind = s(t, "kind")?;
            let elem = |x: &str| {
                Elem::parse(x).ok_or_else(|| SynthError::Internal(format!("{name}: dtype {x}")))
            };
            match kind {
                "mma" | "wgmma" => {
                    let shape = field(t, "shape")?
                        .as_array()
                        .map(|a| a.iter().filter_map(|v| v.as_integer()).collect::<Vec<_>>())
                        .filter(|v| v.len() == 3)
                        .ok_or_else(|| SynthError::Internal(format!("{name}: shape")))?;
                    let from_shared = t.get("a_from").and_then(|v| v.as_str()) == Some("shared");
                    out.mma.push(MmaAtom {
                        source: s(t, "source")?.into(),
                        targets,
                        kind: kind.into(),
                        shape: [shape[0], shape[1], shape[2]],
                        ab: strs(t, "ab")?
                            .iter()
                            .map(|x| elem(x))
                            .collect::<Result<_, _>>()?,
                        c: elem(s(t, "c")?)?,
                        threads: int(t, "threads")?,
                        a: if from_shared {
                            None
                        } else {
                            Some(tv_atom(s(t, "a")?)?)
                        },
                        b: t.get("b")
                            .and_then(|v| v.as_str())
                            .map(tv_atom)
                            .transpose()?,
                        c_layout: tv_atom(s(t, "c_layout")?)?,
                        name,
                    });
                }
                _ => {
                    let kind = match kind {
                        "ld_global" => CopyKind::LdGlobal,
                        "st_global" => CopyKind::StGlobal,
                        "ld_shared" => CopyKind::LdShared,
                        "st_shared" => CopyKind::StShared,
                        "ldmatrix" => CopyKind::Ldmatrix,
                        "stmatrix" => CopyKind::Stmatrix,
                        "cp_async" => CopyKind::CpAsync,
                        "tma" => CopyKind::Tma,
                        other => return Err(SynthError::Internal(format!("{name}: kind {other}"))),
                    };
                    let swizzle_atom = match t.get("swizzle_atom").and_then(|v| v.as_str()) {
                        Some(a) => match corpus_atom(a)? {
                            Layout::Swizzled(l) => {
                                Some((a.trim_start_matches("atom:").to_string(), l))
                            }
                            Layout::Cute(c) => Some((
                                a.trim_start_matches("atom:").to_string(),
                                SwizzledLayout::new(layout::Swizzle::identity(), c)?,
                            )),
                            _ => {
                                return Err(SynthError::Internal(format!(
                                    "{name}: swizzle atom {a}"
                                )))
                            }
                        },
                        None => None,
                    };
                    out.copy.push(CopyInstr {
                        name,
                        kind,
                        targets,
                        bits: t.get("bits").and_then(|v| v.as_integer()).unwrap_or(128),
                        count: t.get("count").and_then(|v| v.as_integer()).unwrap_or(0),
                        trans: t.get("trans").and_then(|v| v.as_bool()).unwrap_or(false),
                        swizzle_atom,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Copy instructions of `kind` for `target`.
    pub fn copies(&self, kind: CopyKind, target: Target) -> impl Iterator<Item = &CopyInstr> {
        self.copy
            .iter()
            .filter(move |c| c.kind == kind && c.targets.contains(&target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_file_resolves_every_atom() {
        let i = Instructions::get().unwrap();
        assert_eq!(i.mma.len(), 16);
        let m = &i.mma[0];
        assert_eq!(m.shape, [16, 8, 16]);
        assert_eq!(m.c_layout.tile(), [16, 8]);
        assert_eq!(i.copies(CopyKind::Ldmatrix, Target::Sm80).count(), 6);
        assert_eq!(i.copies(CopyKind::Tma, Target::Sm80).count(), 0);
        let tma = i.copies(CopyKind::Tma, Target::Sm90).next().unwrap();
        assert_eq!(
            tma.atom_in(16).unwrap().to_string(),
            "Sw<3,3,3> o (8, 64):(64, 1)"
        );
    }
}
