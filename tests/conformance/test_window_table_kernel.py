"""msm/window_table.cuh's device code built for the host with g++: a resident key's window
tables (``msm.table_bits``), row w·n + i = 2^(c·w)·base i, against the core's own scalar
multiplication, for random bases, infinity and repeated ones, in G1 and G2, without a GPU.

The kernel's carry chains have a host emulation (backends/kernels/common.cuh), so the
doublings, the batched inversion and the rows' layout are checked exactly as the GPU runs them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from host_build import build_harness, canonical_elements, flat_affine, montgomery_words

from cuzk_backend_gpu import msm
from cuzk_core.conformance.inputs import GROUPS, random_points

HARNESS = Path(__file__).with_name("window_table_host.cpp")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """``run(group, c, points)`` → the table's rows as lists of canonical coordinates."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("window_table"), "-O2")

    def run(group: str, c: int, points: list) -> list[list[int]]:
        windows = msm.table_windows(c)
        lines = [group, f"{c:x} {windows:x} {len(points):x}"]
        lines += [montgomery_words(flat_affine(group, p)) for p in points]
        rows = []
        for line in program(lines).splitlines():
            rows.append(canonical_elements(line))
        assert len(rows) == windows * len(points)
        return rows

    return run


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("c", [16, 21])
def test_rows_are_the_windows_multiples(harness, group, c):
    rng = random.Random(f"{group}:{c}")
    p, q = random_points(group, rng, 2)
    points = [p, None, q, p, *random_points(group, rng, 2)]  # infinity, a repeat
    ops = GROUPS[group][0]
    rows = harness(group, c, points)
    n = len(points)
    for w in range(msm.table_windows(c)):
        multiples = [
            ops.mul(ops.add_affine(ops.infinity, point), 1 << (c * w))
            if point is not None
            else ops.infinity
            for point in points
        ]
        want = ops.batch_to_affine(multiples)
        for i in range(n):
            assert rows[w * n + i] == flat_affine(group, want[i]), f"window {w}, base {i}"
