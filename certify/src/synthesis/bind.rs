//! Binds every operation of a synthesis certificate to the instruction it names and to the
//! claims that instruction needs, re-deriving what can be re-derived: a certificate's ops and
//! claims are both written by the synthesizer, and a claim that holds proves nothing about an op
//! it is not tied to.
//!
//! For each op, from the corpus instruction table (corpus/data/atoms/instructions.toml) and the
//! tensors' scopes and element types, never from solver code:
//!
//! - the instruction exists on the certificate's target and its kind moves between the op's
//!   scopes (`ldmatrix` shared to register, `cp.async` global to shared, ...);
//! - a copy does not convert: source and destination have one element type;
//! - the claim backing it is the instruction's: an ldmatrix `.xN[.trans]` needs an ldmatrix claim
//!   of `N` matrices (transposed alike), a vector access of `B` bits a vector claim of
//!   `B / bits` elements, a TMA box the canonical claim of its swizzle atom, an mma the claim of
//!   that very atom with the atom's operand and accumulator types;
//! - the instruction text the synthesizer derives from layouts (a cast's `cvt`, a reduction's
//!   butterfly steps and cross-warp exchange) is derived again here from the tensors;
//! - every operand claim backs some op, and every tensor is some op's operand: deleting an op
//!   leaves its claims behind, and they are refused.
//!
//! Each canonical claim's atom must also be the corpus atom it names, recast to the tensor's
//! element width ([`canonical_atom_is_the_corpus_atom`]).

use super::{claim_kind, Parsed, SynthClaim, SynthTensor, SynthesisCertificate, Tensors};
use layout::{Layout, SwizzledLayout};
use std::collections::BTreeSet;

/// One `[[instruction]]` of the corpus table.
#[derive(Debug)]
pub(super) struct Instruction {
    pub name: String,
    pub kind: String,
    pub targets: Vec<String>,
    /// Access width per thread (copies).
    pub bits: Option<i64>,
    /// Matrices per ldmatrix / stmatrix.
    pub count: Option<i64>,
    /// A TMA box's swizzle atom (corpus atom name, without `atom:`).
    pub swizzle_atom: Option<String>,
    /// mma: operand types, accumulator type.
    pub ab: Vec<String>,
    pub c: Option<String>,
    pub table: toml::Table,
}

/// The corpus's instruction table, parsed once per process (it is immutable data).
pub(super) fn instructions() -> Result<&'static [Instruction], String> {
    static TABLE: std::sync::OnceLock<Result<Vec<Instruction>, String>> =
        std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            let text = corpus::embedded::FILES
                .iter()
                .find(|(p, _)| *p == "atoms/instructions.toml")
                .map(|(_, t)| *t)
                .ok_or("the corpus has no instructions.toml")?;
            let table: toml::Table = text
                .parse()
                .map_err(|e| format!("instructions.toml: {e}"))?;
            let list = table
                .get("instruction")
                .and_then(|v| v.as_array())
                .ok_or("instructions.toml: no [[instruction]] tables")?;
            list.iter()
                .map(|v| {
                    let t = v.as_table().ok_or("instructions.toml: not a table")?;
                    let s = |k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
                    let i = |k: &str| t.get(k).and_then(|v| v.as_integer());
                    let list = |k: &str| -> Vec<String> {
                        t.get(k)
                            .and_then(|v| v.as_array())
                            .into_iter()
                            .flatten()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    };
                    Ok(Instruction {
                        name: s("name").ok_or("instructions.toml: an entry has no name")?,
                        kind: s("kind").ok_or("instructions.toml: an entry has no kind")?,
                        targets: list("targets"),
                        bits: i("bits"),
                        count: i("count"),
                        swizzle_atom: s("swizzle_atom")
                            .map(|a| a.strip_prefix("atom:").unwrap_or(&a).to_string()),
                        ab: list("ab"),
                        c: s("c"),
                        table: t.clone(),
                    })
                })
                .collect()
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(|e| e.clone())
}

