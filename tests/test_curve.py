"""G1 and G2 group law, scalar multiplication and checks against py_ecc.optimized_bls12_381."""

import secrets

import pytest
from py_ecc.fields import optimized_bls12_381_FQ as PyFQ
from py_ecc.fields import optimized_bls12_381_FQ2 as PyFQ2
from py_ecc.optimized_bls12_381 import G1 as PY_G1
from py_ecc.optimized_bls12_381 import G2 as PY_G2
from py_ecc.optimized_bls12_381 import Z1 as PY_Z1
from py_ecc.optimized_bls12_381 import Z2 as PY_Z2
from py_ecc.optimized_bls12_381 import add as py_add
from py_ecc.optimized_bls12_381 import double as py_double
from py_ecc.optimized_bls12_381 import multiply as py_multiply
from py_ecc.optimized_bls12_381 import normalize as py_normalize

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
    G2_B,
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
from cuzk_core.field import FQ_MODULUS, FR_MODULUS, fq_sqrt
from cuzk_core.field.tower import fq2_add, fq2_mul, fq2_sqr, fq2_sqrt

Q = FQ_MODULUS
R = FR_MODULUS
SCALAR_EDGES = [0, 1, 2, R - 1, R, R + 1, 2 * R + 7]


def py_g1(a):
    """Our affine G1 point (or None) as a py_ecc projective point."""
    return PY_Z1 if a is None else (PyFQ(a[0]), PyFQ(a[1]), PyFQ(1))


def from_py_g1(p):
    if p[2] == 0:
        return None
    x, y = py_normalize(p)
    return (x.n, y.n)


def py_g2(a):
    if a is None:
        return PY_Z2
    return (PyFQ2(list(a[0])), PyFQ2(list(a[1])), PyFQ2([1, 0]))


def from_py_g2(p):
    if p[2] == PyFQ2([0, 0]):
        return None
    x, y = py_normalize(p)
    return (tuple(x.coeffs), tuple(y.coeffs))


def g1_random():
    """A random subgroup point, affine, with its scalar."""
    k = secrets.randbelow(R - 1) + 1
    return k, g1_to_affine(g1_mul(g1_from_affine(G1_GENERATOR), k))


def g2_random():
    k = secrets.randbelow(R - 1) + 1
    return k, g2_to_affine(g2_mul(g2_from_affine(G2_GENERATOR), k))


def g1_off_subgroup_point():
    """A point on y² = x³ + 4 outside the order-r subgroup (no cofactor clearing)."""
    while True:
        x = secrets.randbelow(Q)
        y = fq_sqrt((x**3 + 4) % Q)
        if y is not None:
            return (x, y)


def g2_off_subgroup_point():
    while True:
        x = (secrets.randbelow(Q), secrets.randbelow(Q))
        y = fq2_sqrt(fq2_add(fq2_mul(fq2_sqr(x), x), G2_B))
        if y is not None:
            return (x, y)


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


@pytest.mark.parametrize("k", [*SCALAR_EDGES, secrets.randbelow(R), secrets.randbits(300)])
def test_g1_mul_matches_py_ecc(k):
    got = g1_to_affine(g1_mul(g1_from_affine(G1_GENERATOR), k))
    assert got == from_py_g1(py_multiply(PY_G1, k))


def test_g1_mul_scalar_edges():
    _, p = g1_random()
    pj = g1_from_affine(p)
    assert g1_mul(pj, 0)[2] == 0
    assert g1_mul(pj, R)[2] == 0
    assert g1_to_affine(g1_mul(pj, 1)) == p
    assert g1_eq(g1_mul(pj, R - 1), g1_neg(pj))
    assert g1_eq(g1_mul(pj, R + 5), g1_mul(pj, 5))
    assert g1_eq(g1_mul(pj, -3), g1_neg(g1_mul(pj, 3)))
    assert g1_mul(G1_INFINITY, 12345)[2] == 0


