//! Exact conversions between formalisms; each refuses with the reason when the layout has no
//! exact form in the target.
//!
//! - CuTe <-> Axe on one axis. CuTe flattens COLUMN-major and Axe ROW-major, so each logical
//!   dimension's modes are reversed: `(4,8):(8,1)` over shape (4,8) is `S[(4,8):(8,1)]`, and
//!   `((2,2),8):((1,16),2)` is `S[(2,2,8):(16,1,2)]` (dim 0's modes swap order).
//! - CuTe TV <-> Axe over thread/value axes: the TV map `(t, v) -> cell` is inverted into the
//!   Axe map `cell -> {(tx, reg)}`; a stride-0 thread or value mode becomes a replica iter.
//!   Example: SM80's C atom `((4,8),(2,2)):((32,1),(16,8)) -> (16,8)` is
//!   `S[(2,8,4,2):(2@reg,4@tx,1@tx,1@reg)]`.
//! - Power-of-two layouts <-> F2. Linear layouts map hardware to logical (Triton's direction), so
//!   Axe and CuTe layouts convert to their inverse relation: each physical axis becomes an
//!   in-dim (`m` -> `offset`, `laneid` -> `lane`, `warpid` -> `warp`, `reg` -> `register`,
//!   `tx` -> `lane` + `warp`), replicas become zero bases. A stride that is not a power of two,
//!   an extent that is not, a carry between strides, or a hole in the physical range has no F2
//!   form, and the conversion says which.

use std::collections::BTreeMap;

use crate::arith::{self, is_pow2, log2};
use crate::axe::{AxeLayout, Iter};
use crate::axis::{Axis, AxisRegistry};
use crate::cute::{CuteLayout, IntTuple, TvLayout};
use crate::error::{LayoutError, Result};
use crate::f2::Echelon;
use crate::layout::Layout;
use crate::linear::{InDim, LinearLayout, OutDim};
use crate::relation::in_dim_axis;
use crate::swizzle::SwizzledLayout;

/// The formalism to convert to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Axe `(D, R, O)`.
    Axe,
    /// CuTe (memory layouts) or CuTe TV (thread/value layouts).
    Cute,
    /// F2 linear layout, hardware -> logical.
    Linear,
}

impl Target {
    /// `axe`, `cute` or `linear`.
    pub fn parse(s: &str) -> Result<Target> {
        match s {
            "axe" => Ok(Target::Axe),
            "cute" => Ok(Target::Cute),
            "linear" => Ok(Target::Linear),
            other => Err(LayoutError::invalid(
                format!("target {other:?}"),
                "expected axe, cute or linear",
            )),
        }
    }
}

/// Converts `l` to `to`. `shape` is the logical shape (default: the layout's natural one).
pub fn convert(l: &Layout, to: Target, shape: Option<&[i64]>) -> Result<Layout> {
    match (to, l) {
        (Target::Axe, Layout::Axe(a)) => {
            if let Some(s) = shape {
                a.check_shape(s)?;
            }
            Ok(l.clone())
        }
        (Target::Axe, Layout::Cute(c)) => Ok(Layout::Axe(cute_to_axe(c, shape)?)),
        (Target::Axe, Layout::Tv(t)) => {
            if let Some(s) = shape.filter(|s| *s != t.tile()) {
                return Err(LayoutError::Shape {
                    shape: s.to_vec(),
                    why: format!("a TV layout's tile is {:?}", t.tile()),
                });
            }
            Ok(Layout::Axe(tv_to_axe(t)?))
        }
        (Target::Axe, Layout::Linear(f)) => Ok(Layout::Axe(linear_to_axe(f)?)),
        (Target::Axe, Layout::Swizzled(s)) => Err(LayoutError::not_representable(
            "Axe",
            format!(
                "{} XORs address bits; Axe iters only add strides",
                s.swizzle()
            ),
        )),
        (Target::Cute, Layout::Cute(_) | Layout::Tv(_) | Layout::Swizzled(_)) => Ok(l.clone()),
        (Target::Cute, Layout::Axe(a)) => axe_to_cute_any(a, shape),
        (Target::Cute, Layout::Linear(f)) => linear_to_cute(f),
        (Target::Linear, Layout::Linear(_)) => Ok(l.clone()),
        (Target::Linear, Layout::Axe(a)) => Ok(Layout::Linear(axe_to_linear(a, shape)?)),
        (Target::Linear, Layout::Cute(c)) => {
            let a = cute_to_axe(c, shape)?;
            Ok(Layout::Linear(axe_to_linear(
                &a,
                Some(&shape_or_top(c, shape)),
            )?))
        }
        (Target::Linear, Layout::Swizzled(s)) => Ok(Layout::Linear(swizzled_to_linear(s, shape)?)),
        (Target::Linear, Layout::Tv(t)) => Ok(Layout::Linear(tv_to_linear(t)?)),
    }
}

fn shape_or_top(c: &CuteLayout, shape: Option<&[i64]>) -> Vec<i64> {
    shape.map(<[i64]>::to_vec).unwrap_or_else(|| c.top_shape())
}

