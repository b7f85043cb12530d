"""Many Poseidon permutations at once, on a backend (the ``cuzk_poseidon`` hook).

A circuit's instance can need thousands of hashes outside its gadgets (porep-lite's Merkle tree:
K·D of them, 1.3 s in Python at 2^20); a backend runs them from one table of constants, the
sparse schedule of :mod:`.sparse_rounds` laid out in the order the permutation reads it, each in
Montgomery form (x·2^256 mod r, the form both the C and the CUDA kernels compute in):

- the first round's constants (t);
- each of the first R_F/2 full rounds: its matrix row by row (t²), then the constants the round
  adds after its linear layer (the next round's, t);
- each partial round: A₀₀, ŵ (t − 1), v̂ (t − 1), then the constants it adds after (t);
- each of the last R_F/2 full rounds as the first ones (the last adds zeros).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import attrs
import numpy as np

from cuzk_core.layout import ints_to_limbs, limbs_to_ints

from .params import PoseidonParams, poseidon_params
from .permutation import poseidon_permutation
from .sparse_rounds import sparse_rounds

if TYPE_CHECKING:
    from collections.abc import Callable


@attrs.frozen(eq=False)
class PoseidonTable:
    """One Poseidon instance as the backends' kernels read it (see the module docstring)."""

    params: PoseidonParams
    words: np.ndarray
    """``(table_words(t, R_F, R_P), 4)`` uint64: the constants in Montgomery form."""

    @property
    def t(self) -> int:
        """The state width."""
        return self.params.t

    @property
    def half_full_rounds(self) -> int:
        """R_F / 2: full rounds before the partial ones, and after."""
        return self.params.r_f // 2

    @property
    def partial_rounds(self) -> int:
        """R_P."""
        return self.params.r_p


def table_words(t: int, r_f: int, r_p: int) -> int:
    """How many constants the table of a (t, R_F, R_P) instance holds."""
    return t + r_f * (t * t + t) + r_p * (3 * t - 1)


@functools.cache
def poseidon_table(params: PoseidonParams | None = None) -> PoseidonTable:
    """The table of ``params`` (default: t = 3, the 2-to-1 hash's), built once."""
    params = poseidon_params() if params is None else params
    p, t, half = params.modulus, params.t, params.r_f // 2
    schedule = sparse_rounds(params)
    following = [*schedule.round_constants[1:], (0,) * t]
    values: list[int] = list(schedule.round_constants[0])
    full_mds = iter(schedule.full_mds)

    def full(r: int) -> None:
        values.extend(x for row in next(full_mds) for x in row)
        values.extend(following[r])

    for r in range(half):
        full(r)
    for i, (m00, w, v) in enumerate(schedule.sparse):
        values.extend((m00, *w, *v, *following[half + i]))
    for r in range(half + params.r_p, params.r_f + params.r_p):
        full(r)
    assert len(values) == table_words(t, params.r_f, params.r_p)
    mont = ints_to_limbs([x * (1 << 256) % p for x in values])
    mont.setflags(write=False)
    return PoseidonTable(params, mont)


def reference_permute(states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """Each row of ``states`` ((n, t, 4) canonical scalars) permuted, in plain Python: the oracle
    every backend's ``cuzk_poseidon`` matches bit for bit."""
    n, t = states.shape[0], table.t
    flat = limbs_to_ints(np.ascontiguousarray(states).reshape(n * t, 4))
    states_in = (flat[i * t : (i + 1) * t] for i in range(n))
    out = [x for state in states_in for x in poseidon_permutation(state, table.params)]
    return ints_to_limbs(out).reshape(n, t, 4)


Layers = list[tuple[np.ndarray, np.ndarray]]
"""Layers of 2-to-1 hashes: per layer, the ``(left, right)`` indices of the nodes it hashes."""


def check_layers(nodes: np.ndarray, layers: Layers, table: PoseidonTable) -> Layers:
    """``layers`` as int64 arrays, or ValueError: each layer's two sides of one length, each
    index one of the nodes before it (``nodes`` and earlier layers' results), t = 3."""
    if table.t != 3:
        raise ValueError(f"2-to-1 hashes need the t = 3 instance, not t = {table.t}")
    if nodes.ndim != 2 or nodes.shape[1] != 4:
        raise ValueError(f"nodes of shape {nodes.shape}, expected (n, 4)")
    checked, known = [], len(nodes)
    for j, (left, right) in enumerate(layers):
        given = [np.asarray(side) for side in (left, right)]
        if any(side.ndim != 1 or (len(side) and side.dtype.kind not in "iu") for side in given):
            shown = ", ".join(f"{side.dtype} of shape {side.shape}" for side in given)
            raise ValueError(f"layer {j}: indices must be 1-D integer arrays, not {shown}")
        if len(given[0]) != len(given[1]):
            raise ValueError(f"layer {j}: {len(given[0])} left nodes and {len(given[1])} right")
        for side in given:
            if len(side) and (side.min() < 0 or side.max() >= known):
                allowed = f"0..{known - 1}" if known else "none: no nodes come before it"
                raise ValueError(f"layer {j} reads a node outside {allowed}")
        checked.append((given[0].astype(np.int64), given[1].astype(np.int64)))
        known += len(given[0])
    return checked


def hash2_layers_by_permutations(
    nodes: np.ndarray,
    layers: Layers,
    table: PoseidonTable,
    permute: Callable[[np.ndarray, PoseidonTable], np.ndarray],
) -> np.ndarray:
    """Every layer's hashes (checked ``layers``), one ``permute`` call a layer."""
    first = len(nodes)
    out = np.empty((first + sum(len(left) for left, _ in layers), 4), dtype=np.uint64)
    out[:first] = nodes
    at = first
    for left, right in layers:
        states = np.zeros((len(left), 3, 4), dtype=np.uint64)
        states[:, 1] = out[left]
        states[:, 2] = out[right]
        if len(left):
            out[at : at + len(left)] = permute(states, table)[:, 1]
        at += len(left)
    return out[first:]


def reference_hash2_layers(nodes: np.ndarray, layers: Layers, table: PoseidonTable) -> np.ndarray:
    """Every layer's hashes in plain Python: the oracle of ``cuzk_poseidon_layers``."""
    return hash2_layers_by_permutations(
        nodes, check_layers(nodes, layers, table), table, reference_permute
    )
