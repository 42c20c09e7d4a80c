//! [`PlanCertificate`]: the claims that make a copy plan correct, each checked before the plan is
//! returned, and a SHA-256 digest over them that the emitted kernel carries.
//!
//! Claims (the data movement is the identity on the logical tensor when all hold):
//! 1. `source form` / `destination form`: the per-dimension form the kernel's addresses are
//!    generated from is equivalent to the layout as given (certify's deciders, z3 for large
//!    domains; its certificate digest is recorded).
//! 2. `destination injective`: no two elements are written to one address (nested strides).
//! 3. `load TV bijective` / `store TV bijective`: each phase reaches every tile cell exactly
//!    once (certify, exhaustively over the tile).
//! 4. `shared tile injective`: distinct cells get distinct shared-memory slots (certify), so
//!    what the store phase reads at a cell's slot is what the load phase wrote for that cell.
//! 5. `grid covers`: tiles divide the extents, so the grid partitions the tensor.

use certify::certificate::certify_equivalence;
use certify::property::{prove_property, Property};
use certify::{equivalent, Policy};
use layout::Layout;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::copy::CopyPlan;
use crate::error::PlanError;

/// One checked claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CheckedClaim {
    /// Short name.
    pub name: String,
    /// What was claimed.
    pub statement: String,
    /// `proved` (certify) or `checked` (arithmetic in the planner).
    pub verdict: String,
    /// The evidence: certify's deciders or certificate digest, or the arithmetic.
    pub evidence: String,
}

/// All claims of a plan and their digest.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanCertificate {
    /// The claims, in the order above.
    pub claims: Vec<CheckedClaim>,
    /// SHA-256 over the claims' JSON.
    pub digest: String,
}

fn policy() -> Policy {
    Policy {
        exhaustive_limit: 1 << 16,
        ..Policy::default()
    }
}

fn form_claim(
    which: &str,
    given: &Layout,
    plan: &CopyPlan,
    form: Layout,
) -> Result<CheckedClaim, PlanError> {
    let report = equivalent(given, &form, Some(&plan.shape), &policy())?;
    let name = format!("{which} form");
    if report.verdict() != "equivalent" {
        return Err(PlanError::Certify {
            claim: name,
            why: format!(
                "{} vs {}: {}",
                given.print(),
                form.print(),
                report.verdict()
            ),
        });
    }
    let cert = certify_equivalence(given, &form, &report);
    Ok(CheckedClaim {
        name,
        statement: format!(
            "{} == {} over {:?}",
            given.print(),
            form.print(),
            plan.shape
        ),
        verdict: "proved".into(),
        evidence: format!("certificate sha256:{}", cert.digest),
    })
}

fn property_claim(
    name: &str,
    l: Layout,
    prop: Property,
    shape: Option<&[i64]>,
) -> Result<CheckedClaim, PlanError> {
    let report = prove_property(&l, prop, shape, &policy())?;
    if report.verdict != "proved" {
        return Err(PlanError::Certify {
            claim: name.into(),
            why: format!(
                "{}: {}{}",
                l.print(),
                report.verdict,
                report.detail.map(|d| format!(" ({d})")).unwrap_or_default()
            ),
        });
    }
    Ok(CheckedClaim {
        name: name.into(),
        statement: format!("{} is {prop:?}", l.print()).to_lowercase(),
        verdict: "proved".into(),
        evidence: report
            .deciders
            .iter()
            .map(|(d, v)| format!("{d}: {v}"))
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// Checks every claim of `plan`; the first that fails is the error.
pub fn certify_plan(plan: &CopyPlan) -> Result<PlanCertificate, PlanError> {
    let mut claims = vec![
        form_claim(
            "source",
            &plan.src_layout,
            plan,
            Layout::Cute(plan.src.to_cute()?),
        )?,
        form_claim(
            "destination",
            &plan.dst_layout,
            plan,
            Layout::Cute(plan.dst.to_cute()?),
        )?,
    ];
    if let Some((a, b)) = plan.dst.overlapping_modes() {
        return Err(PlanError::Certify {
            claim: "destination injective".into(),
            why: format!("modes {a:?} and {b:?} overlap"),
        });
    }
    claims.push(CheckedClaim {
        name: "destination injective".into(),
        statement: format!(
            "{} is injective over {:?}",
            plan.dst_layout.print(),
            plan.shape
        ),
        verdict: "checked".into(),
        evidence: "sorted by stride, each mode's stride is at least the span below it".into(),
    });
    claims.push(property_claim(
        "load TV bijective",
        Layout::Tv(plan.load_tv.clone()),
        Property::Bijective,
        None,
    )?);
    claims.push(property_claim(
        "store TV bijective",
        Layout::Tv(plan.store_tv.clone()),
        Property::Bijective,
        None,
    )?);
    claims.push(property_claim(
        "shared tile injective",
        Layout::Swizzled(plan.smem.layout.clone()),
        Property::Injective,
        Some(&plan.tile),
    )?);
    let dims = [plan.tile_dims[0], plan.tile_dims[1]];
    for (axis, &d) in dims.iter().enumerate() {
        if plan.shape[d] != plan.grid[axis] * plan.tile[axis] {
            return Err(PlanError::Certify {
                claim: "grid covers".into(),
                why: format!(
                    "{} tiles of {} != extent {}",
                    plan.grid[axis], plan.tile[axis], plan.shape[d]
                ),
            });
        }
    }
    claims.push(CheckedClaim {
        name: "grid covers".into(),
        statement: format!(
            "grid {:?} x tile {:?} partitions {:?}",
            plan.grid, plan.tile, plan.shape
        ),
        verdict: "checked".into(),
        evidence: format!(
            "dimension {} = {} x {}, dimension {} = {} x {}{}",
            dims[0],
            plan.grid[0],
            plan.tile[0],
            dims[1],
            plan.grid[1],
            plan.tile[1],
            plan.z_dim
                .map(|z| format!(", dimension {z} = grid z {}", plan.grid[2]))
                .unwrap_or_default()
        ),
    });
    let text = serde_json::to_string(&claims).map_err(|e| PlanError::Certify {
        claim: "digest".into(),
        why: e.to_string(),
    })?;
    let digest = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(PlanCertificate { claims, digest })
}
