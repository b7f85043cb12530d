"""Zcash point encoding: agreement with py_ecc.bls.point_compression, round trips, rejections."""

import pytest
from py_ecc.bls.point_compression import compress_G1, compress_G2, decompress_G1, decompress_G2
from py_ecc_oracle import from_py_g1, from_py_g2, to_py_g1, to_py_g2

from cuzk_core.conformance.inputs import off_curve_x, off_subgroup_point, random_points
from cuzk_core.curve import G1_GENERATOR, g1_from_affine, g1_mul, g1_neg, g1_to_affine
from cuzk_core.curve.g2 import G2_GENERATOR, g2_from_affine, g2_mul, g2_neg, g2_to_affine
from cuzk_core.curve.serialize import (
    PointDecodingError,
    g1_from_compressed,
    g1_from_uncompressed,
    g1_to_compressed,
    g1_to_uncompressed,
    g2_from_compressed,
    g2_from_uncompressed,
    g2_to_compressed,
    g2_to_uncompressed,
)
from cuzk_core.field import FQ_MODULUS, FR_MODULUS

Q = FQ_MODULUS
R = FR_MODULUS


def g1_points(rng):
    """Infinity, the generator, its negation and random subgroup points."""
    g = g1_from_affine(G1_GENERATOR)
    return [None, *(g1_to_affine(g1_mul(g, k)) for k in (1, R - 1)), *random_points("g1", rng, 4)]


def g2_points(rng):
    g = g2_from_affine(G2_GENERATOR)
    return [None, *(g2_to_affine(g2_mul(g, k)) for k in (1, R - 1)), *random_points("g2", rng, 3)]


def with_flags(data: bytes, set_bits: int = 0, clear_bits: int = 0) -> bytes:
    out = bytearray(data)
    out[0] = (out[0] | set_bits) & ~clear_bits & 0xFF
    return bytes(out)


def test_g1_compressed_matches_py_ecc(rng):
    for a in g1_points(rng):
        data = g1_to_compressed(a)
        assert len(data) == 48
        assert data == compress_G1(to_py_g1(a)).to_bytes(48, "big")
        assert g1_from_compressed(data) == a
        assert from_py_g1(decompress_G1(int.from_bytes(data, "big"))) == a


def test_g2_compressed_matches_py_ecc(rng):
    for a in g2_points(rng):
        data = g2_to_compressed(a)
        assert len(data) == 96
        z1, z2 = compress_G2(to_py_g2(a))
        assert data == z1.to_bytes(48, "big") + z2.to_bytes(48, "big")
        assert g2_from_compressed(data) == a
        assert from_py_g2(decompress_G2((z1, z2))) == a


def test_g2_negation_flips_sign_bit(rng):
    """±y differ only in the sign flag (the c1/c0 tie rule itself is tested in test_field)."""
    for a in g2_points(rng)[1:3]:
        b = g2_to_affine(g2_neg(g2_from_affine(a)))
        assert g2_to_compressed(a)[0] & 0x20 != g2_to_compressed(b)[0] & 0x20
        assert g2_from_compressed(g2_to_compressed(b)) == b


def test_uncompressed_layout_and_round_trips(rng):
    for a in g1_points(rng)[1:]:
        data = g1_to_uncompressed(a)
        assert data == a[0].to_bytes(48, "big") + a[1].to_bytes(48, "big")
        assert g1_from_uncompressed(data) == a
    for a in g2_points(rng)[1:]:
        (x0, x1), (y0, y1) = a
        data = g2_to_uncompressed(a)
        assert data == b"".join(c.to_bytes(48, "big") for c in (x1, x0, y1, y0))
        assert g2_from_uncompressed(data) == a


def test_infinity_encodings():
    assert g1_to_compressed(None) == bytes([0xC0]) + bytes(47)
    assert g1_to_uncompressed(None) == bytes([0x40]) + bytes(95)
    assert g2_to_compressed(None) == bytes([0xC0]) + bytes(95)
    assert g2_to_uncompressed(None) == bytes([0x40]) + bytes(191)
    assert g1_from_compressed(g1_to_compressed(None)) is None
    assert g1_from_uncompressed(g1_to_uncompressed(None)) is None
    assert g2_from_compressed(g2_to_compressed(None)) is None
    assert g2_from_uncompressed(g2_to_uncompressed(None)) is None


@pytest.mark.parametrize(
    ("decode", "size"),
    [
        (g1_from_compressed, 48),
        (g1_from_uncompressed, 96),
        (g2_from_compressed, 96),
        (g2_from_uncompressed, 192),
    ],
)
def test_wrong_lengths_rejected(decode, size):
    for n in (0, size - 1, size + 1, 2 * size):
        with pytest.raises(PointDecodingError, match=f"must be {size} bytes"):
            decode(bytes([0xC0]) + bytes(n - 1) if n else b"")


