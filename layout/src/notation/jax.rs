//! JAX `NamedSharding(mesh, P(e_0, ..., e_{r-1}))` PartitionSpec text: `P('dp', None)`,
//! `PartitionSpec('x', ('y', 'z'))`, or a bare tuple.
//!
//! `e_d` is `None` (not split), an axis name, or a tuple of names: ONE flat split of dim `d` into
//! the product of their extents, the first name major (so `P(('dp','tp'))` on `dp=2,tp=4` gives
//! device (dp 1, tp 2) piece 6 of 8). Missing trailing entries are `None`; mesh axes not named
//! replicate. Worked vector: `P(None, 'tp')` on `dp=2,tp=4`, shape (8,8): rank 6 holds columns 4..6.

use std::collections::BTreeMap;

use super::dtensor::split_top;
use crate::mesh::{Mesh, MeshError, MeshLayout};

fn bad<T>(what: impl Into<String>) -> Result<T, MeshError> {
    Err(MeshError(what.into()))
}

fn strip_call<'a>(t: &'a str, names: &[&str]) -> &'a str {
    for n in names {
        if let Some(rest) = t.strip_prefix(n) {
            if let Some(inner) = rest
                .trim_start()
                .strip_prefix('(')
                .and_then(|s| s.strip_suffix(')'))
            {
                return inner;
            }
        }
    }
    t
}

/// Reads a PartitionSpec into per-dim lists of mesh axis names (empty = `None`).
pub fn parse_spec(text: &str) -> Result<Vec<Vec<String>>, MeshError> {
    let mut t = text.trim();
    // NamedSharding(mesh, P(...)), or JAX's repr `NamedSharding(mesh=Mesh('dp': 2, ..),
    // spec=P(..), memory_kind=device)`: keep the spec (`named_mesh` reads the mesh).
    if let Some(inner) = t
        .strip_prefix("NamedSharding(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let parts = split_top(inner);
        let spec = parts
            .iter()
            .find_map(|p| p.strip_prefix("spec=").map(str::trim));
        t = match (spec, parts.len()) {
            (Some(p), _) => p,
            (None, 2) => parts[1].as_str(),
            _ => {
                return bad(
                    "NamedSharding(mesh, spec): expected two arguments, or a `spec=` keyword",
                )
            }
        };
        return parse_spec(t);
    }
    let call = strip_call(t, &["PartitionSpec", "P"]);
    let t = if call.len() != t.len() {
        call
    } else {
        t.strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or(t)
    };
    let mut entries = split_top(t);
    // Python's one-entry tuple, as JAX prints it: `P('x',)`.
    if entries.len() > 1 && entries.last().is_some_and(|e| e.is_empty()) {
        entries.pop();
    }
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let e = e.trim();
        if e == "None" || e == "()" {
            out.push(vec![]);
            continue;
        }
        let names: Vec<String> = match e.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
            Some(inner) => split_top(inner)
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect(),
            None => vec![e.to_string()],
        };
        let mut entry = Vec::new();
        for n in names {
            let q = n.trim_matches(|c| c == '\'' || c == '"');
            if !crate::axis::is_identifier(q) || q == "None" {
                return bad(format!(
                    "PartitionSpec entry {i}: `{n}` is not a mesh axis name"
                ));
            }
            entry.push(q.to_string());
        }
        out.push(entry);
    }
    Ok(out)
}

/// The mesh a `NamedSharding` repr names, `mesh=Mesh('dp': 2, 'tp': 4, axis_types=..)`, must
/// be `mesh` (the same axes, extents and order): a sharding pasted from another mesh is an
/// error, not read on this one. Text without it passes.
///
/// ```
/// use layout::{mesh::Mesh, notation::jax};
/// let t = "NamedSharding(mesh=Mesh('dp': 2, 'tp': 4, axis_types=(Auto, Auto)), spec=P(None, 'tp',), memory_kind=device)";
/// assert!(jax::check_named_mesh(t, &Mesh::parse("dp=2,tp=4").unwrap()).is_ok());
/// assert!(jax::check_named_mesh(t, &Mesh::parse("dp=4,tp=2").unwrap()).is_err());
/// assert_eq!(jax::parse_spec(t).unwrap(), vec![vec![], vec!["tp".to_string()]]);
/// ```
pub fn check_named_mesh(text: &str, mesh: &Mesh) -> Result<(), MeshError> {
    let Some(inner) = text
        .trim()
        .strip_prefix("NamedSharding(")
        .and_then(|s| s.strip_suffix(')'))
    else {
        return Ok(());
    };
    let Some(m) = split_top(inner).into_iter().find_map(|p| {
        p.strip_prefix("mesh=")
            .map(|m| m.trim().to_string())
            .filter(|m| m.starts_with("Mesh("))
    }) else {
        return Ok(());
    };
    let body = m
        .strip_prefix("Mesh(")
        .and_then(|s| s.strip_suffix(')'))
        .unwrap_or("");
    let mut axes = Vec::new();
    for part in split_top(body) {
        if part.contains('=') {
            continue; // axis_types=(..), devices=..: not the shape
        }
        let Some((name, ext)) = part.split_once(':') else {
            return bad(format!(
                "NamedSharding mesh entry `{part}` is not 'name': extent"
            ));
        };
        let name = name.trim().trim_matches(|c| c == '\'' || c == '"');
        let ext: i64 = ext
            .trim()
            .parse()
            .map_err(|_| MeshError(format!("NamedSharding mesh entry `{part}`: not an extent")))?;
        axes.push((name.to_string(), ext));
    }
    if axes != mesh.axes() {
        let shown: Vec<String> = axes.iter().map(|(n, e)| format!("{n}={e}")).collect();
        return bad(format!(
            "the NamedSharding's mesh is {}, not --mesh {mesh}",
            shown.join(",")
        ));
    }
    Ok(())
}

