"""Many Poseidon permutations on the GPU (hash/poseidon.cu), one state per thread; and layers of
2-to-1 hashes (a Merkle tree's levels) with every node kept on the device between them."""

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


def hash2_layers(
    gpu: Gpu, nodes: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]], table: PoseidonTable
) -> np.ndarray:
    """Every layer's hashes (``cuzk_poseidon_layers``; the core checked the indices), one launch
    a layer on one stream: the nodes and indices go up once and the results come back once."""
    sizes = [len(left) for left, _ in layers]
    first = len(nodes)
    gpu.ensure_fits((first + sum(sizes)) * SCALAR_LIMBS * 8 + 16 * sum(sizes), "hash layers")
    on_device = gpu.empty((first + sum(sizes), SCALAR_LIMBS), np.uint64)
    if first:
        gpu.adapter.copy_htod(on_device.ptr, np.ascontiguousarray(nodes, dtype=np.uint64))
    indices = gpu.to_device(
        np.concatenate([np.asarray(side, dtype=np.int64) for pair in layers for side in pair])
        if layers
        else np.zeros(0, dtype=np.int64)
    )
    constants = _table_on_device(gpu, table)
    kernel = gpu.kernel("hash/poseidon.cu", "poseidon_hash2_layer")
    out, at = first, 0
    for n in sizes:
        args = (
            on_device,
            indices[at : at + n],
            indices[at + n : at + 2 * n],
            np.uint64(n),
            np.uint64(out),
            constants,
            np.int32(table.half_full_rounds),
            np.int32(table.partial_rounds),
        )
        gpu.launch(kernel, n, args, block=128)
        out, at = out + n, at + 2 * n
    return on_device[first:].get()
