"""The driver over one adapter: device arrays, the kernel cache, launches, sizes, CUDA failures.

Nothing here imports a GPU library: the adapter does, on first use, so both backends' plugins
load on machines with no GPU and say why they cannot run.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from cuzk_core.errors import CuzkError
from cuzk_core.host_work import queued_here, while_device_busy

from .adapter import Adapter
from .kernels import KernelCache
from .mapped import CHUNK_BYTES, mapping_of
from .staging import StagingPool

NULL = np.uint64(0)
"""A null device pointer as a kernel argument."""
GIB = float(1 << 30)
RESIDENT = "resident"
"""The cache of a key's bases kept on the device (and their window tables), by host batch."""
MAPPED_FILES = "mapped files"
"""The cache of read-only file mappings uploaded whole (compiled circuits), by mapping."""
MODULES = (
    "ff/fr_kernels.cu",
    "r1cs/spmv.cu",
    "r1cs/witness.cu",
    "hash/poseidon.cu",
    "ntt/ntt.cu",
    "msm/msm.cu",
    "util/scan.cu",
)
"""The kernel files a proof uses, built together by ``warm_up`` (the prepare hook); key
generation's ec/fixed_base.cu is built when first needed."""


class GpuError(CuzkError):
    """A CUDA failure or an oversize request in a GPU backend (the CLI exits 2)."""


