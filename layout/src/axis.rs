//! Physical axes and the axis registry.
//!
//! An [`Axis`] names a physical resource: memory `m` (the default), `laneid`, `warpid`, `tx`,
//! `reg`, Trainium `P`/`F`, Blackwell `TLane`/`TCol`, ... The set is open-ended. A physical
//! coordinate ([`Point`]) gives one integer per axis.
//!
//! The [`AxisRegistry`] is data, not code (`layout/data/axes.toml` is the built-in one): aliases
//! (`lane` is `laneid`, `register` is `reg`) and per-target linear relations such as
//! `tx = laneid + 32*warpid` on CUDA. Example: under the built-in registry,
//! `resolve("lane") == laneid`, and on target `cuda` the point `{laneid: 3, warpid: 2}` has
//! `tx = 3 + 32*2 = 67`.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use crate::error::{LayoutError, Result};

/// The name of a physical axis. Valid names are identifiers: `[A-Za-z_][A-Za-z0-9_]*`.
/// Shared text: cloning an axis copies a pointer, not the name.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Axis(std::sync::Arc<str>);

/// A physical coordinate: one integer per named axis.
pub type Point = BTreeMap<Axis, i64>;

impl Axis {
    /// The memory axis `m`, the default of every notation.
    pub fn m() -> Axis {
        static M: std::sync::LazyLock<Axis> = std::sync::LazyLock::new(|| Axis("m".into()));
        M.clone()
    }