/// A mode's stride, as [`group_colex`] splits and merges it: a plain address stride (CuTe) or a
/// stride on a named axis (Axe iters, TV thread/value modes).
trait ModeStride: Clone {
    /// The stride of the part of a mode that starts `n` steps in.
    fn scale(&self, n: i64) -> Result<Self>;
    /// Whether a mode with this stride continues the mode `(e, prev)` (the two are one mode
    /// of extent `e * next extent` with stride `prev`).
    fn continues(&self, prev: &Self, e: i64) -> bool;
}

impl ModeStride for i64 {
    fn scale(&self, n: i64) -> Result<Self> {
        arith::mul(*self, n, "mode split")
    }
    fn continues(&self, prev: &Self, e: i64) -> bool {
        prev.checked_mul(e) == Some(*self)
    }
}

impl ModeStride for (i64, Axis) {
    fn scale(&self, n: i64) -> Result<Self> {
        Ok((arith::mul(self.0, n, "iter split")?, self.1.clone()))
    }
    fn continues(&self, prev: &Self, e: i64) -> bool {
        self.1 == prev.1 && prev.0.checked_mul(e) == Some(self.0)
    }
}

/// Splits fastest-first modes into one block per dim of `shape` (fastest dim first, i.e. CuTe's
/// colexicographic order), splitting a mode `(e, s)` into `(n, s), (e/n, s*n)` where a dim
/// boundary falls inside it. Extent-1 modes are dropped (they add nothing). When the modes as
/// written do not split evenly, they are tried again with every run of modes that is one mode
/// merged (`(3,64):(1,3)` is `192:1`, which splits by (64,3)). Merging only adds split points
/// (a cut that splits the written modes also splits their merge), and the written modes are
/// kept whenever they already fit.
fn group_colex<S: ModeStride>(modes: &[(i64, S)], shape: &[i64]) -> Result<Vec<Vec<(i64, S)>>> {
    let written: Vec<(i64, S)> = modes.iter().filter(|(e, _)| *e != 1).cloned().collect();
    let first = split_by(&written, shape);
    if first.is_ok() {
        return first;
    }
    let mut merged: Vec<(i64, S)> = Vec::with_capacity(written.len());
    for (e, s) in written.iter().cloned() {
        match merged.last_mut() {
            Some((pe, ps)) if s.continues(ps, *pe) => match pe.checked_mul(e) {
                Some(n) => *pe = n,
                None => merged.push((e, s)),
            },
            _ => merged.push((e, s)),
        }
    }
    if merged.len() == written.len() {
        return first;
    }
    split_by(&merged, shape).or(first)
}

fn split_by<S: ModeStride>(modes: &[(i64, S)], shape: &[i64]) -> Result<Vec<Vec<(i64, S)>>> {
    let mut rest: std::collections::VecDeque<(i64, S)> = modes.iter().cloned().collect();
    let mut blocks = Vec::new();
    for (d, &dim) in shape.iter().enumerate() {
        let mut need = dim;
        let mut block = Vec::new();
        while need > 1 {
            let Some((e, s)) = rest.pop_front() else {
                return Err(LayoutError::Shape {
                    shape: shape.to_vec(),
                    why: format!("the layout runs out of modes in dimension {d}"),
                });
            };
            if need % e == 0 {
                need /= e;
                block.push((e, s));
            } else if e % need == 0 {
                rest.push_front((e / need, s.scale(need)?));
                block.push((need, s));
                need = 1;
            } else {
                return Err(LayoutError::Shape {
                    shape: shape.to_vec(),
                    why: format!(
                        "dimension {d} (extent {dim}) splits a mode of extent {e} unevenly"
                    ),
                });
            }
        }
        blocks.push(block);
    }
    if let Some((e, _)) = rest.front() {
        return Err(LayoutError::Shape {
            shape: shape.to_vec(),
            why: format!("a mode of extent {e} is left over"),
        });
    }
    Ok(blocks)
}

/// CuTe layout -> Axe layout on axis `m`, over `shape` (default: the top-level mode sizes).
pub fn cute_to_axe(c: &CuteLayout, shape: Option<&[i64]>) -> Result<AxeLayout> {
    let shape = shape_or_top(c, shape);
    c.check_shape(&shape)?;
    let modes: Vec<(i64, i64)> = c.flat_modes();
    let blocks = group_colex(&modes, &shape)?;
    let shard = blocks
        .iter()
        .flat_map(|b| b.iter().rev().map(|&(e, s)| Iter::on_m(e, s)))
        .collect();
    AxeLayout::from_shard(shard)
}

/// A CuTe layout with ScaledBasis strides, given as its flat modes `(extent, (value, axis))`
/// first mode first, -> the Axe layout over `shape` (read colexicographically, as CuTe reads
/// it): each dim's modes reversed, as [`cute_to_axe`] does. `(64,8):(1@dim0,1@dim1)` over
/// `[512]` is `S[(8,64):(1@dim1,1@dim0)]`, over `[64, 8]` `S[(64,8):(1@dim0,1@dim1)]`.
pub fn cute_basis_to_axe(modes: &[(i64, (i64, Axis))], shape: &[i64]) -> Result<AxeLayout> {
    let size = arith::product(modes.iter().map(|(e, _)| *e), "CuTe size")?;
    crate::shape::check_admits(shape, size)?;
    let shard = group_colex(modes, shape)?
        .iter()
        .flat_map(|b| {
            b.iter()
                .rev()
                .map(|(e, (s, a))| Iter::new(*e, *s, a.clone()))
        })
        .collect();
    AxeLayout::from_shard(shard)
}

