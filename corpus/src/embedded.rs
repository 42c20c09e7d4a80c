//! The corpus files compiled into the binary, so `laycert verify` needs no arguments. Kept by
//! hand; a test checks that this list names exactly the `*.toml` files under `corpus/data`.

/// `(path relative to corpus/data, text)`, sorted by path.
pub const FILES: &[(&str, &str)] = &[
    (
        "atoms/amd_mfma.toml",
        include_str!("../data/atoms/amd_mfma.toml"),
    ),
    (
        "atoms/amd_wmma.toml",
        include_str!("../data/atoms/amd_wmma.toml"),
    ),
    ("atoms/axe.toml", include_str!("../data/atoms/axe.toml")),
    ("atoms/copy.toml", include_str!("../data/atoms/copy.toml")),
    (
        "atoms/copy_ext.toml",
        include_str!("../data/atoms/copy_ext.toml"),
    ),
    (
        "atoms/instructions.toml",
        include_str!("../data/atoms/instructions.toml"),
    ),
    (
        "atoms/intel_xmx.toml",
        include_str!("../data/atoms/intel_xmx.toml"),
    ),
    (
        "atoms/sm100_tmem.toml",
        include_str!("../data/atoms/sm100_tmem.toml"),
    ),
    (
        "atoms/sm100_umma.toml",
        include_str!("../data/atoms/sm100_umma.toml"),
    ),
    (
        "atoms/sm120_mma.toml",
        include_str!("../data/atoms/sm120_mma.toml"),
    ),
    (
        "atoms/sm61_sm75_mma.toml",
        include_str!("../data/atoms/sm61_sm75_mma.toml"),
    ),
    (
        "atoms/sm80_mma.toml",
        include_str!("../data/atoms/sm80_mma.toml"),
    ),
    (
        "atoms/sm80_sm90_mma_ext.toml",
        include_str!("../data/atoms/sm80_sm90_mma_ext.toml"),
    ),
    (
        "atoms/sm90_gmma.toml",
        include_str!("../data/atoms/sm90_gmma.toml"),
    ),
    (
        "atoms/sm90_gmma_ext.toml",
        include_str!("../data/atoms/sm90_gmma_ext.toml"),
    ),
    (
        "atoms/sm90_smem.toml",
        include_str!("../data/atoms/sm90_smem.toml"),
    ),
    (
        "atoms/triton.toml",
        include_str!("../data/atoms/triton.toml"),
    ),
    ("claims/axe.toml", include_str!("../data/claims/axe.toml")),
    ("claims/copy.toml", include_str!("../data/claims/copy.toml")),
    (
        "claims/real_tirx.toml",
        include_str!("../data/claims/real_tirx.toml"),
    ),
    ("claims/sm80.toml", include_str!("../data/claims/sm80.toml")),
    (
        "claims/sm90_gmma.toml",
        include_str!("../data/claims/sm90_gmma.toml"),
    ),
    ("claims/smem.toml", include_str!("../data/claims/smem.toml")),
    (
        "claims/triton_attrs.toml",
        include_str!("../data/claims/triton_attrs.toml"),
    ),
    (
        "claims/triton_gluon.toml",
        include_str!("../data/claims/triton_gluon.toml"),
    ),
    (
        "claims/triton_operands.toml",
        include_str!("../data/claims/triton_operands.toml"),
    ),
    (
        "claims/tvm_index_map.toml",
        include_str!("../data/claims/tvm_index_map.toml"),
    ),
    (
        "real/layouts.toml",
        include_str!("../data/real/layouts.toml"),
    ),
    (
        "spec/vectors.toml",
        include_str!("../data/spec/vectors.toml"),
    ),
];
