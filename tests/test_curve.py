"""G1 and G2 group law, scalar multiplication and checks against py_ecc.optimized_bls12_381."""

import pytest
from py_ecc.optimized_bls12_381 import G1 as PY_G1
from py_ecc.optimized_bls12_381 import G2 as PY_G2
from py_ecc.optimized_bls12_381 import add as py_add
from py_ecc.optimized_bls12_381 import double as py_double
from py_ecc.optimized_bls12_381 import multiply as py_multiply
from py_ecc_oracle import from_py_g1, from_py_g2, to_py_g1, to_py_g2

from cuzk_core.conformance.inputs import (
    SPECIAL_SCALARS,
    off_subgroup_point,
    random_points,
    random_scalars,
)
from cuzk_core.curve import (
    G1_GENERATOR,
    G1_INFINITY,
    g1_add,
    g1_add_affine,
    g1_batch_to_affine,
    g1_double,
    g1_eq,
    g1_fixed_base_batch,
    g1_fixed_base_mul,
    g1_fixed_base_table,
    g1_from_affine,
    g1_in_subgroup,
    g1_is_on_curve,
    g1_mul,
    g1_neg,
    g1_to_affine,
)
from cuzk_core.curve.g2 import (
    G2_GENERATOR,
    G2_INFINITY,
    g2_add,
    g2_add_affine,
    g2_batch_to_affine,
    g2_double,
    g2_eq,
    g2_fixed_base_batch,
    g2_fixed_base_mul,
    g2_fixed_base_table,
    g2_from_affine,
    g2_in_subgroup,
    g2_is_on_curve,
    g2_mul,
    g2_neg,
    g2_to_affine,
)
from cuzk_core.field import FQ_MODULUS, FR_MODULUS

Q = FQ_MODULUS
R = FR_MODULUS
SCALAR_EDGES = [*SPECIAL_SCALARS, R, R + 1, 2 * R + 7]
"""The special scalars, and some not reduced mod r."""
RANDOM_SCALARS = {
    "random": lambda rng: rng.randrange(R),
    "300 bits": lambda rng: rng.getrandbits(300),
}
"""Scalars drawn in the test from its ``rng``, by name (so a seed replays them)."""


def scaled_g1(p, lam):
    """The same point with another Jacobian representative (X·λ², Y·λ³, Z·λ)."""
    X, Y, Z = p
    return (X * lam * lam % Q, Y * lam**3 % Q, Z * lam % Q)


# ---------------------------------------------------------------------------------------------
# G1


def test_g1_generator_matches_py_ecc():
    assert from_py_g1(PY_G1) == G1_GENERATOR
    assert g1_is_on_curve(G1_GENERATOR)
    assert g1_in_subgroup(G1_GENERATOR)


@pytest.mark.parametrize("k", [*SCALAR_EDGES, *RANDOM_SCALARS])
def test_g1_mul_matches_py_ecc(k, rng):
    k = RANDOM_SCALARS[k](rng) if k in RANDOM_SCALARS else k
    got = g1_to_affine(g1_mul(g1_from_affine(G1_GENERATOR), k))
    assert got == from_py_g1(py_multiply(PY_G1, k))


def test_g1_mul_scalar_edges(rng):
    p = random_points("g1", rng, 1)[0]
    pj = g1_from_affine(p)
    assert g1_mul(pj, 0)[2] == 0
    assert g1_mul(pj, R)[2] == 0
    assert g1_to_affine(g1_mul(pj, 1)) == p
    assert g1_eq(g1_mul(pj, R - 1), g1_neg(pj))
    assert g1_eq(g1_mul(pj, R + 5), g1_mul(pj, 5))
    assert g1_eq(g1_mul(pj, -3), g1_neg(g1_mul(pj, 3)))
    assert g1_mul(G1_INFINITY, 12345)[2] == 0


def test_g1_add_and_double_match_py_ecc(rng):
    for _ in range(3):
        a, b = random_points("g1", rng, 2)
        lam = rng.randrange(1, Q)
        aj = scaled_g1(g1_from_affine(a), lam)
        bj = g1_from_affine(b)
        expected = from_py_g1(py_add(to_py_g1(a), to_py_g1(b)))
        assert g1_to_affine(g1_add(aj, bj)) == expected
        assert g1_to_affine(g1_add(bj, aj)) == expected
        assert g1_to_affine(g1_add_affine(aj, b)) == expected
        assert g1_to_affine(g1_double(aj)) == from_py_g1(py_double(to_py_g1(a)))


