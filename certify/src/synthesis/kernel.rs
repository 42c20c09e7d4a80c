//! The kernel binding: what ties a kernel's synthesis certificate to the problem it was emitted
//! for and to the kernel's text.
//!
//! A tile program's certificate speaks of one CTA tile; the kernel built from it runs that tile
//! over a whole problem (`C[M,N] = A[M,K] B[N,K]^T`, row-major). A kernel's certificate
//! (`gen gemm --cert`) carries a [`KernelBinding`], sealed by the digest like every other field:
//!
//! - the problem: its kind, `M`, `N`, `K` (and the W4A16 scale group), and each of its tensors
//!   (role, shape, layout) with the program's global view that is a tile of it;
//! - the kernel's configuration constants as its text defines them (`#define LC_M 8192`);
//! - the SHA-256 of the kernel's text with the certificate's digest written as 64 zeros (the
//!   text names the digest, which covers this hash, so the hash cannot cover the digest).
//!
//! [`check_binding`] re-decides, from the certificate alone: the problem's tensors are the
//! kind's (`gemm`: A `[M, K]`, B `[N, K]`, C `[M, N]`; `w4a16`: A `[M, K]`, W `[N, K]`, S
//! `[N, K / group]`, C `[M, N]`), each layout has its shape, every global view of the program
//! is the window at the origin of exactly one of them (for every view cell inside the problem
//! and the view's bounds, the view's element is the problem tensor's: the strides the tile
//! program was synthesized with are the problem's), and the constants agree with the
//! certificate (`LC_M/N/K` with the problem, `LC_BM/BN/BK` with the C and A views' shapes,
//! `LC_SMEM_BYTES` with the capacity claim). [`check_text`] (`laycert check CERT --kernel K.cu`)
//! then binds a kernel file: it names this certificate's digest, defines every constant with
//! the certificate's value, and hashes to the certificate's text hash, so the file is, byte for
//! byte, the kernel emitted with this certificate.
//!
//! What stays the emitter's claim: that the kernel's index arithmetic (tile offsets, guards,
//! split-K ranges) realizes the plan over the whole problem. The emitter translation-validates
//! it before the text is returned; this module makes that text the one checked.
//!
//! ```
//! use certify::synthesis::kernel::{blank, text_sha256};
//! let d = "ab".repeat(32);
//! let text = format!("// plan p; certificate digest {d}\n#define LC_M 8\n");
//! assert!(blank(&text, &d).unwrap().contains(&"0".repeat(64)));
//! assert_eq!(text_sha256(&text, &d).unwrap().len(), 64);
//! ```

use std::collections::BTreeMap;

use layout::Layout;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{offset, SynthClaim, SynthesisCertificate, Tensors};

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

/// The problem tensors a kind has: role and shape.
fn roles(b: &KernelBinding) -> Result<Vec<(&'static str, Vec<i64>)>, String> {
    let (m, n, k) = (b.m, b.n, b.k);
    match (b.problem.as_str(), b.group) {
        ("gemm", None) => Ok(vec![
            ("A", vec![m, k]),
            ("B", vec![n, k]),
            ("C", vec![m, n]),
        ]),
        ("w4a16", Some(g)) if g >= 1 && k % g == 0 => Ok(vec![
            ("A", vec![m, k]),
            ("W", vec![n, k]),
            ("S", vec![n, k / g]),
            ("C", vec![m, n]),
        ]),
        ("w4a16", g) => Err(format!(
            "a w4a16 problem names its scale group, a divisor of K = {k} (it names {g:?})"
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
    let want = roles(b).map_err(fail)?;
    let got: Vec<&str> = b.operands.iter().map(|o| o.role.as_str()).collect();
    let names: Vec<&str> = want.iter().map(|(r, _)| *r).collect();
    if got != names {
        return Err(fail(format!(
            "a {} problem's tensors are {names:?}, the certificate names {got:?}",
            b.problem
        )));
    }
    for ((role, shape), o) in want.iter().zip(&b.operands) {
        operand(ts, o, shape).map_err(|e| fail(format!("{role} ({}): {e}", o.view)))?;
    }
    // Every global view is a tile of exactly one problem tensor.
    for t in c.tensors.iter().filter(|t| t.scope == "global") {
        let n = b.operands.iter().filter(|o| o.view == t.name).count();
        if n != 1 {
            return Err(fail(format!(
                "the global view {} is a tile of {n} problem tensors, not one",
                t.name
            )));
        }
    }
    defines(c, b, ts).map_err(fail)?;
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

/// The problem tensor's layout has its shape, and the view is its window at the origin.
fn operand(ts: &Tensors, o: &Operand, shape: &[i64]) -> Result<(), String> {
    if o.shape != shape {
        return Err(format!("shape {:?}, the problem's is {shape:?}", o.shape));
    }
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
    let mut cell = vec![0i64; shape.len()];
    for (i, &at) in table.iter().enumerate() {
        let mut rest = i as i64;
        for (d, &e) in view.shape.iter().enumerate() {
            cell[d] = rest % e;
            rest /= e;
        }
        // Cells past the problem (a ragged tile) or the view's bounds are never accessed.
        let inside = cell.iter().zip(shape).all(|(c, s)| c < s)
            && cell.iter().zip(bounds).all(|(c, b)| c < b);
        if !inside {
            continue;
        }
        let want = offset(&l, shape, &cell)?;
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

/// The kernel's constants agree with the certificate.
fn defines(c: &SynthesisCertificate, b: &KernelBinding, ts: &Tensors) -> Result<(), String> {
    let view = |role: &str, d: usize| -> Option<i64> {
        let o = b.operands.iter().find(|o| o.role == role)?;
        ts.mem(&o.view).ok()?.0.shape.get(d).copied()
    };
    let capacity = c.claims.iter().find_map(|x| match x {
        SynthClaim::Capacity { bytes, .. } => Some(*bytes),
        _ => None,
    });
    let mut required = vec![
        ("LC_M", Some(b.m)),
        ("LC_N", Some(b.n)),
        ("LC_K", Some(b.k)),
    ];
    if b.problem == "w4a16" {
        required.push(("LC_GROUP", b.group));
    }
    for (name, want) in required {
        match b.defines.get(name) {
            Some(v) if Some(*v) == want => {}
            Some(v) => return Err(format!("{name} is {v}, the problem's is {want:?}")),
            None => return Err(format!("the kernel's constants do not define {name}")),
        }
    }
    let derived = [
        ("LC_BM", view("C", 0)),
        ("LC_BN", view("C", 1)),
        ("LC_BK", view("A", 1)),
        ("LC_SMEM_BYTES", capacity),
    ];
    for (name, want) in derived {
        if let Some(v) = b.defines.get(name) {
            if Some(*v) != want {
                return Err(format!(
                    "{name} is {v}, the certificate's is {}",
                    want.map_or("undefined".into(), |w| w.to_string())
                ));
            }
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
