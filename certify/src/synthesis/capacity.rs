//! The capacity claim: the shared memory a plan's kernel allocates fits the budget it was built
//! for. The byte count is re-derived here from the certified tensors, never read from the claim.
//!
//! Without an allocation (what `laycert synth` certifies) the plan's shared tensors are each
//! allocated once: the bytes are the sum of their footprints, `(largest offset + 1) x bits / 8`
//! from the tensor's own layout, and the budget is the target's limit ([`smem_limit`]).
//!
//! A kernel built from the plan states how it allocates its dynamic shared memory
//! ([`SmemAllocation`]): phases of buffers, a buffer being `copies` copies of one of the plan's
//! shared tensors (a pipeline's stages) or of the values of `threads` threads of a register
//! tensor staged through shared memory. A later phase begins after the program's last operation
//! on every earlier phase's tensors (checked on the certificate's ops), so it reuses their
//! bytes. The allocation is then
//!
//! ```text
//! bytes = max over phases (sum over buffers (copies x buffer bytes)) + align
//! ```
//!
//! where `align` is the slack the kernel spends aligning its base, at least `period - 16` for
//! every shared tensor the hardware reads through its swizzle (a canonical claim: TMA, wgmma)
//! whose swizzle repeats every `period` bytes (the base, 16-byte aligned as CUDA guarantees for
//! dynamic shared memory, is rounded up to the period); every shared tensor of the plan must be
//! in some phase. Worked example (a test checks it): the sm80 GEMM's bf16 tile of
//! 128 x 256 x 64 in 3 stages, phases `[[a_s x 3, b_s x 3], [h_s]]`, align 1024, where `a_s` is
//! 128 x 64, `b_s` 256 x 64 and `h_s` 128 x 256 bf16: `max(3 (16384 + 32768), 65536) + 1024 =
//! 148480` bytes, within sm80's 166912.
//!
//! The budget is the allocation's `budget`: at most [`MAX_SMEM_BUDGET`], the most any device
//! that runs sm80 or sm90 code gives one CTA (a kernel of sm80 instructions built for an H100
//! or H200 may use it). The claim's `limit` must be that budget and its `bytes` the derived
//! count, at most the budget.

use std::collections::BTreeSet;

use layout::Layout;
use serde::{Deserialize, Serialize};

use super::{footprint, Parsed, SynthClaim, SynthesisCertificate, Tensors};

/// Most shared memory one CTA may use on compute capability 8.0 (A100): 163 KiB (CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability").
pub const SM80_SMEM_LIMIT: i64 = 163 * 1024;

/// Most shared memory one CTA may use on compute capability 9.0 (H100, H200): 227 KiB.
pub const SM90_SMEM_LIMIT: i64 = 227 * 1024;

/// The largest budget a certificate may state: no device that runs sm80 or sm90 code gives a
/// CTA more than 227 KiB.
pub const MAX_SMEM_BUDGET: i64 = SM90_SMEM_LIMIT;

/// Most copies of one buffer an allocation may name (bounds the arithmetic).
pub const MAX_COPIES: i64 = 1 << 16;

/// Shared-memory limit per CTA of a target, in bytes.
pub fn smem_limit(target: &str) -> Option<i64> {
    match target {
        "sm80" => Some(SM80_SMEM_LIMIT),
        "sm90" => Some(SM90_SMEM_LIMIT),
        _ => None,
    }
}

/// How a kernel allocates its dynamic shared memory (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmemAllocation {
    /// The budget the kernel was built for, in bytes per CTA: the capacity claim's limit.
    pub budget: i64,
    /// Buffers live together; each phase reuses the bytes of the phases before it.
    pub phases: Vec<Vec<SmemBuffer>>,
    /// Bytes the kernel adds to align its base.
    pub align: i64,
}

/// Copies of one tensor in shared memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmemBuffer {
    /// A shared tensor of the plan, or a register tensor staged through shared memory.
    pub tensor: String,
    /// How many copies (a pipeline's stages).
    pub copies: i64,
    /// A register tensor: the values of this many of its threads, each copy (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<i64>,
}

