"""Row gathers on several host threads: ``values[indices]`` along the first axis.

Random reads of 8- to 32-byte rows are bound by memory latency, not bandwidth, so a gather of
millions of rows scales with the cores that issue them; numpy's ``take`` lets go of the GIL,
so plain threads do. Used by setup's QAP transposition and the prover's A/B query scalars.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

THREADS = min(16, os.cpu_count() or 1)
"""Threads a large gather is cut across."""
MIN_ROWS_PER_THREAD = 1 << 16
"""Below this many rows a thread costs more than it saves: fewer threads (one for small)."""


def gather_rows(
    values: np.ndarray, indices: np.ndarray, pool: ThreadPoolExecutor | None = None
) -> np.ndarray:
    """``np.take(values, indices, axis=0)``, one slice of ``indices`` per thread (``pool``'s,
    else a pool made for the call); indices must be in range."""
    threads = max(1, min(THREADS, len(indices) // MIN_ROWS_PER_THREAD))
    if threads == 1:
        return np.take(values, indices, axis=0)
    out = np.empty((len(indices), *values.shape[1:]), dtype=values.dtype)
    bounds = np.linspace(0, len(indices), threads + 1).astype(np.int64)

    def part(lo: int, hi: int) -> None:
        np.take(values, indices[lo:hi], axis=0, out=out[lo:hi], mode="clip")  # clip: unbuffered

    if pool is None:
        with ThreadPoolExecutor(threads) as own:
            list(own.map(part, bounds[:-1], bounds[1:]))
    else:
        list(pool.map(part, bounds[:-1], bounds[1:]))
    return out
