//! TensorE dispatch claims: a matmul `C[M,N] += A[K,M].T @ B[K,N]` on Trainium, dispatched as
//! a loop nest of `nc_matmul` instructions, covers every cell of `C` exactly once and
//! accumulates every `k` into it exactly once.
//!
//! The claim is stated over concrete data a kernel executes. `A` and `B` live in SBUF and `C`
//! in PSUM; each is an Axe layout from its logical `[rows, cols]` to `{P, F}` points. A
//! dispatch has one or more *pieces* (a K range `[k0, k0+k)` each, so a K that is no multiple
//! of the instruction still dispatches: the full tiles and the tail are two pieces that
//! accumulate into the same `C`). A piece is an instruction shape `(kt, mt, nt)` and a loop
//! nest; every loop belongs to one logical dim (`k`, `m` or `n`) and moves only the operands
//! that carry that dim (`A` by k and m loops, `B` by k and n loops, `C` by m and n loops: the
//! format has no slot for anything else). Instance `i` of the nest reads the stationary tile
//! at partitions `a_base.P + sum(i_l * a_l.P) + p` and free offsets
//! `a_base.F + sum(i_l * a_l.F) + j * a_free` (`p < kt`, `j < mt`), the moving tile likewise
//! with `c < nt`, and writes `dst[j, c]` at `C`'s `(p = j, f = c * c_free)` plus its base.
//!
//! [`check`] re-decides the claim from the layouts' semantics alone ([`layout::AxeLayout::eval`]
//! at every logical coordinate, inverted into a table of physical points): every operand
//! element an instruction touches is a cell of its layout; the `k` a stationary element holds
//! depends only on `(k loops, p)` and the moving element at the same `(k loops, p)` holds the
//! same `k`; the `m` depends only on `(m loops, j)` and is the `m` of `C` at the instruction's
//! `(m loops, j)`; the same for `n`; and `(k loops, p) -> k`, `(m loops, j) -> m`,
//! `(n loops, c) -> n` are bijections onto the piece's K range, `[0, M)` and `[0, N)`. Then each
//! `C[m, n]` receives `sum over k of A[k, m] * B[k, n]` once per piece, over disjoint K ranges
//! that cover `[0, K)`. It also re-checks the documented instruction limits (partition <= 128,
//! stationary free <= 128, moving free <= 512, the output inside one 2 KiB PSUM bank, PSUM and
//! SBUF capacity per partition of the target). Worked example (a test checks it):
//! `A = S[(2,128,128):(128@F,1@P,1@F)]`, `B = S[(2,128,512):(512@F,1@P,1@F)]`,
//! `C = S[(128,512):(1@P,1@F)]`, instruction `128x128x512`, one `k` loop of 2 with steps
//! `128@F` (A) and `512@F` (B): two instructions, 256 = K accumulated once.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use layout::notation::axe::parse;
use layout::AxeLayout;

/// The certificate format version this build writes and checks.
pub const VERSION: u32 = 1;

/// Most operand-element visits [`check`] performs (`M*K + K*N + M*N` per piece, summed): 2^25.
/// A larger claim is refused as too large to re-check, never half-checked.
pub const CHECK_LIMIT: i64 = 1 << 25;

/// A `{P, F}` offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Partitions.
    pub p: i64,
    /// Free elements.
    pub f: i64,
}

/// One loop of a piece's nest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Loop {
    /// `k`, `m` or `n`.
    pub dim: String,
    /// Trip count.
    pub extent: i64,
    /// How one iteration moves the stationary operand (k and m loops only).
    pub a: Option<Step>,
    /// How one iteration moves the moving operand (k and n loops only).
    pub b: Option<Step>,
    /// How one iteration moves the PSUM output (m and n loops only).
    pub c: Option<Step>,
}

