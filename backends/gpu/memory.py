"""Host and device memory under the profile's policies: pinning, staging, and where bases live.

Pinning (``memory.pinning``): ``none`` copies from pageable memory (the driver stages it);
``register`` page-locks the big host arrays in place (cudaHostRegister, the adapter's
``register``) during ``pin``; ``pool`` uploads through a reused pair of page-locked staging
buffers (``pool_mib`` in all), so a few CPU threads fill one while the DMA engine drains the other,
downloads results into reused page-locked arrays, and ``alloc_host`` hands out page-locked
arrays. Key storage (``memory.key_storage``): ``device`` keeps uploaded bases resident across
proofs (keyed by the host batch, freed when it is), ``host`` uploads per proof and frees on
release, ``stream``/``mmap`` leave bases on the host and the MSM uploads them chunk by chunk,
double-buffered: chunk k+1 is copied on the side stream while chunk k is summed, two chunks
within ``memory.device_budget_kib`` when it is set (see ``msm.for_each_chunk``).

Under ``register`` and ``pool`` the bases' uploads overlap with compute: they go on the adapter's
side stream (from page-locked memory directly, else through a second staging pool on a
background thread), the conversion to Montgomery form follows them there, and an MSM waits for
its bases only when its bucket sums need them (a ``wait_bases`` span shows any stall). Under
``none`` uploads stay synchronous: the pageable baseline.

The hooks mostly take and return host arrays, so an array this backend returns keeps its device
copy (a mirror) while it lives, read-only: a later hook handed the same array (or rows of it, as
a view) copies it on the device instead of uploading it (the witness into the R1CS products and
the gathers of the MSMs' scalars, each transform's output into the next). Where the core allows
it, results stay on the device as :class:`DeviceScalars` handles instead: gathered MSM scalars,
and A·z, B·z, C·z for this backend's own check and H (``for_quotient``), read in place.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import attrs
import numpy as np

from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.profile import MSM_NAMES, KeyStorage, Pinning, Profile
from cuzk_core.timing import Timer

from . import msm
from .driver import RESIDENT, DeviceArray, Gpu
from .staging import StagingPool

_MIB = 1 << 20


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class PinnedRegistry:
    """Host address ranges currently page-locked (registered or allocated pinned).

    Page-locking belongs to the process, not to one library, so both backends share one.
    """

    def __init__(self) -> None:
        self._ranges: dict[int, int] = {}
        self._lock = threading.Lock()

    def add(self, address: int, nbytes: int) -> None:
        """Record a page-locked range."""
        with self._lock:
            self._ranges[address] = nbytes

    def remove(self, address: int) -> None:
        """Forget a range."""
        with self._lock:
            self._ranges.pop(address, None)

    def covers(self, array: np.ndarray) -> bool:
        """Whether all of ``array``'s bytes lie in one page-locked range."""
        start = _address(array)
        end = start + array.nbytes
        with self._lock:
            return any(a <= start and end <= a + n for a, n in self._ranges.items())


PINNED = PinnedRegistry()


@attrs.define
class Registration:
    """What ``pin`` page-locked in place, for ``unpin``: (address, adapter handle) pairs."""

    entries: list[tuple[int, Any]] = attrs.field(factory=list)


class _Lease:
    """One pooled page-locked block seen as an array: numpy keeps this object as the base of
    every view, so the block goes back to its pool only when the last view is gone."""

    def __init__(self, pool: ResultBuffers, block: np.ndarray, shape: tuple, dtype: Any) -> None:
        self._pool = pool
        self._block = block
        self.__array_interface__ = {
            "data": (_address(block), False),
            "shape": shape,
            "typestr": np.dtype(dtype).str,
            "version": 3,
        }

    def __del__(self) -> None:
        self._pool.give_back(self._block)


