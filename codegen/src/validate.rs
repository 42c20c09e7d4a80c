//! Translation validation of an emitted copy kernel: the exact index strings of the kernel are
//! parsed ([`crate::c_expr`]) and evaluated on every `(thread, iteration, element)` of both
//! phases, in the first, last and a middle CTA of the grid, and compared with the layouts'
//! semantics:
//!
//! - the tile coordinate equals the phase's TV layout at `(t, e + vec * k)`;
//! - the global offset equals the source (destination) layout, evaluated by `layout`, at the
//!   logical coordinate, and each vector access is contiguous and aligned;
//! - the shared-memory offset equals the swizzled tile layout, and each shared vector is
//!   contiguous and aligned.
//!
//! The checks extend to the WHOLE tensor: tile-local expressions may not read the block index;
//! each coordinate expression is checked for every block index along its axis; and each global
//! offset expression must be a sum of terms that each read one coordinate, checked along every
//! logical axis in full. Since the layout is certified to be a sum of per-dimension terms
//! (solver's `source form` / `destination form` claims), agreement along each axis with the
//! other coordinates zero implies agreement everywhere.
//!
//! Ragged plans: the guard expression, evaluated at each vector's first element, must equal
//! the plan's predicate ([`CopyPlan::active`]) at EVERY element of the vector in the checked
//! CTAs (which include the edge CTAs along each axis), and masked accesses are not checked
//! against the layouts (they touch no memory). For the whole tensor, the guard must be a
//! conjunction of terms that each read one coordinate, checked along every axis of the padded
//! box the grid covers; agreement along each axis with the other coordinates zero (inside the
//! tensor) implies agreement everywhere. A plan that overhangs the tensor without a guard is
//! refused.
//!
//! Then the data movement of one tile is simulated through the emitted shared-memory indices:
//! every slot is written at most once in phase 1, every read in phase 2 finds the element of
//! the cell it stores, and every cell is delivered exactly once (the identity on the tile).

use std::collections::BTreeSet;

use serde::Serialize;
use solver::{CopyPlan, Phase};

use crate::c_expr::{CExpr, Env};
use crate::copy_kernel::PhaseText;
use crate::error::CodegenError;

/// What validation covered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Validation {
    /// CTAs whose addresses were checked.
    pub ctas: usize,
    /// Element accesses compared with the layouts (both phases).
    pub accesses: u64,
    /// Points along the logical axes where the global offset expressions were compared.
    pub axis_points: u64,
    /// Tile cells delivered in the simulation.
    pub cells: u64,
    /// Block indices where the interior condition (unguarded CTAs) was checked.
    pub interior_ctas: u64,
}

struct Parsed {
    f: CExpr,
    s: CExpr,
    coords: Vec<CExpr>,
    global: CExpr,
    smem_linear: CExpr,
    smem: CExpr,
    guard: Option<CExpr>,
}

impl Parsed {
    fn new(t: &PhaseText) -> Result<Parsed, CodegenError> {
        Ok(Parsed {
            f: CExpr::parse(&t.f)?,
            s: CExpr::parse(&t.s)?,
            coords: t
                .coords
                .iter()
                .map(|c| CExpr::parse(c))
                .collect::<Result<_, _>>()?,
            global: CExpr::parse(&t.global)?,
            smem_linear: CExpr::parse(&t.smem_linear)?,
            smem: CExpr::parse(&t.smem)?,
            guard: t.guard.as_deref().map(CExpr::parse).transpose()?,
        })
    }
}

struct Access {
    cell: (i64, i64),
    coord: Vec<i64>,
    global: i64,
    smem: i64,
    /// The guard's value here (true without a guard).
    pass: bool,
}

