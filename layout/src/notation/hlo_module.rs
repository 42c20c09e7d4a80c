//! HLO module text, the subset XLA prints for a compiled SPMD program (`compile().as_text()`):
//! computations of instructions `[ROOT] %name = SHAPE opcode(operands), attr=value, ...`.
//!
//! This module reads the text into instructions (name, shape with its layout, opcode, operand
//! names, attributes as text) and reads the attributes collectives carry: replica groups in
//! each form XLA prints, `source_target_pairs`, `dimensions`. What the instructions mean is the
//! reader's business (solver::dist::xla); this is syntax only.
//!
//! Replica groups, each a list of partition ids in member order:
//! - explicit `{{0,2},{1,3}}`; empty `{}` is one group of all partitions;
//! - iota `[2,4]<=[8]` (2 groups of 4 from the list `0..7`) and `[4,2]<=[2,4]T(1,0)` (the list
//!   as in sharding text, see [`super::hlo`]: `0,4,1,5,2,6,3,7`, cut into 4 groups of 2);
//! - mesh `mesh['axis_0'=2,'axis_1'=4] {'axis_1'}`: the partitions of a (2,4) grid, grouped by
//!   the listed axes (members ordered row-major over them, in the order listed), with
//!   `device_ids=([2,4]T(1,0))` giving the partition at each grid position (else the position
//!   itself), and `'axis_1':(2)2` naming a sub-axis: the factor of size 2 of axis_1 whose
//!   major factors multiply to 2. Worked vector: `mesh['a'=2,'b'=4] {'b':(2)2}` is
//!   `{{0,1},{2,3},{4,5},{6,7}}`.

use std::collections::BTreeMap;

use super::hlo::iota_list;

/// Most elements an array shape may hold (2^40): sizes stay far from overflow.
pub const MAX_ELEMENTS: i64 = 1 << 40;

/// Why HLO text was not read: the line (1-based) and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HLO line {line}: {message}")]
pub struct HloTextError {
    /// Line of the text (1-based), 0 when none.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, HloTextError> {
    Err(HloTextError {
        line,
        message: message.into(),
    })
}

/// An HLO shape: an array (element type, dims, layout minor-to-major) or a tuple.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HloShape {
    /// `f32[8,2]{1,0}`.
    Array {
        /// Element type (`f32`, `u32`, `pred`, ...).
        ty: String,
        /// Dims.
        dims: Vec<i64>,
        /// Layout, minor to major (row-major when the text has none).
        layout: Vec<i64>,
    },
    /// `(f32[2], f32[2])`.
    Tuple(Vec<HloShape>),
}

impl HloShape {
    /// The dims of an array shape (empty for a tuple).
    pub fn dims(&self) -> &[i64] {
        match self {
            HloShape::Array { dims, .. } => dims,
            HloShape::Tuple(_) => &[],
        }
    }
}

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    /// Name without `%`.
    pub name: String,
    /// Result shape.
    pub shape: HloShape,
    /// Opcode (`all-gather`, `fusion`, ...).
    pub opcode: String,
    /// Operand names without `%` (for `constant`: empty; the literal is in `literal`).
    pub operands: Vec<String>,
    /// The text inside a `constant(..)` or `parameter(..)`.
    pub literal: String,
    /// Attributes: name -> text of the value.
    pub attrs: BTreeMap<String, String>,
    /// Line in the module text (1-based).
    pub line: usize,
}

/// A computation: its instructions in text order and the root's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Computation {
    /// Name without `%`.
    pub name: String,
    /// Instructions.
    pub instrs: Vec<Instr>,
    /// Index of the `ROOT` instruction (the last one when none is marked).
    pub root: usize,
}

/// A module: computations by name and the entry's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloModule {
    /// Computations by name.
    pub computations: BTreeMap<String, Computation>,
    /// The `ENTRY` computation's name.
    pub entry: String,
    /// `num_partitions=` of the header (1 when absent).
    pub num_partitions: i64,
}

