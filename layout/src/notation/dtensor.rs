//! PyTorch DTensor placements: `[Shard(0), Replicate()]`, `Partial("sum")`,
//! `_StridedShard(0, split_factor=4)`, and the short forms DTensor prints (`S(0)`, `R`, `P(sum)`).
//!
//! A negative tensor dim counts from the end, as PyTorch normalizes it by the tensor's rank
//! (`Shard(-1)` of a 2-D tensor is `Shard(1)`): it is kept as written and normalized where the
//! rank is known ([`to_layout`], [`normalize`]); outside `-ndim..ndim` it is refused by name.
//!
//! `placements[i]` describes mesh dim `i`. Several `Shard(d)` on one tensor dim nest left to right
//! (mesh dim 0 cuts first, torch.chunk's rule at each level). `_StridedShard(d, split_factor=f)`
//! on mesh dim `i` is the right-to-left order FSDP over TP produces: it cuts INSIDE the pieces of
//! the following mesh dims on `d` whose extents multiply to `f` (so `[_StridedShard(0, 4),
//! Shard(0)]` on `dp=2,tp=4` is tp outer, dp inner). Where torch's own rule for a dim is not a
//! nest of chunks (uneven sizes, a split factor no later mesh dims make up), the dim keeps
//! DTensor's rule itself ([`MeshLayout::strided`]): each device then holds the runs
//! `_StridedShard._split_tensor` gives it, several boxes where the rule interleaves.
//!
//! Worked vector: `[Shard(0), Replicate()]` on `dp=2,tp=4`, shape (8,8): rank 5 (dp 1, tp 1)
//! holds rows 4..8, all columns.

use std::collections::BTreeMap;

use crate::mesh::{Mesh, MeshError, MeshLayout, ReduceOp};

/// One DTensor placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// `Shard(d)` (`d < 0` counts from the last dim).
    Shard(i64),
    /// `_StridedShard(d, split_factor=f)` (`d < 0` counts from the last dim).
    StridedShard(i64, i64),
    /// `Replicate()`.
    Replicate,
    /// `Partial(op)`.
    Partial(ReduceOp),
}

fn bad<T>(what: impl Into<String>) -> Result<T, MeshError> {
    Err(MeshError(what.into()))
}

/// Splits `s` at top-level commas (outside brackets and quotes).
pub(crate) fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut quote) = (Vec::new(), String::new(), 0i32, None);
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(ch),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|p| p.trim().to_string()).collect()
}

fn parse_placement(p: &str, i: usize) -> Result<Placement, MeshError> {
    let (name, args) = match p.split_once('(') {
        Some((n, rest)) => match rest.strip_suffix(')') {
            Some(a) => (n.trim(), a.trim()),
            None => return bad(format!("placement {i} `{p}`: missing `)`")),
        },
        None => (p.trim(), ""),
    };
    let args: Vec<String> = split_top(args)
        .into_iter()
        .map(|a| match a.split_once('=') {
            Some((_, v)) => v.trim().to_string(),
            None => a,
        })
        .collect();
    let int = |k: usize| -> Result<i64, MeshError> {
        args.get(k)
            .and_then(|a| a.parse::<i64>().ok())
            .ok_or_else(|| {
                MeshError(format!(
                    "placement {i} `{p}`: argument {k} is not an integer"
                ))
            })
    };
    match name {
        "Shard" | "S" => {
            let d = int(0)?;
            if args.len() != 1 {
                return bad(format!("placement {i} `{p}`: Shard takes one dim"));
            }
            Ok(Placement::Shard(d))
        }
        "_StridedShard" | "_S" => {
            let (d, f) = (int(0)?, int(1)?);
            if f < 1 || args.len() != 2 {
                return bad(format!("placement {i} `{p}`: _StridedShard(dim, split_factor >= 1)"));
            }
            Ok(Placement::StridedShard(d, f))
        }
        "Replicate" | "R" if args.is_empty() => Ok(Placement::Replicate),
        "Partial" | "P" => {
            let op = args.first().map(|a| a.trim_matches(|c| c == '"' || c == '\''));
            match op {
                None => Ok(Placement::Partial(ReduceOp::Sum)),
                Some(o) => ReduceOp::parse(o).map(Placement::Partial).ok_or_else(|| {
                    MeshError(format!("placement {i} `{p}`: unknown reduction `{o}` (sum, avg, max, min)"))
                }),
            }
        }
        _ => bad(format!(
            "placement {i} `{p}`: expected Shard(d), _StridedShard(d, f), Replicate() or Partial(op)"
        )),
    }
}

