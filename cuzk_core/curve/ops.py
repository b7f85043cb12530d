"""Scalar multiplication written once for G1 and G2, over the group operations in a CurveOps.

Points follow the g1/g2 conventions: Jacobian (X, Y, Z) with infinity where Z is zero, affine
(x, y) with None for infinity, and canonical coordinates. g1 and g2 each build one CurveOps
(G1_OPS, G2_OPS) and publish its methods under their g1_/g2_ names.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from ..field.constants import FR_MODULUS
from ..host_work import drained

T = TypeVar("T")
J = TypeVar("J")  # a Jacobian point
A = TypeVar("A")  # an affine point, None for infinity


class FixedBaseTable(NamedTuple):
    """Affine multiples d·2^(w·i)·base for every window i and digit d (index 0 is None)."""

    window_bits: int
    windows: list[list[Any]]


def wnaf_digits(k: int, width: int) -> list[int]:
    """Return the width-w NAF of k ≥ 0, least significant digit first (odd digits |d| < 2^(w−1))."""
    digits = []
    full = 1 << width
    half = full >> 1
    mask = full - 1
    while k:
        if k & 1:
            d = k & mask
            if d >= half:
                d -= full
            k -= d
        else:
            d = 0
        digits.append(d)
        k >>= 1
    return digits


def wnaf_window(bits: int) -> int:
    """Pick a wNAF window for a scalar of `bits` bits (table cost against additions saved)."""
    if bits < 24:
        return 2
    if bits < 96:
        return 4
    return 5


def fixed_base_window_bits(count: int) -> int:
    """Pick the window minimizing table building plus per-scalar additions for `count` scalars."""
    bits = FR_MODULUS.bit_length()
    return min(range(1, 17), key=lambda w: -(-bits // w) * ((1 << w) + count))


@dataclass(frozen=True, slots=True)
class CurveOps(Generic[J, A]):
    """The group operations of one curve group, and the algorithms built on them alone."""

    infinity: J
    add: Callable[[J, J], J]
    add_affine: Callable[[J, A], J]
    double: Callable[[J], J]
    neg_affine: Callable[[A], A]
    batch_to_affine: Callable[[list[J]], list[A]]
    step_ops: int = 24
    """Group operations per step of :meth:`mul_steps` and :meth:`fixed_base_mul_steps`: ~0.3 ms
    of pure Python (24 in G1; G2's operations cost about 2.7 times as much)."""

    def mul(self, p: J, k: int) -> J:
        """Return k·p for any integer k (not reduced mod r, so valid outside the subgroup)."""
        return drained(self.mul_steps(p, k))

    def mul_steps(self, p: J, k: int) -> Generator[None, None, J]:
        """:meth:`mul` a step at a time: it yields every ``step_ops`` digits and returns k·p,
        so host work beside a device can stop between steps."""
        n = abs(k)
        width = wnaf_window(n.bit_length())
        add_affine, double = self.add_affine, self.double
        twice = double(p)
        odd = [p]
        for _ in range((1 << (width - 2)) - 1):
            odd.append(self.add(odd[-1], twice))
        pos = self.batch_to_affine(odd)
        neg = [self.neg_affine(a) for a in pos]
        if k < 0:
            pos, neg = neg, pos
        acc = self.infinity
        digits, step = wnaf_digits(n, width), self.step_ops
        for top in range(len(digits), 0, -step):
            yield
            for d in reversed(digits[max(0, top - step) : top]):
                acc = double(acc)
                if d > 0:
                    acc = add_affine(acc, pos[d >> 1])
                elif d < 0:
                    acc = add_affine(acc, neg[-d >> 1])
        return acc

    def fixed_base_table(self, base_affine: A, window_bits: int) -> FixedBaseTable:
        """Precompute the window table for many scalar multiplications of one subgroup point."""
        if not 1 <= window_bits <= 20:
            raise ValueError(f"window_bits must be in 1..20, got {window_bits}")
        n_windows = -(-FR_MODULUS.bit_length() // window_bits)
        size = 1 << window_bits
        add_affine = self.add_affine
        flat: list[J] = []
        base = base_affine
        for _ in range(n_windows):
            acc = self.infinity
            flat.append(acc)
            for _ in range(size - 1):
                acc = add_affine(acc, base)
                flat.append(acc)
            base = self.batch_to_affine([add_affine(acc, base)])[0]
        affine = self.batch_to_affine(flat)
        windows = [affine[i * size : (i + 1) * size] for i in range(n_windows)]
        return FixedBaseTable(window_bits, windows)

    def fixed_base_mul(self, table: FixedBaseTable, k: int) -> J:
        """Return k·base (Jacobian) from a fixed-base table; k is reduced mod r."""
        return drained(self.fixed_base_mul_steps(table, k))

    def fixed_base_mul_steps(self, table: FixedBaseTable, k: int) -> Generator[None, None, J]:
        """:meth:`fixed_base_mul` a step of ``step_ops`` windows at a time."""
        k %= FR_MODULUS
        w = table.window_bits
        mask = (1 << w) - 1
        acc = self.infinity
        for first in range(0, len(table.windows), self.step_ops):
            yield
            for window in table.windows[first : first + self.step_ops]:
                d = k & mask
                if d:
                    acc = self.add_affine(acc, window[d])
                k >>= w
        return acc

    def multi_mul(self, points: list[A], scalars: list[int]) -> J:
        """Σ kᵢ·Pᵢ for affine points and scalars ≥ 0, by buckets (Pippenger): ~⌈b/c⌉·(n + 2^(c+1))
        group operations for n pairs of b-bit scalars in c-bit windows, against ~1.2·b each
        for one :meth:`mul` a pair (2,166 full-width pairs: ~7× fewer)."""
        pairs = [(p, k) for p, k in zip(points, scalars, strict=True) if k and p is not None]
        if not pairs:
            return self.infinity
        if any(k < 0 for _, k in pairs):
            raise ValueError("multi_mul takes scalars ≥ 0")
        bits = max(k.bit_length() for _, k in pairs)
        c = min(range(1, 17), key=lambda w: -(-bits // w) * (len(pairs) + (2 << w)))
        if -(-bits // c) * (len(pairs) + (2 << c)) >= len(pairs) * bits * 6 // 5:
            total = self.infinity  # a few pairs: one multiplication each is cheaper
            for p, k in pairs:
                total = self.add(total, self.mul(self.add_affine(self.infinity, p), k))
            return total
        mask, add, add_affine = (1 << c) - 1, self.add, self.add_affine
        acc = self.infinity
        for window in reversed(range(-(-bits // c))):
            for _ in range(c):
                acc = self.double(acc)
            buckets = [self.infinity] * (1 << c)
            shift = window * c
            for p, k in pairs:
                digit = (k >> shift) & mask
                if digit:
                    buckets[digit] = add_affine(buckets[digit], p)
            running = total = self.infinity
            for digit in range(mask, 0, -1):  # Σ d·bucket[d] as a sum of running sums
                running = add(running, buckets[digit])
                total = add(total, running)
            acc = add(acc, total)
        return acc

    def fixed_base_batch(self, base_affine: A, scalars: list[int]) -> list[A]:
        """Return [k·base for k in scalars] as affine points: one table, one batch normalization."""
        if base_affine is None or not scalars:
            return [base_affine] * len(scalars)  # all at infinity, or none
        table = self.fixed_base_table(base_affine, fixed_base_window_bits(len(scalars)))
        fixed_base_mul = self.fixed_base_mul
        return self.batch_to_affine([fixed_base_mul(table, k) for k in scalars])
