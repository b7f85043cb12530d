"""G1 of BLS12-381, y² = x³ + 4 over Fq, on plain int tuples.

Jacobian points are (X, Y, Z) with x = X/Z², y = Y/Z³; infinity is any point with Z == 0
(canonically G1_INFINITY). Affine points are (x, y) and the affine infinity is None. All
coordinates are kept canonical (in [0, q)); the formulas are written inline, one reduction per
product, because a pure-Python MSM is built on g1_add_affine and g1_double.
"""

from __future__ import annotations

from ..field.constants import FQ_MODULUS, FR_MODULUS
from .ops import CurveOps, FixedBaseTable
from .ops import fixed_base_window_bits as fixed_base_window_bits
from .ops import wnaf_digits as wnaf_digits
from .ops import wnaf_window as wnaf_window

G1Jacobian = tuple[int, int, int]
G1Affine = tuple[int, int] | None
G1FixedBaseTable = FixedBaseTable

_Q = FQ_MODULUS
G1_B = 4
"""The curve constant b in y² = x³ + b."""

G1_INFINITY: G1Jacobian = (1, 1, 0)
"""The point at infinity in Jacobian coordinates."""

G1_GENERATOR: tuple[int, int] = (
    0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
    0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,
)
"""The standard (zcash) generator of the order-r subgroup, affine."""


def g1_double(p: G1Jacobian) -> G1Jacobian:
    """Return 2·p (Jacobian, a = 0 doubling: 2M + 5S)."""
    X, Y, Z = p
    if Z == 0:
        return G1_INFINITY
    A = X * X % _Q
    B = Y * Y % _Q
    C = B * B % _Q
    D = 4 * X * B % _Q
    E = 3 * A
    F = E * E % _Q
    X3 = (F - 2 * D) % _Q
    return (X3, (E * (D - X3) - 8 * C) % _Q, 2 * Y * Z % _Q)


def g1_add(p: G1Jacobian, q: G1Jacobian) -> G1Jacobian:
    """Return p + q for Jacobian points (handles infinities, p == q and p == −q)."""
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    if Z1 == 0:
        return q
    if Z2 == 0:
        return p
    Z1Z1 = Z1 * Z1 % _Q
    Z2Z2 = Z2 * Z2 % _Q
    U1 = X1 * Z2Z2 % _Q
    S1 = Y1 * Z2 * Z2Z2 % _Q
    H = X2 * Z1Z1 % _Q - U1
    R = Y2 * Z1 * Z1Z1 % _Q - S1
    if H == 0:
        return g1_double(p) if R == 0 else G1_INFINITY
    HH = H * H % _Q
    HHH = H * HH % _Q
    V = U1 * HH % _Q
    X3 = (R * R - HHH - 2 * V) % _Q
    return (X3, (R * (V - X3) - S1 * HHH) % _Q, Z1 * Z2 * H % _Q)


def g1_add_affine(p: G1Jacobian, q: G1Affine) -> G1Jacobian:
    """Return p + q for Jacobian p and affine q (mixed addition: 7M + 4S); q may be None."""
    if q is None:
        return p
    X1, Y1, Z1 = p
    x2, y2 = q
    if Z1 == 0:
        return (x2, y2, 1)
    Z1Z1 = Z1 * Z1 % _Q
    H = x2 * Z1Z1 % _Q - X1
    R = y2 * Z1 * Z1Z1 % _Q - Y1
    if H == 0:
        return g1_double(p) if R == 0 else G1_INFINITY
    HH = H * H % _Q
    HHH = H * HH % _Q
    V = X1 * HH % _Q
    X3 = (R * R - HHH - 2 * V) % _Q
    return (X3, (R * (V - X3) - Y1 * HHH) % _Q, Z1 * H % _Q)


def g1_neg(p: G1Jacobian) -> G1Jacobian:
    """Return −p (Jacobian)."""
    X, Y, Z = p
    return (X, -Y % _Q, Z)


def _neg_affine(a: G1Affine) -> G1Affine:
    """Return −a for an affine point (None stays None)."""
    return None if a is None else (a[0], -a[1] % _Q)


def g1_from_affine(a: G1Affine) -> G1Jacobian:
    """Lift an affine point (or None) to Jacobian coordinates."""
    if a is None:
        return G1_INFINITY
    return (a[0], a[1], 1)


def g1_to_affine(p: G1Jacobian) -> G1Affine:
    """Normalize a Jacobian point to affine (None for infinity); costs one inversion."""
    X, Y, Z = p
    if Z == 0:
        return None
    zi = pow(Z, -1, _Q)
    zi2 = zi * zi % _Q
    return (X * zi2 % _Q, Y * zi2 * zi % _Q)


def g1_batch_to_affine(points: list[G1Jacobian]) -> list[G1Affine]:
    """Normalize many Jacobian points with one inversion (Montgomery's trick)."""
    prefix = []
    acc = 1
    for _, _, Z in points:
        prefix.append(acc)
        if Z:
            acc = acc * Z % _Q
    inv = pow(acc, -1, _Q)
    out: list[G1Affine] = [None] * len(points)
    for i in range(len(points) - 1, -1, -1):
        X, Y, Z = points[i]
        if Z:
            zi = inv * prefix[i] % _Q
            inv = inv * Z % _Q
            zi2 = zi * zi % _Q
            out[i] = (X * zi2 % _Q, Y * zi2 * zi % _Q)
    return out


def g1_eq(p: G1Jacobian, q: G1Jacobian) -> bool:
    """Return True if two Jacobian points are the same group element."""
    X1, Y1, Z1 = p
    X2, Y2, Z2 = q
    if Z1 == 0 or Z2 == 0:
        return Z1 == 0 and Z2 == 0
    Z1Z1 = Z1 * Z1 % _Q
    Z2Z2 = Z2 * Z2 % _Q
    return (X1 * Z2Z2 - X2 * Z1Z1) % _Q == 0 and (Y1 * Z2 * Z2Z2 - Y2 * Z1 * Z1Z1) % _Q == 0


def g1_is_on_curve(a: G1Affine) -> bool:
    """Return True if a is None or has canonical coordinates satisfying y² = x³ + 4."""
    if a is None:
        return True
    x, y = a
    if not (0 <= x < _Q and 0 <= y < _Q):
        return False
    return (y * y - x * x * x - G1_B) % _Q == 0


def g1_in_subgroup(a: G1Affine) -> bool:
    """Return True if a is on the curve and r·a is infinity (the order-r subgroup)."""
    if not g1_is_on_curve(a):
        return False
    return g1_mul(g1_from_affine(a), FR_MODULUS)[2] == 0


# The G1 group operations, and the scalar multiplications of cuzk_core.curve.ops over them.
G1_OPS = CurveOps(G1_INFINITY, g1_add, g1_add_affine, g1_double, _neg_affine, g1_batch_to_affine)
g1_mul = G1_OPS.mul
g1_multi_mul = G1_OPS.multi_mul
g1_fixed_base_table = G1_OPS.fixed_base_table
g1_fixed_base_mul = G1_OPS.fixed_base_mul
g1_fixed_base_batch = G1_OPS.fixed_base_batch
