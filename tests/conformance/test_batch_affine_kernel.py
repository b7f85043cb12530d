"""msm/batch_affine.cuh's device code built for the host with g++: the bucket sums' first pass
with `lanes` runs a thread sharing one inversion a step, against the core's own sums, in G1 and
G2, without a GPU.

Every group's partials (the slots msm_range_slot_counts would size for thread ranges of
lanes·range_len entries; the harness poisons them, so each must be written) must add up to the
sum of its entries' points, signs applied, with the edges a bucket meets: infinity bases, a
point added to itself (doubling), a point and its negation (infinity), empty and one-entry
groups, groups spanning many lanes and threads, and lanes spanning many groups.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from host_build import (
    build_harness,
    canonical_elements,
    flat_affine,
    montgomery_words,
    xyzz_affine,
)

from cuzk_core.conformance.inputs import GROUPS, random_points

HARNESS = Path(__file__).with_name("batch_affine_host.cpp")
SIGN = 1 << 31


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """``run(group, threads, lanes, bases, groups_of_entries)`` → each group's sum (affine)."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("batch_affine"), "-O2")

    def run(group: str, threads: int, lanes: int, bases: list, buckets: list[list[int]]):
        entries = [e for bucket in buckets for e in bucket]
        offsets = np.cumsum([0] + [len(b) for b in buckets]).tolist()
        range_len = max(1, -(-len(entries) // (threads * lanes)))
        thread_range = lanes * range_len
        counts = [
            0 if end == begin else (end - 1) // thread_range - begin // thread_range + 1
            for begin, end in itertools.pairwise(offsets)
        ]
        slots = np.cumsum([0, *counts]).tolist()
        head = [len(buckets), len(bases), len(entries)]
        lines = [group, " ".join(f"{v:x}" for v in [threads, lanes, range_len, *head])]
        lines += [montgomery_words(flat_affine(group, p)) for p in bases]
        lines.append(" ".join(f"{v:x}" for v in [*entries, *offsets, *slots]) or "")
        lines = program(lines).splitlines()
        partials = [xyzz_affine(group, canonical_elements(line)) for line in lines]
        assert len(partials) == slots[-1]
        ops = GROUPS[group][0]
        sums = []
        for g in range(len(buckets)):
            total = ops.infinity
            for p in partials[slots[g] : slots[g + 1]]:
                if p is not None:
                    total = ops.add_affine(total, p)
            sums.append(ops.batch_to_affine([total])[0])
        return sums

    return run


def _expected(group: str, bases: list, bucket: list[int]):
    ops = GROUPS[group][0]
    total = ops.infinity
    for entry in bucket:
        point = bases[entry & ~SIGN]
        if point is None:
            continue
        total = ops.add_affine(total, ops.neg_affine(point) if entry & SIGN else point)
    return ops.batch_to_affine([total])[0]


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize(("threads", "lanes"), [(1, 1), (2, 3), (3, 8), (5, 16)])
def test_partials_add_up_to_each_buckets_sum(harness, group, threads, lanes):
    rng = random.Random(f"{group}:{threads}:{lanes}")
    bases = [*random_points(group, rng, 12), None]  # the last base is infinity
    p = 0
    buckets = [
        [],  # empty
        [3],  # one entry
        [p, p],  # doubling
        [p, p | SIGN],  # P + (−P)
        [p, p | SIGN, p, 5, 5],  # infinity mid-run, then a doubling
        [12, 12 | SIGN],  # only infinity
        [],
        [12, 4, 12, 4 | SIGN, 7],  # infinity around a cancellation
        [rng.randrange(13) for _ in range(150)],  # across lanes and threads
    ]
    buckets += [
        [rng.randrange(13) | (SIGN if rng.random() < 0.5 else 0) for _ in range(rng.choice(sizes))]
        for sizes in [(0, 1, 2, 3, 9, 40)] * 12
    ]
    sums = harness(group, threads, lanes, bases, buckets)
    for g, bucket in enumerate(buckets):
        assert sums[g] == _expected(group, bases, bucket), f"bucket {g}: {bucket}"
