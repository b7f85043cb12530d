"""Fr, Fq and the Fq2/Fq6/Fq12 tower against py_ecc, on fresh random inputs and edge values."""

import pytest
from py_ecc.fields import optimized_bls12_381_FQ2 as PyFQ2
from py_ecc.optimized_bls12_381 import curve_order, field_modulus
from py_ecc_oracle import to_py_fq12

from cuzk_core.conformance.inputs import edge_values, random_scalars
from cuzk_core.field import (
    BLS_X,
    FQ_MODULUS,
    FR_MODULUS,
    FR_TWO_ADICITY,
    fq_inv,
    fq_is_lexicographically_largest,
    fq_sqrt,
    fr_batch_inverse,
    fr_inv,
    fr_root_of_unity,
)
from cuzk_core.field.tower import (
    FQ2_ONE,
    FQ2_ZERO,
    FQ6_ONE,
    FQ12_ONE,
    fq2_add,
    fq2_conj,
    fq2_inv,
    fq2_is_lexicographically_largest,
    fq2_mul,
    fq2_mul_by_fq,
    fq2_neg,
    fq2_sqr,
    fq2_sqrt,
    fq2_sub,
    fq6_add,
    fq6_inv,
    fq6_mul,
    fq6_neg,
    fq6_sqr,
    fq6_sub,
    fq12_add,
    fq12_conj,
    fq12_eq,
    fq12_frobenius,
    fq12_inv,
    fq12_mul,
    fq12_neg,
    fq12_pow,
    fq12_sqr,
    fq12_sub,
)

Q = FQ_MODULUS
R = FR_MODULUS
FR_EDGES = [v for v in edge_values(R) if v]
FQ_EDGES = [v for v in edge_values(Q) if v]
RANDOM = "random"
"""A parametrized case drawn in the test from its ``rng`` (so a seed replays it)."""


def rand_fq(rng) -> int:
    return rng.randrange(Q)


def rand_fq2(rng):
    return (rand_fq(rng), rand_fq(rng))


def rand_fq6(rng):
    return (rand_fq2(rng), rand_fq2(rng), rand_fq2(rng))


def rand_fq12(rng):
    return (rand_fq6(rng), rand_fq6(rng))


def embed6(a):
    """An Fq6 element as an Fq12 element (second half zero)."""
    return (a, (FQ2_ZERO, FQ2_ZERO, FQ2_ZERO))


def test_constants_match_py_ecc_and_curve_parameter():
    x = -BLS_X
    assert field_modulus == Q
    assert curve_order == R
    assert x**4 - x**2 + 1 == R
    assert (x - 1) ** 2 * (x**4 - x**2 + 1) // 3 + x == Q
    assert (R - 1) % (1 << FR_TWO_ADICITY) == 0
    assert ((R - 1) >> FR_TWO_ADICITY) % 2 == 1


@pytest.mark.parametrize("a", [*FR_EDGES, RANDOM, R + 3])
def test_fr_inv(a, rng):
    a = rng.randrange(1, R) if a == RANDOM else a
    assert a * fr_inv(a) % R == 1


def test_fr_inv_zero_raises():
    with pytest.raises(ZeroDivisionError):
        fr_inv(0)
    with pytest.raises(ZeroDivisionError):
        fr_inv(R)


def test_fr_batch_inverse(rng):
    values = [0, *FR_EDGES, 0, *random_scalars(rng, 20), R]
    inverses = fr_batch_inverse(values)
    for v, inv in zip(values, inverses, strict=True):
        assert inv == (0 if v % R == 0 else fr_inv(v))
    assert fr_batch_inverse([]) == []
    assert fr_batch_inverse([0, 0]) == [0, 0]