/// Row-major shard grouped by `shape`: one block per dim, each block slowest iter first.
fn group_axe(a: &AxeLayout, shape: &[i64]) -> Result<Vec<Vec<Iter>>> {
    a.check_shape(shape)?;
    let fastest_first: Vec<(i64, (i64, Axis))> = a
        .shard()
        .iter()
        .rev()
        .map(|it| (it.extent, (it.stride, it.axis.clone())))
        .collect();
    let rev_shape: Vec<i64> = shape.iter().rev().copied().collect();
    let blocks = group_colex(&fastest_first, &rev_shape)?;
    Ok(blocks
        .into_iter()
        .rev()
        .map(|b| {
            b.into_iter()
                .rev()
                .map(|(e, (s, ax))| Iter::new(e, s, ax))
                .collect()
        })
        .collect())
}

/// Axe layout on one axis, no replica, no offset -> CuTe layout over `shape`.
pub fn axe_to_cute(a: &AxeLayout, shape: Option<&[i64]>) -> Result<CuteLayout> {
    let refuse = |r: String| LayoutError::not_representable("CuTe", r);
    if a.axes().len() > 1 {
        return Err(refuse(format!(
            "it spans axes {:?}; a CuTe layout has one codomain",
            names(a)
        )));
    }
    if !a.replica().is_empty() {
        return Err(refuse(
            "its replica maps one element to several places; CuTe maps to one".into(),
        ));
    }
    if !a.offset().is_empty() {
        return Err(refuse("it has an offset; CuTe layouts start at 0".into()));
    }
    let shape = shape.map(<[i64]>::to_vec).unwrap_or_else(|| vec![a.size()]);
    let blocks = group_axe(a, &shape)?;
    let modes: Vec<(IntTuple, IntTuple)> = blocks
        .iter()
        .map(|b| {
            let fast: Vec<&Iter> = b.iter().rev().collect();
            match fast.as_slice() {
                [] => (IntTuple::Int(1), IntTuple::Int(0)),
                [it] => (IntTuple::Int(it.extent), IntTuple::Int(it.stride)),
                _ => (
                    IntTuple::Tuple(fast.iter().map(|it| IntTuple::Int(it.extent)).collect()),
                    IntTuple::Tuple(fast.iter().map(|it| IntTuple::Int(it.stride)).collect()),
                ),
            }
        })
        .collect();
    let (s, d): (Vec<IntTuple>, Vec<IntTuple>) = modes.into_iter().unzip();
    // One logical dimension stays ONE top-level mode (`((3,3)):((1,3))`, natural domain (9)),
    // so the result has the Axe layout's natural domain, a flat index (spec certify.md 1b).
    if s.len() == 1 && matches!(s[0], IntTuple::Int(_)) {
        CuteLayout::new(s[0].clone(), d[0].clone())
    } else {
        CuteLayout::new(IntTuple::Tuple(s), IntTuple::Tuple(d))
    }
}

fn names(a: &AxeLayout) -> Vec<String> {
    a.axes().iter().map(|x| x.to_string()).collect()
}

/// Axe -> CuTe: a TV layout when every axis is a thread or value axis, else a memory layout.
fn axe_to_cute_any(a: &AxeLayout, shape: Option<&[i64]>) -> Result<Layout> {
    let reg = AxisRegistry::builtin();
    let hardware = a
        .axes()
        .iter()
        .all(|x| matches!(reg.resolve(x).as_str(), "tx" | "laneid" | "warpid" | "reg"));
    if hardware && !a.axes().is_empty() {
        Ok(Layout::Tv(axe_to_tv(a, shape)?))
    } else {
        Ok(Layout::Cute(axe_to_cute(a, shape)?))
    }
}

/// Thread weight of one unit on `axis` (`tx` 1, `laneid` 1, `warpid` 32 via the registry's
/// `tx = laneid + 32*warpid`), or `None` for a value axis.
fn thread_weight(reg: &AxisRegistry, axis: &Axis) -> Result<Option<i64>> {
    let canonical = reg.resolve(axis);
    if canonical.as_str() == "reg" {
        return Ok(None);
    }
    if canonical.as_str() == "tx" {
        return Ok(Some(1));
    }
    let tx = reg
        .target("cuda")
        .and_then(|t| t.relations.iter().find(|r| r.axis.as_str() == "tx"))
        .ok_or_else(|| {
            LayoutError::not_representable(
                "CuTe TV",
                "the axis registry has no tx relation on cuda",
            )
        })?;
    tx.terms
        .iter()
        .find(|(_, ax)| *ax == canonical)
        .map(|(c, _)| Some(*c))
        .ok_or_else(|| {
            LayoutError::not_representable(
                "CuTe TV",
                format!("axis {axis} is neither a thread nor a value axis"),
            )
        })
}

