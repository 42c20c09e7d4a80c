//! The kernel binding: what ties a kernel's synthesis certificate to the problem it was emitted
//! for and to the kernel's text.
//!
//! A tile program's certificate speaks of one CTA tile; the kernel built from it runs that tile
//! over a whole problem (`C[M,N] = A[M,K] B[N,K]^T`, row-major). A kernel's certificate
//! (`gen gemm --cert`) carries a [`KernelBinding`], sealed by the digest like every other field:
//!
//! - the problem: its kind, `M`, `N`, `K` (and the W4A16 scale group), and its tensors, each
//!   with the program's global view that tiles it;
//! - the kernel's configuration constants as its text defines them (`#define LC_M 8192`);
//! - what the emitter was given (its own JSON of the problem and configuration);
//! - the SHA-256 of the kernel's text with the certificate's digest written as 64 zeros (the
//!   text names the digest, which covers this hash, so the hash cannot cover the digest).
//!
//! [`check_binding`] re-decides, from the certificate alone: the problem's tensors are the
//! kind's, by its definition ([`problem_operands`]: row-major A, B, C, the packed W and its
//! scales, each tiled by its named view), so the certificate cannot name others; every global
//! view of the program is the window at the origin of its problem tensor, compared at every
//! cell of the view (past a row-major tensor with its offsets extended, so a ragged tile has
//! the problem's pitch; a view's bounds may leave out only cells past the problem); the
//! program computes the problem (its mma reads A's view on its `a` side and B's, or W's and
//! the scales, on its `b` side, and C's view is written from its result); the emitter record
//! names this problem; and the constants the kind must define agree with the certificate
//! (`LC_M/N/K` with the problem, `LC_BM/BN/BK` with the C and A views, `LC_STAGES` with the
//! copies of A's shared tile, `LC_SMEM_BYTES` with the capacity claim). [`check_text`] then checks a kernel
//! file names this certificate's digest, defines every constant with the certificate's value,
//! and hashes to the text hash: a quick fingerprint with a precise message, not the binding
//! itself, since anyone can re-seal a certificate around another text. `laycert check CERT
//! --kernel K.cu` therefore also re-emits the kernel from the emitter record
//! (`codegen::gemm::reemitted`) and requires the certificate and the text to be, byte for
//! byte, what laycert emits (the emitter is deterministic).
//!
//! What stays the emitter's claim: that the kernel's index arithmetic (tile offsets, guards,
//! split-K ranges) realizes the plan over the whole problem. The emitter translation-validates
//! it before the text is returned; the binding makes that text the one checked.
//!
//! ```
//! use certify::synthesis::kernel::{blank, text_sha256};
//! let d = "ab".repeat(32);
//! let text = format!("// plan p; certificate digest {d}\n#define LC_M 8\n");
//! assert!(blank(&text, &d).unwrap().contains(&"0".repeat(64)));
//! assert_eq!(text_sha256(&text, &d).unwrap().len(), 64);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use layout::Layout;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{coord, offset, SynthClaim, SynthesisCertificate, Tensors};

/// Where a kernel's header names its certificate: `certificate digest <64 hex digits>`.
pub const DIGEST_MARK: &str = "certificate digest ";

/// A tensor of the problem and the program's global view that is a tile of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operand {
    /// `A`, `B`, `C`, `W` or `S` (the kind's names).
    pub role: String,
    /// The program's global view.
    pub view: String,
    /// The problem tensor's shape.
    pub shape: Vec<i64>,
    /// Its layout (CuTe, element offsets from the tensor's base).
    pub layout: String,
}

/// The problem a kernel certificate was emitted for, and the kernel text it was emitted as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelBinding {
    /// `gemm` (`C = A B^T`) or `w4a16` (`C = A dequant(W)^T`, W's nibbles as the plan reads
    /// them, each 32-bit word's 8 values in k order).
    pub problem: String,
    /// Rows of A and C.
    pub m: i64,
    /// Rows of B (columns of C).
    pub n: i64,
    /// The reduction extent.
    pub k: i64,
    /// K-elements per scale (`w4a16`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<i64>,
    /// The problem's tensors, in the kind's order.
    pub operands: Vec<Operand>,
    /// The kernel's configuration constants, as its text defines them.
    pub defines: BTreeMap<String, i64>,
    /// What the emitter was given (its problem and configuration, its own JSON): `check
    /// --kernel` re-emits the kernel from it and compares bytes. Opaque to this crate.
    pub emitter: serde_json::Value,
    /// SHA-256 of the kernel text with the certificate's digest written as 64 zeros ([`blank`]).
    pub text_sha256: String,
}

