//! The real layout strings of `corpus/data/real/layouts.toml` (issue 16): every one parses
//! exactly as pasted (its `#alias` names resolved from its `defs` as `laycert --mlir` resolves
//! them) and evaluates at every point of its domain, and every CuTe and Triton string agrees
//! with its oracle in `tests/data/real/oracle.jsonl` (bench/peers/gen_real_oracle.py):
//! pycute at every flat index of a CuTe string; Triton 3.9 (its own MLIR parse of a TTGIR
//! attribute, or Gluon evaluating a constructor) at every point of a Triton layout on its
//! shape: the linear layout of a distributed or shared layout, the padded address of every
//! element of a `padded_shared` one. TIRx strings have no oracle; `claims/real_tirx.toml`
//! decides several against an equal layout written another way, through `laycert verify`'s
//! `equiv`. Strings marked `expect = "error"` (a doc typo, a layout Triton rejects too) must
//! be refused.

use std::collections::BTreeMap;

use corpus::real::RealLayout;
use corpus::Corpus;
use layout::notation::Notation;
use layout::Layout;
use serde_json::Value;

/// The corpus holds at least this many real strings (issue 16 asks for 195).
const FLOOR: usize = 279;

const P: u128 = (1 << 61) - 1;

fn digest(values: impl IntoIterator<Item = i64>) -> u64 {
    let mut h: u128 = 0;
    for v in values {
        let v = u128::try_from(v + 1).expect("offsets are non-negative");
        h = (h * 1_000_003 + v) % P;
    }
    u64::try_from(h).expect("below 2^61")
}

fn reals() -> Vec<RealLayout> {
    Corpus::embedded()
        .expect("the embedded corpus loads")
        .reals
        .into_iter()
        .filter(|r| r.file == "real/layouts.toml")
        .collect()
}

/// Every point of the domain, as a coordinate of the layout's default shape (colexicographic).
fn points(l: &Layout) -> impl Iterator<Item = Vec<i64>> + '_ {
    let dims = l.default_shape();
    (0..l.domain_size()).map(move |flat| {
        let mut rest = flat;
        dims.iter()
            .map(|e| {
                let c = rest % e;
                rest /= e;
                c
            })
            .collect()
    })
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn rows(v: &Value) -> Vec<Vec<i64>> {
    v.as_array().unwrap().iter().map(ints).collect()
}

/// A string as the oracle file names it: its text, shape and alias definitions.
type Key = (String, Option<Vec<i64>>, Option<String>);

fn key(r: &RealLayout) -> Key {
    (r.text.clone(), r.shape.clone(), r.defs.clone())
}

fn oracles() -> BTreeMap<Key, Value> {
    let path = format!(
        "{}/../tests/data/real/oracle.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let k = (
            r["text"].as_str().unwrap().to_string(),
            r.get("shape").map(ints),
            r.get("defs").map(|d| d.as_str().unwrap().to_string()),
        );
        assert!(
            out.insert(k.clone(), r).is_none(),
            "{k:?}: two oracle records"
        );
    }
    out
}