/// Axe layout over a tile (shape) on thread/value axes -> CuTe TV layout.
pub fn axe_to_tv(a: &AxeLayout, shape: Option<&[i64]>) -> Result<TvLayout> {
    let refuse = |r: String| LayoutError::not_representable("CuTe TV", r);
    let reg = AxisRegistry::builtin();
    if !a.offset().is_empty() {
        return Err(refuse(
            "it has an offset; a TV layout starts at thread 0, value 0".into(),
        ));
    }
    let tile = shape.map(<[i64]>::to_vec).unwrap_or_else(|| vec![a.size()]);
    let blocks = group_axe(a, &tile)?;
    // Fastest-first over the column-major tile index: dim 0 first, each block fastest iter first.
    let mut weight = 1i64;
    let mut parts: [Vec<(i64, i64, i64)>; 2] = [Vec::new(), Vec::new()]; // (extent, phys stride, cell stride)
    for b in &blocks {
        for it in b.iter().rev() {
            let w = thread_weight(reg, &it.axis)?;
            let slot = usize::from(w.is_none());
            let phys = arith::mul(it.stride, w.unwrap_or(1), "thread stride")?;
            parts[slot].push((it.extent, phys, weight));
            weight = arith::mul(weight, it.extent, "tile index")?;
        }
    }
    for it in a.replica() {
        let w = thread_weight(reg, &it.axis)?;
        let slot = usize::from(w.is_none());
        parts[slot].push((
            it.extent,
            arith::mul(it.stride, w.unwrap_or(1), "thread stride")?,
            0,
        ));
    }
    let laneid_span = a.span(&Axis::new("laneid").expect("identifier"));
    if a.axes().iter().any(|x| x.as_str() == "warpid") && laneid_span > 32 {
        return Err(refuse(format!(
            "laneid spans {laneid_span} > 32, so laneid + 32*warpid is not one thread index"
        )));
    }
    let mut modes = Vec::new();
    for (part, name) in parts.iter_mut().zip(["thread", "value"]) {
        part.retain(|&(e, _, _)| e > 1);
        part.sort_by_key(|&(_, s, _)| s);
        let mut expect = 1i64;
        for &(e, s, _) in part.iter() {
            if s != expect {
                let why = if s < 0 {
                    format!("a {name} stride {s} is negative")
                } else {
                    format!("{name} index {expect} holds no element (next {name} stride is {s})")
                };
                return Err(refuse(why));
            }
            expect = arith::mul(expect, e, "index")?;
        }
        modes.push(mode_of(part.iter().map(|&(e, _, c)| (e, c)).collect()));
    }
    let (s, d): (Vec<IntTuple>, Vec<IntTuple>) = modes.into_iter().unzip();
    TvLayout::new(
        CuteLayout::new(IntTuple::Tuple(s), IntTuple::Tuple(d))?,
        tile,
    )
}

/// One CuTe mode from fastest-first `(extent, stride)` pairs, merging `(e0:d0),(e1:e0*d0)`.
fn mode_of(pairs: Vec<(i64, i64)>) -> (IntTuple, IntTuple) {
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (e, d) in pairs.into_iter().filter(|&(e, _)| e > 1) {
        match merged.last_mut() {
            Some(last) if last.1.checked_mul(last.0) == Some(d) => last.0 *= e,
            _ => merged.push((e, d)),
        }
    }
    match merged.as_slice() {
        [] => (IntTuple::Int(1), IntTuple::Int(0)),
        [(e, d)] => (IntTuple::Int(*e), IntTuple::Int(*d)),
        _ => (
            IntTuple::Tuple(merged.iter().map(|p| IntTuple::Int(p.0)).collect()),
            IntTuple::Tuple(merged.iter().map(|p| IntTuple::Int(p.1)).collect()),
        ),
    }
}

/// CuTe TV layout -> Axe layout over the tile, on axes `tx` (thread) and `reg` (value).
pub fn tv_to_axe(t: &TvLayout) -> Result<AxeLayout> {
    let refuse = |r: String| LayoutError::not_representable("Axe", r);
    let modes = t.layout().modes();
    // (extent, cell stride, physical stride@axis), fastest-first within thread then value.
    let mut gens: Vec<(i64, i64, i64, Axis)> = Vec::new();
    for (mode, axis) in modes.iter().zip(["tx", "reg"]) {
        let mut w = 1i64;
        for (e, d) in mode.flat_modes() {
            gens.push((e, d, w, Axis::new(axis).expect("identifier")));
            w = arith::mul(w, e, "thread index")?;
        }
    }
    gens.retain(|g| g.0 > 1);
    let (replica, mut shard): (Vec<_>, Vec<_>) = gens.into_iter().partition(|g| g.1 == 0);
    shard.sort_by_key(|g| g.1);
    let cells: i64 = t.tile().iter().product();
    let mut expect = 1i64;
    for g in &shard {
        if g.1 != expect {
            let why = if g.1 < expect {
                format!(
                    "two modes both step the tile by {}: a cell is held by a non-uniform set",
                    g.1
                )
            } else {
                format!("tile cell {expect} is held by no (thread, value)")
            };
            return Err(refuse(why));
        }
        expect = arith::mul(expect, g.0, "tile index")?;
    }
    if expect != cells {
        return Err(refuse(format!(
            "tile cell {expect} is held by no (thread, value)"
        )));
    }
    let fastest: Vec<(i64, (i64, Axis))> =
        shard.iter().map(|g| (g.0, (g.2, g.3.clone()))).collect();
    let blocks = group_colex(&fastest, t.tile())?;
    let d: Vec<Iter> = blocks
        .iter()
        .flat_map(|b| {
            b.iter()
                .rev()
                .map(|(e, (s, ax))| Iter::new(*e, *s, ax.clone()))
        })
        .collect();
    let r: Vec<Iter> = replica
        .iter()
        .map(|g| Iter::new(g.0, g.2, g.3.clone()))
        .collect();
    AxeLayout::new(d, r, BTreeMap::new())
}

