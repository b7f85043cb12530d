"""CuPy as the shared GPU driver's adapter: NVRTC builds, CuPy's pools, the runtime API.

Each host thread queues its work on a stream of its own (non-blocking, made CuPy's current
stream for that thread on first use), copies included: the daemon's synthesis stage and its
prover stage then wait only for their own work, where on the legacy null stream every copy of
one stage waited for the other's kernels. CuPy is imported on first use, so this module loads
on machines without it.
"""

from __future__ import annotations

import contextlib
import threading
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from cuzk_backend_gpu.adapter import Event, Module
from cuzk_backend_gpu.driver import GIB


def _cupy() -> Any:
    import cupy

    return cupy


class CupyAdapter:
    """Compile with ``cupy.RawModule`` (NVRTC), allocate from CuPy's pool, copy by the runtime."""

    name = "cupy"
    library = "CuPy"

    def __init__(self) -> None:
        self._local = threading.local()

    def _own_stream(self) -> Any:
        """This thread's stream; made current on first use, so that CuPy's pool (which keeps a
        free list per stream) and every launch of the thread follow it."""
        stream = getattr(self._local, "stream", None)
        if stream is None:
            stream = self._local.stream = _cupy().cuda.Stream(non_blocking=True)
            stream.use()
        return stream

    def unavailable(self) -> str | None:
        """Why CuPy cannot run here (not importable, no device), or None."""
        try:
            import cupy
        except Exception as exc:  # any import failure means the same to the user
            return f"CuPy is not importable ({type(exc).__name__}: {exc})"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            return f"CuPy {cupy.__version__} finds no usable CUDA device ({exc})"
        return None if count > 0 else f"CuPy {cupy.__version__} finds no CUDA device"

    def describe(self) -> dict[str, Any]:
        """Device 0 from the runtime's properties; CuPy's and NVRTC's versions."""
        cupy = _cupy()
        props = cupy.cuda.runtime.getDeviceProperties(0)
        driver = cupy.cuda.runtime.driverGetVersion()
        from cupy_backends.cuda.libs import nvrtc

        version = ".".join(str(v) for v in nvrtc.getVersion())
        name = props["name"]
        return {
            "gpu": name.decode() if isinstance(name, bytes) else name,
            "sm": f"{props['major']}{props['minor']}",
            "multiprocessors": props["multiProcessorCount"],
            "clock_mhz": cupy.cuda.runtime.deviceGetAttribute(
                cupy.cuda.runtime.cudaDevAttrClockRate, 0
            )
            / 1000,
            "threads_per_multiprocessor": props["maxThreadsPerMultiProcessor"],
            "registers_per_multiprocessor": props["regsPerMultiprocessor"],
            "l2_bytes": props["l2CacheSize"],
            "memory_gib": props["totalGlobalMem"] / GIB,
            "driver_cuda": f"{driver // 1000}.{driver % 1000 // 10}",
            "library": f"CuPy {cupy.__version__}",
            "compiler": f"NVRTC {version}",
        }

    def is_failure(self, exc: BaseException) -> bool:
        """CuPy's and its CUDA bindings' exceptions."""
        return (type(exc).__module__ or "").startswith(("cupy", "cupy_backends"))

    def scope(self) -> AbstractContextManager[None]:
        """Nothing to do: the runtime API makes device 0 current by itself."""
        return contextlib.nullcontext()

    def compile(self, source: str, options: tuple[str, ...]) -> Module:
        """A ``cupy.RawModule`` built now by NVRTC (cached on disk by CuPy)."""
        module = _cupy().RawModule(code=source, options=options)
        module.compile()
        return module

    def registers(self, function: Any) -> int:
        """The ``RawKernel``'s register count."""
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
        """Launch on ``stream``, else this thread's stream."""
        stream = self._own_stream() if stream is None else stream
        function((grid,), (block,), args, shared_mem=shared_bytes, stream=stream)

    def alloc(self, nbytes: int) -> tuple[Any, int]:
        """A block of CuPy's default memory pool (on this thread's stream's free list)."""
        self._own_stream()
        memory = _cupy().cuda.alloc(nbytes)
        return memory, memory.ptr

    def memory(self) -> tuple[int, int]:
        """Free device memory plus the pool's idle blocks; the device's size."""
        cupy = _cupy()
        free, total = cupy.cuda.runtime.memGetInfo()
        return int(free) + int(cupy.get_default_memory_pool().free_bytes()), int(total)

    def zero(self, pointer: int, nbytes: int) -> None:
        """cudaMemsetAsync on this thread's stream."""
        _cupy().cuda.runtime.memsetAsync(pointer, 0, nbytes, self._own_stream().ptr)

    def copy_htod(self, pointer: int, host: np.ndarray) -> None:
        """A copy from the host, done when this returns (after this thread's queued work)."""
        self._copy_now(pointer, host.ctypes.data, host.nbytes, "memcpyHostToDevice")

    def copy_dtoh(self, host: np.ndarray, pointer: int) -> None:
        """A copy to the host, done when this returns (after this thread's queued work)."""
        self._copy_now(host.ctypes.data, pointer, host.nbytes, "memcpyDeviceToHost")

    def _copy_now(self, destination: int, source: int, nbytes: int, kind: str) -> None:
        """A blocking copy that first waits for this thread's stream, then copies. A copy to
        or from pageable memory queued behind a long kernel waits inside the driver, and other
        threads' copies queue behind it there: in the daemon the prover's scalar uploads
        waited ~37 ms for the next job's witness kernel (bench/NOTES.md, round 9)."""
        runtime, stream = _cupy().cuda.runtime, self._own_stream()
        stream.synchronize()
        runtime.memcpyAsync(destination, source, nbytes, getattr(runtime, kind), stream.ptr)
        stream.synchronize()

    def copy_dtod(self, destination: int, source: int, nbytes: int) -> None:
        """cudaMemcpyAsync within the device, on this thread's stream."""
        runtime = _cupy().cuda.runtime
        kind = runtime.memcpyDeviceToDevice
        runtime.memcpyAsync(destination, source, nbytes, kind, self._own_stream().ptr)

    def copy_htod_async(self, pointer: int, host: np.ndarray, stream: Any) -> None:
        """cudaMemcpyAsync from page-locked memory."""
        runtime = _cupy().cuda.runtime
        kind = runtime.memcpyHostToDevice
        runtime.memcpyAsync(pointer, host.ctypes.data, host.nbytes, kind, stream.ptr)

    def copy_dtoh_async(self, host: np.ndarray, pointer: int, stream: Any) -> None:
        """cudaMemcpyAsync into page-locked memory."""
        runtime = _cupy().cuda.runtime
        kind = runtime.memcpyDeviceToHost
        runtime.memcpyAsync(host.ctypes.data, pointer, host.nbytes, kind, stream.ptr)

    def stream(self) -> Any:
        """This thread's stream."""
        return self._own_stream()

    def side_stream(self) -> Any:
        """A second non-blocking ``cupy.cuda.Stream`` of this thread."""
        side = getattr(self._local, "side", None)
        if side is None:
            side = self._local.side = _cupy().cuda.Stream(non_blocking=True)
        return side

    def wait_event(self, stream: Any, event: Event) -> None:
        """cudaStreamWaitEvent."""
        stream.wait_event(event)

    def synchronize(self) -> None:
        """Wait for this thread's stream."""
        self._own_stream().synchronize()

    def event(self, timing: bool) -> Event:
        """A ``cupy.cuda.Event``."""
        return _cupy().cuda.Event(disable_timing=not timing)

    def elapsed_ms(self, start: Event, stop: Event) -> float:
        """``cupy.cuda.get_elapsed_time``."""
        return float(_cupy().cuda.get_elapsed_time(start, stop))

    def passed(self, event: Event) -> bool:
        """``Event.done`` (cudaEventQuery)."""
        return bool(event.done)

    def alloc_pinned(self, nbytes: int) -> np.ndarray:
        """``cudaHostAlloc`` of exactly ``nbytes`` as a uint8 array (which keeps it alive, and
        frees it when dropped). Not CuPy's pinned pool: it rounds every block up to a power of
        two (a 2^20 key's sections took 1.59× their bytes) and keeps freed blocks pinned, so an
        evicted key would never give its memory back."""
        cuda = _cupy().cuda
        memory = cuda.PinnedMemory(nbytes, cuda.runtime.hostAllocPortable)
        return np.frombuffer(cuda.PinnedMemoryPointer(memory, 0), np.uint8, nbytes)

    def register(self, array: np.ndarray) -> Any:
        """cudaHostRegister; the handle is the address."""
        address = array.ctypes.data
        _cupy().cuda.runtime.hostRegister(address, array.nbytes, 0)
        return address

    def unregister(self, handle: Any) -> None:
        """cudaHostUnregister."""
        _cupy().cuda.runtime.hostUnregister(handle)
