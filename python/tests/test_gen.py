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
