"""Vectorized Montgomery arithmetic on limb arrays, for converting snarkjs data in bulk.

snarkjs stores curve points with coordinates in Montgomery form (x·R mod q, R = 2^384) and
coefficients as c·R² mod r (R = 2^256). Decoding is a Montgomery reduction, done here with numpy
on whole arrays: values are split into 32-bit digits held in uint64 lanes, so every product and
partial sum fits without overflow. The same product lets the readers check the curve equation
in bulk, before converting.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

from cuzk_core.chunks import each_chunk
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS

_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
LANES = 1 << 14
"""Rows a chunk of :func:`in_chunks` holds (a chunk a thread when threaded)."""


def _digits(value: int, count: int) -> np.ndarray:
    return np.array([(value >> (32 * i)) & 0xFFFFFFFF for i in range(count)], dtype=np.uint64)


@attrs.frozen(eq=False)
class MontgomeryField:
    """A prime field with radix ``R = 2^(64·limbs)``, on ``(..., limbs)`` uint64 limb arrays."""

    modulus: int
    limbs: int

    @property
    def width(self) -> int:
        """32-bit digits per element."""
        return 2 * self.limbs

    @property
    def radix(self) -> int:
        """R = 2^(64·limbs)."""
        return 1 << (64 * self.limbs)

    def _modulus_digits(self) -> np.ndarray:
        return _digits(self.modulus, self.width)

    def _n_prime(self) -> np.uint64:
        return np.uint64((-pow(self.modulus, -1, 1 << 32)) % (1 << 32))

    def to_digits(self, limbs: np.ndarray) -> np.ndarray:
        """``(n, limbs)`` uint64 → ``(2·limbs, n)`` 32-bit digits, least significant row first.

        Digit-major, so every step below works on contiguous rows of n lanes.
        """
        limbs = np.asarray(limbs, dtype=np.uint64).reshape(-1, self.limbs)
        out = np.empty((self.width, len(limbs)), dtype=np.uint64)
        out[0::2] = (limbs & _MASK).T
        out[1::2] = (limbs >> _SHIFT).T
        return out

    def from_digits(self, digits: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`to_digits` (digits normalized below 2^32): ``(n, limbs)``."""
        return np.ascontiguousarray((digits[0::2] | (digits[1::2] << _SHIFT)).T)

    def below_modulus(self, limbs: np.ndarray) -> np.ndarray:
        """Elementwise ``value < modulus`` over the last axis of a limb array (a boolean mask)."""
        limbs = np.asarray(limbs, dtype=np.uint64)
        bound = _limbs(self.modulus, self.limbs)
        less = np.zeros(limbs.shape[:-1], dtype=bool)
        decided = np.zeros(limbs.shape[:-1], dtype=bool)
        for j in range(self.limbs - 1, -1, -1):
            column = limbs[..., j]
            less |= ~decided & (column < bound[j])
            decided |= column != bound[j]
        return less

    def _redc(self, t: np.ndarray) -> np.ndarray:
        """Montgomery reduction of ``t`` (``(2·width + 1, n)`` unnormalized digits, value < N·R)."""
        k = self.width
        n_digits = self._modulus_digits()[:, None]
        n_prime = self._n_prime()
        for i in range(k):
            m = ((t[i] & _MASK) * n_prime) & _MASK
            product = n_digits * m[None, :]
            t[i : i + k] += product & _MASK
            t[i + 1 : i + k + 1] += product >> _SHIFT
            t[i + 1] += t[i] >> _SHIFT
        result = t[k:]
        for j in range(k):
            result[j + 1] += result[j] >> _SHIFT
            result[j] &= _MASK
        return self._reduce_once(result[:k])

    def _reduce_once(self, digits: np.ndarray) -> np.ndarray:
        """Normalized digits below 2N → below N: subtract N from the lanes at or above it."""
        n_digits = self._modulus_digits()
        less = np.zeros(digits.shape[1], dtype=bool)
        decided = np.zeros(digits.shape[1], dtype=bool)
        for j in range(self.width - 1, -1, -1):
            less |= ~decided & (digits[j] < n_digits[j])
            decided |= digits[j] != n_digits[j]
        out = np.ascontiguousarray(digits)
        big = ~less
        if big.any():
            out[:, big] = _subtract_digits(out[:, big], n_digits[:, None])
        return out

    def from_montgomery(
        self, limbs: np.ndarray, times: int = 1, *, threads: bool = False
    ) -> np.ndarray:
        """Multiply by R⁻¹ ``times`` times: Montgomery form (times=1) or R²-scaled (2) → canonical.

        Inputs must be below the modulus (check with :meth:`below_modulus`). Values go in chunks
        (see :func:`in_chunks`; ``threads`` for a caller not on a pool's thread already, such
        as a zkey's millions of coefficients).
        """
        flat = np.asarray(limbs, dtype=np.uint64).reshape(-1, self.limbs)
        out = in_chunks(
            lambda start, stop: self._from_montgomery(flat[start:stop], times), flat, threads
        )
        return out.reshape(limbs.shape)

    def add_limbs(self, a: np.ndarray, b: np.ndarray, *, threads: bool = False) -> np.ndarray:
        """``a + b mod N`` on ``(n, limbs)`` limb arrays (below the modulus), in chunks: 2^22
        values in 0.27 s instead of 2.3 s for whole-array digit rows on this VM."""
        a = np.asarray(a, dtype=np.uint64)
        b = np.asarray(b, dtype=np.uint64)

        def part(start: int, stop: int) -> np.ndarray:
            return self.from_digits(
                self.add(self.to_digits(a[start:stop]), self.to_digits(b[start:stop]))
            )

        return in_chunks(part, a, threads)

    def _from_montgomery(self, limbs: np.ndarray, times: int) -> np.ndarray:
        digits = self.to_digits(limbs)
        for _ in range(times):
            t = np.zeros((2 * self.width + 1, digits.shape[1]), dtype=np.uint64)
            t[: self.width] = digits
            digits = self._redc(t)
        return self.from_digits(digits)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Montgomery product ``a·b·R⁻¹`` of digit arrays ``(width, n)`` (inputs below modulus);
        ``b`` may be ``(width, 1)``, one value for every lane."""
        k = self.width
        t = np.zeros((2 * k + 1, a.shape[1]), dtype=np.uint64)
        for i in range(k):
            product = a[i][None, :] * b
            t[i : i + k] += product & _MASK
            t[i + 1 : i + k + 1] += product >> _SHIFT
        return self._redc(t)

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a + b mod N`` on normalized digit arrays."""
        total = a + b
        for j in range(self.width - 1):
            total[j + 1] += total[j] >> _SHIFT
            total[j] &= _MASK
        return self._reduce_once(total)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a − b mod N`` on normalized digit arrays."""
        return self.add(a, _subtract_digits(self._modulus_digits()[:, None], b))

    def constant(self, value: int, n: int) -> np.ndarray:
        """``value`` in Montgomery form as digits for ``n`` lanes."""
        montgomery = value * self.radix % self.modulus
        return np.repeat(_digits(montgomery, self.width)[:, None], n, axis=1)


def in_chunks(
    work: Callable[[int, int], np.ndarray], like: np.ndarray, threads: bool
) -> np.ndarray:
    """``work(start, stop)`` over chunks of :data:`LANES` rows of ``like``, into a new array of
    its shape (see :mod:`cuzk_core.chunks`: a chunk's digit rows stay in the caches; with
    ``threads`` the chunks run on every core)."""
    if len(like) <= LANES:
        return work(0, len(like))
    out = np.empty_like(like)

    def chunk(start: int) -> None:
        out[start : start + LANES] = work(start, min(len(like), start + LANES))

    each_chunk(len(like), LANES, chunk, threads)
    return out


def _limbs(value: int, count: int) -> np.ndarray:
    return np.array([(value >> (64 * i)) & (2**64 - 1) for i in range(count)], dtype=np.uint64)


def _subtract_digits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a − b`` on normalized digit-major arrays, assuming ``a ≥ b`` (the last borrow dropped)."""
    out: np.ndarray = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.uint64)
    borrow = np.zeros(out.shape[1:], dtype=np.uint64)
    for j in range(out.shape[0]):
        d = a[j] + np.uint64(1 << 32) - b[j] - borrow
        out[j] = d & _MASK
        borrow = np.uint64(1) - (d >> _SHIFT)
    return out


FQ = MontgomeryField(FQ_MODULUS, 6)
"""The base field q with snarkjs's radix 2^384."""
FR = MontgomeryField(FR_MODULUS, 4)
"""The scalar field r with snarkjs's radix 2^256."""
