"""ec/snarkjs_points.cu's device code built for the host with g++ against the core's numpy
decoder (the oracle of ``cuzk_decode_snarkjs_points``): status, infinity flag and canonical
words of random zkey points and every edge, without a GPU."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from host_build import build_harness

from cuzk_core.conformance.inputs import snarkjs_point_rows
from cuzk_core.interop.points import reference_decode

HARNESS = Path(__file__).with_name("snarkjs_points_host.cpp")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """``run(group, rows)`` → (status, infinity, canonical words) per row, from the host build."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("snarkjs_points"), "-O2")

    def run(group: str, rows: np.ndarray):
        words = rows.view("<u4")
        lines = [group, f"{len(rows):x}", *(" ".join(f"{w:x}" for w in row) for row in words)]
        out = [[int(w, 16) for w in line.split()] for line in program(lines).splitlines()]
        status = np.array([row[0] for row in out], dtype=np.uint8)
        infinity = np.array([row[1] for row in out], dtype=bool)
        coords = np.array([row[2:] for row in out], dtype=np.uint32).view(np.uint64)
        return status, infinity, coords

    return run


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_the_kernel_decodes_like_the_reference(harness, group):
    rows = snarkjs_point_rows(group, random.Random(group), 16)
    status, infinity, coords = harness(group, rows)
    want, want_status = reference_decode(rows, group)
    assert np.array_equal(status, want_status)
    assert np.array_equal(infinity, want.infinity)
    assert np.array_equal(coords, want.coords.reshape(len(rows), -1))