/// Variable bindings of one access, in the order the kernel defines them.
struct Bindings(Vec<(&'static str, i64)>);

impl Bindings {
    fn set(&mut self, name: &'static str, v: i64) {
        self.0.push((name, v));
    }

    fn eval(&self, e: &CExpr) -> Result<i64, CodegenError> {
        e.eval_with(&|name| self.0.iter().rev().find(|(n, _)| *n == name).map(|b| b.1))
    }
}

const COORD_NAMES: [&str; 3] = ["c0", "c1", "c2"];

fn access(p: &Parsed, block: [i64; 3], t: i64, k: i64, e: i64) -> Result<Access, CodegenError> {
    let mut env = Bindings(Vec::with_capacity(16));
    for (n, v) in [
        ("t", t),
        ("k", k),
        ("e", e),
        ("bx", block[0]),
        ("by", block[1]),
        ("bz", block[2]),
    ] {
        env.set(n, v);
    }
    let cell = (env.eval(&p.f)?, env.eval(&p.s)?);
    env.set("f", cell.0);
    env.set("s", cell.1);
    let mut coord = Vec::new();
    for (d, c) in p.coords.iter().enumerate() {
        let v = env.eval(c)?;
        let name = COORD_NAMES
            .get(d)
            .ok_or_else(|| CodegenError::Validation(format!("a coordinate c{d} of rank > 3")))?;
        env.set(name, v);
        coord.push(v);
    }
    let global = env.eval(&p.global)?;
    let o = env.eval(&p.smem_linear)?;
    env.set("o", o);
    let smem = env.eval(&p.smem)?;
    let pass = match &p.guard {
        Some(g) => env.eval(g)? != 0,
        None => true,
    };
    Ok(Access {
        cell,
        coord,
        global,
        smem,
        pass,
    })
}

/// The one memory offset `global` gives `coord`, or `None` when it gives several points or a
/// point off `m`. Points are physical points as `layout::relation::point_of` defines them: an
/// alias of `m` (`offset`, `memory`) adds onto `m`.
fn memory_offset(
    global: &layout::Layout,
    shape: &[i64],
    coord: &[i64],
) -> Result<Option<i64>, CodegenError> {
    // A CuTe layout has one offset per coordinate: its own evaluation, without the point sets
    // of the general path (validation runs this for every access it checks).
    if let layout::Layout::Cute(c) = global {
        return Ok(Some(c.eval(shape, coord)?));
    }
    let points = global
        .eval(Some(shape), coord)?
        .iter()
        .map(layout::relation::normalize)
        .collect::<Result<BTreeSet<_>, _>>()?;
    Ok(match points.iter().collect::<Vec<_>>().as_slice() {
        [pt] if pt.keys().all(layout::Axis::is_m) => {
            Some(pt.get(&layout::Axis::m()).copied().unwrap_or(0))
        }
        _ => None,
    })
}

/// The emitted offset `got` at logical `coord` must be the layout's single offset there.
fn check_offset(
    plan: &CopyPlan,
    global: &layout::Layout,
    coord: &[i64],
    got: i64,
) -> Result<(), CodegenError> {
    let m = memory_offset(global, &plan.shape, coord)?;
    if Some(got) != m {
        return Err(CodegenError::Validation(format!(
            "coordinate {coord:?}: emitted offset {got} but {} maps it to {m:?}",
            global.print()
        )));
    }
    Ok(())
}

fn check_phase(
    plan: &CopyPlan,
    phase: &Phase,
    tv: &layout::TvLayout,
    p: &Parsed,
    global: &layout::Layout,
    block: [i64; 3],
) -> Result<u64, CodegenError> {
    let fail = |what: String| CodegenError::Validation(what);
    let mut n = 0u64;
    for t in 0..plan.threads {
        for k in 0..phase.iters {
            let mut first_global = 0;
            let mut first_smem = 0;
            let mut pass = true;
            for e in 0..phase.vec {
                let a = access(p, block, t, k, e)?;
                if e == 0 {
                    // The kernel evaluates the guard once per vector, at its first element.
                    pass = a.pass;
                }
                let want = tv.eval(t, e + phase.vec * k)?;
                if [a.cell.0, a.cell.1] != want[..] {
                    return Err(fail(format!(
                        "thread {t} k {k} e {e}: tile cell {:?}, TV layout says {want:?}",
                        a.cell
                    )));
                }
                if a.coord != plan.logical(block, a.cell) {
                    return Err(fail(format!(
                        "CTA {block:?} cell {:?}: coordinate {:?}",
                        a.cell, a.coord
                    )));
                }
                if pass != plan.active(&a.coord) {
                    return Err(fail(format!(
                        "CTA {block:?} thread {t} k {k} e {e}: the vector's guard says {pass} at \
                         coordinate {:?}, the plan's predicate {}",
                        a.coord,
                        plan.active(&a.coord)
                    )));
                }
                if !pass {
                    n += 1;
                    continue;
                }
                check_offset(plan, global, &a.coord, a.global)?;
                if e == 0 {
                    first_global = a.global;
                    if a.global % phase.vec != 0 {
                        return Err(fail(format!(
                            "vector at offset {} is not aligned to {}",
                            a.global, phase.vec
                        )));
                    }
                } else if a.global != first_global + e {
                    return Err(fail(format!(
                        "vector at {first_global} is not contiguous at element {e}"
                    )));
                }
                let sm = plan.smem.layout.eval(&plan.tile, &[a.cell.0, a.cell.1])?;
                if a.smem != sm {
                    return Err(fail(format!(
                        "cell {:?}: emitted shared offset {} but {} says {sm}",
                        a.cell, a.smem, plan.smem.layout
                    )));
                }
                if e % phase.smem_vec == 0 {
                    first_smem = a.smem;
                    if a.smem % phase.smem_vec != 0 {
                        return Err(fail(format!("shared vector at {} is not aligned", a.smem)));
                    }
                } else if a.smem != first_smem + e % phase.smem_vec {
                    return Err(fail(format!(
                        "shared vector at {first_smem} is not contiguous"
                    )));
                }
                n += 1;
            }
        }
    }
    Ok(n)
}

fn simulate(plan: &CopyPlan, load: &Parsed, store: &Parsed) -> Result<u64, CodegenError> {
    let fail = |what: String| CodegenError::Validation(what);
    let cells = (plan.tile[0] * plan.tile[1]) as usize;
    let mut slots: Vec<Option<(i64, i64)>> = vec![None; cells];
    let slot = |i: i64| usize::try_from(i).ok().filter(|&i| i < cells);
    for t in 0..plan.threads {
        for k in 0..plan.load.iters {
            for e in 0..plan.load.vec {
                let a = access(load, [0, 0, 0], t, k, e)?;
                let i = slot(a.smem)
                    .ok_or_else(|| fail(format!("shared offset {} outside the tile", a.smem)))?;
                if let Some(prev) = slots[i] {
                    return Err(fail(format!(
                        "cells {prev:?} and {:?} share shared slot {i}",
                        a.cell
                    )));
                }
                slots[i] = Some(a.cell);
            }
        }
    }
    let mut delivered = BTreeSet::new();
    for t in 0..plan.threads {
        for k in 0..plan.store.iters {
            for e in 0..plan.store.vec {
                let a = access(store, [0, 0, 0], t, k, e)?;
                let i = slot(a.smem)
                    .ok_or_else(|| fail(format!("shared offset {} outside the tile", a.smem)))?;
                match slots[i] {
                    Some(c) if c == a.cell => {}
                    other => {
                        return Err(fail(format!(
                            "cell {:?} reads slot {i} holding {other:?}",
                            a.cell
                        )))
                    }
                }
                if !delivered.insert(a.cell) {
                    return Err(fail(format!("cell {:?} is stored twice", a.cell)));
                }
            }
        }
    }
    if delivered.len() != cells {
        return Err(fail(format!(
            "{} of {cells} cells are stored",
            delivered.len()
        )));
    }
    Ok(cells as u64)
}

fn check_everywhere(
    plan: &CopyPlan,
    p: &Parsed,
    global: &layout::Layout,
) -> Result<u64, CodegenError> {
    let fail = |what: String| CodegenError::Validation(what);
    for e in [&p.f, &p.s, &p.smem_linear, &p.smem] {
        if let Some(v) = e
            .vars()
            .into_iter()
            .find(|v| v.starts_with('b') || v.starts_with('c'))
        {
            return Err(fail(format!("a tile-local expression reads {v}")));
        }
    }
    let mut n = 0u64;
    let axes = [("bx", "f", 0usize), ("by", "s", 1)];
    for (d, c) in p.coords.iter().enumerate() {
        let Some(&(bvar, lvar, axis)) = axes.iter().find(|a| plan.tile_dims[a.2] == d) else {
            // The z dimension: the coordinate is the grid's z index itself.
            for z in 0..plan.grid[2] {
                let env: Env = [("bz".to_string(), z)].into();
                if c.eval(&env)? != z {
                    return Err(fail(format!("coordinate c{d} at bz = {z}")));
                }
            }
            continue;
        };
        for b in 0..plan.grid[axis] {
            for l in 0..plan.tile[axis] {
                let env: Env = [(bvar.to_string(), b), (lvar.to_string(), l)].into();
                if c.eval(&env)? != b * plan.tile[axis] + l {
                    return Err(fail(format!(
                        "coordinate c{d} at {bvar} = {b}, {lvar} = {l}"
                    )));
                }
            }
        }
    }
    match &p.guard {
        None if plan.ragged() => {
            return Err(fail(
                "the tiles overhang the tensor but the kernel has no guard".into(),
            ))
        }
        None => {}
        Some(g) => n += check_guard(plan, g)?,
    }
    for term in p.global.summands() {
        if term.vars().len() > 1 {
            return Err(fail(format!(
                "global offset term {term:?} reads several coordinates"
            )));
        }
    }
    let rank = plan.shape.len();
    for d in 0..rank {
        for x in 0..plan.shape[d] {
            let mut coord = vec![0; rank];
            coord[d] = x;
            let env: Env = (0..rank).map(|i| (format!("c{i}"), coord[i])).collect();
            check_offset(plan, global, &coord, p.global.eval(&env)?)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The guard over the whole padded box: a conjunction of one-coordinate terms, equal to the
/// plan's predicate along every axis.
fn check_guard(plan: &CopyPlan, g: &CExpr) -> Result<u64, CodegenError> {
    let fail = |what: String| CodegenError::Validation(what);
    let rank = plan.shape.len();
    let coords: BTreeSet<String> = (0..rank).map(|d| format!("c{d}")).collect();
    for term in g.conjuncts() {
        let vars = term.vars();
        if vars.len() > 1 || vars.iter().any(|v| !coords.contains(*v)) {
            return Err(fail(format!(
                "guard term {term:?} does not read exactly one coordinate"
            )));
        }
    }
    let mut padded = plan.shape.clone();
    for a in 0..2 {
        padded[plan.tile_dims[a]] = plan.grid[a] * plan.tile[a];
    }
    let mut n = 0u64;
    for d in 0..rank {
        for x in 0..padded[d] {
            let mut coord = vec![0; rank];
            coord[d] = x;
            let env: Env = (0..rank).map(|i| (format!("c{i}"), coord[i])).collect();
            let got = g.eval(&env)? != 0;
            if got != plan.active(&coord) {
                return Err(fail(format!(
                    "the guard says {got} at {coord:?}, the plan's predicate {}",
                    plan.active(&coord)
                )));
            }
            n += 1;
        }
    }
    Ok(n)
}

/// The interior condition `cond` (in `bx`, `by`) of a ragged plan: a conjunction of terms
/// that each read one block index; every term, at every value of its index along the grid,
/// implies that the CTA's tile lies inside the tensor along that axis, and an axis no term
/// reads has no overhanging tile. So a CTA that takes the unguarded path has every cell inside
/// the tensor, where the guard is true and dropping it changes nothing. Returns the block
/// indices checked.
pub fn validate_interior(plan: &CopyPlan, cond: &str) -> Result<u64, CodegenError> {
    let fail = |what: String| CodegenError::Validation(what);
    let c = CExpr::parse(cond)?;
    let mut read = [false; 2];
    let mut n = 0u64;
    for term in c.conjuncts() {
        let vars = term.vars();
        let axis = match vars.iter().copied().collect::<Vec<_>>()[..] {
            ["bx"] => 0,
            ["by"] => 1,
            _ => {
                return Err(fail(format!(
                    "interior term {term:?} does not read exactly one of bx, by"
                )))
            }
        };
        read[axis] = true;
        let name = ["bx", "by"][axis];
        for b in 0..plan.grid[axis] {
            let env: Env = [(name.to_string(), b)].into();
            let full = (b + 1) * plan.tile[axis] <= plan.guard[axis];
            if term.eval(&env)? != 0 && !full {
                return Err(fail(format!(
                    "the interior condition holds at {name} = {b}, whose tile overhangs the \
                     tensor"
                )));
            }
            n += 1;
        }
    }
    for axis in 0..2 {
        if !read[axis] && plan.grid[axis] * plan.tile[axis] != plan.guard[axis] {
            return Err(fail(format!(
                "the interior condition does not bound {}, whose last tile overhangs the tensor",
                ["bx", "by"][axis]
            )));
        }
    }
    Ok(n)
}

/// Validates both phases' expressions of `plan` (see the module comment).
pub fn validate(
    plan: &CopyPlan,
    load: &PhaseText,
    store: &PhaseText,
) -> Result<Validation, CodegenError> {
    let (pl, ps) = (Parsed::new(load)?, Parsed::new(store)?);
    let g = plan.grid;
    // The first, the last (the corner edge tile of a ragged plan) and a middle CTA; a ragged
    // plan also the edge tiles along each axis alone (the other combinations of the guard).
    let mut blocks: BTreeSet<[i64; 3]> = [
        [0, 0, 0],
        [g[0] - 1, g[1] - 1, g[2] - 1],
        [g[0] / 2, g[1] / 3, g[2] / 2],
    ]
    .into_iter()
    .collect();
    if plan.ragged() {
        blocks.insert([g[0] - 1, 0, 0]);
        blocks.insert([0, g[1] - 1, 0]);
    }
    let mut out = Validation {
        ctas: blocks.len(),
        ..Validation::default()
    };
    for &b in &blocks {
        out.accesses += check_phase(plan, &plan.load, &plan.load_tv, &pl, &plan.src_layout, b)?;
        out.accesses += check_phase(plan, &plan.store, &plan.store_tv, &ps, &plan.dst_layout, b)?;
    }
    out.axis_points = check_everywhere(plan, &pl, &plan.src_layout)?;
    out.axis_points += check_everywhere(plan, &ps, &plan.dst_layout)?;
    out.cells = simulate(plan, &pl, &ps)?;
    Ok(out)
}

#[cfg(test)]
mod offset_tests {
    use super::memory_offset;
    use layout::Layout;

    #[test]
    fn memory_offset_adds_the_aliases_of_m() {
        // 2@m + 1@offset at (1,1): 2 + 1 = 3 (the first axis's value alone was 2).
        let l = Layout::parse("S[(2,2):(2@m,1@offset)]", None).unwrap();
        assert_eq!(memory_offset(&l, &[4], &[3]).unwrap(), Some(3));
        let l = Layout::parse("(2,2):(1,2)", None).unwrap();
        assert_eq!(memory_offset(&l, &[2, 2], &[1, 1]).unwrap(), Some(3));
        // A point off m, or several points, is no memory offset.
        let t = Layout::parse("S[2:1@tx]", None).unwrap();
        assert_eq!(memory_offset(&t, &[2], &[1]).unwrap(), None);
        let r = Layout::parse("S[2:1] + R[2:4]", None).unwrap();
        assert_eq!(memory_offset(&r, &[2], &[1]).unwrap(), None);
    }
}