/// The logical `(dim, bit)` a physical bit comes from; `None` for a replica bit.
type BitOwner = Option<(usize, u32)>;

/// One generator bit of an F2 map: a step of the value on the axis.
type Gen = (Axis, i64);

/// The F2 generators of an Axe layout over `shape`: logical bits (dim by dim, low bit first)
/// and replica bits, after checking power-of-two extents, non-negative strides, no offset, and
/// carry-free strides per axis.
fn axe_bits(a: &AxeLayout, shape: &[i64]) -> Result<(Vec<Vec<Gen>>, Vec<Gen>)> {
    let refuse = |r: String| LayoutError::not_representable("F2 linear", r);
    if !a.offset().is_empty() {
        return Err(refuse(
            "it has an offset, so 0 does not map to 0 (affine, not linear)".into(),
        ));
    }
    if let Some(d) = shape.iter().position(|&e| !is_pow2(e)) {
        return Err(refuse(format!(
            "logical dimension {d} has extent {}, not a power of two",
            shape[d]
        )));
    }
    let blocks = group_axe(a, shape)?;
    let bits_of = |it: &Iter| -> Result<Vec<Gen>> {
        let k = log2(it.extent)
            .ok_or_else(|| refuse(format!("extent {} is not a power of two", it.extent)))?;
        if it.stride < 0 {
            return Err(refuse(format!(
                "stride {}@{} is negative",
                it.stride, it.axis
            )));
        }
        (0..k)
            .map(|j| Ok((it.axis.clone(), arith::mul(it.stride, 1 << j, "bit")?)))
            .collect()
    };
    let mut dims = Vec::new();
    for b in &blocks {
        let mut bits = Vec::new();
        for it in b.iter().rev() {
            bits.extend(bits_of(it)?);
        }
        dims.push(bits);
    }
    let mut rep = Vec::new();
    for it in a.replica() {
        rep.extend(bits_of(it)?);
    }
    // Carry-free: on each axis, non-zero values have pairwise disjoint bits, so sums are XORs.
    let mut used: Vec<(&Axis, i64)> = Vec::new();
    for (ax, v) in dims.iter().flatten().chain(rep.iter()) {
        let i = match used.iter().position(|(x, _)| *x == ax) {
            Some(i) => i,
            None => {
                used.push((ax, 0));
                used.len() - 1
            }
        };
        if used[i].1 & v != 0 {
            return Err(refuse(format!(
                "on axis {ax}, the step {v} shares bits with another step, so adding them carries (not XOR)"
            )));
        }
        used[i].1 |= v;
    }
    Ok((dims, rep))
}

/// The in-dim name a physical axis takes in a linear layout.
fn in_dim_name(reg: &AxisRegistry, axis: &Axis) -> String {
    match reg.resolve(axis).as_str() {
        "m" => "offset".into(),
        "laneid" => "lane".into(),
        "warpid" => "warp".into(),
        "reg" => "register".into(),
        "cta" => "block".into(),
        other => other.to_string(),
    }
}

