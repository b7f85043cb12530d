"""Shared fixtures: the CPU backend façade and random inputs in the canonical layouts."""

from __future__ import annotations

import random

import pytest

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer


@pytest.fixture
def rng() -> random.Random:
    """Fresh randomness each run; the seed is printed so a failure can be replayed."""
    seed = random.SystemRandom().getrandbits(32)
    print(f"rng seed {seed}")
    return random.Random(seed)


@pytest.fixture(scope="session")
def cpu():
    """The CPU reference backend through the façade the prover uses."""
    return load_plugins().backend(load_profile("cpu"), Timer(level=0))


def random_scalars(rng: random.Random, n: int) -> list[int]:
    """``n`` uniform elements of Fr."""
    return [rng.randrange(FR_MODULUS) for _ in range(n)]


def random_g1(rng: random.Random, n: int) -> list:
    """``n`` random subgroup points of G1 (affine)."""
    return g1_fixed_base_batch(G1_GENERATOR, [rng.randrange(1, FR_MODULUS) for _ in range(n)])


def random_g2(rng: random.Random, n: int) -> list:
    """``n`` random subgroup points of G2 (affine)."""
    return g2_fixed_base_batch(G2_GENERATOR, [rng.randrange(1, FR_MODULUS) for _ in range(n)])