/// Splits at top-level commas (outside brackets, braces, parentheses and quotes).
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start, mut quote) = (Vec::new(), 0i32, 0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '\'' | '"' => quote = !quote,
            '(' | '[' | '{' if !quote => depth += 1,
            ')' | ']' | '}' if !quote => depth -= 1,
            ',' if depth == 0 && !quote => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

/// The index just past the bracket that closes the one at `open`.
fn closing(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Integers in a text such as `{1,0}`, `0, 1, 2` or `{ {0,1}, {2,3} }` (every integer, in order).
pub fn ints_in(s: &str) -> Result<Vec<i64>, String> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.parse::<i64>()
                .map_err(|_| format!("`{t}` is not an integer"))
        })
        .collect()
}

/// Reads a shape: `f32[8,2]{1,0}`, `u32[]`, `(f32[2]{0}, f32[2]{0})`.
pub fn parse_shape(s: &str) -> Result<HloShape, String> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        return split_top(inner)
            .into_iter()
            .map(parse_shape)
            .collect::<Result<_, _>>()
            .map(HloShape::Tuple);
    }
    let open = s.find('[').ok_or_else(|| format!("shape `{s}`: no dims"))?;
    let close = s[open..]
        .find(']')
        .map(|i| open + i)
        .ok_or_else(|| format!("shape `{s}`: [ without ]"))?;
    let ty = s[..open].to_string();
    if ty.is_empty() || !ty.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("shape `{s}`: element type `{ty}`"));
    }
    let dims = ints_in(&s[open + 1..close])?;
    if dims.iter().any(|&d| d < 0) || s[open + 1..close].contains('?') {
        return Err(format!("shape `{s}`: dims must be static and non-negative"));
    }
    if dims
        .iter()
        .try_fold(1i64, |a, &d| {
            a.checked_mul(d).filter(|&n| n <= MAX_ELEMENTS)
        })
        .is_none()
    {
        return Err(format!("shape `{s}`: more than 2^40 elements"));
    }
    let rest = s[close + 1..].trim();
    let layout = match rest.strip_prefix('{') {
        Some(l) => {
            let l = l.split(':').next().unwrap_or("").trim_end_matches('}');
            ints_in(l)?
        }
        None => (0..dims.len() as i64).rev().collect(),
    };
    let mut sorted = layout.clone();
    sorted.sort();
    if sorted != (0..dims.len() as i64).collect::<Vec<_>>() {
        return Err(format!(
            "shape `{s}`: layout {layout:?} is not a permutation of the dims"
        ));
    }
    Ok(HloShape::Array { ty, dims, layout })
}