/// The kernel text with the certificate digest it names (after [`DIGEST_MARK`], exactly once)
/// written as 64 zeros.
pub fn blank(text: &str, digest: &str) -> Result<String, String> {
    let named = format!("{DIGEST_MARK}{digest}");
    match text.matches(&named).count() {
        1 => Ok(text.replacen(&named, &format!("{DIGEST_MARK}{}", "0".repeat(64)), 1)),
        0 => Err(match named_digest(text) {
            Some(other) => format!(
                "the kernel names certificate {other}, not this one ({digest}): it was emitted \
                 with another certificate"
            ),
            None => format!("the kernel does not name a certificate (no `{DIGEST_MARK}...`)"),
        }),
        n => Err(format!(
            "the kernel names this certificate {n} times, not once"
        )),
    }
}

/// The first digest a kernel text names.
fn named_digest(text: &str) -> Option<String> {
    let at = text.find(DIGEST_MARK)? + DIGEST_MARK.len();
    Some(
        text[at..]
            .chars()
            .take_while(char::is_ascii_hexdigit)
            .take(64)
            .collect(),
    )
}

/// SHA-256 (lowercase hex) of [`blank`]`(text, digest)`.
pub fn text_sha256(text: &str, digest: &str) -> Result<String, String> {
    Ok(format!(
        "{:x}",
        Sha256::digest(blank(text, digest)?.as_bytes())
    ))
}

/// The value of `#define NAME VALUE` in a kernel text (the first such line; `None` if absent or
/// not one integer).
pub fn define(text: &str, name: &str) -> Option<i64> {
    text.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("#define") && w.next() == Some(name))
            .then(|| match (w.next(), w.next()) {
                (Some(v), None) => v.parse().ok(),
                _ => None,
            })
            .flatten()
    })
}

/// The problem's tensors, by its definition: `gemm`: A `[M, K]`, B `[N, K]`, C `[M, N]`, each
/// row-major, tiled by the views `a_g`, `b_g`, `c_g`; `w4a16`: A and C the same, W `[N, K]` in
/// int4 nibbles as the plan reads it (TensorRT-LLM's packing with each 32-bit word's 8 values
/// in k order: `((8, N/8), (2,2,2,4,4, K/128)) : ((64, 8K), (1,32,512,2,8,1024))`), S the scales
/// `[N, K / group]` row-major; views `a_g`, `w_g`, `s_g`, `c_g`.
pub fn problem_operands(b: &KernelBinding) -> Result<Vec<Operand>, String> {
    let (m, n, k) = (b.m, b.n, b.k);
    let op = |role: &str, view: &str, shape: [i64; 2], layout: String| Operand {
        role: role.into(),
        view: view.into(),
        shape: shape.to_vec(),
        layout,
    };
    let row = |r: i64, c: i64| format!("({r},{c}):({c},1)");
    match (b.problem.as_str(), b.group) {
        ("gemm", None) => Ok(vec![
            op("A", "a_g", [m, k], row(m, k)),
            op("B", "b_g", [n, k], row(n, k)),
            op("C", "c_g", [m, n], row(m, n)),
        ]),
        ("w4a16", Some(g)) if g >= 1 && k % g == 0 && n % 8 == 0 && k % 128 == 0 => {
            let w = format!(
                "((8,{}),(2,2,2,4,4,{})):((64,{}),(1,32,512,2,8,1024))",
                n / 8,
                k / 128,
                8 * k
            );
            Ok(vec![
                op("A", "a_g", [m, k], row(m, k)),
                op("W", "w_g", [n, k], w),
                op("S", "s_g", [n, k / g], row(n, k / g)),
                op("C", "c_g", [m, n], row(m, n)),
            ])
        }
        ("w4a16", g) => Err(format!(
            "a w4a16 problem has N a multiple of 8 and K of 128, and names its scale group, a \
             divisor of K (N = {n}, K = {k}, group {g:?})"
        )),
        ("gemm", Some(_)) => Err("a gemm problem has no scale group".into()),
        (p, _) => Err(format!(
            "problem {p:?}: this laycert binds `gemm` and `w4a16`"
        )),
    }
}

