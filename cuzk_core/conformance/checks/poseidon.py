"""Checks of the Poseidon hooks: permutations at two widths against the paper's definition,
and a tree's layers of 2-to-1 hashes.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator

import numpy as np

from cuzk_core.conformance.inputs import (
    SPECIAL_SCALARS,
    R,
    random_scalars,
)
from cuzk_core.gadgets.poseidon import PoseidonParams, poseidon_params
from cuzk_core.gadgets.poseidon.batch import PoseidonTable, poseidon_table
from cuzk_core.layout import ints_to_limbs

from .base import (
    NOT_IMPLEMENTED,
    Check,
    CheckFailed,
    Subject,
    expected,
    kind_of,
    same_scalars,
    unchanged,
)

POSEIDON_WIDTHS = {3: 57, 5: 60}
"""Widths the Poseidon check permutes at, with their R_P: the 2-to-1 hash's, and a wider one."""


def poseidon_by_definition(state: list[int], params: PoseidonParams) -> list[int]:
    """The permutation as the paper writes it: per round, add the constants, apply x^5 to
    every lane (full rounds) or lane 0 (partial), multiply by the MDS matrix."""
    p = params.modulus
    for r, constants in enumerate(params.round_constants):
        state = [(x + c) % p for x, c in zip(state, constants, strict=True)]
        full = params.is_full_round(r)
        state = [pow(x, 5, p) if full or i == 0 else x for i, x in enumerate(state)]
        state = [sum(m * x for m, x in zip(row, state, strict=True)) % p for row in params.mds]
    return state


def check_poseidon(checked: Subject, table: PoseidonTable, values: list[int]) -> None:
    """The backend permutes ``values`` (t per state) as the reference does (as the definition
    does, for the reference itself) and leaves its input alone."""
    backend, t = checked.backend(), table.t
    states = ints_to_limbs(values).reshape(-1, t, 4)
    copy = states.copy()
    got = backend.poseidon(states, table)
    want = expected(
        checked,
        lambda reference: reference.poseidon(states, table),
        lambda: ints_to_limbs(
            [
                x
                for k in range(0, len(values), t)
                for x in poseidon_by_definition(values[k : k + t], table.params)
            ]
        ).reshape(-1, t, 4),
    )
    if not isinstance(got, np.ndarray) or got.shape != want.shape:
        raise CheckFailed(f"t = {t}: returned {kind_of(got)}, expected uint64 {want.shape}")
    same_scalars(got.reshape(-1, 4), want.reshape(-1, 4), f"{len(states)} states, t = {t}")
    unchanged([states], [copy], "poseidon")


def _poseidon(case: str, checked: Subject, rng: random.Random) -> str | None:
    """Random states (and none at all), or every lane 0, 1, r−1 and the other special values,
    at each width of :data:`POSEIDON_WIDTHS`."""
    if not checked.backend().implements("cuzk_poseidon"):
        return NOT_IMPLEMENTED
    for t, r_p in POSEIDON_WIDTHS.items():
        table = poseidon_table(poseidon_params(t, 8, r_p))
        if case == "random":
            batches = [random_scalars(rng, t * 67), []]
        else:
            specials = [*SPECIAL_SCALARS, rng.randrange(R)]
            rotated = [
                specials[(i + lane) % len(specials)]
                for i in range(len(specials))
                for lane in range(t)
            ]
            batches = [rotated, [v for v in specials for _ in range(t)]]  # then repeated lanes
        for values in batches:
            check_poseidon(checked, table, values)
    return None


def _poseidon_layers(checked: Subject, rng: random.Random) -> str | None:
    """Layers of 2-to-1 hashes over given nodes and earlier layers (special values, repeats, a
    node with itself, an empty layer; on a device one layer of several blocks), against
    poseidon_hash2 by definition (for the reference) or the reference's layers."""
    backend = checked.backend()
    if not backend.implements("cuzk_poseidon_layers"):
        return NOT_IMPLEMENTED
    info = checked.plugins.backends[checked.name]
    given = [*SPECIAL_SCALARS, *random_scalars(rng, 4)]
    sizes = [7, 0, 5, 300 if info.accelerated else 9, 1]
    layers, known = [], len(given)
    for n in sizes:
        left, right = (np.array([rng.randrange(known) for _ in range(n)]) for _ in "lr")
        layers.append((left, right))
        known += n
    layers[0] = (np.append(layers[0][0][:-1], 2), np.append(layers[0][1][:-1], 2))
    nodes = ints_to_limbs(given)
    inputs = [nodes, *(side for layer in layers for side in layer)]
    copies = [array.copy() for array in inputs]
    table = poseidon_table()

    def by_definition() -> np.ndarray:
        values = list(given)
        for left, right in layers:
            values += [
                poseidon_by_definition([0, values[a], values[b]], table.params)[1]
                for a, b in zip(left.tolist(), right.tolist(), strict=True)
            ]
        return ints_to_limbs(values[len(given) :])

    got = backend.poseidon_layers(nodes, layers, table)
    want = expected(checked, lambda ref: ref.poseidon_layers(nodes, layers, table), by_definition)
    same_scalars(got, want, f"{len(sizes)} layers of {sum(sizes)} hashes")
    unchanged(inputs, copies, "poseidon_layers")
    return None


def checks() -> Iterator[Check]:
    """Permutations (random and special lanes) and a tree's layers."""
    for case in ("random", "edges"):
        yield Check("cuzk_poseidon", case, functools.partial(_poseidon, case))
    yield Check("cuzk_poseidon_layers", "tree", _poseidon_layers)