/// The instruction named `name` that `target` has.
pub(super) fn instruction(name: &str, target: &str) -> Result<&'static Instruction, String> {
    let i = instructions()?
        .iter()
        .find(|i| i.name == name)
        .ok_or_else(|| format!("the corpus defines no instruction {name:?}"))?;
    if !i.targets.iter().any(|t| t == target) {
        return Err(format!("{name} is not an {target} instruction"));
    }
    Ok(i)
}

/// The embedded corpus, parsed once per process.
pub(super) fn corpus() -> Result<&'static corpus::Corpus, String> {
    static CORPUS: std::sync::OnceLock<Result<corpus::Corpus, String>> = std::sync::OnceLock::new();
    CORPUS
        .get_or_init(|| corpus::Corpus::embedded().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone())
}

/// A canonical claim's atom (in elements) is the corpus atom it names at the tensor's element
/// width: the same map on the atom's domain. Without this a claim could pair a TMA swizzle name
/// with any layout the tensor happens to have.
pub(super) fn canonical_atom_is_the_corpus_atom(
    claim: &SynthClaim,
    ts: &Tensors,
) -> Result<(), String> {
    let SynthClaim::Canonical {
        tensor,
        atom_name,
        atom,
    } = claim
    else {
        return Err("not a canonical claim".into());
    };
    let (t, _) = ts.get(tensor)?;
    let a = corpus()?
        .atom(atom_name)
        .ok_or_else(|| format!("the corpus defines no atom {atom_name:?}"))?;
    let want = if let Some(text) = a.recast.get(&t.bits) {
        swizzled(text)?
    } else {
        let base = swizzled(&a.layout)?;
        let from = if a.in_bits { 1 } else { t.bits };
        layout::cute::recast_swizzled(&base, from, t.bits)
            .map_err(|e| format!("atom {atom_name} at {} bits: {e}", t.bits))?
    };
    let got = swizzled(atom)?;
    let ext = want.layout().top_shape();
    let same = got.layout().top_shape() == ext
        && ext.len() == 2
        && (0..ext[0] * ext[1]).all(|i| {
            let x = [i % ext[0], i / ext[0]];
            matches!((got.eval(&ext, &x), want.eval(&ext, &x)), (Ok(p), Ok(q)) if p == q)
        });
    if !same {
        return Err(format!(
            "the atom {atom} is not {atom_name} at {} bits ({want})",
            t.bits
        ));
    }
    Ok(())
}

fn swizzled(text: &str) -> Result<SwizzledLayout, String> {
    match Layout::parse(text, None).map_err(|e| format!("atom {text:?}: {e}"))? {
        Layout::Swizzled(s) => Ok(s),
        Layout::Cute(c) => {
            SwizzledLayout::new(layout::Swizzle::identity(), c).map_err(|e| e.to_string())
        }
        other => Err(format!("atom {} is not a memory layout", other.print())),
    }
}

/// Claim kinds that back operations (the rest are about tensors or the whole plan).
fn backs_ops(c: &SynthClaim) -> bool {
    !matches!(
        c,
        SynthClaim::Distribution { .. }
            | SynthClaim::Injective { .. }
            | SynthClaim::Capacity { .. }
    )
}

