"""Prefix sums, maxima and compaction of uint32 device arrays: the host side of util/scan.cu."""

from __future__ import annotations

import numpy as np

from .driver import NULL, DeviceArray, Gpu

MODULE = "util/scan.cu"
SCAN_THREADS = 256
SCAN_TILE = 1024
"""Elements one block of scan_tiles_u32 scans (the kernel's SCAN_TILE)."""


def inclusive_sum(gpu: Gpu, source: DeviceArray, out: DeviceArray) -> DeviceArray:
    """``out[i] = source[0] + … + source[i]`` (uint32, wrapping; ``out`` may be ``source``)."""
    n = out.size
    tiles = -(-n // SCAN_TILE)
    if tiles == 0:
        return out
    tile_sums = gpu.empty((tiles,), np.uint32) if tiles > 1 else None
    gpu.launch(
        gpu.kernel(MODULE, "scan_tiles_u32"),
        tiles * SCAN_THREADS,
        (source, out, tile_sums if tile_sums is not None else NULL, np.uint64(n)),
        block=SCAN_THREADS,
    )
    if tile_sums is not None:
        inclusive_sum(gpu, tile_sums, tile_sums)
        gpu.launch(
            gpu.kernel(MODULE, "scan_add_u32"), n - SCAN_TILE, (out, tile_sums, np.uint64(n))
        )
    return out


def maximum_into(gpu: Gpu, source: DeviceArray, out: DeviceArray) -> None:
    """Queue ``out[0] = max(source)`` (0 when empty) into a one-word device array."""
    gpu.clear(out)
    gpu.launch(gpu.kernel(MODULE, "max_u32"), source.size, (source, np.uint64(source.size), out))


def flatnonzero(gpu: Gpu, flags: DeviceArray) -> DeviceArray:
    """The indices of the nonzero flags, in order, as uint32 (reads the count back)."""
    n = flags.size
    positions = inclusive_sum(gpu, flags, gpu.empty((n,), np.uint32))
    count = int(positions[-1].get()) if n else 0
    out = gpu.empty((count,), np.uint32)
    if count:
        compact = gpu.kernel(MODULE, "compact_u32")
        gpu.launch(compact, n, (flags, positions, np.uint64(n), out))
    return out