/// One K range of a dispatch: its operand layouts, instruction shape and loop nest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Piece {
    /// First logical k of this piece.
    pub k0: i64,
    /// Its K extent.
    pub k: i64,
    /// `A[k, M]` in SBUF (Axe text over P and F).
    pub a: String,
    /// `B[k, N]` in SBUF.
    pub b: String,
    /// The instruction `[kt, mt, nt]`.
    pub instruction: [i64; 3],
    /// The loop nest, outermost first.
    pub loops: Vec<Loop>,
    /// Stationary tile origin.
    pub a_base: Step,
    /// Free stride of the stationary tile's `j`.
    pub a_free: i64,
    /// Moving tile origin.
    pub b_base: Step,
    /// Free stride of the moving tile's `c`.
    pub b_free: i64,
    /// Output tile origin in PSUM.
    pub c_base: Step,
    /// Free stride of the output tile's `c`.
    pub c_free: i64,
}

/// A TensorE dispatch certificate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchCertificate {
    /// Always `tensore-dispatch`.
    pub kind: String,
    /// Format version.
    pub version: u32,
    /// What the dispatch is for (free text, e.g. `gemm block 128x512`).
    pub name: String,
    /// `trn1` or `trn2` (capacities from `layout/data/trainium.toml`).
    pub target: String,
    /// Bytes of an SBUF operand element (2 for bf16/f16).
    pub dtype_bytes: i64,
    /// `[K, M, N]`.
    pub dims: [i64; 3],
    /// `C[M, N]` in PSUM (float32 elements on F).
    pub c: String,
    /// The K pieces.
    pub pieces: Vec<Piece>,
    /// `proved`.
    pub verdict: String,
    /// SHA-256 over the other fields.
    pub digest: String,
}

/// Why a dispatch claim does not hold, or its certificate is not valid.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// Not a certificate of this format.
    #[error("not a tensore-dispatch certificate: {0}")]
    Format(String),
    /// The digest does not match the content.
    #[error("digest mismatch: the certificate was edited after it was made")]
    Digest,
    /// A documented hardware rule is violated; the rule's name comes first.
    #[error("{rule}: {why}")]
    Rule {
        /// The rule's name (`partition-dim`, `matmul-moving-free`, `psum-bank`, ...).
        rule: &'static str,
        /// What violates it.
        why: String,
    },
    /// The loop nest does not compute the matmul.
    #[error("the dispatch does not compute C += A.T @ B: {0}")]
    Wrong(String),
    /// The claim is larger than [`CHECK_LIMIT`].
    #[error("too large to re-check: {0} operand-element visits > {CHECK_LIMIT}")]
    TooLarge(i64),
}

fn rule(rule: &'static str, why: impl Into<String>) -> DispatchError {
    DispatchError::Rule {
        rule,
        why: why.into(),
    }
}

fn wrong(why: impl Into<String>) -> DispatchError {
    DispatchError::Wrong(why.into())
}

impl DispatchCertificate {
    /// Decides the claim and, when it holds, returns the certificate with verdict `proved`.
    pub fn prove(
        name: &str,
        target: &str,
        dtype_bytes: i64,
        dims: [i64; 3],
        c: String,
        pieces: Vec<Piece>,
    ) -> Result<DispatchCertificate, DispatchError> {
        let mut cert = DispatchCertificate {
            kind: "tensore-dispatch".into(),
            version: VERSION,
            name: name.into(),
            target: target.into(),
            dtype_bytes,
            dims,
            c,
            pieces,
            verdict: "proved".into(),
            digest: String::new(),
        };
        decide(&cert)?;
        cert.digest = digest(&cert);
        Ok(cert)
    }

    /// The line `check` prints for it: `TensorE dispatch proved: NAME (N instruction(s), K x M
    /// x N = ..)`.
    pub fn summary(&self) -> String {
        format!(
            "TensorE dispatch proved: {} ({} instruction(s), K x M x N = {} x {} x {})",
            self.name,
            self.instructions(),
            self.dims[0],
            self.dims[1],
            self.dims[2]
        )
    }

    /// Instructions the dispatch issues.
    pub fn instructions(&self) -> i64 {
        self.pieces
            .iter()
            .map(|p| p.loops.iter().map(|l| l.extent).product::<i64>())
            .sum()
    }
}

