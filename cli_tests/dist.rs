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
    laycert(&[
        "dist",
        "check",
        "--mesh",
        mesh,
        "--shape",
        "8,8",
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
        l.starts_with("plan: 1 steps, 8388608 bytes received per rank (max)")
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
        first_line(&o).starts_with("plan: 1 steps, 8388608 bytes"),
        "{}",
        first_line(&o)
    );
}

#[test]
fn dist_plan_writes_an_svg_of_the_mesh() {
    let path = std::env::temp_dir().join(format!("laycert-dist-{}.svg", std::process::id()));
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
    let path = std::env::temp_dir().join(format!("laycert-dist-{}.cu", std::process::id()));
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

#[test]
fn dist_uneven_plan_on_1024_devices_is_certified_and_a_wrong_message_refuted() {
    let dir = std::env::temp_dir();
    let cert = dir.join(format!("laycert-dist-1024-{}.json", std::process::id()));
    let bad = dir.join(format!("laycert-dist-1024-bad-{}.json", std::process::id()));
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
        text.contains("certificate: 1024 ranks, 8355864 target places checked, decided on boxes"),
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