class DeviceArray:
    """A C-ordered array in device memory; slices along the first axis and views share it."""

    __slots__ = ("_owner", "dtype", "gpu", "ptr", "shape")

    def __init__(
        self, gpu: Gpu, shape: tuple[int, ...], dtype: np.dtype, ptr: int, owner: Any
    ) -> None:
        self.gpu = gpu
        self.shape = shape
        self.dtype = dtype
        self.ptr = ptr
        self._owner = owner

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self.size * self.dtype.itemsize

    @property
    def arg(self) -> np.uint64:
        """The address as a kernel argument."""
        return np.uint64(self.ptr)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: int | slice) -> DeviceArray:
        """Rows ``key`` (a step-1 slice), or row ``key`` with the first axis dropped."""
        rows = self.shape[0]
        row_bytes = self.nbytes // rows if rows else 0
        if isinstance(key, slice):
            start, stop, step = key.indices(rows)
            if step != 1:
                raise ValueError("device arrays slice with step 1 only")
            shape = (max(0, stop - start), *self.shape[1:])
        else:
            start = key + rows if key < 0 else key
            if not 0 <= start < rows:
                raise IndexError(f"row {key} of a device array of {rows} rows")
            shape = self.shape[1:]
        return DeviceArray(self.gpu, shape, self.dtype, self.ptr + start * row_bytes, self._owner)

    def view(self, dtype: Any) -> DeviceArray:
        """The same bytes as ``dtype``, the last axis rescaled (as numpy's ``view``)."""
        dtype = np.dtype(dtype)
        last = self.shape[-1] * self.dtype.itemsize
        if last % dtype.itemsize:
            raise ValueError(f"a last axis of {last} bytes is not a whole number of {dtype}")
        shape = (*self.shape[:-1], last // dtype.itemsize)
        return DeviceArray(self.gpu, shape, dtype, self.ptr, self._owner)

    def get(self) -> np.ndarray:
        """A host copy (waits for the work queued before)."""
        host = np.empty(self.shape, dtype=self.dtype)
        if host.nbytes:
            self.gpu.adapter.copy_dtoh(host, self.ptr)
        return host


class Gpu:
    """One backend's device: its adapter, compiled kernels, tuning macros and weak caches."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self.kernels = KernelCache(adapter)
        self.defines: dict[str, dict[str, int]] = {}
        """Tuning macros per kernel file (``{"msm/msm.cu": {"NAME": 1}}``), for A/B runs."""
        self._availability: tuple[bool, str] | None = None
        self._caches: dict[str, weakref.WeakKeyDictionary] = {}
        self._device_info: dict[str, Any] | None = None

    def availability(self) -> tuple[bool, str]:
        """Whether the backend can run here, and a line saying on what or why not (asked once)."""
        if self._availability is None:
            reason = self.adapter.unavailable()
            self._availability = (False, reason) if reason is not None else self._describe()
        return self._availability

    def _describe(self) -> tuple[bool, str]:
        """The line for a usable device; unavailable if it cannot even be described."""
        try:
            info = self._info()
        except Exception as exc:  # must not take the plugin down: report it instead
            library = self.adapter.library
            return False, f"{library} cannot describe device 0 ({type(exc).__name__}: {exc})"
        return True, (
            f"{info['library']} on {info['gpu']} (sm_{info['sm']}, {info['memory_gib']:.0f} GiB), "
            f"CUDA driver {info['driver_cuda']}, kernels by {info['compiler']}"
        )

    def require(self) -> None:
        """Refuse clearly when the backend cannot run here."""
        available, reason = self.availability()
        if not available:
            raise GpuError(f"{self.name} backend cannot run here: {reason}")

    def scope(self) -> contextlib.AbstractContextManager[None]:
        """The device current in this thread for the body (nothing to do without a device)."""
        if not self.availability()[0]:
            return contextlib.nullcontext()
        return self.adapter.scope()

    @contextlib.contextmanager
    def errors(self, what: str) -> Iterator[None]:
        """Turn CUDA, compiler and out-of-memory failures in the body into one-line GpuErrors."""
        try:
            yield
        except CuzkError:
            raise
        except Exception as exc:
            if not (self.adapter.is_failure(exc) or isinstance(exc, MemoryError)):
                raise
            text = str(exc).strip()
            first_line = text.splitlines()[0] if text else ""
            raise GpuError(
                f"{self.name} backend: {what} failed: {type(exc).__name__}: {first_line}"
            ) from exc

    def out_of_memory(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the device (or its library's pool) had no room."""
        if isinstance(exc, MemoryError):  # CuPy's OutOfMemoryError is one
            return True
        named = type(exc).__name__ == "MemoryError" or "out of memory" in str(exc).lower()
        return self.adapter.is_failure(exc) and named  # PyCUDA's driver MemoryError

    def cache(self, name: str) -> weakref.WeakKeyDictionary:
        """A per-device cache keyed weakly by host objects (matrices, resident bases)."""
        return self._caches.setdefault(name, weakref.WeakKeyDictionary())

    # ------------------------------------------------------------ kernels

    def warm_up(self, timer: Any = None, modules: tuple[str, ...] = MODULES) -> dict[str, float]:
        """Compile (or load from the disk cache) ``modules`` (the prover's) once, inside a
        ``compile_kernels`` span; ms per module compiled so far."""
        fresh = [m for m in modules if m not in self.kernels.compile_ms]
        if fresh:
            span = timer.span("compile_kernels") if timer is not None else contextlib.nullcontext()
            with self.errors("compiling kernels"), span as record:
                for name in fresh:
                    self.kernels.module(name, self.defines.get(name))
                if record is not None:
                    record.attrs.update({m: round(self.kernels.compile_ms[m], 1) for m in fresh})
        return dict(self.kernels.compile_ms)

    def kernel(self, module: str, function: str, defines: dict[str, int] | None = None) -> Any:
        """A compiled kernel by file and name, built with that file's defines (or ``defines``
        in their place)."""
        chosen = self.defines.get(module) if defines is None else defines
        return self.kernels.kernel(module, function, chosen)

    def launch(
        self,
        function: Any,
        threads: int,
        args: tuple,
        block: int = 256,
        shared_bytes: int = 0,
        stream: Any = None,
    ) -> None:
        """Launch ``function`` over ``threads`` threads in blocks of ``block`` (on ``stream``,
        else the driver's stream)."""
        if threads <= 0:
            return
        converted = tuple(a.arg if isinstance(a, DeviceArray) else a for a in args)
        grid = math.ceil(threads / block)
        self.adapter.launch(function, grid, block, converted, shared_bytes, stream)

    def resident_threads(self, function: Any, block: int) -> int:
        """How many threads of ``function``, launched in blocks of ``block``, the whole device
        holds at once, as registers and the per-multiprocessor thread limit allow."""
        info = self._info()
        # Registers go to warps in units of 256 from each of the 4 schedulers' quarter.
        per_warp = -(-max(1, self.adapter.registers(function)) * 32 // 256) * 256
        warps = 4 * (info["registers_per_multiprocessor"] // 4 // per_warp)
        warps = min(warps, info["threads_per_multiprocessor"] // 32)
        blocks = max(1, warps // -(-block // 32))
        return int(info["multiprocessors"] * blocks * block)

    def l2_bytes(self) -> int:
        """The device's L2 cache size in bytes."""
        return int(self._info()["l2_bytes"])

    def _info(self) -> dict[str, Any]:
        """The adapter's description of device 0, asked once."""
        if self._device_info is None:
            self._device_info = self.adapter.describe()
        return self._device_info

    def synchronize(self) -> None:
        """Wait for the device to finish queued work."""
        self.adapter.synchronize()

    def mark(self) -> Any:
        """An event recorded on the driver's stream after the work queued so far."""
        event = self.adapter.event(timing=False)
        event.record(self.adapter.stream())
        return event

    def wait_for(self, event: Any) -> None:
        """Make the driver's later work (this thread's stream) wait for ``event``: nothing to
        do on the legacy null stream (PyCUDA's), which runs after all earlier work anyway."""
        stream = self.adapter.stream()
        if stream is not None:
            self.adapter.wait_event(stream, event)

    def overlap_host_work(self) -> None:
        """Run the calling thread's queued host work (:mod:`cuzk_core.host_work`) while the
        device is still busy with the work queued so far: called after a long launch."""
        if not queued_here():
            return
        mark = self.mark()
        while_device_busy(lambda: not self.adapter.passed(mark))

    @contextlib.contextmanager
    def step(self, timer: Any, name: str, **attrs: Any) -> Iterator[None]:
        """A finer span inside a phase; at CUZK_TIMING=2 it waits for the device (GPU time)."""
        with timer.span(name, **attrs):
            yield
            if timer.level >= 2:
                self.synchronize()

    # ------------------------------------------------------------ arrays

    def empty(self, shape: tuple[int, ...], dtype: Any) -> DeviceArray:
        """An uninitialized device array from the library's pool."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        owner, ptr = self.adapter.alloc(nbytes) if nbytes else (None, 0)
        return DeviceArray(self, tuple(shape), dtype, ptr, owner)

    def clear(self, array: DeviceArray) -> DeviceArray:
        """Zero ``array`` (or a view) in place; returns it."""
        if array.nbytes:
            self.adapter.zero(array.ptr, array.nbytes)
        return array

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> DeviceArray:
        """A zeroed device array."""
        return self.clear(self.empty(shape, dtype))

    def to_device(self, host: np.ndarray) -> DeviceArray:
        """A device copy of ``host``, copied directly (the memory policies are memory.py's)."""
        host = np.ascontiguousarray(host)
        out = self.empty(host.shape, host.dtype)
        if host.nbytes:
            self.adapter.copy_htod(out.ptr, host)
        return out

    def shared_copy(self, host: np.ndarray) -> DeviceArray:
        """A device copy of ``host`` that kernels only read: for a view of a read-only file
        mapping, a view of one copy of the whole mapping (uploaded once, its pages dropped from
        this process as they are copied; see mapped.py), else a copy of ``host`` alone."""
        found = mapping_of(host) if host.nbytes and host.flags.c_contiguous else None
        if found is None:
            return self.to_device(host)
        mapping, offset = found
        cache = self.cache(MAPPED_FILES)
        whole = cache.get(mapping)
        if whole is None:
            whole = cache[mapping] = self._upload_mapping(mapping)
        return DeviceArray(self, tuple(host.shape), host.dtype, whole.ptr + offset, whole)

    def _upload_mapping(self, mapping: mmap.mmap) -> DeviceArray:
        # Through page-locked halves filled on threads: one thread faulting in the mapping's
        # pages for a pageable copy moved ~3 GB/s (a 20 GB compiled circuit took 6.8 s, H200).
        whole = self.empty((len(mapping),), np.uint8)
        StagingPool(self).upload(np.frombuffer(mapping, np.uint8), whole, 2 * CHUNK_BYTES)
        return whole

    def copy_into(self, destination: DeviceArray, source: DeviceArray) -> None:
        """Queue a copy of ``source`` into the same-sized ``destination``."""
        if destination.nbytes != source.nbytes:
            raise ValueError(f"copying {source.nbytes} bytes into {destination.nbytes}")
        if source.nbytes:
            self.adapter.copy_dtod(destination.ptr, source.ptr, source.nbytes)

    def copy(self, source: DeviceArray) -> DeviceArray:
        """A new device array holding ``source``'s values."""
        out = self.empty(source.shape, source.dtype)
        self.copy_into(out, source)
        return out

    # ------------------------------------------------------------ sizes

    def free_bytes(self) -> int:
        """Device memory allocations can still get (the pool's idle memory included)."""
        return self.adapter.memory()[0]

    def held_bytes(self) -> tuple[int, int]:
        """Device bytes kept across proofs: the resident key's bases (their window tables
        included) and the compiled circuits' files."""
        bases = [a for b in list(self.cache(RESIDENT).values()) for a in (b.coords, b.skip)]
        files = list(self.cache(MAPPED_FILES).values())
        return sum(a.nbytes for a in bases if a is not None), sum(f.nbytes for f in files)

    def ensure_fits(self, needed: int, what: str) -> None:
        """Refuse up front, with the sizes, a step whose working memory cannot fit on the device,
        saying how much the resident key and compiled circuits already hold."""
        available, total = self.adapter.memory()
        if needed > available:
            try:
                key, files = self.held_bytes()
            except RuntimeError:  # a cache changed under another thread: leave the figures out
                key = files = 0
            held = [f"the resident key {key / GIB:.2f} GiB"] if key else []
            held += [f"compiled circuits {files / GIB:.2f} GiB"] if files else []
            also = f"; held: {', '.join(held)}" if held else ""
            raise GpuError(
                f"{self.name} backend: {what} needs {needed / GIB:.2f} GiB of device memory, "
                f"{available / GIB:.2f} GiB is free (device total {total / GIB:.2f} GiB{also})"
            )


class EventClock:
    """Times work on the GPU with CUDA events around it, waiting for the device to finish."""

    name = "cuda-events"

    def __init__(self, gpu: Gpu) -> None:
        self._gpu = gpu

    def time(self, work: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``work``; its result and the elapsed device milliseconds."""
        adapter = self._gpu.adapter
        with self._gpu.scope():
            start, stop = adapter.event(timing=True), adapter.event(timing=True)
            start.record(adapter.stream())
            result = work()
            stop.record(adapter.stream())
            stop.synchronize()
            return result, adapter.elapsed_ms(start, stop)