/// SHA-256 of the certificate with its digest field blanked.
pub fn digest(c: &DispatchCertificate) -> String {
    let mut blank = c.clone();
    blank.digest = String::new();
    let text = serde_json::to_string(&blank).expect("certificates serialize");
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// Re-verifies a certificate from scratch.
pub fn check(json: &str) -> Result<DispatchCertificate, DispatchError> {
    let c: DispatchCertificate =
        serde_json::from_str(json).map_err(|e| DispatchError::Format(e.to_string()))?;
    if c.kind != "tensore-dispatch" || c.version != VERSION {
        return Err(DispatchError::Format(format!(
            "kind {:?} version {} (this build checks tensore-dispatch version {VERSION})",
            c.kind, c.version
        )));
    }
    if digest(&c) != c.digest {
        return Err(DispatchError::Digest);
    }
    if c.verdict != "proved" {
        return Err(DispatchError::Format(format!("verdict {:?}", c.verdict)));
    }
    decide(&c)?;
    Ok(c)
}

/// Several dispatch certificates in one file (a kernel's distinct matmul shapes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchSet {
    /// Always `tensore-dispatches`.
    pub kind: String,
    /// What the kernel is.
    pub name: String,
    /// The certificates, each checked on its own.
    pub certificates: Vec<DispatchCertificate>,
}

impl DispatchSet {
    /// Bundles certificates.
    pub fn new(name: &str, certificates: Vec<DispatchCertificate>) -> DispatchSet {
        DispatchSet {
            kind: "tensore-dispatches".into(),
            name: name.into(),
            certificates,
        }
    }
}

/// Re-verifies a `tensore-dispatch` certificate or a `tensore-dispatches` set (every member);
/// returns the certificates.
pub fn check_any(json: &str) -> Result<Vec<DispatchCertificate>, DispatchError> {
    let kind = serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
    if kind.as_deref() != Some("tensore-dispatches") {
        return check(json).map(|c| vec![c]);
    }
    let set: DispatchSet =
        serde_json::from_str(json).map_err(|e| DispatchError::Format(e.to_string()))?;
    if set.certificates.is_empty() {
        return Err(DispatchError::Format("an empty set of certificates".into()));
    }
    set.certificates
        .iter()
        .map(|c| check(&serde_json::to_string(c).expect("certificates serialize")))
        .collect()
}

/// A layout's inverse: `{P, F}` point to logical `(row, col)`, from evaluation at every cell.
struct Inverse {
    cells: BTreeMap<(i64, i64), (i64, i64)>,
}

fn invert(
    text: &str,
    what: &str,
    rows: i64,
    cols: i64,
    partitions: i64,
) -> Result<(Inverse, i64), DispatchError> {
    let l: AxeLayout =
        parse(text).map_err(|e| DispatchError::Format(format!("{what} layout {text:?}: {e}")))?;
    let (p_axis, f_axis) = (
        layout::trainium::partition_axis(),
        layout::trainium::free_axis(),
    );
    let mut cells = BTreeMap::new();
    let mut f_end = 0i64;
    for r in 0..rows {
        for c in 0..cols {
            let image = l.eval(&[rows, cols], &[r, c]).map_err(|e| {
                DispatchError::Format(format!("{what} layout over [{rows}, {cols}]: {e}"))
            })?;
            let mut points = image.into_iter();
            let (Some(pt), None) = (points.next(), points.next()) else {
                return Err(wrong(format!(
                    "{what} maps ({r}, {c}) to more than one point"
                )));
            };
            if pt.keys().any(|a| *a != p_axis && *a != f_axis) {
                return Err(wrong(format!("{what} uses axes other than P and F")));
            }
            let p = pt.get(&p_axis).copied().unwrap_or(0);
            let f = pt.get(&f_axis).copied().unwrap_or(0);
            if !(0..partitions).contains(&p) {
                return Err(rule(
                    "partition-dim",
                    format!("{what} puts ({r}, {c}) on partition {p}, outside [0, {partitions})"),
                ));
            }
            if f < 0 {
                return Err(wrong(format!(
                    "{what} puts ({r}, {c}) at free offset {f} < 0"
                )));
            }
            f_end = f_end.max(f + 1);
            if cells.insert((p, f), (r, c)).is_some() {
                return Err(wrong(format!("{what} maps two cells to {{P:{p}, F:{f}}}")));
            }
        }
    }
    Ok((Inverse { cells }, f_end))
}