impl SmemBuffer {
    /// `copies` copies of every cell of `tensor`.
    pub fn new(tensor: &str, copies: i64) -> SmemBuffer {
        SmemBuffer {
            tensor: tensor.into(),
            copies,
            threads: None,
        }
    }
}

/// The budget a certificate's capacity claim must state: its allocation's, else its target's
/// limit.
pub fn budget(c: &SynthesisCertificate) -> Result<i64, String> {
    match &c.smem {
        Some(a) if !(1..=MAX_SMEM_BUDGET).contains(&a.budget) => Err(format!(
            "a shared-memory budget of {} bytes: a CTA has 1..={MAX_SMEM_BUDGET}",
            a.budget
        )),
        Some(a) => Ok(a.budget),
        None => {
            smem_limit(&c.target).ok_or_else(|| format!("target {:?} has no known limit", c.target))
        }
    }
}

/// The shared memory the certificate's plan takes, in bytes: its allocation's, or every shared
/// tensor once.
pub fn smem_bytes(c: &SynthesisCertificate) -> Result<i64, String> {
    let ts = Tensors::new(&c.tensors)?;
    allocated(c, &ts)
}

/// Decides a capacity claim: `bytes` is what the plan takes, `limit` its budget, and it fits.
pub(super) fn capacity(
    c: &SynthesisCertificate,
    ts: &Tensors,
    bytes: i64,
    limit: i64,
) -> Result<(), String> {
    let total = allocated(c, ts)?;
    if total != bytes {
        return Err(format!(
            "the plan's shared memory takes {total} bytes, the claim says {bytes}"
        ));
    }
    let budget = budget(c)?;
    if limit != budget {
        return Err(format!(
            "the claim's limit is {limit} bytes, the plan's budget {budget}"
        ));
    }
    if total > limit {
        return Err(format!(
            "{total} bytes of shared memory exceed the budget of {limit}"
        ));
    }
    Ok(())
}

