"""gen_copy: a certified copy kernel (synthesis joins laycert's generators as it lands)."""

import pytest

import laycert


def test_gen_copy_emits_a_kernel_whose_movement_certificate_checks():
    k = laycert.gen_copy("(64,64):(64,1)", "(64,64):(1,64)", (64, 64), "f32")
    assert isinstance(k, laycert.CopyKernel)
    assert "__global__" in k.source and k.name in k.source
    assert k.threads == 256 and len(k.grid) == 3
    assert k.digest.startswith("sha256:")
    assert k.certificate is not None and k.certificate.kind == "movement"
    assert k.certificate.check().valid
    assert str(k) == k.source
    unswizzled = laycert.gen_copy("(64,64):(64,1)", "(64,64):(1,64)", [64, 64], "f16", swizzle=False, vector=1)
    assert unswizzled.shared.startswith("Sw<0,0,0> o ")


def test_gen_copy_bad_input_raises():
    with pytest.raises(laycert.LaycertError, match="dtype"):
        laycert.gen_copy("(64,64):(64,1)", "(64,64):(1,64)", (64, 64), "f99")
    with pytest.raises(laycert.ParseError, match=r"\(in src\)"):
        laycert.gen_copy("(64,64):(64,1", "(64,64):(1,64)", (64, 64), "f32")


GEMM_TILE = """program gemm_f16_128x128x32
threads 128
a_g = global_view(f16, [128, 32], (128,32):(4096,1))
b_g = global_view(f16, [128, 32], (128,32):(4096,1))
c_g = global_view(f32, [128, 128], (128,128):(4096,1))
a_s = shared_tensor(f16, [128, 32])
b_s = shared_tensor(f16, [128, 32])
a = register_tensor(f16, [128, 32])
b = register_tensor(f16, [128, 32])
c = register_tensor(f32, [128, 128])
copy(a_g, a_s)
copy(b_g, b_s)
copy(a_s, a)
copy(b_s, b)
mma(c, a, b)
copy(c, c_g)
"""


def test_synth_plans_a_gemm_tile_whose_certificate_checks():
    p = laycert.synth(GEMM_TILE, "sm80")
    assert isinstance(p, laycert.SynthPlan)
    assert p.target == "sm80" and p.program == "gemm_f16_128x128x32"
    assert any("ldmatrix" in i for i in p.instructions), p.instructions
    assert any("mma.sync" in i for i in p.instructions), p.instructions
    assert "c" in p.layouts and "a_s" in p.layouts
    assert p.certificate.kind == "synthesis"
    assert p.certificate.check().valid
    # A tampered certificate is refused.
    bad = laycert.Certificate.from_json(p.certificate.json.replace('"sm80"', '"sm90"', 1))
    assert not bad.check().valid
    assert str(p) == "\n".join(p.instructions)


def test_synth_bad_programs_raise_with_the_line():
    with pytest.raises(laycert.LaycertError, match="line 2"):
        laycert.synth("threads 32\ny = cast(x, f16)\n")
    with pytest.raises(laycert.LaycertError, match="target"):
        laycert.synth(GEMM_TILE, "sm70")


def test_gen_gemm_emits_validated_kernels_for_both_paths():
    k = laycert.gen_gemm(1000, 1000, 1000, "f16")
    assert isinstance(k, laycert.GemmKernel)
    assert "wgmma.mma_async" in k.source and k.entry == "laycert_gemm"
    assert k.digest[len("sha256:"):] in k.source
    assert k.config["bm"] == 128 and k.threads == 128 * (k.config["consumers"] + 1)
    assert k.validation["accumulator_cells"] > 0 and k.validation["smem_cells"] > 0
    assert k.certificate.check().valid
    k80 = laycert.gen_gemm(256, 256, 256, "bf16", "sm80")
    assert "mma.sync" in k80.source and "ldmatrix" in k80.source
    assert k80.certificate.check().valid


def test_a_gemm_certificate_binds_its_kernel_text():
    k = laycert.gen_gemm(1000, 999, 1000)
    ok = laycert.check(k.certificate, kernel=k.source)
    assert ok.valid and "1000 x 999 x 1000" in ok.claim
    edited = laycert.check(k.certificate, kernel=k.source.replace("#define LC_K 1000", "#define LC_K 2000"))
    assert not edited.valid and "LC_K as 2000" in edited.message
    other = laycert.gen_gemm(1000, 1000, 1000)
    assert not laycert.check(k.certificate, kernel=other.source).valid
    plan = laycert.synth(GEMM_TILE, "sm80")
    assert "binds no kernel" in laycert.check(plan.certificate, kernel=k.source).message


def test_gen_gemm_serves_any_k():
    # K = 1001: no 16-byte load reads these rows; A and B are staged through registers, and
    # the sm90 target runs that sm80-path kernel.
    k = laycert.gen_gemm(64, 64, 1001)
    assert "#define LC_REG_STAGED 1" in k.source and "mma.sync" in k.source
    assert k.target == "sm80" and "not a multiple of 8" in k.note
    assert laycert.gen_gemm(64, 64, 1000).note is None
    assert k.certificate.check().valid


def test_gen_gemm_bad_input_raises():
    with pytest.raises(laycert.LaycertError, match="M = 0"):
        laycert.gen_gemm(0, 64, 64)
    with pytest.raises(laycert.LaycertError, match="dtype"):
        laycert.gen_gemm(64, 64, 64, "f32")


def test_synth_tells_a_proof_of_infeasibility_from_an_unfinished_search():
    # Rows of 9 f16 elements: no cp.async vector is aligned for every row (a proof, exit 1).
    unaligned = (
        "program t\nthreads 128\nx_g = global_view(f16, [8, 8], (8,8):(9,1))\n"
        "x_s = shared_tensor(f16, [8, 8])\ncopy(x_g, x_s)\n"
    )
    with pytest.raises(laycert.InfeasibleError, match="infeasible: copy instruction"):
        laycert.synth(unaligned, "sm80")
    # Two copies into one shared buffer wanting different orders: not found, not proved (exit 3).
    two_orders = (
        "program t\nthreads 128\nx_g = global_view(f16, [16, 16], (16,16):(16,1))\n"
        "y_g = global_view(f16, [16, 16], (16,16):(1,16))\nx_s = shared_tensor(f16, [16, 16])\n"
        "copy(x_g, x_s)\ncopy(y_g, x_s)\n"
    )
    with pytest.raises(laycert.UnknownError, match="no plan found in the searched space"):
        laycert.synth(two_orders, "sm80")
    assert issubclass(laycert.InfeasibleError, laycert.LaycertError)
    assert issubclass(laycert.UnknownError, laycert.LaycertError)
