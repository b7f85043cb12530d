"""bench/fp64/fp64_mont.cuh (the FP64 Montgomery products round 45's experiment times) built for
the host with g++, its FMA rounding toward zero emulated exactly: Fr and Fq products held to
Python's integers, edges included (0, 1, p − 1, and lazy inputs up to 2p − 1)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from tests.conformance.host_build import build_harness

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "fp64" / "fp64_host.cpp"
BITS = 52
FIELDS = {"fr": (FR_MODULUS, 5), "fq": (FQ_MODULUS, 8)}


def _limbs(x: int, n: int) -> list[int]:
    return [(x >> (BITS * i)) & ((1 << BITS) - 1) for i in range(n)]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory):
    return build_harness(SOURCE, tmp_path_factory.mktemp("fp64"), optimize="-O2")


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_the_fp64_product_is_the_montgomery_product_below_2p(
    harness, rng: random.Random, field: str
) -> None:
    p, n = FIELDS[field]
    edges = [0, 1, 2, p - 1, p, p + 1, 2 * p - 1, (1 << (p.bit_length() - 1)), (1 << 52) - 1]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.randrange(2 * p), rng.randrange(2 * p)) for _ in range(1500)]
    pairs += [(rng.randrange(p), rng.randrange(p)) for _ in range(500)]
    lines = harness(
        [" ".join(f"{v:x}" for v in [n, *_limbs(a, n), *_limbs(b, n)]) for a, b in pairs]
    )
    r_inv = pow(1 << (BITS * n), -1, p)
    out = lines.splitlines()
    assert len(out) == len(pairs)
    for (a, b), line in zip(pairs, out, strict=True):
        words = [int(w, 16) for w in line.split()]
        assert len(words) == n and all(w < 1 << BITS for w in words), (a, b, words)
        t = sum(w << (BITS * i) for i, w in enumerate(words))
        assert t < 2 * p, (a, b, t)
        assert t % p == a * b * r_inv % p, (a, b)
