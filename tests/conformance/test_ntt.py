"""NTT hooks against the CPU reference: every kind of transform, both root conventions (5 for
snarkjs, 7 for bellperson), coset shifts 7 and ω_{2n}, sizes 2^0 … 2^10 and 2^16 on GPUs."""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import REFERENCE, random_scalars, require_size

from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints

R = FR_MODULUS
KINDS = ["ntt", "intt", "coset_ntt", "coset_intt"]
NAIVE_LIMIT = 64


def _shift(domain: EvaluationDomain, which: str) -> int:
    if which == "7":
        return 7
    return EvaluationDomain(domain.log_size + 1, domain.generator).omega


def _call(backend, kind: str, values: np.ndarray, domain, shift: int) -> np.ndarray:
    if kind == "ntt":
        return backend.ntt(values, domain)
    if kind == "intt":
        return backend.intt(values, domain)
    if kind == "coset_ntt":
        return backend.coset_ntt(values, domain, shift)
    return backend.coset_intt(values, domain, shift)


def _naive(kind: str, values: list[int], domain, shift: int) -> list[int]:
    """The defining sums, O(n²)."""
    n, w = domain.size, domain.omega
    if kind in ("intt", "coset_intt"):
        w = pow(w, -1, R)
    out = [sum(v * pow(w, i * k, R) for i, v in enumerate(values)) % R for k in range(n)]
    if kind == "intt":
        return [x * pow(n, -1, R) % R for x in out]
    if kind == "coset_intt":
        s_inv = pow(shift, -1, R)
        return [x * pow(n, -1, R) * pow(s_inv, i, R) % R for i, x in enumerate(out)]
    if kind == "coset_ntt":
        scaled = [v * pow(shift, i, R) % R for i, v in enumerate(values)]
        return _naive("ntt", scaled, domain, shift)
    return out


@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 8, 10, 16])
@pytest.mark.parametrize("generator", [5, 7])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shift_kind", ["7", "omega_2n"])
def test_transform(backend_name, make_backend, reference, rng, log_n, generator, kind, shift_kind):
    require_size(backend_name, 1 << log_n)
    if shift_kind == "omega_2n" and not kind.startswith("coset"):
        pytest.skip("no shift in a plain transform")
    if backend_name == REFERENCE and 1 << log_n > NAIVE_LIMIT:
        pytest.skip("the reference is checked against the defining sums up to 64 points")
    domain = EvaluationDomain(log_n, generator)
    shift = _shift(domain, shift_kind)
    ints = random_scalars(rng, domain.size)
    values = ints_to_limbs(ints).reshape(-1, 4)
    got = _call(make_backend(), kind, values, domain, shift)
    assert got.dtype == np.uint64 and got.shape == (domain.size, 4)
    if backend_name == REFERENCE:
        assert limbs_to_ints(got) == _naive(kind, ints, domain, shift)
    else:
        assert np.array_equal(got, _call(reference, kind, values, domain, shift))


@pytest.mark.parametrize("fill", ["zeros", "r-1", "one-hot"])
def test_edge_values(backend_name, make_backend, reference, fill):
    domain = EvaluationDomain(6, 7)
    ints = {"zeros": [0] * 64, "r-1": [R - 1] * 64, "one-hot": [0] * 63 + [1]}[fill]
    values = ints_to_limbs(ints).reshape(-1, 4)
    backend = make_backend()
    for kind in KINDS:
        got = _call(backend, kind, values, domain, 7)
        assert limbs_to_ints(got) == _naive(kind, ints, domain, 7)


def test_round_trip_large(backend_name, make_backend, rng):
    """intt(ntt(x)) = x and coset_intt(coset_ntt(x)) = x at 2^16."""
    require_size(backend_name, 1 << 16)
    domain = EvaluationDomain(16, 5)
    values = ints_to_limbs(random_scalars(rng, domain.size)).reshape(-1, 4)
    backend = make_backend()
    assert np.array_equal(backend.intt(backend.ntt(values, domain), domain), values)
    there = backend.coset_ntt(values, domain, 7)
    assert np.array_equal(backend.coset_intt(there, domain, 7), values)
