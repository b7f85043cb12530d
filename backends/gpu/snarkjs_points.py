"""snarkjs's points decoded on the GPU: the host side of ec/snarkjs_points.cu.

A zkey's bases lie in the file as the device's own Montgomery words (x·2^384 mod q, 32-bit limbs
little-endian), so the bytes are uploaded as they are mapped; a thread per point checks it and
writes canonical words, its infinity flag and its status (the core's codes,
:data:`cuzk_core.interop.points.VALID` and the rest). The work is copy-bound: ~2 field products
a coordinate, against 96 or 192 bytes each way.
"""

from __future__ import annotations

import numpy as np

from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.timing import Timer

from .driver import Gpu

MODULE = "ec/snarkjs_points.cu"
BLOCK = 128
BATCHES: dict[str, type[G1Affines | G2Affines]] = {"g1": G1Affines, "g2": G2Affines}


def decode(
    gpu: Gpu, raw: np.ndarray, group: str, timer: Timer
) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """``raw`` (``(n, 96)`` or ``(n, 192)`` uint8, as in the zkey) → (batch, status)."""
    batch_type = BATCHES[group]
    n = len(raw)
    words = 2 * int(np.prod(batch_type.POINT_SHAPE))
    if raw.shape != (n, 4 * words) or raw.dtype != np.uint8:
        raise ValueError(f"{group} points must be an (n, {4 * words}) uint8 array, got {raw.shape}")
    status = np.zeros(n, dtype=np.uint8)
    if n == 0:
        return batch_type.empty(0), status
    gpu.warm_up(timer, (MODULE,))  # built when first needed, in its own span
    gpu.ensure_fits(2 * raw.nbytes + 2 * n, f"decoding {n} snarkjs {group.upper()} points")
    source = gpu.to_device(np.ascontiguousarray(raw).view(np.uint32))
    out = gpu.empty((n, words), np.uint32)
    infinity = gpu.empty((n,), np.uint8)
    codes = gpu.empty((n,), np.uint8)
    kernel = gpu.kernel(MODULE, f"snarkjs_points_{group}")
    gpu.launch(kernel, n, (source, np.uint64(n), out, infinity, codes), block=BLOCK)
    coords = out.get().view(np.uint64).reshape(n, *batch_type.POINT_SHAPE)
    return batch_type(coords, infinity.get() != 0), codes.get()
