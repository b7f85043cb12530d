"""Many Poseidon permutations on the GPU (hash/poseidon.cu), one state per thread."""

from __future__ import annotations

import numpy as np

from cuzk_core.gadgets.poseidon.batch import PoseidonTable
from cuzk_core.layout import SCALAR_LIMBS

from .driver import DeviceArray, Gpu

MAX_T = 8
"""The widest state the kernel holds (its POSEIDON_MAX_T)."""


def _table_on_device(gpu: Gpu, table: PoseidonTable) -> DeviceArray:
    cache = gpu.cache("poseidon tables")
    found = cache.get(table)
    if found is None:
        found = cache[table] = gpu.to_device(table.words)
    return found


def permute(gpu: Gpu, states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """Every ``(t, 4)`` state of ``states`` permuted, in a new host array."""
    states = np.ascontiguousarray(states, dtype=np.uint64)
    n, t = states.shape[0], table.t
    if states.shape[1:] != (t, SCALAR_LIMBS) or t > MAX_T:
        raise ValueError(f"states of shape {states.shape} for t = {t} (at most {MAX_T})")
    on_device = gpu.to_device(states)
    gpu.launch(
        gpu.kernel("hash/poseidon.cu", "poseidon_permute"),
        n,
        (
            on_device,
            _table_on_device(gpu, table),
            np.uint64(n),
            np.int32(t),
            np.int32(table.half_full_rounds),
            np.int32(table.partial_rounds),
        ),
        block=128,
    )
    return on_device.get()
