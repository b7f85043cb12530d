"""The counting sort of a GPU MSM's digits, the host side of msm/msm.cu's msm_digits and
msm_scatter: every scalar's base-2^c digits (signed or not) become entries (point | sign) grouped
by (window, bucket), or over a window table by (set of the table's windows, bucket), with each
group's offset. A sort can be kept for the next MSMs over the same scalars (:class:`SortShare`)."""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from cuzk_core.field.constants import FR_MODULUS

from . import scan
from .driver import NULL, DeviceArray, Gpu

SCALAR_BITS = FR_MODULUS.bit_length()
MODULE = "msm/msm.cu"
SORT_BLOCK = 256
"""Threads a block of msm_digits and msm_scatter (bench/gpu_bench.py --sort-block sets it: a
smaller block fits beside the batch-affine bucket sums' registers, round 36)."""
SCATTER_L2_SHARE = 8
"""The scatter's bucket write fronts (a 32-byte sector per bucket) may fill 1/SCATTER_L2_SHARE of
the L2: it runs over that many windows' buckets at a time, so partly written sectors stay in
the cache instead of going back to memory half-filled. On the H200 (60 MiB of L2) 8 against
one launch for all windows: sort 14.0 → 10.8 ms at 2^24 with 16-bit windows, 23.1 → 20.4 with
17, 22.5 → 16.5 with 18; shares 1 and 4 tie (bench/NOTES.md, round 9)."""