fn allocated(c: &SynthesisCertificate, ts: &Tensors) -> Result<i64, String> {
    let Some(a) = &c.smem else {
        let mut total = 0i64;
        for (t, p) in ts.map.values() {
            if let (Parsed::Mem(_, table), "shared") = (p, t.scope.as_str()) {
                total = total.saturating_add(footprint(t, table));
            }
        }
        return Ok(total);
    };
    if !(0..=MAX_SMEM_BUDGET).contains(&a.align) {
        return Err(format!(
            "alignment slack {}: 0..={MAX_SMEM_BUDGET} bytes",
            a.align
        ));
    }
    // A tensor the hardware reads through its canonical swizzle (TMA, wgmma descriptors: a
    // canonical claim) is swizzled by address bits, so its base must be aligned to the
    // swizzle's period: the kernel's slack must cover rounding a base that is only 16-byte
    // aligned (what CUDA guarantees dynamic shared memory) up to it. (Swizzles the kernel
    // computes itself are relative to the buffer and need no more than its vectors' 16 bytes.)
    let canonical: BTreeSet<&str> = c
        .claims
        .iter()
        .filter_map(|k| match k {
            SynthClaim::Canonical { tensor, .. } => Some(tensor.as_str()),
            _ => None,
        })
        .collect();
    for (t, p) in ts.map.values() {
        if !canonical.contains(t.name.as_str()) {
            continue;
        }
        if let (Parsed::Mem(Layout::Swizzled(x), _), "shared") = (p, t.scope.as_str()) {
            let sw = x.swizzle();
            // One past the highest bit the swizzle reads or writes.
            let top = 64 - sw.source_mask().max(sw.dest_mask()).leading_zeros();
            let elems = if top < 62 { 1i64 << top } else { i64::MAX };
            let period = elems.saturating_mul(t.bits) / 8;
            if period > 16 && a.align < period - 16 {
                return Err(format!(
                    "alignment slack {} bytes: {}'s swizzle repeats every {period} bytes, so the \
                     kernel aligns its base to {period} bytes, which takes up to {} bytes",
                    a.align,
                    t.name,
                    period - 16
                ));
            }
        }
    }
    let overflow = || "the allocation's byte count overflows".to_string();
    let mut placed = BTreeSet::new();
    let mut largest = 0i64;
    // The last op (index) on an earlier phase's tensors.
    let mut earlier_end: Option<(usize, usize)> = None;
    for (i, phase) in a.phases.iter().enumerate() {
        if phase.is_empty() {
            return Err(format!("phase {i} of the allocation is empty"));
        }
        let mut sum = 0i64;
        let (mut first, mut last) = (usize::MAX, 0usize);
        for b in phase {
            if !placed.insert(b.tensor.as_str()) {
                return Err(format!("{} is allocated twice", b.tensor));
            }
            if !(1..=MAX_COPIES).contains(&b.copies) {
                return Err(format!(
                    "{}: {} copies (1..={MAX_COPIES})",
                    b.tensor, b.copies
                ));
            }
            let one = buffer_bytes(ts, b)?;
            sum = one
                .checked_mul(b.copies)
                .and_then(|x| x.checked_add(sum))
                .ok_or_else(overflow)?;
            let uses: Vec<usize> = c
                .ops
                .iter()
                .enumerate()
                .filter(|(_, o)| o.output == b.tensor || o.inputs.contains(&b.tensor))
                .map(|(k, _)| k)
                .collect();
            let (Some(&f), Some(&l)) = (uses.first(), uses.last()) else {
                return Err(format!(
                    "{} is allocated but no operation uses it",
                    b.tensor
                ));
            };
            first = first.min(f);
            last = last.max(l);
        }
        if let Some((p, end)) = earlier_end {
            if first <= end {
                return Err(format!(
                    "phase {i} is used from line {} on, before phase {p}'s last use at line {}: \
                     it cannot reuse phase {p}'s bytes",
                    c.ops[first].line, c.ops[end].line
                ));
            }
        }
        earlier_end = Some((i, last));
        largest = largest.max(sum);
    }
    for (t, _) in ts.map.values() {
        if t.scope == "shared" && !placed.contains(t.name.as_str()) {
            return Err(format!(
                "the shared tensor {} is not in the allocation",
                t.name
            ));
        }
    }
    largest.checked_add(a.align).ok_or_else(overflow)
}

