"""Host and device memory under the profile's policies: pinning, staging, and where bases live.

Pinning (``memory.pinning``): ``none`` copies from pageable memory (the driver stages it);
``register`` page-locks the big host arrays in place with cudaHostRegister during ``pin``;
``pool`` copies through a reused pair of page-locked staging buffers (``pool_mib`` in all), so
the CPU fills one while the DMA engine drains the other. Key storage (``memory.key_storage``):
``device`` keeps uploaded bases resident across proofs (keyed by the host batch, freed when it
is), ``host`` uploads per proof and frees on release, ``stream``/``mmap`` leave bases on the host
and the MSM uploads them chunk by chunk.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import attrs
import numpy as np

from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.profile import KeyStorage, Pinning, Profile

from . import device

_MIB = 1 << 20


class PinnedRegistry:
    """Host address ranges currently page-locked (registered by us or allocated pinned)."""

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
        start = array.__array_interface__["data"][0]
        end = start + array.nbytes
        with self._lock:
            return any(a <= start and end <= a + n for a, n in self._ranges.items())


PINNED = PinnedRegistry()


def alloc_host(profile: Profile, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """A zeroed host array; page-locked when the profile pins through a pool."""
    if profile.memory.pinning is not Pinning.POOL:
        return np.zeros(shape, dtype=dtype)
    cupy = device.cupy_module()
    count = int(np.prod(shape))
    nbytes = max(1, count * np.dtype(dtype).itemsize)
    memory = cupy.cuda.alloc_pinned_memory(nbytes)
    array = np.frombuffer(memory, dtype=dtype, count=count).reshape(shape)
    array[...] = 0
    address = array.__array_interface__["data"][0]
    PINNED.add(address, array.nbytes)
    weakref.finalize(array, PINNED.remove, address)
    return array


@attrs.define
class Registration:
    """What ``pin`` registered with cudaHostRegister, for ``unpin``."""

    addresses: list[int] = attrs.field(factory=list)


def pin(profile: Profile, arrays: list[np.ndarray]) -> Registration:
    """Page-lock ``arrays`` in place under ``register``; set up the staging pool under ``pool``."""
    registration = Registration()
    if profile.memory.pinning is Pinning.POOL:
        STAGING.ensure(profile.memory.pool_mib * _MIB)
    if profile.memory.pinning is not Pinning.REGISTER:
        return registration
    runtime = device.cupy_module().cuda.runtime
    for array in arrays:
        if array.nbytes == 0 or not array.flags.c_contiguous or PINNED.covers(array):
            continue
        address = array.__array_interface__["data"][0]
        runtime.hostRegister(address, array.nbytes, 0)
        PINNED.add(address, array.nbytes)
        registration.addresses.append(address)
    return registration


def unpin(registration: Registration) -> None:
    """Undo ``pin``'s registrations."""
    if not registration.addresses:
        return
    runtime = device.cupy_module().cuda.runtime
    for address in registration.addresses:
        runtime.hostUnregister(address)
        PINNED.remove(address)
    registration.addresses.clear()


