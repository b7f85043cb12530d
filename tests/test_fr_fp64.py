"""bench/fp64/fr_fp64.cuh (the FP64 Fr product the round-45 experiment times) built for the host
with g++, its FMA rounding toward zero emulated exactly: products held to Python's integers,
edges included (0, 1, r − 1, and lazy inputs up to 2r − 1)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cuzk_core.field.constants import FR_MODULUS
from tests.conformance.host_build import build_harness

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "fp64" / "fr_fp64_host.cpp"
LIMBS, BITS = 5, 52
R_INV = pow(1 << (LIMBS * BITS), -1, FR_MODULUS)


def _limbs(x: int) -> list[int]:
    return [(x >> (BITS * i)) & ((1 << BITS) - 1) for i in range(LIMBS)]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory):
    return build_harness(SOURCE, tmp_path_factory.mktemp("fr_fp64"), optimize="-O2")


def test_the_fp64_product_is_the_montgomery_product_below_2r(harness, rng: random.Random) -> None:
    r = FR_MODULUS
    edges = [0, 1, 2, r - 1, r, r + 1, 2 * r - 1, (1 << 255) % r, (1 << 52) - 1, 1 << 52]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.randrange(2 * r), rng.randrange(2 * r)) for _ in range(2000)]
    pairs += [(rng.randrange(r), rng.randrange(r)) for _ in range(1000)]
    out = harness([" ".join(f"{v:x}" for v in _limbs(a) + _limbs(b)) for a, b in pairs])
    lines = out.splitlines()
    assert len(lines) == len(pairs)
    for (a, b), line in zip(pairs, lines, strict=True):
        words = [int(w, 16) for w in line.split()]
        assert all(w < 1 << BITS for w in words), (a, b, words)
        t = sum(w << (BITS * i) for i, w in enumerate(words))
        assert t < 2 * r, (a, b, t)
        assert t % r == a * b * R_INV % r, (a, b)
