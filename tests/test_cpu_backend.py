"""The CPU reference backend: MSM and NTT against definitions, on random inputs and edges."""

from __future__ import annotations

import py_ecc_oracle
import pytest

from cuzk_backend_cpu.msm import auto_window_bits, scalar_digits, window_count
from cuzk_core.conformance.inputs import (
    SCALAR_KINDS,
    SPECIAL_SCALARS,
    R,
    edge_points,
    random_points,
    random_scalars,
)
from cuzk_core.conformance.oracles import (
    msm_by_definition,
    quotient_by_definition,
    transform_by_definition,
)
from cuzk_core.domain import EvaluationDomain
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints


def test_g1_msm_matches_py_ecc(cpu, rng):
    points = random_points("g1", rng, 9)
    scalars = random_scalars(rng, 9)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "a")
    assert result.to_points()[0] == py_ecc_oracle.msm_g1(points, scalars)


@pytest.mark.parametrize("n", [1, 2, 3, 64, 257])
@pytest.mark.parametrize("window_bits", [None, 1, 4, 7, 13])
def test_g1_msm_random(cpu, rng, n, window_bits):
    points = random_points("g1", rng, n)
    scalars = random_scalars(rng, n)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", window_bits)
    assert result.to_points()[0] == msm_by_definition("g1", points, scalars)


@pytest.mark.parametrize("kind", ["bits", "mixed", "ones", "r-1", "specials", "zeros"])
def test_g1_msm_edge_scalars(cpu, rng, kind):
    points = random_points("g1", rng, 7)
    scalars = SCALAR_KINDS[kind](rng, 7)
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", 5)
    assert result.to_points()[0] == msm_by_definition("g1", points, scalars)


def test_g1_msm_edge_points(cpu, rng):
    points = edge_points("g1", "mixed", rng, 6)  # ∞, P, P, P, −P, ∞
    scalars = random_scalars(rng, len(points))
    result = cpu.msm_g1(G1Affines.from_points(points), ints_to_limbs(scalars), "t", 3)
    assert result.to_points()[0] == msm_by_definition("g1", points, scalars)
    opposite = edge_points("g1", "opposite", rng, 2)
    cancel = cpu.msm_g1(G1Affines.from_points(opposite), ints_to_limbs([5, 5]), "t")
    assert cancel.infinity.tolist() == [True]


@pytest.mark.parametrize("n", [1, 3, 17])
def test_g2_msm_random(cpu, rng, n):
    points = random_points("g2", rng, n)
    scalars = random_scalars(rng, n)
    scalars[0] = R - 1
    result = cpu.msm_g2(G2Affines.from_points(points), ints_to_limbs(scalars), "b_g2", 4)
    assert result.to_points()[0] == msm_by_definition("g2", points, scalars)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("c", [1, 2, 5, 16])
def test_scalar_digits_recompose(rng, signed, c):
    for k in [*SPECIAL_SCALARS, *random_scalars(rng, 5)]:
        digits = scalar_digits(k, c, window_count(c, signed), signed)
        assert sum(d << (c * i) for i, d in enumerate(digits)) == k
        bound = (1 << (c - 1)) if signed else (1 << c) - 1
        assert all(-bound <= d <= bound for d in digits)


def test_auto_window_grows_with_size():
    sizes = [auto_window_bits(n, True) for n in (1, 100, 10_000, 1_000_000)]
    assert sizes == sorted(sizes) and sizes[0] >= 1 and sizes[-1] <= 16


@pytest.mark.parametrize("log_n", [0, 1, 2, 5])
@pytest.mark.parametrize("generator", [5, 7])
def test_ntt_matches_definition(cpu, rng, log_n, generator):
    domain = EvaluationDomain(log_n, generator)
    values = random_scalars(rng, domain.size)
    evals = cpu.ntt(ints_to_limbs(values), domain)
    assert limbs_to_ints(evals) == transform_by_definition("ntt", values, domain)
    assert limbs_to_ints(cpu.intt(evals, domain)) == values


@pytest.mark.parametrize("shift", [7, 5, 12345])
def test_coset_ntt_evaluates_on_the_coset(cpu, rng, shift):
    domain = EvaluationDomain(4)
    coeffs = random_scalars(rng, domain.size)
    evals = limbs_to_ints(cpu.coset_ntt(ints_to_limbs(coeffs), domain, shift))
    rows = (0, 1, 9)
    on_the_coset = transform_by_definition("coset_ntt", coeffs, domain, shift, rows)
    for i, value in zip(rows, on_the_coset, strict=True):
        assert evals[i] == value
    back = cpu.coset_intt(ints_to_limbs(evals), domain, shift)
    assert limbs_to_ints(back) == coeffs


def test_quotient_pointwise(cpu, rng):
    a, b, c = (random_scalars(rng, 6) for _ in range(3))
    out = cpu.quotient_pointwise(*(ints_to_limbs(v) for v in (a, b, c)), scale=11)
    assert limbs_to_ints(out) == quotient_by_definition(a, b, c, 11)