/// Axe layout (power-of-two) -> linear layout in Triton's direction: physical bits -> logical.
pub fn axe_to_linear(a: &AxeLayout, shape: Option<&[i64]>) -> Result<LinearLayout> {
    let refuse = |r: String| LayoutError::not_representable("F2 linear", r);
    let shape = shape.map(<[i64]>::to_vec).unwrap_or_else(|| vec![a.size()]);
    let (dims, rep) = axe_bits(a, &shape)?;
    let reg = AxisRegistry::builtin();
    // Every physical bit must be produced by exactly one single-bit generator: per axis (in
    // name order), per bit, the logical (dim, bit) it comes from (None: a replica bit).
    let axes: Vec<Axis> = a.axes().into_iter().collect();
    let mut owner: Vec<Vec<Option<BitOwner>>> = vec![Vec::new(); axes.len()];
    let gens = dims.iter().enumerate().flat_map(|(d, bits)| {
        bits.iter()
            .enumerate()
            .map(move |(j, g)| (Some((d, j as u32)), g))
    });
    for (who, (ax, v)) in gens.chain(rep.iter().map(|g| (None, g))) {
        if *v == 0 {
            match who {
                Some((d, j)) => {
                    return Err(refuse(format!(
                        "logical bit {j} of dimension {d} has stride 0: two elements share a place, so the hardware-to-logical map is not a function"
                    )))
                }
                None => continue,
            }
        }
        if !is_pow2(*v) {
            return Err(refuse(format!("the step {v} on axis {ax} sets several bits: some {ax} values in between hold no element")));
        }
        let i = axes
            .iter()
            .position(|x| x == ax)
            .expect("iter axes are the layout's axes");
        let bit = v.trailing_zeros() as usize;
        if owner[i].len() <= bit {
            owner[i].resize(bit + 1, None);
        }
        owner[i][bit] = Some(who);
    }
    let mut ins: BTreeMap<String, Vec<Vec<i64>>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (ax, bits) in axes.iter().zip(&owner) {
        if let Some(hole) = bits.iter().position(Option::is_none) {
            return Err(refuse(format!(
                "{ax} = {} holds no element (a hole in the physical range)",
                1i64 << hole
            )));
        }
        let name = in_dim_name(reg, ax);
        if ins.contains_key(&name) {
            return Err(refuse(format!("two axes map to the in-dim {name}")));
        }
        let bases = bits
            .iter()
            .map(|w| {
                let mut v = vec![0i64; shape.len()];
                if let Some(Some((d, j))) = w {
                    v[*d] = 1 << j;
                }
                v
            })
            .collect();
        order.push(name.clone());
        ins.insert(name, bases);
    }
    // A thread index `tx` splits into Triton's 32 lanes and the warps above them.
    if let Some(tx) = ins.remove("tx") {
        if ins.contains_key("lane") || ins.contains_key("warp") {
            return Err(refuse(
                "it mixes tx with laneid/warpid; fuse them first".into(),
            ));
        }
        let lanes = tx.len().min(LANE_BITS);
        ins.insert("lane".into(), tx[..lanes].to_vec());
        ins.insert("warp".into(), tx[lanes..].to_vec());
        order.retain(|n| n != "tx");
        order.extend(["lane".to_string(), "warp".to_string()]);
    }
    let rank = ["register", "lane", "warp", "block"];
    order.sort_by_key(|n| rank.iter().position(|r| r == n).unwrap_or(rank.len()));
    let ins = order
        .into_iter()
        .map(|n| InDim {
            bases: ins.remove(&n).unwrap_or_default(),
            name: n,
        })
        .collect();
    LinearLayout::new(ins, dim_outs(&shape))
}

/// `Sw<B,M,S> o L` -> linear layout `offset -> logical`, `L^-1(sw(o))`.
pub fn swizzled_to_linear(s: &SwizzledLayout, shape: Option<&[i64]>) -> Result<LinearLayout> {
    if s.offset() != 0 {
        return Err(LayoutError::not_representable(
            "F2 linear",
            format!("{s} has an offset, so 0 does not map to 0 (affine, not linear)"),
        ));
    }
    let shape = shape_or_top(s.layout(), shape);
    let inner = axe_to_linear(&cute_to_axe(s.layout(), Some(&shape))?, Some(&shape))?;
    let Some(off) = inner.in_dim("offset") else {
        return Ok(inner);
    };
    let sw = s.swizzle();
    let n = off.bases.len();
    if !sw.is_involution() || (sw.source_mask() | sw.dest_mask()) >> n != 0 {
        return Err(LayoutError::not_representable(
            "F2 linear",
            format!("{sw} moves bits outside the layout's {n} offset bits"),
        ));
    }
    // sw is its own inverse: offset o holds the element L^-1(sw(o)).
    let bases = (0..n)
        .map(|k| {
            let o = sw.apply(1 << k).expect("non-negative");
            (0..n)
                .filter(|b| o >> b & 1 == 1)
                .fold(vec![0i64; shape.len()], |acc, b| {
                    acc.iter().zip(&off.bases[b]).map(|(x, y)| x ^ y).collect()
                })
        })
        .collect();
    LinearLayout::new(
        vec![InDim {
            name: "offset".into(),
            bases,
        }],
        inner.outs().to_vec(),
    )
}

/// CuTe TV layout (power-of-two) -> linear `(register, lane, warp) -> (dim0, dim1, ...)`.
pub fn tv_to_linear(t: &TvLayout) -> Result<LinearLayout> {
    let refuse = |r: String| LayoutError::not_representable("F2 linear", r);
    if let Some(d) = t.tile().iter().position(|&e| !is_pow2(e)) {
        return Err(refuse(format!(
            "tile dimension {d} has extent {}, not a power of two",
            t.tile()[d]
        )));
    }
    let modes = t.layout().modes();
    let mut bit_lists: Vec<Vec<i64>> = Vec::new();
    for mode in &modes {
        let mut bits = Vec::new();
        for (e, d) in mode.flat_modes() {
            let k =
                log2(e).ok_or_else(|| refuse(format!("mode extent {e} is not a power of two")))?;
            for j in 0..k {
                bits.push(arith::mul(d, 1 << j, "bit")?);
            }
        }
        bit_lists.push(bits);
    }
    if let Some(v) = first_carry(bit_lists.iter().flatten()) {
        return Err(refuse(format!(
            "the step {v} shares bits with another step, so adding them carries (not XOR)"
        )));
    }
    // The steps share no bit, so the cells reached are those whose bits all are steps' bits; a
    // linear layout must reach every cell of its out-dims (Triton's layouts are surjective).
    let reached = bit_lists.iter().flatten().fold(0i64, |u, &v| u | v);
    let cells: i64 = t.tile().iter().product();
    if reached & !(cells - 1) != 0 {
        return Err(refuse(format!(
            "a (thread, value) reaches cell {reached} or beyond, outside the {cells}-cell tile"
        )));
    }
    if reached != cells - 1 {
        return Err(refuse(format!(
            "tile cell {} is held by no (thread, value)",
            1i64 << (!reached).trailing_zeros()
        )));
    }
    let to_dims = |x: i64| -> Vec<i64> {
        let mut rest = x;
        t.tile()
            .iter()
            .map(|&e| {
                let c = rest % e;
                rest /= e;
                c
            })
            .collect()
    };
    let thread: Vec<Vec<i64>> = bit_lists[0].iter().map(|&v| to_dims(v)).collect();
    let lanes = thread.len().min(LANE_BITS);
    let ins = vec![
        InDim {
            name: "register".into(),
            bases: bit_lists[1].iter().map(|&v| to_dims(v)).collect(),
        },
        InDim {
            name: "lane".into(),
            bases: thread[..lanes].to_vec(),
        },
        InDim {
            name: "warp".into(),
            bases: thread[lanes..].to_vec(),
        },
    ];
    LinearLayout::new(ins, dim_outs(t.tile()))
}

