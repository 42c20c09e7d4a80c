//! The emitted NKI kernels run on the reference interpreter and match NumPy; bad plans are
//! refused by the planner naming the rule and, written by hand, raise in the interpreter naming
//! the rule. Needs python3 with numpy (`LAYCERT_PYTHON`); without it each test prints a SKIP line.

use codegen::nki::{self, run::numpy_available, MhaSpec};
use solver::nki_gemm::{plan_gemm, GemmSpec};

fn skip() -> bool {
    if numpy_available() {
        return false;
    }
    println!("SKIP (no python3 with numpy: set LAYCERT_PYTHON)");
    true
}

/// Runs kernel `text` on the interpreter from a file `name` in a directory removed afterwards.
fn run_text(name: &str, text: &str) -> nki::RunOutcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    nki::run(&path, "trn1").unwrap()
}

fn gemm_spec(m: i64, n: i64, k: i64) -> GemmSpec {
    GemmSpec {
        m,
        n,
        k,
        dtype_bytes: 2,
        target: "trn1".into(),
        tile: [128, 128, 512],
    }
}

fn run_gemm(m: i64, n: i64, k: i64, dtype: &str) -> nki::RunOutcome {
    let plan = plan_gemm(&gemm_spec(m, n, k)).unwrap();
    let text = nki::emit_gemm(&plan, dtype);
    run_text(&format!("gemm_{m}_{n}_{k}_{dtype}.py"), &text)
}

#[test]
fn emitted_gemm_matches_numpy_for_tile_multiples_and_tails() {
    if skip() {
        return;
    }
    for (m, n, k, dt) in [
        (128, 512, 256, "bf16"),
        (300, 700, 200, "bf16"),
        (1, 1, 1, "f16"),
        (257, 1025, 129, "f16"),
        (64, 96, 384, "bf16"),
    ] {
        let out = run_gemm(m, n, k, dt);
        assert_eq!(out.code, 0, "gemm {m}x{n}x{k} {dt}: {}", out.stdout);
        assert!(out.stdout.starts_with("match"), "{}", out.stdout);
    }
}

#[test]
fn emitted_softmax_matches_numpy() {
    if skip() {
        return;
    }
    for (r, c, dt) in [(128, 64, "f32"), (300, 1000, "f32"), (5, 3, "bf16")] {
        let text = nki::emit_softmax(r, c, dt, "trn1").unwrap();
        let out = run_text(&format!("softmax_{r}_{c}.py"), &text);
        assert_eq!(out.code, 0, "softmax {r}x{c}: {}", out.stdout);
    }
}

#[test]
fn emitted_mha_matches_numpy() {
    if skip() {
        return;
    }
    for (h, s, d) in [(2, 128, 64), (1, 700, 128), (1, 40, 16)] {
        let spec = MhaSpec {
            heads: h,
            seq: s,
            dim: d,
            dtype: "bf16".into(),
            target: "trn1".into(),
        };
        let k = nki::emit_mha(&spec).unwrap();
        for c in &k.certs {
            certify::tensore::check(&serde_json::to_string(c).unwrap()).unwrap();
        }
        let out = run_text(&format!("mha_{h}_{s}_{d}.py"), &k.source);
        assert_eq!(out.code, 0, "mha {h}x{s}x{d}: {}", out.stdout);
    }
}

#[test]
fn a_wrong_kernel_is_a_mismatch() {
    if skip() {
        return;
    }
    let plan = plan_gemm(&gemm_spec(128, 512, 256)).unwrap();
    // Drop the second K tile: the kernel still runs, but computes half the sum.
    let text = nki::emit_gemm(&plan, "bf16").replace("nl.affine_range(2)", "nl.affine_range(1)");
    let out = run_text("gemm_wrong.py", &text);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.starts_with("mismatch"), "{}", out.stdout);
}