@pytest.mark.parametrize("generator", [5, 7])
def test_fr_root_of_unity(generator):
    for log_n in [0, 1, 2, 10, 31, 32]:
        w = fr_root_of_unity(log_n, generator)
        assert pow(w, 1 << log_n, R) == 1
        if log_n:
            assert pow(w, 1 << (log_n - 1), R) == R - 1
            assert pow(fr_root_of_unity(log_n, generator), 2, R) == fr_root_of_unity(
                log_n - 1, generator
            )
    assert fr_root_of_unity(0, generator) == 1
    assert fr_root_of_unity(32, generator) == pow(generator, (R - 1) >> 32, R)


def test_fr_root_of_unity_generators_differ_and_bounds():
    assert fr_root_of_unity(10, 5) != fr_root_of_unity(10, 7)
    assert fr_root_of_unity(7) == fr_root_of_unity(7, 7)
    with pytest.raises(ValueError):
        fr_root_of_unity(33)
    with pytest.raises(ValueError):
        fr_root_of_unity(-1)
    with pytest.raises(ValueError):
        fr_root_of_unity(4, generator=4)  # a square cannot generate the 2-Sylow subgroup


@pytest.mark.parametrize("a", [*FQ_EDGES, RANDOM])
def test_fq_inv(a, rng):
    a = rng.randrange(1, Q) if a == RANDOM else a
    assert a * fq_inv(a) % Q == 1
    with pytest.raises(ZeroDivisionError):
        fq_inv(0)


def test_fq_sqrt(rng):
    assert fq_sqrt(0) == 0
    assert fq_sqrt(1) in (1, Q - 1)
    assert fq_sqrt(Q - 1) is None  # −1 is a non-residue since q ≡ 3 mod 4
    for _ in range(5):
        a = rand_fq(rng)
        s = fq_sqrt(a * a % Q)
        assert s in (a, (Q - a) % Q)
        assert fq_sqrt(-a * a % Q) is None or a == 0