def test_g1_add_special_cases(rng):
    p = random_points("g1", rng, 1)[0]
    pj = scaled_g1(g1_from_affine(p), 12345)
    double = g1_double(pj)
    assert g1_eq(g1_add(pj, g1_from_affine(p)), double)  # P + P through add
    assert g1_eq(g1_add_affine(pj, p), double)  # P + P through mixed add
    assert g1_add(pj, g1_neg(pj))[2] == 0  # P + (−P)
    assert g1_add_affine(pj, g1_to_affine(g1_neg(pj)))[2] == 0
    assert g1_add(G1_INFINITY, pj) == pj
    assert g1_add(pj, G1_INFINITY) == pj
    assert g1_add_affine(pj, None) == pj
    assert g1_to_affine(g1_add_affine(G1_INFINITY, p)) == p
    assert g1_double(G1_INFINITY)[2] == 0
    assert g1_add(G1_INFINITY, G1_INFINITY)[2] == 0
    assert g1_neg(G1_INFINITY)[2] == 0
    acc = G1_INFINITY
    for _ in range(5):  # repeated points
        acc = g1_add_affine(acc, p)
    assert g1_eq(acc, g1_mul(g1_from_affine(p), 5))


def test_g1_eq_and_affine_conversions(rng):
    p = random_points("g1", rng, 1)[0]
    pj = g1_from_affine(p)
    assert g1_eq(pj, scaled_g1(pj, rng.randrange(1, Q)))
    assert not g1_eq(pj, g1_neg(pj))
    assert not g1_eq(pj, G1_INFINITY)
    assert g1_eq(G1_INFINITY, (5, 7, 0))
    assert g1_to_affine(G1_INFINITY) is None
    assert g1_from_affine(None)[2] == 0
    points = [g1_mul(pj, k) for k in (0, 1, 2, 3, R, 7)]
    points[3] = scaled_g1(points[3], 99)
    assert g1_batch_to_affine(points) == [g1_to_affine(x) for x in points]
    assert g1_batch_to_affine([]) == []
    assert g1_batch_to_affine([G1_INFINITY]) == [None]


def test_g1_curve_and_subgroup_checks(rng):
    assert g1_is_on_curve(None)
    assert g1_in_subgroup(None)
    x, y = G1_GENERATOR
    assert not g1_is_on_curve((x, y + 1))
    assert not g1_is_on_curve((x + Q, y))  # non-canonical coordinate
    off = off_subgroup_point("g1", rng)
    assert g1_is_on_curve(off)
    assert not g1_in_subgroup(off)
    # scalars are not reduced mod r: r·P ≠ O off the subgroup, and py_ecc agrees on k·P
    k = R + rng.randrange(1000)
    assert g1_to_affine(g1_mul(g1_from_affine(off), k)) == from_py_g1(py_multiply(to_py_g1(off), k))
    assert g1_mul(g1_from_affine(off), R)[2] != 0


def test_g1_fixed_base(rng):
    scalars = [*SCALAR_EDGES, *random_scalars(rng, 6)]
    base = random_points("g1", rng, 1)[0]
    expected = [g1_to_affine(g1_mul(g1_from_affine(base), k)) for k in scalars]
    assert g1_fixed_base_batch(base, scalars) == expected
    for bits in (1, 5, 8):
        table = g1_fixed_base_table(base, bits)
        assert [g1_to_affine(g1_fixed_base_mul(table, k)) for k in scalars] == expected
    assert g1_fixed_base_batch(None, [1, 2]) == [None, None]
    assert g1_fixed_base_batch(base, []) == []
    with pytest.raises(ValueError):
        g1_fixed_base_table(base, 0)


# ---------------------------------------------------------------------------------------------
# G2


def test_g2_generator_matches_py_ecc():
    assert from_py_g2(PY_G2) == G2_GENERATOR
    assert g2_is_on_curve(G2_GENERATOR)
    assert g2_in_subgroup(G2_GENERATOR)


@pytest.mark.parametrize("k", [0, 1, R - 1, R, "random"])
def test_g2_mul_matches_py_ecc(k, rng):
    k = RANDOM_SCALARS[k](rng) if k in RANDOM_SCALARS else k
    got = g2_to_affine(g2_mul(g2_from_affine(G2_GENERATOR), k))
    assert got == from_py_g2(py_multiply(PY_G2, k))


def test_g2_add_and_double_match_py_ecc(rng):
    a, b = random_points("g2", rng, 2)
    aj = g2_double(g2_from_affine(a))  # a Jacobian point with Z ≠ 1
    a2 = g2_to_affine(aj)
    expected = from_py_g2(py_add(to_py_g2(a2), to_py_g2(b)))
    assert g2_to_affine(g2_add(aj, g2_from_affine(b))) == expected
    assert g2_to_affine(g2_add(g2_from_affine(b), aj)) == expected
    assert g2_to_affine(g2_add_affine(aj, b)) == expected
    assert g2_to_affine(g2_double(aj)) == from_py_g2(py_double(to_py_g2(a2)))


