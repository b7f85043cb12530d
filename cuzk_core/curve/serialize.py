"""Zcash-format point encoding, as bellperson and blstrs write it.

Coordinates are big-endian, Fq2 elements are written c1 then c0. The top three bits of byte 0
are flags: 0x80 compressed, 0x40 point at infinity (all other bits zero), 0x20 (compressed only)
y is the lexicographically larger of ±y. Decoding validates everything an untrusted input can get
wrong and raises PointDecodingError saying what.
"""

from __future__ import annotations

from ..field.constants import FQ_BYTES, FQ_MODULUS
from ..field.fq import fq_is_lexicographically_largest, fq_sqrt
from ..field.tower import (
    Fq2,
    fq2_add,
    fq2_is_lexicographically_largest,
    fq2_mul,
    fq2_neg,
    fq2_sqr,
    fq2_sqrt,
)
from .g1 import G1_B, G1Affine, g1_in_subgroup, g1_is_on_curve
from .g2 import G2_B, G2Affine, g2_in_subgroup, g2_is_on_curve

_COMPRESSED = 0x80
_INFINITY = 0x40
_SIGN = 0x20
_FLAGS = _COMPRESSED | _INFINITY | _SIGN


class PointDecodingError(ValueError):
    """Bytes that do not encode a valid point: wrong length, bad flags, off-curve, ..."""


def _fq_to_bytes(x: int) -> bytes:
    return x.to_bytes(FQ_BYTES, "big")


def _encode(coords: list[int], flags: int) -> bytes:
    """Concatenate big-endian coordinates and set the flag bits of byte 0."""
    out = bytearray(b"".join(_fq_to_bytes(c) for c in coords))
    out[0] |= flags
    return bytes(out)


def _decode(data: bytes, group: str, coords: int, compressed: bool) -> tuple[int, list[int]] | None:
    """Check length and flags; return (sign bit, coordinates) or None for infinity."""
    size = coords * FQ_BYTES
    if len(data) != size:
        kind = "compressed" if compressed else "uncompressed"
        raise PointDecodingError(f"{kind} {group} point must be {size} bytes, got {len(data)}")
    flags = data[0] & _FLAGS
    if bool(flags & _COMPRESSED) != compressed:
        state = "not set" if compressed else "set"
        raise PointDecodingError(f"bad flag bits {flags:#04x}: compression flag {state}")
    if not compressed and flags & _SIGN:
        raise PointDecodingError(f"bad flag bits {flags:#04x}: sign flag on an uncompressed point")
    if flags & _INFINITY:
        if flags & _SIGN or data[0] & ~_FLAGS & 0xFF or any(data[1:]):
            raise PointDecodingError(
                f"bad flag bits {flags:#04x}: infinity must have no sign and all-zero coordinates"
            )
        return None
    body = bytes([data[0] & ~_FLAGS & 0xFF]) + data[1:]
    values = [int.from_bytes(body[i * FQ_BYTES : (i + 1) * FQ_BYTES], "big") for i in range(coords)]
    if any(v >= FQ_MODULUS for v in values):
        raise PointDecodingError(f"{group} coordinate is not below the field modulus")
    return int(bool(flags & _SIGN)), values


def g1_to_compressed(a: G1Affine) -> bytes:
    """Encode a G1 affine point (or None) as 48 zcash-compressed bytes."""
    if a is None:
        return _encode([0], _COMPRESSED | _INFINITY)
    x, y = a
    return _encode([x], _COMPRESSED | (_SIGN if fq_is_lexicographically_largest(y) else 0))


def g1_to_uncompressed(a: G1Affine) -> bytes:
    """Encode a G1 affine point (or None) as 96 zcash-uncompressed bytes (x ‖ y)."""
    if a is None:
        return _encode([0, 0], _INFINITY)
    return _encode([a[0], a[1]], 0)


def _g1_finish(a: tuple[int, int], check_subgroup: bool) -> G1Affine:
    if check_subgroup and not g1_in_subgroup(a):
        raise PointDecodingError("G1 point is not in the prime-order subgroup")
    return a


def g1_from_compressed(data: bytes, *, check_subgroup: bool = True) -> G1Affine:
    """Decode 48 zcash-compressed bytes into a G1 affine point (None for infinity)."""
    decoded = _decode(data, "G1", 1, compressed=True)
    if decoded is None:
        return None
    sign, (x,) = decoded
    y = fq_sqrt(x * x * x + G1_B)
    if y is None:
        raise PointDecodingError("G1 point is not on the curve")
    if fq_is_lexicographically_largest(y) != sign:
        y = FQ_MODULUS - y
    return _g1_finish((x, y), check_subgroup)


def g1_from_uncompressed(data: bytes, *, check_subgroup: bool = True) -> G1Affine:
    """Decode 96 zcash-uncompressed bytes into a G1 affine point (None for infinity)."""
    decoded = _decode(data, "G1", 2, compressed=False)
    if decoded is None:
        return None
    _, (x, y) = decoded
    if not g1_is_on_curve((x, y)):
        raise PointDecodingError("G1 point is not on the curve")
    return _g1_finish((x, y), check_subgroup)


def g2_to_compressed(a: G2Affine) -> bytes:
    """Encode a G2 affine point (or None) as 96 zcash-compressed bytes (x.c1 ‖ x.c0)."""
    if a is None:
        return _encode([0, 0], _COMPRESSED | _INFINITY)
    (x0, x1), y = a
    return _encode([x1, x0], _COMPRESSED | (_SIGN if fq2_is_lexicographically_largest(y) else 0))


def g2_to_uncompressed(a: G2Affine) -> bytes:
    """Encode a G2 affine point (or None) as 192 uncompressed bytes: x.c1, x.c0, y.c1, y.c0."""
    if a is None:
        return _encode([0, 0, 0, 0], _INFINITY)
    (x0, x1), (y0, y1) = a
    return _encode([x1, x0, y1, y0], 0)


def _g2_finish(a: tuple[Fq2, Fq2], check_subgroup: bool) -> G2Affine:
    if check_subgroup and not g2_in_subgroup(a):
        raise PointDecodingError("G2 point is not in the prime-order subgroup")
    return a


def g2_from_compressed(data: bytes, *, check_subgroup: bool = True) -> G2Affine:
    """Decode 96 zcash-compressed bytes into a G2 affine point (None for infinity)."""
    decoded = _decode(data, "G2", 2, compressed=True)
    if decoded is None:
        return None
    sign, (x1, x0) = decoded
    x = (x0, x1)
    y = fq2_sqrt(fq2_add(fq2_mul(fq2_sqr(x), x), G2_B))
    if y is None:
        raise PointDecodingError("G2 point is not on the curve")
    if fq2_is_lexicographically_largest(y) != sign:
        y = fq2_neg(y)
    return _g2_finish((x, y), check_subgroup)


def g2_from_uncompressed(data: bytes, *, check_subgroup: bool = True) -> G2Affine:
    """Decode 192 zcash-uncompressed bytes into a G2 affine point (None for infinity)."""
    decoded = _decode(data, "G2", 4, compressed=False)
    if decoded is None:
        return None
    _, (x1, x0, y1, y0) = decoded
    a = ((x0, x1), (y0, y1))
    if not g2_is_on_curve(a):
        raise PointDecodingError("G2 point is not on the curve")
    return _g2_finish(a, check_subgroup)
