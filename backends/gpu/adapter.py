"""What a GPU library lends the shared driver: compiling, launching, memory, copies, events.

A backend is one :class:`Adapter` (CuPy's, PyCUDA's) and a :class:`~.plugin.GpuPlugin` built on
it; everything else (MSM, NTT, SpMV, memory policies, chunking, error mapping) is the driver's.
Pointers are plain ints, host buffers C-contiguous numpy arrays, and all work goes to the stream
:meth:`Adapter.stream` names, in order. An adapter imports its library on first use only.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np


class Module(Protocol):
    """A compiled kernel file."""

    def get_function(self, name: str) -> Any:
        """The ``extern "C"`` kernel ``name``."""


class Event(Protocol):
    """A CUDA event."""

    def record(self, stream: Any = None) -> None:
        """Mark the point ``stream`` has reached."""

    def synchronize(self) -> None:
        """Wait until the device passes the mark."""


class Adapter(Protocol):
    """One GPU library's means, as the driver uses them."""

    name: str
    """The backend's name, as profiles select it (``"cupy"``)."""
    library: str
    """The library's name for messages (``"CuPy"``)."""

    def unavailable(self) -> str | None:
        """Why the library cannot run here (not installed, no compiler, no device), or None."""

    def describe(self) -> dict[str, Any]:
        """Device 0 and the software: ``gpu``, ``sm``, ``multiprocessors``,
        ``threads_per_multiprocessor``, ``registers_per_multiprocessor``, ``memory_gib``,
        ``driver_cuda``, ``library`` (name and version) and ``compiler``."""

    def is_failure(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the library's CUDA, compiler or out-of-memory error."""

    def scope(self) -> AbstractContextManager[None]:
        """Make the device current in this thread for the body (nested scopes are cheap)."""

    def compile(self, source: str, options: tuple[str, ...]) -> Module:
        """Compile one self-contained CUDA source (the library caches builds on disk)."""

    def registers(self, function: Any) -> int:
        """Registers per thread of a compiled kernel."""

    def launch(
        self,
        function: Any,
        grid: int,
        block: int,
        args: tuple,
        shared_bytes: int,
        stream: Any = None,
    ) -> None:
        """Queue ``function`` on ``stream`` (None: the driver's stream); pointers arrive as
        np.uint64, values as numpy."""

    def alloc(self, nbytes: int) -> tuple[Any, int]:
        """Device memory from the library's pool: the owner (frees when dropped) and address."""

    def memory(self) -> tuple[int, int]:
        """(bytes allocations can still get, the pool's idle memory included; device total)."""

    def zero(self, pointer: int, nbytes: int) -> None:
        """Queue a memset to zero."""

    def copy_htod(self, pointer: int, host: np.ndarray) -> None:
        """Copy all of ``host`` to the device, returning when the host buffer may be reused."""

    def copy_dtoh(self, host: np.ndarray, pointer: int) -> None:
        """Fill all of ``host`` from the device, after the work queued before."""

    def copy_dtod(self, destination: int, source: int, nbytes: int) -> None:
        """Queue a device-to-device copy."""

    def copy_htod_async(self, pointer: int, host: np.ndarray, stream: Any) -> None:
        """Queue a copy of page-locked ``host`` to the device on ``stream``."""

    def copy_dtoh_async(self, host: np.ndarray, pointer: int, stream: Any) -> None:
        """Queue a copy from the device into page-locked ``host`` on ``stream``."""

    def stream(self) -> Any:
        """The stream the driver's work goes to (the calling thread's, under CuPy)."""

    def side_stream(self) -> Any:
        """A second stream, not ordered with :meth:`stream` (uploads overlapped with compute);
        created once, in the device scope (once per thread where each thread has its own
        :meth:`stream`, as under CuPy)."""

    def wait_event(self, stream: Any, event: Event) -> None:
        """Make ``stream``'s later work wait until the device passes ``event``."""

    def synchronize(self) -> None:
        """Wait for the stream's queued work."""

    def event(self, timing: bool) -> Event:
        """A new event (``timing``: it can time an interval)."""

    def elapsed_ms(self, start: Event, stop: Event) -> float:
        """Milliseconds between two recorded, completed timing events."""

    def passed(self, event: Event) -> bool:
        """Whether the device has passed recorded ``event`` (without waiting for it)."""

    def alloc_pinned(self, nbytes: int) -> np.ndarray:
        """A page-locked host buffer of ``nbytes`` uint8 (freed when the array is)."""

    def register(self, array: np.ndarray) -> Any:
        """Page-lock ``array``'s memory in place (cudaHostRegister); a handle for unregister."""

    def unregister(self, handle: Any) -> None:
        """Undo :meth:`register`."""
