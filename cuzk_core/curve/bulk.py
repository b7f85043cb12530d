"""Bulk zcash *uncompressed* encoding of point batches, in numpy (params files hold millions).

Per-point encoding and all the validation rules live in :mod:`cuzk_core.curve.serialize`; this
module converts whole arrays between the on-disk layout (big-endian coordinates, Fq2 as c1 then
c0, flag bits in the first byte) and the canonical layout of :mod:`cuzk_core.layout`.
"""

from __future__ import annotations

import numpy as np

from cuzk_core.interop.montgomery import FQ
from cuzk_core.interop.points import CHUNK_POINTS, first_problem, off_curve_g1, off_curve_g2
from cuzk_core.layout import FQ_LIMBS, G1Affines, G2Affines

G1_UNCOMPRESSED = 96
G2_UNCOMPRESSED = 192
_FLAG_COMPRESSED = 0x80
_FLAG_INFINITY = 0x40
_FLAG_SIGN = 0x20
_FQ = 48
_TO_MONTGOMERY = FQ.constant(FQ.radix % FQ.modulus, 1)
"""R² mod q as digits: a Montgomery product with it puts a canonical value in Montgomery form."""


class BulkDecodingError(ValueError):
    """A batch holds a point that is malformed; the message names its index."""


def _be_to_limbs(coords: np.ndarray) -> np.ndarray:
    """``(..., 48)`` big-endian bytes → ``(..., 6)`` little-endian uint64 limbs."""
    flipped = np.ascontiguousarray(coords[..., ::-1])
    return flipped.view("<u8").astype(np.uint64).reshape(*coords.shape[:-1], FQ_LIMBS)


def _limbs_to_be(limbs: np.ndarray) -> np.ndarray:
    """``(..., 6)`` limbs → ``(..., 48)`` big-endian bytes."""
    raw = np.ascontiguousarray(limbs, dtype="<u8").view(np.uint8)
    return raw.reshape(*limbs.shape[:-1], _FQ)[..., ::-1]


def _split_flags(raw: np.ndarray, what: str, first: int) -> tuple[np.ndarray, np.ndarray]:
    """Check and strip the flag bits of each encoding; return (infinity mask, cleaned bytes).

    Errors number the points from ``first`` (the batch's index in a larger one)."""
    flags = raw[:, 0] & 0xE0
    bad = np.nonzero((flags & (_FLAG_COMPRESSED | _FLAG_SIGN)) != 0)[0]
    if len(bad):
        raise BulkDecodingError(f"{what} {first + bad[0]}: bad flag bits for an uncompressed point")
    infinity = (flags & _FLAG_INFINITY) != 0
    cleaned = raw.copy()
    cleaned[:, 0] &= 0x1F
    nonzero_inf = np.nonzero(infinity & cleaned.any(axis=1))[0]
    if len(nonzero_inf):
        index = first + nonzero_inf[0]
        raise BulkDecodingError(f"{what} {index}: infinity flag with nonzero coordinates")
    return infinity, cleaned


def _check_on_curve(batch: G1Affines | G2Affines, off_curve, what: str, first: int) -> None:
    """Every finite point has coordinates below q and satisfies its curve's equation.

    A key for 2^20 constraints holds ~5 million points: checked point by point in Python ints
    that is 2 µs (G1) to 6 µs (G2) each on one core, so the check runs in numpy instead (the
    snarkjs reader's Montgomery products, interop/montgomery.py), chunk by chunk on every core.
    """
    coords = batch.element_rows()

    def check(start: int) -> str | None:
        finite = np.nonzero(~batch.infinity[start : start + CHUNK_POINTS])[0]
        points = coords[start : start + CHUNK_POINTS][finite]
        if not len(points):
            return None
        in_range = FQ.below_modulus(points).all(axis=1)
        columns = range(points.shape[1])
        digits = np.stack([FQ.mul(FQ.to_digits(points[:, c]), _TO_MONTGOMERY) for c in columns])
        bad = np.nonzero(~in_range | off_curve(digits))[0]
        return f"{what} {first + start + finite[bad[0]]}: not on the curve" if len(bad) else None

    problem = first_problem(len(batch), check)
    if problem is not None:
        raise BulkDecodingError(problem)


def g1_batch_from_uncompressed(data, what: str = "G1 point", first: int = 0) -> G1Affines:
    """Decode ``len(data) // 96`` points (bytes or a uint8 array); checks flags and the curve
    equation (not subgroups). Errors number the points from ``first``."""
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, G1_UNCOMPRESSED)
    infinity, cleaned = _split_flags(raw, what, first)
    coords = _be_to_limbs(cleaned.reshape(-1, 2, _FQ))
    batch = G1Affines(coords, infinity)
    _check_on_curve(batch, off_curve_g1, what, first)
    return batch


def g2_batch_from_uncompressed(data, what: str = "G2 point", first: int = 0) -> G2Affines:
    """Decode ``len(data) // 192`` points (bytes or a uint8 array); checks flags and the curve
    equation (not subgroups). Errors number the points from ``first``."""
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, G2_UNCOMPRESSED)
    infinity, cleaned = _split_flags(raw, what, first)
    # on disk each coordinate is c1 then c0; the canonical layout is c0 then c1
    coords = _be_to_limbs(cleaned.reshape(-1, 2, 2, _FQ)[:, :, ::-1, :])
    batch = G2Affines(coords, infinity)
    _check_on_curve(batch, off_curve_g2, what, first)
    return batch


def _with_flags(raw: np.ndarray, infinity: np.ndarray) -> bytes:
    raw = raw.copy()
    raw[infinity] = 0
    raw[infinity, 0] = _FLAG_INFINITY
    return raw.tobytes()


def g1_batch_to_uncompressed(batch: G1Affines) -> bytes:
    """Encode a batch as concatenated 96-byte uncompressed points."""
    raw = _limbs_to_be(batch.coords).reshape(len(batch), G1_UNCOMPRESSED)
    return _with_flags(raw, batch.infinity)


def g2_batch_to_uncompressed(batch: G2Affines) -> bytes:
    """Encode a batch as concatenated 192-byte uncompressed points."""
    raw = _limbs_to_be(batch.coords[:, :, ::-1, :]).reshape(len(batch), G2_UNCOMPRESSED)
    return _with_flags(raw, batch.infinity)
