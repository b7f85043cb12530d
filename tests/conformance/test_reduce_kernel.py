"""msm/reduce.cuh's device code built for the host with g++, in G1 and G2, without a GPU:

- the bucket reduction (chunked running sums, planes by bit, binary trees of pair sums, each
  plane's doublings) against the core's Σ_j (j+1)·S_j. The buckets come in as XYZZ points with
  random Z (not affine ones lifted), with the edges the reduction's additions meet: infinity
  buckets, equal running sums (doublings), a bucket and its negation (infinity mid-sum), chunk
  counts that are not powers of two (padded planes), one chunk (no planes), one bucket a
  chunk, and several windows;
- the first pass's partials summed a bucket at a time (first partial copied, the rest added
  by the thread of the bucket's first range boundary) against their plain sum: buckets empty,
  inside one range, starting on a boundary, ending on one, and across up to 8 ranges.
"""

from __future__ import annotations

import itertools
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
    """``run(group, m, windows_of_buckets, seed)`` → each window's Σ_j (j+1)·S_j (affine)."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("reduce"), "-O2")

    def run(group: str, m: int, windows: list[list], seed: str) -> list:
        rng = random.Random(seed)
        per_window = len(windows[0])
        lines = [group, "windows", f"{len(windows):x} {per_window:x} {m:x}"]
        lines += [montgomery_words(_xyzz_words(group, p, rng)) for w in windows for p in w]
        out = program(lines).splitlines()
        assert len(out) == len(windows)
        return [xyzz_affine(group, canonical_elements(line)) for line in out]

    run.program = program
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


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("range_len", [1, 3, 8])
def test_partials_carried_across_range_boundaries_sum_each_bucket(harness, group, range_len):
    rng = random.Random(f"carries:{group}:{range_len}")
    ops = GROUPS[group][0]
    points = random_points(group, rng, 5)
    p = points[0]
    span = range_len
    counts = [0, span, 2 * span, 1, span - 1 or 1, 7 * span, 0, 3 * span + 1]  # ≤ 8 ranges each
    counts += [rng.randrange(0, 4 * span + 2) for _ in range(40)]
    offsets = [0]
    for c in counts:
        offsets.append(offsets[-1] + c)
    total = offsets[-1]
    ranges = -(-total // span)
    slots = [0]
    for begin, end in itertools.pairwise(offsets):
        slots.append(slots[-1] + (0 if end == begin else (end - 1) // span - begin // span + 1))
    partials = [rng.choice([*points, None]) for _ in range(slots[-1])]
    if slots[6] - slots[5] >= 2:  # a bucket whose partials double, then cancel
        partials[slots[5] : slots[5] + 2] = [p, p]
        partials[slots[5] + 2 : slots[6]] = [ops.neg_affine(p)] * (slots[6] - slots[5] - 2)
    words = [montgomery_words(_xyzz_words(group, q, rng)) for q in partials]
    head = f"{len(counts):x} {range_len:x} {ranges:x}"
    layout = " ".join(f"{v:x}" for v in [*offsets, *slots])
    lines = harness.program([group, "carries", head, layout, *words]).splitlines()
    assert len(lines) == len(counts)
    for g, line in enumerate(lines):
        total_point = ops.infinity
        for q in partials[slots[g] : slots[g + 1]]:
            if q is not None:
                total_point = ops.add_affine(total_point, q)
        want = ops.batch_to_affine([total_point])[0]
        assert xyzz_affine(group, canonical_elements(line)) == want, f"bucket {g}"
