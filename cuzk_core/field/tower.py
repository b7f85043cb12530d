"""The BLS12-381 extension tower on int tuples: Fq2, Fq6 and Fq12.

Fq2 = Fq[u]/(u² + 1) is (c0, c1) meaning c0 + c1·u; Fq6 = Fq2[v]/(v³ − ξ) with ξ = u + 1 is
(a0, a1, a2) meaning a0 + a1·v + a2·v²; Fq12 = Fq6[w]/(w² − v) is (b0, b1) meaning b0 + b1·w.
Every coefficient is a canonical int in [0, q), so equal elements are equal tuples. The Fq6
multiplication is written on ints with one reduction per output coefficient, since it carries
the pairing's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .constants import FQ_MODULUS
from .fq import fq_sqrt

Fq2 = tuple[int, int]
Fq6 = tuple[Fq2, Fq2, Fq2]
Fq12 = tuple[Fq6, Fq6]
_T = TypeVar("_T")

_Q = FQ_MODULUS
_HALF_Q = (_Q - 1) // 2
_INV2 = pow(2, -1, _Q)

FQ2_ZERO: Fq2 = (0, 0)
FQ2_ONE: Fq2 = (1, 0)
FQ6_ZERO: Fq6 = (FQ2_ZERO, FQ2_ZERO, FQ2_ZERO)
FQ6_ONE: Fq6 = (FQ2_ONE, FQ2_ZERO, FQ2_ZERO)
FQ12_ZERO: Fq12 = (FQ6_ZERO, FQ6_ZERO)
FQ12_ONE: Fq12 = (FQ6_ONE, FQ6_ZERO)


def _pow(a: _T, e: int, one: _T, mul: Callable[[_T, _T], _T], sqr: Callable[[_T], _T]) -> _T:
    """Return a^e for e ≥ 0 by left-to-right square and multiply over the given mul and sqr."""
    result = one
    for bit in bin(e)[2:]:
        result = sqr(result)
        if bit == "1":
            result = mul(result, a)
    return result


# ---------------------------------------------------------------------------------------------
# Fq2


def fq2_add(a: Fq2, b: Fq2) -> Fq2:
    """Return a + b in Fq2."""
    return ((a[0] + b[0]) % _Q, (a[1] + b[1]) % _Q)


def fq2_sub(a: Fq2, b: Fq2) -> Fq2:
    """Return a − b in Fq2."""
    return ((a[0] - b[0]) % _Q, (a[1] - b[1]) % _Q)


def fq2_neg(a: Fq2) -> Fq2:
    """Return −a in Fq2."""
    return (-a[0] % _Q, -a[1] % _Q)


def fq2_mul(a: Fq2, b: Fq2) -> Fq2:
    """Return a·b in Fq2 (Karatsuba: three int products)."""
    a0, a1 = a
    b0, b1 = b
    t0 = a0 * b0
    t1 = a1 * b1
    return ((t0 - t1) % _Q, ((a0 + a1) * (b0 + b1) - t0 - t1) % _Q)


def fq2_sqr(a: Fq2) -> Fq2:
    """Return a² in Fq2: (a0 + a1)(a0 − a1) + 2·a0·a1·u."""
    a0, a1 = a
    return ((a0 + a1) * (a0 - a1) % _Q, 2 * a0 * a1 % _Q)


def fq2_mul_by_fq(a: Fq2, k: int) -> Fq2:
    """Return k·a for an Fq scalar k."""
    return (a[0] * k % _Q, a[1] * k % _Q)


def fq2_mul_by_nonresidue(a: Fq2) -> Fq2:
    """Return ξ·a with ξ = u + 1, the Fq6 non-residue."""
    a0, a1 = a
    return ((a0 - a1) % _Q, (a0 + a1) % _Q)


def fq2_conj(a: Fq2) -> Fq2:
    """Return the conjugate c0 − c1·u, which is also a^q (the Frobenius map)."""
    return (a[0], -a[1] % _Q)


def fq2_inv(a: Fq2) -> Fq2:
    """Return a⁻¹ = conj(a)/(c0² + c1²); raise ZeroDivisionError for zero."""
    a0, a1 = a
    norm = (a0 * a0 + a1 * a1) % _Q
    if norm == 0:
        raise ZeroDivisionError("inverse of zero in Fq2")
    t = pow(norm, -1, _Q)
    return (a0 * t % _Q, -a1 * t % _Q)


def fq2_pow(a: Fq2, e: int) -> Fq2:
    """Return a^e for e ≥ 0 (square and multiply)."""
    return _pow(a, e, FQ2_ONE, fq2_mul, fq2_sqr)


def fq2_sqrt(a: Fq2) -> Fq2 | None:
    """Return a square root of a in Fq2, or None if a is a non-residue.

    Uses the norm: if x = c0 + c1·u squares to a, then c0² − c1² = a0, 2·c0·c1 = a1 and
    c0² + c1² = √(a0² + a1²), so c0² = (a0 ± √norm)/2 and c1 = a1/(2·c0).
    """
    a0, a1 = a
    if a1 == 0:
        s = fq_sqrt(a0)
        if s is not None:
            return (s, 0)
        # −1 is a non-residue (q ≡ 3 mod 4), so −a0 is a residue and (s·u)² = −s² = a0.
        s = fq_sqrt(-a0 % _Q)
        return None if s is None else (0, s)
    s = fq_sqrt((a0 * a0 + a1 * a1) % _Q)
    if s is None:
        return None
    c0 = fq_sqrt((a0 + s) * _INV2 % _Q)
    if c0 is None:
        c0 = fq_sqrt((a0 - s) * _INV2 % _Q)
        if c0 is None:
            return None
    root = (c0, a1 * pow(2 * c0, -1, _Q) % _Q)
    return root if fq2_sqr(root) == (a0 % _Q, a1 % _Q) else None


def fq2_is_lexicographically_largest(y: Fq2) -> bool:
    """Return the zcash sign bit: c1 > (q − 1)/2, or c0 > (q − 1)/2 when c1 == 0."""
    c0, c1 = y
    if c1:
        return c1 > _HALF_Q
    return c0 > _HALF_Q


# ---------------------------------------------------------------------------------------------
# Fq6


def fq6_add(a: Fq6, b: Fq6) -> Fq6:
    """Return a + b in Fq6."""
    return (fq2_add(a[0], b[0]), fq2_add(a[1], b[1]), fq2_add(a[2], b[2]))


def fq6_sub(a: Fq6, b: Fq6) -> Fq6:
    """Return a − b in Fq6."""
    return (fq2_sub(a[0], b[0]), fq2_sub(a[1], b[1]), fq2_sub(a[2], b[2]))


def fq6_neg(a: Fq6) -> Fq6:
    """Return −a in Fq6."""
    return (fq2_neg(a[0]), fq2_neg(a[1]), fq2_neg(a[2]))


def fq6_mul(a: Fq6, b: Fq6) -> Fq6:
    """Return a·b in Fq6 (schoolbook on ints, v³ = ξ folded in before the six reductions)."""
    (a00, a01), (a10, a11), (a20, a21) = a
    (b00, b01), (b10, b11), (b20, b21) = b
    # c0 = a0·b0 + ξ·(a1·b2 + a2·b1)
    s0 = a10 * b20 - a11 * b21 + a20 * b10 - a21 * b11
    s1 = a10 * b21 + a11 * b20 + a20 * b11 + a21 * b10
    c00 = a00 * b00 - a01 * b01 + s0 - s1
    c01 = a00 * b01 + a01 * b00 + s0 + s1
    # c1 = a0·b1 + a1·b0 + ξ·a2·b2
    s0 = a20 * b20 - a21 * b21
    s1 = a20 * b21 + a21 * b20
    c10 = a00 * b10 - a01 * b11 + a10 * b00 - a11 * b01 + s0 - s1
    c11 = a00 * b11 + a01 * b10 + a10 * b01 + a11 * b00 + s0 + s1
    # c2 = a0·b2 + a1·b1 + a2·b0
    c20 = a00 * b20 - a01 * b21 + a10 * b10 - a11 * b11 + a20 * b00 - a21 * b01
    c21 = a00 * b21 + a01 * b20 + a10 * b11 + a11 * b10 + a20 * b01 + a21 * b00
    return ((c00 % _Q, c01 % _Q), (c10 % _Q, c11 % _Q), (c20 % _Q, c21 % _Q))


def fq6_sqr(a: Fq6) -> Fq6:
    """Return a² in Fq6."""
    return fq6_mul(a, a)


def fq6_mul_by_nonresidue(a: Fq6) -> Fq6:
    """Return v·a (v³ = ξ): the Fq12 non-residue multiplication, a coefficient shift."""
    return (fq2_mul_by_nonresidue(a[2]), a[0], a[1])


def fq6_inv(a: Fq6) -> Fq6:
    """Return a⁻¹ in Fq6 through its adjugate and norm; raise ZeroDivisionError for zero."""
    a0, a1, a2 = a
    t0 = fq2_sub(fq2_sqr(a0), fq2_mul_by_nonresidue(fq2_mul(a1, a2)))
    t1 = fq2_sub(fq2_mul_by_nonresidue(fq2_sqr(a2)), fq2_mul(a0, a1))
    t2 = fq2_sub(fq2_sqr(a1), fq2_mul(a0, a2))
    det = fq2_add(
        fq2_mul(a0, t0),
        fq2_mul_by_nonresidue(fq2_add(fq2_mul(a2, t1), fq2_mul(a1, t2))),
    )
    d = fq2_inv(det)
    return (fq2_mul(t0, d), fq2_mul(t1, d), fq2_mul(t2, d))


# ---------------------------------------------------------------------------------------------
# Fq12


def fq12_add(a: Fq12, b: Fq12) -> Fq12:
    """Return a + b in Fq12."""
    return (fq6_add(a[0], b[0]), fq6_add(a[1], b[1]))


def fq12_sub(a: Fq12, b: Fq12) -> Fq12:
    """Return a − b in Fq12."""
    return (fq6_sub(a[0], b[0]), fq6_sub(a[1], b[1]))


def fq12_neg(a: Fq12) -> Fq12:
    """Return −a in Fq12."""
    return (fq6_neg(a[0]), fq6_neg(a[1]))


def fq12_mul(a: Fq12, b: Fq12) -> Fq12:
    """Return a·b in Fq12 (Karatsuba over Fq6: three Fq6 products)."""
    a0, a1 = a
    b0, b1 = b
    t0 = fq6_mul(a0, b0)
    t1 = fq6_mul(a1, b1)
    cross = fq6_mul(fq6_add(a0, a1), fq6_add(b0, b1))
    return (fq6_add(t0, fq6_mul_by_nonresidue(t1)), fq6_sub(fq6_sub(cross, t0), t1))


def fq12_sqr(a: Fq12) -> Fq12:
    """Return a² in Fq12 (complex squaring: two Fq6 products)."""
    a0, a1 = a
    ab = fq6_mul(a0, a1)
    t = fq6_mul(fq6_add(a0, a1), fq6_add(a0, fq6_mul_by_nonresidue(a1)))
    c0 = fq6_sub(fq6_sub(t, ab), fq6_mul_by_nonresidue(ab))
    return (c0, fq6_add(ab, ab))


def fq12_conj(a: Fq12) -> Fq12:
    """Return b0 − b1·w, which is a^(q⁶): the inverse for elements of the cyclotomic subgroup."""
    return (a[0], fq6_neg(a[1]))


def fq12_inv(a: Fq12) -> Fq12:
    """Return a⁻¹ = conj(a)/(b0² − v·b1²); raise ZeroDivisionError for zero."""
    a0, a1 = a
    norm = fq6_sub(fq6_sqr(a0), fq6_mul_by_nonresidue(fq6_sqr(a1)))
    t = fq6_inv(norm)
    return (fq6_mul(a0, t), fq6_neg(fq6_mul(a1, t)))


def fq12_eq(a: Fq12, b: Fq12) -> bool:
    """Return True if a == b (coefficients are canonical, so this is tuple equality)."""
    return a == b


def fq12_pow(a: Fq12, e: int) -> Fq12:
    """Return a^e for e ≥ 0 (square and multiply)."""
    return _pow(a, e, FQ12_ONE, fq12_mul, fq12_sqr)


def _frobenius_coefficients(power: int) -> list[Fq2]:
    """Return γ_i = ξ^(i·(q^power − 1)/6) for i = 0..5: w^(q^power) = γ_1·w, and so on."""
    g = fq2_pow((1, 1), (_Q**power - 1) // 6)
    coeffs = [FQ2_ONE]
    for _ in range(5):
        coeffs.append(fq2_mul(coeffs[-1], g))
    return coeffs


_FROBENIUS = {power: _frobenius_coefficients(power) for power in (1, 2, 3)}


def fq12_frobenius(a: Fq12, power: int = 1) -> Fq12:
    """Return a^(q^power), applying the Frobenius map coefficient-wise.

    In the basis w^i (b0 holds w⁰, w², w⁴ and b1 holds w¹, w³, w⁵) each coefficient c becomes
    c^(q^power)·γ_i with γ_i = ξ^(i·(q^power − 1)/6), because w⁶ = ξ.
    """
    power %= 12
    while power > 3:
        a = fq12_frobenius(a, 3)
        power -= 3
    if power == 0:
        return a
    g = _FROBENIUS[power]
    (x0, x2, x4), (x1, x3, x5) = a
    if power & 1:
        x0, x1, x2, x3, x4, x5 = (fq2_conj(x) for x in (x0, x1, x2, x3, x4, x5))
    return (
        (x0, fq2_mul(x2, g[2]), fq2_mul(x4, g[4])),
        (fq2_mul(x1, g[1]), fq2_mul(x3, g[3]), fq2_mul(x5, g[5])),
    )