def test_g2_special_cases_and_conversions(rng):
    p = random_points("g2", rng, 1)[0]
    pj = g2_double(g2_from_affine(p))
    p2 = g2_to_affine(pj)
    assert g2_eq(g2_add(pj, g2_from_affine(p2)), g2_double(pj))
    assert g2_eq(g2_add_affine(pj, p2), g2_double(pj))
    assert g2_add(pj, g2_neg(pj))[2] == (0, 0)
    assert g2_add_affine(pj, g2_to_affine(g2_neg(pj)))[2] == (0, 0)
    assert g2_add(G2_INFINITY, pj) == pj
    assert g2_add(pj, G2_INFINITY) == pj
    assert g2_add_affine(pj, None) == pj
    assert g2_to_affine(g2_add_affine(G2_INFINITY, p)) == p
    assert g2_double(G2_INFINITY)[2] == (0, 0)
    assert g2_eq(g2_mul(pj, R - 1), g2_neg(pj))
    assert g2_mul(pj, 0)[2] == (0, 0)
    assert g2_eq(g2_mul(pj, -3), g2_neg(g2_mul(pj, 3)))
    assert g2_mul(G2_INFINITY, 12345)[2] == (0, 0)
    assert not g2_eq(pj, G2_INFINITY)
    assert g2_to_affine(G2_INFINITY) is None
    points = [g2_mul(pj, k) for k in (0, 1, 3, R)]
    assert g2_batch_to_affine(points) == [g2_to_affine(x) for x in points]


def test_g2_curve_and_subgroup_checks(rng):
    assert g2_is_on_curve(None)
    x, (y0, y1) = G2_GENERATOR
    assert not g2_is_on_curve((x, (y0, (y1 + 1) % Q)))
    assert not g2_is_on_curve((x, (y0 + Q, y1)))
    off = off_subgroup_point("g2", rng)
    assert g2_is_on_curve(off)
    assert not g2_in_subgroup(off)
    k = R + 3
    assert g2_to_affine(g2_mul(g2_from_affine(off), k)) == from_py_g2(py_multiply(to_py_g2(off), k))


def test_g2_fixed_base(rng):
    scalars = [0, 1, R - 1, R, *random_scalars(rng, 2)]
    expected = [g2_to_affine(g2_mul(g2_from_affine(G2_GENERATOR), k)) for k in scalars]
    assert g2_fixed_base_batch(G2_GENERATOR, scalars) == expected
    table = g2_fixed_base_table(G2_GENERATOR, 3)
    assert [g2_to_affine(g2_fixed_base_mul(table, k)) for k in scalars] == expected
    assert g2_fixed_base_batch(None, [5]) == [None]


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("count", [0, 1, 2, 7, 40])
def test_multi_mul_is_the_sum_of_the_products(group, count, rng):
    """Σ kᵢ·Pᵢ by buckets against one multiplication a pair (itself held to py_ecc), with the
    edges among the scalars (0, 1, r − 1, unreduced) and points (infinity, repeats)."""
    from cuzk_core.curve.g1 import G1_OPS
    from cuzk_core.curve.g2 import G2_OPS

    ops = G1_OPS if group == "g1" else G2_OPS
    eq = g1_eq if group == "g1" else g2_eq
    points = random_points(group, rng, count)
    if count >= 2:
        points[1] = points[0]  # a repeated point
        points[-1] = None  # infinity
    edges = [*SCALAR_EDGES, 0, 1 << 32]
    scalars = [rng.choice([rng.randrange(R), rng.randrange(1 << 32), *edges]) for _ in points]
    expected = ops.infinity
    for point, k in zip(points, scalars, strict=True):
        if point is not None:
            expected = ops.add(expected, ops.mul(ops.add_affine(ops.infinity, point), k))
    assert eq(ops.multi_mul(points, scalars), expected)
    small = [rng.randrange(4) for _ in points]  # one-bit windows, buckets mostly empty
    expected = ops.infinity
    for point, k in zip(points, small, strict=True):
        if point is not None:
            expected = ops.add(expected, ops.mul(ops.add_affine(ops.infinity, point), k))
    assert eq(ops.multi_mul(points, small), expected)


def test_multi_mul_refuses_negative_scalars(rng):
    from cuzk_core.curve.g1 import G1_OPS

    with pytest.raises(ValueError, match="≥ 0"):
        G1_OPS.multi_mul(random_points("g1", rng, 1), [-3])