/// Re-decides a certificate's kernel binding (see the module doc); `Ok` when it has none.
pub fn check_binding(c: &SynthesisCertificate, ts: &Tensors) -> Result<(), String> {
    let Some(b) = &c.kernel else {
        return Ok(());
    };
    let fail = |e: String| format!("kernel binding: {e}");
    if [b.m, b.n, b.k].iter().any(|&e| !(1..=1 << 31).contains(&e)) {
        return Err(fail(format!(
            "M, N, K = {}, {}, {}: each in 1..=2^31",
            b.m, b.n, b.k
        )));
    }
    let want = problem_operands(b).map_err(fail)?;
    let got: Vec<&str> = b.operands.iter().map(|o| o.role.as_str()).collect();
    let names: Vec<&str> = want.iter().map(|o| o.role.as_str()).collect();
    if got != names {
        return Err(fail(format!(
            "a {} problem's tensors are {names:?}, the certificate names {got:?}",
            b.problem
        )));
    }
    for (w, o) in want.iter().zip(&b.operands) {
        let at = |e: String| fail(format!("{} ({}): {e}", w.role, w.view));
        if o.view != w.view {
            return Err(at(format!(
                "tiled by {}, the problem's view is {}",
                o.view, w.view
            )));
        }
        if o.shape != w.shape {
            return Err(at(format!(
                "shape {:?}, the problem's is {:?}",
                o.shape, w.shape
            )));
        }
        if o.layout != w.layout {
            return Err(at(format!(
                "layout {}, the problem's is {}",
                o.layout, w.layout
            )));
        }
        operand(ts, w).map_err(at)?;
    }
    // Every global view is a tile of exactly one problem tensor.
    for t in c.tensors.iter().filter(|t| t.scope == "global") {
        if !want.iter().any(|o| o.view == t.name) {
            return Err(fail(format!(
                "the global view {} is a tile of none of the problem's tensors",
                t.name
            )));
        }
    }
    defines(c, b, ts).map_err(fail)?;
    dataflow(c, b).map_err(fail)?;
    emitter_agrees(b).map_err(fail)?;
    let hex = b.text_sha256.len() == 64
        && b.text_sha256
            .bytes()
            .all(|x| x.is_ascii_digit() || (b'a'..=b'f').contains(&x));
    if !hex {
        return Err(fail(format!(
            "text_sha256 {:?} is not a SHA-256 (64 lowercase hex digits)",
            b.text_sha256
        )));
    }
    Ok(())
}

/// The problem tensor's layout has its shape, and its view is its window at the origin: every
/// cell of the view is compared, past the problem with the row-major offsets extended (the
/// view's bounds may leave out only cells past the problem).
fn operand(ts: &Tensors, o: &Operand) -> Result<(), String> {
    let shape = &o.shape;
    let l = Layout::parse(&o.layout, None).map_err(|e| format!("layout {:?}: {e}", o.layout))?;
    let Layout::Cute(cute) = &l else {
        return Err(format!("layout {:?} is not a CuTe layout", o.layout));
    };
    cute.check_shape(shape).map_err(|e| e.to_string())?;
    let (view, table) = ts.mem(&o.view)?;
    if view.scope != "global" {
        return Err(format!(
            "{} is a {} tensor, not a global view",
            o.view, view.scope
        ));
    }
    if view.shape.len() > shape.len() {
        return Err(format!(
            "the view's rank {} is above the problem tensor's {}",
            view.shape.len(),
            shape.len()
        ));
    }
    let bounds = view.bounds.as_deref().unwrap_or(&view.shape);
    for (d, (&b, &v)) in bounds.iter().zip(&view.shape).enumerate() {
        if b < v.min(shape[d]) {
            return Err(format!(
                "the view's bounds {bounds:?} leave out cells inside the problem (dimension {d}: \
                 {b} below {})",
                v.min(shape[d])
            ));
        }
    }
    // A row-major tensor's offsets extend past it (`r * cols + c`): a ragged tile's view must
    // have the problem's row pitch at every cell, not only the cells inside (a view of pitch
    // 1000 over a 1 x 1 problem agreed at its one cell). Another layout (W's packing) is not
    // extended: its views must lie inside it.
    let row_major =
        shape.len() == 2 && o.layout == format!("({},{}):({},1)", shape[0], shape[1], shape[1]);
    for (i, &at) in table.iter().enumerate() {
        // The view's cell, padded with zeros to the problem tensor's rank.
        let mut cell = coord(&view.shape, i as i64);
        cell.resize(shape.len(), 0);
        let inside = cell.iter().zip(shape).all(|(c, s)| c < s);
        let want = if inside {
            offset(&l, shape, &cell)?
        } else if row_major {
            cell[0]
                .checked_mul(shape[1])
                .and_then(|x| x.checked_add(cell[1]))
                .ok_or_else(|| format!("the offset of cell {cell:?} overflows"))?
        } else {
            return Err(format!(
                "the view's cell {:?} lies outside the problem tensor {}",
                &cell[..view.shape.len()],
                o.layout
            ));
        };
        if at != want {
            return Err(format!(
                "at cell {:?} the view holds element {at}, the problem tensor {} has {want} \
                 there: the view is not its tile at the origin",
                &cell[..view.shape.len()],
                o.layout
            ));
        }
    }
    Ok(())
}

