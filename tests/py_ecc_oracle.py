"""An independent Groth16 verifier on py_ecc, reading cuzk's files with its own small parser.

It shares no code with cuzk_core: the zcash compressed encoding is decoded by py_ecc, the
uncompressed one here (big-endian coordinates, Fq2 as c1 then c0, flags in the top three bits).
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
    add,
    b,
    b2,
    curve_order,
    final_exponentiate,
    is_inf,
    is_on_curve,
    multiply,
    neg,
)
from py_ecc.optimized_bls12_381.optimized_pairing import miller_loop

_MASK = (1 << 381) - 1


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