#[test]
fn every_real_layout_parses_and_evaluates_everywhere() {
    let all = reals();
    assert!(all.len() >= FLOOR, "{} real strings", all.len());
    let mut failures = Vec::new();
    let mut by_notation: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &all {
        let parsed = r.parse();
        if r.expect_error {
            if parsed.is_ok() {
                failures.push(format!("{:?} ({}) must be refused", r.text, r.path));
            }
            continue;
        }
        let l = match parsed {
            Ok(l) => l,
            Err(e) => {
                failures.push(format!("{:?} ({}) on {:?}: {e}", r.text, r.path, r.shape));
                continue;
            }
        };
        assert!(l.domain_size() <= 1 << 18, "{:?}: a large domain", r.text);
        if let Some(e) = points(&l).find_map(|c| l.eval(None, &c).err().map(|e| (c, e))) {
            failures.push(format!("{:?} at {:?}: {}", r.text, e.0, e.1));
        }
        *by_notation
            .entry(Notation::detect(&r.resolved().unwrap()).name())
            .or_default() += 1;
    }
    println!("{} real strings by notation: {by_notation:?}", all.len());
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The oracle's value of one string against laycert's, or why they differ.
fn check(r: &RealLayout, l: &Layout, o: &Value) -> Result<(), String> {
    let shape = r.shape.as_deref();
    if let Some(p) = o.get("pycute") {
        let size = p["size"].as_i64().unwrap();
        let values = match l {
            Layout::Cute(c) => c.eval_all(),
            Layout::Swizzled(s) => s.eval_all().map_err(|e| e.to_string())?,
            other => return Err(format!("reads as {:?}, pycute as CuTe", other.notation())),
        };
        if values.len() as i64 != size {
            return Err(format!("size {} against pycute's {size}", values.len()));
        }
        if digest(values) != p["digest"].as_u64().unwrap() {
            return Err("values differ from pycute's".into());
        }
        return Ok(());
    }
    if let Some(p) = o.get("gluon_padded") {
        return check_padded(l, shape.expect("a Triton string has its shape"), p);
    }
    let want = o
        .get("gluon_linear")
        .or_else(|| o.get("gluon_shared"))
        .and_then(Value::as_str)
        .ok_or("an oracle record without a value")?;
    let want = Layout::parse(want, shape).map_err(|e| format!("oracle text: {e}"))?;
    if l.default_shape() != want.default_shape() {
        return Err(format!(
            "in-dims {:?} against Triton's {:?}",
            l.default_shape(),
            want.default_shape()
        ));
    }
    for c in points(l) {
        let (got, exp) = (l.eval(None, &c).unwrap(), want.eval(None, &c).unwrap());
        if got != exp {
            return Err(format!("at {c:?}: laycert {got:?}, Triton {exp:?}"));
        }
    }
    Ok(())
}

/// A padded shared layout: each tensor element's address is the padded address of the offset
/// Triton's bases map to it (after every `interval` elements, `padding` more; they add up).
fn check_padded(l: &Layout, shape: &[i64], p: &Value) -> Result<(), String> {
    let Layout::Cute(c) = l else {
        return Err("expected a strided layout of addresses".into());
    };
    let (bases, pairs) = (rows(&p["offset"]), rows(&p["pairs"]));
    for o in 0i64..(1 << bases.len()) {
        let mut elem = vec![0i64; shape.len()];
        for (i, b) in bases.iter().enumerate() {
            if o >> i & 1 == 1 {
                elem.iter_mut().zip(b).for_each(|(e, v)| *e ^= v);
            }
        }
        let addr = o + pairs.iter().map(|q| (o / q[0]) * q[1]).sum::<i64>();
        let got = c.eval(shape, &elem).map_err(|e| e.to_string())?;
        if got != addr {
            return Err(format!(
                "{elem:?} at {got}, Triton's padding puts it at {addr}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_cute_and_triton_string_agrees_with_its_oracle() {
    let mut records = oracles();
    let (mut cute, mut triton, mut tirx) = (0, 0, 0);
    let mut failures = Vec::new();
    for r in reals().iter().filter(|r| !r.expect_error) {
        let l = r.parse().unwrap();
        if let Layout::Axe(_) = l {
            tirx += 1;
            continue;
        }
        let Some(o) = records.remove(&key(r)) else {
            failures.push(format!("{:?} on {:?}: no oracle record", r.text, r.shape));
            continue;
        };
        match check(r, &l, &o) {
            Ok(()) if o.get("pycute").is_some() => cute += 1,
            Ok(()) => triton += 1,
            Err(why) => failures.push(format!("{:?} on {:?}: {why}", r.text, r.shape)),
        }
    }
    println!("{cute} CuTe strings agree with pycute, {triton} Triton strings with Triton 3.9; {tirx} TIRx strings have no oracle");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        records.is_empty(),
        "oracle records for strings not in the corpus: {:?}",
        records.keys().collect::<Vec<_>>()
    );
    assert!(
        cute >= 100 && triton >= 140 && tirx >= 13,
        "{cute} CuTe, {triton} Triton, {tirx} TIRx"
    );
}

/// TIRx strings have no peer to run: `claims/real_tirx.toml` states several equal to a layout
/// written another way (CuTe, or Axe's canonical form), and `laycert verify` decides them
/// through `equiv`. Each such claim's left side is a real string, pasted as found.
#[test]
fn tirx_strings_are_claimed_equal_to_a_layout_written_another_way() {
    let corpus = Corpus::embedded().unwrap();
    let tirx: Vec<&str> = corpus
        .reals
        .iter()
        .filter(|r| Notation::detect(&r.text) == Notation::Axe)
        .map(|r| r.text.as_str())
        .collect();
    let claimed: Vec<&corpus::Claim> = corpus
        .claims
        .iter()
        .filter(|c| c.file == "claims/real_tirx.toml")
        .collect();
    for c in &claimed {
        assert!(
            tirx.contains(&c.left.written.as_str()),
            "{}: {:?} is not a real TIRx string",
            c.name,
            c.left.written
        );
    }
    let equal = claimed.iter().filter(|c| c.holds).count();
    assert!(
        equal >= 6,
        "{equal} TIRx strings claimed equal to another spelling"
    );
}
