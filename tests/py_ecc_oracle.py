"""py_ecc, the tests' independent oracle: cuzk's points and Fq12 elements as py_ecc's and back,
an MSM by py_ecc's arithmetic, and a Groth16 verifier reading cuzk's files with its own parser.

It shares no code with cuzk_core: points are plain int tuples (None at infinity), the zcash
compressed encoding is decoded by py_ecc, the uncompressed one here (big-endian coordinates, Fq2
as c1 then c0, flags in the top three bits).
"""

from __future__ import annotations

import json
from pathlib import Path

from py_ecc.bls.point_compression import decompress_G1, decompress_G2
from py_ecc.fields import optimized_bls12_381_FQ as FQ
from py_ecc.fields import optimized_bls12_381_FQ2 as FQ2
from py_ecc.optimized_bls12_381 import (
    FQ12,
    Z1,
    Z2,
    add,
    b,
    b2,
    curve_order,
    final_exponentiate,
    is_inf,
    is_on_curve,
    multiply,
    neg,
    normalize,
)
from py_ecc.optimized_bls12_381.optimized_pairing import miller_loop

_MASK = (1 << 381) - 1


def to_py_g1(point):
    """An affine G1 point (None at infinity) as py_ecc's projective point."""
    return Z1 if point is None else (FQ(point[0]), FQ(point[1]), FQ(1))


def to_py_g2(point):
    """An affine G2 point ((x.c0, x.c1), (y.c0, y.c1)) or None as py_ecc's projective point."""
    if point is None:
        return Z2
    return (FQ2(list(point[0])), FQ2(list(point[1])), FQ2([1, 0]))


def from_py_g1(point):
    """py_ecc's projective G1 point as an affine int pair (None at infinity)."""
    if is_inf(point):
        return None
    x, y = normalize(point)
    return (x.n, y.n)


def from_py_g2(point):
    """py_ecc's projective G2 point as affine Fq2 pairs (None at infinity)."""
    if is_inf(point):
        return None
    x, y = normalize(point)
    return (tuple(x.coeffs), tuple(y.coeffs))


def to_py_fq12(element) -> FQ12:
    """An Fq12 tower element (Fq6 pair of Fq2 triples) in py_ecc's basis of Fq[w]/(w¹² − 2w⁶ + 2):
    the same w, and u = w⁶ − 1."""
    coeffs = [0] * 12
    (x0, x2, x4), (x1, x3, x5) = element
    for i, (c0, c1) in enumerate((x0, x1, x2, x3, x4, x5)):
        coeffs[i] += c0 - c1
        coeffs[i + 6] += c1
    return FQ12(coeffs)


def msm_g1(points: list, scalars: list[int]):
    """``Σ kᵢ·Pᵢ`` in G1 by py_ecc's arithmetic (affine, None at infinity)."""
    total = Z1
    for point, k in zip(points, scalars, strict=True):
        total = add(total, multiply(to_py_g1(point), k))
    return from_py_g1(total)


def _coord(data: bytes) -> int:
    return int.from_bytes(data, "big") & _MASK


def _g1_uncompressed(data: bytes):
    if data[0] & 0x40:
        return Z1
    point = (FQ(_coord(data[:48])), FQ(_coord(data[48:])), FQ(1))
    assert is_on_curve(point, b)
    return point


def _g2_uncompressed(data: bytes):
    if data[0] & 0x40:
        return (FQ2([1, 0]), FQ2([1, 0]), FQ2([0, 0]))
    x = FQ2([_coord(data[48:96]), _coord(data[:48])])
    y = FQ2([_coord(data[144:192]), _coord(data[96:144])])
    point = (x, y, FQ2([1, 0]))
    assert is_on_curve(point, b2)
    return point


def read_vk(data: bytes) -> dict:
    """Parse bellperson's VerifyingKey layout."""
    offsets = {"alpha_g1": (0, 96), "beta_g1": (96, 96), "beta_g2": (192, 192)}
    offsets |= {"gamma_g2": (384, 192), "delta_g1": (576, 96), "delta_g2": (672, 192)}
    vk = {}
    for name, (start, size) in offsets.items():
        parse = _g1_uncompressed if size == 96 else _g2_uncompressed
        vk[name] = parse(data[start : start + size])
    count = int.from_bytes(data[864:868], "big")
    vk["ic"] = [_g1_uncompressed(data[868 + 96 * i : 964 + 96 * i]) for i in range(count)]
    assert len(data) == 868 + 96 * count
    return vk


def read_proof(data: bytes):
    """Decode a 192-byte A‖B‖C proof with py_ecc's zcash decompression."""
    assert len(data) == 192
    a = decompress_G1(int.from_bytes(data[:48], "big"))
    b_z1 = int.from_bytes(data[48:96], "big")
    b_z2 = int.from_bytes(data[96:144], "big")
    b_point = decompress_G2((b_z1, b_z2))
    c = decompress_G1(int.from_bytes(data[144:], "big"))
    return a, b_point, c


def verify(vk_bytes: bytes, proof_bytes: bytes, public: list[int]) -> bool:
    """The Groth16 equation with py_ecc's pairing: one product of four Miller loops."""
    vk = read_vk(vk_bytes)
    a, b_point, c = read_proof(proof_bytes)
    if len(public) != len(vk["ic"]) - 1 or any(x >= curve_order for x in public):
        return False
    ic = vk["ic"][0]
    for x, point in zip(public, vk["ic"][1:], strict=True):
        ic = add(ic, multiply(point, x))
    f = FQ12.one()
    pairs = [(a, b_point), (neg(vk["alpha_g1"]), vk["beta_g2"])]
    pairs += [(neg(ic), vk["gamma_g2"]), (neg(c), vk["delta_g2"])]
    for p, q in pairs:
        if not (is_inf(p) or is_inf(q)):
            f = f * miller_loop(q, p, final_exponentiate=False)
    return final_exponentiate(f) == FQ12.one()


def verify_files(folder: Path) -> bool:
    """Verify ``folder``'s vk.bin, proof.bin and public.json."""
    public = [int(x) for x in json.loads((folder / "public.json").read_text())]
    return verify((folder / "vk.bin").read_bytes(), (folder / "proof.bin").read_bytes(), public)
