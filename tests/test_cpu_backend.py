"""The CPU reference backend: MSM and NTT against definitions, on random inputs and edges."""

from __future__ import annotations

import pytest
from py_ecc.fields import optimized_bls12_381_FQ as FQ
from py_ecc.optimized_bls12_381 import Z1, add, multiply, normalize
from randomdata import random_g1, random_g2, random_scalars

from cuzk_backend_cpu.msm import auto_window_bits, scalar_digits, window_count
from cuzk_core.curve.g1 import g1_add, g1_from_affine, g1_mul, g1_to_affine
from cuzk_core.curve.g2 import g2_add, g2_from_affine, g2_mul, g2_to_affine
from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints

R = FR_MODULUS


def naive_g1(points, scalars):
    acc = g1_from_affine(None)
    for p, k in zip(points, scalars, strict=True):
        acc = g1_add(acc, g1_mul(g1_from_affine(p), k))
    return g1_to_affine(acc)


def naive_g2(points, scalars):
    acc = g2_from_affine(None)
    for p, k in zip(points, scalars, strict=True):
        acc = g2_add(acc, g2_mul(g2_from_affine(p), k))
    return g2_to_affine(acc)


def py_ecc_g1(points, scalars):
    acc = Z1
    for (x, y), k in zip(points, scalars, strict=True):
        acc = add(acc, multiply((FQ(x), FQ(y), FQ(1)), k))
    x, y = normalize(acc)
    return (int(x), int(y))


def test_g1_msm_matches_py_ecc(cpu, rng):
    points = random_g1(rng, 9)
    scalars = random_scalars(rng, 9)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "a")
    assert result.to_points()[0] == py_ecc_g1(points, scalars)


@pytest.mark.parametrize("n", [1, 2, 3, 64, 257])
@pytest.mark.parametrize("window_bits", [None, 1, 4, 7, 13])
def test_g1_msm_random(cpu, rng, n, window_bits):
    points = random_g1(rng, n)
    scalars = random_scalars(rng, n)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", window_bits)
    assert result.to_points()[0] == naive_g1(points, scalars)


EDGE_SCALARS = {
    "zeros": lambda n: [0] * n,
    "ones": lambda n: [1] * n,
    "r-1": lambda n: [R - 1] * n,
    "bits": lambda n: [i % 2 for i in range(n)],
    "mixed": lambda n: [0, 1, R - 1, 2, R - 2, 1 << 254][:n] + [3] * max(0, n - 6),
}


@pytest.mark.parametrize("kind", sorted(EDGE_SCALARS))
def test_g1_msm_edge_scalars(cpu, rng, kind):
    points = random_g1(rng, 7)
    scalars = EDGE_SCALARS[kind](7)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", 5)
    assert result.to_points()[0] == naive_g1(points, scalars)


def test_g1_msm_edge_points(cpu, rng):
    p = random_g1(rng, 1)[0]
    neg = (p[0], FQ_MODULUS - p[1])
    points = [None, p, p, p, neg, None]
    scalars = random_scalars(rng, len(points))
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", 3)
    assert result.to_points()[0] == naive_g1(points, scalars)
    cancel = cpu.msm_g1(G1Affines.from_points([p, neg]), ints_to_limbs([5, 5]), "t")
    assert cancel.infinity.tolist() == [True]


@pytest.mark.parametrize("n", [1, 3, 17])
def test_g2_msm_random(cpu, rng, n):
    points = random_g2(rng, n)
    scalars = random_scalars(rng, n)
    scalars[0] = R - 1
    result = cpu.msm_g2(G2Affines.from_points(points), ints_to_limbs(scalars), "b_g2", 4)
    assert result.to_points()[0] == naive_g2(points, scalars)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("c", [1, 2, 5, 16])
def test_scalar_digits_recompose(rng, signed, c):
    for k in [0, 1, R - 1, *random_scalars(rng, 5)]:
        digits = scalar_digits(k, c, window_count(c, signed), signed)
        assert sum(d << (c * i) for i, d in enumerate(digits)) == k
        bound = (1 << (c - 1)) if signed else (1 << c) - 1
        assert all(-bound <= d <= bound for d in digits)


def test_auto_window_grows_with_size():
    sizes = [auto_window_bits(n, True) for n in (1, 100, 10_000, 1_000_000)]
    assert sizes == sorted(sizes) and sizes[0] >= 1 and sizes[-1] <= 16


def naive_dft(values, omega):
    n = len(values)
    return [sum(v * pow(omega, i * j, R) for j, v in enumerate(values)) % R for i in range(n)]


@pytest.mark.parametrize("log_n", [0, 1, 2, 5])
@pytest.mark.parametrize("generator", [5, 7])
def test_ntt_matches_definition(cpu, rng, log_n, generator):
    domain = EvaluationDomain(log_n, generator)
    values = random_scalars(rng, domain.size)
    evals = cpu.ntt(ints_to_limbs(values), domain)
    assert limbs_to_ints(evals) == naive_dft(values, domain.omega)
    assert limbs_to_ints(cpu.intt(evals, domain)) == values


@pytest.mark.parametrize("shift", [7, 5, 12345])
def test_coset_ntt_evaluates_on_the_coset(cpu, rng, shift):
    domain = EvaluationDomain(4)
    coeffs = random_scalars(rng, domain.size)
    evals = limbs_to_ints(cpu.coset_ntt(ints_to_limbs(coeffs), domain, shift))
    for i in (0, 1, 9):
        x = shift * pow(domain.omega, i, R) % R
        assert evals[i] == sum(c * pow(x, j, R) for j, c in enumerate(coeffs)) % R
    back = cpu.coset_intt(ints_to_limbs(evals), domain, shift)
    assert limbs_to_ints(back) == coeffs


def test_quotient_pointwise(cpu, rng):
    a, b, c = (random_scalars(rng, 6) for _ in range(3))
    out = cpu.quotient_pointwise(*(ints_to_limbs(v) for v in (a, b, c)), scale=11)
    assert limbs_to_ints(out) == [(x * y - z) * 11 % R for x, y, z in zip(a, b, c, strict=True)]