/// The mesh layout of a PartitionSpec.
///
/// ```
/// use layout::{mesh::Mesh, notation::jax};
/// let m = Mesh::parse("dp=2,tp=4").unwrap();
/// let l = jax::to_layout(&m, &[8, 8], &jax::parse_spec("P(None, 'tp')").unwrap()).unwrap();
/// assert_eq!(l.block(6), vec![(0, 8), (4, 6)]);
/// ```
pub fn to_layout(
    mesh: &Mesh,
    shape: &[i64],
    spec: &[Vec<String>],
) -> Result<MeshLayout, MeshError> {
    if spec.len() > shape.len() {
        return bad(format!(
            "PartitionSpec has {} entries for a {}-D tensor",
            spec.len(),
            shape.len()
        ));
    }
    let mut dims = vec![Vec::new(); shape.len()];
    for (d, entry) in spec.iter().enumerate() {
        let mut level = Vec::new();
        for n in entry {
            let a = mesh.axis_index(n).ok_or_else(|| {
                MeshError(format!(
                    "PartitionSpec entry {d}: no mesh axis `{n}` in {mesh}"
                ))
            })?;
            level.push(a);
        }
        if !level.is_empty() {
            dims[d].push(level);
        }
    }
    MeshLayout::new(mesh.clone(), shape.to_vec(), dims, BTreeMap::new(), None)
}

/// The PartitionSpec of a layout, `P('dp', None)`; partial, maximal and uneven nested layouts
/// have none.
pub fn print_spec(l: &MeshLayout) -> Result<String, MeshError> {
    if l.maximal.is_some() || !l.partial.is_empty() {
        return bad("a partial or single-device layout has no PartitionSpec");
    }
    if !l.is_boxed() {
        return bad("a DTensor _StridedShard rule that interleaves has no PartitionSpec (a JAX shard is one box)");
    }
    let mut parts = Vec::new();
    for levels in &l.dims {
        if levels.len() > 1 && !l.is_even() {
            return bad("an uneven nested split has no PartitionSpec (JAX splits flat)");
        }
        let names: Vec<String> = levels
            .iter()
            .flatten()
            .map(|&a| format!("'{}'", l.mesh.name(a)))
            .collect();
        parts.push(match names.len() {
            0 => "None".to_string(),
            1 => names[0].clone(),
            _ => format!("({})", names.join(", ")),
        });
    }
    Ok(format!("P({})", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_read_multi_axis_entries() {
        let m = Mesh::parse("x=2,y=3,z=2").unwrap();
        for text in [
            "P('x', None)",
            "P(None, ('y', 'z'))",
            "P(('z', 'x'), 'y')",
            "P(None, None)",
        ] {
            let l = to_layout(&m, &[12, 12], &parse_spec(text).unwrap()).unwrap();
            assert_eq!(print_spec(&l).unwrap(), text);
        }
        let l = to_layout(
            &m,
            &[12, 12],
            &parse_spec("NamedSharding(mesh, P(('z','x')))").unwrap(),
        )
        .unwrap();
        // rank of (x 1, y 0, z 1) = 1*6 + 0*2 + 1 = 7: piece z*2 + x = 3 of 4 -> rows 9..12.
        assert_eq!(l.block(7)[0], (9, 12));
    }

    #[test]
    fn unknown_axis_and_axis_twice_are_errors() {
        let m = Mesh::parse("dp=2,tp=4").unwrap();
        assert!(to_layout(&m, &[8, 8], &parse_spec("P('pp')").unwrap()).is_err());
        let e = to_layout(&m, &[8, 8], &parse_spec("P('dp', 'dp')").unwrap()).unwrap_err();
        assert!(e.0.contains("used twice"));
        assert!(to_layout(&m, &[8], &parse_spec("P('dp', None)").unwrap()).is_err());
    }
}
