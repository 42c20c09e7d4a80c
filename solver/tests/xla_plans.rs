//! XLA's resharding programs (bench/dist/xla_plans.jsonl, bench/dist/gen_xla_plans.py: the
//! compiled HLO of `jax.jit(identity, out_shardings=..)`) read as plans: every one certified,
//! its simulated shards equal to what XLA's run produced on every device, its received elements
//! equal to what the HLO's collectives move; mutated programs refuted with a device and an
//! element; malformed text an error, never a panic.

use certify::dist::{certify_plan, simulate, DistError, Plan, Step};
use layout::mesh::{Mesh, MeshLayout};
use layout::notation::hlo;
use serde_json::Value;
use solver::dist::{plan, xla, PlanOptions};

struct Case {
    id: i64,
    source: MeshLayout,
    target: MeshLayout,
    hlo: String,
    recv_elems: i64,
    shards: Vec<Vec<i64>>,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bench/dist/xla_plans.jsonl"
    ))
    .unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let mesh = Mesh::parse(v["mesh"].as_str().unwrap()).unwrap();
            let shape: Vec<i64> = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect();
            let at = |k: &str| {
                let s = hlo::parse(v[k].as_str().unwrap()).unwrap();
                hlo::to_layout(&mesh, &shape, &s).unwrap()
            };
            Case {
                id: v["id"].as_i64().unwrap(),
                source: at("src"),
                target: at("dst"),
                hlo: v["hlo"].as_str().unwrap().to_string(),
                recv_elems: v["recv_elems"].as_i64().unwrap(),
                shards: v["shards"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        s.as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_i64().unwrap())
                            .collect()
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Each rank's final buffer as flat element ids (row-major in the tensor), by the cell simulator.
fn simulated_shards(c: &Case, p: &Plan) -> Vec<Vec<i64>> {
    let start = certify::dist::initial_buffers(&c.source).unwrap();
    simulate::run(p, start)
        .unwrap()
        .iter()
        .map(|b| b.cells.iter().map(|x| x.elem as i64).collect())
        .collect()
}

#[test]
fn every_xla_plan_is_certified_with_its_shards_and_bytes() {
    let cs = cases();
    assert!(cs.len() >= 40, "{} cases", cs.len());
    let (mut fewer, mut equal, mut laycert_total, mut xla_total) = (0, 0, 0i64, 0i64);
    let (mut ratio, mut kinds) = (1.0f64, std::collections::BTreeMap::new());
    for c in &cs {
        let x = xla::lower_xla(&c.hlo, &c.source, &c.target)
            .unwrap_or_else(|e| panic!("case {}: {e}", c.id));
        certify_plan(&c.source, &c.target, &x.plan)
            .unwrap_or_else(|e| panic!("case {}: XLA's plan not certified: {e:?}", c.id));
        assert_eq!(simulated_shards(c, &x.plan), c.shards, "case {}", c.id);
        assert_eq!(x.max_recv_elems(), c.recv_elems, "case {}", c.id);
        // laycert's own plan under the bandwidth-only model (the measure compared).
        let own = plan(&c.source, &c.target, &PlanOptions::bandwidth_only()).unwrap();
        assert!(own.certificate.is_some());
        assert!(own.max_recv_elems() <= x.max_recv_elems(), "case {}", c.id);
        fewer += (own.max_recv_elems() < x.max_recv_elems()) as i64;
        equal += (own.max_recv_elems() == x.max_recv_elems()) as i64;
        laycert_total += own.max_recv_elems();
        if own.max_recv_elems() > 0 {
            ratio = ratio.max(x.max_recv_elems() as f64 / own.max_recv_elems() as f64);
        }
        for c in &x.collectives {
            *kinds
                .entry(c.split(' ').next().unwrap().to_string())
                .or_insert(0) += 1;
        }
        xla_total += x.max_recv_elems();
    }
    println!(
        "{} XLA plans certified; laycert receives fewer on {fewer}, as many on {equal}; elements received per rank (max), summed over cases: XLA {xla_total}, laycert {laycert_total}; largest ratio XLA / laycert {ratio:.2}; collectives read {kinds:?}",
        cs.len()
    );
}

/// The first case whose program has the instruction `op`.
fn case_with<'a>(cs: &'a [Case], op: &str) -> &'a Case {
    cs.iter()
        .find(|c| c.hlo.contains(op))
        .unwrap_or_else(|| panic!("no case with {op}"))
}

