"""The quotient step and R1CS evaluation (sparse matrix–vector products) beyond the checks' 64
rows: 255, 256, 1025 and (on accelerators) 2^16 rows, edge values among random ones."""

from __future__ import annotations

import random

import pytest

from cuzk_core.conformance.checks import (
    Subject,
    check_evaluate_r1cs,
    check_quotient,
    largest_input,
)
from cuzk_core.conformance.inputs import SCALAR_KINDS, random_r1cs, random_scalars
from cuzk_core.hookspecs import BackendInfo

SIZES = (255, 256, 1025, 1 << 16)


def _sizes(backend: BackendInfo) -> list[int]:
    return [n for n in SIZES if n <= largest_input(backend)]


@pytest.mark.cuzk_cases("n", _sizes)
def test_quotient(cuzk_subject: Subject, cuzk_rng: random.Random, n: int) -> None:
    """``(a·b − c)·scale`` with 0, 1 and r−1 mixed into random vectors."""
    a, b, c = (SCALAR_KINDS["mixed"](cuzk_rng, n) for _ in range(3))
    check_quotient(cuzk_subject, a, b, c, *random_scalars(cuzk_rng, 1))


@pytest.mark.cuzk_cases("rows", _sizes)
def test_evaluate_r1cs(cuzk_subject: Subject, cuzk_rng: random.Random, rows: int) -> None:
    """``A·z, B·z, C·z`` with empty, short and dense rows over a half-as-wide witness."""
    cols = rows // 2
    witness = [1, *SCALAR_KINDS["mixed"](cuzk_rng, cols - 1)]
    check_evaluate_r1cs(cuzk_subject, random_r1cs(cuzk_rng, rows, cols), witness)
