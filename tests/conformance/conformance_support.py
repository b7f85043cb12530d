"""Helpers of the conformance suite: backends by name, size limits, random inputs.

A module with its own name (not conftest) so that test files import it unambiguously.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest

from cuzk_core.backend import Backend
from cuzk_core.curve.g1 import (
    G1_GENERATOR,
    g1_add_affine,
    g1_batch_to_affine,
    g1_from_affine,
    g1_mul,
)
from cuzk_core.curve.g2 import (
    G2_GENERATOR,
    g2_add_affine,
    g2_batch_to_affine,
    g2_from_affine,
    g2_mul,
)
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.plugins import Plugins, load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer

CPU_LIMIT = 1 << 10
"""Largest input a CPU backend is given in this suite (MSM points, NTT size)."""
GPU_BACKENDS = frozenset({"cupy", "pycuda"})
REFERENCE = "cpu"


@functools.cache
def plugins() -> Plugins:
    """The plugin manager, loaded once for the session."""
    return load_plugins()


def backend_for(name: str, **changes: Any) -> Backend:
    """A façade for backend ``name`` under cpu.toml with ``changes`` (dotted keys) applied."""
    profile = load_profile("cpu", {"backend": name, **changes})
    return plugins().backend(profile, Timer(level=0))


def require_size(backend_name: str, n: int) -> None:
    """Skip sizes above CPU_LIMIT unless the backend runs on a GPU."""
    if n > CPU_LIMIT and backend_name not in GPU_BACKENDS:
        pytest.skip(f"{n} > {CPU_LIMIT}: GPU-only size")


def random_scalars(rng: random.Random, n: int) -> list[int]:
    """``n`` uniform elements of Fr."""
    return [rng.randrange(FR_MODULUS) for _ in range(n)]


@functools.cache
def _point_chain(group: str, n: int, seed: int) -> tuple:
    """``n`` distinct subgroup points P + i·Q (affine), cheap to make in bulk."""
    rng = random.Random(seed)
    if group == "g1":
        gen, mul, add, to_affine = G1_GENERATOR, g1_mul, g1_add_affine, g1_batch_to_affine
        lift = g1_from_affine
    else:
        gen, mul, add, to_affine = G2_GENERATOR, g2_mul, g2_add_affine, g2_batch_to_affine
        lift = g2_from_affine
    start = mul(lift(gen), rng.randrange(1, FR_MODULUS))
    step = to_affine([mul(lift(gen), rng.randrange(1, FR_MODULUS))])[0]
    points, current = [], start
    for _ in range(n):
        points.append(current)
        current = add(current, step)
    return tuple(to_affine(points))


def random_points(group: str, rng: random.Random, n: int) -> list:
    """``n`` distinct subgroup points of ``group`` (``"g1"`` or ``"g2"``), affine."""
    return list(_point_chain(group, n, rng.randrange(1 << 30)))