fn refuted(c: &Case, text: &str) -> certify::dist::DistCounterexample {
    let x = xla::lower_xla(text, &c.source, &c.target).unwrap();
    match certify_plan(&c.source, &c.target, &x.plan) {
        Err(DistError::Refuted(ce)) => ce,
        other => panic!("case {}: mutated program not refuted: {other:?}", c.id),
    }
}

#[test]
fn a_permuted_replica_group_is_refuted() {
    let cs = cases();
    let c = cs
        .iter()
        .find(|c| {
            c.hlo.contains(" all-gather(")
                && c.hlo.contains("replica_groups=mesh")
                && !c.hlo.contains("device_ids=(")
        })
        .unwrap();
    // The explicit groups XLA's mesh form denotes, with the first group's members swapped.
    let x = xla::lower_xla(&c.hlo, &c.source, &c.target).unwrap();
    let mut p = x.plan.clone();
    let g = p
        .steps
        .iter_mut()
        .find_map(|s| match s {
            Step::AllGather { groups, .. } => Some(groups),
            _ => None,
        })
        .unwrap();
    g[0].swap(0, 1);
    let rank_of = |r: i64| c.source.mesh.position_of(r);
    let text: String = g
        .iter()
        .map(|m| {
            format!(
                "{{{}}}",
                m.iter()
                    .map(|&r| rank_of(r).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    let line = c.hlo.lines().find(|l| l.contains(" all-gather(")).unwrap();
    let start = line.find("replica_groups=").unwrap();
    let end = line[start..]
        .find(", dimensions")
        .map(|e| start + e)
        .unwrap();
    let mutated = c.hlo.replace(
        line,
        &format!(
            "{}replica_groups={{{text}}}{}",
            &line[..start],
            &line[end..]
        ),
    );
    let ce = refuted(c, &mutated);
    assert!(ce.element.is_some(), "{ce}");
}

#[test]
fn a_dropped_collective_permute_pair_is_refuted() {
    let cs = cases();
    let c = case_with(&cs, "collective-permute(");
    let line = c
        .hlo
        .lines()
        .find(|l| l.contains("collective-permute("))
        .unwrap();
    // Drop the first pair that moves data between two partitions.
    let pairs = line.split("source_target_pairs={").nth(1).unwrap();
    let pair = pairs
        .split('}')
        .map(|p| p.trim_start_matches(',').trim_start_matches('{'))
        .find(|p| {
            let v: Vec<&str> = p.split(',').collect();
            v.len() == 2 && v[0] != v[1]
        })
        .unwrap();
    let mutated_line =
        line.replacen(&format!("{{{pair}}},"), "", 1)
            .replacen(&format!(",{{{pair}}}"), "", 1);
    assert_ne!(mutated_line, line);
    let ce = refuted(c, &c.hlo.replace(line, &mutated_line));
    let dst: i64 = pair.split(',').nth(1).unwrap().parse().unwrap();
    assert_eq!(ce.rank, c.source.mesh.device_at(dst), "{ce}");
    assert!(ce.element.is_some(), "{ce}");
}

#[test]
fn a_wrong_dynamic_slice_offset_is_refuted() {
    let cs = cases();
    // A table of per-partition offsets indexed by partition-id: change its first entry.
    let c = cs
        .iter()
        .find(|c| {
            c.hlo.contains("dynamic-slice(") && c.hlo.lines().any(|l| l.contains("constant({0, 1"))
        })
        .unwrap();
    let line = c
        .hlo
        .lines()
        .find(|l| l.contains("constant({0, 1"))
        .unwrap();
    let mutated = c
        .hlo
        .replace(line, &line.replacen("constant({0, 1", "constant({1, 1", 1));
    let ce = refuted(c, &mutated);
    assert!(ce.element.is_some(), "{ce}");
}

#[test]
fn a_partial_all_reduced_twice_is_refuted() {
    let cs = cases();
    let mut checked = 0;
    for c in cs.iter().filter(|c| c.hlo.contains(" all-reduce(")) {
        // `%r = S all-reduce(%x), attrs` becomes `%r.0 = S all-reduce(%x), attrs` and
        // `%r = S all-reduce(%r.0), attrs`: each value's addends summed twice.
        let line = c.hlo.lines().find(|l| l.contains(" all-reduce(")).unwrap();
        let (lhs, rhs) = line.split_once(" = ").unwrap();
        let name = lhs
            .trim()
            .trim_start_matches("ROOT ")
            .trim_start_matches('%');
        let open = rhs.find("all-reduce(").unwrap() + "all-reduce(".len();
        let close = open + rhs[open..].find(')').unwrap();
        let first = format!("  %{name}.0 = {rhs}");
        let second = format!("{lhs} = {}%{name}.0{}", &rhs[..open], &rhs[close..]);
        let ce = refuted(c, &c.hlo.replace(line, &format!("{first}\n{second}")));
        assert!(
            ce.element.is_some() && ce.message.contains("more than once"),
            "{ce}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
}

/// A reduce-scatter in place of XLA's all-reduce + slice (XLA 0.10 never emits one for these
/// reshards): certified with (p-1)/p of the buffer received; its members out of order, refuted.
#[test]
fn a_reduce_scatter_is_read_with_its_member_order() {
    let cs = cases();
    let c = cs
        .iter()
        .find(|c| {
            c.hlo.contains("%param.1 = f32[24,24]")
                && c.target.local_shape() == [6, 24]
                && c.source.mesh.size() == 4
        })
        .unwrap();
    let entry = c.hlo.find("ENTRY").unwrap();
    let head = &c.hlo[..entry];
    let rs = |groups: &str| {
        format!(
            "{head}ENTRY %main (param.1: f32[24,24]) -> f32[6,24] {{\n  %param.1 = f32[24,24]{{1,0}} parameter(0)\n  ROOT %rs = f32[6,24]{{1,0}} reduce-scatter(%param.1), channel_id=1, replica_groups={groups}, use_global_device_ids=true, dimensions={{0}}, to_apply=%region_0.1\n}}\n"
        )
    };
    let x = xla::lower_xla(&rs("{{0,1,2,3}}"), &c.source, &c.target).unwrap();
    certify_plan(&c.source, &c.target, &x.plan).unwrap();
    assert_eq!(x.max_recv_elems(), 3 * 144);
    assert!(x.max_recv_elems() < c.recv_elems);
    let ce = refuted(c, &rs("{{1,0,2,3}}"));
    assert!(ce.element.is_some(), "{ce}");
}

#[test]
fn malformed_or_unsupported_hlo_is_an_error_naming_the_instruction() {
    let cs = cases();
    let c = &cs[0];
    let gather = case_with(&cs, " all-gather(");
    let ag = gather
        .hlo
        .lines()
        .find(|l| l.contains(" all-gather("))
        .unwrap();
    for (text, want) in [
        (String::new(), "no ENTRY"),
        (c.hlo.replace("ENTRY", "ENTRYX"), "no ENTRY"),
        (
            gather
                .hlo
                .replace(ag, &ag.replace("all-gather(", "all-gatherx(")),
            "not in the subset",
        ),
        (
            gather
                .hlo
                .replace(ag, &ag.replace("dimensions={", "dimensions={7")),
            "dimension",
        ),
        (
            c.hlo.replace("num_partitions=", "num_partitions=1"),
            "partitions",
        ),
        (c.hlo[..c.hlo.len() / 2].to_string(), "HLO line"),
    ] {
        let case = if text.contains("all-gather") {
            gather
        } else {
            c
        };
        match xla::lower_xla(&text, &case.source, &case.target) {
            Err(e) => assert!(e.to_string().contains(want), "{e} (want {want})"),
            Ok(_) => panic!("accepted: {want}"),
        }
    }
    // Hostile bodies on a real case's parameter: errors, never a panic or a hang.
    let n = c.source.mesh.size();
    let dims = c.source.local_shape();
    let shape = format!(
        "f32[{}]",
        dims.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let module = |body: &str| {
        format!("HloModule m, num_partitions={n}\n\n%f (x: {shape}) -> {shape} {{\n  %x = {shape} parameter(0)\n  ROOT %y = {shape} fusion(%x), kind=kLoop, calls=%f\n}}\n\nENTRY %e (p: {shape}) -> {shape} {{\n  %p = {shape} parameter(0)\n{body}\n}}\n")
    };
    let rank = dims.len();
    let twice = vec!["0"; rank].join(",");
    for (body, want) in [
        (format!("  ROOT %r = {shape} fusion(%p), kind=kLoop, calls=%f"), "more than 64"),
        (format!("  ROOT %t = {shape} transpose(%p), dimensions={{{twice}}}"), "outside its operand"),
        ("  ROOT %h = f32[99999999999,99999999] copy(%p)".to_string(), "2^40"),
        (format!("  %i = s32[] partition-id()\n  ROOT %d = f32[{}] dynamic-slice(%p{}), dynamic_slice_sizes={{{}}}", dims.iter().map(|d| (d + 1).to_string()).collect::<Vec<_>>().join(","), ", %i".repeat(rank), dims.iter().map(|d| (d + 1).to_string()).collect::<Vec<_>>().join(",")), "outside its operand"),
        (format!("  ROOT %m = {shape} multiply(%p, %p)"), "tensor data"),
        // Found by mutating the oracle programs (each was a panic or an abort):
        // a collective's result past the tracked bound is refused before it is allocated,
        (
            format!("  ROOT %c = f32[{n},99999999999] collective-permute(%p), channel_id=1, source_target_pairs={{{{0,0}}}}"),
            "tracked elements",
        ),
        // operands that do not match the result off the concatenated dim,
        (
            format!("  ROOT %k = f32[{},{}] concatenate(%p, %p), dimensions={{0}}", 2 * dims[0], dims[1] + 1),
            "do not concatenate",
        ),
        // and a dynamic-slice whose rank is not its operand's.
        (
            format!("  %i = s32[] partition-id()\n  ROOT %d = f32[1] dynamic-slice(%p{}), dynamic_slice_sizes={{1}}", ", %i".repeat(rank)),
            "do not fit the operand",
        ),
    ] {
        match xla::lower_xla(&module(&body), &c.source, &c.target) {
            Err(e) => assert!(e.to_string().contains(want), "{e} (want {want})"),
            Ok(_) => panic!("accepted: {body}"),
        }
    }
    // Arbitrary cuts and byte flips of real programs: an error or a plan, never a panic.
    for c in cs.iter().take(12) {
        for k in (0..c.hlo.len()).step_by(97) {
            let mut b = c.hlo.clone().into_bytes();
            b[k] = b"{}(),=%[]x0"[k % 11];
            let t = String::from_utf8_lossy(&b).to_string();
            if let Ok(x) = xla::lower_xla(&t, &c.source, &c.target) {
                let _ = certify_plan(&c.source, &c.target, &x.plan);
            }
            let _ = xla::lower_xla(&c.hlo[..k], &c.source, &c.target);
        }
    }
}

/// XLA's program for `P('dp', None) -> P(None, 'tp')` on `dp=2, tp=4`, 8 x 8 (as
/// `jax.jit(..).lower(..).compile().as_text()` printed it), with `ARITH` standing for the
/// fused dynamic-slice's offset computation: `%w`, the column pair of the partition, from
/// `%ds`, the partition's entry of the constant table (its tp index).
const DP_TO_TP: &str = r#"HloModule jit__lambda, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0})->f32[8,2]{1,0}}, num_partitions=8

%fused_computation (param_0: f32[8,8], param_1.1: u32[8], param_2.6: u32[]) -> f32[8,2] {
  %param_0 = f32[8,8]{1,0} parameter(0)
  %constant.12 = s32[] constant(0)
  %constant.11 = u32[1]{0} constant({0})
  %param_1.1 = u32[8]{0} parameter(1)
  %param_2.6 = u32[] parameter(2)
  %ds = u32[1]{0} dynamic-slice(%param_1.1, %param_2.6), dynamic_slice_sizes={1}
  %constant.10 = u32[1]{0} constant({3})
ARITH
  %clamp.2 = u32[1]{0} clamp(%constant.11, %w, %constant.10)
  %convert.2 = s32[1]{0} convert(%clamp.2)
  %constant.9 = s32[1]{0} constant({2})
  %multiply.3 = s32[1]{0} multiply(%convert.2, %constant.9)
  %bitcast.1 = s32[] bitcast(%multiply.3)
  ROOT %dynamic-slice.3 = f32[8,2]{1,0} dynamic-slice(%param_0, %constant.12, %bitcast.1), dynamic_slice_sizes={8,2}
}

ENTRY %main.0_spmd (param: f32[4,8]) -> f32[8,2] {
  %partition-id = u32[] partition-id()
  %param = f32[4,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, metadata={op_name="a"}
  %constant = u32[8]{0} constant({0, 1, 2, 3, 0, 1, 2, 3})
  %all-gather = f32[8,8]{1,0} all-gather(%param), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}, dimensions={0}, use_global_device_ids=true
  ROOT %bitcast_dynamic-slice_fusion = f32[8,2]{1,0} fusion(%all-gather, %constant, %partition-id), kind=kLoop, calls=%fused_computation
}
"#;

fn dp_to_tp(arith: &str) -> Result<Result<(), DistError>, xla::XlaError> {
    let mesh = Mesh::parse("dp=2,tp=4").unwrap();
    let at = |s: &str| hlo::to_layout(&mesh, &[8, 8], &hlo::parse(s).unwrap()).unwrap();
    let (source, target) = (
        at("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
        at("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
    );
    let x = xla::lower_xla(&DP_TO_TP.replace("ARITH", arith), &source, &target)?;
    Ok(certify_plan(&source, &target, &x.plan).map(|_| ()))
}

/// Index arithmetic is XLA's: in the declared integer type, wrapping (audit 32: a u32
/// subtraction below zero was read as a negative i64, certifying a program that puts the wrong
/// columns on 6 of 8 devices; XLA on the CPU confirmed the columns).
#[test]
fn index_arithmetic_wraps_in_its_declared_type() {
    // XLA's own program: the offset is the table entry.
    let plain = "  %w = u32[1]{0} copy(%ds)";
    assert!(matches!(dp_to_tp(plain), Ok(Ok(()))));
    // ds - 4 wraps in u32 to 2^32 - 4 + ds >= 2^31, so z = 1 and the offset is one pair too far
    // for tp 0, 1, 2 (in unbounded integers z would be 0 and the program right).
    let wraps = "  %c4 = u32[1]{0} constant({4})\n  %y = u32[1]{0} subtract(%ds, %c4)\n  \
                 %big = u32[1]{0} constant({2147483648})\n  %z = u32[1]{0} divide(%y, %big)\n  \
                 %w = u32[1]{0} add(%ds, %z)";
    match dp_to_tp(wraps) {
        Ok(Err(DistError::Refuted(ce))) => {
            let t = format!("{ce:?}");
            assert!(t.contains("[0, 2]"), "{t}");
        }
        other => panic!("not refuted: {other:?}"),
    }
    // Right only because it wraps: ds + (2^32 - 1) + 1 is ds in u32 (2^32 + ds, clamped to 3,
    // in unbounded integers).
    let back = "  %m1 = u32[1]{0} constant({4294967295})\n  %one = u32[1]{0} constant({1})\n  \
                %x = u32[1]{0} add(%ds, %m1)\n  %w = u32[1]{0} add(%x, %one)";
    assert!(matches!(dp_to_tp(back), Ok(Ok(()))), "{:?}", dp_to_tp(back));
    // s32 multiply wraps too: (ds * 2^31) * 2 is 0 in s32; + ds keeps the program right.
    let mul = "  %s = s32[1]{0} convert(%ds)\n  %h = s32[1]{0} constant({1073741824})\n  \
               %p = s32[1]{0} multiply(%s, %h)\n  %two = s32[1]{0} constant({4})\n  \
               %q = s32[1]{0} multiply(%p, %two)\n  %r = s32[1]{0} add(%q, %s)\n  \
               %w = u32[1]{0} convert(%r)";
    assert!(matches!(dp_to_tp(mul), Ok(Ok(()))), "{:?}", dp_to_tp(mul));
    // A narrowing convert keeps the low bits: 256 + ds in u8 is ds.
    let narrow = "  %k = u32[1]{0} constant({256})\n  %a = u32[1]{0} add(%ds, %k)\n  \
                  %n8 = u8[1]{0} convert(%a)\n  %w = u32[1]{0} convert(%n8)";
    assert!(
        matches!(dp_to_tp(narrow), Ok(Ok(()))),
        "{:?}",
        dp_to_tp(narrow)
    );
    // What XLA leaves implementation-defined, or laycert does not track, is refused by name.
    for (arith, want) in [
        (
            "  %zero = u32[1]{0} constant({0})\n  %w = u32[1]{0} divide(%ds, %zero)",
            "division by zero",
        ),
        (
            "  %k = u8[1]{0} constant({300})\n  %w = u32[1]{0} convert(%k)",
            "300 does not fit its declared type",
        ),
        (
            "  %f = f32[1]{0} convert(%ds)\n  %w = u32[1]{0} convert(%f)",
            "index values of type f32",
        ),
        (
            "  %b = pred[1]{0} convert(%ds)\n  %w = pred[1]{0} add(%b, %b)",
            "arithmetic on pred",
        ),
        (
            "  %mn = s32[1]{0} constant({-2147483648})\n  %m1 = s32[1]{0} constant({-1})\n  \
             %d = s32[1]{0} divide(%mn, %m1)\n  %w = u32[1]{0} convert(%d)",
            "outside its declared type",
        ),
    ] {
        match dp_to_tp(arith) {
            Err(e) => assert!(e.to_string().contains(want), "{arith}: {e}"),
            other => panic!("{arith}: not refused: {other:?}"),
        }
    }
}