    /// Checks that `name` is an identifier and wraps it.
    pub fn new(name: &str) -> Result<Axis> {
        if is_identifier(name) {
            Ok(Axis(name.into()))
        } else {
            Err(LayoutError::invalid(
                format!("axis name {name:?}"),
                "an axis name is an identifier: a letter or '_', then letters, digits or '_'",
            ))
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the default memory axis `m`.
    pub fn is_m(&self) -> bool {
        &*self.0 == "m"
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True when `s` is `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Renders a point as `{laneid:8, reg:1, warpid:6}` (axes in name order).
pub fn format_point(p: &Point) -> String {
    let body: Vec<String> = p.iter().map(|(a, v)| format!("{a}:{v}")).collect();
    format!("{{{}}}", body.join(", "))
}

/// `axis = sum(coef * term)`: one linear relation between axes on a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    /// The derived axis (`tx`).
    pub axis: Axis,
    /// Its terms, `(coefficient, axis)`, e.g. `[(1, laneid), (32, warpid)]`.
    pub terms: Vec<(i64, Axis)>,
}

impl Relation {
    /// The derived axis's value at `p`, when every term axis is present (absent axes count 0).
    pub fn value_at(&self, p: &Point) -> Result<i64> {
        self.terms.iter().try_fold(0i64, |acc, (c, a)| {
            let v = p.get(a).copied().unwrap_or(0);
            crate::arith::add(
                acc,
                crate::arith::mul(*c, v, "relation term")?,
                "relation sum",
            )
        })
    }
}

/// A target (hardware family) and its linear relations between axes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Target name (`cuda`, `trainium`).
    pub name: String,
    /// Where the relations come from.
    pub source: String,
    /// Its relations.
    pub relations: Vec<Relation>,
}

/// Aliases and per-target relations, loaded from TOML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisRegistry {
    aliases: BTreeMap<String, Axis>,
    targets: BTreeMap<String, Target>,
    canonical: Vec<Axis>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegistryFile {
    #[serde(default)]
    canonical: Vec<String>,
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    #[serde(default)]
    target: Vec<TargetFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFile {
    name: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    relation: Vec<RelationFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationFile {
    axis: String,
    terms: Vec<(i64, String)>,
}

const BUILTIN: &str = include_str!("../data/axes.toml");

impl AxisRegistry {
    /// The registry shipped in `layout/data/axes.toml`.
    /// Parsed once per process.
    pub fn builtin() -> &'static AxisRegistry {
        static PARSED: std::sync::LazyLock<AxisRegistry> = std::sync::LazyLock::new(|| {
            // The embedded file is tested (`builtin_registry_loads`), so this cannot fail.
            AxisRegistry::from_toml(BUILTIN).expect("the built-in axis registry is valid")
        });
        &PARSED
    }

    /// Reads a registry from TOML text; errors name the entry and field at fault.
    pub fn from_toml(text: &str) -> Result<AxisRegistry> {
        let file: RegistryFile = toml::from_str(text)
            .map_err(|e| LayoutError::invalid("axis registry", e.to_string()))?;
        let mut aliases = BTreeMap::new();
        for (alias, canonical) in file.aliases {
            Axis::new(&alias)?;
            if alias == canonical {
                return Err(LayoutError::invalid(
                    format!("axis registry alias {alias:?}"),
                    "an alias must differ from its canonical name",
                ));
            }
            aliases.insert(alias, Axis::new(&canonical)?);
        }
        for (alias, canonical) in &aliases {
            if aliases.contains_key(canonical.as_str()) {
                return Err(LayoutError::invalid(
                    format!("axis registry alias {alias:?}"),
                    format!("its target {canonical} is itself an alias; name the canonical axis"),
                ));
            }
        }
        let mut targets = BTreeMap::new();
        for t in file.target {
            let mut relations = Vec::new();
            for r in t.relation {
                let mut terms = Vec::new();
                for (c, a) in r.terms {
                    terms.push((c, Axis::new(&a)?));
                }
                relations.push(Relation {
                    axis: Axis::new(&r.axis)?,
                    terms,
                });
            }
            let name = t.name.clone();
            let target = Target {
                name: t.name,
                source: t.source,
                relations,
            };
            if targets.insert(name.clone(), target).is_some() {
                return Err(LayoutError::invalid(
                    format!("axis registry target {name:?}"),
                    "defined twice",
                ));
            }
        }
        let canonical = file
            .canonical
            .iter()
            .map(|n| Axis::new(n))
            .collect::<Result<_>>()?;
        Ok(AxisRegistry {
            aliases,
            targets,
            canonical,
        })
    }

    /// Every axis name the registry knows: its canonical axes, aliases and their targets, and
    /// the axes of every target's relations.
    pub fn known_names(&self) -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> =
            self.canonical.iter().map(|a| a.to_string()).collect();
        for (alias, target) in &self.aliases {
            out.insert(alias.clone());
            out.insert(target.to_string());
        }
        for t in self.targets.values() {
            for r in &t.relations {
                out.insert(r.axis.to_string());
                out.extend(r.terms.iter().map(|(_, a)| a.to_string()));
            }
        }
        out
    }

    /// The registry name that `name` most likely misspells, when `name` is not itself known:
    /// one equal up to case and underscores (`laneId`, `lane_id`, `WarpID` -> `laneid`,
    /// `warpid`), or, for names of five letters or more, one edit away (`laneidd`). Names far
    /// from every known one (`dp`, `foo`) are the user's own axes and get no suggestion.
    pub fn misspelling_of(&self, name: &str) -> Option<String> {
        let known = self.known_names();
        if known.contains(name) {
            return None;
        }
        let norm = |s: &str| s.to_lowercase().replace('_', "");
        let n = norm(name);
        if let Some(k) = known.iter().find(|k| norm(k) == n) {
            return Some(k.clone());
        }
        if n.chars().count() < 5 {
            return None;
        }
        known
            .iter()
            .filter(|k| k.chars().count() >= 4)
            .find(|k| edit_distance(&norm(k), &n) <= 1)
            .cloned()
    }

    /// The canonical axis for a name: its alias target, or the name itself.
    pub fn resolve(&self, axis: &Axis) -> Axis {
        self.aliases
            .get(axis.as_str())
            .cloned()
            .unwrap_or_else(|| axis.clone())
    }

    /// The target of that name.
    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.get(name)
    }

    /// All aliases, `alias -> canonical`.
    pub fn aliases(&self) -> &BTreeMap<String, Axis> {
        &self.aliases
    }

    /// All targets by name.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.targets.values()
    }

    /// Rewrites a point with a target's relations until none applies: every term axis of a
    /// relation is replaced by its contribution to the derived axis (`{laneid: 3, warpid: 2}`
    /// becomes `{tx: 67}` on cuda). Substitution is linear, so the order does not matter.
    pub fn fuse_point(&self, target: &str, p: &Point) -> Result<Point> {
        let Some(t) = self.targets.get(target) else {
            return Err(LayoutError::invalid(
                format!("target {target:?}"),
                "the axis registry has no such target",
            ));
        };
        let mut q = self.resolve_point(p)?;
        // Each pass removes at least one axis, so at most one pass per axis.
        for _ in 0..=q.len() + t.relations.len() {
            let Some(rel) = t
                .relations
                .iter()
                .find(|r| r.terms.iter().any(|(_, a)| q.contains_key(a)))
            else {
                return Ok(q);
            };
            let v = rel.value_at(&q)?;
            for (_, a) in &rel.terms {
                q.remove(a);
            }
            let slot = q.entry(rel.axis.clone()).or_insert(0);
            *slot = crate::arith::add(*slot, v, "axis fusion")?;
        }
        Err(LayoutError::invalid(
            format!("target {target:?}"),
            "its relations are cyclic",
        ))
    }

    /// Renames every axis of a point to its canonical name (values on merged axes add).
    pub fn resolve_point(&self, p: &Point) -> Result<Point> {
        let mut out = Point::new();
        for (a, v) in p {
            let slot = out.entry(self.resolve(a)).or_insert(0);
            *slot = crate::arith::add(*slot, *v, "alias merge")?;
        }
        Ok(out)
    }
}

/// Edit distance (insertions, deletions, substitutions and adjacent transpositions).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misspelled_axis_names_suggest_the_registry_name() {
        let r = AxisRegistry::builtin();
        for (typo, want) in [
            ("laneId", "laneid"),
            ("lane_id", "laneid"),
            ("WarpID", "warpid"),
            ("REG", "reg"),
            ("laneidd", "laneid"),
            ("wrapid", "warpid"),
            ("tlane", "TLane"),
        ] {
            assert_eq!(r.misspelling_of(typo).as_deref(), Some(want), "{typo}");
        }
        for own in [
            "laneid", "lane", "m", "dp", "tp", "foo", "a", "x", "e", "tx", "TCol",
        ] {
            assert_eq!(r.misspelling_of(own), None, "{own}");
        }
        assert_eq!(edit_distance("abcd", "abdc"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn builtin_registry_loads() {
        let r = AxisRegistry::builtin();
        let ax = |s: &str| Axis::new(s).unwrap();
        assert_eq!(r.resolve(&ax("lane")), ax("laneid"));
        assert_eq!(r.resolve(&ax("warp")), ax("warpid"));
        assert_eq!(r.resolve(&ax("register")), ax("reg"));
        assert_eq!(r.resolve(&ax("laneid")), ax("laneid"));
        let tx = r
            .target("cuda")
            .unwrap()
            .relations
            .iter()
            .find(|x| x.axis == ax("tx"))
            .unwrap();
        let p: Point = [(ax("laneid"), 3), (ax("warpid"), 2)].into();
        assert_eq!(tx.value_at(&p).unwrap(), 67);
    }

    #[test]
    fn registry_errors_name_the_entry() {
        let e = AxisRegistry::from_toml("[aliases]\nlane = \"2x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"2x\""), "{e}");
        let e = AxisRegistry::from_toml("[aliases]\na = \"b\"\nb = \"c\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("itself an alias"), "{e}");
        let e = AxisRegistry::from_toml(
            "[[target]]\nname = \"x\"\nrelation = [{ axis = \"tx\", terms = [[1]] }]\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("axis registry"), "{e}");
        let e = AxisRegistry::from_toml("[[target]]\nname = \"x\"\n[[target]]\nname = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("defined twice"), "{e}");
    }

    #[test]
    fn resolve_point_merges_aliases() {
        let r = AxisRegistry::builtin();
        let p: Point = [
            (Axis::new("lane").unwrap(), 3),
            (Axis::new("laneid").unwrap(), 4),
        ]
        .into();
        assert_eq!(
            r.resolve_point(&p).unwrap(),
            [(Axis::new("laneid").unwrap(), 7)].into()
        );
    }
}

#[cfg(test)]
mod fuse_tests {
    use super::*;

    #[test]
    fn fuse_point_substitutes_relations_to_a_fixpoint() {
        let r = AxisRegistry::builtin();
        let ax = |s: &str| Axis::new(s).unwrap();
        let p: Point = [(ax("lane"), 3), (ax("warp"), 2)].into();
        assert_eq!(r.fuse_point("cuda", &p).unwrap(), [(ax("tx"), 67)].into());
        // warpid = wwid + 4*wgid, then tx = laneid + 32*warpid.
        let q: Point = [(ax("wgid"), 1), (ax("wwid"), 1), (ax("reg"), 5)].into();
        assert_eq!(
            r.fuse_point("cuda", &q).unwrap(),
            [(ax("reg"), 5), (ax("tx"), 160)].into()
        );
        assert!(r.fuse_point("nope", &q).is_err());
    }
}