/// Reads a placement list `[Shard(0), Replicate()]` (brackets or parentheses optional).
pub fn parse_placements(text: &str) -> Result<Vec<Placement>, MeshError> {
    let t = text.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .or_else(|| t.strip_prefix('(').and_then(|s| s.strip_suffix(')')))
        .unwrap_or(t);
    split_top(inner)
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, p)| parse_placement(p, i))
        .collect()
}

/// The placements with every tensor dim in `0..ndim` (a negative dim plus `ndim`, as PyTorch
/// normalizes it), or the first placement whose dim is outside `-ndim..ndim`, by its index and
/// text.
///
/// ```
/// use layout::notation::dtensor::{normalize, parse_placements, Placement};
/// let p = parse_placements("[Shard(-1), Replicate()]").unwrap();
/// assert_eq!(normalize(&p, 2).unwrap()[0], Placement::Shard(1));
/// assert!(normalize(&p, 0).unwrap_err().0.contains("placement 0 `Shard(-1)`"));
/// ```
pub fn normalize(placements: &[Placement], ndim: usize) -> Result<Vec<Placement>, MeshError> {
    let n = ndim as i64;
    placements
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let fix = |d: i64| -> Result<i64, MeshError> {
                let e = if d < 0 { d + n } else { d };
                if (0..n).contains(&e) {
                    return Ok(e);
                }
                bad(format!(
                    "placement {i} `{}` names tensor dim {d} of a {ndim}-D tensor (dims -{ndim}..{})",
                    print_placement(p),
                    n - 1
                ))
            };
            Ok(match *p {
                Placement::Shard(d) => Placement::Shard(fix(d)?),
                Placement::StridedShard(d, f) => Placement::StridedShard(fix(d)?, f),
                ref other => other.clone(),
            })
        })
        .collect()
}

/// The mesh layout of `placements` on `mesh` for a tensor of `shape` (negative dims normalized
/// by its rank, [`normalize`]).
///
/// ```
/// use layout::{mesh::Mesh, notation::dtensor};
/// let m = Mesh::parse("dp=2,tp=4").unwrap();
/// let p = dtensor::parse_placements("[Shard(0), Replicate()]").unwrap();
/// let l = dtensor::to_layout(&m, &[8, 8], &p).unwrap();
/// assert_eq!(l.block(5), vec![(4, 8), (0, 8)]);
/// ```
pub fn to_layout(
    mesh: &Mesh,
    shape: &[i64],
    placements: &[Placement],
) -> Result<MeshLayout, MeshError> {
    if placements.len() != mesh.ndim() {
        return bad(format!(
            "{} placements for a mesh of {} dims ({mesh})",
            placements.len(),
            mesh.ndim()
        ));
    }
    let placements = normalize(placements, shape.len())?;
    let mut dims: Vec<Vec<(usize, i64)>> = vec![Vec::new(); shape.len()];
    let mut partial = BTreeMap::new();
    for (i, p) in placements.iter().enumerate() {
        match *p {
            Placement::Shard(d) | Placement::StridedShard(d, _) => {
                let d = d as usize;
                let f = if let Placement::StridedShard(_, f) = *p {
                    f
                } else {
                    1
                };
                dims[d].push((i, f));
            }
            Placement::Replicate => {}
            Placement::Partial(op) => {
                partial.insert(i, op);
            }
        }
    }
    let mut levels = Vec::new();
    let mut strided = Vec::new();
    for (d, list) in dims.iter().enumerate() {
        // Move each strided entry (right to left) inside the following entries it splits.
        let mut order: Vec<usize> = list.iter().map(|e| e.0).collect();
        let mut nests = true;
        for k in (0..list.len()).rev() {
            let (a, f) = list[k];
            if f == 1 {
                continue;
            }
            let pos = order.iter().position(|&x| x == a).unwrap_or(0);
            let (mut prod, mut at) = (1i64, pos);
            while prod < f && at + 1 < order.len() {
                at += 1;
                prod = prod.saturating_mul(mesh.extent(order[at]));
            }
            if prod != f {
                nests = false;
                break;
            }
            let x = order.remove(pos);
            order.insert(at, x);
        }
        if list.iter().any(|e| e.1 > 1) {
            // DTensor's own rule decides; `with_strided` keeps the nest when it agrees.
            strided.push((d, list.clone()));
            if !nests {
                order = list.iter().map(|e| e.0).collect();
            }
        }
        levels.push(order.into_iter().map(|a| vec![a]).collect());
    }
    let mut l = MeshLayout::new(mesh.clone(), shape.to_vec(), levels, partial, None)?;
    for (d, list) in strided {
        l = l.with_strided(d, list)?;
    }
    Ok(l)
}

