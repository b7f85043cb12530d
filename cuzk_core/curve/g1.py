"""G1 of BLS12-381, y² = x³ + 4 over Fq, on plain int tuples.

Jacobian points are (X, Y, Z) with x = X/Z², y = Y/Z³; infinity is any point with Z == 0
(canonically G1_INFINITY). Affine points are (x, y) and the affine infinity is None. All
coordinates are kept canonical (in [0, q)); the formulas are written inline, one reduction per
product, because a pure-Python MSM is built on g1_add_affine and g1_double.
"""

from __future__ import annotations

from typing import NamedTuple

from ..field.constants import FQ_MODULUS, FR_MODULUS

G1Jacobian = tuple[int, int, int]
G1Affine = tuple[int, int] | None

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


def g1_mul(p: G1Jacobian, k: int) -> G1Jacobian:
    """Return k·p for any integer k (not reduced mod r: valid for points outside the subgroup)."""
    if k < 0:
        return g1_mul(g1_neg(p), -k)
    if k == 0 or p[2] == 0:
        return G1_INFINITY
    width = wnaf_window(k.bit_length())
    digits = wnaf_digits(k, width)
    twice = g1_double(p)
    odd = [p]
    for _ in range((1 << (width - 2)) - 1):
        odd.append(g1_add(odd[-1], twice))
    pos = g1_batch_to_affine(odd)
    neg = [None if a is None else (a[0], -a[1] % _Q) for a in pos]
    acc = G1_INFINITY
    for d in reversed(digits):
        acc = g1_double(acc)
        if d > 0:
            acc = g1_add_affine(acc, pos[d >> 1])
        elif d < 0:
            acc = g1_add_affine(acc, neg[-d >> 1])
    return acc


class G1FixedBaseTable(NamedTuple):
    """Affine multiples d·2^(w·i)·base for every window i and digit d (index 0 is None)."""

    window_bits: int
    windows: list[list[G1Affine]]


def g1_fixed_base_table(base_affine: G1Affine, window_bits: int) -> G1FixedBaseTable:
    """Precompute the window table for many scalar multiplications of one subgroup point."""
    if not 1 <= window_bits <= 20:
        raise ValueError(f"window_bits must be in 1..20, got {window_bits}")
    n_windows = -(-FR_MODULUS.bit_length() // window_bits)
    size = 1 << window_bits
    flat: list[G1Jacobian] = []
    base = base_affine
    for _ in range(n_windows):
        acc = G1_INFINITY
        flat.append(acc)
        for _ in range(size - 1):
            acc = g1_add_affine(acc, base)
            flat.append(acc)
        base = g1_to_affine(g1_add_affine(acc, base))
    affine = g1_batch_to_affine(flat)
    windows = [affine[i * size : (i + 1) * size] for i in range(n_windows)]
    return G1FixedBaseTable(window_bits, windows)


def g1_fixed_base_mul(table: G1FixedBaseTable, k: int) -> G1Jacobian:
    """Return k·base (Jacobian) from a fixed-base table; k is reduced mod r (base has order r)."""
    k %= FR_MODULUS
    w = table.window_bits
    mask = (1 << w) - 1
    acc = G1_INFINITY
    for window in table.windows:
        d = k & mask
        if d:
            acc = g1_add_affine(acc, window[d])
        k >>= w
    return acc


def fixed_base_window_bits(count: int) -> int:
    """Pick the window minimizing table building plus per-scalar additions for `count` scalars."""
    bits = FR_MODULUS.bit_length()
    return min(range(1, 17), key=lambda w: -(-bits // w) * ((1 << w) + count))


def g1_fixed_base_batch(base_affine: G1Affine, scalars: list[int]) -> list[G1Affine]:
    """Return [k·base for k in scalars] as affine points: one table, one batch normalization."""
    if base_affine is None or not scalars:
        return [None] * len(scalars)
    table = g1_fixed_base_table(base_affine, fixed_base_window_bits(len(scalars)))
    return g1_batch_to_affine([g1_fixed_base_mul(table, k) for k in scalars])
