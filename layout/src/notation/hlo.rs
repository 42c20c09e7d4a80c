//! GSPMD / HLO sharding text: `{devices=[2,2]0,1,2,3}`, the iota form
//! `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}`, `{replicated}`,
//! `{maximal device=3}`.
//!
//! `devices=[t_0,...,t_{r-1}]` tiles dim `d` by `t_d` (flat split, tile size `ceil(n/t_d)`), and
//! tile `(i_0,..)` lives on the device at that row-major position of the device list;
//! `last_tile_dim_replicate` adds one more tile dim whose devices hold copies. `<=[8]` is
//! `0..7`; `<=[2,4]T(1,0)` is `0..7` reshaped to (2,4), transposed by (1,0), read row-major.
//! On a named mesh the device list must enumerate the mesh in some order of its axes; that
//! order assigns the axes to tile dims (an extent-1 tile dim takes none). Worked vector: on
//! `dp=2,tp=4`, `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}` is JAX `P(None, 'tp')`.

use std::collections::BTreeMap;

use crate::mesh::{Mesh, MeshError, MeshLayout};

fn bad<T>(what: impl Into<String>) -> Result<T, MeshError> {
    Err(MeshError(what.into()))
}

fn ints(s: &str, what: &str) -> Result<Vec<i64>, MeshError> {
    s.split(',')
        .map(|x| {
            x.trim().parse::<i64>().map_err(|_| {
                MeshError(format!(
                    "HLO sharding: {what}: `{}` is not an integer",
                    x.trim()
                ))
            })
        })
        .collect()
}

/// A parsed HLO sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HloSharding {
    /// `{replicated}`.
    Replicated,
    /// `{maximal device=k}`.
    Maximal(i64),
    /// `{devices=[tiles]list}` with the explicit device list and the replicate flag.
    Tiled {
        /// Tile counts per dim (plus the replication dim when `replicate_last`).
        tiles: Vec<i64>,
        /// Devices in tile order.
        devices: Vec<i64>,
        /// `last_tile_dim_replicate`.
        replicate_last: bool,
    },
}

/// Reads sharding text (braces optional; `sharding={...}` prefix allowed).
pub fn parse(text: &str) -> Result<HloSharding, MeshError> {
    let mut t = text.trim();
    t = t.strip_prefix("sharding=").unwrap_or(t);
    let t = t
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(t)
        .trim();
    if t == "replicated" {
        return Ok(HloSharding::Replicated);
    }
    if let Some(k) = t.strip_prefix("maximal device=") {
        let k: i64 = k
            .trim()
            .parse()
            .map_err(|_| MeshError(format!("HLO sharding: maximal device `{k}`")))?;
        return Ok(HloSharding::Maximal(k));
    }
    let Some(rest) = t.strip_prefix("devices=[") else {
        return bad(format!(
            "HLO sharding `{t}`: expected devices=[..], replicated or maximal"
        ));
    };
    let Some((tiles, rest)) = rest.split_once(']') else {
        return bad("HLO sharding: devices=[ without ]");
    };
    let tiles = ints(tiles, "tile counts")?;
    if tiles.is_empty()
        || tiles.len() > 9
        || tiles
            .iter()
            .any(|&t| !(1..=crate::mesh::MAX_DEVICES).contains(&t))
    {
        return bad("HLO sharding: tile counts must be 1..=2^20, at most 9 of them");
    }
    let mut words = rest.split_whitespace();
    let list = words.next().unwrap_or("");
    let mut replicate_last = false;
    for w in words {
        match w {
            "last_tile_dim_replicate" => replicate_last = true,
            other => return bad(format!("HLO sharding: unsupported attribute `{other}`")),
        }
    }
    let n = tiles
        .iter()
        .try_fold(1i64, |a, &t| {
            a.checked_mul(t).filter(|&p| p <= crate::mesh::MAX_DEVICES)
        })
        .ok_or_else(|| MeshError("HLO sharding: more than 2^20 tiles".into()))?;
    let devices = if let Some(iota) = list.strip_prefix("<=[") {
        let (dims, tr) = iota
            .split_once(']')
            .ok_or_else(|| MeshError("HLO sharding: <=[ without ]".into()))?;
        let dims = ints(dims, "iota dims")?;
        if dims.iter().any(|&d| d < 1) || dims.iter().product::<i64>() != n {
            return bad(format!(
                "HLO sharding: iota dims {dims:?} do not hold {n} devices"
            ));
        }
        let perm: Vec<usize> = match tr.strip_prefix("T(").and_then(|s| s.strip_suffix(')')) {
            Some(p) => ints(p, "transpose")?
                .into_iter()
                .map(|x| x as usize)
                .collect(),
            None if tr.is_empty() => (0..dims.len()).collect(),
            None => return bad(format!("HLO sharding: `{tr}` after the iota dims")),
        };
        let mut sorted = perm.clone();
        sorted.sort();
        if sorted != (0..dims.len()).collect::<Vec<_>>() {
            return bad("HLO sharding: T(..) is not a permutation of the iota dims");
        }
        iota_order(&dims, &perm)
    } else {
        ints(list, "device list")?
    };
    if devices.len() as i64 != n {
        return bad(format!(
            "HLO sharding: {} devices for {n} tiles",
            devices.len()
        ));
    }
    Ok(HloSharding::Tiled {
        tiles,
        devices,
        replicate_last,
    })
}

