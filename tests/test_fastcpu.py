"""The cuzk-fastcpu plugin where the conformance suite does not reach: its batch-affine Pippenger
on inputs smaller than a batch at wide windows, and on many collisions in one bucket.

Every hook against the reference, at the suite's sizes, is the suite's job
(``cuzk_core/conformance/suite``, run over every installed backend). Skipped, with the reason,
when the plugin is not installed (``pip install ./plugins/cuzk-fastcpu``) or cannot run here.
"""

from __future__ import annotations

import random

import pytest

from cuzk_core.conformance.checks import Subject, check_msm, subject
from cuzk_core.conformance.inputs import SCALAR_KINDS, R, edge_points, random_points, random_scalars
from cuzk_core.errors import BackendUnavailable


@pytest.fixture(scope="module")
def fast() -> Subject:
    """The fastcpu backend held to the cpu reference, or a skip when it cannot run here."""
    try:
        return subject("fastcpu")
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("n", [1, 2, 3, 64])
def test_msm_few_points_wide_windows(fast: Subject, rng: random.Random, n: int) -> None:
    """Windows of 10–16 bits on fewer points than one batch of bucket additions."""
    points, scalars = random_points("g1", rng, n), random_scalars(rng, n)
    check_msm(fast, "g1", points, scalars, windows=tuple(range(10, 17)))


@pytest.mark.parametrize("kind", ["zeros", "ones", "r-1", "bits", "mixed"])
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_msm_edge_inputs_wide_windows(
    fast: Subject, rng: random.Random, group: str, kind: str
) -> None:
    """Edge scalars on infinity, repeated and opposite points, 7 of them, at windows 9 and 16."""
    points = edge_points(group, "mixed", rng, 7)
    check_msm(fast, group, points, SCALAR_KINDS[kind](rng, 7), windows=(9, 16))


def test_msm_repeated_points_and_scalars(fast: Subject, rng: random.Random) -> None:
    """Many additions into one bucket: the batch-affine collisions and their fallback."""
    p, q = random_points("g1", rng, 2)
    points = [p] * 150 + [q] * 150
    for scalars in ([1] * 300, [rng.randrange(R)] * 300, random_scalars(rng, 300)):
        check_msm(fast, "g1", points, scalars, windows=(4, 8))