impl Inverse {
    fn at(&self, what: &str, p: i64, f: i64) -> Result<(i64, i64), DispatchError> {
        self.cells.get(&(p, f)).copied().ok_or_else(|| {
            wrong(format!(
                "an instruction reads {what} at {{P:{p}, F:{f}}}, which holds no cell of it"
            ))
        })
    }
}

/// The loops of one dim, as (extent, step) for one operand.
fn nest(loops: &[Loop], dim: &str, step: impl Fn(&Loop) -> Option<Step>) -> Vec<(i64, Step)> {
    loops
        .iter()
        .filter(|l| l.dim == dim)
        .map(|l| (l.extent, step(l).unwrap_or_default()))
        .collect()
}

/// Every instance of a nest: its flat index and the summed step.
fn instances(nest: &[(i64, Step)]) -> Vec<Step> {
    let mut out = vec![Step::default()];
    for (extent, step) in nest {
        let mut next = Vec::with_capacity(out.len() * *extent as usize);
        for base in &out {
            for i in 0..*extent {
                next.push(Step {
                    p: base.p + i * step.p,
                    f: base.f + i * step.f,
                });
            }
        }
        out = next;
    }
    out
}

fn decide(c: &DispatchCertificate) -> Result<(), DispatchError> {
    let t =
        layout::trainium::target(&c.target).map_err(|e| DispatchError::Format(e.to_string()))?;
    let [k_total, m_total, n_total] = c.dims;
    if c.dims.iter().any(|d| !(1..=1 << 20).contains(d)) || ![1, 2, 4].contains(&c.dtype_bytes) {
        return Err(DispatchError::Format(format!(
            "dims {:?} and dtype bytes {} out of range (dims 1..=2^20; an element of 1, 2 or 4 bytes)",
            c.dims, c.dtype_bytes
        )));
    }
    let mut visits = 0i64;
    for p in &c.pieces {
        if !(1..=k_total).contains(&p.k) {
            return Err(DispatchError::Format(format!(
                "piece K {} out of range",
                p.k
            )));
        }
        visits += p.k * m_total + p.k * n_total + m_total * n_total;
    }
    if visits > CHECK_LIMIT {
        return Err(DispatchError::TooLarge(visits));
    }
    let (c_inv, c_end) = invert(&c.c, "C", m_total, n_total, t.partitions)?;
    if c_end * 4 > t.psum_bytes_per_partition {
        return Err(rule(
            "psum-capacity",
            format!(
                "C needs {} bytes of PSUM per partition > {}",
                c_end * 4,
                t.psum_bytes_per_partition
            ),
        ));
    }
    let mut k_seen = vec![false; k_total as usize];
    for (i, piece) in c.pieces.iter().enumerate() {
        decide_piece(c, t, piece, &c_inv).map_err(|e| match e {
            DispatchError::Wrong(w) => wrong(format!("piece {i}: {w}")),
            other => other,
        })?;
        for k in piece.k0..piece.k0 + piece.k {
            let slot = usize::try_from(k)
                .ok()
                .and_then(|k| k_seen.get_mut(k))
                .ok_or_else(|| {
                    wrong(format!("piece {i} covers k = {k}, outside [0, {k_total})"))
                })?;
            if std::mem::replace(slot, true) {
                return Err(wrong(format!("k = {k} is accumulated by two pieces")));
            }
        }
    }
    if let Some(k) = k_seen.iter().position(|s| !s) {
        return Err(wrong(format!("no piece accumulates k = {k}")));
    }
    Ok(())
}

