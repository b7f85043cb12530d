"""Base field Fq arithmetic on plain Python ints (canonical values in [0, q))."""

from __future__ import annotations

from .constants import FQ_MODULUS

_SQRT_EXP = (FQ_MODULUS + 1) // 4
_HALF_Q = (FQ_MODULUS - 1) // 2


def fq_inv(a: int) -> int:
    """Return a⁻¹ mod q; raise ZeroDivisionError for a ≡ 0."""
    a %= FQ_MODULUS
    if a == 0:
        raise ZeroDivisionError("inverse of zero in Fq")
    return pow(a, -1, FQ_MODULUS)


def fq_sqrt(a: int) -> int | None:
    """Return a square root of a mod q, or None if a is a non-residue (q ≡ 3 mod 4)."""
    a %= FQ_MODULUS
    s = pow(a, _SQRT_EXP, FQ_MODULUS)
    return s if s * s % FQ_MODULUS == a else None


def fq_is_lexicographically_largest(y: int) -> bool:
    """Return True if y > (q − 1)/2: the zcash sign bit of a compressed point."""
    return y % FQ_MODULUS > _HALF_Q