/// Checks every op against its instruction and claims; see the module doc.
pub(super) fn ops_are_bound(c: &SynthesisCertificate, ts: &Tensors) -> Result<(), String> {
    let mut used = vec![false; c.claims.len()];
    let mut operands = BTreeSet::new();
    for op in &c.ops {
        let at = |e: String| {
            format!(
                "line {}: {} {:?} -> {} ({}): {e}",
                op.line, op.op, op.inputs, op.output, op.instruction
            )
        };
        let tensor = |n: &str| ts.get(n).map(|(t, _)| t);
        let out = tensor(&op.output).map_err(at)?;
        let ins = op
            .inputs
            .iter()
            .map(|n| tensor(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(at)?;
        operands.insert(op.output.as_str());
        operands.extend(op.inputs.iter().map(String::as_str));
        let arity = match op.op.as_str() {
            "mma" => Some(2),
            "copy" | "cast" | "reduce" => Some(1),
            _ => None,
        };
        if arity.is_some_and(|n| ins.len() != n) || ins.is_empty() {
            return Err(at(format!("{} inputs", ins.len())));
        }
        let claims = match op.op.as_str() {
            "mma" => mma(c, ts, op.instruction.as_str(), out, &ins),
            "copy" => copy(c, ts, op.instruction.as_str(), ins[0], out),
            "cast" => cast(c, op.instruction.as_str(), &ins, out),
            "elementwise" => elementwise(c, op.instruction.as_str(), &ins, out),
            "reduce" => reduce(c, ts, op.instruction.as_str(), ins[0], out),
            "rearrange" => Err(
                "a rearrange is certified as its two copies through shared memory, not as one op"
                    .into(),
            ),
            other => Err(format!("unknown operation {other:?}")),
        }
        .map_err(at)?;
        for i in claims {
            used[i] = true;
        }
    }
    for (i, claim) in c.claims.iter().enumerate() {
        if backs_ops(claim) && !used[i] {
            return Err(format!(
                "claim #{} ({}) backs no operation of the plan",
                i + 1,
                claim_kind(claim)
            ));
        }
    }
    if let Some(t) = c
        .tensors
        .iter()
        .find(|t| !operands.contains(t.name.as_str()))
    {
        return Err(format!("tensor {} is no operation's operand", t.name));
    }
    // A register or shared tensor holds only what an op writes into it (global views are the
    // kernel's inputs and outputs).
    let written: BTreeSet<&str> = c.ops.iter().map(|o| o.output.as_str()).collect();
    for op in &c.ops {
        for i in &op.inputs {
            let scope = ts.get(i).map(|(t, _)| t.scope.as_str())?;
            if scope != "global" && !written.contains(i.as_str()) {
                return Err(format!(
                    "line {}: {} reads the {scope} tensor {i}, which no operation writes",
                    op.line, op.op
                ));
            }
        }
    }
    Ok(())
}

/// The warp arrangement an mma's text states, re-derived from the accumulator's layout: each
/// group of `threads` threads (a warp, or a warpgroup) holds some row blocks and some column
/// blocks of `atom`-sized C blocks; `wm` x `wn` means `wm` distinct row-block sets and `wn`
/// distinct column-block sets; `interleaved` means every group's blocks step by `wm` (`wn`), as
/// against contiguous runs (the two coincide where a group holds one block per axis).
fn arrangement(
    ts: &Tensors,
    out: &SynthTensor,
    threads: i64,
    atom: [i64; 2],
    (wm, wn): (i64, i64),
    interleaved: bool,
) -> Result<(), String> {
    let (_, reg) = ts.reg(&out.name)?;
    let [m, _] = out.shape[..] else {
        return Err(format!("{} is not a matrix", out.name));
    };
    let (am, an) = (atom[0].max(1), atom[1].max(1));
    let (table, values) = (reg.table, reg.nv.max(1));
    let groups = reg.tv.threads() / threads.max(1);
    let mut rows: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); groups as usize];
    let mut cols: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); groups as usize];
    for (i, &cell) in table.iter().enumerate() {
        let g = (i as i64 / values / threads.max(1)) as usize;
        if g < rows.len() {
            rows[g].insert(cell % m / am);
            cols[g].insert(cell / m / an);
        }
    }
    let distinct = |s: &[BTreeSet<i64>]| s.iter().collect::<BTreeSet<_>>().len() as i64;
    let (dm, dn) = (distinct(&rows), distinct(&cols));
    if (dm, dn) != (wm, wn) {
        return Err(format!(
            "its text says warps {wm}x{wn}, but {}'s layout gives its {groups} groups {dm} row \
             block sets and {dn} column block sets",
            out.name
        ));
    }
    // Each group's blocks along one axis: a run of consecutive blocks, or a step of `w`.
    let stepped =
        |s: &BTreeSet<i64>, step: i64| s.iter().zip(s.iter().skip(1)).all(|(a, b)| b - a == step);
    let ok = if interleaved {
        rows.iter().all(|s| stepped(s, wm)) && cols.iter().all(|s| stepped(s, wn))
    } else {
        rows.iter().all(|s| stepped(s, 1)) && cols.iter().all(|s| stepped(s, 1))
    };
    if !ok {
        return Err(format!(
            "its text says the warps are {}interleaved, {}'s layout does not lay them so",
            if interleaved { "" } else { "not " },
            out.name
        ));
    }
    Ok(())
}

