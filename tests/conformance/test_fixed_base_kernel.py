"""ec/fixed_base.cu's device code built for the host with g++, fed the table exactly as the GPU
backends upload it (backends/gpu/fixed_base.py), against the core's reference fixed-base
multiplication; and that host side's own logic (table, scalar checks, chunking).

The kernel's carry chains have a host emulation (backends/kernels/common.cuh), so the digit
recoding, the table indexing, the signs, the inversions and the canonical output words
are all checked here without a GPU.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from host_build import build_harness

from cuzk_backend_cupy.plugin import plugin as cupy_plugin
from cuzk_backend_gpu import fixed_base
from cuzk_core.conformance.inputs import SPECIAL_SCALARS, random_points, random_scalars
from cuzk_core.curve.g1 import G1_GENERATOR
from cuzk_core.curve.g2 import G2_GENERATOR
from cuzk_core.fallbacks import reference_fixed_base_g1, reference_fixed_base_g2
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.timing import Timer

HARNESS = Path(__file__).with_name("fixed_base_host.cpp")
R = FR_MODULUS
GROUPS = {
    "g1": (fixed_base.G1, G1_GENERATOR, reference_fixed_base_g1),
    "g2": (fixed_base.G2, G2_GENERATOR, reference_fixed_base_g2),
}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """The compiled host harness: ``run(group, table, c, scalars)`` → (infinity, coords) rows."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("fixed_base"), "-O2")

    def run(group: fixed_base.Group, table: np.ndarray, c: int, scalars: list[int]):
        words = ints_to_limbs(scalars).view(np.uint32)
        lines = [
            group.name,
            f"{c:x} {fixed_base.window_count(c):x} {len(table):x}",
            " ".join(f"{w:x}" for w in table.reshape(-1)),
            f"{len(scalars):x}",
            *(" ".join(f"{w:x}" for w in row) for row in words),
        ]
        rows = [[int(w, 16) for w in line.split()] for line in program(lines).splitlines()]
        infinity = np.array([row[0] for row in rows], dtype=bool)
        coords = np.array([row[1:] for row in rows], dtype=np.uint32).view(np.uint64)
        return infinity, coords.reshape(len(rows), *group.batch.POINT_SHAPE)

    return run


def _check(harness, name: str, base, c: int, scalars: list[int]) -> None:
    group, _, reference = GROUPS[name]
    infinity, coords = harness(group, fixed_base.table_words(group, base, c), c, scalars)
    want = reference(base, ints_to_limbs(scalars))
    assert np.array_equal(infinity, want.infinity)
    bad = np.nonzero((coords != want.coords).reshape(len(scalars), -1).any(axis=1))[0]
    assert len(bad) == 0, f"{name}, c={c}: scalar {scalars[bad[0]]:#x} differs"


@pytest.mark.parametrize("name", GROUPS)
def test_the_backends_window_on_edges_and_random_scalars(harness, name):
    rng = random.Random(name)
    scalars = [*SPECIAL_SCALARS, *random_scalars(rng, 12)]
    scalars += scalars[-3:]  # repeated scalars
    _check(harness, name, GROUPS[name][1], fixed_base.WINDOW_BITS, scalars)


@pytest.mark.parametrize("name", GROUPS)
def test_windows_across_word_boundaries_and_another_base(harness, name):
    """c = 5 puts digits across 32-bit words (c = 8 never does); the base is not G."""
    rng = random.Random(f"{name}:5")
    base = random_points(name, rng, 1)[0]
    scalars = [*SPECIAL_SCALARS, *random_scalars(rng, 6)]
    _check(harness, name, base, 5, scalars)


# ---------------------------------------------------------------- the host side alone


@pytest.mark.parametrize("name", GROUPS)
def test_table_holds_the_signed_digit_multiples(name):
    group, generator, reference = GROUPS[name]
    c, half = 4, 8
    points = fixed_base.table_points(group, generator, c)
    assert len(points) == fixed_base.window_count(c) * half == 64 * 8
    picks = [0, 1, half - 1, half, 5 * half + 3, len(points) - 1]
    multiples = [(index % half + 1) << (c * (index // half)) for index in picks]
    assert [points[i] for i in picks] == reference(generator, ints_to_limbs(multiples)).to_points()


def test_table_words_are_montgomery_coordinates():
    words = fixed_base.table_words(fixed_base.G1, G1_GENERATOR)
    assert words.shape == (32 * 128, 24) and words.dtype == np.uint32
    x = int.from_bytes(words[0, :12].tobytes(), "little")
    assert x == (G1_GENERATOR[0] << 384) % FQ_MODULUS
    g2 = fixed_base.table_words(fixed_base.G2, G2_GENERATOR)
    y_c1 = int.from_bytes(g2[0, 36:48].tobytes(), "little")
    assert g2.shape == (4096, 48) and y_c1 == (G2_GENERATOR[1][1] << 384) % FQ_MODULUS


def test_scalars_must_be_canonical_limbs():
    ok = ints_to_limbs([0, R - 1])
    assert fixed_base.check_scalars(ok).flags.c_contiguous
    assert fixed_base.check_scalars(np.asfortranarray(ok)).flags.c_contiguous
    with pytest.raises(ValueError, match="scalar 1 is not below"):
        fixed_base.check_scalars(ints_to_limbs([5, R, 7]))
    with pytest.raises(ValueError, match="not below"):
        fixed_base.check_scalars(ints_to_limbs([(1 << 256) - 1]))
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        fixed_base.check_scalars(ok.reshape(-1))


@pytest.mark.parametrize("name", GROUPS)
def test_no_device_work_without_scalars_or_with_the_base_at_infinity(name):
    """The answers that need no table come back before the device is touched (none here)."""
    group, generator, reference = GROUPS[name]
    scalars = ints_to_limbs([0, 5, R - 1])
    for base, limbs in ((None, scalars), (generator, scalars[:0])):
        got = fixed_base.multiply(cupy_plugin.gpu, group, base, limbs, Timer(level=0))
        assert isinstance(got, group.batch) and got.equals(reference(base, limbs))


def test_chunks_fit_the_free_memory():
    g1, g2 = fixed_base.G1, fixed_base.G2
    assert (g1.scalar_bytes, g2.scalar_bytes) == (32 + 96 + 1, 32 + 192 + 1)
    free = fixed_base.HEADROOM + 1000 * g1.scalar_bytes
    assert fixed_base.plan_chunk(g1, 10**6, free) == 1000
    assert fixed_base.plan_chunk(g1, 10, free) == 10
    assert fixed_base.plan_chunk(g2, 10**6, 0) == 1
