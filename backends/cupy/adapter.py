"""CuPy as the shared GPU driver's adapter: NVRTC builds, CuPy's pools, the runtime API.

CuPy is imported on first use, so this module loads on machines without it.
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
        self._side: Any = None
        self._side_lock = threading.Lock()

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
            "threads_per_multiprocessor": props["maxThreadsPerMultiProcessor"],
            "registers_per_multiprocessor": props["regsPerMultiprocessor"],
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
        """Launch on ``stream``, else the current stream."""
        function((grid,), (block,), args, shared_mem=shared_bytes, stream=stream)

    def alloc(self, nbytes: int) -> tuple[Any, int]:
        """A block of CuPy's default memory pool."""
        memory = _cupy().cuda.alloc(nbytes)
        return memory, memory.ptr

    def memory(self) -> tuple[int, int]:
        """Free device memory plus the pool's idle blocks; the device's size."""
        cupy = _cupy()
        free, total = cupy.cuda.runtime.memGetInfo()
        return int(free) + int(cupy.get_default_memory_pool().free_bytes()), int(total)

    def zero(self, pointer: int, nbytes: int) -> None:
        """cudaMemsetAsync on the current stream."""
        cupy = _cupy()
        cupy.cuda.runtime.memsetAsync(pointer, 0, nbytes, cupy.cuda.get_current_stream().ptr)

    def copy_htod(self, pointer: int, host: np.ndarray) -> None:
        """cudaMemcpy from the host."""
        runtime = _cupy().cuda.runtime
        runtime.memcpy(pointer, host.ctypes.data, host.nbytes, runtime.memcpyHostToDevice)

    def copy_dtoh(self, host: np.ndarray, pointer: int) -> None:
        """cudaMemcpy to the host."""
        runtime = _cupy().cuda.runtime
        runtime.memcpy(host.ctypes.data, pointer, host.nbytes, runtime.memcpyDeviceToHost)

    def copy_dtod(self, destination: int, source: int, nbytes: int) -> None:
        """cudaMemcpyAsync within the device, on the current stream."""
        cupy = _cupy()
        runtime = cupy.cuda.runtime
        stream = cupy.cuda.get_current_stream().ptr
        runtime.memcpyAsync(destination, source, nbytes, runtime.memcpyDeviceToDevice, stream)

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
        """CuPy's current stream (the null stream unless a caller set one)."""
        return _cupy().cuda.get_current_stream()

    def side_stream(self) -> Any:
        """A non-blocking ``cupy.cuda.Stream``."""
        with self._side_lock:
            if self._side is None:
                self._side = _cupy().cuda.Stream(non_blocking=True)
            return self._side

    def wait_event(self, stream: Any, event: Event) -> None:
        """cudaStreamWaitEvent."""
        stream.wait_event(event)

    def synchronize(self) -> None:
        """Wait for the current stream."""
        _cupy().cuda.get_current_stream().synchronize()

    def event(self, timing: bool) -> Event:
        """A ``cupy.cuda.Event``."""
        return _cupy().cuda.Event(disable_timing=not timing)

    def elapsed_ms(self, start: Event, stop: Event) -> float:
        """``cupy.cuda.get_elapsed_time``."""
        return float(_cupy().cuda.get_elapsed_time(start, stop))

    def alloc_pinned(self, nbytes: int) -> np.ndarray:
        """``cupy.cuda.alloc_pinned_memory`` as a uint8 array (which keeps it alive)."""
        return np.frombuffer(_cupy().cuda.alloc_pinned_memory(nbytes), np.uint8, nbytes)

    def register(self, array: np.ndarray) -> Any:
        """cudaHostRegister; the handle is the address."""
        address = array.ctypes.data
        _cupy().cuda.runtime.hostRegister(address, array.nbytes, 0)
        return address

    def unregister(self, handle: Any) -> None:
        """cudaHostUnregister."""
        _cupy().cuda.runtime.hostUnregister(handle)
