"""Pippenger MSM on plain Python ints, for G1 and G2 alike (the reference, not the record)."""

from __future__ import annotations

from typing import Any

from cuzk_core.curve.ops import CurveOps
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.timing import Timer

SCALAR_BITS = FR_MODULUS.bit_length()
MAX_AUTO_WINDOW = 16


def window_count(window_bits: int, signed: bool) -> int:
    """Windows needed to cover a scalar below r (one more bit for the carry of signed digits)."""
    return -(-(SCALAR_BITS + (1 if signed else 0)) // window_bits)


def auto_window_bits(n: int, signed: bool) -> int:
    """The window minimizing bucket additions plus bucket reduction for ``n`` points."""

    def cost(c: int) -> int:
        buckets = 1 << (c - 1 if signed else c)
        return window_count(c, signed) * (n + 2 * buckets)

    return min(range(1, MAX_AUTO_WINDOW + 1), key=cost)


def scalar_digits(k: int, window_bits: int, count: int, signed: bool) -> list[int]:
    """Base-2^c digits of ``k``, least significant first; signed ones lie in [−2^(c−1), 2^(c−1)]."""
    mask = (1 << window_bits) - 1
    half = 1 << (window_bits - 1)
    digits = []
    for _ in range(count):
        d = k & mask
        k >>= window_bits
        if signed and d > half:
            d -= 1 << window_bits
            k += 1
        digits.append(d)
    return digits


def pippenger(
    ops: CurveOps,
    points: list,
    scalars: list[int],
    window_bits: int | None,
    signed: bool,
    timer: Timer | None = None,
) -> Any:
    """Σ scalarsᵢ·pointsᵢ (affine points in, Jacobian out) by the bucket method."""
    timer = timer or Timer(level=0)
    c = window_bits or auto_window_bits(len(points), signed)
    windows = window_count(c, signed)
    with timer.span("digits", window_bits=c):
        digits = [scalar_digits(k, c, windows, signed) for k in scalars]
        negated = [ops.neg_affine(p) for p in points] if signed else points
    bucket_count = (1 << (c - 1)) if signed else (1 << c) - 1
    acc = ops.infinity
    add, add_affine, double = ops.add, ops.add_affine, ops.double
    for w in reversed(range(windows)):
        for _ in range(c):
            acc = double(acc)
        with timer.span("bucket_accumulation", window=w):
            buckets = [ops.infinity] * (bucket_count + 1)
            for i, point in enumerate(points):
                d = digits[i][w]
                if d > 0:
                    buckets[d] = add_affine(buckets[d], point)
                elif d < 0:
                    buckets[-d] = add_affine(buckets[-d], negated[i])
        with timer.span("bucket_reduction", window=w):
            running = total = ops.infinity
            for b in range(bucket_count, 0, -1):
                running = add(running, buckets[b])
                total = add(total, running)
        acc = add(acc, total)
    return acc