class ResultBuffers:
    """Page-locked host arrays for the results hooks return, reused once their arrays are gone.

    A fresh array costs its first touch and a pageable download (about 12 ms for 32 MB on the
    H200's host); a reused page-locked one takes the DMA straight in. Idle blocks are kept for
    the :data:`KEEP_SIZES` sizes given back last, :data:`KEEP_PER_SIZE` of each: a proof's a,
    b, c, z and H come in three sizes, so a daemon keeps two or three circuits' worth.
    """

    KEEP_PER_SIZE = 4
    KEEP_SIZES = 8

    def __init__(self, gpu: Gpu) -> None:
        self._gpu = gpu
        self._idle: dict[int, list[np.ndarray]] = {}  # by size, the last given back last
        self._lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised page-locked array of ``shape`` and ``dtype``."""
        nbytes = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
        with self._lock:
            idle = self._idle.get(nbytes)
            block = idle.pop() if idle else None
        if block is None:
            block = self._gpu.adapter.alloc_pinned(nbytes)
            PINNED.add(_address(block), nbytes)
            weakref.finalize(block, PINNED.remove, _address(block))
        return np.asarray(_Lease(self, block, shape, dtype))

    def give_back(self, block: np.ndarray) -> None:
        """Keep ``block`` for a later :meth:`take`, or let it go (beyond the limits)."""
        # Called from finalizers, maybe by the collector inside take on this very thread:
        # never wait for the lock; a block that finds it taken is simply freed.
        if not self._lock.acquire(blocking=False):
            return
        try:
            idle = self._idle.pop(block.nbytes, [])
            if len(idle) < self.KEEP_PER_SIZE:
                idle.append(block)
            self._idle[block.nbytes] = idle
            while len(self._idle) > self.KEEP_SIZES:
                del self._idle[next(iter(self._idle))]
        finally:
            self._lock.release()


# ---------------------------------------------------------------- MSM bases


@attrs.define(eq=False)
class DeviceBases:
    """Affine bases on the device in Montgomery form, with their infinity mask (or None).

    ``ready`` is None once the upload is known complete, else a ``weakref.finalize`` that waits
    for it (see :meth:`Memory.upload_points`): called by :meth:`Memory.wait_ready`, or when the
    handle is dropped unwaited, before the memory it holds can be reused.
    """

    group: str
    count: int
    coords: DeviceArray | None
    skip: DeviceArray | None
    resident: bool
    ready: Any = None
    table_bits: int = 0
    """Nonzero: ``coords`` is a window table of this many bits (``table_windows`` × count rows,
    the bases first: see ``msm.build_window_table``)."""
    table_windows: int = 0
    """The windows of the table (0 without one)."""

    def plain_view(self) -> DeviceBases:
        """These resident bases for an MSM that asks for no window table: the table's first rows
        are the bases, so a profile without tables (an A/B's other side, another job's profile)
        neither drops the table nor uploads the bases again. It waits on the same upload."""
        return DeviceBases(self.group, self.count, self.coords, self.skip, True, self.ready)

    def window_table(self) -> msm.WindowTable | None:
        """The window table these bases are, for the MSMs' passes; None without one."""
        if not self.table_bits or self.coords is None:
            return None
        return msm.WindowTable(self.coords, self.table_bits, self.table_windows)

    def table_view(self, windows: int) -> DeviceBases:
        """These resident bases with the first ``windows`` windows of their table (the rows of
        a smaller table of the same bits), for an MSM that asks for that many."""
        if windows == self.table_windows:
            return self
        assert self.coords is not None and windows < self.table_windows
        coords = self.coords[: windows * self.count]
        args = (self.group, self.count, coords, self.skip, True, self.ready)
        return DeviceBases(*args, table_bits=self.table_bits, table_windows=windows)


def _settle(ready: Any, *keep_alive: Any) -> None:
    """Wait for an overlapped upload: ``ready`` is its event, or a future of it while a
    background thread stages it. ``keep_alive`` (the device buffer, the host words) is held
    until then so that neither returns to a pool while the copy still uses it."""
    event = ready.result() if isinstance(ready, Future) else ready
    event.synchronize()


