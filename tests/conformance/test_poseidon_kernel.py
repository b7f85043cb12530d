"""hash/poseidon.cuh's device code built for the host with g++, fed the table and states as the
GPU backends upload them, against the core's reference permutation and hash layers: the
permutation of both kernels (``poseidon_permute``, ``poseidon_hash2_layer``) and the layer
kernel's reads of given and earlier nodes, checked without a GPU."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from host_build import build_harness

from cuzk_core.conformance.inputs import SPECIAL_SCALARS, random_scalars
from cuzk_core.gadgets.poseidon import poseidon_params
from cuzk_core.gadgets.poseidon.batch import (
    PoseidonTable,
    poseidon_table,
    reference_hash2_layers,
    reference_permute,
)
from cuzk_core.layout import ints_to_limbs

HARNESS = Path(__file__).with_name("poseidon_host.cpp")


def _words(array: np.ndarray) -> str:
    return " ".join(f"{w:x}" for w in np.ascontiguousarray(array).view(np.uint32).reshape(-1))


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """``run(lines)`` of the compiled harness → the elements it prints, as ``(n, 4)`` scalars."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("poseidon"), "-O2")

    def run(mode: str, table: PoseidonTable, rest: list[str]) -> np.ndarray:
        head = [mode, f"{table.t:x} {table.half_full_rounds:x} {table.partial_rounds:x}"]
        head += [f"{len(table.words):x}", _words(table.words)]
        out = program([*head, *rest])
        words = [[int(w, 16) for w in line.split()] for line in out.splitlines()]
        return np.array(words, dtype=np.uint32).reshape(-1, 8).view(np.uint64)

    return run


@pytest.mark.parametrize(("t", "r_p"), [(3, 57), (5, 60)])
def test_the_permutation_is_the_reference(harness, t: int, r_p: int) -> None:
    rng = random.Random(t)
    table = poseidon_table(poseidon_params(t, 8, r_p))
    values = [*SPECIAL_SCALARS, *random_scalars(rng, 4 * t)]
    values += random_scalars(rng, -len(values) % t)
    states = ints_to_limbs(values).reshape(-1, t, 4)
    got = harness("permute", table, [f"{len(states):x}", _words(states)])
    assert np.array_equal(got, reference_permute(states, table).reshape(-1, 4))


def test_layers_are_the_reference(harness) -> None:
    """Given nodes with the special values, layers reading them and earlier layers (repeats, a
    node with itself, an empty layer)."""
    rng = random.Random(11)
    nodes = ints_to_limbs([*SPECIAL_SCALARS, *random_scalars(rng, 3)])
    layers, known = [], len(nodes)
    for n in (6, 0, 4, 9, 1):
        left, right = (np.array([rng.randrange(known) for _ in range(n)]) for _ in "lr")
        layers.append((left, right))
        known += n
    layers[0][0][0] = layers[0][1][0] = 1
    lines = [f"{len(nodes):x}", _words(nodes), f"{len(layers):x}"]
    for left, right in layers:
        lines += [f"{len(left):x}", " ".join(f"{v:x}" for v in [*left, *right])]
    got = harness("layers", poseidon_table(), lines)
    assert np.array_equal(got, reference_hash2_layers(nodes, layers, poseidon_table()))