fn decide_piece(
    c: &DispatchCertificate,
    t: &layout::trainium::Target,
    piece: &Piece,
    c_inv: &Inverse,
) -> Result<(), DispatchError> {
    let [_, m_total, n_total] = c.dims;
    let [kt, mt, nt] = piece.instruction;
    if !(1..=t.partitions).contains(&kt) {
        return Err(rule(
            "matmul-partition",
            format!(
                "contraction (partition) size {kt} not in [1, {}]",
                t.partitions
            ),
        ));
    }
    if !(1..=t.stationary_fmax).contains(&mt) {
        return Err(rule(
            "matmul-stationary-free",
            format!(
                "stationary free size {mt} not in [1, {}]",
                t.stationary_fmax
            ),
        ));
    }
    if !(1..=t.moving_fmax).contains(&nt) {
        return Err(rule(
            "matmul-moving-free",
            format!("moving free size {nt} not in [1, {}]", t.moving_fmax),
        ));
    }
    for l in &piece.loops {
        let ok = match l.dim.as_str() {
            "k" => l.c.is_none(),
            "m" => l.b.is_none(),
            "n" => l.a.is_none(),
            _ => false,
        };
        if !ok || !(1..=1 << 20).contains(&l.extent) {
            return Err(DispatchError::Format(format!(
                "loop {:?} of extent {}: a {} loop moves only the operands that carry {0}",
                l.dim, l.extent, l.dim
            )));
        }
    }
    let bound = |x: i64| x.abs() <= 1 << 30;
    let steps = piece.loops.iter().flat_map(|l| [l.a, l.b, l.c]).flatten();
    let bases = [piece.a_base, piece.b_base, piece.c_base];
    if piece.loops.len() > 16
        || !steps.chain(bases).all(|s| bound(s.p) && bound(s.f))
        || ![piece.a_free, piece.b_free, piece.c_free]
            .into_iter()
            .all(bound)
    {
        return Err(DispatchError::Format(
            "a piece has at most 16 loops and steps, bases and strides within 2^30".into(),
        ));
    }
    // The nest must visit each k, m and n slot once: check the counts before allocating.
    for (dim, inst, want) in [("k", kt, piece.k), ("m", mt, m_total), ("n", nt, n_total)] {
        let trips = piece
            .loops
            .iter()
            .filter(|l| l.dim == dim)
            .try_fold(inst, |acc, l| acc.checked_mul(l.extent))
            .filter(|v| *v <= 1 << 30);
        if trips != Some(want) {
            return Err(wrong(format!(
                "the {dim} loops and instruction cover {} {dim} values, the piece has {want}",
                trips.map_or("too many".to_string(), |v| v.to_string())
            )));
        }
    }
    let (a_inv, a_end) = invert(&piece.a, "A", piece.k, m_total, t.partitions)?;
    let (b_inv, b_end) = invert(&piece.b, "B", piece.k, n_total, t.partitions)?;
    let sbuf = (a_end + b_end) * c.dtype_bytes;
    if sbuf > t.sbuf_bytes_per_partition {
        return Err(rule(
            "sbuf-capacity",
            format!(
                "A and B need {sbuf} bytes of SBUF per partition > {} on {}",
                t.sbuf_bytes_per_partition, t.name
            ),
        ));
    }
    let ks = instances(&nest(&piece.loops, "k", |l| l.a));
    let kb = instances(&nest(&piece.loops, "k", |l| l.b));
    let ms = instances(&nest(&piece.loops, "m", |l| l.a));
    let mc = instances(&nest(&piece.loops, "m", |l| l.c));
    let nb = instances(&nest(&piece.loops, "n", |l| l.b));
    let nc = instances(&nest(&piece.loops, "n", |l| l.c));
    // A side: (k loops, p) -> k and (m loops, j) -> m.
    let mut k_of = vec![None::<i64>; ks.len() * kt as usize];
    let mut m_of = vec![None::<i64>; ms.len() * mt as usize];
    for (ik, sk) in ks.iter().enumerate() {
        for (im, sm) in ms.iter().enumerate() {
            for p in 0..kt {
                for j in 0..mt {
                    let at_p = piece.a_base.p + sk.p + sm.p + p;
                    let at_f = piece.a_base.f + sk.f + sm.f + j * piece.a_free;
                    let (k, m) = a_inv.at("A", at_p, at_f)?;
                    agree(
                        &mut k_of[ik * kt as usize + p as usize],
                        k,
                        "the k of a stationary element depends on the m loops",
                    )?;
                    agree(
                        &mut m_of[im * mt as usize + j as usize],
                        m,
                        "the m of a stationary element depends on the k loops",
                    )?;
                }
            }
        }
    }
    // B side: the same k at the same (k loops, p); (n loops, c) -> n.
    let mut n_of = vec![None::<i64>; nb.len() * nt as usize];
    for (ik, sk) in kb.iter().enumerate() {
        for (inn, sn) in nb.iter().enumerate() {
            for p in 0..kt {
                for col in 0..nt {
                    let at_p = piece.b_base.p + sk.p + sn.p + p;
                    let at_f = piece.b_base.f + sk.f + sn.f + col * piece.b_free;
                    let (k, n) = b_inv.at("B", at_p, at_f)?;
                    if k_of[ik * kt as usize + p as usize] != Some(k) {
                        return Err(wrong(format!(
                            "stationary and moving rows differ at k-instance {ik}, partition {p}"
                        )));
                    }
                    agree(
                        &mut n_of[inn * nt as usize + col as usize],
                        n,
                        "the n of a moving element depends on the k loops",
                    )?;
                }
            }
        }
    }
    // C side: dst[j, c] is C[m of (m loops, j), n of (n loops, c)], inside one PSUM bank.
    for (im, sm) in mc.iter().enumerate() {
        for (inn, sn) in nc.iter().enumerate() {
            let first = piece.c_base.f + sm.f + sn.f;
            let last = first + (nt - 1) * piece.c_free;
            if t.psum_bank_of(first.min(last)) != t.psum_bank_of(first.max(last))
                || first.min(last) < 0
            {
                return Err(rule(
                    "psum-bank",
                    format!("an output tile spans PSUM free offsets {first}..{last}: it must fit one 2 KiB bank"),
                ));
            }
            for j in 0..mt {
                for col in 0..nt {
                    let at_p = piece.c_base.p + sm.p + sn.p + j;
                    let at_f = first + col * piece.c_free;
                    let (m, n) = c_inv.at("C", at_p, at_f)?;
                    if m_of[im * mt as usize + j as usize] != Some(m)
                        || n_of[inn * nt as usize + col as usize] != Some(n)
                    {
                        return Err(wrong(format!(
                            "output element (j={j}, c={col}) lands on C({m}, {n}), not the row and column it computed"
                        )));
                    }
                }
            }
        }
    }
    bijective(&k_of, piece.k0, piece.k, "k")?;
    bijective(&m_of, 0, m_total, "m")?;
    bijective(&n_of, 0, n_total, "n")
}

