"""Every input fed to a backend or to the core's arithmetic to check it: random scalars, points
and R1CS matrices, reproducible from a seed, and the edge cases (0, 1, r−1, all-0/1 vectors,
infinity, repeated, opposite and off-subgroup points) that bucket methods and carry chains get
wrong.

The conformance checks, the bench and the tests draw from here alone. Two scales: plain-int lists
drawn from a ``random.Random`` (its seed replays them), for checks against plain Python; and limb
arrays and point batches made from an integer seed, for benchmarks (2^24 scalars in numpy; bases
that cycle through a few thousand distinct points, so they take seconds to make, not hours).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk_core.curve.g1 import G1_B, G1_GENERATOR, G1_OPS
from cuzk_core.curve.g2 import G2_B, G2_GENERATOR, G2_OPS
from cuzk_core.curve.ops import CurveOps
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.field.fq import fq_sqrt
from cuzk_core.field.tower import fq2_add, fq2_mul, fq2_sqr, fq2_sqrt
from cuzk_core.layout import SCALAR_LIMBS, G1Affines, G2Affines
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

R = FR_MODULUS
GROUPS: dict[str, tuple[CurveOps[Any, Any], Any, type[G1Affines] | type[G2Affines]]] = {
    "g1": (G1_OPS, G1_GENERATOR, G1Affines),
    "g2": (G2_OPS, G2_GENERATOR, G2Affines),
}
"""Each group's operations, generator and point batch type, by name."""

# ---------------------------------------------------------------- scalars and field elements