/// `0..prod(dims)` reshaped to `dims`, transposed by `perm`, read row-major.
fn iota_order(dims: &[i64], perm: &[usize]) -> Vec<i64> {
    let tdims: Vec<i64> = perm.iter().map(|&p| dims[p]).collect();
    let n: i64 = dims.iter().product();
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    (0..n)
        .map(|mut k| {
            let mut v = 0;
            for i in (0..tdims.len()).rev() {
                v += (k % tdims[i]) * strides[perm[i]];
                k /= tdims[i];
            }
            v
        })
        .collect()
}

/// The mesh layout of a sharding on `mesh` for `shape` (see the module doc).
pub fn to_layout(mesh: &Mesh, shape: &[i64], s: &HloSharding) -> Result<MeshLayout, MeshError> {
    match s {
        HloSharding::Replicated => MeshLayout::replicated(mesh.clone(), shape.to_vec()),
        HloSharding::Maximal(k) => MeshLayout::new(
            mesh.clone(),
            shape.to_vec(),
            vec![vec![]; shape.len()],
            BTreeMap::new(),
            Some(*k),
        ),
        HloSharding::Tiled {
            tiles,
            devices,
            replicate_last,
        } => {
            let data_dims = tiles.len() - usize::from(*replicate_last);
            if data_dims != shape.len() {
                return bad(format!(
                    "HLO sharding tiles {} dims; the tensor has {}",
                    data_dims,
                    shape.len()
                ));
            }
            if devices.len() as i64 != mesh.size() {
                return bad(format!(
                    "HLO sharding over {} devices; the mesh {mesh} has {}",
                    devices.len(),
                    mesh.size()
                ));
            }
            let order = axis_order(mesh, devices).ok_or_else(|| {
                MeshError(format!("HLO sharding: the device list does not enumerate the mesh {mesh} in any order of its axes"))
            })?;
            // Cut the axis order into the tile dims by extent.
            let mut dims = vec![Vec::new(); shape.len()];
            let mut it = order.into_iter().peekable();
            for (d, &t) in tiles.iter().enumerate() {
                let mut level = Vec::new();
                let mut prod = 1;
                while prod < t {
                    let Some(a) = it.next() else { break };
                    prod *= mesh.extent(a);
                    level.push(a);
                }
                while prod == t && it.peek().is_some_and(|&a| mesh.extent(a) == 1) {
                    it.next();
                }
                if prod != t {
                    return bad(format!("HLO sharding: tile dim {d} of {t} is not a product of consecutive mesh axes"));
                }
                if d < shape.len() && !level.is_empty() {
                    dims[d].push(level);
                }
            }
            MeshLayout::new(mesh.clone(), shape.to_vec(), dims, BTreeMap::new(), None)
        }
    }
}

/// The order of mesh axes (major first) in which `devices` enumerates the mesh, if any.
fn axis_order(mesh: &Mesh, devices: &[i64]) -> Option<Vec<usize>> {
    let n = mesh.ndim();
    let mut perm: Vec<usize> = (0..n).collect();
    loop {
        let dims: Vec<i64> = (0..n).map(|a| mesh.extent(a)).collect();
        if iota_order(&dims, &perm) == devices {
            return Some(perm);
        }
        // next permutation
        let i = (1..n).rev().find(|&i| perm[i - 1] < perm[i])?;
        let j = (i..n).rev().find(|&j| perm[j] > perm[i - 1])?;
        perm.swap(i - 1, j);
        perm[i..].reverse();
    }
}

