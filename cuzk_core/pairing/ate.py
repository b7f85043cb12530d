"""The optimal ate pairing on BLS12-381: a shared Miller loop and one final exponentiation.

G2 points live on the twist E': y² = x³ + 4ξ; ψ(x', y') = (x'/w², y'/w³) maps them onto E over
Fq12 (w⁶ = ξ). A line through twist points with twist slope λ, evaluated at P = (xP, yP) ∈ G1
and multiplied by w³/yP (factors in proper subfields vanish in the final exponentiation), is

    (λ·x_T − y_T)/yP  −  λ·(xP/yP)·v  +  v·w

so it is sparse: Fq6 coefficients (A0, A1, 0) and (0, 1, 0). The loop runs over |x|; x < 0 is
handled by conjugating f at the end. The hard part of the final exponentiation uses the identity
3·(q⁴ − q² + 1)/r = (x − 1)²·(x + q)·(x² + q² − 1) + 3, so this computes the optimal ate
pairing cubed: still bilinear and non-degenerate (3 ∤ r), with cheap exponentiations by x.
"""

from __future__ import annotations

from typing import Any

from ..curve.g1 import G1Affine
from ..curve.g2 import G2Affine
from ..field.constants import BLS_X, FQ_MODULUS
from ..field.tower import (
    FQ12_ONE,
    Fq2,
    Fq6,
    Fq12,
    fq2_add,
    fq2_inv,
    fq2_mul,
    fq2_mul_by_fq,
    fq2_mul_by_nonresidue,
    fq2_sqr,
    fq2_sub,
    fq12_conj,
    fq12_frobenius,
    fq12_inv,
    fq12_mul,
    fq12_sqr,
)

_Q = FQ_MODULUS
_X_BITS = bin(BLS_X)[3:]  # |x| below its leading one, most significant first


def _mul_by_line(f: Fq12, a0: Fq2, a1: Fq2) -> Fq12:
    """Return f·L for the sparse line L = (a0 + a1·v) + v·w (12 Fq2 products instead of 54)."""
    (f00, f01, f02), (f10, f11, f12) = f
    m = fq2_mul
    xi = fq2_mul_by_nonresidue
    r0: Fq6 = (
        fq2_add(m(f00, a0), xi(fq2_add(m(f02, a1), f11))),
        fq2_add(fq2_add(m(f00, a1), m(f01, a0)), xi(f12)),
        fq2_add(fq2_add(m(f01, a1), m(f02, a0)), f10),
    )
    r1: Fq6 = (
        fq2_add(m(f10, a0), xi(fq2_add(m(f12, a1), f02))),
        fq2_add(fq2_add(m(f10, a1), m(f11, a0)), f00),
        fq2_add(fq2_add(m(f11, a1), m(f12, a0)), f01),
    )
    return (r0, r1)


def _line_step(
    t: tuple[Fq2, Fq2], slope: Fq2, x_next: Fq2, yp_inv: int, xp_over_yp: int
) -> tuple[tuple[Fq2, Fq2], Fq2, Fq2]:
    """Return the next affine twist point and the line coefficients (A0, A1) at P."""
    xt, yt = t
    y_next = fq2_sub(fq2_mul(slope, fq2_sub(xt, x_next)), yt)
    a0 = fq2_mul_by_fq(fq2_sub(fq2_mul(slope, xt), yt), yp_inv)
    a1 = fq2_mul_by_fq(slope, -xp_over_yp % _Q)
    return (x_next, y_next), a0, a1


def miller_loop(pairs: list[tuple[G1Affine, G2Affine]]) -> Fq12:
    """Return ∏ f_{x,Q}(P) over all pairs: one Miller loop over |x| that shares the squarings.

    Pairs with a point at infinity contribute 1 and are skipped. Points must be in the
    prime-order subgroups (the loop never meets infinity or a vertical line for those).
    """
    active: list[list[Any]] = []  # per pair a mutable [T, Q, 1/yP, xP/yP]: T moves each step
    for p, q in pairs:
        if p is None or q is None:
            continue
        xp, yp = p
        yp_inv = pow(yp, -1, _Q)
        active.append([q, q, yp_inv, xp * yp_inv % _Q])  # [T, Q, 1/yP, xP/yP]
    f = FQ12_ONE
    if not active:
        return f
    first = True
    for bit in _X_BITS:
        if not first:
            f = fq12_sqr(f)
        first = False
        for entry in active:
            t, _, yp_inv, xp_over_yp = entry
            xt, yt = t
            xt2 = fq2_sqr(xt)
            slope = fq2_mul(fq2_mul_by_fq(xt2, 3), fq2_inv(fq2_add(yt, yt)))
            x_next = fq2_sub(fq2_sqr(slope), fq2_add(xt, xt))
            entry[0], a0, a1 = _line_step(t, slope, x_next, yp_inv, xp_over_yp)
            f = _mul_by_line(f, a0, a1)
        if bit == "1":
            for entry in active:
                t, q, yp_inv, xp_over_yp = entry
                (xt, yt), (xq, yq) = t, q
                slope = fq2_mul(fq2_sub(yq, yt), fq2_inv(fq2_sub(xq, xt)))
                x_next = fq2_sub(fq2_sub(fq2_sqr(slope), xt), xq)
                entry[0], a0, a1 = _line_step(t, slope, x_next, yp_inv, xp_over_yp)
                f = _mul_by_line(f, a0, a1)
    return fq12_conj(f)  # x < 0: f_{x,Q} = 1/f_{|x|,Q} up to factors the final exponentiation kills


def _pow_x(f: Fq12) -> Fq12:
    """Return f^x (x < 0) for f in the cyclotomic subgroup, where f⁻¹ = conj(f)."""
    result = f
    for bit in _X_BITS:
        result = fq12_sqr(result)
        if bit == "1":
            result = fq12_mul(result, f)
    return fq12_conj(result)


def final_exponentiation(f: Fq12) -> Fq12:
    """Return f^(3·(q¹² − 1)/r): the easy part (q⁶ − 1)(q² + 1), then the hard part via x."""
    t = fq12_mul(fq12_conj(f), fq12_inv(f))
    t = fq12_mul(fq12_frobenius(t, 2), t)
    # t is now in the cyclotomic subgroup: conjugation inverts it.
    a = fq12_mul(_pow_x(t), fq12_conj(t))  # t^(x−1)
    a = fq12_mul(_pow_x(a), fq12_conj(a))  # t^((x−1)²)
    b = fq12_mul(_pow_x(a), fq12_frobenius(a, 1))  # a^(x+q)
    c = fq12_mul(fq12_mul(_pow_x(_pow_x(b)), fq12_frobenius(b, 2)), fq12_conj(b))  # b^(x²+q²−1)
    return fq12_mul(c, fq12_mul(fq12_sqr(t), t))


def multi_pairing(pairs: list[tuple[G1Affine, G2Affine]]) -> Fq12:
    """Return ∏ e(P_i, Q_i) with one shared Miller loop and one final exponentiation."""
    return final_exponentiation(miller_loop(pairs))


def pairing(p: G1Affine, q: G2Affine) -> Fq12:
    """Return e(p, q) for affine p ∈ G1 and q ∈ G2."""
    return multi_pairing([(p, q)])


def pairing_product_is_one(pairs: list[tuple[G1Affine, G2Affine]]) -> bool:
    """Return True if ∏ e(P_i, Q_i) == 1: the Groth16 verification equation."""
    return multi_pairing(pairs) == FQ12_ONE