/// Bytes of one copy of a buffer: a shared tensor's footprint, or a register tensor's values of
/// `threads` threads.
fn buffer_bytes(ts: &Tensors, b: &SmemBuffer) -> Result<i64, String> {
    match ts.get(&b.tensor)? {
        (t, Parsed::Mem(_, table)) if t.scope == "shared" => match b.threads {
            None => Ok(footprint(t, table)),
            Some(_) => Err(format!(
                "{}: threads name a share of a register tensor",
                b.tensor
            )),
        },
        (t, Parsed::Reg(tv, _)) => {
            let all = tv.threads();
            let n = b.threads.unwrap_or(all);
            if !(1..=all).contains(&n) {
                return Err(format!("{}: {n} of its {all} threads", b.tensor));
            }
            n.checked_mul(tv.values())
                .and_then(|x| x.checked_mul(t.bits))
                .map(|bits| (bits + 7) / 8)
                .ok_or_else(|| format!("{}: the byte count overflows", b.tensor))
        }
        (t, _) => Err(format!(
            "{} is a {} tensor: it takes no shared memory",
            b.tensor, t.scope
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesis::{SynthOp, SynthTensor, VERSION};

    fn tensor(name: &str, scope: &str, shape: &[i64], layout: &str) -> SynthTensor {
        SynthTensor {
            name: name.into(),
            scope: scope.into(),
            dtype: "bf16".into(),
            bits: 16,
            shape: shape.to_vec(),
            layout: layout.into(),
            bounds: None,
        }
    }

    fn op(line: usize, inputs: &[&str], output: &str) -> SynthOp {
        SynthOp {
            line,
            op: "copy".into(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            output: output.into(),
            instruction: "-".into(),
        }
    }

    /// The module doc's example: the sm80 GEMM's 128 x 256 x 64 bf16 tile in 3 stages, the
    /// epilogue tile reusing the ring after the main loop.
    fn gemm(stages: i64, budget: i64) -> SynthesisCertificate {
        SynthesisCertificate {
            version: VERSION,
            kind: "synthesis".into(),
            program: "g".into(),
            source: None,
            target: "sm80".into(),
            threads: 256,
            tensors: vec![
                tensor("a_s", "shared", &[128, 64], "Sw<3,3,3> o (128,64):(64,1)"),
                tensor("b_s", "shared", &[256, 64], "Sw<3,3,3> o (256,64):(64,1)"),
                tensor("h_s", "shared", &[128, 256], "(128,256):(256,1)"),
                tensor(
                    "c",
                    "register",
                    &[128, 256],
                    "(256,128):(128,1) -> (128,256)",
                ),
            ],
            ops: vec![
                op(10, &["a_g"], "a_s"),
                op(11, &["b_g"], "b_s"),
                op(12, &["a_s", "b_s"], "a"),
                op(13, &["a"], "c"),
                op(14, &["c"], "h_s"),
                op(15, &["h_s"], "c_g"),
            ],
            smem: Some(SmemAllocation {
                budget,
                phases: vec![
                    vec![
                        SmemBuffer::new("a_s", stages),
                        SmemBuffer::new("b_s", stages),
                    ],
                    vec![SmemBuffer::new("h_s", 1)],
                ],
                align: 1024,
            }),
            kernel: None,
            claims: Vec::new(),
            verdict: "proved".into(),
            digest: String::new(),
        }
    }

    fn decide_capacity(c: &SynthesisCertificate, bytes: i64, limit: i64) -> Result<(), String> {
        capacity(c, &Tensors::new(&c.tensors)?, bytes, limit)
    }

    #[test]
    fn allocation_is_the_largest_phase_plus_its_alignment() {
        assert_eq!(smem_bytes(&gemm(3, SM80_SMEM_LIMIT)), Ok(148480));
        assert_eq!(smem_bytes(&gemm(4, MAX_SMEM_BUDGET)), Ok(197632));
        // One stage: the epilogue tile is the larger phase.
        assert_eq!(smem_bytes(&gemm(1, SM80_SMEM_LIMIT)), Ok(65536 + 1024));
        // Without an allocation: every shared tensor once.
        let plain = SynthesisCertificate {
            smem: None,
            ..gemm(3, 0)
        };
        assert_eq!(smem_bytes(&plain), Ok(16384 + 32768 + 65536));
    }

    #[test]
    fn capacity_claim_must_be_the_derived_bytes_at_the_budget() {
        decide_capacity(&gemm(3, SM80_SMEM_LIMIT), 148480, SM80_SMEM_LIMIT).unwrap();
        decide_capacity(&gemm(4, MAX_SMEM_BUDGET), 197632, MAX_SMEM_BUDGET).unwrap();
        // Bytes lowered, the limit raised, the stages raised: each refused.
        let e = decide_capacity(&gemm(3, SM80_SMEM_LIMIT), 114688, SM80_SMEM_LIMIT).unwrap_err();
        assert!(
            e.contains("takes 148480 bytes, the claim says 114688"),
            "{e}"
        );
        let e = decide_capacity(&gemm(3, SM80_SMEM_LIMIT), 148480, MAX_SMEM_BUDGET).unwrap_err();
        assert!(e.contains("the plan's budget 166912"), "{e}");
        let e = decide_capacity(&gemm(4, SM80_SMEM_LIMIT), 148480, SM80_SMEM_LIMIT).unwrap_err();
        assert!(e.contains("takes 197632 bytes"), "{e}");
        // Consistent, but over the budget.
        let e = decide_capacity(&gemm(4, SM80_SMEM_LIMIT), 197632, SM80_SMEM_LIMIT).unwrap_err();
        assert!(e.contains("exceed the budget of 166912"), "{e}");
        // A budget no device has.
        let e = budget(&gemm(4, MAX_SMEM_BUDGET + 1)).unwrap_err();
        assert!(e.contains("1..=232448"), "{e}");
    }

    #[test]
    fn alignment_slack_covers_the_largest_swizzle_period() {
        // a_s and b_s read by the hardware through Sw<3,3,3> over bf16 (canonical claims, as
        // TMA and wgmma read them): it repeats every 512 elements, 1024 bytes, and a 16-byte
        // aligned base needs up to 1008 bytes to reach it (session 30's audit: a slack of 0 was
        // taken on trust, so 6 stages claimed to fit 1024 bytes too few).
        let hardware = |align: i64| {
            let mut c = gemm(3, SM80_SMEM_LIMIT);
            c.smem.as_mut().unwrap().align = align;
            for t in ["a_s", "b_s"] {
                c.claims.push(SynthClaim::Canonical {
                    tensor: t.into(),
                    atom_name: "SW128".into(),
                    atom: "Sw<3,3,3> o (8,64):(64,1)".into(),
                });
            }
            c
        };
        for align in [0, 16, 512, 1007] {
            let e = smem_bytes(&hardware(align)).unwrap_err();
            assert!(e.contains("repeats every 1024 bytes"), "{align}: {e}");
        }
        assert_eq!(smem_bytes(&hardware(1008)), Ok(148480 - 16));
        // Swizzles the kernel computes itself (no canonical claim) need no slack.
        let mut c = gemm(3, SM80_SMEM_LIMIT);
        c.smem.as_mut().unwrap().align = 0;
        assert_eq!(smem_bytes(&c), Ok(148480 - 1024));
    }

    #[test]
    fn allocation_must_hold_every_shared_tensor_once_in_program_order() {
        let mut c = gemm(3, SM80_SMEM_LIMIT);
        c.smem.as_mut().unwrap().phases.pop();
        let e = smem_bytes(&c).unwrap_err();
        assert!(e.contains("h_s is not in the allocation"), "{e}");
        let mut c = gemm(3, SM80_SMEM_LIMIT);
        c.smem.as_mut().unwrap().phases[1].push(SmemBuffer::new("a_s", 1));
        assert!(smem_bytes(&c)
            .unwrap_err()
            .contains("a_s is allocated twice"));
        // The epilogue tile cannot reuse the ring while the ring is still read.
        let mut c = gemm(3, SM80_SMEM_LIMIT);
        c.smem.as_mut().unwrap().phases.swap(0, 1);
        let e = smem_bytes(&c).unwrap_err();
        assert!(e.contains("cannot reuse phase 0's bytes"), "{e}");
        let mut c = gemm(0, SM80_SMEM_LIMIT);
        assert!(smem_bytes(&c).unwrap_err().contains("0 copies"));
        c.smem.as_mut().unwrap().phases[0][0].copies = MAX_COPIES;
        c.smem.as_mut().unwrap().phases[0][1].copies = 1;
        smem_bytes(&c).unwrap();
    }

    #[test]
    fn register_tensor_share_is_its_threads_values() {
        // c: 256 threads x 128 bf16 values; a partial of 32 threads' values, twice, after the
        // ring (the W4A16 K-group CTA's f32 partials are such a buffer).
        let mut c = gemm(1, SM80_SMEM_LIMIT);
        let a = c.smem.as_mut().unwrap();
        a.phases[1].push(SmemBuffer {
            tensor: "c".into(),
            copies: 2,
            threads: Some(32),
        });
        assert_eq!(smem_bytes(&c), Ok(65536 + 2 * 32 * 128 * 2 + 1024));
        c.smem.as_mut().unwrap().phases[1][1].threads = Some(257);
        assert!(smem_bytes(&c)
            .unwrap_err()
            .contains("257 of its 256 threads"));
    }
}