fn parse_instr(text: &str, line: usize) -> Result<(Instr, bool), HloTextError> {
    let mut t = text.trim();
    let root = t.starts_with("ROOT ");
    t = t.trim_start_matches("ROOT ").trim();
    let Some((lhs, rhs)) = t.split_once(" = ") else {
        return err(line, format!("`{t}` is not `%name = shape opcode(...)`"));
    };
    let name = lhs.trim().trim_start_matches('%').to_string();
    let rhs = rhs.trim();
    // The shape ends where the opcode starts: after a tuple's `)` or the first space otherwise.
    let shape_end = if rhs.starts_with('(') {
        closing(rhs, 0).ok_or_else(|| HloTextError {
            line,
            message: format!("%{name}: unbalanced tuple shape"),
        })?
    } else {
        rhs.find(' ').unwrap_or(rhs.len())
    };
    let shape = parse_shape(&rhs[..shape_end]).map_err(|m| HloTextError {
        line,
        message: format!("%{name}: {m}"),
    })?;
    let rest = rhs[shape_end..].trim_start();
    let Some(open) = rest.find('(') else {
        return err(line, format!("%{name}: no operand list"));
    };
    let opcode = rest[..open].trim().to_string();
    let close = closing(rest, open).ok_or_else(|| HloTextError {
        line,
        message: format!("%{name} = {opcode}: unbalanced operand list"),
    })?;
    let inside = &rest[open + 1..close - 1];
    let (operands, literal) = if opcode == "constant" || opcode == "parameter" {
        (Vec::new(), inside.trim().to_string())
    } else {
        let ops = split_top(inside)
            .into_iter()
            .map(|o| {
                let o = o.rsplit(' ').next().unwrap_or(o);
                o.trim_start_matches('%').to_string()
            })
            .collect();
        (ops, String::new())
    };
    let mut attrs = BTreeMap::new();
    for a in split_top(rest[close..].trim_start_matches(',')) {
        if let Some((k, v)) = a.split_once('=') {
            attrs.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    let instr = Instr {
        name,
        shape,
        opcode,
        operands,
        literal,
        attrs,
        line,
    };
    Ok((instr, root))
}

/// Reads a module (or a bare computation: it becomes the entry).
pub fn parse_module(text: &str) -> Result<HloModule, HloTextError> {
    let mut computations = BTreeMap::new();
    let (mut entry, mut num_partitions) = (None, 1i64);
    let mut cur: Option<(String, Vec<Instr>, Option<usize>)> = None;
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        // Comments such as `/*index=5*/` sit between operands.
        let mut s = raw.to_string();
        while let Some(a) = s.find("/*") {
            let b = s[a..].find("*/").map_or(s.len(), |b| a + b + 2);
            s.replace_range(a..b, "");
        }
        let t = s.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        // The stack-frame tables XLA prints between the header and the computations.
        if cur.is_none()
            && (matches!(
                t,
                "FileNames" | "FunctionNames" | "FileLocations" | "StackFrames"
            ) || t.starts_with(|c: char| c.is_ascii_digit()))
        {
            continue;
        }
        if t.starts_with("HloModule") {
            if let Some(v) = t.split("num_partitions=").nth(1) {
                let v: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
                num_partitions = v.parse().map_err(|_| HloTextError {
                    line,
                    message: "num_partitions is not an integer".into(),
                })?;
            }
            continue;
        }
        if t == "}" {
            let Some((name, instrs, root)) = cur.take() else {
                return err(line, "`}` closes no computation");
            };
            if instrs.is_empty() {
                return err(line, format!("computation %{name} has no instruction"));
            }
            let root = root.unwrap_or(instrs.len() - 1);
            computations.insert(name.clone(), Computation { name, instrs, root });
            continue;
        }
        if t.ends_with('{') && !t.contains(" = ") {
            if cur.is_some() {
                return err(line, "a computation starts inside another");
            }
            let is_entry = t.starts_with("ENTRY ");
            let head = t.trim_start_matches("ENTRY ").trim();
            let name: String = head
                .trim_start_matches('%')
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '(')
                .collect();
            if name.is_empty() {
                return err(line, "a computation without a name");
            }
            if is_entry {
                entry = Some(name.clone());
            }
            cur = Some((name, Vec::new(), None));
            continue;
        }
        let (instr, is_root) = parse_instr(t, line)?;
        match cur.as_mut() {
            Some((_, instrs, root)) => {
                if is_root {
                    *root = Some(instrs.len());
                }
                instrs.push(instr);
            }
            None => {
                // A bare list of instructions: one entry computation.
                cur = Some(("entry".into(), vec![instr], is_root.then_some(0)));
                entry = Some("entry".into());
            }
        }
    }
    if let Some((name, instrs, root)) = cur.take() {
        if entry.as_deref() == Some("entry") && name == "entry" {
            let root = root.unwrap_or(instrs.len().saturating_sub(1));
            computations.insert(name.clone(), Computation { name, instrs, root });
        } else {
            return err(0, format!("computation %{name} is not closed"));
        }
    }
    let Some(entry) = entry else {
        return err(0, "no ENTRY computation");
    };
    if num_partitions < 1 {
        return err(1, "num_partitions < 1");
    }
    Ok(HloModule {
        computations,
        entry,
        num_partitions,
    })
}

/// Reads an instruction's replica groups (partition ids, member order kept) on `n` partitions.
/// `device_ids` is the instruction's `device_ids=` attribute, which the mesh form splits off.
pub fn replica_groups(
    text: &str,
    device_ids: Option<&str>,
    n: i64,
) -> Result<Vec<Vec<i64>>, String> {
    let t = text.trim();
    if let Some(m) = t.strip_prefix("mesh[") {
        return mesh_groups(m, device_ids, n);
    }
    if t.starts_with('[') {
        // `[g,s]<=[dims]T(perm)`.
        let (gs, list) = t
            .split_once("<=")
            .ok_or_else(|| format!("replica groups `{t}`: expected [groups,size]<=[..]"))?;
        let gs = ints_in(gs)?;
        let list = iota_list(list).map_err(|e| e.0)?;
        if gs.len() != 2
            || gs[0] < 1
            || gs[1] < 1
            || gs[0].checked_mul(gs[1]) != Some(list.len() as i64)
        {
            return Err(format!(
                "replica groups `{t}`: {gs:?} does not cut {} ids",
                list.len()
            ));
        }
        return Ok(list.chunks(gs[1] as usize).map(|c| c.to_vec()).collect());
    }
    let inner = t
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| {
            format!("replica groups `{t}`: expected {{{{..}},..}}, [g,s]<=[..] or mesh[..]")
        })?;
    if inner.trim().is_empty() {
        return Ok(vec![(0..n).collect()]);
    }
    split_top(inner)
        .into_iter()
        .map(|g| {
            let g = g
                .strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'))
                .ok_or_else(|| format!("replica group `{g}` is not {{..}}"))?;
            ints_in(g)
        })
        .collect()
}

