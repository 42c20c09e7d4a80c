//! Layouts as users paste them into the CLI: a TTGIR file's `#name` aliases (`--mlir FILE`),
//! `LinearLayout::toString()` text (also with a lit test's `//` markers), Gluon constructors,
//! AMD and padded Triton attributes from Triton's lit tests, and misspelled axis names.

mod common;
use common::{first_line, laycert, stderr, stdout};

/// A TTGIR snippet in the style of triton-lang/triton test/Conversion/amd/*.mlir.
const MODULE: &str = "#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ttg.amd_mfma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16], isTransposed = true}>
#mma_new = #ttg.amd_mfma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 16, 16], isTransposed = true}>
#dotop = #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth=4}>

#bad = #ttg.slice<{dim = 0, parent = #nothere}>
module attributes {\"ttg.num-ctas\" = 1 : i32, \"ttg.num-warps\" = 4 : i32} {
  tt.func @f(%a: tensor<32x64xf16, #dotop>, %b: tensor<128x16xf32, #blocked>, %c: tensor<64x64xf32, #mma>) {
    tt.return
  }
}
";

/// The module written to `name` in a fresh directory (removed when the guard drops).
fn module_file(name: &str) -> (tempfile::TempDir, String) {
    let tmp = common::scratch();
    let path = tmp.path().join(name);
    std::fs::write(&path, MODULE).unwrap();
    let f = path.to_str().unwrap().to_string();
    (tmp, f)
}