@attrs.define(eq=False)
class HostBases:
    """Bases left on the host (``stream``/``mmap`` storage): MSMs upload them chunk by chunk."""

    group: str
    points: G1Affines | G2Affines

    @property
    def count(self) -> int:
        """The number of bases."""
        return len(self.points)


def key_budget(profile: Profile) -> int | None:
    """``memory.device_budget_kib`` in bytes: what a streamed key may hold on the device."""
    kib = profile.memory.device_budget_kib
    return None if kib is None else kib << 10


def group_of(points: G1Affines | G2Affines) -> str:
    """``"g1"`` or ``"g2"`` for a canonical batch."""
    return "g2" if isinstance(points, G2Affines) else "g1"


@attrs.frozen(eq=False)
class DeviceScalars:
    """Scalars on the device (``(n, 4)`` uint64, canonical): what ``cuzk_gather_scalars`` and
    ``cuzk_quotient_on_coset`` (for an MSM) hand out, so the MSMs that take them upload nothing,
    ``cuzk_evaluate_r1cs`` (``for_quotient``) for ``cuzk_first_unsatisfied`` and
    ``cuzk_quotient_on_coset``, and ``cuzk_witness`` (``for_prover``) for the products, the
    gathers and the MSMs. Rows slice like an array's; ``np.asarray`` downloads them."""

    array: DeviceArray
    montgomery: DeviceArray | None = None
    """The same rows in Montgomery form, where they were made so (the witness kernel's z)."""

    def __len__(self) -> int:
        return int(self.array.shape[0])

    def __getitem__(self, rows: slice) -> DeviceScalars:
        if not isinstance(rows, slice):
            raise TypeError("device scalars slice by rows only")
        montgomery = self.montgomery[rows] if self.montgomery is not None else None
        return DeviceScalars(self.array[rows], montgomery)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        gpu = self.array.gpu
        with gpu.scope(), gpu.errors("reading device scalars"):  # from the core, outside hooks
            host = self.array.get()
        return host if dtype is None else host.astype(dtype)