/// Bits of a thread index that are lanes (32 lanes per warp); the rest are warps.
const LANE_BITS: usize = 5;

/// The first value sharing a bit with an earlier one: adding such values carries, so their sum
/// is not their XOR.
fn first_carry<'a>(values: impl IntoIterator<Item = &'a i64>) -> Option<i64> {
    let mut used = 0i64;
    for &v in values {
        if used & v != 0 {
            return Some(v);
        }
        used |= v;
    }
    None
}

/// Out-dims `dim0, dim1, ...` of a power-of-two logical shape.
fn dim_outs(shape: &[i64]) -> Vec<OutDim> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &e)| OutDim {
            name: format!("dim{d}"),
            log2_size: e.trailing_zeros(),
        })
        .collect()
}

/// Linear layout -> Axe layout (the inverse relation: logical -> set of hardware points).
/// Needs every non-zero basis to be one logical bit, each logical bit produced exactly once.
/// Each in-dim bit becomes an iter on the in-dim's axis ([`in_dim_axis`]); Axe adds iters on
/// one axis, which is the relation's physical point (`relation::point_of`) for in-dims that
/// alias one axis (`register` and `reg`) or are related (`lane` and `tx`).
pub fn linear_to_axe(f: &LinearLayout) -> Result<AxeLayout> {
    let producers = single_bit_producers(f, "Axe")?;
    let mut shard = Vec::new();
    for (d, out) in f.outs().iter().enumerate() {
        for j in (0..out.log2_size).rev() {
            let (name, k) = &producers[&(d, j)];
            shard.push(Iter::new(2, 1i64 << k, in_dim_axis(name)?));
        }
    }
    let mut replica = Vec::new();
    for dim in f.ins() {
        for (k, b) in dim.bases.iter().enumerate() {
            if b.iter().all(|&v| v == 0) {
                replica.push(Iter::new(2, 1i64 << k, in_dim_axis(&dim.name)?));
            }
        }
    }
    AxeLayout::new(
        merge_iters(shard, true),
        merge_iters(replica, false),
        BTreeMap::new(),
    )
}

/// Maps each logical bit `(out-dim, bit)` to the one `(in-dim, bit)` whose basis is exactly it.
fn single_bit_producers(
    f: &LinearLayout,
    target: &'static str,
) -> Result<BTreeMap<(usize, u32), (String, usize)>> {
    let refuse = |r: String| LayoutError::not_representable(target, r);
    let mut producers = BTreeMap::new();
    for dim in f.ins() {
        for (k, b) in dim.bases.iter().enumerate() {
            let nz: Vec<(usize, i64)> = b
                .iter()
                .copied()
                .enumerate()
                .filter(|(_, v)| *v != 0)
                .collect();
            match nz.as_slice() {
                [] => {}
                [(d, v)] if is_pow2(*v) => {
                    if let Some((n2, k2)) = producers.insert((*d, v.trailing_zeros()), (dim.name.clone(), k)) {
                        return Err(refuse(format!(
                            "{}[{k}] and {n2}[{k2}] produce the same logical bit; their XOR is a replica that no strided iter expresses",
                            dim.name
                        )));
                    }
                }
                _ => {
                    return Err(refuse(format!(
                        "basis {}[{k}] = {b:?} mixes several logical bits (an XOR swizzle); strided layouts cannot express it",
                        dim.name
                    )))
                }
            }
        }
    }
    for (d, out) in f.outs().iter().enumerate() {
        for j in 0..out.log2_size {
            if !producers.contains_key(&(d, j)) {
                return Err(refuse(format!(
                    "no input produces bit {j} of {} (the layout is not surjective: element {} of {} is held by nobody)",
                    out.name,
                    1i64 << j,
                    out.name
                )));
            }
        }
    }
    Ok(producers)
}

/// Merges neighbours on one axis: in a shard `(e1, e2*s), (e2, s)` -> `(e1*e2, s)` (slowest
/// first); in a replica, sorted by (axis, stride), `(e1, s), (e2, e1*s)` -> `(e1*e2, s)`.
fn merge_iters(iters: Vec<Iter>, shard: bool) -> Vec<Iter> {
    let mut iters = iters;
    if !shard {
        iters.sort_by(|a, b| (&a.axis, a.stride).cmp(&(&b.axis, b.stride)));
        iters.reverse();
    }
    let mut out: Vec<Iter> = Vec::new();
    for it in iters {
        match out.last_mut() {
            Some(last)
                if last.axis == it.axis
                    && Some(last.stride) == it.extent.checked_mul(it.stride) =>
            {
                last.extent *= it.extent;
                last.stride = it.stride;
            }
            _ => out.push(it),
        }
    }
    if !shard {
        out.reverse();
    }
    out
}