def edge_values(modulus: int) -> tuple[int, ...]:
    """Elements of the field of ``modulus`` where arithmetic goes wrong: 0, 1, 2, p−1, p−2,
    (p−1)/2, then the limb boundaries 2^32, 2^64−1, 2^128−1 and 2^254 (those below p)."""
    field = (0, 1, 2, modulus - 1, modulus - 2, (modulus - 1) // 2)
    limbs = (1 << 32, (1 << 64) - 1, (1 << 128) - 1, 1 << 254)
    return field + tuple(v for v in limbs if v < modulus)


def _bytes_of(byte: int, count: int) -> int:
    return int.from_bytes(bytes([byte]) * count, "little")


SPECIAL_SCALARS: tuple[int, ...] = (
    *edge_values(R),
    _bytes_of(0x80, 31),  # every 8-bit digit exactly 2^7: positive, no carries
    _bytes_of(0x81, 31),  # every signed digit negative, a carry into each next window
    _bytes_of(0xFF, 31),  # carries ripple through zero digits into the last window
    0x73 << 248,  # the top window's largest digit (r's top byte is 0x73)
    R - (1 << 200),
)
"""Scalars at the edges of Fr and of signed-digit window recoding."""


def random_scalars(rng: random.Random, n: int, modulus: int = R) -> list[int]:
    """``n`` uniform elements of Fr (or of the field of ``modulus``)."""
    return [rng.randrange(modulus) for _ in range(n)]


SCALAR_KINDS: dict[str, Callable[[random.Random, int], list[int]]] = {
    "random": random_scalars,
    "zeros": lambda rng, n: [0] * n,
    "ones": lambda rng, n: [1] * n,
    "r-1": lambda rng, n: [R - 1] * n,
    "bits": lambda rng, n: [rng.randrange(2) for _ in range(n)],
    "one-hot": lambda rng, n: [int(i == n - 1) for i in range(n)],
    "specials": lambda rng, n: [SPECIAL_SCALARS[i % len(SPECIAL_SCALARS)] for i in range(n)],
    "mixed": lambda rng, n: [rng.choice([0, 1, R - 1, rng.randrange(R)]) for _ in range(n)],
}
"""Scalar vectors by name: random, and the edge cases bucket methods get wrong."""

# ---------------------------------------------------------------- points


def random_points(group: str, rng: random.Random, n: int) -> list:
    """``n`` distinct subgroup points ``P + i·Q`` of ``group`` (affine): cheap in bulk."""
    ops, generator, _ = GROUPS[group]
    lifted = ops.add_affine(ops.infinity, generator)
    step = ops.batch_to_affine([ops.mul(lifted, rng.randrange(1, R))])[0]
    current, points = ops.mul(lifted, rng.randrange(1, R)), []
    for _ in range(n):
        points.append(current)
        current = ops.add_affine(current, step)
    return ops.batch_to_affine(points)


POINT_KINDS = ("infinity", "all-infinity", "repeated", "opposite", "mixed")


def edge_points(group: str, kind: str, rng: random.Random, n: int) -> list:
    """``n`` points of one :data:`POINT_KINDS` kind: infinity, repeated, ±P, or all (mixed)."""
    p, q = random_points(group, rng, 2)
    minus_p = GROUPS[group][0].neg_affine(p)
    pattern = {
        "infinity": (None, p, q, None, q, p),
        "all-infinity": (None,),
        "repeated": (p,),
        "opposite": (minus_p, p),
        "mixed": (None, p, p, p, minus_p, None, minus_p, q),
    }[kind]
    return [pattern[i % len(pattern)] for i in range(n)]


def _random_x_and_root(group: str, rng: random.Random) -> tuple[Any, Any]:
    """A random x of ``group``'s coordinate field, and a square root of x³ + b or None."""
    if group == "g1":
        x = rng.randrange(FQ_MODULUS)
        return x, fq_sqrt((x**3 + G1_B) % FQ_MODULUS)
    x2 = (rng.randrange(FQ_MODULUS), rng.randrange(FQ_MODULUS))
    return x2, fq2_sqrt(fq2_add(fq2_mul(fq2_sqr(x2), x2), G2_B))


def off_subgroup_point(group: str, rng: random.Random) -> Any:
    """A point on the curve of ``group`` outside its order-r subgroup (no cofactor cleared)."""
    while True:
        x, y = _random_x_and_root(group, rng)
        if y is not None:
            return (x, y)


def off_curve_x(group: str, rng: random.Random) -> Any:
    """An x coordinate (int for G1, Fq2 pair for G2) of no point of ``group``'s curve."""
    while True:
        x, y = _random_x_and_root(group, rng)
        if y is None:
            return x


_SNARKJS_COORDINATE = 48
"""Bytes of one Fq coordinate in a zkey (little-endian, Montgomery form)."""


def snarkjs_point_rows(group: str, rng: random.Random, n: int) -> np.ndarray:
    """Points of ``group`` as a zkey stores them (``(m, 96|192)`` uint8, Montgomery form): ``n``
    random subgroup points, then the edges: infinity (all zero), a repeated point, one on the
    curve outside the subgroup (valid: a zkey's bases are only checked on the curve), a
    coordinate equal to q, one of all ones, one at q − 1 (below q, off the curve), a y with
    one bit flipped, and x = 2^376, y = 0 (a single nonzero byte)."""
    from cuzk_core.interop.points import g1_to_snarkjs, g2_to_snarkjs

    points = [*random_points(group, rng, max(n, 1)), None, off_subgroup_point(group, rng)]
    encoded = (
        g1_to_snarkjs(G1Affines.from_points(points))
        if group == "g1"
        else g2_to_snarkjs(G2Affines.from_points(points))
    )
    rows = [*encoded[:n], encoded[-2], encoded[0], encoded[-1]]
    width = encoded.shape[1]

    def with_value(k: int, value: int) -> np.ndarray:
        row = encoded[0].copy()
        row[k * _SNARKJS_COORDINATE : (k + 1) * _SNARKJS_COORDINATE] = np.frombuffer(
            value.to_bytes(_SNARKJS_COORDINATE, "little"), np.uint8
        )
        return row

    last = width // _SNARKJS_COORDINATE - 1
    rows += [with_value(0, FQ_MODULUS), with_value(last, (1 << 384) - 1)]
    rows += [with_value(0, FQ_MODULUS - 1)]
    flipped = encoded[0].copy()
    flipped[width // 2] ^= 1
    rows.append(flipped)
    lonely = np.zeros(width, np.uint8)
    lonely[width // 2 - 1] = 1  # x's top byte only: x ≥ 2^376, y = 0
    rows.append(lonely)
    return np.stack(rows)


# ---------------------------------------------------------------- R1CS


def _random_rows(rng: random.Random, rows: int, cols: int) -> list[list[tuple[int, int]]]:
    coeffs = (1, 2, R - 1, R - 2)
    entries = []
    for row in range(rows):
        width = 0 if row % 7 == 6 else rng.choice([0, 1, 2, 3, 8, 64])
        picks = sorted(rng.sample(range(cols), min(cols, width)))
        entries.append([(col, rng.choice([*coeffs, rng.randrange(1, R)])) for col in picks])
    return entries


def random_r1cs(rng: random.Random, rows: int, cols: int) -> R1CSMatrices:
    """Random sparse A, B, C (``rows`` × ``cols``, two inputs): empty, short and dense rows.
    Rows repeat as in circuits: a quarter of B's rows are A's (x·x constraints) and a twelfth
    differ from A's in their last coefficient only; a fifth of C's rows are B's row before,
    and a seventh of A's are A's row three before."""
    a_rows, b_rows, c_rows = (_random_rows(rng, rows, cols) for _ in range(3))
    for row in range(3, rows, 7):
        a_rows[row] = list(a_rows[row - 3])
    for row in range(1, rows, 3):
        b_rows[row] = list(a_rows[row])
        if row % 4 == 0 and b_rows[row]:
            col, coeff = b_rows[row][-1]
            b_rows[row][-1] = (col, coeff % (R - 1) + 1)  # another nonzero coefficient
    for row in range(2, rows, 5):
        c_rows[row] = list(b_rows[row - 1])
    a, b, c = (SparseMatrix.from_rows(m, cols) for m in (a_rows, b_rows, c_rows))
    return R1CSMatrices(num_inputs=2, num_aux=cols - 2, num_constraints=rows, a=a, b=b, c=c)


# ---------------------------------------------------------------- benchmark sizes

DISTINCT_BASES = 4096
"""How many different points :func:`random_bases` cycles through unless told otherwise."""
_TOP_LIMB_BOUND = R >> 192


def random_scalar_limbs(n: int, seed: int) -> np.ndarray:
    """``n`` scalars below r in the canonical ``(n, 4)`` layout, uniform up to a tiny bias (zero
    has odds of about 2^−254), made in numpy: for inputs too large to draw one int at a time."""
    rng = np.random.default_rng([seed, n])
    limbs = rng.integers(0, np.iinfo(np.uint64).max, (n, SCALAR_LIMBS), np.uint64, endpoint=True)
    limbs[:, -1] %= np.uint64(_TOP_LIMB_BOUND)  # top limb below r's: the value is below r
    return limbs


def random_bases(
    group: str, n: int, seed: int, distinct: int | None = None
) -> G1Affines | G2Affines:
    """``n`` subgroup points of ``group`` (none at infinity), cycling through ``distinct`` (by
    default :data:`DISTINCT_BASES`) :func:`random_points`."""
    count = min(n, DISTINCT_BASES if distinct is None else distinct)
    points = random_points(group, random.Random(f"{group} bases {seed}"), count)
    batch = GROUPS[group][2].from_points(points)
    reps = -(-n // max(count, 1))
    coords = np.tile(batch.coords, (reps,) + (1,) * (batch.coords.ndim - 1))[:n]
    return type(batch)(np.ascontiguousarray(coords), np.zeros(n, dtype=bool))