/// The index of the first claim `f` accepts, or `why`.
fn find(
    c: &SynthesisCertificate,
    f: impl Fn(&SynthClaim) -> bool,
    why: impl FnOnce() -> String,
) -> Result<usize, String> {
    c.claims.iter().position(f).ok_or_else(why)
}

fn mma(
    c: &SynthesisCertificate,
    ts: &Tensors,
    text: &str,
    out: &SynthTensor,
    ins: &[&SynthTensor],
) -> Result<Vec<usize>, String> {
    // `NAME (warps WMxWN[ interleaved])`: the warp arrangement is descriptive; its size is not.
    let (name, warps) = text
        .rsplit_once(" (warps ")
        .ok_or("an mma instruction names its warp arrangement, `(warps MxN)`")?;
    let arr = warps.strip_suffix(')').unwrap_or("");
    let arr = arr.strip_suffix(" interleaved").unwrap_or(arr);
    let (wm, wn) = arr
        .split_once('x')
        .and_then(|(m, n)| Some((m.parse::<i64>().ok()?, n.parse::<i64>().ok()?)))
        .ok_or_else(|| format!("warp arrangement {warps:?} is not `MxN)`"))?;
    let ins_ = instruction(name, &c.target)?;
    if !matches!(ins_.kind.as_str(), "mma" | "wgmma") {
        return Err(format!("{name} is a {} instruction, not an mma", ins_.kind));
    }
    let (a, b) = (ins[0], ins[1]);
    let k = find(
        c,
        |k| {
            matches!(k, SynthClaim::Mma { c: cc, a: aa, b: bb, atom, .. }
            if *cc == out.name && *aa == a.name && *bb == b.name && atom == name)
        },
        || format!("no mma claim of {name} for these operands"),
    )?;
    let SynthClaim::Mma { threads, shape, .. } = &c.claims[k] else {
        unreachable!("found an mma claim");
    };
    if wm < 1 || wn < 1 || wm.saturating_mul(wn).saturating_mul(*threads) != c.threads {
        return Err(format!(
            "{wm}x{wn} groups of {threads} threads are not the CTA's {}",
            c.threads
        ));
    }
    let interleaved = warps
        .strip_suffix(')')
        .is_some_and(|w| w.ends_with(" interleaved"));
    arrangement(
        ts,
        out,
        *threads,
        [shape[0], shape[1]],
        (wm, wn),
        interleaved,
    )?;
    for t in [a, b] {
        if !ins_.ab.contains(&t.dtype) {
            return Err(format!(
                "{name} multiplies {:?}, operand {} is {}",
                ins_.ab, t.name, t.dtype
            ));
        }
    }
    if ins_.c.as_deref() != Some(out.dtype.as_str()) {
        return Err(format!(
            "{name} accumulates in {}, {} is {}",
            ins_.c.as_deref().unwrap_or("(none)"),
            out.name,
            out.dtype
        ));
    }
    let mut used = vec![k];
    // An operand with a register layout in the atom is read from registers; one without, from
    // shared memory through a descriptor, which reads exactly a K-major canonical layout.
    for (t, key) in [(a, "a"), (b, "b")] {
        let from_registers = reads_registers(&ins_.table, key);
        match (from_registers, t.scope.as_str()) {
            (true, "register") => {}
            (false, "shared") => used.push(find(
                c,
                |k| {
                    matches!(k, SynthClaim::Canonical { tensor, atom_name, .. }
                    if *tensor == t.name && k_major(atom_name))
                },
                || {
                    format!(
                        "{} is read by descriptor and has no K-major canonical claim",
                        t.name
                    )
                },
            )?),
            (_, scope) => {
                return Err(format!(
                    "{name} reads {key} from {}, {} is a {scope} tensor",
                    if from_registers {
                        "registers"
                    } else {
                        "shared memory"
                    },
                    t.name
                ))
            }
        }
    }
    if out.scope != "register" {
        return Err(format!("{} accumulates in registers", out.name));
    }
    Ok(used)
}