/// The text DTensor's constructors take: `Shard(0)`, `_StridedShard(0, split_factor=4)`,
/// `Replicate()`, `Partial(sum)`.
pub fn print_placement(p: &Placement) -> String {
    match p {
        Placement::Shard(d) => format!("Shard({d})"),
        Placement::StridedShard(d, f) => format!("_StridedShard({d}, split_factor={f})"),
        Placement::Replicate => "Replicate()".into(),
        Placement::Partial(op) => format!("Partial({})", op.name()),
    }
}

/// The placements of a layout (inverse of [`to_layout`]); a multi-axis level of an uneven layout
/// or a maximal layout has no DTensor form.
pub fn from_layout(l: &MeshLayout) -> Result<Vec<Placement>, MeshError> {
    if l.maximal.is_some() {
        return bad("a single-device (maximal) layout has no DTensor placements");
    }
    let nested;
    let l = if l.dims.iter().flatten().any(|lv| lv.len() > 1) {
        nested = l.nested().ok_or_else(|| {
            MeshError("an uneven multi-axis (flat) split has no DTensor form".into())
        })?;
        &nested
    } else {
        l
    };
    let mut out = vec![Placement::Replicate; l.mesh.ndim()];
    for (a, op) in &l.partial {
        out[*a] = Placement::Partial(*op);
    }
    for (&d, list) in &l.strided {
        for &(a, f) in list {
            out[a] = if f > 1 {
                Placement::StridedShard(d as i64, f)
            } else {
                Placement::Shard(d as i64)
            };
        }
    }
    for (d, levels) in l.dims.iter().enumerate() {
        if l.strided.contains_key(&d) {
            continue;
        }
        let order: Vec<usize> = levels.iter().flatten().copied().collect();
        for (i, &a) in order.iter().enumerate() {
            let f: i64 = order[..i]
                .iter()
                .filter(|&&b| b > a)
                .map(|&b| l.mesh.extent(b))
                .product();
            out[a] = if f > 1 {
                Placement::StridedShard(d as i64, f)
            } else {
                Placement::Shard(d as i64)
            };
        }
    }
    Ok(out)
}

