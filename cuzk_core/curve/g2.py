"""G2 of BLS12-381, y² = x³ + 4(u + 1) over Fq2, on tuples of Fq2 tuples.

The same API and conventions as g1: Jacobian (X, Y, Z) with infinity at Z == FQ2_ZERO
(canonically G2_INFINITY), affine (x, y) with None for infinity. The formulas are the G1 ones
written over Fq2, with the hot ones (double,
mixed add) spelled out on ints.
"""

from __future__ import annotations

from ..field.constants import FQ_MODULUS, FR_MODULUS
from ..field.tower import (
    FQ2_ONE,
    FQ2_ZERO,
    Fq2,
    fq2_add,
    fq2_inv,
    fq2_mul,
    fq2_neg,
    fq2_sqr,
)
from .ops import CurveOps, FixedBaseTable

G2Jacobian = tuple[Fq2, Fq2, Fq2]
G2Affine = tuple[Fq2, Fq2] | None
G2FixedBaseTable = FixedBaseTable

_Q = FQ_MODULUS
G2_B: Fq2 = (4, 4)
"""The twist constant b' = 4(u + 1) in y² = x³ + b'."""

G2_INFINITY: G2Jacobian = (FQ2_ONE, FQ2_ONE, FQ2_ZERO)
"""The point at infinity in Jacobian coordinates."""

G2_GENERATOR: tuple[Fq2, Fq2] = (
    (
        0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
        0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
    ),
    (
        0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
        0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
    ),
)
"""The standard (zcash) generator of the order-r subgroup of the twist, affine."""


def g2_double(p: G2Jacobian) -> G2Jacobian:
    """Return 2·p (Jacobian, a = 0 doubling; Fq2 arithmetic written out on ints)."""
    (x0, x1), (y0, y1), (z0, z1) = p
    if not (z0 or z1):
        return G2_INFINITY
    a0 = (x0 + x1) * (x0 - x1) % _Q  # A = X²
    a1 = 2 * x0 * x1 % _Q
    b0 = (y0 + y1) * (y0 - y1) % _Q  # B = Y²
    b1 = 2 * y0 * y1 % _Q
    c0 = (b0 + b1) * (b0 - b1) % _Q  # C = B²
    c1 = 2 * b0 * b1 % _Q
    t0 = x0 * b0  # D = 4·X·B
    t1 = x1 * b1
    d0 = 4 * (t0 - t1) % _Q
    d1 = 4 * ((x0 + x1) * (b0 + b1) - t0 - t1) % _Q
    e0 = 3 * a0  # E = 3A
    e1 = 3 * a1
    X0 = ((e0 + e1) * (e0 - e1) - 2 * d0) % _Q  # X3 = E² − 2D
    X1 = (2 * e0 * e1 - 2 * d1) % _Q
    u0 = d0 - X0  # Y3 = E·(D − X3) − 8C
    u1 = d1 - X1
    t0 = e0 * u0
    t1 = e1 * u1
    Y0 = (t0 - t1 - 8 * c0) % _Q
    Y1 = ((e0 + e1) * (u0 + u1) - t0 - t1 - 8 * c1) % _Q
    t0 = y0 * z0  # Z3 = 2·Y·Z
    t1 = y1 * z1
    Z0 = 2 * (t0 - t1) % _Q
    Z1 = 2 * ((y0 + y1) * (z0 + z1) - t0 - t1) % _Q
    return ((X0, X1), (Y0, Y1), (Z0, Z1))