/// `'axis_0'=2,'axis_1'=4] {'axis_1':(2)2}` (after `mesh[`).
fn mesh_groups(m: &str, device_ids: Option<&str>, n: i64) -> Result<Vec<Vec<i64>>, String> {
    let (axes, rest) = m
        .split_once(']')
        .ok_or_else(|| "replica groups mesh[ without ]".to_string())?;
    let mut names = Vec::new();
    let mut ext = Vec::new();
    for a in axes.split(',') {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| format!("mesh axis `{a}` is not 'name'=size"))?;
        names.push(k.trim().trim_matches('\'').to_string());
        ext.push(
            v.trim()
                .parse::<i64>()
                .map_err(|_| format!("mesh axis size `{v}`"))?,
        );
    }
    let total = ext
        .iter()
        .try_fold(1i64, |a, &e| a.checked_mul(e).filter(|_| e >= 1))
        .ok_or_else(|| format!("mesh axes {ext:?}"))?;
    if total != n {
        return Err(format!("mesh of {total} devices on {n} partitions"));
    }
    // The device at each grid position; `device_ids=(..)` may also follow the axes' braces.
    let mut rest = rest.trim().to_string();
    let mut ids_text = device_ids.map(str::to_string);
    if let Some(r) = rest.strip_prefix(',') {
        rest = r.trim().to_string();
    }
    // In `replica_groups=mesh[..], device_ids=(..) {..}` the axes follow the device ids.
    let (ids_part, axes_part) = match ids_text.as_deref().and_then(|d| d.find('{')) {
        Some(i) => {
            let d = ids_text.clone().unwrap_or_default();
            (Some(d[..i].trim().to_string()), d[i..].trim().to_string())
        }
        None => (ids_text.take(), rest.clone()),
    };
    let positions: Vec<i64> = match ids_part {
        Some(d) => {
            let d = d.trim();
            let d = d
                .strip_prefix('(')
                .and_then(|x| x.strip_suffix(')'))
                .unwrap_or(d);
            let l = iota_list(d).map_err(|e| e.0)?;
            if l.len() as i64 != n {
                return Err(format!(
                    "device_ids of {} devices on {n} partitions",
                    l.len()
                ));
            }
            l
        }
        None => (0..n).collect(),
    };
    let sel = axes_part
        .trim()
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| format!("replica groups: `{axes_part}` is not {{'axis',..}}"))?;
    // Each selected (sub-)axis as (mesh axis, size, stride inside the axis's coordinate).
    let mut chosen: Vec<(usize, i64, i64)> = Vec::new();
    for s in split_top(sel) {
        let (nm, sub) = match s.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let nm = nm.trim().trim_matches('\'');
        let a = names
            .iter()
            .position(|x| x == nm)
            .ok_or_else(|| format!("replica groups name axis `{nm}` of no mesh axis"))?;
        let (size, stride) = match sub {
            None => (ext[a], 1),
            Some(sub) => {
                let (pre, size) = sub
                    .trim()
                    .strip_prefix('(')
                    .and_then(|r| r.split_once(')'))
                    .ok_or_else(|| format!("sub-axis `{sub}` is not (pre)size"))?;
                let pre: i64 = pre
                    .trim()
                    .parse()
                    .map_err(|_| format!("sub-axis `{sub}`"))?;
                let size: i64 = size
                    .trim()
                    .parse()
                    .map_err(|_| format!("sub-axis `{sub}`"))?;
                let whole = pre
                    .checked_mul(size)
                    .filter(|&w| pre >= 1 && size >= 1 && ext[a] % w == 0)
                    .ok_or_else(|| format!("sub-axis `{sub}` of an axis of {}", ext[a]))?;
                (size, ext[a] / whole)
            }
        };
        chosen.push((a, size, stride));
    }
    // Group key: the grid coordinates with the chosen factors removed; member index: row-major
    // over the chosen factors.
    let mut groups: BTreeMap<Vec<i64>, Vec<(i64, i64)>> = BTreeMap::new();
    for p in 0..n {
        let mut c = vec![0i64; ext.len()];
        let mut k = p;
        for d in (0..ext.len()).rev() {
            c[d] = k % ext[d];
            k /= ext[d];
        }
        let mut member = 0i64;
        let mut key = c.clone();
        for &(a, size, stride) in &chosen {
            let f = (c[a] / stride) % size;
            member = member * size + f;
            key[a] -= f * stride;
        }
        groups
            .entry(key)
            .or_default()
            .push((member, positions[p as usize]));
    }
    Ok(groups
        .into_values()
        .map(|mut g| {
            g.sort();
            g.into_iter().map(|(_, d)| d).collect()
        })
        .collect())
}