/// Whether the corpus instruction reads operand `key` (`a` or `b`) from registers: it has a
/// register layout for it, and (wgmma) `a_from` does not say shared memory.
pub(super) fn reads_registers(entry: &toml::Table, key: &str) -> bool {
    let from = entry.get(&format!("{key}_from")).and_then(|v| v.as_str());
    entry.contains_key(key) && from.is_none_or(|f| f == "registers")
}

/// A corpus shared-memory atom of K-major GMMA operands.
fn k_major(atom: &str) -> bool {
    corpus().ok().and_then(|c| c.atom(atom)).is_some_and(|a| {
        a.file == "atoms/sm90_smem.toml" && a.meta.get("major").map(String::as_str) == Some("K")
    })
}

fn copy(
    c: &SynthesisCertificate,
    ts: &Tensors,
    text: &str,
    src: &SynthTensor,
    dst: &SynthTensor,
) -> Result<Vec<usize>, String> {
    if src.dtype != dst.dtype || src.bits != dst.bits {
        return Err(format!(
            "a copy does not convert: {} is {}, {} is {} (a cast does)",
            src.name, src.dtype, dst.name, dst.dtype
        ));
    }
    let scopes = (src.scope.as_str(), dst.scope.as_str());
    if scopes == ("register", "register") {
        if text != "mov (registers)" {
            return Err("a register-to-register copy is `mov (registers)`".into());
        }
        return Ok(vec![find(
            c,
            |k| matches!(k, SynthClaim::SameDistribution { a, b } if *a == src.name && *b == dst.name),
            || "no same-distribution claim".into(),
        )?]);
    }
    let ins = instruction(text, &c.target)?;
    let kind = ins.kind.as_str();
    let moves = match kind {
        "ldmatrix" | "ld_shared" => ("shared", "register"),
        "stmatrix" | "st_shared" => ("register", "shared"),
        "ld_global" => ("global", "register"),
        "st_global" => ("register", "global"),
        "cp_async" | "tma" => ("global", "shared"),
        _ => ("", ""),
    };
    if moves != scopes {
        return Err(format!(
            "a {kind} instruction does not copy {} to {}",
            scopes.0, scopes.1
        ));
    }
    let (reg, mem) = if src.scope == "register" {
        (src, dst)
    } else {
        (dst, src)
    };
    let width = |bits: Option<i64>| -> Result<i64, String> {
        let b = bits.ok_or_else(|| format!("{text} has no access width"))?;
        if b % src.bits != 0 {
            return Err(format!("{b}-bit accesses of {}-bit elements", src.bits));
        }
        Ok(b / src.bits)
    };
    let k = match kind {
        "ldmatrix" | "stmatrix" => {
            let n = ins
                .count
                .ok_or_else(|| format!("{text} has no matrix count"))?;
            let t = text.contains(".trans");
            find(
                c,
                |k| {
                    matches!(k, SynthClaim::Ldmatrix { reg: r, memory, count, trans }
                    if *r == reg.name && *memory == mem.name && *count == n && *trans == t)
                },
                || {
                    format!(
                        "no ldmatrix claim of {n} matrices{}",
                        if t { ", transposed" } else { "" }
                    )
                },
            )?
        }
        "cp_async" => {
            let w = width(ins.bits)?;
            find(
                c,
                |k| {
                    matches!(k, SynthClaim::Transfer { src: s, dst: d, width, .. }
                    if *s == src.name && *d == dst.name && *width == w)
                },
                || format!("no transfer claim of {w}-element vectors"),
            )?
        }
        "tma" => {
            tma_global(ts, src)?;
            let atom = ins.swizzle_atom.as_deref().unwrap_or("");
            find(
                c,
                |k| {
                    matches!(k, SynthClaim::Canonical { tensor, atom_name, .. }
                    if *tensor == dst.name && atom_name == atom)
                },
                || format!("no canonical claim of {atom} for {}", dst.name),
            )?
        }
        _ => {
            let w = width(ins.bits)?;
            find(
                c,
                |k| {
                    matches!(k, SynthClaim::Vector { reg: r, memory, width }
                    if *r == reg.name && *memory == mem.name && *width == w)
                },
                || format!("no vector claim of {w} elements"),
            )?
        }
    };
    Ok(vec![k])
}

