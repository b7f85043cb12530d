"""PyCUDA as the shared GPU driver's adapter: nvcc builds, PyCUDA's own pools and host memory.

Kernels compile with nvcc through ``pycuda.compiler.SourceModule`` (for the device's own
architecture, cached on disk by PyCUDA; ``PYCUDA_CACHE_DIR`` moves the cache). Device memory
comes from a ``pycuda.tools.DeviceMemoryPool``, page-locked host memory from
``pagelocked_empty``; work goes to the null stream, as CuPy's does by default. PyCUDA works on
the current context of the calling thread: :meth:`scope` pushes device 0's primary context (the
one the CUDA runtime, and so CuPy, uses too) around each hook and pops it after, so the context
stack is empty whenever control leaves the backend.

Two PyCUDA limits are worked around here. Its pool takes the current context when a block comes
back to an empty pool, and throws from the destructor (the process aborts) if there is none: a
block dropped outside a scope (a hook's result, say) is parked and given back when the next
scope begins, and at exit the pool stops holding blocks. ``register_host_memory`` fails under
numpy 2 (inducer/pycuda#459: it sets its result's ``base`` twice), so page-locking in place calls
the driver's cuMemHostRegister itself. PyCUDA is imported on first use, so this module loads on
machines without it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import shutil
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from cuzk_backend_gpu.adapter import Event, Module
from cuzk_backend_gpu.driver import GIB

_STREAM_NON_BLOCKING = 1
"""CU_STREAM_NON_BLOCKING: the side stream does not wait for, or hold up, the null stream."""


def _driver() -> Any:
    import pycuda.driver

    return pycuda.driver


@functools.cache
def _libcuda() -> ctypes.CDLL:
    """The CUDA driver library PyCUDA itself is linked against."""
    return ctypes.CDLL("libcuda.so.1")


def _check(function: str, *args: Any) -> None:
    """Call a driver API function; a failure raises PyCUDA's own error type."""
    status = getattr(_libcuda(), function)(*args)
    if status != 0:
        name = ctypes.c_char_p()
        _libcuda().cuGetErrorName(status, ctypes.byref(name))
        raise _driver().Error(f"{function} failed: {(name.value or b'?').decode()} ({status})")


class _PoolBlock:
    """A block of the adapter's pool, parked if dropped while no scope is open in the thread."""

    __slots__ = ("_adapter", "allocation")

    def __init__(self, adapter: PycudaAdapter, allocation: Any) -> None:
        self._adapter = adapter
        self.allocation = allocation

    def __del__(self) -> None:
        if not self._adapter.in_scope():
            self._adapter.parked.append(self.allocation)