/// `[Shard(0), Replicate()]`.
pub fn print_placements(ps: &[Placement]) -> String {
    let v: Vec<String> = ps.iter().map(print_placement).collect();
    format!("[{}]", v.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_round_trip_through_the_mesh_model() {
        let m = Mesh::parse("dp=2,tp=4").unwrap();
        for text in [
            "[Shard(0), Replicate()]",
            "[Replicate(), Shard(1)]",
            "[Shard(0), Shard(0)]",
            "[_StridedShard(0, split_factor=4), Shard(0)]",
            "[Partial(sum), Shard(1)]",
            "[Partial(avg), Partial(max)]",
        ] {
            let p = parse_placements(text).unwrap();
            let l = to_layout(&m, &[8, 8], &p).unwrap();
            assert_eq!(print_placements(&from_layout(&l).unwrap()), text);
        }
    }

    #[test]
    fn negative_dims_count_from_the_last_dim() {
        let m = Mesh::parse("dp=2,tp=4").unwrap();
        for (neg, pos, shape) in [
            (
                "[Shard(-1), Replicate()]",
                "[Shard(1), Replicate()]",
                vec![8, 8],
            ),
            ("[Shard(-2), S(-1)]", "[Shard(0), Shard(1)]", vec![8, 8]),
            (
                "[Shard(-3), Shard(-1)]",
                "[Shard(0), Shard(2)]",
                vec![8, 4, 8],
            ),
            (
                "[_StridedShard(-1, split_factor=4), Shard(-1)]",
                "[_StridedShard(1, split_factor=4), Shard(1)]",
                vec![8, 16],
            ),
        ] {
            let a = to_layout(&m, &shape, &parse_placements(neg).unwrap()).unwrap();
            let b = to_layout(&m, &shape, &parse_placements(pos).unwrap()).unwrap();
            assert_eq!(a, b, "{neg}");
            // Printed as written; the layout prints its normalized placements.
            assert_eq!(
                print_placements(&parse_placements(neg).unwrap()),
                neg.replace("S(-1)", "Shard(-1)")
            );
            assert_eq!(print_placements(&from_layout(&a).unwrap()), pos);
        }
        for (p, shape, what) in [
            ("[Shard(-3), Replicate()]", vec![8, 8], "placement 0 `Shard(-3)` names tensor dim -3 of a 2-D tensor (dims -2..1)"),
            ("[Replicate(), Shard(2)]", vec![8, 8], "placement 1 `Shard(2)` names tensor dim 2 of a 2-D tensor"),
            ("[Replicate(), _StridedShard(-2, split_factor=2)]", vec![8], "placement 1 `_StridedShard(-2, split_factor=2)` names tensor dim -2 of a 1-D tensor"),
        ] {
            let e = to_layout(&m, &shape, &parse_placements(p).unwrap()).unwrap_err();
            assert!(e.0.contains(what), "{p}: {e}");
        }
    }

    #[test]
    fn strided_shard_puts_the_later_mesh_dim_outside() {
        let m = Mesh::parse("dp=2,tp=4").unwrap();
        let p = parse_placements("[_StridedShard(0, split_factor=4), Shard(0)]").unwrap();
        let l = to_layout(&m, &[16], &p).unwrap();
        assert_eq!(l.dims[0], vec![vec![1], vec![0]]);
        // rank (dp 1, tp 2): tp piece 2 is rows 8..12, dp piece 1 of it is 10..12.
        assert_eq!(l.block(6), vec![(10, 12)]);
    }

    #[test]
    fn short_forms_and_errors() {
        assert_eq!(
            parse_placements("(S(1), R, P)").unwrap(),
            vec![
                Placement::Shard(1),
                Placement::Replicate,
                Placement::Partial(ReduceOp::Sum)
            ]
        );
        let m = Mesh::parse("dp=2,tp=2").unwrap();
        let e = to_layout(
            &m,
            &[4, 4],
            &parse_placements("[Shard(2), Replicate()]").unwrap(),
        );
        assert!(e.unwrap_err().0.contains("tensor dim 2"));
        assert!(parse_placements("[Shard(x)]").is_err());
        assert!(parse_placements("[Shard(0, 1)]").is_err());
        assert!(parse_placements("[Partial(prod)]").is_err());
    }

    #[test]
    fn uneven_strided_shard_follows_dtensors_own_split() {
        // pytorch issue 168134's example as torch 2.15 splits it: [0,1,2,3,4] over
        // _StridedShard(0, split_factor=2) on 2 ranks gives rank 0 [0, 1, 3], rank 1 [2, 4].
        let m = Mesh::parse("gpuid=2").unwrap();
        let p = parse_placements("[_StridedShard(0, split_factor=2)]").unwrap();
        let l = to_layout(&m, &[5], &p).unwrap();
        assert!(!l.is_boxed());
        assert_eq!(l.runs(0), vec![vec![(0, 2), (3, 4)]]);
        assert_eq!(l.runs(1), vec![vec![(2, 3), (4, 5)]]);
        assert_eq!(l.local_shape(), vec![3]);
        assert_eq!(l.places(&[3]), vec![(0, vec![2])]);
        assert_eq!(
            print_placements(&from_layout(&l).unwrap()),
            "[_StridedShard(0, split_factor=2)]"
        );
        // FSDP over TP, 9 rows on a=4, b=2: torch's Shard(0) on b chunks rank (a 3)'s local
        // [8] as [8], [] where the nest of chunks would give b 1 row 8.
        let m = Mesh::parse("a=4,b=2").unwrap();
        let p = parse_placements("[_StridedShard(0, split_factor=2), Shard(0)]").unwrap();
        let l = to_layout(&m, &[9, 2], &p).unwrap();
        assert!(!l.is_boxed());
        assert_eq!(l.runs(6)[0], vec![(8, 9)]);
        assert_eq!(l.runs(7)[0], vec![]);
        assert!(l.pieces(7).is_empty());
        // 25 rows on a=4, b=2: rank (a 3, b 0) holds rows 12 and 22, two boxes.
        let l = to_layout(&m, &[25, 3], &p).unwrap();
        assert_eq!(l.runs(6)[0], vec![(12, 13), (22, 23)]);
        assert_eq!(
            l.pieces(6),
            vec![
                (vec![(12, 13), (0, 3)], vec![0, 0]),
                (vec![(22, 23), (0, 3)], vec![1, 0])
            ]
        );
        // Where torch's rule is the nest of chunks (12 rows on a=2, b=4), the layout is the nest.
        let m = Mesh::parse("a=2,b=4").unwrap();
        let p = parse_placements("[_StridedShard(0, split_factor=4), Shard(0)]").unwrap();
        let l = to_layout(&m, &[12], &p).unwrap();
        assert!(l.is_boxed());
        assert_eq!(l.dims[0], vec![vec![1], vec![0]]);
    }
}