def window_count(c: int, signed: bool) -> int:
    """Windows covering a scalar below r (one more bit for the carry of signed digits)."""
    return -(-(SCALAR_BITS + (1 if signed else 0)) // c)


def bucket_count(c: int, signed: bool) -> int:
    """Buckets per window: digit magnitudes 1 … 2^(c−1) signed, 1 … 2^c − 1 unsigned."""
    return (1 << (c - 1)) if signed else (1 << c) - 1


def scatter_windows(l2_bytes: int, per_window: int) -> int:
    """Windows one scatter launch covers: their buckets' 32-byte write fronts within a share of
    the L2 (at least one window)."""
    return max(1, l2_bytes // SCATTER_L2_SHARE // (32 * per_window))


def bucket_sets(windows: int, table_windows: int) -> int:
    """Sets of buckets a pass over ``windows`` windows sums: one a window without a table
    (``table_windows`` 0), else one for each ``table_windows`` windows (the table's multiples)."""
    return -(-windows // table_windows) if table_windows else windows


def kernel(gpu: Gpu, name: str) -> Any:
    """A kernel of msm/msm.cu."""
    return gpu.kernel(MODULE, name)


def u32(value: int) -> np.uint32:
    """A kernel's 32-bit unsigned argument."""
    return np.uint32(value)


class SortedDigits(NamedTuple):
    """The nonzero digits of an MSM's scalars sorted by group: (window, bucket), or over a window
    table (set of its windows, bucket)."""

    offsets: DeviceArray
    """Where each group's entries begin (groups + 1 words, the last the total)."""
    entries: DeviceArray
    """Each digit's point (its index, or its table row) | its sign in bit 31, by group."""
    total: int
    max_count: int
    """The most entries a group has."""


def counting_sort(
    gpu: Gpu,
    scalars: DeviceArray,
    skip: DeviceArray | None,
    c: int,
    signed: bool,
    table_windows: int,
) -> SortedDigits | None:
    """The scalars' c-bit digits (signed or not; none for the points ``skip`` marks) counted
    and scattered into their groups by msm_digits and msm_scatter; None when all are zero.
    ``table_windows``: the windows of the bases' window table (0: no table)."""
    n = scalars.shape[0]
    windows, per_window = window_count(c, signed), bucket_count(c, signed)
    groups = bucket_sets(windows, table_windows) * per_window
    table_rows = u32(n if table_windows else 0)
    per_set = u32(max(1, table_windows))
    counts = gpu.zeros((groups,), np.uint32)
    digits = gpu.empty((windows, n), np.uint32)
    skip_arg = skip if skip is not None else NULL
    head = (scalars, skip_arg, u32(n), u32(c), u32(windows), u32(per_window))
    digits_args = (*head, np.int32(signed), per_set, counts, digits)
    gpu.launch(kernel(gpu, "msm_digits"), n, digits_args, block=SORT_BLOCK)
    offsets = gpu.empty((groups + 1,), np.uint32)
    gpu.clear(offsets[:1])
    scan.inclusive_sum(gpu, counts, offsets[1:])
    summary = gpu.empty((2,), np.uint32)
    gpu.copy_into(summary[:1], offsets[-1:])
    scan.maximum_into(gpu, counts, summary[1:])
    total, max_count = (int(v) for v in summary.get())
    if total == 0:
        return None
    cursor = gpu.copy(offsets[:-1])
    entries = gpu.empty((total,), np.uint32)
    scatter = kernel(gpu, "msm_scatter")
    # Whole sets a launch: their buckets' write fronts (a table of every window: one launch).
    step = int(per_set) * scatter_windows(gpu.l2_bytes(), per_window)
    for first in range(0, windows, step):
        window_range = (u32(first), u32(min(windows, first + step)))
        args = (digits, u32(n), *window_range, u32(per_window), table_rows, per_set)
        args = (*args, cursor, entries)
        gpu.launch(scatter, n, args, block=SORT_BLOCK)
    return SortedDigits(offsets, entries, total, max_count)


class SortKey(NamedTuple):
    """What a pass's sort depends on besides its scalars: their rows, the window bits, signed
    digits, a window table's windows (0: none), and the 0/1 split (whose ones the sort skips)."""

    start: int
    stop: int
    c: int
    signed: bool
    table_windows: int
    split_01: bool


class _Queued(NamedTuple):
    owner: weakref.ref
    key: SortKey
    sort: Callable[[], SortedDigits | None]
    nbytes: int


class _Ahead(NamedTuple):
    owner: weakref.ref
    key: SortKey
    future: concurrent.futures.Future
    nbytes: int


class SortShare:
    """Sorted digits kept for later MSMs over the same scalars, which then skip their sort.

    - A pass's sort, kept past its MSM (a proof's B·G1 and B·G2 take one handle): one at a
      time, let go when an MSM over other scalars begins, or with its handle.
    - Sorts ahead: the prover names MSMs it will ask for later (``cuzk_msm_ahead``). Their
      sorts wait in a queue until a pass's own sort has ended, then run on a host thread of
      their own (its own stream under CuPy) beside that pass's bucket sums. An MSM that takes
      one waits for every sort ahead first, and the one it takes becomes the kept sort: so no
      sort ahead allocates while an MSM's kernels still read memory another one freed.

    Only for a handle's scalars (nothing writes into them) and bases without points at infinity
    (whose skips would differ)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # the handles' weakref callbacks take it too
        self._kept: tuple[weakref.ref, SortKey, SortedDigits] | None = None
        self._queued: list[_Queued] = []
        self._ahead: list[_Ahead] = []
        self._worker: concurrent.futures.ThreadPoolExecutor | None = None

    def _owner_gone(self, ref: weakref.ref) -> None:
        with self._lock:
            if self._kept is not None and self._kept[0] is ref:
                self._kept = None
            self._queued = [q for q in self._queued if q.owner is not ref]
            self._ahead = [a for a in self._ahead if a.owner is not ref]

    def begin(self, owner: object) -> None:
        """An MSM over ``owner``'s scalars begins: a sort of other scalars is let go before its
        passes are sized."""
        with self._lock:
            if self._kept is not None and self._kept[0]() is not owner:
                self._kept = None

    def width(self, owner: object, n: int, widths: set[int]) -> int | None:
        """The window bits of a sort kept for all n of ``owner``'s scalars, when they are among
        ``widths`` (the widths the groups' size rules pick for n), else None."""
        kept = self._kept
        if kept is None or kept[0]() is not owner:
            return None
        key = kept[1]
        whole = key.start == 0 and key.stop == n and not key.table_windows
        return key.c if whole and key.c in widths else None

    def find(self, owner: object, key: SortKey) -> SortedDigits | None:
        """The sort kept or sorted ahead for ``owner``'s scalars under ``key``, or None. Sorts
        ahead for ``owner`` are taken out (one under ``key`` becomes the kept sort), and so are
        queued ones: its MSM has begun."""
        kept = self._kept
        if kept is not None and kept[0]() is owner and kept[1] == key:
            return kept[2]
        with self._lock:
            self._queued = [q for q in self._queued if q.owner() is not owner]
            mine = [a for a in self._ahead if a.owner() is owner]
            if not mine:
                return None
            self._ahead = [a for a in self._ahead if a.owner() is not owner]
            others = [a.future for a in self._ahead]
        concurrent.futures.wait([*others, *(a.future for a in mine)])
        for ahead in mine:
            sorted_ = ahead.future.result()  # a sort's failure is its MSM's (OOM: None)
            if ahead.key == key and sorted_ is not None:
                self.keep(owner, key, sorted_)
                return sorted_
        return None

    def keep(self, owner: object, key: SortKey, sorted_: SortedDigits) -> None:
        """Keep ``sorted_`` for later MSMs over ``owner``'s scalars, in place of any other."""
        with self._lock:
            self._kept = (weakref.ref(owner, self._owner_gone), key, sorted_)

    def queue(
        self,
        owner: object,
        key: SortKey,
        sort: Callable[[], SortedDigits | None],
        nbytes: int,
    ) -> None:
        """Sort ``owner``'s scalars under ``key`` by ``sort`` (``nbytes`` of device memory)
        once a pass's own sort has ended: ``sort`` runs on the share's thread in its own device
        scope, waits on the device for the scalars (an event recorded where they were made),
        returns once its work is done, and None when the device had no room for it."""
        with self._lock:
            self._queued.append(_Queued(weakref.ref(owner, self._owner_gone), key, sort, nbytes))

    def held(self, owner: object, key: SortKey) -> int:
        """Device bytes of a finished sort of ``owner``'s scalars under ``key`` (kept, or sorted
        ahead and done): memory already taken, which a pass under ``key`` takes over instead
        of sorting (at most the sort's own allocation); 0 for none, or one still running."""
        with self._lock:
            kept = self._kept
            if kept is not None and kept[0]() is owner and kept[1] == key:
                found: SortedDigits | None = kept[2]
            else:
                mine = [a.future for a in self._ahead if a.owner() is owner and a.key == key]
                done = [f.result() for f in mine if f.done() and f.exception() is None]
                found = next((d for d in done if d is not None), None)
        return 0 if found is None else found.offsets.nbytes + found.entries.nbytes

    def reserved(self, owner: object = None) -> int:
        """Device bytes the sorts ahead (queued or begun, not taken) of other scalars than
        ``owner``'s may allocate beside a pass."""
        with self._lock:
            entries = [*self._queued, *self._ahead]
            return sum(e.nbytes for e in entries if e.owner() is not owner)

    def start_queued(self) -> None:
        """Start the queued sorts on the share's host thread (a pass's own sort has ended)."""
        with self._lock:
            queued, self._queued = [q for q in self._queued if q.owner() is not None], []
            if queued and self._worker is None:
                self._worker = concurrent.futures.ThreadPoolExecutor(1, "cuzk-sort-ahead")
            for q in queued:
                assert self._worker is not None
                self._ahead.append(_Ahead(q.owner, q.key, self._worker.submit(q.sort), q.nbytes))


class SortSlot(NamedTuple):
    """Where a pass finds or leaves its sort: the share, whose scalars (``owner``), and the
    pass's :class:`SortKey`."""

    share: SortShare
    owner: object
    key: SortKey
