"""snarkjs's point encoding, converted in bulk: little-endian Montgomery coordinates → canonical.

A G1 point is x‖y, a G2 point x.c0‖x.c1‖y.c0‖y.c1, each coordinate 48 bytes LE in Montgomery form
(x·2^384 mod q); the point at infinity is all zeros. Decoding checks every coordinate is below q
and every point is on its curve, and reports the first bad point by index; subgroup membership of
a key's many query points is ``cuzk check --key``'s (:mod:`cuzk_core.groth16.keycheck`). Encoding
(for the zkeys ``cuzk setup --zkey`` writes) is the same products the other way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk_core.chunks import each_chunk
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_BYTES
from cuzk_core.interop.montgomery import FQ
from cuzk_core.layout import FQ_LIMBS, G1Affines, G2Affines

G1_BYTES = 2 * FQ_BYTES
G2_BYTES = 4 * FQ_BYTES
CHUNK_POINTS = 1 << 14
"""Points converted per step (one thread's work), bounding temporary memory per thread."""

Allocator = Callable[[tuple[int, ...], str, str], np.ndarray]
"""``(shape, dtype, purpose) → zeroed array``: where converted bases are stored."""


def default_allocator(shape: tuple[int, ...], dtype: str, purpose: str) -> np.ndarray:
    """Plain host memory."""
    return np.zeros(shape, dtype=dtype)


def _coordinates(raw: np.ndarray, count: int) -> np.ndarray:
    """``(n, bytes)`` uint8 → ``(n, count, 6)`` uint64 limbs (still Montgomery form)."""
    return np.ascontiguousarray(raw).view("<u8").astype(np.uint64).reshape(-1, count, FQ_LIMBS)


def _fq2_mul(a0, a1, b0, b1):
    """(a0 + a1·u)(b0 + b1·u) with u² = −1, on Montgomery digit arrays: three products
    (Karatsuba), a product costing many additions here."""
    t0, t1 = FQ.mul(a0, b0), FQ.mul(a1, b1)
    cross = FQ.mul(FQ.add(a0, a1), FQ.add(b0, b1))
    return FQ.sub(t0, t1), FQ.sub(cross, FQ.add(t0, t1))


def _fq2_sqr(a0, a1):
    """(a0 + a1·u)² = (a0 + a1)(a0 − a1) + 2·a0·a1·u: two products."""
    a0a1 = FQ.mul(a0, a1)
    return FQ.mul(FQ.add(a0, a1), FQ.sub(a0, a1)), FQ.add(a0a1, a0a1)


def off_curve_g1(digits: np.ndarray) -> np.ndarray:
    """Mask of points (Montgomery digits ``(2, 12, n)``: x, y) with y² ≠ x³ + 4."""
    x, y = digits
    rhs = FQ.add(FQ.mul(FQ.mul(x, x), x), FQ.constant(4, x.shape[1]))
    return np.any(FQ.mul(y, y) != rhs, axis=0)


def off_curve_g2(digits: np.ndarray) -> np.ndarray:
    """Mask of points (digits ``(4, 12, n)``: x.c0, x.c1, y.c0, y.c1) with y² ≠ x³ + 4(1 + u)."""
    x0, x1, y0, y1 = digits
    sq0, sq1 = _fq2_sqr(x0, x1)
    cube0, cube1 = _fq2_mul(sq0, sq1, x0, x1)
    four = FQ.constant(4, x0.shape[1])
    rhs0, rhs1 = FQ.add(cube0, four), FQ.add(cube1, four)
    lhs0, lhs1 = _fq2_sqr(y0, y1)
    return np.any(lhs0 != rhs0, axis=0) | np.any(lhs1 != rhs1, axis=0)


VALID, NOT_BELOW_Q, OFF_CURVE = 0, 1, 2
"""A decoded point's status (the ``cuzk_decode_snarkjs_points`` hook's too)."""
PROBLEMS = {NOT_BELOW_Q: "has a coordinate not below q", OFF_CURVE: "is not on the curve"}
DECODE_CHUNK = 1 << 20
"""Points handed to a decoder at a time, bounding its buffers (~100 MB of G1, ~200 of G2)."""

Decoder = Callable[[np.ndarray, str], tuple[G1Affines | G2Affines, np.ndarray]]
"""``(raw (n, bytes) uint8, "g1" | "g2") → (canonical batch, status (n,) uint8)``."""

_GROUPS: dict[str, tuple[int, Callable[[np.ndarray], np.ndarray], type[G1Affines | G2Affines]]] = {
    "g1": (2, off_curve_g1, G1Affines),
    "g2": (4, off_curve_g2, G2Affines),
}


def _decode_chunk(
    raw: np.ndarray, start: int, group: str, out: np.ndarray, infinity: np.ndarray,
    status: np.ndarray,
) -> None:  # fmt: skip
    """Check and convert points ``start…`` into ``out``, ``infinity`` and ``status``."""
    coords, off_curve, _ = _GROUPS[group]
    chunk = _coordinates(raw[start : start + CHUNK_POINTS], coords)
    end = start + len(chunk)
    is_inf = ~chunk.reshape(len(chunk), coords * FQ_LIMBS).any(axis=1)
    below = FQ.below_modulus(chunk).all(axis=1)
    status[start:end] = np.where(below, VALID, NOT_BELOW_Q)
    candidates = np.nonzero(below & ~is_inf)[0]
    digits = np.stack([FQ.to_digits(chunk[candidates, c]) for c in range(coords)])
    off = off_curve(digits)
    status[start + candidates[off]] = OFF_CURVE
    good = candidates[~off]
    converted = np.zeros_like(chunk)
    converted[good] = FQ.from_montgomery(chunk[good])
    out[start:end] = converted.reshape(out[start:end].shape)
    infinity[start:end] = is_inf


def on_every_core(count: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(start)`` for the chunks of ``count`` points (each :data:`CHUNK_POINTS` from
    ``start``) on every core, results in chunk order."""
    return each_chunk(count, CHUNK_POINTS, work)


def first_problem(count: int, check: Callable[[int], str | None]) -> str | None:
    """Run ``check(start)`` on the chunks of ``count`` points on every core; the first problem
    in chunk order, or None."""
    return next((p for p in on_every_core(count, check) if p is not None), None)


def reference_decode(raw: np.ndarray, group: str) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """snarkjs points (``(n, 96)`` or ``(n, 192)`` bytes) → a canonical batch and each point's
    status, in numpy on every core: the oracle of ``cuzk_decode_snarkjs_points``. A point that
    is not valid comes out as zero coordinates."""
    batch_type = _GROUPS[group][2]
    batch = batch_type.empty(len(raw))
    status = np.zeros(len(raw), dtype=np.uint8)
    on_every_core(
        len(raw),
        lambda start: _decode_chunk(raw, start, group, batch.coords, batch.infinity, status),
    )
    return batch, status


def _from_snarkjs(
    raw: np.ndarray, group: str, where: str, alloc: Allocator, purpose: str,
    decode: Decoder | None,
) -> G1Affines | G2Affines:  # fmt: skip
    """Decode ``raw`` chunk by chunk with ``decode`` (the reference when None) into buffers from
    ``alloc``; the first bad point in file order is a FormatError naming it."""
    batch_type = _GROUPS[group][2]
    out = alloc((len(raw), *batch_type.POINT_SHAPE), "uint64", purpose)
    infinity = np.zeros(len(raw), dtype=bool)
    decode = decode or reference_decode
    for start in range(0, len(raw), DECODE_CHUNK):
        stop = min(len(raw), start + DECODE_CHUNK)
        batch, status = decode(raw[start:stop], group)
        bad = np.flatnonzero(status)
        if len(bad):
            problem = PROBLEMS.get(int(status[bad[0]]), f"has status {status[bad[0]]}")
            raise FormatError(f"{where}: point {start + bad[0]} {problem}")
        out[start:stop] = batch.coords
        infinity[start:stop] = batch.infinity
    return batch_type(out, infinity)


def g1_from_snarkjs(
    raw: np.ndarray, where: str, alloc: Allocator = default_allocator, purpose: str = "g1",
    decode: Decoder | None = None,
) -> G1Affines:  # fmt: skip
    """Decode ``(n, 96)`` bytes of snarkjs G1 points into a canonical batch (by ``decode``, a
    backend's ``cuzk_decode_snarkjs_points``, or the numpy reference)."""
    batch = _from_snarkjs(raw, "g1", where, alloc, purpose, decode)
    assert isinstance(batch, G1Affines)
    return batch


def g2_from_snarkjs(
    raw: np.ndarray, where: str, alloc: Allocator = default_allocator, purpose: str = "g2",
    decode: Decoder | None = None,
) -> G2Affines:  # fmt: skip
    """Decode ``(n, 192)`` bytes of snarkjs G2 points (x.c0, x.c1, y.c0, y.c1) into a batch."""
    batch = _from_snarkjs(raw, "g2", where, alloc, purpose, decode)
    assert isinstance(batch, G2Affines)
    return batch


_R_MOD_Q = FQ.radix % FQ.modulus
"""R mod q; its Montgomery form is R², and a Montgomery product with R² gives x·R."""


def _encode_chunk(coords: np.ndarray, start: int, out: np.ndarray) -> None:
    """Canonical limbs ``coords[start…]`` (``(n, k, 6)``) → Montgomery LE bytes in ``out``."""
    chunk = coords[start : start + CHUNK_POINTS]
    to_montgomery = FQ.constant(_R_MOD_Q, 1)  # broadcast over the lanes
    columns = range(chunk.shape[1])
    limbs = np.stack(
        [FQ.from_digits(FQ.mul(FQ.to_digits(chunk[:, c]), to_montgomery)) for c in columns], axis=1
    )
    out[start : start + len(chunk)] = limbs.astype("<u8").view(np.uint8).reshape(len(chunk), -1)


def _encode(batch: G1Affines | G2Affines, size: int) -> np.ndarray:
    """``(n, size)`` snarkjs bytes of a batch; points at infinity are all zero."""
    coords = np.ascontiguousarray(batch.element_rows(), dtype=np.uint64)
    out = np.zeros((len(batch), size), dtype=np.uint8)
    on_every_core(len(batch), lambda start: _encode_chunk(coords, start, out))
    out[np.asarray(batch.infinity, dtype=bool)] = 0
    return out


def g1_to_snarkjs(batch: G1Affines) -> np.ndarray:
    """Encode a canonical G1 batch as ``(n, 96)`` bytes of snarkjs points (infinity all zero),
    the inverse of :func:`g1_from_snarkjs`; chunks run on every core."""
    return _encode(batch, G1_BYTES)


def g2_to_snarkjs(batch: G2Affines) -> np.ndarray:
    """Encode a canonical G2 batch as ``(n, 192)`` bytes: x.c0, x.c1, y.c0, y.c1."""
    return _encode(batch, G2_BYTES)
