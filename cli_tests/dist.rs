//! `laycert dist`: first lines, exit codes and bad input.

use std::process::Output;

mod common;
use common::{first_line, laycert, stderr, stdout};

fn plan(mesh: &str, shape: &str, from: &str, to: &str) -> Output {
    laycert(&[
        "dist", "plan", "--mesh", mesh, "--shape", shape, "--from", from, "--to", to,
    ])
}

/// `dist check` of DTensor's transform `steps` on an 8x8 tensor.
fn check_steps(mesh: &str, from: &str, to: &str, steps: &str) -> Output {
    check_steps_on(mesh, "8,8", from, to, steps)
}

/// [`check_steps`] on a tensor of `shape`.
fn check_steps_on(mesh: &str, shape: &str, from: &str, to: &str, steps: &str) -> Output {
    laycert(&[
        "dist",
        "check",
        "--mesh",
        mesh,
        "--shape",
        shape,
        "--from",
        from,
        "--to",
        to,
        "--dtensor-steps",
        steps,
    ])
}

#[test]
fn dist_plan_prints_steps_bytes_time_and_certificate() {
    let o = plan(
        "dp=2,tp=4",
        "4096,8192",
        "[Shard(0), Replicate()]",
        "[Replicate(), Shard(1)]",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let l = first_line(&o);
    assert!(
        l.starts_with("plan: 2 steps, 8388608 bytes received per rank (max)")
            && l.ends_with("certified"),
        "{l}"
    );
    let text = stdout(&o);
    assert!(text.contains("alpha-beta model: 8 ranks/node"));
    // The same claim in JAX and HLO notation.
    let o = plan(
        "dp=2,tp=4",
        "4096,8192",
        "P('dp', None)",
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        first_line(&o).starts_with("plan: 2 steps, 8388608 bytes"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn dist_plan_writes_an_svg_of_the_mesh() {
    let tmp = common::scratch();
    let path = tmp.path().join("dist.svg");
    let p = path.to_str().unwrap();
    let o = laycert(&[
        "dist",
        "plan",
        "--mesh",
        "4",
        "--shape",
        "8,8",
        "--from",
        "[Shard(0)]",
        "--to",
        "[Shard(1)]",
        "--svg",
        p,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("before") && svg.contains("after"));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn dist_check_refutes_a_wrong_dtensor_sequence_and_certifies_the_right_one() {
    let args = |steps: &str| {
        check_steps(
            "dp=2,tp=4",
            "[Shard(0), Shard(1)]",
            "[Shard(1), Shard(0)]",
            steps,
        )
    };
    let o =
        args("[(1, Shard(1), Replicate()), (0, Shard(0), Shard(1)), (1, Replicate(), Shard(0))]");
    assert_eq!(o.status.code(), Some(0), "{}", first_line(&o));
    assert!(first_line(&o).starts_with("certified: "));
    // Dropping the last step leaves every device with the wrong buffer: refuted, exit 1,
    // naming a device and an element.
    let o = args("[(1, Shard(1), Replicate()), (0, Shard(0), Shard(1))]");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        first_line(&o).starts_with("refuted: device 0 [0, 0], element [0, 0]"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn dist_sim_lists_each_device() {
    let o = laycert(&[
        "dist",
        "sim",
        "--mesh",
        "4",
        "--shape",
        "5,3",
        "--from",
        "[Shard(0)]",
        "--to",
        "[Replicate()]",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        first_line(&o).starts_with("simulated: 4 ranks"),
        "{}",
        first_line(&o)
    );
    assert!(stdout(&o).contains("device 3 [3]: holds [(5, 5), (0, 3)] -> [(0, 5), (0, 3)]"));
}

#[test]
fn dist_bad_input_exits_2_naming_what() {
    for (mesh, shape, from, to, what) in [
        (
            "dp=0,tp=4",
            "8,8",
            "[Shard(0), Replicate()]",
            "[Replicate(), Shard(1)]",
            "0 devices",
        ),
        (
            "dp=2,dp=4",
            "8,8",
            "[Shard(0), Replicate()]",
            "[Replicate(), Shard(1)]",
            "repeated axis name",
        ),
        (
            "dp=2,tp=4",
            "8,8",
            "[Shard(2), Replicate()]",
            "[Replicate(), Shard(1)]",
            "tensor dim 2",
        ),
        (
            "dp=2,tp=4",
            "8,8",
            "P('dp', 'dp')",
            "[Replicate(), Shard(1)]",
            "used twice",
        ),
        (
            "dp=2,tp=4",
            "8,8",
            "[Shard(0)]",
            "[Replicate(), Shard(1)]",
            "1 placements",
        ),
        (
            "dp=2,tp=2 devices=[0,1,1,3]",
            "8,8",
            "[Shard(0), Replicate()]",
            "[Replicate(), Shard(1)]",
            "--mesh \"dp=2,tp=2 devices=[0,1,1,3]\": mesh devices: rank 1 at positions 1 and 2",
        ),
        (
            "a=2,b=2",
            "8,8",
            "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}",
            "[Replicate(), Shard(1)]",
            "`last_tile_dims={manual}`: a manual (shard_map) sharding is not modelled",
        ),
        (
            "a=2,b=2",
            "8,8",
            "[Replicate(), Shard(1)]",
            "{devices=[1,2,2]<=[4] last_tile_dims={partial}}",
            "--to \"{devices=[1,2,2]<=[4] last_tile_dims={partial}}\": HLO sharding: last_tile_dims type `partial`",
        ),
        (
            "dp=2,tp=4",
            "8,8",
            "[Shard(-3), Replicate()]",
            "[Replicate(), Shard(1)]",
            "--from \"[Shard(-3), Replicate()]\": placement 0 `Shard(-3)` names tensor dim -3 of a 2-D tensor (dims -2..1)",
        ),
    ] {
        let o = plan(mesh, shape, from, to);
        assert_eq!(o.status.code(), Some(2), "{mesh} {from}");
        let err = stderr(&o);
        assert!(err.contains(what), "{err}");
    }
    let o = laycert(&[
        "dist",
        "plan",
        "--mesh",
        "dp=2,tp=4",
        "--to-mesh",
        "x=4",
        "--shape",
        "8,8",
        "--from",
        "[Shard(0), Replicate()]",
        "--to",
        "[Shard(0)]",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("different device counts"));
}

#[test]
fn dist_gen_emits_a_validated_nccl_program() {
    let tmp = common::scratch();
    let path = tmp.path().join("dist.cu");
    let p = path.to_str().unwrap();
    let o = laycert(&[
        "dist",
        "gen",
        "--mesh",
        "dp=2,tp=2",
        "--shape",
        "5,7",
        "--from",
        "[Shard(0), Shard(1)]",
        "--to",
        "[Shard(1), Replicate()]",
        "-o",
        p,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        first_line(&o).starts_with("generated: "),
        "{}",
        first_line(&o)
    );
    let src = std::fs::read_to_string(&path).unwrap();
    assert!(src.contains("NCCL_NVLS_ENABLE") && !src.contains("multimem"));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn dist_hostile_sizes_are_refused_quickly() {
    for (mesh, shape, from, to) in [
        (
            "a=1024,b=1024",
            "4,4",
            "[Shard(0), Replicate()]",
            "[Replicate(), Shard(1)]",
        ),
        (
            "a=4",
            "1099511627776,1099511627776",
            "[Shard(0)]",
            "[Shard(1)]",
        ),
        ("a=4", "1099511627776", "[Shard(0)]", "[Replicate()]"),
        (
            "a=2,b=2",
            "8,8",
            "[_StridedShard(0, split_factor=9223372036854775807), Shard(0)]",
            "[Shard(1), Replicate()]",
        ),
        (
            "a=2",
            "8",
            "{devices=[1048576,1048576]<=[2]}",
            "[Replicate()]",
        ),
    ] {
        let o = plan(mesh, shape, from, to);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{mesh} {shape} {from}: {}",
            stderr(&o)
        );
    }
}

/// A 1-D mesh of many ranks: point to point, the move is one message per pair of ranks (16M at
/// 4096; the plan ran for minutes and gigabytes). Such a send-recv is no candidate: the one
/// all-to-all over the axis moves the tensor, certified symbolically.
#[test]
fn dist_plan_on_a_large_one_axis_mesh_is_one_all_to_all() {
    let o = plan("4096", "4096,4096", "[Shard(0)]", "[Shard(1)]");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        first_line(&o).starts_with("plan: 1 steps") && first_line(&o).ends_with(", certified"),
        "{text}"
    );
    assert!(
        text.contains("1. all-to-all over gpuid (dim 0 -> dim 1)"),
        "{text}"
    );
    // Where only a send-recv moves the tensor (another mesh), past the limit: unknown (exit
    // 3) naming it.
    let o = laycert(&[
        "dist",
        "plan",
        "--mesh",
        "1024",
        "--to-mesh",
        "a=32,b=32",
        "--shape",
        "1024,1024",
        "--from",
        "[Shard(0)]",
        "--to",
        "[Shard(1), Replicate()]",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        first_line(&o).contains(
            "a send-recv straight to it would take 1048576 messages, above the limit of 262144"
        ),
        "{}",
        stdout(&o)
    );
}

/// `run --host` holds at most the plan simulator's cells (it aborted allocating 2^32 cells).
#[test]
fn dist_run_on_the_host_refuses_past_the_simulator_cell_limit() {
    let o = laycert(&[
        "dist",
        "run",
        "--host",
        "--mesh",
        "64",
        "--shape",
        "65536,65536",
        "--from",
        "[Shard(0)]",
        "--to",
        "[Shard(1)]",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("would hold 4294967296 cells at the start")
            && stderr(&o).contains("holds at most 16777216"),
        "{}",
        stderr(&o)
    );
}

/// `--dtensor-steps` text that is not `[(mesh_dim, src, dst), ...]` is bad input naming the
/// column (it was read as no steps, and the claim refuted).
#[test]
fn dist_check_refuses_unparsable_dtensor_steps_naming_the_column() {
    for (steps, why) in [
        ("hello", "`[` at column 1, found \"hello\""),
        ("", "`[` at column 1, found the end"),
        ("[(((((", "a step closed by `)` at column 2"),
        (
            "[(0, Shard(0), Replicate()),,,]",
            "a step `(mesh_dim, src, dst)` at column 29",
        ),
        (
            "[(0, Shard(0), Replicate())] x",
            "the end after `]` at column 30",
        ),
        ("[(0, Shard(0))]", "a step of three fields"),
        (
            "[(x, Shard(0), Replicate())]",
            "a mesh dim (0, 1, ...) at column 3",
        ),
    ] {
        let o = check_steps(
            "dp=2,tp=4",
            "[Shard(0), Shard(1)]",
            "[Shard(1), Shard(0)]",
            steps,
        );
        assert_eq!(o.status.code(), Some(2), "{steps:?}: {}", first_line(&o));
        assert!(
            stderr(&o).contains(&format!(
                "--dtensor-steps: expected [(mesh_dim, src, dst), ...]: {why}"
            )),
            "{steps:?}: {}",
            stderr(&o)
        );
    }
    // A mesh dim the mesh does not have is bad input too (it was `unknown`, exit 3).
    let o = check_steps(
        "dp=2,tp=4",
        "[Shard(0), Replicate()]",
        "[Replicate(), Shard(1)]",
        "[(9, Shard(0), Replicate())]",
    );
    assert_eq!(o.status.code(), Some(2), "{}", first_line(&o));
    assert!(
        stderr(&o).contains("--dtensor-steps: step 0: mesh dim 9 does not exist (the mesh has 2)"),
        "{}",
        stderr(&o)
    );
    // The empty list is no steps: read, and refuted.
    let o = check_steps(
        "dp=2,tp=4",
        "[Shard(0), Shard(1)]",
        "[Shard(1), Shard(0)]",
        " [ ] ",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn dist_uneven_plan_on_1024_devices_is_certified_and_a_wrong_message_refuted() {
    let tmp = common::scratch();
    let (cert, bad) = (
        tmp.path().join("1024.json"),
        tmp.path().join("1024-bad.json"),
    );
    let spec = [
        "--mesh",
        "a=8,b=8,c=16",
        "--shape",
        "1023,1021",
        "--from",
        "[Shard(0), Shard(1), Replicate()]",
        "--to",
        "[Replicate(), Shard(0), Shard(1)]",
    ];
    let mut args = vec!["dist", "plan"];
    args.extend(spec);
    args.extend(["--cert", cert.to_str().unwrap()]);
    let o = laycert(&args);
    assert_eq!(o.status.code(), Some(0), "{}", first_line(&o));
    assert!(
        first_line(&o).ends_with(", certified"),
        "{}",
        first_line(&o)
    );
    let text = stdout(&o);
    assert!(
        text.contains(
            "certificate: 1024 ranks, 8355864 target places checked, decided on symbolic, \
             re-checked on boxes"
        ),
        "{text}"
    );
    // Rank 2 (a 0, b 0, c 2) needs rows 0..128, columns 128..192, which rank 16 (b 1) holds;
    // take them from rank 32 (b 2, columns 256..384) instead.
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    let msgs = c["plan"]["steps"][0]["SendRecv"]["messages"]
        .as_array_mut()
        .unwrap();
    let m = msgs.iter_mut().find(|m| m["dst"] == 2).unwrap();
    assert_eq!(m["src"], 16);
    m["src"] = 32.into();
    std::fs::write(&bad, c["plan"].to_string()).unwrap();
    for (plan, code, line) in [
        (
            &cert,
            0,
            "certified: 1 steps, 1024 ranks, 8355864 places checked",
        ),
        (
            &bad,
            1,
            "refuted: device 2 [0, 0, 2], element [0, 128]: local [0, 0] holds element [0, 256]",
        ),
    ] {
        let mut args = vec!["dist", "check"];
        args.extend(spec);
        args.extend(["--plan", plan.to_str().unwrap()]);
        let o = laycert(&args);
        assert_eq!(o.status.code(), Some(code), "{}", first_line(&o));
        assert_eq!(first_line(&o), line);
    }
    let _ = std::fs::remove_file(&cert);
    let _ = std::fs::remove_file(&bad);
}

#[test]
fn dist_negative_shard_dims_count_from_the_last_dim() {
    // PyTorch normalizes Shard(-1) of a 2-D tensor to Shard(1): the same plan and the same
    // target shards.
    let lines = |from: &str, to: &str| {
        let o = plan("dp=2,tp=4", "8,6", from, to);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .filter(|l| !l.starts_with("from "))
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lines("[Shard(-2), Replicate()]", "[Replicate(), Shard(-1)]"),
        lines("[Shard(0), Replicate()]", "[Replicate(), Shard(1)]")
    );
    let o = check_steps(
        "dp=2,tp=4",
        "[Shard(0), Shard(-1)]",
        "[Shard(1), Shard(0)]",
        "[(1, Shard(-1), Replicate()), (0, Shard(-2), Shard(-1)), (1, Replicate(), Shard(-2))]",
    );
    assert_eq!(o.status.code(), Some(0), "{}", first_line(&o));
    assert!(
        first_line(&o).starts_with("certified: "),
        "{}",
        first_line(&o)
    );
}

#[test]
fn dist_permuted_meshes_and_unreduced_hlo_are_planned_and_checked() {
    // DeviceMesh("cuda", [[0, 2, 4, 6], [1, 3, 5, 7]], ("dp", "tp")): rank 2 sits at (dp 0, tp 1).
    let mesh = "dp=2,tp=4 devices=[[0,2,4,6],[1,3,5,7]]";
    let o = laycert(&[
        "dist",
        "sim",
        "--mesh",
        mesh,
        "--shape",
        "8,8",
        "--from",
        "[Shard(0), Replicate()]",
        "--to",
        "[Replicate(), Shard(-1)]",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("device 2 [0, 1]: holds [(0, 4), (0, 8)] -> [(0, 8), (2, 4)]"),
        "{text}"
    );
    // DTensor's steps on that mesh, and the same with the last step dropped.
    let check =
        |steps: &str| check_steps(mesh, "[Shard(0), Shard(1)]", "[Shard(1), Shard(0)]", steps);
    let o =
        check("[(1, Shard(1), Replicate()), (0, Shard(0), Shard(1)), (1, Replicate(), Shard(0))]");
    assert_eq!(o.status.code(), Some(0), "{}", first_line(&o));
    let o = check("[(1, Shard(1), Replicate()), (0, Shard(0), Shard(1))]");
    assert_eq!(o.status.code(), Some(1), "{}", first_line(&o));
    assert!(
        first_line(&o).starts_with("refuted: device 0 [0, 0], element [0, 0]"),
        "{}",
        first_line(&o)
    );
    // XLA's text for JAX's P('b', None, unreduced={'a'}) on a=2,b=4: a partial sum over `a`.
    let o = plan(
        "a=2,b=4",
        "8,8",
        "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dims={unreduced}}",
        "[Replicate(), Replicate()]",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        first_line(&o).ends_with(", certified"),
        "{}",
        first_line(&o)
    );
    assert!(
        stdout(&o).contains("from [Partial(sum), Shard(0)] to [Replicate(), Replicate()]"),
        "{}",
        stdout(&o)
    );
}

/// XLA 0.10's compiled program for `P('dp', None) -> P(None, 'tp')` on `dp=2,tp=4`, 8x8 f32
/// (spec/distributed.md section 6: it gathers the whole tensor, then slices by a table).
const XLA_GATHER_SLICE: &str = r#"
HloModule jit__lambda, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0})->f32[8,2]{1,0}}, num_partitions=8

%fused_computation (param_0: f32[8,8], param_1.1: u32[8], param_2.6: u32[]) -> f32[8,2] {
  %param_0 = f32[8,8]{1,0} parameter(0)
  %constant.12 = s32[] constant(0)
  %constant.11 = u32[1]{0} constant({0})
  %param_1.1 = u32[8]{0} parameter(1)
  %param_2.6 = u32[] parameter(2)
  %dynamic-slice.4 = u32[1]{0} dynamic-slice(%param_1.1, %param_2.6), dynamic_slice_sizes={1}
  %constant.10 = u32[1]{0} constant({3})
  %clamp.2 = u32[1]{0} clamp(%constant.11, %dynamic-slice.4, %constant.10)
  %convert.2 = s32[1]{0} convert(%clamp.2)
  %constant.9 = s32[1]{0} constant({2})
  %multiply.3 = s32[1]{0} multiply(%convert.2, %constant.9)
  %bitcast.1 = s32[] bitcast(%multiply.3)
  ROOT %dynamic-slice.3 = f32[8,2]{1,0} dynamic-slice(%param_0, %constant.12, %bitcast.1), dynamic_slice_sizes={8,2}
}

ENTRY %main.0_spmd (param: f32[4,8]) -> f32[8,2] {
  %partition-id = u32[] partition-id()
  %param = f32[4,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %constant = u32[8]{0} constant({0, 1, 2, 3, 0, 1, 2, 3})
  %all-gather = f32[8,8]{1,0} all-gather(%param), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}, dimensions={0}, use_global_device_ids=true
  ROOT %bitcast_dynamic-slice_fusion = f32[8,2]{1,0} fusion(%all-gather, %constant, %partition-id), kind=kLoop, calls=%fused_computation
}


"#;

/// `dist check --xla-hlo` on `text` for the spec's `P('dp', None) -> P(None, 'tp')` vector.
fn check_xla(text: &str, tag: &str) -> Output {
    check_xla_with(text, tag, &[])
}

/// [`check_xla`] with global flags (`--json`) first.
fn check_xla_with(text: &str, tag: &str, flags: &[&str]) -> Output {
    let tmp = common::scratch();
    let path = tmp.path().join(format!("xla-{tag}.hlo"));
    std::fs::write(&path, text).unwrap();
    let mut args = flags.to_vec();
    args.extend([
        "dist",
        "check",
        "--mesh",
        "dp=2,tp=4",
        "--shape",
        "8,8",
        "--dtype",
        "f32",
        "--from",
        "P('dp', None)",
        "--to",
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
        "--xla-hlo",
        path.to_str().unwrap(),
    ]);
    let o = laycert(&args);
    let _ = std::fs::remove_file(&path);
    o
}

#[test]
fn dist_check_reads_xla_hlo_certifies_it_and_refutes_a_wrong_offset_table() {
    let o = check_xla(XLA_GATHER_SLICE, "ok");
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(first_line(&o).starts_with("certified: "), "{}", stdout(&o));
    // 32 of the 64 elements received by each device (4 bytes each), as the spec says.
    assert!(
        stdout(&o).contains("xla: 1 collective(s), 128 bytes received per rank (max)"),
        "{}",
        stdout(&o)
    );
    // The offset table sends partition 1 to column block 0: partition 1 is rank 1, whose
    // target block is columns 2..3.
    let v = json(&check_xla_with(XLA_GATHER_SLICE, "ok-json", &["--json"]));
    assert_eq!(v["verdict"], "certified");
    assert_eq!(v["xla"]["recv_bytes_per_rank"], 128);
    assert_eq!(v["xla"]["collectives"].as_array().map(Vec::len), Some(1));
    let wrong = XLA_GATHER_SLICE.replace("constant({0, 1, 2, 3, 0", "constant({0, 0, 2, 3, 0");
    let o = check_xla(&wrong, "wrong");
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        first_line(&o).starts_with("refuted: device 1 [0, 1], element [0, 2]"),
        "{}",
        first_line(&o)
    );
    let o = check_xla_with(&wrong, "wrong-json", &["--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(
        (&v["verdict"], &v["counterexample"]["rank"]),
        (&serde_json::json!("refuted"), &serde_json::json!(1))
    );
    assert_eq!(v["xla"]["recv_bytes_per_rank"], 128);
    // Outside the subset: exit 2 naming the instruction and its line.
    let o = check_xla(
        &XLA_GATHER_SLICE.replace(" all-gather(", " all-gatherz("),
        "bad",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("%all-gather (all-gatherz)"),
        "{}",
        stderr(&o)
    );
    let o = check_xla(
        "HloModule m\nENTRY %e {\n  %p = f32[4,8 parameter(0)\n}\n",
        "junk",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("HLO line 3"), "{}", stderr(&o));
}

#[test]
fn dist_run_executes_the_certified_plan_and_checks_every_target_place() {
    let spec = [
        "--mesh",
        "a=2,b=3",
        "--shape",
        "13,7",
        "--dtype",
        "f32",
        "--from",
        "[Partial(sum),Shard(0)]",
        "--to",
        "[Shard(0),Replicate()]",
    ];
    let mut host = vec!["dist", "run", "--host"];
    host.extend(spec);
    let o = laycert(&host);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        first_line(&o).starts_with("ran: ")
            && first_line(&o).ends_with("on host, 273 places checked, 0 wrong"),
        "{}",
        first_line(&o)
    );
    let mut gpu = vec!["dist", "run"];
    gpu.extend(spec);
    let o = laycert(&gpu);
    if first_line(&o).starts_with("SKIP (no CUDA device)") {
        assert_eq!(o.status.code(), Some(3));
        println!("SKIP (no CUDA device): dist run on the GPU");
    } else {
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert!(
            first_line(&o).contains("273 places checked, 0 wrong"),
            "{}",
            stdout(&o)
        );
        assert!(stdout(&o).contains("nccl: "), "{}", stdout(&o));
    }
}

#[test]
fn dist_interleaved_strided_shard_is_planned_simulated_and_peer_steps_not_lowered() {
    // 25 rows on a=4,b=2 under FSDP-over-TP's placement: rank 6 holds rows 12 and 22.
    let from = "[_StridedShard(0, split_factor=2), Shard(0)]";
    let o = plan("a=4,b=2", "25,3", from, "[Shard(1), Shard(0)]");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).ends_with("certified"), "{}", first_line(&o));
    let o = laycert(&[
        "dist",
        "sim",
        "--mesh",
        "a=4,b=2",
        "--shape",
        "25,3",
        "--from",
        from,
        "--to",
        "[Replicate(), Replicate()]",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("device 6 [3, 0]: holds [[(12, 13), (0, 3)], [(22, 23), (0, 3)]]"),
        "{}",
        stdout(&o)
    );
    // DTensor's own steps on such a layout are reported, not judged.
    let o = laycert(&[
        "dist",
        "check",
        "--mesh",
        "a=4,b=2",
        "--shape",
        "9,2",
        "--from",
        from,
        "--to",
        "[Replicate(), Replicate()]",
        "--dtensor-steps",
        "[(1, Shard(0), Replicate()), (0, Shard(0), Replicate())]",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("interleaved _StridedShard"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn dist_certificates_are_checked_as_certificates() {
    // `check CERT` re-checks a dist certificate's evidence; `dist check --plan CERT` also requires
    // it to be the certificate of the layouts given. An edited digest, place count or source (all
    // re-sealable: the fields carry no secret) used to print `certified` (session 21's audit).
    let tmp = common::scratch();
    let dir = tmp.path();
    let cert = dir.join("cert.json");
    let spec = [
        "--mesh",
        "dp=2,tp=4",
        "--shape",
        "64,32",
        "--from",
        "[Shard(0), Replicate()]",
        "--to",
        "[Replicate(), Shard(1)]",
    ];
    let mut args = vec!["dist", "plan"];
    args.extend(spec);
    args.extend(["--cert", cert.to_str().unwrap()]);
    assert_eq!(laycert(&args).status.code(), Some(0));
    let check = |path: &std::path::Path| laycert(&["check", path.to_str().unwrap()]);
    let dist_check = |path: &std::path::Path, from: &str| {
        let mut a = vec!["dist", "check"];
        a.extend(spec);
        a[7] = from;
        a.extend(["--plan", path.to_str().unwrap()]);
        laycert(&a)
    };
    let o = check(&cert);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(first_line(&o), "valid");
    assert!(stdout(&o).contains("places re-checked"), "{}", stdout(&o));
    let o = dist_check(&cert, spec[5]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(first_line(&o).starts_with("certified: "));
    // Another --from than the certificate's: bad input, naming the flag.
    let o = dist_check(&cert, "[Shard(1), Replicate()]");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not the --from given"),
        "{}",
        stderr(&o)
    );
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 3] = [
        ("digest", |c| c["digest"] = "0".repeat(64).into()),
        ("places", |c| {
            c["places_checked"] = (c["places_checked"].as_i64().unwrap() + 1).into()
        }),
        ("decider", |c| c["decided_on"] = "cells".into()),
    ];
    for (what, edit) in edits {
        let mut c = original.clone();
        edit(&mut c);
        let bad = dir.join(format!("{what}.json"));
        std::fs::write(&bad, c.to_string()).unwrap();
        let o = check(&bad);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stdout(&o));
        assert!(first_line(&o).starts_with("invalid: "), "{what}");
        let o = dist_check(&bad, spec[5]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stdout(&o));
        assert!(
            first_line(&o).starts_with("invalid: the certificate does not re-check"),
            "{what}: {}",
            first_line(&o)
        );
    }
    // A field the format does not have, anywhere: invalid (they were ignored).
    let extras: [(&str, Edit); 3] = [
        ("top", |c| c["note"] = "reviewed".into()),
        ("plan", |c| c["plan"]["comment"] = 1.into()),
        ("layout", |c| c["target"]["owner"] = "me".into()),
    ];
    for (what, edit) in extras {
        let mut c = original.clone();
        edit(&mut c);
        let bad = dir.join(format!("extra-{what}.json"));
        std::fs::write(&bad, c.to_string()).unwrap();
        let o = check(&bad);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stdout(&o));
        assert!(
            first_line(&o).starts_with("invalid: ") && first_line(&o).contains("unknown field"),
            "{what}: {}",
            first_line(&o)
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// `--json` output: exactly one JSON object on one line.
fn json(o: &Output) -> serde_json::Value {
    let text = stdout(o);
    assert_eq!(text.lines().count(), 1, "--json prints one line: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).expect("--json prints valid JSON");
    assert!(v.is_object(), "{text}");
    v
}

/// `dist sim|check|gen|run --json` print one JSON object each, with the text form's exit code;
/// without `--json` their first lines are as before.
#[test]
fn dist_json_prints_one_object_and_text_is_unchanged() {
    let spec = [
        "--mesh",
        "dp=2,tp=4",
        "--shape",
        "64,64",
        "--from",
        "[Shard(0), Replicate()]",
        "--to",
        "[Replicate(), Shard(1)]",
    ];
    let with = |json: bool, cmd: &[&str], extra: &[&str]| {
        let mut args: Vec<&str> = if json { vec!["--json"] } else { vec![] };
        args.extend(cmd);
        args.extend(spec);
        args.extend(extra);
        laycert(&args)
    };

    let o = with(false, &["dist", "sim"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).starts_with("simulated: 8 ranks, "));
    assert_eq!(stdout(&o).lines().count(), 9, "{}", stdout(&o));
    let o = with(true, &["dist", "sim"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["verdict"].as_str(), v["ranks"].as_i64()),
        (Some("certified"), Some(8))
    );
    assert_eq!(v["devices"].as_array().map(Vec::len), Some(8));
    assert_eq!(v["devices"][1]["coords"], serde_json::json!([0, 1]));
    assert_eq!(
        (
            &v["devices"][1]["holds_before"],
            &v["devices"][1]["holds_after"]
        ),
        (
            &serde_json::json!([[[0, 32], [0, 64]]]),
            &serde_json::json!([[[0, 64], [16, 32]]])
        )
    );
    assert_eq!(v["plan"]["certified"], true);

    let right = "[(0, Shard(0), Replicate()), (1, Replicate(), Shard(1))]";
    let wrong = "[(1, Replicate(), Shard(1))]";
    let o = with(false, &["dist", "check"], &["--dtensor-steps", right]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).starts_with("certified: 3 steps, 8 ranks, "));
    let o = with(true, &["dist", "check"], &["--dtensor-steps", right]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["verdict"].as_str(), v["steps"].as_i64()),
        (Some("certified"), Some(3))
    );
    assert!(v["places_checked"].as_i64().unwrap() > 0 && v["xla"].is_null());
    let o = with(false, &["dist", "check"], &["--dtensor-steps", wrong]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(first_line(&o).starts_with("refuted: device 0 [0, 0]"));
    let o = with(true, &["dist", "check"], &["--dtensor-steps", wrong]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["verdict"], "refuted");
    assert_eq!(v["counterexample"]["rank"], 0);
    assert_eq!(v["counterexample"]["coords"], serde_json::json!([0, 0]));
    assert!(v["counterexample"]["message"].is_string());

    let tmp = common::scratch();
    let path = tmp.path().join("dist.cu");
    let p = path.to_str().unwrap();
    let o = with(false, &["dist", "gen"], &["-o", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        format!("generated: {p} (3 steps, 3 kernels, validated)")
    );
    let o = with(true, &["dist", "gen"], &["-o", p]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["written"].as_str(), v["steps"].as_i64()),
        (Some(p), Some(3))
    );
    assert!(v["kernels"].as_i64().unwrap() > 0 && v["plan"]["certified"] == true);

    let o = with(false, &["dist", "run"], &["--host"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(first_line(&o).starts_with("ran: 3 steps, 8 ranks on host, "));
    let o = with(true, &["dist", "run"], &["--host"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        (v["correct"].as_bool(), v["device"].as_str()),
        (Some(true), Some("host"))
    );
    assert_eq!(
        (v["wrong"].as_i64(), v["ranks"].as_i64()),
        (Some(0), Some(8))
    );
    assert!(v["first_wrong"].is_null() && v["nccl"].is_null());
    let o = with(true, &["dist", "run"], &[]);
    let v = json(&o);
    if o.status.code() == Some(3) {
        assert!(v["skipped"].as_str().unwrap().starts_with("no CUDA device"));
    } else {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(v["correct"], true);
    }
}

#[test]
fn a_partial_source_reaches_a_target_on_another_mesh_by_reducing_first() {
    // Audit 28: a partial source and a target over an HLO tile mesh other than `--mesh` had
    // no plan (only send-recv crosses meshes, and it moves plain data); the partial is now
    // reduced on its own mesh first, then sent. Each plan is certified.
    for (mesh, shape, from, to) in [
        (
            "8",
            "8,8",
            "[Partial()]",
            "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        ),
        (
            "8",
            "8,8",
            "{unreduced}",
            "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        ),
        (
            "8",
            "6,5",
            "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}",
            "{replicated}",
        ),
        (
            "a=2,b=4",
            "8,8",
            "[Partial(), Replicate()]",
            "{devices=[2,2,2]<=[8] last_tile_dim_replicate}",
        ),
    ] {
        let o = plan(mesh, shape, from, to);
        assert_eq!(o.status.code(), Some(0), "{from} -> {to}: {}", stderr(&o));
        let first = first_line(&o);
        assert!(first.ends_with("certified"), "{first}");
        assert!(!first.contains("not certified"), "{first}");
    }
}

#[test]
fn no_plan_found_is_unknown_not_bad_input() {
    // Valid input the planner finds no plan for (across meshes only send-recv moves data, and
    // it moves plain data, not a partial target's addends): `unknown: no plan found`, exit 3;
    // a search that ends is no proof that no plan exists.
    let across = |json: bool| {
        let mut args = vec![
            "dist",
            "plan",
            "--mesh",
            "a=2,b=2",
            "--to-mesh",
            "c=4",
            "--shape",
            "8",
            "--from",
            "[Replicate(), Replicate()]",
            "--to",
            "[Partial(sum)]",
        ];
        if json {
            args.insert(0, "--json");
        }
        laycert(&args)
    };
    let o = across(false);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        first_line(&o).starts_with("unknown: no plan found"),
        "{}",
        stdout(&o)
    );
    let o = across(true);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "unknown");
}

/// JAX's own printed forms (audit 32): `repr(P('x'))` is `P('x',)`, and a
/// `NamedSharding` prints its mesh and spec as keywords; the mesh must be `--mesh`. A DTensor
/// list with a quoted reduce op is read as DTensor, not JAX.
#[test]
fn dist_reads_jax_reprs_and_quoted_dtensor_ops() {
    let named = "NamedSharding(mesh=Mesh('dp': 2, 'tp': 4, axis_types=(Auto, Auto)), \
                 spec=P(None, 'tp'), memory_kind=device)";
    for (mesh, from, shown) in [
        ("x=8", "P('x',)", "from [Shard(0)]"),
        ("x=8", "P(('x',),)", "from [Shard(0)]"),
        ("dp=2,tp=4", named, "from [Replicate(), Shard(1)]"),
        (
            "dp=2,tp=2",
            "[Partial('sum'), Replicate()]",
            "from [Partial(sum), Replicate()]",
        ),
    ] {
        let shape = if mesh == "x=8" { "16" } else { "8,8" };
        let to = if mesh == "x=8" {
            "P()"
        } else {
            "[Replicate(), Replicate()]"
        };
        let o = plan(mesh, shape, from, to);
        assert_eq!(o.status.code(), Some(0), "{from}: {}", stderr(&o));
        assert!(stdout(&o).contains(shown), "{from}: {}", stdout(&o));
    }
    let o = plan("dp=4,tp=2", "8,8", named, "P()");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the NamedSharding's mesh is dp=2,tp=4, not --mesh dp=4,tp=2"),
        "{}",
        stderr(&o)
    );
    let o = plan("x=8", "16", "P(,)", "P()");
    assert_eq!(o.status.code(), Some(2));
}

/// DTensor names a `_StridedShard` target mesh dim `Shard` in its transforms (audit 32:
/// torch 2.15's own plans for the FSDP-over-TP placement, each producing exactly the
/// target, were refuted as not executing).
#[test]
fn dist_check_reads_dtensor_steps_toward_a_strided_target() {
    for (mesh, shape, from, to, steps) in [
        (
            "dp=2,tp=4",
            "8,8",
            "[Replicate(), Replicate()]",
            "[_StridedShard(0, split_factor=4), Shard(0)]",
            "[(1, Replicate(), Shard(0)), (0, Replicate(), Shard(0))]",
        ),
        (
            "dp=4,tp=2",
            "5,6",
            "[Partial(sum), Replicate()]",
            "[_StridedShard(1, split_factor=2), Shard(1)]",
            "[(1, Replicate(), Shard(1)), (0, Partial(sum), Shard(1))]",
        ),
        (
            "a=2,b=2,c=2",
            "3,6",
            "[Replicate(), Replicate(), Replicate()]",
            "[_StridedShard(1, split_factor=2), Shard(1), Shard(1)]",
            "[(1, Replicate(), Shard(1)), (0, Replicate(), Shard(1)), (2, Replicate(), Shard(1))]",
        ),
    ] {
        let o = check_steps_on(mesh, shape, from, to, steps);
        assert_eq!(o.status.code(), Some(0), "{to}: {}", stdout(&o));
        assert!(
            first_line(&o).starts_with("certified"),
            "{to}: {}",
            stdout(&o)
        );
    }
    // The same steps toward the plain nested target put the rows elsewhere: refuted.
    let o = check_steps(
        "dp=2,tp=4",
        "[Replicate(), Replicate()]",
        "[Shard(0), Shard(0)]",
        "[(1, Replicate(), Shard(0)), (0, Replicate(), Shard(0))]",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

/// A replicated axis becomes partial under max, min or avg without moving data (the reduction
/// of equal addends is the value); under sum, all but one copy are zeroed.
#[test]
fn dist_plan_reaches_idempotent_partials_without_moving_data() {
    for op in ["max", "min", "avg", "sum"] {
        let to = format!("[Replicate(), Partial({op})]");
        let o = plan("a=2,b=2", "8", "[Shard(0), Replicate()]", &to);
        assert_eq!(o.status.code(), Some(0), "{op}: {}", stdout(&o));
        assert!(
            first_line(&o).ends_with("certified"),
            "{op}: {}",
            stdout(&o)
        );
        let want = if op == "sum" {
            "local zero off coordinate 0 of b".to_string()
        } else {
            format!("partial({op}) over b: every copy is an addend (no data moves)")
        };
        assert!(stdout(&o).contains(&want), "{op}: {}", stdout(&o));
    }
}

/// A shape whose element count overflows is named as `--shape`, not as the layout read over it
/// (audit 32 L3).
#[test]
fn dist_an_overflowing_shape_is_named_as_the_shape() {
    let o = plan(
        "x=4",
        "4611686018427387904,4",
        "[Shard(0)]",
        "[Replicate()]",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--shape \"4611686018427387904,4\": the element count overflows"),
        "{}",
        stderr(&o)
    );
    // A plan over another number of ranks than the mesh: bad input, not `unknown`.
    let scratch = common::scratch();
    let p8 = scratch.path().join("p8.json");
    std::fs::write(&p8, r#"{"ranks": 8, "steps": []}"#).unwrap();
    let o = laycert(&[
        "dist",
        "check",
        "--mesh",
        "x=4",
        "--shape",
        "8",
        "--from",
        "[Replicate()]",
        "--to",
        "[Replicate()]",
        "--plan",
        p8.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("a plan over 8 ranks, --mesh x=4 has 4 devices"),
        "{}",
        stderr(&o)
    );
}