def _add_tail(h0: int, h1: int, r0: int, r1: int, u: Fq2, s: Fq2, z: Fq2) -> G2Jacobian:
    """Finish an addition from H = U2 − U1, R = S2 − S1 (H ≠ 0), U1, S1 and Z1·Z2."""
    u0, u1 = u
    s0, s1 = s
    z0, z1 = z
    hh0 = (h0 + h1) * (h0 - h1) % _Q  # HH = H²
    hh1 = 2 * h0 * h1 % _Q
    t0 = h0 * hh0  # HHH = H·HH
    t1 = h1 * hh1
    g0 = (t0 - t1) % _Q
    g1 = ((h0 + h1) * (hh0 + hh1) - t0 - t1) % _Q
    t0 = u0 * hh0  # V = U1·HH
    t1 = u1 * hh1
    v0 = (t0 - t1) % _Q
    v1 = ((u0 + u1) * (hh0 + hh1) - t0 - t1) % _Q
    X0 = ((r0 + r1) * (r0 - r1) - g0 - 2 * v0) % _Q  # X3 = R² − HHH − 2V
    X1 = (2 * r0 * r1 - g1 - 2 * v1) % _Q
    m0 = v0 - X0  # Y3 = R·(V − X3) − S1·HHH
    m1 = v1 - X1
    t0 = r0 * m0
    t1 = r1 * m1
    k0 = s0 * g0
    k1 = s1 * g1
    Y0 = (t0 - t1 - k0 + k1) % _Q
    Y1 = ((r0 + r1) * (m0 + m1) - t0 - t1 - (s0 + s1) * (g0 + g1) + k0 + k1) % _Q
    t0 = z0 * h0  # Z3 = Z1·Z2·H
    t1 = z1 * h1
    Z0 = (t0 - t1) % _Q
    Z1 = ((z0 + z1) * (h0 + h1) - t0 - t1) % _Q
    return ((X0, X1), (Y0, Y1), (Z0, Z1))


def g2_add(p: G2Jacobian, q: G2Jacobian) -> G2Jacobian:
    """Return p + q for Jacobian points (handles infinities, p == q and p == −q)."""
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    if Z1 == FQ2_ZERO:
        return q
    if Z2 == FQ2_ZERO:
        return p
    Z1Z1 = fq2_sqr(Z1)
    Z2Z2 = fq2_sqr(Z2)
    U1 = fq2_mul(X1, Z2Z2)
    S1 = fq2_mul(Y1, fq2_mul(Z2, Z2Z2))
    h0, h1 = fq2_mul(X2, Z1Z1)
    r0, r1 = fq2_mul(Y2, fq2_mul(Z1, Z1Z1))
    h0 -= U1[0]
    h1 -= U1[1]
    r0 -= S1[0]
    r1 -= S1[1]
    if not (h0 or h1):
        return g2_double(p) if not (r0 or r1) else G2_INFINITY
    return _add_tail(h0, h1, r0, r1, U1, S1, fq2_mul(Z1, Z2))


def g2_add_affine(p: G2Jacobian, q: G2Affine) -> G2Jacobian:
    """Return p + q for Jacobian p and affine q (mixed addition); q may be None."""
    if q is None:
        return p
    X1, Y1, Z1 = p
    z0, z1 = Z1
    if not (z0 or z1):
        return (q[0], q[1], FQ2_ONE)
    (a0, a1), (b0, b1) = q
    zz0 = (z0 + z1) * (z0 - z1) % _Q  # Z1²
    zz1 = 2 * z0 * z1 % _Q
    t0 = z0 * zz0  # Z1³
    t1 = z1 * zz1
    w0 = (t0 - t1) % _Q
    w1 = ((z0 + z1) * (zz0 + zz1) - t0 - t1) % _Q
    t0 = a0 * zz0  # H = x2·Z1² − X1
    t1 = a1 * zz1
    h0 = (t0 - t1) % _Q - X1[0]
    h1 = ((a0 + a1) * (zz0 + zz1) - t0 - t1) % _Q - X1[1]
    t0 = b0 * w0  # R = y2·Z1³ − Y1
    t1 = b1 * w1
    r0 = (t0 - t1) % _Q - Y1[0]
    r1 = ((b0 + b1) * (w0 + w1) - t0 - t1) % _Q - Y1[1]
    if not (h0 or h1):
        return g2_double(p) if not (r0 or r1) else G2_INFINITY
    return _add_tail(h0, h1, r0, r1, X1, Y1, Z1)