/// The sharding of a layout, with the device list in iota form (`<=[N]` or `<=[dims]T(perm)`).
/// Partial and uneven nested layouts have none.
pub fn from_layout(l: &MeshLayout) -> Result<String, MeshError> {
    if let Some(k) = l.maximal {
        return Ok(format!("{{maximal device={k}}}"));
    }
    if !l.partial.is_empty() {
        return bad("a partial layout has no HLO sharding text here");
    }
    if l.dims.iter().any(|lv| lv.len() > 1) && !l.is_even() {
        return bad("an uneven nested split has no HLO sharding (HLO tiles flat)");
    }
    let rep = l.replicated_axes();
    if rep.len() == l.mesh.ndim() {
        return Ok("{replicated}".into());
    }
    let mut order: Vec<usize> = Vec::new();
    let mut tiles = Vec::new();
    for levels in &l.dims {
        let axes: Vec<usize> = levels.iter().flatten().copied().collect();
        tiles.push(axes.iter().map(|&a| l.mesh.extent(a)).product::<i64>());
        order.extend(axes);
    }
    let repl: i64 = rep.iter().map(|&a| l.mesh.extent(a)).product();
    order.extend(&rep);
    let mut text = format!(
        "{{devices=[{}",
        tiles
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    if !rep.is_empty() {
        text += &format!(",{repl}");
    }
    text += "]";
    let n = l.mesh.size();
    if order.iter().enumerate().all(|(i, &a)| i == a) {
        text += &format!("<=[{n}]");
    } else {
        let dims: Vec<String> = (0..l.mesh.ndim())
            .map(|a| l.mesh.extent(a).to_string())
            .collect();
        let perm: Vec<String> = order.iter().map(|a| a.to_string()).collect();
        text += &format!("<=[{}]T({})", dims.join(","), perm.join(","));
    }
    if !rep.is_empty() {
        text += " last_tile_dim_replicate";
    }
    Ok(text + "}")
}

/// The explicit device list form `{devices=[2,2]0,1,2,3}` of a tiled sharding.
pub fn print_explicit(s: &HloSharding) -> String {
    match s {
        HloSharding::Replicated => "{replicated}".into(),
        HloSharding::Maximal(k) => format!("{{maximal device={k}}}"),
        HloSharding::Tiled {
            tiles,
            devices,
            replicate_last,
        } => {
            let t: Vec<String> = tiles.iter().map(|x| x.to_string()).collect();
            let d: Vec<String> = devices.iter().map(|x| x.to_string()).collect();
            let r = if *replicate_last {
                " last_tile_dim_replicate"
            } else {
                ""
            };
            format!("{{devices=[{}]{}{r}}}", t.join(","), d.join(","))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::jax;

    #[test]
    fn iota_form_of_the_spec_is_p_none_tp() {
        let m = Mesh::parse("dp=2,tp=4").unwrap();
        let s = parse("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}").unwrap();
        let HloSharding::Tiled { devices, .. } = &s else {
            panic!()
        };
        assert_eq!(devices, &vec![0, 4, 1, 5, 2, 6, 3, 7]);
        let l = to_layout(&m, &[8, 8], &s).unwrap();
        assert_eq!(jax::print_spec(&l).unwrap(), "P(None, 'tp')");
        assert_eq!(
            from_layout(&l).unwrap(),
            "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
        );
    }

    #[test]
    fn explicit_iota_replicated_maximal_round_trip() {
        let m = Mesh::parse("a=2,b=3").unwrap();
        for text in [
            "{devices=[2,3]<=[6]}",
            "{devices=[3,2]<=[2,3]T(1,0)}",
            "{replicated}",
            "{maximal device=5}",
            "{devices=[2,1,3]<=[6] last_tile_dim_replicate}",
        ] {
            let s = parse(text).unwrap();
            let l = to_layout(&m, &[6, 6], &s).unwrap();
            assert_eq!(from_layout(&l).unwrap(), text);
            assert_eq!(
                to_layout(&m, &[6, 6], &parse(&print_explicit(&s)).unwrap()).unwrap(),
                l
            );
        }
        let s = parse("{devices=[2,2]0,1,2,3}").unwrap();
        let m = Mesh::parse("x=2,y=2").unwrap();
        let l = to_layout(&m, &[4, 4], &s).unwrap();
        assert_eq!(jax::print_spec(&l).unwrap(), "P('x', 'y')");
    }

    #[test]
    fn a_device_order_no_axis_order_gives_is_refused() {
        let m = Mesh::parse("x=2,y=2").unwrap();
        let s = parse("{devices=[2,2]0,3,1,2}").unwrap();
        assert!(to_layout(&m, &[4, 4], &s).is_err());
        assert!(parse("{devices=[2,2]0,1,2}").is_err());
        assert!(parse("{devices=[2,2]<=[2,2]T(0,0)}").is_err());
    }
}
