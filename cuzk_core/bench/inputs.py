"""Benchmark inputs made from a seed: never zeros, the same for every profile and every run.

Bases repeat with a period of :data:`DISTINCT_BASES` points, so inputs for 2^24-point MSMs take
seconds to make in Python, not hours; scalars are all distinct (numpy's generator).
"""

from __future__ import annotations

import random

import numpy as np

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import SCALAR_LIMBS, G1Affines, G2Affines

DISTINCT_BASES = 4096
"""How many different points the bases cycle through."""
_TOP_LIMB_BOUND = FR_MODULUS >> 192


def random_scalars(n: int, seed: int) -> np.ndarray:
    """``n`` scalars below r in the canonical ``(n, 4)`` layout, uniform up to a tiny bias."""
    rng = np.random.default_rng([seed, n])
    limbs = rng.integers(0, np.iinfo(np.uint64).max, (n, SCALAR_LIMBS), np.uint64, endpoint=True)
    limbs[:, -1] %= np.uint64(_TOP_LIMB_BOUND)  # top limb below r's: the value is below r
    return limbs


def random_bases(curve: str, n: int, seed: int) -> G1Affines | G2Affines:
    """``n`` subgroup points of G1 or G2, cycling through ``min(n, DISTINCT_BASES)`` random ones."""
    rng = random.Random(f"cuzk bench bases {curve} {seed}")
    distinct = [rng.randrange(1, FR_MODULUS) for _ in range(min(n, DISTINCT_BASES))]
    if curve == "g1":
        batch = G1Affines.from_points(g1_fixed_base_batch(G1_GENERATOR, distinct))
    else:
        batch = G2Affines.from_points(g2_fixed_base_batch(G2_GENERATOR, distinct))
    reps = -(-n // len(distinct))
    coords = np.tile(batch.coords, (reps,) + (1,) * (batch.coords.ndim - 1))[:n]
    return type(batch)(np.ascontiguousarray(coords), np.zeros(n, dtype=bool))