def g2_neg(p: G2Jacobian) -> G2Jacobian:
    """Return −p (Jacobian)."""
    X, Y, Z = p
    return (X, fq2_neg(Y), Z)


def _neg_affine(a: G2Affine) -> G2Affine:
    """Return −a for an affine point (None stays None)."""
    return None if a is None else (a[0], fq2_neg(a[1]))


def g2_from_affine(a: G2Affine) -> G2Jacobian:
    """Lift an affine point (or None) to Jacobian coordinates."""
    if a is None:
        return G2_INFINITY
    return (a[0], a[1], FQ2_ONE)


def g2_to_affine(p: G2Jacobian) -> G2Affine:
    """Normalize a Jacobian point to affine (None for infinity); costs one inversion."""
    X, Y, Z = p
    if Z == FQ2_ZERO:
        return None
    zi = fq2_inv(Z)
    zi2 = fq2_sqr(zi)
    return (fq2_mul(X, zi2), fq2_mul(Y, fq2_mul(zi2, zi)))


def g2_batch_to_affine(points: list[G2Jacobian]) -> list[G2Affine]:
    """Normalize many Jacobian points with one inversion (Montgomery's trick)."""
    prefix = []
    acc = FQ2_ONE
    for _, _, Z in points:
        prefix.append(acc)
        if Z != FQ2_ZERO:
            acc = fq2_mul(acc, Z)
    inv = fq2_inv(acc)
    out: list[G2Affine] = [None] * len(points)
    for i in range(len(points) - 1, -1, -1):
        X, Y, Z = points[i]
        if Z != FQ2_ZERO:
            zi = fq2_mul(inv, prefix[i])
            inv = fq2_mul(inv, Z)
            zi2 = fq2_sqr(zi)
            out[i] = (fq2_mul(X, zi2), fq2_mul(Y, fq2_mul(zi2, zi)))
    return out


def g2_eq(p: G2Jacobian, q: G2Jacobian) -> bool:
    """Return True if two Jacobian points are the same group element."""
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    if Z1 == FQ2_ZERO or Z2 == FQ2_ZERO:
        return Z1 == FQ2_ZERO and Z2 == FQ2_ZERO
    Z1Z1 = fq2_sqr(Z1)
    Z2Z2 = fq2_sqr(Z2)
    return fq2_mul(X1, Z2Z2) == fq2_mul(X2, Z1Z1) and fq2_mul(Y1, fq2_mul(Z2, Z2Z2)) == fq2_mul(
        Y2, fq2_mul(Z1, Z1Z1)
    )


def g2_is_on_curve(a: G2Affine) -> bool:
    """Return True if a is None or has canonical coordinates satisfying y² = x³ + 4(u + 1)."""
    if a is None:
        return True
    x, y = a
    if not all(0 <= c < _Q for c in (*x, *y)):
        return False
    return fq2_sqr(y) == fq2_add(fq2_mul(fq2_sqr(x), x), G2_B)


def g2_in_subgroup(a: G2Affine) -> bool:
    """Return True if a is on the curve and r·a is infinity (the order-r subgroup)."""
    if not g2_is_on_curve(a):
        return False
    return g2_mul(g2_from_affine(a), FR_MODULUS)[2] == FQ2_ZERO


# The G2 group operations, and the scalar multiplications of cuzk_core.curve.ops over them.
G2_OPS = CurveOps(
    G2_INFINITY, g2_add, g2_add_affine, g2_double, _neg_affine, g2_batch_to_affine, step_ops=9
)
g2_mul = G2_OPS.mul
g2_fixed_base_table = G2_OPS.fixed_base_table
g2_fixed_base_mul = G2_OPS.fixed_base_mul
g2_fixed_base_batch = G2_OPS.fixed_base_batch
