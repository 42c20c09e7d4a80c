//! GSPMD / HLO sharding text: `{devices=[2,2]0,1,2,3}`, the iota form
//! `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}`, the subgroup form
//! `{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}`, `{replicated}`, `{unreduced}`,
//! `{maximal device=3}`.
//!
//! `devices=[t_0,...,t_{r-1}]` tiles dim `d` by `t_d` (flat split, tile size `ceil(n/t_d)`), and
//! tile `(i_0,..)` lives on the device at that row-major position of the device list. Trailing
//! tile dims are subgroups: `last_tile_dim_replicate` (one dim whose devices hold copies) or
//! `last_tile_dims={..}`, one type per trailing dim, in XLA's words: `replicated` (copies),
//! `unreduced` (each device holds an addend and the value is their sum: a partial sum over those
//! devices, DTensor's `Partial(sum)`), `manual` (refused: in a shard_map each device's buffer is
//! its own value, not a piece of one tensor). `{unreduced}` is unreduced over every device.
//! `<=[8]` is `0..7`; `<=[2,4]T(1,0)` is `0..7` reshaped to (2,4), transposed by (1,0), read
//! row-major.
//!
//! Device ids are XLA's logical ids: positions in the executable's device assignment, which for
//! a program on a mesh is the mesh's device order (JAX prints a mesh over permuted devices with
//! the same iota lists). So on a mesh `dp=2,tp=2 devices=[0,2,1,3]`, id 1 is rank 2. When the
//! list enumerates the mesh in some order of its axes, that order assigns the axes to tile dims
//! (an extent-1 tile dim takes none); otherwise the layout lives on a mesh made of the tile dims
//! (`t0`, `t1`, ..), whose device order is the list: still every device's block, on the same
//! ranks. Worked vector: on `dp=2,tp=4`, `{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}`
//! is JAX `P(None, 'tp')`.

use std::collections::BTreeMap;

use crate::mesh::{Mesh, MeshError, MeshLayout, ReduceOp};

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

/// The type of a trailing (subgroup) tile dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subgroup {
    /// `replicated`: copies.
    Replicated,
    /// `unreduced`: addends of a sum.
    Unreduced,
    /// `manual`: per-device values (shard_map); not modelled.
    Manual,
}

impl Subgroup {
    /// XLA's word.
    pub fn name(self) -> &'static str {
        match self {
            Subgroup::Replicated => "replicated",
            Subgroup::Unreduced => "unreduced",
            Subgroup::Manual => "manual",
        }
    }
}

/// A parsed HLO sharding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HloSharding {
    /// `{replicated}`.
    Replicated,
    /// `{unreduced}`: a partial sum over every device.
    Unreduced,
    /// `{manual}`.
    Manual,
    /// `{maximal device=k}`.
    Maximal(i64),
    /// `{devices=[tiles]list}` with the explicit device list and the trailing subgroups.
    Tiled {
        /// Tile counts per dim (then one per subgroup).
        tiles: Vec<i64>,
        /// Devices in tile order (logical ids).
        devices: Vec<i64>,
        /// `last_tile_dim_replicate`.
        replicate_last: bool,
        /// `last_tile_dims={..}`: the types of the trailing tile dims.
        last_tile_dims: Vec<Subgroup>,
    },
}

