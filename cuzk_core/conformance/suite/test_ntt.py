"""NTT hooks beyond the checks' 2^6: 2^8 and 2^10 (2^16 on accelerators), both root conventions
(5 for snarkjs, 7 for bellperson), coset shifts 7 and ω_2n; the reference is held to the defining
sums at sampled rows."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from cuzk_core.conformance.checks import Subject, check_transform, largest_input
from cuzk_core.conformance.inputs import random_scalars
from cuzk_core.domain import BELLPERSON_GENERATOR, SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.hookspecs import BackendInfo

LOG_SIZES = (8, 10, 16)
TRANSFORMS = (
    ("ntt", None),
    ("intt", None),
    ("coset_ntt", "7"),
    ("coset_ntt", "omega_2n"),
    ("coset_intt", "7"),
    ("coset_intt", "omega_2n"),
)
"""Each transform with each shift it takes: none for plain ones, bellperson's and snarkjs's."""
SAMPLED_ROWS = 32
"""Rows of the reference's output checked against the defining sums (O(n) each)."""


def _transform_cases(backend: BackendInfo) -> Iterator[tuple[int, int, str, str | None]]:
    for log_n in LOG_SIZES:
        if 1 << log_n <= largest_input(backend):
            for generator in (BELLPERSON_GENERATOR, SNARKJS_GENERATOR):
                for method, shift in TRANSFORMS:
                    yield log_n, generator, method, shift


@pytest.mark.cuzk_cases("log_n, generator, method, shift", _transform_cases)
def test_transform(
    cuzk_subject: Subject,
    cuzk_rng: random.Random,
    log_n: int,
    generator: int,
    method: str,
    shift: str | None,
) -> None:
    """A random vector through one transform, against the reference (or the definition)."""
    domain = EvaluationDomain(log_n, generator)
    shifts = {None: None, "7": 7, "omega_2n": EvaluationDomain(log_n + 1, generator).omega}
    rows = sorted(cuzk_rng.sample(range(domain.size), SAMPLED_ROWS))
    values = random_scalars(cuzk_rng, domain.size)
    check_transform(cuzk_subject, method, values, domain, shifts[shift], rows)