class Mirrors:
    """Device copies of the host arrays a backend returned (or of read-only ones it was given,
    such as a key's query indices), found by the array's identity."""

    def __init__(self) -> None:
        self._by_id: dict[tuple[int, str], tuple[weakref.ref, DeviceArray]] = {}

    def keep(self, host: np.ndarray, device: DeviceArray, form: str) -> np.ndarray:
        """Remember ``device`` (``form``: canonical or montgomery) as ``host``'s copy while
        ``host`` lives; ``host`` becomes read-only so the two cannot drift apart."""
        host.flags.writeable = False
        key = (id(host), form)
        self._by_id[key] = (
            weakref.ref(host, lambda _, key=key: self._by_id.pop(key, None)),
            device,
        )
        return host

    def find(self, host: np.ndarray, form: str) -> DeviceArray | None:
        """``host``'s device copy in ``form``, if this backend made one."""
        entry = self._by_id.get((id(host), form))
        return entry[1] if entry is not None and entry[0]() is host else None

    def find_rows(self, host: np.ndarray, form: str) -> DeviceArray | None:
        """The device copy of ``host`` or, when ``host`` is a contiguous run of whole rows of
        an array with a copy (``witness[num_inputs:]``), of those rows."""
        found = self.find(host, form)
        if found is not None or host.base is None or not host.flags.c_contiguous:
            return found
        start, stop = _address(host), _address(host) + host.nbytes
        while True:
            try:
                entries = list(self._by_id.items())
                break
            except RuntimeError:  # a weakref callback dropped an entry meanwhile
                continue
        for (_, entry_form), (ref, device) in entries:
            whole = ref()
            if entry_form != form or whole is None or not whole.flags.c_contiguous:
                continue
            if whole.dtype != host.dtype or whole.shape[1:] != host.shape[1:] or not len(whole):
                continue
            offset, row_bytes = start - _address(whole), whole.nbytes // len(whole)
            if offset >= 0 and stop <= _address(whole) + whole.nbytes and offset % row_bytes == 0:
                return device[offset // row_bytes : offset // row_bytes + len(host)]
        return None


class Memory:
    """One backend's host and device memory under the profile's pinning and key storage."""

    def __init__(self, gpu: Gpu) -> None:
        self.gpu = gpu
        self.staging = StagingPool(gpu)
        self.side_staging = StagingPool(gpu)
        """The pool of overlapped base uploads (the main pool stays free for the proof's own
        copies meanwhile)."""
        self._uploader: ThreadPoolExecutor | None = None
        self._uploader_lock = threading.Lock()
        self.mirrors = Mirrors()
        self._index_max: dict[int, int] = {}
        """The largest entry of each read-only index array mirrored, by the array's id."""
        self.results = ResultBuffers(gpu)

    def alloc_host(self, profile: Profile, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        """A zeroed host array; page-locked when the profile pins through a pool."""
        if profile.memory.pinning is not Pinning.POOL:
            return np.zeros(shape, dtype=dtype)
        count = int(np.prod(shape))
        nbytes = count * np.dtype(dtype).itemsize
        buffer = self.gpu.adapter.alloc_pinned(max(1, nbytes))
        array = buffer[:nbytes].view(dtype).reshape(shape)
        array[...] = 0
        address = _address(array)
        PINNED.add(address, array.nbytes)
        weakref.finalize(array, PINNED.remove, address)
        return array

    def pin(self, profile: Profile, arrays: list[np.ndarray]) -> Registration:
        """Page-lock ``arrays`` in place under ``register``; set up the staging pool under
        ``pool``."""
        registration = Registration()
        if profile.memory.pinning is Pinning.POOL:
            self.staging.ensure(profile.memory.pool_mib * _MIB)
        if profile.memory.pinning is not Pinning.REGISTER:
            return registration
        for array in arrays:
            if array.nbytes == 0 or not array.flags.c_contiguous or PINNED.covers(array):
                continue
            if not array.flags.writeable:  # a key cache's read-only memmap (key_storage mmap)
                continue
            handle = self.gpu.adapter.register(array)
            PINNED.add(_address(array), array.nbytes)
            registration.entries.append((_address(array), handle))
        return registration

    def unpin(self, registration: Registration) -> None:
        """Undo ``pin``'s registrations."""
        for address, handle in registration.entries:
            self.gpu.adapter.unregister(handle)
            PINNED.remove(address)
        registration.entries.clear()

    def to_device(self, profile: Profile, host: np.ndarray) -> DeviceArray:
        """A device copy of ``host`` made the way the profile's pinning says (on the device,
        from its mirror, when this backend returned ``host``)."""
        mirror = self.mirrors.find(host, "canonical")
        if mirror is not None:
            return self.gpu.copy(mirror)
        host = np.ascontiguousarray(host)
        if host.nbytes == 0 or PINNED.covers(host) or profile.memory.pinning is not Pinning.POOL:
            return self.gpu.to_device(host)
        out = self.gpu.empty(host.shape, host.dtype)
        self.staging.upload(host, out, profile.memory.pool_mib * _MIB)
        return out

    def resident(self, values: np.ndarray | DeviceScalars) -> DeviceArray | None:
        """``values`` where they already are on the device: a handle's own array, or the mirror
        of an array (or of rows of one) this backend returned; None when they are not."""
        if isinstance(values, DeviceScalars):
            return values.array
        return self.mirrors.find_rows(values, "canonical")

    def readable(self, profile: Profile, values: np.ndarray | DeviceScalars) -> DeviceArray:
        """``values`` on the device for a caller that only reads them: a handle's own array, the
        mirror of an array this backend returned, else an upload (``to_device``)."""
        if isinstance(values, DeviceScalars):
            return values.array
        mirror = self.mirrors.find(values, "canonical")
        return mirror if mirror is not None else self.to_device(profile, values)

    def to_host(self, profile: Profile, array: DeviceArray) -> np.ndarray:
        """A host copy of device ``array``: under ``pool``, straight into a reused page-locked
        array."""
        if profile.memory.pinning is Pinning.POOL and array.nbytes > _MIB:
            host = self.results.take(array.shape, array.dtype)
            self.gpu.adapter.copy_dtoh(host, array.ptr)
            return host
        return array.get()

    def index_array(self, profile: Profile, indices: np.ndarray, bound: int) -> DeviceArray:
        """A uint32 device copy of ``indices`` (each checked below ``bound``), uploaded once
        while a read-only array lives (a key's query indices serve every proof; their largest
        entry is kept beside the copy, so each use is checked too)."""
        found = None if indices.flags.writeable else self.mirrors.find(indices, "uint32")
        if found is not None:
            largest = self._index_max.get(id(indices), -1)
        else:
            if len(indices) and int(indices.min()) < 0:
                raise ValueError(f"gather indices must lie in [0, {bound})")
            largest = int(indices.max()) if len(indices) else -1
        if largest >= bound:
            raise ValueError(f"gather indices must lie in [0, {bound}), one is {largest}")
        if found is None:
            found = self.to_device(profile, np.ascontiguousarray(indices, dtype=np.uint32))
            if not indices.flags.writeable:
                self.mirrors.keep(indices, found, "uint32")
                self._index_max[id(indices)] = largest
                weakref.finalize(indices, self._index_max.pop, id(indices), None)
        return found

    def returned(self, profile: Profile, array: DeviceArray) -> np.ndarray:
        """A hook's canonical result: its host copy, mirrored by ``array``."""
        return self.mirrors.keep(self.to_host(profile, array), array, "canonical")

    def upload_points(
        self,
        profile: Profile,
        points: G1Affines | G2Affines,
        resident: bool,
        table: tuple[int, int] | None = None,
    ) -> DeviceBases:
        """Copy a canonical batch to the device and convert its coordinates to Montgomery form
        (then, with a ``table`` of (bits, windows), build its window table after it);
        overlapped with compute (``ready`` set) unless the profile's pinning is ``none``."""
        table_bits, table_windows = table or (0, 0)
        coords = np.ascontiguousarray(points.coords)
        infinity = np.asarray(points.infinity, dtype=bool)
        if infinity.any():
            coords = coords.copy()
            coords[infinity] = 0
        count = len(points)
        words = coords.reshape(count, -1).view(np.uint32) if count else np.zeros((0, 24), np.uint32)
        skip = self.gpu.to_device(infinity.view(np.uint8)) if infinity.any() else None
        group = group_of(points)
        rows = count * max(1, table_windows)
        on_device = self.gpu.empty((rows, words.shape[1]), words.dtype)
        bases_rows = on_device[:count]
        kept = {"table_bits": table_bits, "table_windows": table_windows}

        def finish(stream: Any) -> None:
            self._to_montgomery(bases_rows, stream)
            if table_bits and count:
                ops = msm.GROUPS[group]
                msm.build_window_table(
                    self.gpu, ops, on_device, count, table_bits, table_windows, stream
                )

        if profile.memory.pinning is Pinning.NONE or words.nbytes == 0:
            if words.nbytes:
                self.gpu.adapter.copy_htod(bases_rows.ptr, words)
            finish(None)
            return DeviceBases(group, count, on_device, skip, resident, **kept)
        # The block may have been freed by work still queued on the main stream: the side
        # stream starts after that work.
        allocated = self.gpu.adapter.event(timing=False)
        allocated.record(self.gpu.adapter.stream())
        pool_bytes = profile.memory.pool_mib * _MIB
        page_locked = PINNED.covers(words)

        def copy() -> Any:
            with self.gpu.scope():  # also on the background thread
                side = self.gpu.adapter.side_stream()
                self.gpu.adapter.wait_event(side, allocated)
                if page_locked:
                    self.gpu.adapter.copy_htod_async(bases_rows.ptr, words, side)
                else:
                    self.side_staging.upload(words, bases_rows, pool_bytes, side)
                finish(side)
                event = self.gpu.adapter.event(timing=False)
                event.record(side)
                return event

        # Page-locked words need no staging: one asynchronous copy, queued from this thread.
        pending = copy() if page_locked else self._background(copy)
        bases = DeviceBases(group, count, on_device, skip, resident, **kept)
        bases.ready = weakref.finalize(bases, _settle, pending, on_device, words)
        bases.ready.atexit = False  # at exit the device may already be gone
        return bases

    def _to_montgomery(self, words: DeviceArray, stream: Any) -> None:
        fq_elements = words.size // 12
        to_mont = self.gpu.kernel("msm/msm.cu", "fq_to_mont")
        self.gpu.launch(to_mont, fq_elements, (words, np.uint64(fq_elements)), stream=stream)

    def _background(self, work: Any) -> Future:
        with self._uploader_lock:
            if self._uploader is None:
                self._uploader = ThreadPoolExecutor(1, thread_name_prefix="cuzk-upload")
            return self._uploader.submit(work)

    @staticmethod
    def wait_ready(bases: DeviceBases) -> None:
        """Block until ``bases``' overlapped upload is complete (at once if it is); a failure
        of the background staging is raised here."""
        ready = bases.ready
        if ready is not None:
            ready()
            bases.ready = None

    def upload(
        self, profile: Profile, points: G1Affines | G2Affines, purpose: str, timer: Timer
    ) -> DeviceBases | HostBases:
        """Place bases per ``key_storage``: resident (with the window table the profile gives
        MSM ``purpose``, if any: a ``window_table`` span says its bits and device bytes), per
        proof, or left on the host."""
        storage = profile.memory.key_storage
        if storage in (KeyStorage.STREAM, KeyStorage.MMAP):
            return HostBases(group_of(points), points)
        if storage is KeyStorage.DEVICE:
            resident = self.gpu.cache(RESIDENT)
            table = profile.msm.table_of(purpose) if purpose in MSM_NAMES else None
            bits, windows = table or (0, 0)
            cached = resident.get(points)
            if cached is not None and cached.table_bits and not bits:
                return cached.plain_view()
            if cached is None or cached.table_bits != bits or cached.table_windows < windows:
                # none, or a table of other bits or fewer windows: its memory goes first
                resident.pop(points, None)
                nbytes = self._ensure_fits(points, storage, table)
                span = (
                    timer.span("window_table", bits=bits, windows=windows, bytes=nbytes)
                    if bits
                    else contextlib.nullcontext()
                )
                with span:
                    cached = self.upload_points(profile, points, True, table)
                resident[points] = cached
            return cached.table_view(windows) if bits else cached
        self._ensure_fits(points, storage)
        return self.upload_points(profile, points, resident=False)

    def _ensure_fits(
        self,
        points: G1Affines | G2Affines,
        storage: KeyStorage,
        table: tuple[int, int] | None = None,
    ) -> int:
        """Refuse, with the sizes, bases (and their window table of (bits, windows)) that cannot
        fit before any of them is copied; else the device bytes they will take."""
        what = f"{len(points)} {group_of(points).upper()} bases (key_storage {storage.value}"
        if table:
            what += f", a window table of {table[0]} bits and {table[1]} windows"
        nbytes = points.coords.nbytes * (table[1] if table else 1)
        self.gpu.ensure_fits(nbytes, what + ")")
        return nbytes

    def release(self, handle: Any) -> None:
        """Free a per-proof upload now (after its copy, if one is still in flight); resident
        bases stay until their host batch is dropped."""
        if isinstance(handle, DeviceBases) and not handle.resident:
            self.wait_ready(handle)
            handle.coords = None
            handle.skip = None