/// The emitter record is an object naming the binding's kind and problem (its configuration
/// stays opaque here; `check --kernel` re-emits from it).
fn emitter_agrees(b: &KernelBinding) -> Result<(), String> {
    let e = &b.emitter;
    if !e.is_object() {
        return Err("the emitter record is not a JSON object".into());
    }
    let int = |k: &str| {
        e.get("spec")
            .and_then(|s| s.get(k))
            .and_then(|v| v.as_i64())
    };
    let agree = e.get("kernel").and_then(|k| k.as_str()) == Some(b.problem.as_str())
        && int("m") == Some(b.m)
        && int("n") == Some(b.n)
        && int("k") == Some(b.k)
        && (b.group.is_none() || int("group") == b.group);
    if !agree {
        return Err(format!(
            "the emitter record is not of this {} problem of {} x {} x {}",
            b.problem, b.m, b.n, b.k
        ));
    }
    Ok(())
}

/// The tensors `name` is computed from, through the program's operations, back to its global
/// views (each tensor's producer is the op whose output it is).
fn sources(c: &SynthesisCertificate, name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    let mut seen = BTreeSet::new();
    while let Some(t) = todo.pop() {
        if !seen.insert(t.clone()) {
            continue;
        }
        match c.ops.iter().find(|o| o.output == t) {
            Some(op) => todo.extend(op.inputs.iter().cloned()),
            None => {
                out.insert(t);
            }
        }
    }
    out
}

/// The program computes the problem: its mma reads A's view as its `a` operand and B's (W's
/// and the scales) as its `b`, and C's view is written from the mma's result (a program that
/// loads B into the `a` side computes C^T).
fn dataflow(c: &SynthesisCertificate, b: &KernelBinding) -> Result<(), String> {
    let view = |role: &str| {
        b.operands
            .iter()
            .find(|o| o.role == role)
            .map(|o| o.view.clone())
    };
    let mma: Vec<_> = c.ops.iter().filter(|o| o.op == "mma").collect();
    let [mma] = mma.as_slice() else {
        return Err(format!(
            "the program has {} mma operations, not one",
            mma.len()
        ));
    };
    let [a, bb] = mma.inputs.as_slice() else {
        return Err("the mma does not read two operands".into());
    };
    let set = |v: Vec<Option<String>>| -> BTreeSet<String> { v.into_iter().flatten().collect() };
    let want_a = set(vec![view("A")]);
    let want_b = if b.problem == "w4a16" {
        set(vec![view("W"), view("S")])
    } else {
        set(vec![view("B")])
    };
    for (side, t, want) in [("a", a, want_a), ("b", bb, want_b)] {
        let got = sources(c, t);
        if got != want {
            return Err(format!(
                "the mma's {side} operand {t} is computed from {got:?}, the problem's is {want:?}"
            ));
        }
    }
    let out = view("C").unwrap_or_default();
    let writers: Vec<_> = c.ops.iter().filter(|o| o.output == out).collect();
    let written_from_mma = writers.len() == 1 && {
        let mut chain = vec![writers[0].inputs.clone()];
        let mut found = false;
        let mut seen = BTreeSet::new();
        while let Some(ins) = chain.pop() {
            for t in ins {
                if t == mma.output {
                    found = true;
                } else if seen.insert(t.clone()) {
                    if let Some(op) = c.ops.iter().find(|o| o.output == t && o.op != "mma") {
                        chain.push(op.inputs.clone());
                    }
                }
            }
        }
        found
    };
    if !written_from_mma {
        return Err(format!(
            "C's view {out} is not written once from the mma's result {}",
            mma.output
        ));
    }
    Ok(())
}

