"""Host arrays that are views of a read-only file mapping (a compiled circuit's tables, a key
cache's sections), and the two things that knowing it allows.

- Their pages can leave this process once they are on the device: a clean page of a shared,
  read-only mapping comes back from the page cache if it is read again, so dropping it
  (``MADV_DONTNEED``) loses nothing, and a 1.2 GB cache no longer stays in the RSS after its
  upload.
- One device copy can serve every view of the file: a compiled circuit's witness program reads
  prefixes of its proving matrices, and both come from the same copy.

Only mappings opened read-only (``mmap.ACCESS_READ``, as ``np.memmap(mode="r")`` and the
compiled-circuit store open them) qualify: dropping the pages of a private or writable mapping
could lose writes.
"""

from __future__ import annotations

import mmap

import numpy as np

CHUNK_BYTES = 64 << 20
"""Bytes a mapped upload stages at a time (each of its two page-locked halves) before it drops
their pages: the mapped RSS it adds at most."""


def mapping_of(array: np.ndarray) -> tuple[mmap.mmap, int] | None:
    """The read-only file mapping that ``array``'s bytes lie in, and their offset in it; None
    for other memory."""
    base: object = array
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    if not isinstance(base, mmap.mmap) or base.closed or not memoryview(base).readonly:
        return None
    start = np.frombuffer(base, np.uint8).ctypes.data
    offset = array.ctypes.data - start
    return (base, offset) if offset >= 0 and offset + array.nbytes <= len(base) else None


def drop_pages(mapping: mmap.mmap, offset: int, nbytes: int) -> None:
    """Let this process's copies of the pages of ``mapping[offset : offset + nbytes]`` go."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = offset - offset % mmap.PAGESIZE
    end = min(len(mapping), -(-(offset + nbytes) // mmap.PAGESIZE) * mmap.PAGESIZE)
    if end > start:
        mapping.madvise(mmap.MADV_DONTNEED, start, end - start)