/// A TMA box reads a 2-D global tile whose columns (the K-major box's inner dimension) are
/// contiguous from offset 0 and whose row stride is at least a row and a multiple of 16 bytes (a
/// tensor map's global strides must be): the global view's offsets are `r * stride + c`.
fn tma_global(ts: &Tensors, g: &SynthTensor) -> Result<(), String> {
    let (_, table) = ts.mem(&g.name)?;
    let [rows, cols] = g.shape[..] else {
        return Err(format!("{} is not 2-D", g.name));
    };
    let stride = if rows > 1 { table[1] } else { cols };
    if stride < cols || stride.saturating_mul(g.bits) % 128 != 0 {
        return Err(format!(
            "{}: a row stride of {stride} elements is not a tensor map's (at least a row, a \
             multiple of 16 bytes)",
            g.name
        ));
    }
    for c in 0..cols {
        for r in 0..rows {
            let got = table[(r + rows * c) as usize];
            if got != r * stride + c {
                return Err(format!(
                    "{} stores ({r},{c}) at {got}, not at {r} * {stride} + {c}: a TMA box reads \
                     rows of contiguous columns",
                    g.name
                ));
            }
        }
    }
    Ok(())
}

/// Every input holds the output's cells in the same registers, or (a broadcast operand) the
/// output's with one dimension dropped.
fn same_cells(
    c: &SynthesisCertificate,
    ins: &[&SynthTensor],
    out: &SynthTensor,
) -> Result<Vec<usize>, String> {
    ins.iter()
        .map(|i| {
            find(
                c,
                |k| match k {
                    SynthClaim::SameDistribution { a, b } => *a == i.name && *b == out.name,
                    SynthClaim::Projection { src, dst, .. } => *src == out.name && *dst == i.name,
                    _ => false,
                },
                || format!("no claim that {} holds {}'s cells", i.name, out.name),
            )
        })
        .collect()
}

/// Every input and the output are register tensors.
fn registers(ins: &[&SynthTensor], out: &SynthTensor) -> Result<(), String> {
    match ins.iter().chain([&out]).find(|t| t.scope != "register") {
        Some(t) => Err(format!("{} is a {} tensor, not registers", t.name, t.scope)),
        None => Ok(()),
    }
}

fn cast(
    c: &SynthesisCertificate,
    text: &str,
    ins: &[&SynthTensor],
    out: &SynthTensor,
) -> Result<Vec<usize>, String> {
    registers(ins, out)?;
    let (from, to) = (ins[0].dtype.as_str(), out.dtype.as_str());
    let packed = matches!(from, "i4" | "u4") && matches!(to, "f16" | "bf16");
    let want = if packed {
        format!("lop3 + sub.f16x2 ({from} -> {to}, 8 per 32-bit word, register-local)")
    } else {
        format!("cvt.rn.{to}.{from}")
    };
    if text != want {
        return Err(format!("a cast from {from} to {to} is `{want}`"));
    }
    same_cells(c, ins, out)
}

fn elementwise(
    c: &SynthesisCertificate,
    text: &str,
    ins: &[&SynthTensor],
    out: &SynthTensor,
) -> Result<Vec<usize>, String> {
    registers(ins, out)?;
    let f = text.strip_suffix(" (per register)").unwrap_or("");
    if !is_name(f) {
        return Err("an elementwise op is `F (per register)`".into());
    }
    if ins[0].dtype != out.dtype {
        return Err(format!(
            "{} is {}, its result {} is {} (a cast converts)",
            ins[0].name, ins[0].dtype, out.name, out.dtype
        ));
    }
    same_cells(c, ins, out)
}

