"""Work over an array's rows in fixed-size chunks, optionally on every core.

numpy lets go of the GIL inside its array operations, so plain threads run chunks in parallel;
and a chunk of a few thousand rows keeps its temporaries in the caches, where whole-array
operations on millions of rows stream through memory once per operation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def each_chunk(count: int, size: int, work: Callable[[int], T], threads: bool = True) -> list[T]:
    """``work(start)`` for ``start`` in ``0, size, 2·size, …`` below ``count``, results in chunk
    order; with ``threads`` on a pool of up to one thread a core (none for a single chunk)."""
    starts = range(0, count, size)
    if not threads or len(starts) <= 1:
        return [work(start) for start in starts]
    with ThreadPoolExecutor(max_workers=min(len(starts), os.cpu_count() or 1)) as pool:
        return list(pool.map(work, starts))
