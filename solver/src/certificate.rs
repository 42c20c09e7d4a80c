//! [`PlanCertificate`]: the claims that make a copy plan correct, each checked before the plan is
//! returned, and a SHA-256 digest over them that the emitted kernel carries.
//!
//! The first claim is certify's data-movement claim ([`certify::movement`]): after the kernel,
//! `dst[D(x)] == src[S(x)]` for every logical coordinate `x`. certify decides it from its parts
//! (the per-dimension address forms equal the given layouts, the destination form is
//! injective, the grid partitions the tensor, and one tile's load and store stages through the
//! shared-memory layout move every cell to itself; the ceil-div grid covers the tensor and the
//! edge tiles' predicate is the tensor's bounds) and, for tensors of at most
//! [`certify::movement::SIMULATION_LIMIT`] elements, also by simulating the whole kernel; the
//! parts follow as claims of their own. The movement certificate travels with the plan, and
//! `laycert check` re-decides it.

use certify::movement::{prove_staged_copy, MovementCertificate, StagedCopy};
use certify::Policy;
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
    /// certify's data-movement certificate (`laycert check` re-decides it).
    pub movement: Option<MovementCertificate>,
}

fn policy() -> Policy {
    Policy {
        exhaustive_limit: 1 << 16,
        ..Policy::default()
    }
}

/// The plan's data movement as certify's staged-copy claim.
pub fn staged_copy(plan: &CopyPlan) -> Result<StagedCopy, PlanError> {
    Ok(StagedCopy {
        shape: plan.shape.clone(),
        src: plan.src_layout.clone(),
        dst: plan.dst_layout.clone(),
        src_form: plan.src.to_cute()?,
        dst_form: plan.dst.to_cute()?,
        tile_dims: plan.tile_dims,
        z_dim: plan.z_dim,
        tile: plan.tile,
        grid: plan.grid,
        guard: plan.guard,
        load: plan.load_tv.clone(),
        store: plan.store_tv.clone(),
        smem: Layout::Swizzled(plan.smem.layout.clone()),
    })
}

/// Checks every claim of `plan`; the first that fails is the error. The first claim is
/// certify's data-movement claim (`dst[D(x)] == src[S(x)]` for every `x`), then its parts.
pub fn certify_plan(plan: &CopyPlan) -> Result<PlanCertificate, PlanError> {
    let copy = staged_copy(plan)?;
    let report = prove_staged_copy(&copy, &policy())?;
    let movement = MovementCertificate::new(&copy, &report);
    if report.verdict != "proved" {
        return Err(PlanError::Certify {
            claim: "data movement is the identity".into(),
            why: format!(
                "{}{}",
                report.verdict,
                report.detail.map(|d| format!(": {d}")).unwrap_or_default()
            ),
        });
    }
    let mut claims = vec![CheckedClaim {
        name: "data movement is the identity".into(),
        statement: format!(
            "dst[{}](x) == src[{}](x) for every x of {:?}",
            plan.dst_layout.print(),
            plan.src_layout.print(),
            plan.shape
        ),
        verdict: "proved".into(),
        evidence: format!(
            "certify movement certificate sha256:{} ({})",
            movement.digest,
            report
                .deciders
                .iter()
                .map(|(d, v)| format!("{d}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }];
    claims.extend(report.parts.iter().map(|p| CheckedClaim {
        name: p.name.clone(),
        statement: p.statement.clone(),
        verdict: p.verdict.clone(),
        evidence: p.evidence.clone(),
    }));
    let text = serde_json::to_string(&claims).map_err(|e| PlanError::Certify {
        claim: "digest".into(),
        why: e.to_string(),
    })?;
    let digest = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(PlanCertificate {
        claims,
        digest,
        movement: Some(movement),
    })
}