fn is_name(f: &str) -> bool {
    !f.is_empty() && f.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// A reduction's text: `F: per-thread fold, S shfl.bfly step(s)[ over the P threads with distinct
/// cells (each cell is held by C threads: the steps skip the copies)][ + shared-memory exchange
/// across warps]`. Threads holding one result cell that fold the same source cells are copies
/// of one partial (a broadcast lane bit): `P` is the most distinct partials of one result cell
/// (a power of two, to be combined by butterflies), `S = log2 P`, and the copies clause is
/// there iff some cell has `C > 1` copies of a partial (a butterfly over them would add a copy
/// twice to a sum); the exchange is there iff some cell's holders span warps.
fn reduce(
    c: &SynthesisCertificate,
    ts: &Tensors,
    text: &str,
    src: &SynthTensor,
    dst: &SynthTensor,
) -> Result<Vec<usize>, String> {
    registers(&[src], dst)?;
    if src.dtype != dst.dtype {
        return Err(format!(
            "a reduction keeps its type: {} is {}, {} is {}",
            src.name, src.dtype, dst.name, dst.dtype
        ));
    }
    let k = find(
        c,
        |k| matches!(k, SynthClaim::Projection { src: s, dst: d, .. } if *s == src.name && *d == dst.name),
        || "no projection claim".into(),
    )?;
    let (_, Parsed::Reg(tv, table)) = ts.get(&dst.name)? else {
        return Err(format!("{} is not a register tensor", dst.name));
    };
    let (_, Parsed::Reg(src_tv, src_table)) = ts.get(&src.name)? else {
        return Err(format!("{} is not a register tensor", src.name));
    };
    let nv = tv.values() as usize;
    if src_tv.values() as usize != nv || src_table.len() != table.len() {
        return Err(format!(
            "{} and {} hold different numbers of values",
            src.name, dst.name
        ));
    }
    let mut holders = std::collections::BTreeMap::<i64, BTreeSet<usize>>::new();
    // Per (result cell, thread): the source cells the thread folds into it.
    let mut folds = std::collections::BTreeMap::<(i64, usize), BTreeSet<i64>>::new();
    for (i, &cell) in table.iter().enumerate() {
        holders.entry(cell).or_default().insert(i / nv);
        folds
            .entry((cell, i / nv))
            .or_default()
            .insert(src_table[i]);
    }
    let mut partials = 1;
    let mut copies = 1;
    for (&cell, threads) in &holders {
        let distinct: BTreeSet<&BTreeSet<i64>> =
            threads.iter().map(|&t| &folds[&(cell, t)]).collect();
        // Distinct partials must not share a source cell: a butterfly over them would add it
        // twice.
        let total: usize = distinct.iter().map(|c| c.len()).sum();
        let union: BTreeSet<i64> = distinct.iter().flat_map(|c| c.iter().copied()).collect();
        if total != union.len() {
            return Err(format!(
                "two threads of result cell {cell} of {} fold overlapping but different source \
                 cells of {}: no butterfly adds each once",
                dst.name, src.name
            ));
        }
        partials = partials.max(distinct.len());
        copies = copies.max(threads.len() / distinct.len());
    }
    let share = partials;
    let cross = holders.values().any(|h| {
        let (lo, hi) = (
            h.first().copied().unwrap_or(0),
            h.last().copied().unwrap_or(0),
        );
        lo / 32 != hi / 32
    });
    if !cross && !share.is_power_of_two() {
        return Err(format!(
            "{share} lanes of a warp hold distinct partials of one result cell: butterflies \
             combine powers of two"
        ));
    }
    let steps = share.ilog2();
    let (f, rest) = text.split_once(": ").unwrap_or(("", ""));
    let want = format!(
        "per-thread fold, {steps} shfl.bfly step(s){}{}",
        if copies > 1 {
            format!(
                " over the {share} threads with distinct cells (each cell is held by {copies} \
                 threads: the steps skip the copies)"
            )
        } else {
            String::new()
        },
        if cross {
            " + shared-memory exchange across warps"
        } else {
            ""
        }
    );
    if !is_name(f) || rest != want {
        return Err(format!("this reduction is `F: {want}`"));
    }
    Ok(vec![k])
}