class PycudaAdapter:
    """Compile with nvcc (``SourceModule``), allocate from ``DeviceMemoryPool``, copy with the
    driver API, in device 0's primary context."""

    name = "pycuda"
    library = "PyCUDA"

    def __init__(self) -> None:
        self._context: Any = None
        self._pool: Any = None
        self._side: Any = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self.parked: list[Any] = []
        """Pool blocks dropped outside a scope, given back when the next scope begins."""

    def unavailable(self) -> str | None:
        """Why PyCUDA cannot run here (not installed, no nvcc, no device), or None."""
        try:
            import pycuda
        except ImportError as exc:
            return f"PyCUDA is not installed ({exc}; pip install 'cuzk[pycuda]')"
        version = pycuda.VERSION_TEXT
        try:
            cuda = _driver()
        except Exception as exc:  # e.g. no libcuda.so: the extension cannot load
            return f"PyCUDA {version} does not load ({type(exc).__name__}: {exc})"
        if shutil.which("nvcc") is None:
            return f"PyCUDA {version} compiles with nvcc, and no nvcc is on PATH"
        try:
            cuda.init()
            count = cuda.Device.count()
        except Exception as exc:
            return f"PyCUDA {version} finds no usable CUDA device ({exc})"
        return None if count > 0 else f"PyCUDA {version} finds no CUDA device"

    def describe(self) -> dict[str, Any]:
        """Device 0 from the driver API; PyCUDA's version and the nvcc it compiles with."""
        import pycuda

        cuda = _driver()
        cuda.init()
        device = cuda.Device(0)
        major, minor = device.compute_capability()
        attribute = cuda.device_attribute
        driver = cuda.get_driver_version()
        return {
            "gpu": device.name(),
            "sm": f"{major}{minor}",
            "multiprocessors": device.get_attribute(attribute.MULTIPROCESSOR_COUNT),
            "clock_mhz": device.get_attribute(attribute.CLOCK_RATE) / 1000,
            "threads_per_multiprocessor": device.get_attribute(
                attribute.MAX_THREADS_PER_MULTIPROCESSOR
            ),
            "registers_per_multiprocessor": device.get_attribute(
                attribute.MAX_REGISTERS_PER_MULTIPROCESSOR
            ),
            "l2_bytes": device.get_attribute(attribute.L2_CACHE_SIZE),
            "memory_gib": device.total_memory() / GIB,
            "driver_cuda": f"{driver // 1000}.{driver % 1000 // 10}",
            "library": f"PyCUDA {pycuda.VERSION_TEXT}",
            "compiler": f"nvcc ({shutil.which('nvcc')})",
        }

    def is_failure(self, exc: BaseException) -> bool:
        """PyCUDA's driver, launch, memory and nvcc (CompileError) exceptions."""
        return (type(exc).__module__ or "").startswith("pycuda")

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Device 0's primary context pushed for the outermost scope of this thread, then popped."""
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            self._primary().push()
        self._local.depth = depth + 1
        while self.parked:
            self.parked.pop()  # back to the pool, now that the context is current
        try:
            yield
        finally:
            self._local.depth = depth
            if depth == 0:
                _driver().Context.pop()

    def in_scope(self) -> bool:
        """Whether this thread is inside :meth:`scope` (the context is current)."""
        return getattr(self._local, "depth", 0) > 0

    def _primary(self) -> Any:
        with self._lock:
            if self._context is None:
                cuda = _driver()
                cuda.init()
                self._context = cuda.Device(0).retain_primary_context()
            return self._context

    def _memory_pool(self) -> Any:
        with self._lock:
            if self._pool is None:
                from pycuda.tools import DeviceMemoryPool

                self._pool = DeviceMemoryPool()  # allocates in the context current now
                atexit.register(self._close_pool)
            return self._pool

    def _close_pool(self) -> None:
        """At exit: blocks freed from now on (module teardown) go straight back to the driver."""
        with self.scope():
            self._pool.stop_holding()

    def compile(self, source: str, options: tuple[str, ...]) -> Module:
        """A ``SourceModule`` built by nvcc for the current device (kernels are extern "C")."""
        from pycuda.compiler import SourceModule

        return SourceModule(source, options=list(options), no_extern_c=True)

    def registers(self, function: Any) -> int:
        """The ``Function``'s register count."""
        return int(function.num_regs)

    def launch(
        self,
        function: Any,
        grid: int,
        block: int,
        args: tuple,
        shared_bytes: int,
        stream: Any = None,
    ) -> None:
        """Launch on ``stream``, else the null stream."""
        function(*args, grid=(grid, 1), block=(block, 1, 1), shared=shared_bytes, stream=stream)

    def alloc(self, nbytes: int) -> tuple[Any, int]:
        """A block of the ``DeviceMemoryPool``."""
        allocation = self._memory_pool().allocate(nbytes)
        return _PoolBlock(self, allocation), int(allocation)

    def memory(self) -> tuple[int, int]:
        """Free device memory plus the pool's idle blocks; the device's size."""
        free, total = _driver().mem_get_info()
        pool = self._pool
        idle = 0 if pool is None else pool.managed_bytes - pool.active_bytes
        return int(free) + int(idle), int(total)

    def zero(self, pointer: int, nbytes: int) -> None:
        """cuMemsetD8Async on the null stream."""
        _driver().memset_d8_async(pointer, 0, nbytes)

    def copy_htod(self, pointer: int, host: np.ndarray) -> None:
        """cuMemcpyHtoD."""
        _driver().memcpy_htod(pointer, host)

    def copy_dtoh(self, host: np.ndarray, pointer: int) -> None:
        """cuMemcpyDtoH."""
        _driver().memcpy_dtoh(host, pointer)

    def copy_dtod(self, destination: int, source: int, nbytes: int) -> None:
        """cuMemcpyDtoDAsync on the null stream."""
        _driver().memcpy_dtod_async(destination, source, nbytes)

    def copy_htod_async(self, pointer: int, host: np.ndarray, stream: Any) -> None:
        """cuMemcpyHtoDAsync from page-locked memory."""
        _driver().memcpy_htod_async(pointer, host, stream)

    def copy_dtoh_async(self, host: np.ndarray, pointer: int, stream: Any) -> None:
        """cuMemcpyDtoHAsync into page-locked memory."""
        _driver().memcpy_dtoh_async(host, pointer, stream)

    def stream(self) -> Any:
        """None: PyCUDA's name for the null stream."""
        return None

    def side_stream(self) -> Any:
        """A ``pycuda.driver.Stream`` created non-blocking (not ordered with the null stream)."""
        with self._lock:
            if self._side is None:
                self._side = _driver().Stream(flags=_STREAM_NON_BLOCKING)
            return self._side

    def wait_event(self, stream: Any, event: Event) -> None:
        """cuStreamWaitEvent."""
        stream.wait_for_event(event)

    def synchronize(self) -> None:
        """cuCtxSynchronize."""
        _driver().Context.synchronize()

    def event(self, timing: bool) -> Event:
        """A ``pycuda.driver.Event``."""
        cuda = _driver()
        return cuda.Event(0 if timing else cuda.event_flags.DISABLE_TIMING)

    def elapsed_ms(self, start: Event, stop: Event) -> float:
        """``stop.time_since(start)``."""
        return float(stop.time_since(start))

    def passed(self, event: Event) -> bool:
        """``Event.query`` (cuEventQuery)."""
        return bool(event.query())

    def alloc_pinned(self, nbytes: int) -> np.ndarray:
        """``pagelocked_empty`` as a uint8 array (which keeps it alive)."""
        return _driver().pagelocked_empty(nbytes, np.uint8)

    def register(self, array: np.ndarray) -> Any:
        """cuMemHostRegister in the current context; the handle is the address."""
        address = array.ctypes.data
        size = ctypes.c_size_t(array.nbytes)
        _check("cuMemHostRegister_v2", ctypes.c_void_p(address), size, ctypes.c_uint(0))
        return address

    def unregister(self, handle: Any) -> None:
        """cuMemHostUnregister."""
        _check("cuMemHostUnregister", ctypes.c_void_p(handle))