/// `source_target_pairs={{0,1},{1,0}}` as pairs.
pub fn pairs(text: &str) -> Result<Vec<(i64, i64)>, String> {
    let v = ints_in(text)?;
    if v.len() % 2 != 0 {
        return Err(format!("source_target_pairs `{text}` has an odd count"));
    }
    Ok(v.chunks(2).map(|c| (c[0], c[1])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_groups_in_every_form() {
        let g = |t: &str, d: Option<&str>| replica_groups(t, d, 8).unwrap();
        assert_eq!(g("{{0,2},{1,3},{4,6},{5,7}}", None)[1], vec![1, 3]);
        assert_eq!(g("{}", None), vec![(0..8).collect::<Vec<_>>()]);
        assert_eq!(
            g("[2,4]<=[8]", None),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(g("[4,2]<=[2,4]T(1,0)", None)[0], vec![0, 4]);
        assert_eq!(
            g("mesh['a'=2,'b'=4] {'b':(2)2}", None),
            vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]
        );
        assert_eq!(g("mesh['a'=2,'b'=4] {'a'}", None)[3], vec![3, 7]);
        // The grid position -> partition list from device_ids (here 0,4,1,5,..).
        assert_eq!(
            g("mesh['a'=4,'b'=2]", Some("([2,4]T(1,0)) {'a'}")),
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
    }

    #[test]
    fn instructions_shapes_layouts_and_attributes() {
        let m = parse_module(
            "HloModule m, num_partitions=4\n\nFileNames\n1 \"/tmp/x.py\"\n\nENTRY %main (p: f32[8,2]) -> f32[2,8] {\n  %param = f32[8,2]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}\n  %c = u32[4]{0} constant({0, 1, 2, 3})\n  %t = (f32[1,2]{1,0}, /*index=1*/f32[1,2]{1,0}) all-to-all(%a, %b), channel_id=1, replica_groups=mesh['axis_0'=4] {'axis_0'}\n  ROOT %b = f32[2,8]{0,1} bitcast(%param)\n}\n",
        )
        .unwrap();
        let e = &m.computations[&m.entry];
        assert_eq!((m.num_partitions, e.root, e.instrs.len()), (4, 3, 4));
        assert_eq!(e.instrs[1].literal, "{0, 1, 2, 3}");
        assert_eq!(e.instrs[2].operands, vec!["a", "b"]);
        assert_eq!(
            e.instrs[2].attrs["replica_groups"],
            "mesh['axis_0'=4] {'axis_0'}"
        );
        assert!(
            matches!(&e.instrs[3].shape, HloShape::Array { layout, .. } if layout == &vec![0, 1])
        );
    }

    #[test]
    fn malformed_text_is_an_error_naming_the_line() {
        for t in [
            "ENTRY %m {\n %a = f32[2 parameter(0)\n}",
            "ENTRY %m {\n %a = f32[2]{0} parameter(0\n}",
            "%a f32[2] parameter(0)",
            "ENTRY %m {\n %a = f32[2]{0} parameter(0)\n",
            "}",
        ] {
            assert!(parse_module(t).is_err(), "{t}");
        }
    }
}
