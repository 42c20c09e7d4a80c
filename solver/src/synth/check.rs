//! The whole check of a synthesis certificate: [`certify::synthesis::check`] re-decides every
//! claim from the layouts and binds every op to its instruction and claims; here the
//! certificate is also tied to the program it names. Its `source` (the program's text) is
//! parsed with [`Program::parse`], and the certificate's tensors and ops must be exactly the
//! program's:
//!
//! - every tensor, with its scope, element type and shape, and a given layout (a global view's
//!   or a shared tensor's) the same map; the only other tensors are the shared buffers of
//!   `rearrange`s;
//! - every op, with its line, kind, operands in order and result, as often as the program has
//!   it (a `rearrange` as its two copies through its buffer), an elementwise op's and a
//!   reduction's function, and a reduction's dimension.
//!
//! So a certificate cannot describe another program than the text it carries: an op swapped,
//! repeated or dropped, a function renamed or operands exchanged is refused. The parser is the
//! synthesizer's own (the program's meaning is its parse); everything compared is read from
//! the certificate, not re-synthesized.

use std::collections::BTreeMap;

use certify::synthesis::{self, SynthClaim, SynthesisCertificate};

use super::program::{OpKind, Program, Scope};

/// Checks a synthesis certificate (`laycert check`): claims, bindings, and its program.
pub fn check_certificate(text: &str) -> Result<SynthesisCertificate, String> {
    let c = synthesis::check(text)?;
    let src = c
        .source
        .as_deref()
        .ok_or("the certificate carries no program text, so nothing ties it to a program")?;
    let p = Program::parse(src).map_err(|e| format!("its program text: {e}"))?;
    if p.name != c.program || p.threads != c.threads {
        return Err(format!(
            "its program text is {} with {} threads, the certificate says {} with {}",
            p.name, p.threads, c.program, c.threads
        ));
    }
    let moved = inserted_rearranges(&c, &p)?;
    tensors_are_the_programs(&c, &p, &moved)?;
    ops_are_the_programs(&c, &p, &moved)?;
    Ok(c)
}

/// Re-distributions the synthesizer inserted where one tensor must be held in two layouts: the
/// copies `x -> s -> t` through a shared buffer `s`, `s` and `t` not in the program, `t` `x`'s
/// type and shape. A copy moves cells unchanged (its claims say so), so `t` is `x` for the
/// program's ops.
struct Moved {
    /// `t -> x`.
    alias: BTreeMap<String, String>,
    /// The inserted copies (indices into the certificate's ops) and buffers.
    ops: Vec<usize>,
    tensors: Vec<String>,
}

fn inserted_rearranges(c: &SynthesisCertificate, p: &Program) -> Result<Moved, String> {
    let mut m = Moved {
        alias: BTreeMap::new(),
        ops: Vec::new(),
        tensors: Vec::new(),
    };
    let tensor = |n: &str| c.tensors.iter().find(|t| t.name == n);
    for (i, into) in c.ops.iter().enumerate() {
        let Some(buf) = tensor(&into.output) else {
            continue;
        };
        if into.op != "copy" || buf.scope != "shared" || p.tensor(&buf.name).is_some() {
            continue;
        }
        // The copy out of the buffer into a tensor the program does not have.
        let Some((j, out)) = c.ops.iter().enumerate().find(|(_, o)| {
            o.op == "copy" && o.inputs == [buf.name.clone()] && p.tensor(&o.output).is_none()
        }) else {
            continue;
        };
        let x = &into.inputs[0];
        let (Some(tx), Some(tt)) = (tensor(x), tensor(&out.output)) else {
            continue;
        };
        if tt.scope != "register" || tx.dtype != tt.dtype || tx.shape != tt.shape {
            return Err(format!(
                "line {}: {} is re-distributed into {}, which is not a register tensor of its \
                 type and shape",
                out.line, x, tt.name
            ));
        }
        m.alias.insert(tt.name.clone(), x.clone());
        m.ops.extend([i, j]);
        m.tensors.extend([buf.name.clone(), tt.name.clone()]);
    }
    Ok(m)
}

impl Moved {
    /// The program tensor a certificate tensor stands for.
    fn origin<'a>(&'a self, mut t: &'a str) -> &'a str {
        for _ in 0..=self.alias.len() {
            match self.alias.get(t) {
                Some(x) => t = x,
                None => break,
            }
        }
        t
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Global => "global",
        Scope::Shared => "shared",
        Scope::Register => "register",
    }
}