#[test]
fn a_gemm_missing_one_k_or_a_softmax_of_zeros_is_a_mismatch() {
    // Session 24's audit: with one tolerance set by the largest result element (2^-7 of it), a
    // 128x512x10000 GEMM that never added k = 9999 matched, and a wide softmax's probabilities
    // all lie below 2^-7. The tolerance is now per element.
    if skip() {
        return;
    }
    let plan = plan_gemm(&gemm_spec(128, 512, 10000)).unwrap();
    let good = nki::emit_gemm(&plan, "bf16");
    let out = run_text("gemm_10000.py", &good);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let tail = "dst=a1[0:16, 0:128], src=lhsT[9984:10000, m0:m0 + 128])";
    assert!(good.contains(tail), "{good}");
    let wrong = good
        .replace(
            tail,
            "dst=a1[0:15, 0:128], src=lhsT[9984:9999, m0:m0 + 128])",
        )
        .replace(
            "a1[0:16, 0:128], moving=b1[0:16, 0:512]",
            "a1[0:15, 0:128], moving=b1[0:15, 0:512]",
        );
    assert_ne!(wrong, good);
    let out = run_text("gemm_10000_no_last_k.py", &wrong);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.starts_with("mismatch"), "{}", out.stdout);

    let text = nki::emit_softmax(256, 2048, "bf16", "trn1").unwrap();
    let out = run_text("softmax_2048.py", &text);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let line = "nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=inv)";
    assert!(text.contains(line), "{text}");
    let zeros = text.replace(
        line,
        &format!("{line}\n    nisa.tensor_scalar(dst=y, data=y, op0=nl.multiply, operand0=0.0)"),
    );
    let out = run_text("softmax_zeros.py", &zeros);
    assert_eq!(out.code, 1, "{}", out.stdout);
}

const HAND: &str = "# laycert-nki: kind=gemm m=128 n=512 k=128 dtype=bf16 entry=gemm
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gemm(lhsT, rhs):
    result = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray(A_SHAPE, dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=A_SRC)
    nisa.dma_copy(dst=b, src=rhs)
    c_psum = nl.ndarray(C_SHAPE, dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=c_psum[C_DST], stationary=a, moving=b)
    c = nl.ndarray((128, 512), dtype=lhsT.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=c, src=c_psum[C_DST])
    nisa.dma_copy(dst=result, src=c)
    return result
";

fn hand(a_shape: &str, a_src: &str, c_shape: &str, c_dst: &str) -> String {
    HAND.replace("A_SHAPE", a_shape)
        .replace("A_SRC", a_src)
        .replace("C_SHAPE", c_shape)
        .replace("C_DST", c_dst)
}

#[test]
fn hand_written_bad_plans_raise_in_the_interpreter_naming_the_rule() {
    if skip() {
        return;
    }
    let good = hand("(128, 128)", "lhsT", "(128, 512)", "0:128, 0:512");
    let out = run_text("hand_good.py", &good);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let cases = [
        // K on F: the stationary tile holds A[K, M] transposed, M on the partitions.
        // K on F: the stationary tile holds M = 64 on the partitions and K = 128 on the free axis.
        (
            "k_on_f",
            hand(
                "(64, 128)",
                "lhsT[0:64, 0:128]",
                "(128, 512)",
                "0:128, 0:512",
            ),
            "matmul-partition",
        ),
        // A moving tile of 1024.
        (
            "moving_1024",
            hand("(128, 128)", "lhsT", "(128, 1024)", "0:128, 0:1024")
                .replace("m=128 n=512", "m=128 n=1024")
                .replace(
                    "(128, 512), dtype=rhs.dtype",
                    "(128, 1024), dtype=rhs.dtype",
                )
                .replace(
                    "(128, 512), dtype=lhsT.dtype",
                    "(128, 1024), dtype=lhsT.dtype",
                ),
            "matmul-moving-free",
        ),
        // A PSUM overflow: 9 banks of PSUM per partition.
        (
            "psum_overflow",
            hand("(128, 128)", "lhsT", "(128, 4608)", "0:128, 0:512"),
            "psum-capacity",
        ),
        // An output that straddles two PSUM banks.
        (
            "psum_bank",
            hand("(128, 128)", "lhsT", "(128, 1024)", "0:128, 256:768"),
            "psum-bank",
        ),
        // A matmul into a bf16 PSUM tile: TensorE accumulates in float32.
        (
            "psum_fp32",
            hand("(128, 128)", "lhsT", "(128, 512)", "0:128, 0:512").replace(
                "dtype=nl.float32, buffer=nl.psum",
                "dtype=nl.bfloat16, buffer=nl.psum",
            ),
            "psum-fp32",
        ),
        // DMA straight into PSUM.
        (
            "dma_psum",
            hand("(128, 128)", "lhsT", "(128, 512)", "0:128, 0:512").replace(
                "a = nl.ndarray((128, 128), dtype=lhsT.dtype, buffer=nl.sbuf)",
                "a = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)",
            ),
            "dma-buffer",
        ),
        // A partition dim of 256.
        (
            "partitions",
            hand("(256, 128)", "lhsT", "(128, 512)", "0:128, 0:512"),
            "partition-dim",
        ),
    ];
    for (name, text, rule) in cases {
        let out = run_text(&format!("hand_{name}.py"), &text);
        assert_eq!(out.code, 2, "{name}: {}", out.stdout);
        assert!(
            out.stdout.starts_with(&format!("rule violated: {rule}")),
            "{name}: {}",
            out.stdout
        );
    }
}