def test_fq_is_lexicographically_largest(rng):
    half = (Q - 1) // 2
    assert not fq_is_lexicographically_largest(0)
    assert not fq_is_lexicographically_largest(half)
    assert fq_is_lexicographically_largest(half + 1)
    assert fq_is_lexicographically_largest(Q - 1)
    for _ in range(5):
        y = rand_fq(rng)
        assert fq_is_lexicographically_largest(y) == (y * 2 // Q == 1)


def test_fq2_arithmetic_matches_py_ecc(rng):
    samples = [FQ2_ZERO, FQ2_ONE, (Q - 1, Q - 1), (0, 1), *(rand_fq2(rng) for _ in range(5))]
    for a in samples:
        for b in samples[-3:]:
            pa, pb = PyFQ2(list(a)), PyFQ2(list(b))
            assert fq2_add(a, b) == tuple((pa + pb).coeffs)
            assert fq2_sub(a, b) == tuple((pa - pb).coeffs)
            assert fq2_mul(a, b) == tuple((pa * pb).coeffs)
        assert fq2_sqr(a) == tuple((PyFQ2(list(a)) ** 2).coeffs)
        assert fq2_neg(a) == tuple((-PyFQ2(list(a))).coeffs)
        k = rand_fq(rng)
        assert fq2_mul_by_fq(a, k) == tuple((PyFQ2(list(a)) * k).coeffs)
        assert fq2_conj(a) == tuple((PyFQ2(list(a)) ** Q).coeffs)
        if a != FQ2_ZERO:
            assert fq2_mul(a, fq2_inv(a)) == FQ2_ONE
    with pytest.raises(ZeroDivisionError):
        fq2_inv(FQ2_ZERO)


def test_fq2_sqrt(rng):
    assert fq2_sqrt(FQ2_ZERO) == FQ2_ZERO
    assert fq2_sqrt(FQ2_ONE) in (FQ2_ONE, (Q - 1, 0))
    assert fq2_sqrt((Q - 1, 0)) in ((0, 1), (0, Q - 1))  # √−1 = ±u
    for _ in range(5):
        a = rand_fq2(rng)
        assert fq2_sqrt(fq2_sqr(a)) in (a, fq2_neg(a))
        norm = (a[0] ** 2 + a[1] ** 2) % Q
        is_square = fq_sqrt(norm) is not None
        assert (fq2_sqrt(a) is not None) == is_square
    non_residue = (1, 1)  # ξ = u + 1 is neither a square nor a cube: w⁶ − ξ is irreducible
    assert fq2_sqrt(non_residue) is None


def test_fq2_is_lexicographically_largest_zcash_rule(rng):
    half = (Q - 1) // 2
    assert fq2_is_lexicographically_largest((0, half + 1))
    assert not fq2_is_lexicographically_largest((Q - 1, half))  # decided on c1 alone
    assert fq2_is_lexicographically_largest((half + 1, 0))  # c1 == 0: decided on c0
    assert not fq2_is_lexicographically_largest((half, 0))
    assert not fq2_is_lexicographically_largest(FQ2_ZERO)
    for _ in range(5):
        y = rand_fq2(rng)
        assert fq2_is_lexicographically_largest(y) != fq2_is_lexicographically_largest(fq2_neg(y))


def test_fq6_arithmetic(rng):
    for _ in range(3):
        a, b, c = rand_fq6(rng), rand_fq6(rng), rand_fq6(rng)
        assert to_py_fq12(embed6(fq6_mul(a, b))) == to_py_fq12(embed6(a)) * to_py_fq12(embed6(b))
        assert fq6_sqr(a) == fq6_mul(a, a)
        assert fq6_mul(a, fq6_add(b, c)) == fq6_add(fq6_mul(a, b), fq6_mul(a, c))
        assert fq6_sub(fq6_add(a, b), b) == a
        assert fq6_add(a, fq6_neg(a)) == (FQ2_ZERO,) * 3
        assert fq6_mul(a, fq6_inv(a)) == FQ6_ONE
    sparse = ((Q - 1, 0), FQ2_ZERO, (0, 1))
    assert fq6_mul(sparse, fq6_inv(sparse)) == FQ6_ONE
    with pytest.raises(ZeroDivisionError):
        fq6_inv((FQ2_ZERO,) * 3)


def test_fq12_arithmetic_matches_py_ecc(rng):
    for _ in range(3):
        a, b = rand_fq12(rng), rand_fq12(rng)
        pa, pb = to_py_fq12(a), to_py_fq12(b)
        assert to_py_fq12(fq12_mul(a, b)) == pa * pb
        assert to_py_fq12(fq12_sqr(a)) == pa * pa
        assert to_py_fq12(fq12_add(a, b)) == pa + pb
        assert to_py_fq12(fq12_sub(a, b)) == pa - pb
        assert to_py_fq12(fq12_neg(a)) == -pa
        assert to_py_fq12(fq12_inv(a)) == pa.inv()
        assert fq12_eq(fq12_mul(a, fq12_inv(a)), FQ12_ONE)
        assert not fq12_eq(a, b)
    with pytest.raises(ZeroDivisionError):
        fq12_inv((((0, 0),) * 3,) * 2)


def test_fq12_frobenius_and_conj(rng):
    a = rand_fq12(rng)
    assert to_py_fq12(fq12_frobenius(a)) == to_py_fq12(a) ** Q
    assert to_py_fq12(fq12_conj(a)) == to_py_fq12(a) ** (Q**6)
    step = a
    for power in range(1, 13):
        step = fq12_frobenius(step, 1)
        assert fq12_frobenius(a, power) == step
    assert fq12_frobenius(a, 12) == a
    assert fq12_frobenius(a, 0) == a


def test_fq12_pow(rng):
    a = rand_fq12(rng)
    e = rng.getrandbits(64)
    assert to_py_fq12(fq12_pow(a, e)) == to_py_fq12(a) ** e
    assert fq12_pow(a, 0) == FQ12_ONE
    assert fq12_pow(a, 1) == a