class StagingPool:
    """Two reused page-locked buffers for chunked, overlapped host↔device copies."""

    def __init__(self) -> None:
        self._buffers: list[np.ndarray] = []
        self._events: list[Any] = []
        self._lock = threading.Lock()

    def ensure(self, total_bytes: int) -> None:
        """Allocate the pair (``total_bytes`` together) unless it already exists at that size."""
        half = max(_MIB, total_bytes // 2)
        if self._buffers and self._buffers[0].nbytes == half:
            return
        cupy = device.cupy_module()
        self._buffers = [
            np.frombuffer(cupy.cuda.alloc_pinned_memory(half), dtype=np.uint8, count=half)
            for _ in range(2)
        ]
        self._events = [None, None]

    def upload(self, host: np.ndarray, out: Any, pool_bytes: int) -> None:
        """Copy C-contiguous ``host`` into device array ``out`` through the pool."""
        cupy = device.cupy_module()
        runtime = cupy.cuda.runtime
        with self._lock:
            self.ensure(pool_bytes)
            src = host.reshape(-1).view(np.uint8)
            stream = cupy.cuda.get_current_stream()
            step = self._buffers[0].nbytes
            for index, offset in enumerate(range(0, src.nbytes, step)):
                slot = index % 2
                if self._events[slot] is not None:
                    self._events[slot].synchronize()
                size = min(step, src.nbytes - offset)
                buffer = self._buffers[slot]
                np.copyto(buffer[:size], src[offset : offset + size])
                runtime.memcpyAsync(
                    out.data.ptr + offset,
                    buffer.__array_interface__["data"][0],
                    size,
                    runtime.memcpyHostToDevice,
                    stream.ptr,
                )
                event = cupy.cuda.Event(disable_timing=True)
                event.record(stream)
                self._events[slot] = event
            for event in self._events:
                if event is not None:
                    event.synchronize()

    def download(self, array: Any, host: np.ndarray, pool_bytes: int) -> None:
        """Copy device array ``array`` into C-contiguous ``host`` through the pool."""
        cupy = device.cupy_module()
        runtime = cupy.cuda.runtime
        with self._lock:
            self.ensure(pool_bytes)
            dst = host.reshape(-1).view(np.uint8)
            stream = cupy.cuda.get_current_stream()
            step = self._buffers[0].nbytes
            pending: list[tuple[Any, int, int, int]] = []
            for index, offset in enumerate(range(0, dst.nbytes, step)):
                slot = index % 2
                size = min(step, dst.nbytes - offset)
                if len(pending) == 2:
                    self._drain(pending.pop(0), dst)
                runtime.memcpyAsync(
                    self._buffers[slot].__array_interface__["data"][0],
                    array.data.ptr + offset,
                    size,
                    runtime.memcpyDeviceToHost,
                    stream.ptr,
                )
                event = cupy.cuda.Event(disable_timing=True)
                event.record(stream)
                pending.append((event, slot, offset, size))
            for item in pending:
                self._drain(item, dst)

    def _drain(self, item: tuple[Any, int, int, int], dst: np.ndarray) -> None:
        event, slot, offset, size = item
        event.synchronize()
        np.copyto(dst[offset : offset + size], self._buffers[slot][:size])


STAGING = StagingPool()


def to_device(profile: Profile, host: np.ndarray) -> Any:
    """A device copy of ``host`` made the way the profile's pinning says."""
    cupy = device.cupy_module()
    host = np.ascontiguousarray(host)
    out = cupy.empty(host.shape, dtype=host.dtype)
    if host.nbytes == 0:
        return out
    if PINNED.covers(host):
        out.set(host)
    elif profile.memory.pinning is Pinning.POOL:
        STAGING.upload(host, out, profile.memory.pool_mib * _MIB)
    else:
        out.set(host)
    return out


def to_host(profile: Profile, array: Any) -> np.ndarray:
    """A host copy of device ``array`` (through the staging pool under ``pool``)."""
    if profile.memory.pinning is Pinning.POOL and array.nbytes > _MIB:
        host = np.empty(array.shape, dtype=array.dtype)
        STAGING.download(array, host, profile.memory.pool_mib * _MIB)
        return host
    return array.get()


# ---------------------------------------------------------------- MSM bases


@attrs.define(eq=False)
class DeviceBases:
    """Affine bases on the device in Montgomery form, with their infinity mask (or None)."""

    group: str
    count: int
    coords: Any
    skip: Any
    resident: bool


@attrs.define(eq=False)
class HostBases:
    """Bases left on the host (``stream``/``mmap`` storage): MSMs upload them chunk by chunk."""

    group: str
    points: G1Affines | G2Affines

    @property
    def count(self) -> int:
        """The number of bases."""
        return len(self.points)


_RESIDENT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def group_of(points: G1Affines | G2Affines) -> str:
    """``"g1"`` or ``"g2"`` for a canonical batch."""
    return "g2" if isinstance(points, G2Affines) else "g1"


def upload_points(profile: Profile, points: G1Affines | G2Affines, resident: bool) -> DeviceBases:
    """Copy a canonical batch to the device and convert its coordinates to Montgomery form."""
    cupy = device.cupy_module()
    coords = np.ascontiguousarray(points.coords)
    infinity = np.asarray(points.infinity, dtype=bool)
    if infinity.any():
        coords = coords.copy()
        coords[infinity] = 0
    count = len(points)
    words = coords.reshape(count, -1).view(np.uint32) if count else np.zeros((0, 24), np.uint32)
    on_device = to_device(profile, words)
    fq_elements = on_device.size // 12
    device.launch(
        device.kernel("msm/msm.cu", "fq_to_mont"), fq_elements, (on_device, np.uint64(fq_elements))
    )
    skip = cupy.asarray(infinity.view(np.uint8)) if infinity.any() else None
    return DeviceBases(group_of(points), count, on_device, skip, resident)


def upload(profile: Profile, points: G1Affines | G2Affines) -> DeviceBases | HostBases:
    """Place bases per ``key_storage``: resident, per proof, or left on the host."""
    storage = profile.memory.key_storage
    if storage in (KeyStorage.STREAM, KeyStorage.MMAP):
        return HostBases(group_of(points), points)
    if storage is KeyStorage.DEVICE:
        cached = _RESIDENT.get(points)
        if cached is not None:
            return cached
        bases = upload_points(profile, points, resident=True)
        _RESIDENT[points] = bases
        return bases
    return upload_points(profile, points, resident=False)


def release(handle: Any) -> None:
    """Free a per-proof upload now; resident bases stay until their host batch is dropped."""
    if isinstance(handle, DeviceBases) and not handle.resident:
        handle.coords = None
        handle.skip = None
