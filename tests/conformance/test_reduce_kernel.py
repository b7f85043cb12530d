"""msm/reduce.cuh's device code built for the host with g++: the bucket reduction (chunked
running sums, planes by bit, binary trees of pair sums, each plane's doublings) against the
core's Σ_j (j+1)·S_j, in G1 and G2, without a GPU.

The buckets come in as XYZZ points with random Z (not affine ones lifted), with the edges the
reduction's additions meet: infinity buckets, equal running sums (doublings), a bucket and its
negation (infinity mid-sum), chunk counts that are not powers of two (padded planes), one
chunk (no planes), one bucket a chunk, and several windows.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from host_build import build_harness, canonical_elements, montgomery_words, xyzz_affine

from cuzk_core.conformance.inputs import GROUPS, random_points
from cuzk_core.field.constants import FQ_MODULUS
from cuzk_core.field.tower import fq2_mul

HARNESS = Path(__file__).with_name("reduce_host.cpp")
Q = FQ_MODULUS


def _xyzz_words(group: str, point, rng: random.Random) -> list[int]:
    """An affine point (None for infinity) as XYZZ coordinates with a random Z, flattened in
    the device's order."""
    if group == "g1":
        if point is None:
            return [0] * 4
        z = rng.randrange(1, Q)
        zz, zzz = z * z % Q, z * z * z % Q
        return [point[0] * zz % Q, point[1] * zzz % Q, zz, zzz]
    if point is None:
        return [0] * 8
    z = (rng.randrange(1, Q), rng.randrange(Q))
    zz = fq2_mul(z, z)
    zzz = fq2_mul(zz, z)
    coords = (fq2_mul(point[0], zz), fq2_mul(point[1], zzz), zz, zzz)
    return [c for pair in coords for c in pair]


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """``run(group, m, windows_of_buckets)`` → each window's Σ_j (j+1)·S_j (affine)."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("reduce"), "-O2")

    def run(group: str, m: int, windows: list[list], seed: str) -> list:
        rng = random.Random(seed)
        per_window = len(windows[0])
        lines = [group, f"{len(windows):x} {per_window:x} {m:x}"]
        lines += [montgomery_words(_xyzz_words(group, p, rng)) for w in windows for p in w]
        out = program(lines).splitlines()
        assert len(out) == len(windows)
        return [xyzz_affine(group, canonical_elements(line)) for line in out]

    return run


def _expected(group: str, buckets: list):
    ops = GROUPS[group][0]
    total = ops.infinity
    for j, point in enumerate(buckets):
        if point is not None:
            total = ops.add(total, ops.mul(ops.add_affine(ops.infinity, point), j + 1))
    return ops.batch_to_affine([total])[0]


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize(
    ("per_window", "m", "windows"),
    [
        (1, 1, 1),  # one bucket: no planes
        (5, 8, 2),  # one chunk, shorter than m
        (8, 1, 1),  # a bucket a chunk, 3 planes
        (12, 2, 1),  # 6 chunks padded to 8
        (33, 4, 3),  # 9 chunks padded to 16, a short last chunk
        (64, 4, 2),  # 16 chunks, 4 partials a plane
    ],
)
def test_windows_sums_match_the_core(harness, group, per_window, m, windows):
    seed = f"{group}:{per_window}:{m}:{windows}"
    rng = random.Random(seed)
    ops = GROUPS[group][0]
    points = random_points(group, rng, 6)
    p = points[0]
    cases = []
    for w in range(windows):
        buckets = [rng.choice([*points, None]) for _ in range(per_window)]
        if per_window >= 4 and w == 0:  # a bucket and its negation next to each other
            buckets[1], buckets[2] = p, ops.neg_affine(p)
        if per_window >= 8 and w == 1 % windows:  # equal running sums: doublings
            buckets = [None] * (per_window - 2) + [p, None]
        cases.append(buckets)
    if windows > 1:
        cases[-1] = [None] * per_window  # an empty window
    sums = harness(group, m, cases, seed)
    for w, buckets in enumerate(cases):
        assert sums[w] == _expected(group, buckets), f"window {w}"