fn agree(slot: &mut Option<i64>, v: i64, why: &str) -> Result<(), DispatchError> {
    match slot {
        Some(old) if *old != v => Err(wrong(why)),
        _ => {
            *slot = Some(v);
            Ok(())
        }
    }
}

/// The values (k read from a piece-local layout are shifted by `base`) cover `[base, base+n)`
/// exactly once.
fn bijective(values: &[Option<i64>], base: i64, n: i64, dim: &str) -> Result<(), DispatchError> {
    if values.len() as i64 != n {
        return Err(wrong(format!(
            "the {dim} loops and instruction cover {} {dim} values, the piece has {n}",
            values.len()
        )));
    }
    let mut seen = vec![false; n as usize];
    for v in values {
        let v = v.ok_or_else(|| wrong(format!("a {dim} slot is never read")))?;
        if !(0..n).contains(&v) || std::mem::replace(&mut seen[v as usize], true) {
            return Err(wrong(format!("{dim} = {} is computed twice", v + base)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> (String, Vec<Piece>) {
        let piece = Piece {
            k0: 0,
            k: 256,
            a: "S[(2,128,128):(128@F,1@P,1@F)]".into(),
            b: "S[(2,128,512):(512@F,1@P,1@F)]".into(),
            instruction: [128, 128, 512],
            loops: vec![Loop {
                dim: "k".into(),
                extent: 2,
                a: Some(Step { p: 0, f: 128 }),
                b: Some(Step { p: 0, f: 512 }),
                c: None,
            }],
            a_base: Step::default(),
            a_free: 1,
            b_base: Step::default(),
            b_free: 1,
            c_base: Step::default(),
            c_free: 1,
        };
        ("S[(128,512):(1@P,1@F)]".into(), vec![piece])
    }

    #[test]
    fn worked_example_is_proved_and_rechecks() {
        let (c, pieces) = example();
        let cert =
            DispatchCertificate::prove("example", "trn1", 2, [256, 128, 512], c, pieces).unwrap();
        assert_eq!(cert.instructions(), 2);
        let json = serde_json::to_string(&cert).unwrap();
        assert_eq!(check(&json).unwrap(), cert);
    }

    #[test]
    fn a_k_loop_that_reads_one_tile_twice_is_refuted() {
        let (c, mut pieces) = example();
        pieces[0].loops[0].a = Some(Step { p: 0, f: 0 });
        let e = DispatchCertificate::prove("x", "trn1", 2, [256, 128, 512], c, pieces).unwrap_err();
        assert!(
            e.to_string().contains("stationary and moving rows differ"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_k_tile_is_refuted() {
        let (c, mut pieces) = example();
        pieces[0].loops[0].extent = 1;
        let e = DispatchCertificate::prove("x", "trn1", 2, [256, 128, 512], c, pieces).unwrap_err();
        assert!(e.to_string().contains("cover 128 k values"), "{e}");
    }

    #[test]
    fn an_output_across_two_psum_banks_is_refused_naming_the_rule() {
        let (_, mut pieces) = example();
        pieces[0].c_base = Step { p: 0, f: 256 };
        let c = "S[(128,512):(1@P,1@F)] + 256@F".to_string();
        let e = DispatchCertificate::prove("x", "trn1", 2, [256, 128, 512], c, pieces).unwrap_err();
        assert!(e.to_string().starts_with("psum-bank"), "{e}");
    }

    #[test]
    fn k_on_the_free_axis_is_refuted() {
        let (c, mut pieces) = example();
        // K on F and M on P: the stationary tile's partitions now hold m, not k.
        pieces[0].a = "S[(256,128):(1@F,1@P)]".into();
        let e =
            DispatchCertificate::prove("x", "trn1", 2, [256, 128, 512], c.clone(), pieces.clone())
                .unwrap_err();
        assert!(e.to_string().contains("depends on the m loops"), "{e}");
        // K spread over 256 partitions: the partition rule.
        pieces[0].a = "S[(256,128):(1@P,1@F)]".into();
        let e = DispatchCertificate::prove("x", "trn1", 2, [256, 128, 512], c, pieces).unwrap_err();
        assert!(e.to_string().starts_with("partition-dim"), "{e}");
    }

    #[test]
    fn a_set_checks_every_member() {
        let (c, pieces) = example();
        let cert =
            DispatchCertificate::prove("example", "trn1", 2, [256, 128, 512], c, pieces).unwrap();
        let set = DispatchSet::new("k", vec![cert.clone(), cert.clone()]);
        assert_eq!(
            check_any(&serde_json::to_string(&set).unwrap())
                .unwrap()
                .len(),
            2
        );
        let mut bad = set.clone();
        bad.certificates[1].dims = [256, 128, 511];
        assert!(check_any(&serde_json::to_string(&bad).unwrap()).is_err());
    }

    #[test]
    fn tampered_certificate_is_rejected() {
        let (c, pieces) = example();
        let cert =
            DispatchCertificate::prove("example", "trn1", 2, [256, 128, 512], c, pieces).unwrap();
        let json = serde_json::to_string(&cert)
            .unwrap()
            .replace("512@F,1@P", "511@F,1@P");
        assert!(matches!(check(&json), Err(DispatchError::Digest)));
        let mut edited = cert.clone();
        edited.pieces[0].loops[0].b = Some(Step { p: 0, f: 0 });
        edited.digest = digest(&edited);
        let e = check(&serde_json::to_string(&edited).unwrap()).unwrap_err();
        assert!(matches!(e, DispatchError::Wrong(_)), "{e}");
    }
}