def test_bad_flags_rejected():
    g1c = g1_to_compressed(G1_GENERATOR)
    g1u = g1_to_uncompressed(G1_GENERATOR)
    g2c = g2_to_compressed(G2_GENERATOR)
    g2u = g2_to_uncompressed(G2_GENERATOR)
    cases = [
        (g1_from_compressed, with_flags(g1c, clear_bits=0x80)),  # compressed bit missing
        (g1_from_uncompressed, with_flags(g1u, set_bits=0x80)),  # compressed bit on 96 bytes
        (g1_from_uncompressed, with_flags(g1u, set_bits=0x20)),  # sign on uncompressed
        (g1_from_compressed, bytes([0xE0]) + bytes(47)),  # infinity with sign
        (g1_from_compressed, bytes([0xC0]) + bytes(46) + b"\x01"),  # infinity, nonzero body
        (g1_from_compressed, with_flags(g1c, set_bits=0x40)),  # infinity flag on a point
        (g1_from_uncompressed, bytes([0x41]) + bytes(95)),
        (g2_from_compressed, with_flags(g2c, clear_bits=0x80)),
        (g2_from_uncompressed, with_flags(g2u, set_bits=0x80)),
        (g2_from_uncompressed, with_flags(g2u, set_bits=0x20)),
        (g2_from_compressed, bytes([0xE0]) + bytes(95)),
        (g2_from_uncompressed, bytes([0x40]) + bytes(190) + b"\x01"),
    ]
    for decode, data in cases:
        with pytest.raises(PointDecodingError, match="bad flag bits"):
            decode(data)


def test_coordinate_not_below_modulus_rejected():
    q_bytes = Q.to_bytes(48, "big")
    _, y = G1_GENERATOR
    with pytest.raises(PointDecodingError, match="not below the field modulus"):
        g1_from_compressed(with_flags(q_bytes, set_bits=0x80))
    with pytest.raises(PointDecodingError, match="not below the field modulus"):
        g1_from_uncompressed(q_bytes + y.to_bytes(48, "big"))
    with pytest.raises(PointDecodingError, match="not below the field modulus"):
        g1_from_uncompressed(G1_GENERATOR[0].to_bytes(48, "big") + (y + Q).to_bytes(48, "big"))
    g2c = g2_to_compressed(G2_GENERATOR)
    with pytest.raises(PointDecodingError, match="not below the field modulus"):
        g2_from_compressed(g2c[:48] + (Q + 1).to_bytes(48, "big"))  # x.c0 ≥ q
    with pytest.raises(PointDecodingError, match="not below the field modulus"):
        g2_from_compressed(with_flags(q_bytes, set_bits=0x80) + g2c[48:])  # x.c1 ≥ q


def test_off_curve_rejected(rng):
    x = off_curve_x("g1", rng)
    with pytest.raises(PointDecodingError, match="G1 point is not on the curve"):
        g1_from_compressed(with_flags(x.to_bytes(48, "big"), set_bits=0x80))
    gx, gy = G1_GENERATOR
    with pytest.raises(PointDecodingError, match="G1 point is not on the curve"):
        g1_from_uncompressed(gx.to_bytes(48, "big") + (gy + 1).to_bytes(48, "big"))
    x2 = off_curve_x("g2", rng)
    data = x2[1].to_bytes(48, "big") + x2[0].to_bytes(48, "big")
    with pytest.raises(PointDecodingError, match="G2 point is not on the curve"):
        g2_from_compressed(with_flags(data, set_bits=0x80))
    g2u = bytearray(g2_to_uncompressed(G2_GENERATOR))
    g2u[-1] ^= 1
    with pytest.raises(PointDecodingError, match="G2 point is not on the curve"):
        g2_from_uncompressed(bytes(g2u))


def test_points_outside_subgroup_rejected(rng):
    off1 = off_subgroup_point("g1", rng)
    for encode, decode in [
        (g1_to_compressed, g1_from_compressed),
        (g1_to_uncompressed, g1_from_uncompressed),
    ]:
        with pytest.raises(PointDecodingError, match="G1 point is not in the prime-order subgroup"):
            decode(encode(off1))
        assert decode(encode(off1), check_subgroup=False) == off1
    off2 = off_subgroup_point("g2", rng)
    for encode, decode in [
        (g2_to_compressed, g2_from_compressed),
        (g2_to_uncompressed, g2_from_uncompressed),
    ]:
        with pytest.raises(PointDecodingError, match="G2 point is not in the prime-order subgroup"):
            decode(encode(off2))
        assert decode(encode(off2), check_subgroup=False) == off2


def test_decoding_error_is_a_value_error():
    assert issubclass(PointDecodingError, ValueError)
    neg = g1_to_affine(g1_neg(g1_from_affine(G1_GENERATOR)))
    assert g1_to_compressed(neg)[0] & 0x20 != g1_to_compressed(G1_GENERATOR)[0] & 0x20
