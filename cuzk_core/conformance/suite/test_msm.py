"""MSM hooks beyond the checks' 64 points: random inputs up to the backend's largest input, every
window size under both digit encodings, and (on accelerators) invariants at 2^16."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from cuzk_core.backend import Backend
from cuzk_core.conformance.checks import (
    REFERENCE,
    Subject,
    check_msm,
    expected_msm,
    largest_input,
)
from cuzk_core.conformance.inputs import (
    GROUPS,
    SCALAR_KINDS,
    SPECIAL_SCALARS,
    R,
    random_points,
    random_scalars,
)
from cuzk_core.hookspecs import BackendInfo
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs

SIZES = (255, 256, 1025, 1 << 14, 1 << 16)
G2_LARGEST = 1 << 14
"""G2 against the reference stops here (the reference's G2 MSM of 2^16 takes minutes)."""
BY_DEFINITION = 256
"""The reference is held to the plain sum up to this many points."""
DIGITS = {"signed": {}, "unsigned": {"msm.signed_digits": False}}
WINDOW_POINTS = 255


def _random_cases(backend: BackendInfo) -> Iterator[tuple[str, int]]:
    top = BY_DEFINITION if backend.name == REFERENCE else largest_input(backend)
    for group in GROUPS:
        for n in SIZES:
            if n <= top and (group == "g1" or n <= G2_LARGEST):
                yield group, n


@pytest.mark.cuzk_cases("group, n", _random_cases)
def test_random(cuzk_subject: Subject, cuzk_rng: random.Random, group: str, n: int) -> None:
    """Random points and scalars, the backend's own window choice."""
    points, scalars = random_points(group, cuzk_rng, n), random_scalars(cuzk_rng, n)
    check_msm(cuzk_subject, group, points, scalars)


def _widest_window(backend: BackendInfo) -> int:
    """2^(c−1) buckets a window: plain Python stops at 10, C at 16, an accelerator goes to 20."""
    if backend.accelerated:
        return 20
    return 10 if backend.name == REFERENCE else 16


def _window_cases(backend: BackendInfo) -> Iterator[tuple[str, str, int]]:
    for group in GROUPS:
        for digits in DIGITS:
            for window_bits in range(4, _widest_window(backend) + 1):
                yield group, digits, window_bits


_WINDOW_INPUTS: dict[tuple[bool, str, int], tuple[list, list[int], G1Affines | G2Affines]] = {}


def _window_inputs(
    checked: Subject, group: str, seed: int
) -> tuple[list, list[int], G1Affines | G2Affines]:
    """One input per group and seed for every window test, and its expected MSM (made once)."""
    key = (checked.is_reference, group, seed)
    if key not in _WINDOW_INPUTS:
        rng = random.Random(f"{seed}:windows:{group}")
        points = random_points(group, rng, WINDOW_POINTS)
        scalars = [*random_scalars(rng, WINDOW_POINTS - len(SPECIAL_SCALARS)), *SPECIAL_SCALARS]
        _WINDOW_INPUTS[key] = points, scalars, expected_msm(checked, group, points, scalars)
    return _WINDOW_INPUTS[key]


@pytest.mark.cuzk_cases("group, digits, window_bits", _window_cases)
def test_window_bits(
    cuzk_subject: Subject, cuzk_seed: int, group: str, digits: str, window_bits: int
) -> None:
    """255 points (the special scalars among them) at each window size, signed and unsigned."""
    points, scalars, want = _window_inputs(cuzk_subject, group, cuzk_seed)
    check_msm(cuzk_subject, group, points, scalars, (DIGITS[digits],), (window_bits,), want)


def _msm(
    backend: Backend,
    group: str,
    bases: G1Affines | G2Affines,
    scalars: list[int],
    bits: int | None = None,
) -> Any:
    call = backend.msm_g1 if group == "g1" else backend.msm_g2
    return call(bases, ints_to_limbs(scalars), "conformance", bits).to_points()[0]


@pytest.mark.cuzk_cases("group", lambda backend: list(GROUPS) if backend.accelerated else [])
def test_large_invariants(cuzk_subject: Subject, cuzk_rng: random.Random, group: str) -> None:
    """At 2^16 (beyond the reference's reach in G2): every setting agrees, and MSM is linear."""
    n = 1 << 16
    ops, _, batch = GROUPS[group]
    points = batch.from_points(random_points(group, cuzk_rng, n))
    a = SCALAR_KINDS["mixed"](cuzk_rng, n)
    b = random_scalars(cuzk_rng, n)
    backend = cuzk_subject.backend()
    base = _msm(backend, group, points, a)
    for changes, bits in (({"msm.split_01": True}, None), ({"msm.signed_digits": False}, 13)):
        assert _msm(cuzk_subject.backend(**changes), group, points, a, bits) == base
    sum_ab = _msm(backend, group, points, [(x + y) % R for x, y in zip(a, b, strict=True)])
    b_only = _msm(backend, group, points, b)
    total = ops.add_affine(ops.add_affine(ops.infinity, base), b_only)
    assert ops.batch_to_affine([total])[0] == sum_ab