#[test]
fn mlir_aliases_name_layouts_with_the_files_tensor_shapes() {
    let (_tmp, f) = module_file("show.mlir");
    let o = laycert(&["show", "--mlir", &f, "#dotop"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        first_line(&o).starts_with("#ttg.linear<{register = [[0, 1], [0, 2]"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("[dim0 (size 32), dim1 (size 64)]"),
        "{}",
        stdout(&o)
    );
    // Both spellings of the same mfma attribute; an alias inside a pasted attribute too.
    let o = laycert(&[
        "equiv", "--mlir", &f, "#mma", "#mma_new", "--shape", "64,64",
    ]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    let o = laycert(&[
        "show",
        "--mlir",
        &f,
        "#ttg.slice<{dim = 1, parent = #blocked}>",
        "--shape",
        "128",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A lit test split into modules by `// -----` may define `#blocked` in each: a name defined
/// alike everywhere reads, one defined differently is refused where used, naming both lines.
#[test]
fn split_lit_files_read_with_mlir() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = dir.join("split.mlir");
    let b1 = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>";
    let b2 = "#ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>";
    let text = format!("#blocked = {b1}\n#same = {b1}\n// -----\n#blocked = {b2}\n#same = {b1}\n");
    std::fs::write(&path, text).unwrap();
    let f = path.to_str().unwrap();
    let o = laycert(&["show", "--mlir", f, "#same", "--shape", "128"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert(&["show", "--mlir", f, "#blocked", "--shape", "128"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lines 1 and 4"), "{}", stderr(&o));
}

#[test]
fn missing_aliases_are_named_with_their_line() {
    let (_tmp, f) = module_file("missing.mlir");
    let o = laycert(&["show", "--mlir", &f, "#bad", "--shape", "8"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("#nothere") && e.contains("line 6") && e.contains("#blocked"),
        "{e}"
    );
    let o = laycert(&["show", "--mlir", &f, "#blocked3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("#blocked3"), "{}", stderr(&o));
    let o = laycert(&["show", "#blocked"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--mlir"), "{}", stderr(&o));
    let o = laycert(&["show", "--mlir", "/nonexistent/file.mlir", "#blocked"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn to_string_text_is_read_as_printed() {
    let printed = "\n - register=1 -> (0, 1)\n   register=2 -> (1, 0)\n - lane is a size 1 dimension\nwhere out dims are: [dim0 (size 2), dim1 (size 2)]";
    let o = laycert(&["show", printed]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        first_line(&o),
        "#ttg.linear<{register = [[0, 1], [1, 0]], lane = []}>"
    );
    let bare = printed.trim_start();
    assert!(bare.starts_with('-'));
    for cmd in ["show", "decompose"] {
        let mut args = vec![cmd, bare];
        if cmd == "decompose" {
            args.extend(["--shape", "4"]);
        }
        let o = laycert(&args);
        assert_ne!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
    }
    // As a lit test quotes it, after `//`.
    let quoted: String = bare.lines().map(|l| format!("// {l}\n")).collect();
    let o = laycert(&["show", &quoted]);
    assert_eq!(
        first_line(&o),
        "#ttg.linear<{register = [[0, 1], [1, 0]], lane = []}>",
        "{}",
        stderr(&o)
    );
}

#[test]
fn gluon_constructors_read_as_their_attributes() {
    let gluon = "ttgl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[4, 1], order=[1, 0])";
    let mlir = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>";
    let o = laycert(&["equiv", gluon, mlir, "--shape", "32,32"]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    let o = laycert(&[
        "equiv",
        "ttgl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0])",
        mlir,
        "--shape",
        "64,16",
    ]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    let o = laycert(&[
        "show",
        "ttgl.BlockedLayout(size_per_thread=[1, 4])",
        "--shape",
        "32,32",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("threads_per_warp"), "{}", stderr(&o));
}

#[test]
fn lit_test_attributes_are_read() {
    // triton-lang/triton test/Conversion/amd (versionMajor and version spellings, wmma
    // ctaLayout and warpsPerCTA forms, padded shared), test/TritonGPU (fp64 mma).
    for (attr, shape) in [
        ("#ttg.amd_mfma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [32, 32], isTransposed = true}>", "128,64"),
        ("#ttg.amd_mfma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = [1, 4], tilesPerWarp = [2, 2], instrShape = [16, 16], isTransposed = true}>", "64,128"),
        ("#ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [16, 16, 32], isTransposed = true}>", "64,64"),
        ("#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 4]}>", "64,64"),
        ("#ttg.amd_wmma<{version = 1, isTranspose = true, ctaLayout = {warp = [[0, 1], [0, 2], [1, 0]]}}>", "128,128"),
        ("#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_mfma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 16], isTransposed = true}>, kWidth=4}>", "64,32"),
        ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [8, 8]}>", "32,32"),
        ("#ttg.padded_shared<[32:+4] {order = [1, 0], shape = [64, 64]}>", "64,64"),
        ("#ttg.padded_shared<[512:+16] {offset = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [16, 0], [32, 0], [64, 0], [1, 0], [2, 0], [4, 0], [8, 0], [128, 0]], block = []}>", "256,64"),
    ] {
        let o = laycert(&["show", attr, "--shape", shape]);
        assert_eq!(o.status.code(), Some(0), "{attr}: {}", stderr(&o));
    }
    // The older wmma spelling is the ctaLayout one: warps along n first.
    let o = laycert(&[
        "equiv",
        "#ttg.amd_wmma<{version = 1, isTranspose = false, warpsPerCTA = [2, 4]}>",
        "#ttg.amd_wmma<{version = 1, isTranspose = false, ctaLayout = {warp = [[0, 1], [0, 2], [1, 0]]}}>",
        "--shape",
        "64,64",
    ]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
}

#[test]
fn misspelled_axis_names_suggest_the_registry_name() {
    let o = laycert(&["show", "S[(4,8):(8@laneId,1@laneId)]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean @laneid"),
        "{}",
        stderr(&o)
    );
    let o = laycert(&["show", "S[(2,32):(1@dp,1@laneid)]"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = laycert(&[
        "equiv",
        "S[32:1@laneId]",
        "S[32:1@laneid]",
        "--axes",
        "laneId=laneid",
    ]);
    assert_eq!(first_line(&o), "equivalent", "{}", stderr(&o));
    // `--axes` is global: every command that reads a layout takes it.
    let o = laycert(&[
        "show",
        "S[(4,8):(8@laneId,1@laneId)]",
        "--axes",
        "laneId=laneid",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(first_line(&o), "S[(4,8):(8@laneid,1@laneid)]");
    let o = laycert(&[
        "eval",
        "S[32:1@laneId]",
        "--coord",
        "5",
        "--axes",
        "laneId=laneid",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("laneid"), "{}", stdout(&o));
    let o = laycert(&["show", "S[32:1@laneId]"]);
    assert!(
        stderr(&o).contains("(--axes laneId=laneid"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn hostile_notation_inputs_are_refused_cleanly() {
    let deep_list = format!(
        "ttgl.BlockedLayout(size_per_thread={}1{})",
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    let deep_call = format!(
        "{}ttgl.BlockedLayout([1],[32],[1],[0]){}",
        "ttgl.SliceLayout(0, ".repeat(3_000),
        ")".repeat(3_000)
    );
    let deep_dict = format!(
        "#ttg.amd_wmma<{{version = 1, isTranspose = false, ctaLayout = {}}}>",
        "{a = ".repeat(10_000)
    );
    for text in [
        deep_list.as_str(),
        deep_call.as_str(),
        deep_dict.as_str(),
        "#ttg.padded_shared<[1099511627776:+1048576] {order = [0], shape = [8]}>",
        "#ttg.padded_shared<[4:+4611686018427387904] {order = [0], shape = [8]}>",
        "#ttg.amd_mfma<{version = 3, warpsPerCTA = [1099511627776, 1], instrShape = [32, 32, 8], isTransposed = false}>",
        "#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = [[4611686018427387904, 0]]}}>",
    ] {
        let o = laycert(&["show", text, "--shape", "8,8"]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", &text[..60.min(text.len())], stderr(&o));
        assert!(stderr(&o).len() < 1 << 20);
    }
    // An alias file that defines aliases by the thousand, each using the previous twice.
    let mut text = String::from("#a0 = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>\n");
    for i in 1..30 {
        text += &format!(
            "#a{i} = #ttg.slice<{{dim = 0, parent = #a{0}}}> // #a{0}\n",
            i - 1
        );
    }
    let tmp = common::scratch();
    let dir = tmp.path();
    let path = dir.join("blowup.mlir");
    std::fs::write(&path, text).unwrap();
    let o = laycert(&[
        "show",
        "--mlir",
        path.to_str().unwrap(),
        "#a29",
        "--shape",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Runs `args`, expects exit `code`, and returns stdout's first line (or stderr on exit 2).
fn run(args: &[&str], code: i32) -> String {
    let o = laycert(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{args:?}: {}{}",
        stdout(&o),
        stderr(&o)
    );
    if code == 2 {
        stderr(&o)
    } else {
        first_line(&o)
    }
}

#[test]
fn swizzled_layouts_with_negative_strides_read_when_every_offset_is_an_address() {
    let l = "Sw<3,3,3> o 511 o (8,64):(-64,-1)";
    assert_eq!(run(&["show", l], 0), "Sw<3,3,3> o 511 o (8, 64):(-64, -1)");
    // (0, 0) is sw(511) = 511 ^ 56.
    assert_eq!(run(&["eval", l, "--coord", "0,0"], 0), "{{m:455}}");
    let cpp = "Sw<3,3,3> o _511 o (_8,_64):(_-64,_-1)";
    assert_eq!(run(&["equiv", l, cpp], 0), "equivalent");
    // A stride on an extent-1 mode never contributes.
    let l = "Sw<1,2,3> o (4,1,32):(1,-5,4)";
    assert_eq!(
        run(&["equiv", l, "Sw<1,2,3> o (4,1,32):(1,0,4)"], 0),
        "equivalent"
    );
    let e = run(&["show", "Sw<3,3,3> o 510 o (8,64):(-64,-1)"], 2);
    assert!(e.contains("the smallest is -1") && e.contains("^^^"), "{e}");
}

#[test]
fn cute_dsl_prints_and_mlir_types_read_as_their_layouts() {
    let dsl = "S<3,4,3> o 0 o (8,64):(64,1)";
    assert_eq!(run(&["show", dsl], 0), "Sw<3,4,3> o (8, 64):(64, 1)");
    assert_eq!(
        run(&["equiv", dsl, "Sw<3,4,3> o (8,64):(64,1)"], 0),
        "equivalent"
    );
    let typed = "!cute.composed_layout<\"S<3,4,3> o 0 o (8,64):(64,1)\">";
    assert_eq!(run(&["eval", typed, "--coord", "2,0"], 0), "{{m:144}}");
    assert_eq!(
        run(
            &["equiv", "!cute.layout<\"(4,8):(8,1)\">", "(4,8):(8,1)"],
            0
        ),
        "equivalent"
    );
    let e = run(&["show", "!cute.layout<\"(?,8):(8,1)\">"], 2);
    assert!(e.contains("CuTe notation") && e.contains("run time"), "{e}");
}

#[test]
fn cute_tensor_prints_read_as_the_layout_after_the_pointer() {
    let g = "gmem_ptr[16b](0x7f0000000000) o (128,64):(64,_1)";
    assert_eq!(run(&["show", g], 0), "(128, 64):(64, 1)");
    assert_eq!(run(&["eval", g, "--coord", "1,2"], 0), "{{m:66}}");
    let s = "smem_ptr[16b](0x7f00) o Sw<3,4,3> o _0 o (8,64):(64,_1)";
    assert_eq!(
        run(&["equiv", s, "Sw<3,4,3> o (8,64):(64,1)"], 0),
        "equivalent"
    );
    // The swizzle acts on element offsets here, on byte addresses after a pointer tag.
    assert_eq!(
        run(
            &[
                "equiv",
                s,
                "Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,_1)"
            ],
            1
        ),
        "not equivalent"
    );
    let e = run(
        &["show", "Sw<3,4,3>_smem_ptr[16b](0x7f00) o (8,64):(64,_1)"],
        2,
    );
    assert!(e.contains("swizzle pointer"), "{e}");
}

#[test]
fn cute_scaled_basis_strides_read_as_axe_on_codomain_modes() {
    let id = "(_64,_8):(_1@0,_1@1)";
    assert_eq!(run(&["show", id], 0), "S[(8,64):(1@dim1,1@dim0)]");
    // CuTe's flat index: 67 is the coordinate (3, 1).
    assert_eq!(run(&["eval", id, "--coord", "67"], 0), "{{dim0:3, dim1:1}}");
    assert_eq!(
        run(&["eval", id, "--shape", "64,8", "--coord", "3,5"], 0),
        "{{dim0:3, dim1:5}}"
    );
    assert_eq!(
        run(
            &["equiv", id, "S[(64,8):(1@dim0,1@dim1)]", "--shape", "64,8"],
            0
        ),
        "equivalent"
    );
    assert_eq!(
        run(&["equiv", "(_8,_64):(_1@1,_1@0)", id, "--shape", "512"], 1),
        "not equivalent"
    );
    let e = run(&["show", "(_64,_8):(_1@0,2)"], 2);
    assert!(
        e.contains("CuTe ScaledBasis notation") && !e.contains("Axe"),
        "{e}"
    );
}

#[test]
fn tvm_tile_layout_reads_with_its_module_prefix() {
    let t = "T.TileLayout(S[(8,8):(8,1)])";
    assert_eq!(run(&["show", t], 0), "S[(8,8):(8,1)]");
    assert_eq!(run(&["eval", t, "--coord", "9"], 0), "{{m:9}}");
    assert_eq!(run(&["equiv", t, "S[64:1]"], 0), "equivalent");
    let e = run(&["show", "T.TileLayout(S[(8,8):(8,1)]"], 2);
    assert!(
        e.contains("Axe notation") && e.contains("TileLayout"),
        "{e}"
    );
}

const BLOCKED_1X8: &str = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>";

#[test]
fn older_gluon_blocked_layout_reads_with_its_cta_fields() {
    let old = "ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0], [1, 1], [1, 1], [1, 0])";
    assert!(run(&["show", old, "--shape", "128,64"], 0).starts_with("#ttg.linear<{register"));
    assert_eq!(
        run(&["equiv", old, BLOCKED_1X8, "--shape", "128,64"], 0),
        "equivalent"
    );
    let kw = "ttgl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, 8], warps_per_cta=[4, 1], order=[1, 0], ctas_per_cga=[1, 1], cta_split_num=[1, 1], cta_order=[1, 0])";
    assert_eq!(
        run(&["equiv", kw, old, "--shape", "128,64"], 0),
        "equivalent"
    );
    assert!(run(&["eval", kw, "--shape", "128,64", "--coord", "lane=8"], 0).contains("dim0:1"));
    let e = run(
        &[
            "show",
            &old.replace("[1, 0])", "[1, 0], [1])"),
            "--shape",
            "8,8",
        ],
        2,
    );
    assert!(e.contains("at most 7 arguments"), "{e}");
}

#[test]
fn shared_linear_attribute_reads_with_its_alignment() {
    let sl = "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, alignment = 16>";
    assert!(run(&["show", sl], 0).starts_with("#ttg.linear<{offset = [[0, 1]"));
    assert_eq!(
        run(&["eval", sl, "--coord", "offset=9"], 0),
        "{{dim0:1, dim1:1}}"
    );
    // The same map as an unswizzled row-major shared layout.
    let plain = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>";
    assert_eq!(
        run(&["equiv", sl, plain, "--shape", "8,8"], 0),
        "equivalent"
    );
    let e = run(&["show", &sl.replace(", alignment = 16", "")], 2);
    assert!(e.contains("alignment") && e.contains("missing"), "{e}");
}

#[test]
fn ttgir_tensor_type_gives_its_encoding_and_its_shape() {
    let t = format!("tensor<128x64xf16, {BLOCKED_1X8}>");
    assert!(run(&["show", &t], 0).starts_with("#ttg.linear<{register"));
    // The type's shape serves both sides, as --shape 128,64 would.
    assert_eq!(run(&["equiv", &t, BLOCKED_1X8], 0), "equivalent");
    assert_eq!(run(&["equiv", BLOCKED_1X8, &t], 0), "equivalent");
    assert!(run(&["eval", &t, "--coord", "lane=8"], 0).contains("dim0:1"));
    let e = run(&["equiv", &t, BLOCKED_1X8, "--shape", "64,64"], 2);
    assert!(e.contains("[64, 64]") && e.contains("[128, 64]"), "{e}");
    let e = run(&["show", "tensor<128x64xf16>"], 2);
    assert!(
        e.contains("TTGIR tensor type") && e.contains("encoding"),
        "{e}"
    );
}

/// An NKI access pattern pasted as NKI users write it reads as its Axe layout: on the flattened
/// tensor's index, or with the tensor's SBUF declaration on partitions `P` and free elements `F`
/// (the docs' "A Concrete Example": `t[0:16, 8:16]` of a 16x16 tensor).
#[test]
fn nki_access_patterns_read_as_their_axe_layouts() {
    let ap = "t.ap(pattern=[[16, 16], [1, 8]], offset=8)";
    assert_eq!(run(&["show", ap], 0), "S[(16,8):(16,1)] + 8");
    assert_eq!(run(&["equiv", ap, "S[(16,8):(16,1)] + 8"], 0), "equivalent");
    assert_eq!(
        run(&["equiv", "[[16, 16], [1, 8]]", "S[(16,8):(16,1)]"], 0),
        "equivalent"
    );
    assert_eq!(
        run(&["equiv", ap, "S[(16,8):(16,1)] + 9"], 1),
        "not equivalent"
    );
    let sbuf = "t = nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.sbuf)\n\
                access = t.ap(pattern=[[16, 16], [1, 8]], offset=8)";
    assert_eq!(
        run(&["equiv", sbuf, "S[(16,8):(1@P,1@F)] + 8@F"], 0),
        "equivalent"
    );
    // The docs' illegal pattern (every other partition) is refused, naming the rule.
    let e = run(
        &[
            "show",
            "t = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)\nt.ap(pattern=[[64, 8], [1, 32]], offset=0)",
        ],
        2,
    );
    assert!(e.contains("must be contiguous"), "{e}");
    let e = run(&["show", "t.ap(pattern=[[16, 16], [1, 8]], ofset=8)"], 2);
    assert!(e.contains("an argument of .ap"), "{e}");
}

#[test]
fn wave64_layouts_with_warps_are_compared_lane_by_lane_not_on_fused_threads() {
    // Audit 27: a 64-lane blocked layout and a 32-lane one with two warps were "equivalent"
    // (tx = laneid + 32*warpid merges lane 32 of warp 0 with lane 0 of warp 1), with a
    // certificate `check` accepted; Gluon gives them different (lane, warp) bases. Lanes and
    // warps are now compared apart (as `wavelane` and `wave`), with Gluon's counterexample.
    let wave64 = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [1], order = [0]}>";
    let warp32 = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]}>";
    let o = laycert(&["equiv", wave64, warp32, "--shape", "64"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("left:  {{wave:0, wavelane:32}}"), "{out}");
    assert!(out.contains("right: {{wave:1, wavelane:0}}"), "{out}");
    // The user's own axes say the same.
    let o = laycert(&[
        "equiv",
        wave64,
        warp32,
        "--shape",
        "64",
        "--axes",
        "laneid=lane64,warpid=wave64",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("left:  {{lane64:32, wave64:0}}"));
    // An AMD MFMA layout with warps against the layout with lane bit 5 and warp bit 0 swapped
    // (Gluon's bases differ): not equivalent; against itself: equivalent.
    let mfma = "AMDMFMALayout(version=3, instr_shape=[32, 32, 8], transposed=True, \
                warps_per_cta=[2, 2], element_bitwidth=32, tiles_per_warp=[1, 1], cga_layout=[])";
    let swapped = "#ttg.linear<{register = [[0, 1], [0, 2], [0, 8], [0, 16]], lane = [[1, 0], \
                   [2, 0], [4, 0], [8, 0], [16, 0], [0, 32]], warp = [[0, 4], [32, 0]]}>";
    assert_eq!(
        run(&["equiv", mfma, swapped, "--shape", "64,64"], 1),
        "not equivalent"
    );
    assert_eq!(
        run(&["equiv", mfma, mfma, "--shape", "64,64"], 0),
        "equivalent"
    );
    // Against a layout written on tx, whose fusion is CUDA's: refused by name, exit 2.
    let err = run(
        &[
            "equiv",
            mfma,
            "S[(2,32,2,4,2,4):(128@tx,1@tx,64@tx,4@reg,32@tx,1@reg)]",
            "--shape",
            "64,64",
        ],
        2,
    );
    assert!(
        err.contains("lanes span 0..63") && err.contains("`tx`"),
        "{err}"
    );
    // Properties of one wave64 layout are decided with lanes and warps apart too (they were
    // refused, exit 2): the MFMA layout is a bijection of its 4 warps x 64 lanes x 16
    // registers onto the 64x64 tile (Gluon's bases span all 12 bits);
    for p in ["injective", "surjective", "bijective"] {
        assert_eq!(
            run(&["prove-property", p, mfma, "--shape", "64,64"], 0),
            "proved"
        );
    }
    let shown = stdout(&laycert(&["show", mfma, "--shape", "64,64"]));
    assert!(shown.contains("injective: yes"), "{shown}");
    // two warps of 64 lanes over 64 cells hold each cell twice (warp 0 and warp 1);
    let o = laycert(&[
        "prove-property",
        "injective",
        "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [64], warpsPerCTA = [2], order = [0]}>",
        "--shape",
        "64",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("cell [0] is held by two physical points ([0, 0] and [1, 0] over [\"wave\", \"wavelane\"])"),
        "{}",
        stdout(&o)
    );
    // an Axe layout on lanes 0..63 and warps is injective, where the fused threads would
    // merge lane 32 of warp 0 with lane 0 of warp 1; a stride-0 warp is not.
    assert_eq!(
        run(
            &[
                "prove-property",
                "injective",
                "S[(2,64):(1@warpid,1@laneid)]"
            ],
            0
        ),
        "proved"
    );
    assert_eq!(
        run(
            &[
                "prove-property",
                "injective",
                "S[(2,64):(0@warpid,1@laneid)]"
            ],
            1
        ),
        "refuted"
    );
    // The Triton layout is a wavefront on its own (its warp in-dim keeps lanes and warps
    // apart); an Axe layout on 64 lanes without warps reads as CUDA threads (lane 40 is thread
    // 40). Neither reading is both sides' own, so the claim is refused (it was decided fused,
    // a reading chosen by the pair: the deciders audit), and `--axes` compares lane by lane.
    let err = run(&["equiv", wave64, "S[64:1@laneid]", "--shape", "64"], 2);
    assert!(
        err.contains("without warps") && err.contains("--axes"),
        "{err}"
    );
    run(
        &[
            "equiv",
            wave64,
            "S[64:1@laneid]",
            "--shape",
            "64",
            "--axes",
            "laneid=lane64,warpid=wave64",
        ],
        0,
    );
}

#[test]
fn swizzled_layouts_read_over_a_shape_that_splits_their_modes() {
    // Audit 27: `--shape 3,2` splits the mode of extent 2 of `(2,3):(1,20)` unevenly: no
    // strided form, and equiv refused it (exit 2) where eval reads it; the table decides it.
    let l = "Sw<1,0,2> o (2,3):(1,20)";
    assert_eq!(
        run(&["eval", l, "--shape", "3,2", "--coord", "2,1"], 0),
        "{{m:41}}"
    );
    assert_eq!(run(&["equiv", l, l, "--shape", "3,2"], 0), "equivalent");
    // Another swizzle moves offset 20 + 1 = 21 (bit 2 set) to 20: a counterexample.
    assert_eq!(
        run(&["equiv", l, "(2,3):(1,20)", "--shape", "3,2"], 1),
        "not equivalent"
    );
}

#[test]
fn identical_f2_layouts_past_the_table_limit_are_proved_by_their_normal_forms() {
    // Audit 27: a swizzled shared layout at 4096 x 4096 (2^24 cells) has no forward form (the
    // table stops at 2^22), so equiv said unknown even against itself; its F2 normal form
    // needs no table.
    let ss = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>";
    let o = laycert(&["equiv", ss, ss, "--shape", "4096,4096"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("identical F2 normal forms (24 input bits)"),
        "{out}"
    );
    assert!(
        out.contains("cross-check: the trusted semantics agree"),
        "{out}"
    );
    // Different swizzles: the forms differ, and with no table for a witness, unknown.
    let other = "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>";
    run(&["equiv", ss, other, "--shape", "4096,4096"], 3);
}

#[test]
fn tvm_data_layouts_read_as_their_index_maps() {
    // The layout string and the index map TVM's bijective layout stands for, read by the two
    // readers: the same layout.
    let out = run(
        &[
            "equiv",
            "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW16c\")",
            "lambda N, C, H, W: (N, C // 16, H, W, C % 16)",
            "--shape",
            "2,32,3,3",
        ],
        0,
    );
    assert_eq!(out, "equivalent");
    let out = run(
        &["show", "tvm.tir.layout(\"NCHW16c\")", "--shape", "2,32,3,3"],
        0,
    );
    assert_eq!(out, "S[(2,2,16,3,3):(288,144,1,48,16)]");
    // Another block size is another layout: a counterexample, exit 1.
    let out = run(
        &[
            "equiv",
            "layout(\"NCHW16c\")",
            "layout(\"NCHW8c\")",
            "--shape",
            "2,32,3,3",
        ],
        1,
    );
    assert!(out.starts_with("not equivalent"), "{out}");
    // Where TVM pads, and an invalid string: named, exit 2.
    let err = run(&["show", "layout(\"NCHW16c\")", "--shape", "2,20,3,3"], 2);
    assert!(err.contains("TVM pads it to 32"), "{err}");
    let err = run(&["show", "layout(\"NC4HW\")", "--shape", "2,20,3,3"], 2);
    assert!(err.contains("before the primal axis H"), "{err}");
}

#[test]
fn tvm_index_maps_read_on_their_buffer_and_refuse_what_tvm_pads() {
    // transform_layout's map after the buffer's declaration, as a TVM test writes it.
    let text = "A = T.Buffer((128, 64), \"float16\")\n\
                sch.transform_layout(block, (\"write\", 0), lambda i, j: (i // 16, j // 16, i % 16, j % 16))";
    let out = run(&["show", text], 0);
    assert_eq!(out, "S[(8,16,4,16):(1024,16,256,1)]");
    // The same map against its CuTe layout (row-major (i, j) -> colexicographic modes).
    let out = run(
        &[
            "equiv",
            "T.index_map(lambda i, j: (j // 8, i, j % 8))",
            "(16,(8,4)):(8,(1,128))",
            "--shape",
            "16,32",
        ],
        0,
    );
    assert_eq!(out, "equivalent");
    // A padding split: TVM's buffer is not the indices' range, so the shape must be pasted.
    let err = run(
        &["show", "lambda i: (i // 16, i % 16)", "--shape", "100"],
        2,
    );
    assert!(err.contains("transformed buffer's declaration"), "{err}");
    let out = run(
        &[
            "show",
            "lambda i: (i // 16, i % 16)\nA_t = T.Buffer((7, 16), \"float32\")",
            "--shape",
            "100",
        ],
        0,
    );
    assert_eq!(out, "S[100:1]");
    // No shape at all, and a Pallas BlockSpec's lambda: named, exit 2.
    let err = run(&["show", "T.index_map(lambda i: (i,))"], 2);
    assert!(err.contains("--shape"), "{err}");
    let err = run(&["show", "pl.BlockSpec((8, 128), lambda i, j: (i, j))"], 2);
    assert!(err.contains("Pallas"), "{err}");
}