impl HloSharding {
    /// The types of the trailing tile dims (`last_tile_dim_replicate` is one `replicated`).
    pub fn subgroups(&self) -> Vec<Subgroup> {
        match self {
            HloSharding::Tiled {
                replicate_last: true,
                ..
            } => vec![Subgroup::Replicated],
            HloSharding::Tiled { last_tile_dims, .. } => last_tile_dims.clone(),
            _ => vec![],
        }
    }
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
    match t {
        "replicated" => return Ok(HloSharding::Replicated),
        "unreduced" => return Ok(HloSharding::Unreduced),
        "manual" => return Ok(HloSharding::Manual),
        _ => {}
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
            "HLO sharding `{t}`: expected devices=[..], replicated, unreduced, manual or maximal"
        ));
    };
    let Some((tiles, rest)) = rest.split_once(']') else {
        return bad("HLO sharding: devices=[ without ]");
    };
    let tiles = ints(tiles, "tile counts")?;
    if tiles.is_empty()
        || tiles.len() > crate::mesh::MAX_DIMS + 3
        || tiles
            .iter()
            .any(|&t| !(1..=crate::mesh::MAX_DEVICES).contains(&t))
    {
        return bad("HLO sharding: tile counts must be 1..=2^20, at most 11 of them");
    }
    let rest = rest.trim_start();
    let (list, mut attrs) = rest.split_at(rest.find(char::is_whitespace).unwrap_or(rest.len()));
    let mut replicate_last = false;
    let mut last_tile_dims = Vec::new();
    loop {
        attrs = attrs.trim_start();
        if attrs.is_empty() {
            break;
        }
        if let Some(r) = attrs.strip_prefix("last_tile_dims={") {
            let (types, r) = r
                .split_once('}')
                .ok_or_else(|| MeshError("HLO sharding: last_tile_dims={ without }".into()))?;
            for w in types.split(',').map(str::trim) {
                last_tile_dims.push(match w {
                    "replicated" => Subgroup::Replicated,
                    "unreduced" => Subgroup::Unreduced,
                    "manual" => Subgroup::Manual,
                    other => {
                        return bad(format!(
                            "HLO sharding: last_tile_dims type `{other}` (replicated, unreduced or manual)"
                        ))
                    }
                });
            }
            attrs = r;
        } else if let Some(r) = attrs.strip_prefix("last_tile_dim_replicate") {
            replicate_last = true;
            attrs = r;
        } else {
            let w = attrs.split_whitespace().next().unwrap_or(attrs);
            return bad(format!("HLO sharding: unsupported attribute `{w}`"));
        }
    }
    if replicate_last && !last_tile_dims.is_empty() {
        return bad("HLO sharding: both last_tile_dim_replicate and last_tile_dims");
    }
    if replicate_last as usize + last_tile_dims.len() >= tiles.len() {
        return bad(format!(
            "HLO sharding: {} tile dims leave no data dim after {} subgroup dim(s)",
            tiles.len(),
            replicate_last as usize + last_tile_dims.len()
        ));
    }
    let n = tiles
        .iter()
        .try_fold(1i64, |a, &t| {
            a.checked_mul(t).filter(|&p| p <= crate::mesh::MAX_DEVICES)
        })
        .ok_or_else(|| MeshError("HLO sharding: more than 2^20 tiles".into()))?;
    let devices = if let Some(iota) = list.strip_prefix("<=") {
        let devices = iota_list(iota)?;
        if devices.len() as i64 != n {
            return bad(format!(
                "HLO sharding: iota dims of {} devices for {n} tiles",
                devices.len()
            ));
        }
        devices
    } else {
        ints(list, "device list")?
    };
    if devices.len() as i64 != n {
        return bad(format!(
            "HLO sharding: {} devices for {n} tiles",
            devices.len()
        ));
    }
    let mut seen = vec![false; devices.len()];
    for &d in &devices {
        if d < 0 || d >= n || std::mem::replace(&mut seen[d as usize], true) {
            return bad(format!(
                "HLO sharding: the device list is not a permutation of 0..{n} (device {d})"
            ));
        }
    }
    Ok(HloSharding::Tiled {
        tiles,
        devices,
        replicate_last,
        last_tile_dims,
    })
}

