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
    /// Tile cells delivered in the simulation.
    pub cells: u64,
}

struct Parsed {
    f: CExpr,
    s: CExpr,
    coords: Vec<CExpr>,
    global: CExpr,
    smem_linear: CExpr,
    smem: CExpr,
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
        })
    }
}

struct Access {
    cell: (i64, i64),
    coord: Vec<i64>,
    global: i64,
    smem: i64,
}

fn set(env: &mut Env, name: &str, v: i64) {
    env.insert(name.to_string(), v);
}

fn access(p: &Parsed, block: [i64; 3], t: i64, k: i64, e: i64) -> Result<Access, CodegenError> {
    let mut env = Env::new();
    for (n, v) in [
        ("t", t),
        ("k", k),
        ("e", e),
        ("bx", block[0]),
        ("by", block[1]),
        ("bz", block[2]),
    ] {
        set(&mut env, n, v);
    }
    let cell = (p.f.eval(&env)?, p.s.eval(&env)?);
    set(&mut env, "f", cell.0);
    set(&mut env, "s", cell.1);
    let mut coord = Vec::new();
    for (d, c) in p.coords.iter().enumerate() {
        let v = c.eval(&env)?;
        set(&mut env, &format!("c{d}"), v);
        coord.push(v);
    }
    let global = p.global.eval(&env)?;
    let o = p.smem_linear.eval(&env)?;
    set(&mut env, "o", o);
    let smem = p.smem.eval(&env)?;
    Ok(Access {
        cell,
        coord,
        global,
        smem,
    })
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
            for e in 0..phase.vec {
                let a = access(p, block, t, k, e)?;
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
                let semantic = global.eval(Some(&plan.shape), &a.coord)?;
                let m = semantic
                    .iter()
                    .next()
                    .and_then(|pt| pt.values().next().copied())
                    .ok_or_else(|| fail(format!("layout gives no offset at {:?}", a.coord)))?;
                if semantic.len() != 1 || a.global != m {
                    return Err(fail(format!(
                        "coordinate {:?}: emitted offset {} but {} maps it to {m}",
                        a.coord,
                        a.global,
                        global.print()
                    )));
                }
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

/// Validates both phases' expressions of `plan` (see the module comment).
pub fn validate(
    plan: &CopyPlan,
    load: &PhaseText,
    store: &PhaseText,
) -> Result<Validation, CodegenError> {
    let (pl, ps) = (Parsed::new(load)?, Parsed::new(store)?);
    let g = plan.grid;
    let blocks: BTreeSet<[i64; 3]> = [
        [0, 0, 0],
        [g[0] - 1, g[1] - 1, g[2] - 1],
        [g[0] / 2, g[1] / 3, g[2] / 2],
    ]
    .into_iter()
    .collect();
    let mut out = Validation {
        ctas: blocks.len(),
        ..Validation::default()
    };
    for &b in &blocks {
        out.accesses += check_phase(plan, &plan.load, &plan.load_tv, &pl, &plan.src_layout, b)?;
        out.accesses += check_phase(plan, &plan.store, &plan.store_tv, &ps, &plan.dst_layout, b)?;
    }
    out.cells = simulate(plan, &pl, &ps)?;
    Ok(out)
}
