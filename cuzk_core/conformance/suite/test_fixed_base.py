"""Fixed-base hooks beyond the checks' 257 scalars (on accelerators), and key generation through
a backend: the same seed gives the reference's parameters byte for byte."""

from __future__ import annotations

import functools
import random

import pytest

from cuzk_core.backend import Backend
from cuzk_core.conformance.checks import (
    REFERENCE,
    Subject,
    TinyCircuit,
    check_fixed_base,
)
from cuzk_core.conformance.inputs import GROUPS, SCALAR_KINDS, random_points, random_scalars
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import NativeCircuit

LARGE = {"g1": 1 << 12, "g2": 1 << 10}
"""Scalars an accelerator multiplies against the reference (whose G2 takes ~1 ms a scalar)."""


@pytest.mark.cuzk_cases("group", lambda backend: list(GROUPS) if backend.accelerated else [])
def test_large(cuzk_subject: Subject, cuzk_rng: random.Random, group: str) -> None:
    """Thousands of scalars, 0, 1 and r−1 scattered among them, on a random base."""
    n = LARGE[group]
    scalars = SCALAR_KINDS["mixed"](cuzk_rng, n // 8)
    scalars += random_scalars(cuzk_rng, n - len(scalars))
    cuzk_rng.shuffle(scalars)
    base = random_points(group, cuzk_rng, 1)[0]
    note = check_fixed_base(cuzk_subject, group, base, scalars)
    if note is not None:
        pytest.skip(f"cuzk_fixed_base_{group}: {note}")


@functools.cache
def _reference_key(reference: Backend) -> tuple[TinyCircuit, bytes]:
    """The circuit and the reference's parameters for it (no backend: the core's own path)."""
    circuit = TinyCircuit(5, steps=6)
    key = generate_parameters(NativeCircuit(circuit).assign(reference).matrices, seed=11)
    return circuit, key.to_bytes()


@pytest.mark.cuzk_cases("case", lambda backend: [] if backend.name == REFERENCE else ["seed-11"])
def test_setup_through_the_backend(cuzk_subject: Subject, case: str) -> None:
    """generate_parameters with the backend (its fixed-base hooks, or the fallback) gives the
    reference's bytes."""
    circuit, want = _reference_key(cuzk_subject.reference)
    backend = cuzk_subject.backend()
    key = generate_parameters(
        NativeCircuit(circuit).assign(backend).matrices, seed=11, backend=backend
    )
    assert key.to_bytes() == want