/// The list an iota form denotes: `[2,4]T(1,0)` (the text after `<=`) is
/// `[0, 4, 1, 5, 2, 6, 3, 7]`; `[8]` is `0..7`.
pub(crate) fn iota_list(text: &str) -> Result<Vec<i64>, MeshError> {
    let iota = text
        .trim()
        .strip_prefix('[')
        .ok_or_else(|| MeshError(format!("HLO iota `{text}`: expected [dims]")))?;
    let (dims, tr) = iota
        .split_once(']')
        .ok_or_else(|| MeshError("HLO sharding: <=[ without ]".into()))?;
    let dims = ints(dims, "iota dims")?;
    let n = dims.iter().try_fold(1i64, |a, &d| {
        a.checked_mul(d).filter(|&p| p <= crate::mesh::MAX_DEVICES)
    });
    if dims.iter().any(|&d| d < 1) || n.is_none() {
        return bad(format!("HLO sharding: iota dims {dims:?}"));
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
    Ok(iota_order(&dims, &perm))
}

/// `0..prod(dims)` reshaped to `dims`, transposed by `perm`, read row-major (`<=[2,4]T(1,0)`:
/// `[0, 4, 1, 5, 2, 6, 3, 7]`). HLO replica groups (`hlo_module`) use the same lists.
pub(crate) fn iota_order(dims: &[i64], perm: &[usize]) -> Vec<i64> {
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

const MANUAL: &str = "a manual (shard_map) sharding is not modelled: each device's buffer is its own value, not a piece of one tensor";

/// The mesh layout of a sharding on `mesh` for `shape` (see the module doc).
pub fn to_layout(mesh: &Mesh, shape: &[i64], s: &HloSharding) -> Result<MeshLayout, MeshError> {
    match s {
        HloSharding::Replicated => MeshLayout::replicated(mesh.clone(), shape.to_vec()),
        HloSharding::Unreduced => MeshLayout::new(
            mesh.clone(),
            shape.to_vec(),
            vec![vec![]; shape.len()],
            (0..mesh.ndim()).map(|a| (a, ReduceOp::Sum)).collect(),
            None,
        ),
        HloSharding::Manual => bad(format!("HLO sharding `{{manual}}`: {MANUAL}")),
        HloSharding::Maximal(k) => {
            if *k < 0 || *k >= mesh.size() {
                return bad(format!(
                    "maximal device {k} is not in a mesh of {} devices",
                    mesh.size()
                ));
            }
            MeshLayout::new(
                mesh.clone(),
                shape.to_vec(),
                vec![vec![]; shape.len()],
                BTreeMap::new(),
                Some(mesh.device_at(*k)),
            )
        }
        HloSharding::Tiled { tiles, devices, .. } => {
            let types = s.subgroups();
            if types.contains(&Subgroup::Manual) {
                return bad(format!(
                    "HLO sharding `last_tile_dims={{manual}}`: {MANUAL}"
                ));
            }
            let data_dims = tiles.len() - types.len();
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
            match axis_order(mesh, devices).and_then(|o| on_axes(mesh, tiles, &types, o)) {
                Some((dims, partial)) => {
                    MeshLayout::new(mesh.clone(), shape.to_vec(), dims, partial, None)
                }
                None => on_tile_mesh(mesh, shape, tiles, devices, &types),
            }
        }
    }
}

/// Per tile dim the mesh axes it takes, cutting `order` by extent (an extent-1 tile dim takes
/// none), as data levels and partial axes; `None` when the tile counts do not fall on axes.
fn on_axes(mesh: &Mesh, tiles: &[i64], types: &[Subgroup], order: Vec<usize>) -> Option<Cuts> {
    let data_dims = tiles.len() - types.len();
    let mut dims = vec![Vec::new(); data_dims];
    let mut partial = BTreeMap::new();
    let mut it = order.into_iter().peekable();
    for (d, &t) in tiles.iter().enumerate() {
        let mut level = Vec::new();
        let mut prod = 1;
        while prod < t {
            let a = it.next()?;
            prod *= mesh.extent(a);
            level.push(a);
        }
        while prod == t && it.peek().is_some_and(|&a| mesh.extent(a) == 1) {
            it.next();
        }
        if prod != t {
            return None;
        }
        if d < data_dims {
            if !level.is_empty() {
                dims[d].push(level);
            }
        } else if types[d - data_dims] == Subgroup::Unreduced {
            partial.extend(level.into_iter().map(|a| (a, ReduceOp::Sum)));
        }
    }
    Some((dims, partial))
}

/// Data levels per tensor dim and partial axes.
type Cuts = (Vec<Vec<Vec<usize>>>, BTreeMap<usize, ReduceOp>);

/// The layout on the mesh of the tile dims (`t0`, `t1`, .., extent-1 dims dropped) whose device
/// order is the list, read through `mesh`'s own device order.
fn on_tile_mesh(
    mesh: &Mesh,
    shape: &[i64],
    tiles: &[i64],
    devices: &[i64],
    types: &[Subgroup],
) -> Result<MeshLayout, MeshError> {
    let data_dims = tiles.len() - types.len();
    let kept: Vec<usize> = (0..tiles.len()).filter(|&k| tiles[k] > 1).collect();
    let axes: Vec<(String, i64)> = if kept.is_empty() {
        vec![("t0".into(), 1)]
    } else {
        kept.iter().map(|&k| (format!("t{k}"), tiles[k])).collect()
    };
    let ranks: Vec<i64> = devices.iter().map(|&p| mesh.device_at(p)).collect();
    let tm = Mesh::new(axes)?.with_devices(ranks)?;
    let mut dims = vec![Vec::new(); data_dims];
    let mut partial = BTreeMap::new();
    for (a, &k) in kept.iter().enumerate() {
        if k < data_dims {
            dims[k].push(vec![a]);
        } else if types[k - data_dims] == Subgroup::Unreduced {
            partial.insert(a, ReduceOp::Sum);
        }
    }
    MeshLayout::new(tm, shape.to_vec(), dims, partial, None)
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

/// The sharding of a layout, with the device list in iota form (`<=[N]` or `<=[dims]T(perm)`)
/// of mesh positions (the mesh's device order carries the ranks), subgroups in XLA's order
/// (`unreduced` before `replicated`). Partial layouts other than sum and uneven nested layouts
/// have none.
pub fn from_layout(l: &MeshLayout) -> Result<String, MeshError> {
    if let Some(k) = l.maximal {
        return Ok(format!("{{maximal device={}}}", l.mesh.position_of(k)));
    }
    if !l.is_boxed() {
        return bad("a DTensor _StridedShard rule that interleaves has no HLO sharding (an HLO tile is one box)");
    }
    if let Some((_, op)) = l.partial.iter().find(|(_, &o)| o != ReduceOp::Sum) {
        return bad(format!(
            "a partial {} layout has no HLO sharding (XLA's unreduced is a sum)",
            op.name()
        ));
    }
    if l.dims.iter().any(|lv| lv.len() > 1) && !l.is_even() {
        return bad("an uneven nested split has no HLO sharding (HLO tiles flat)");
    }
    let rep = l.replicated_axes();
    let part: Vec<usize> = l.partial.keys().copied().collect();
    let cut = l.dims.iter().flatten().count() > 0;
    if !cut && part.is_empty() {
        return Ok("{replicated}".into());
    }
    if !cut && rep.iter().all(|&a| l.mesh.extent(a) == 1) {
        return Ok("{unreduced}".into());
    }
    let mut order: Vec<usize> = Vec::new();
    let mut tiles = Vec::new();
    for levels in &l.dims {
        let axes: Vec<usize> = levels.iter().flatten().copied().collect();
        tiles.push(axes.iter().map(|&a| l.mesh.extent(a)).product::<i64>());
        order.extend(axes);
    }
    let mut kinds = Vec::new();
    for (axes, kind) in [(&part, "unreduced"), (&rep, "replicated")] {
        if !axes.is_empty() {
            tiles.push(axes.iter().map(|&a| l.mesh.extent(a)).product::<i64>());
            order.extend(axes.iter());
            kinds.push(kind);
        }
    }
    let mut text = format!(
        "{{devices=[{}]",
        tiles
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
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
    if kinds == ["replicated"] {
        text += " last_tile_dim_replicate";
    } else if !kinds.is_empty() {
        text += &format!(" last_tile_dims={{{}}}", kinds.join(", "));
    }
    Ok(text + "}")
}

/// The explicit device list form `{devices=[2,2]0,1,2,3}` of a tiled sharding.
pub fn print_explicit(s: &HloSharding) -> String {
    match s {
        HloSharding::Replicated => "{replicated}".into(),
        HloSharding::Unreduced => "{unreduced}".into(),
        HloSharding::Manual => "{manual}".into(),
        HloSharding::Maximal(k) => format!("{{maximal device={k}}}"),
        HloSharding::Tiled {
            tiles,
            devices,
            replicate_last,
            last_tile_dims,
        } => {
            let t: Vec<String> = tiles.iter().map(|x| x.to_string()).collect();
            let d: Vec<String> = devices.iter().map(|x| x.to_string()).collect();
            let r = if *replicate_last {
                " last_tile_dim_replicate".to_string()
            } else if !last_tile_dims.is_empty() {
                let k: Vec<&str> = last_tile_dims.iter().map(|s| s.name()).collect();
                format!(" last_tile_dims={{{}}}", k.join(", "))
            } else {
                String::new()
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
    fn a_device_list_in_no_axis_order_lives_on_the_tile_mesh() {
        let m = Mesh::parse("x=2,y=2").unwrap();
        let s = parse("{devices=[2,2]0,3,1,2}").unwrap();
        let l = to_layout(&m, &[4, 4], &s).unwrap();
        assert_eq!(l.mesh.to_string(), "t0=2,t1=2 devices=[0,3,1,2]");
        // Tile (0,1) on device 3, tile (1,0) on device 1, tile (1,1) on device 2.
        assert_eq!(l.block(3), vec![(0, 2), (2, 4)]);
        assert_eq!(l.block(1), vec![(2, 4), (0, 2)]);
        assert_eq!(l.block(2), vec![(2, 4), (2, 4)]);
        // Tile counts that are no product of the mesh's axes, too: a=4 tiled (2,2).
        let l = to_layout(
            &Mesh::parse("a=4").unwrap(),
            &[4, 4],
            &parse("{devices=[2,2]<=[4]}").unwrap(),
        )
        .unwrap();
        assert_eq!(l.block(1), vec![(0, 2), (2, 4)]);
        assert!(parse("{devices=[2,2]0,1,2}").is_err());
        assert!(parse("{devices=[2,2]0,1,1,2}").is_err());
        assert!(parse("{devices=[2,2]<=[2,2]T(0,0)}").is_err());
    }

    #[test]
    fn ids_are_positions_in_the_meshs_device_order() {
        // DeviceMesh [[0, 2], [1, 3]]: position 1 (dp 0, tp 1) is rank 2.
        let m = Mesh::parse("dp=2,tp=2 devices=[0,2,1,3]").unwrap();
        let text = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}";
        let l = to_layout(&m, &[4, 4], &parse(text).unwrap()).unwrap();
        assert_eq!(jax::print_spec(&l).unwrap(), "P('dp', None)");
        assert_eq!(
            (l.block(2), l.block(1)),
            (vec![(0, 2), (0, 4)], vec![(2, 4), (0, 4)])
        );
        assert_eq!(from_layout(&l).unwrap(), text);
        let l = to_layout(&m, &[4, 4], &parse("{maximal device=1}").unwrap()).unwrap();
        assert_eq!(l.maximal, Some(2));
        assert_eq!(from_layout(&l).unwrap(), "{maximal device=1}");
        // A list in no axis order: its ids go through the mesh's order too.
        let l = to_layout(&m, &[4, 4], &parse("{devices=[2,2]0,3,1,2}").unwrap()).unwrap();
        assert_eq!(l.mesh.to_string(), "t0=2,t1=2 devices=[0,3,2,1]");
    }

    #[test]
    fn unreduced_subgroups_are_partial_sums_and_round_trip() {
        // What XLA prints for JAX's P(.., unreduced={..}) on an Explicit mesh a=2,b=4.
        let m = Mesh::parse("a=2,b=4").unwrap();
        for (text, dims, partial) in [
            (
                "{devices=[1,1,2,4]<=[8] last_tile_dims={unreduced, replicated}}",
                vec![vec![], vec![]],
                vec![0],
            ),
            (
                "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}",
                vec![vec![vec![1]], vec![]],
                vec![0],
            ),
            ("{unreduced}", vec![vec![], vec![]], vec![0, 1]),
            (
                "{devices=[1,2,4]<=[8] last_tile_dims={unreduced}}",
                vec![vec![], vec![vec![0]]],
                vec![1],
            ),
        ] {
            let s = parse(text).unwrap();
            let l = to_layout(&m, &[8, 8], &s).unwrap();
            assert_eq!(l.dims, dims, "{text}");
            let want: BTreeMap<usize, ReduceOp> =
                partial.iter().map(|&a| (a, ReduceOp::Sum)).collect();
            assert_eq!(l.partial, want, "{text}");
            assert_eq!(from_layout(&l).unwrap(), text);
            assert_eq!(
                to_layout(&m, &[8, 8], &parse(&print_explicit(&s)).unwrap()).unwrap(),
                l
            );
        }
        // Addends of a value: the devices that differ only in `a` (ranks 1 and 5 for b = 1).
        let l = to_layout(
            &m,
            &[8, 8],
            &parse("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}").unwrap(),
        )
        .unwrap();
        assert_eq!(
            (l.block(1), l.block(5)),
            (vec![(2, 4), (0, 8)], vec![(2, 4), (0, 8)])
        );
        assert_eq!((l.addend_of(1), l.addend_of(5)), (0, 1));
    }

    #[test]
    fn manual_and_unknown_subgroups_are_refused_by_name() {
        let m = Mesh::parse("a=2,b=2").unwrap();
        for (text, what) in [
            ("{manual}", "manual (shard_map)"),
            (
                "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}",
                "`last_tile_dims={manual}`: a manual (shard_map)",
            ),
        ] {
            let e = to_layout(&m, &[4, 4], &parse(text).unwrap()).unwrap_err();
            assert!(e.0.contains(what), "{text}: {e}");
        }
        for (text, what) in [
            (
                "{devices=[1,2,2]<=[4] last_tile_dims={partial}}",
                "last_tile_dims type `partial` (replicated, unreduced or manual)",
            ),
            (
                "{devices=[1,2,2]<=[4] last_tile_dim_replicate last_tile_dims={unreduced}}",
                "both last_tile_dim_replicate and last_tile_dims",
            ),
            (
                "{devices=[2,2]<=[4] last_tile_dims={unreduced, replicated}}",
                "no data dim",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.0.contains(what), "{text}: {e}");
        }
        // A partial that is not a sum has no HLO text.
        let l = MeshLayout::new(
            m.clone(),
            vec![4, 4],
            vec![vec![], vec![]],
            [(0, ReduceOp::Max)].into_iter().collect(),
            None,
        )
        .unwrap();
        assert!(from_layout(&l).unwrap_err().0.contains("partial max"));
    }
}