/// The kernel's constants agree with the certificate; the ones it must have are required.
fn defines(c: &SynthesisCertificate, b: &KernelBinding, ts: &Tensors) -> Result<(), String> {
    let view = |role: &str, d: usize| -> Option<i64> {
        let o = b.operands.iter().find(|o| o.role == role)?;
        ts.mem(&o.view).ok()?.0.shape.get(d).copied()
    };
    let capacity = c.claims.iter().find_map(|x| match x {
        SynthClaim::Capacity { bytes, .. } => Some(*bytes),
        _ => None,
    });
    // The ring's depth: the copies of A's shared tile.
    let stages = c.smem.as_ref().and_then(|a| {
        a.phases
            .iter()
            .flatten()
            .find(|x| x.tensor == "a_s")
            .map(|x| x.copies)
    });
    let mut required = vec![
        ("LC_M", Some(b.m)),
        ("LC_N", Some(b.n)),
        ("LC_K", Some(b.k)),
        ("LC_SMEM_BYTES", capacity),
    ];
    if b.problem == "w4a16" {
        required.extend([("LC_GROUP", b.group), ("LC_BN", view("C", 1))]);
    } else {
        required.extend([
            ("LC_BM", view("C", 0)),
            ("LC_BN", view("C", 1)),
            ("LC_BK", view("A", 1)),
            ("LC_STAGES", stages),
        ]);
    }
    for (name, want) in required {
        let Some(want) = want else {
            return Err(format!(
                "{name}: the certificate has nothing it must equal (no capacity claim, \
                 allocation or view)"
            ));
        };
        match b.defines.get(name) {
            Some(v) if *v == want => {}
            Some(v) => return Err(format!("{name} is {v}, the certificate's is {want}")),
            None => return Err(format!("the kernel's constants do not define {name}")),
        }
    }
    if let Some(bad) = b.defines.keys().find(|k| {
        !(k.starts_with("LC_")
            && k.len() > 3
            && k.bytes()
                .skip(3)
                .all(|x| x.is_ascii_uppercase() || x.is_ascii_digit() || x == b'_'))
    }) {
        return Err(format!(
            "constant {bad:?} is not a kernel constant (LC_ and capitals)"
        ));
    }
    Ok(())
}

/// Binds a kernel file to its (already checked) certificate: the text names the certificate's
/// digest once, defines every constant with the certificate's value, and hashes to its text
/// hash.
pub fn check_text(c: &SynthesisCertificate, text: &str) -> Result<(), String> {
    let Some(b) = &c.kernel else {
        return Err(
            "the certificate binds no kernel: a plan's certificate (`synth --cert`); a kernel's \
             is written by `gen gemm --cert`"
                .into(),
        );
    };
    let blanked = blank(text, &c.digest)?;
    for (name, want) in &b.defines {
        match define(text, name) {
            Some(v) if v == *want => {}
            Some(v) => {
                return Err(format!(
                    "the kernel defines {name} as {v}, the certificate as {want}"
                ))
            }
            None => return Err(format!("the kernel does not define {name} (as {want})")),
        }
    }
    let got = format!("{:x}", Sha256::digest(blanked.as_bytes()));
    if got != b.text_sha256 {
        return Err(format!(
            "the kernel's text hashes to {got}, the certificate's to {}: it was edited after \
             it was emitted",
            b.text_sha256
        ));
    }
    Ok(())
}