def test_g1_add_and_double_match_py_ecc():
    for _ in range(3):
        (_, a), (_, b) = g1_random(), g1_random()
        lam = secrets.randbelow(Q - 1) + 1
        aj = scaled_g1(g1_from_affine(a), lam)
        bj = g1_from_affine(b)
        expected = from_py_g1(py_add(py_g1(a), py_g1(b)))
        assert g1_to_affine(g1_add(aj, bj)) == expected
        assert g1_to_affine(g1_add(bj, aj)) == expected
        assert g1_to_affine(g1_add_affine(aj, b)) == expected
        assert g1_to_affine(g1_double(aj)) == from_py_g1(py_double(py_g1(a)))


def test_g1_add_special_cases():
    _, p = g1_random()
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


def test_g1_eq_and_affine_conversions():
    _, p = g1_random()
    pj = g1_from_affine(p)
    assert g1_eq(pj, scaled_g1(pj, secrets.randbelow(Q - 1) + 1))
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


def test_g1_curve_and_subgroup_checks():
    assert g1_is_on_curve(None)
    assert g1_in_subgroup(None)
    x, y = G1_GENERATOR
    assert not g1_is_on_curve((x, y + 1))
    assert not g1_is_on_curve((x + Q, y))  # non-canonical coordinate
    off = g1_off_subgroup_point()
    assert g1_is_on_curve(off)
    assert not g1_in_subgroup(off)
    # scalars are not reduced mod r: r·P ≠ O off the subgroup, and py_ecc agrees on k·P
    k = R + secrets.randbelow(1000)
    assert g1_to_affine(g1_mul(g1_from_affine(off), k)) == from_py_g1(py_multiply(py_g1(off), k))
    assert g1_mul(g1_from_affine(off), R)[2] != 0


def test_g1_fixed_base():
    scalars = [*SCALAR_EDGES, *(secrets.randbelow(R) for _ in range(6))]
    _, base = g1_random()
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


@pytest.mark.parametrize("k", [0, 1, R - 1, R, secrets.randbelow(R)])
def test_g2_mul_matches_py_ecc(k):
    got = g2_to_affine(g2_mul(g2_from_affine(G2_GENERATOR), k))
    assert got == from_py_g2(py_multiply(PY_G2, k))


def test_g2_add_and_double_match_py_ecc():
    (_, a), (_, b) = g2_random(), g2_random()
    aj = g2_double(g2_from_affine(a))  # a Jacobian point with Z ≠ 1
    a2 = g2_to_affine(aj)
    expected = from_py_g2(py_add(py_g2(a2), py_g2(b)))
    assert g2_to_affine(g2_add(aj, g2_from_affine(b))) == expected
    assert g2_to_affine(g2_add(g2_from_affine(b), aj)) == expected
    assert g2_to_affine(g2_add_affine(aj, b)) == expected
    assert g2_to_affine(g2_double(aj)) == from_py_g2(py_double(py_g2(a2)))


def test_g2_special_cases_and_conversions():
    _, p = g2_random()
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


def test_g2_curve_and_subgroup_checks():
    assert g2_is_on_curve(None)
    x, (y0, y1) = G2_GENERATOR
    assert not g2_is_on_curve((x, (y0, (y1 + 1) % Q)))
    assert not g2_is_on_curve((x, (y0 + Q, y1)))
    off = g2_off_subgroup_point()
    assert g2_is_on_curve(off)
    assert not g2_in_subgroup(off)
    k = R + 3
    assert g2_to_affine(g2_mul(g2_from_affine(off), k)) == from_py_g2(py_multiply(py_g2(off), k))


def test_g2_fixed_base():
    scalars = [0, 1, R - 1, R, secrets.randbelow(R), secrets.randbelow(R)]
    expected = [g2_to_affine(g2_mul(g2_from_affine(G2_GENERATOR), k)) for k in scalars]
    assert g2_fixed_base_batch(G2_GENERATOR, scalars) == expected
    table = g2_fixed_base_table(G2_GENERATOR, 3)
    assert [g2_to_affine(g2_fixed_base_mul(table, k)) for k in scalars] == expected
    assert g2_fixed_base_batch(None, [5]) == [None]
