"""Random inputs in the shapes the tests need (a plain module: conftest.py names collide)."""

from __future__ import annotations

import random

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.field.constants import FR_MODULUS


def random_scalars(rng: random.Random, n: int) -> list[int]:
    """``n`` uniform elements of Fr."""
    return [rng.randrange(FR_MODULUS) for _ in range(n)]


def random_g1(rng: random.Random, n: int) -> list:
    """``n`` random subgroup points of G1 (affine)."""
    return g1_fixed_base_batch(G1_GENERATOR, [rng.randrange(1, FR_MODULUS) for _ in range(n)])


def random_g2(rng: random.Random, n: int) -> list:
    """``n`` random subgroup points of G2 (affine)."""
    return g2_fixed_base_batch(G2_GENERATOR, [rng.randrange(1, FR_MODULUS) for _ in range(n)])
