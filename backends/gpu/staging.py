"""Uploads through a pair of reused page-locked buffers: a few CPU threads fill one while the
DMA engine drains the other (the ``pool`` pinning, and every upload of a mapped file)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from .mapped import drop_pages, mapping_of

if TYPE_CHECKING:
    from .driver import DeviceArray, Gpu

_MIB = 1 << 20

COPY_SLICE = 8 * _MIB
"""Bytes one copying thread moves into a staging half at a time."""
_copiers: ThreadPoolExecutor | None = None
_copiers_lock = threading.Lock()


def parallel_copy(destination: np.ndarray, source: np.ndarray) -> None:
    """``destination[...] = source`` (equal-sized byte arrays) in slices on a few threads: one
    thread copying pageable memory into a staging half is several times slower than the DMA
    that drains it, and numpy lets go of the GIL while it copies."""
    global _copiers
    if source.nbytes <= COPY_SLICE:
        np.copyto(destination, source)
        return
    with _copiers_lock:
        if _copiers is None:
            workers = max(1, min(8, os.cpu_count() or 1))
            _copiers = ThreadPoolExecutor(workers, thread_name_prefix="cuzk-stage")
    slices = [slice(a, a + COPY_SLICE) for a in range(0, source.nbytes, COPY_SLICE)]
    for done in [_copiers.submit(np.copyto, destination[s], source[s]) for s in slices]:
        done.result()


class StagingPool:
    """Two reused page-locked buffers for chunked, overlapped uploads."""

    def __init__(self, gpu: Gpu) -> None:
        self._gpu = gpu
        self._buffers: list[np.ndarray] = []
        self._events: list[Any] = []
        self._lock = threading.Lock()

    def ensure(self, total_bytes: int) -> None:
        """Allocate the pair (``total_bytes`` together) unless it already exists at that size."""
        half = max(_MIB, total_bytes // 2)
        if self._buffers and self._buffers[0].nbytes == half:
            return
        self._buffers = [self._gpu.adapter.alloc_pinned(half) for _ in range(2)]
        self._events = [None, None]

    def upload(
        self, host: np.ndarray, out: DeviceArray, pool_bytes: int, stream: Any = None
    ) -> None:
        """Copy C-contiguous ``host`` into device array ``out`` through the pool, on ``stream``
        (else the driver's); returns when the staging buffers may be reused."""
        adapter = self._gpu.adapter
        with self._lock:
            self.ensure(pool_bytes)
            src = host.reshape(-1).view(np.uint8)
            mapped = mapping_of(
                src
            )  # a mapped file (key cache, compiled circuit): pages go once staged
            stream = stream if stream is not None else adapter.stream()
            step = self._buffers[0].nbytes
            try:
                for index, offset in enumerate(range(0, src.nbytes, step)):
                    slot = index % 2
                    if self._events[slot] is not None:
                        self._events[slot].synchronize()
                    size = min(step, src.nbytes - offset)
                    buffer = self._buffers[slot]
                    parallel_copy(buffer[:size], src[offset : offset + size])
                    if mapped is not None:
                        drop_pages(mapped[0], mapped[1] + offset, size)
                    adapter.copy_htod_async(out.ptr + offset, buffer[:size], stream)
                    event = adapter.event(timing=False)
                    event.record(stream)
                    self._events[slot] = event
            finally:  # even on a failure, no copy may still read a half when it is reused or freed
                for event in self._events:
                    if event is not None:
                        event.synchronize()