fn tensors_are_the_programs(
    c: &SynthesisCertificate,
    p: &Program,
    moved: &Moved,
) -> Result<(), String> {
    let buffers: Vec<String> = p
        .ops
        .iter()
        .filter(|o| o.kind == OpKind::Rearrange)
        .map(|o| p.rearrange_buffer(&p.tensors[o.output].name))
        .collect();
    for t in &c.tensors {
        match p.tensors.iter().find(|x| x.name == t.name) {
            Some(x) => {
                if scope_name(x.scope) != t.scope || x.dtype.name() != t.dtype || x.shape != t.shape
                {
                    return Err(format!(
                        "tensor {}: {} {} {:?} in the certificate, {} {} {:?} in its program",
                        t.name,
                        t.scope,
                        t.dtype,
                        t.shape,
                        scope_name(x.scope),
                        x.dtype.name(),
                        x.shape
                    ));
                }
                if x.bounds != t.bounds {
                    return Err(format!(
                        "tensor {}: bounds {:?} in the certificate, {:?} in its program",
                        t.name, t.bounds, x.bounds
                    ));
                }
                if let Some(l) = &x.layout {
                    let want = synthesis::mem_table(l, &x.shape)?;
                    let cert = layout::Layout::parse(&t.layout, None)
                        .map_err(|e| format!("tensor {}: {e}", t.name))?;
                    if synthesis::mem_table(&cert, &t.shape)? != want {
                        return Err(format!(
                            "tensor {}: its layout {} is not the program's {}",
                            t.name,
                            t.layout,
                            l.print()
                        ));
                    }
                }
            }
            None if t.scope == "shared" && buffers.contains(&t.name) => {}
            None if moved.tensors.contains(&t.name) => {}
            None => {
                return Err(format!(
                    "tensor {} is not in its program (nor a rearrange's buffer)",
                    t.name
                ))
            }
        }
    }
    if let Some(x) = p
        .tensors
        .iter()
        .find(|x| !c.tensors.iter().any(|t| t.name == x.name))
    {
        return Err(format!(
            "the program's tensor {} is not in the certificate",
            x.name
        ));
    }
    Ok(())
}

/// One op as compared: line, kind, operands, result, function.
type Key = (usize, String, Vec<String>, String, String);

fn ops_are_the_programs(
    c: &SynthesisCertificate,
    p: &Program,
    moved: &Moved,
) -> Result<(), String> {
    let name = |i: usize| p.tensors[i].name.clone();
    let mut want: BTreeMap<Key, usize> = BTreeMap::new();
    let mut dims = Vec::new();
    for o in &p.ops {
        let ins: Vec<String> = o.inputs.iter().map(|&i| name(i)).collect();
        let out = name(o.output);
        let mut add = |k: Key| *want.entry(k).or_default() += 1;
        match &o.kind {
            OpKind::Rearrange => {
                let s = p.rearrange_buffer(&out);
                add((o.line, "copy".into(), ins, s.clone(), String::new()));
                add((o.line, "copy".into(), vec![s], out, String::new()));
            }
            OpKind::Elementwise(f) => add((o.line, "elementwise".into(), ins, out, f.clone())),
            OpKind::Reduce { dim, f } => {
                dims.push((ins[0].clone(), out.clone(), *dim));
                add((o.line, "reduce".into(), ins, out, f.clone()));
            }
            k => add((o.line, k.name().into(), ins, out, String::new())),
        }
    }
    let mut got: BTreeMap<Key, usize> = BTreeMap::new();
    for (i, o) in c.ops.iter().enumerate() {
        if moved.ops.contains(&i) {
            continue;
        }
        let f = match o.op.as_str() {
            "elementwise" => o.instruction.strip_suffix(" (per register)"),
            "reduce" => o.instruction.split_once(": ").map(|(f, _)| f),
            _ => Some(""),
        }
        .unwrap_or("")
        .to_string();
        *got.entry((
            o.line,
            o.op.clone(),
            o.inputs
                .iter()
                .map(|x| moved.origin(x).to_string())
                .collect(),
            o.output.clone(),
            f,
        ))
        .or_default() += 1;
    }
    if let Some((k, n)) = got.iter().find(|(k, n)| want.get(*k) != Some(n)) {
        return Err(format!(
            "line {}: {} {:?} -> {}{} appears {n} time(s) in the certificate, {} in its program",
            k.0,
            k.1,
            k.2,
            k.3,
            if k.4.is_empty() {
                String::new()
            } else {
                format!(" ({})", k.4)
            },
            want.get(k).copied().unwrap_or(0)
        ));
    }
    if let Some((k, _)) = want.iter().find(|(k, _)| !got.contains_key(*k)) {
        return Err(format!(
            "line {}: the program's {} {:?} -> {} is not in the certificate",
            k.0, k.1, k.2, k.3
        ));
    }
    for (src, dst, dim) in dims {
        let claimed = c.claims.iter().any(|k| {
            matches!(k, SynthClaim::Projection { src: s, dst: d, dim: x }
                if moved.origin(s) == src && *d == dst && *x == dim)
        });
        if !claimed {
            return Err(format!(
                "the reduction {src} -> {dst} is over dimension {dim} in its program, not in the \
                 certificate's claim"
            ));
        }
    }
    Ok(())
}