/// Linear layout -> CuTe: a TV layout for `(register, lane, warp)` in-dims, a memory layout
/// (the inverse, logical -> offset) for a single `offset` in-dim.
pub fn linear_to_cute(f: &LinearLayout) -> Result<Layout> {
    let names: Vec<&str> = f.ins().iter().map(|d| d.name.as_str()).collect();
    let nonempty: Vec<&str> = f
        .ins()
        .iter()
        .filter(|d| !d.bases.is_empty())
        .map(|d| d.name.as_str())
        .collect();
    if nonempty.iter().all(|n| *n == "offset") && names.contains(&"offset") {
        return linear_offset_to_cute(f).map(Layout::Cute);
    }
    if let Some(n) = nonempty
        .iter()
        .find(|n| !matches!(**n, "register" | "lane" | "warp"))
    {
        return Err(LayoutError::not_representable(
            "CuTe TV",
            format!("in-dim {n} is not register, lane or warp"),
        ));
    }
    // The relation reads the thread as `tx = lane + 32*warp` (`relation::point_of`); a TV
    // thread index puts the warp bits right above the lane bits, which is the same only with
    // exactly 5 lane bits (or no warp bits).
    let lane_bits = f.in_dim("lane").map_or(0, |d| d.bases.len());
    if f.in_dim("warp").is_some_and(|d| !d.bases.is_empty()) && lane_bits != LANE_BITS {
        return Err(LayoutError::not_representable(
            "CuTe TV",
            format!(
                "the lane in-dim has {lane_bits} bits, not {LANE_BITS}: thread lane + 32*warp is not a contiguous TV thread index"
            ),
        ));
    }
    let tile: Vec<i64> = f.outs().iter().map(OutDim::size).collect();
    let index = |b: &Vec<i64>| -> i64 {
        b.iter()
            .zip(&tile)
            .rev()
            .fold(0i64, |acc, (v, e)| acc * e + v)
    };
    let bases = |name: &str| -> Vec<i64> {
        f.in_dim(name)
            .map(|d| d.bases.iter().map(index).collect())
            .unwrap_or_default()
    };
    let thread: Vec<i64> = bases("lane").into_iter().chain(bases("warp")).collect();
    let value = bases("register");
    if let Some(v) = first_carry(thread.iter().chain(&value)) {
        return Err(LayoutError::not_representable(
            "CuTe TV",
            format!("tile index {v} shares bits with another basis: CuTe adds where F2 XORs"),
        ));
    }
    let mode = |bits: &[i64]| mode_of(bits.iter().map(|&d| (2, d)).collect());
    let (ts, td) = mode(&thread);
    let (vs, vd) = mode(&value);
    let l = CuteLayout::new(IntTuple::Tuple(vec![ts, vs]), IntTuple::Tuple(vec![td, vd]))?;
    Ok(Layout::Tv(TvLayout::new(l, tile)?))
}

fn linear_offset_to_cute(f: &LinearLayout) -> Result<CuteLayout> {
    let producers = single_bit_producers(f, "CuTe")?;
    if let Some(k) = f
        .in_dim("offset")
        .and_then(|d| d.bases.iter().position(|b| b.iter().all(|&v| v == 0)))
    {
        return Err(LayoutError::not_representable(
            "CuTe",
            format!("offset bit {k} holds a copy of another offset's element; a CuTe layout maps each element to one offset"),
        ));
    }
    let mut s = Vec::new();
    let mut d = Vec::new();
    for (dim, out) in f.outs().iter().enumerate() {
        let (ms, md) = mode_of(
            (0..out.log2_size)
                .map(|j| (2, 1i64 << producers[&(dim, j)].1))
                .collect(),
        );
        s.push(ms);
        d.push(md);
    }
    if s.len() == 1 {
        CuteLayout::new(s.remove(0), d.remove(0))
    } else {
        CuteLayout::new(IntTuple::Tuple(s), IntTuple::Tuple(d))
    }
}

/// Rank of a linear layout's matrix (over all in-dim bits), for injectivity/surjectivity facts.
pub fn linear_rank(f: &LinearLayout) -> Result<usize> {
    if f.total_in_bits() > 128 || f.total_out_bits() > 128 {
        return Err(LayoutError::invalid(
            "linear layout",
            "more than 128 input or output bits",
        ));
    }
    let mut shift = Vec::new();
    let mut acc = 0u32;
    for o in f.outs() {
        shift.push(acc);
        acc += o.log2_size;
    }
    let cols: Vec<u128> = f
        .ins()
        .iter()
        .flat_map(|d| d.bases.iter())
        .map(|b| {
            b.iter()
                .zip(&shift)
                .fold(0u128, |c, (&v, &s)| c | ((v as u128) << s))
        })
        .collect();
    Ok(Echelon::of_columns(&cols).rank())
}
