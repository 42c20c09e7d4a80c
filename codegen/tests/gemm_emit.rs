//! GEMM emission without a GPU: both dtypes, square, ragged and skinny shapes emit, carry the
//! plan's certificate digest, and pass translation validation.

use codegen::gemm::{emit_gemm, GemmDtype, GemmSpec, GemmTarget};

fn spec(m: i64, n: i64, k: i64, dtype: GemmDtype) -> GemmSpec {
    GemmSpec {
        m,
        n,
        k,
        dtype,
        target: GemmTarget::Sm90,
    }
}

#[test]
fn sm90_emits_and_validates() {
    for (m, n, k) in [
        (8192, 8192, 8192),
        (1000, 1000, 1000),
        (16, 4096, 4096),
        (1, 14336, 4096),
    ] {
        for dtype in [GemmDtype::Bf16, GemmDtype::F16] {
            let kern =
                emit_gemm(&spec(m, n, k, dtype)).unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
            assert!(kern.source.contains(&kern.digest));
            eprintln!(
                "{m}x{n}x{k} {:?}: {:?} {:?}",
                dtype, kern.config, kern.validation
            );
            for l in &kern.plan_summary {
                eprintln!("  {l}");
            }
        }
    }
}
