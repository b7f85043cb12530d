"""CuPy on demand: whether it can run here, the kernel cache, launches, and CUDA failures.

Nothing here imports CuPy at module import time, so the plugin loads on machines with no GPU.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from cuzk_core.errors import CuzkError

from .kernels import KernelCache

NAME = "cupy"
NULL = np.uint64(0)
"""A null device pointer as a kernel argument."""
GIB = float(1 << 30)

KERNELS = KernelCache()
"""The process-wide compiled modules."""
MODULES = ("ff/fr_kernels.cu", "r1cs/spmv.cu", "ntt/ntt.cu", "msm/msm.cu")
"""Every kernel file the backend uses, compiled together on first use."""


class GpuError(CuzkError):
    """A CUDA failure or an oversize request in the cupy backend (the CLI exits 2)."""


@functools.cache
def availability() -> tuple[bool, str]:
    """Whether the backend can run here, and a line saying on what or why not."""
    try:
        import cupy
    except Exception as exc:  # any import failure means the same to the user
        return False, f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"CuPy {cupy.__version__} finds no usable CUDA device ({exc})"
    if count < 1:
        return False, f"CuPy {cupy.__version__} finds no CUDA device"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    driver = cupy.cuda.runtime.driverGetVersion()
    memory = props["totalGlobalMem"] / GIB
    return True, (
        f"CuPy {cupy.__version__} on {name} (sm_{props['major']}{props['minor']}, "
        f"{memory:.0f} GiB), CUDA driver {driver // 1000}.{driver % 1000 // 10}"
    )


def cupy_module() -> Any:
    """The ``cupy`` module (imported on first use)."""
    import cupy

    return cupy


def _is_cuda_failure(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return module.startswith(("cupy", "cupy_backends")) or isinstance(exc, MemoryError)


@contextlib.contextmanager
def gpu_errors(what: str) -> Iterator[None]:
    """Turn CUDA, NVRTC and out-of-memory failures inside the body into one-line GpuErrors."""
    try:
        yield
    except CuzkError:
        raise
    except Exception as exc:
        if not _is_cuda_failure(exc):
            raise
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise GpuError(f"cupy backend: {what} failed: {type(exc).__name__}: {first_line}") from exc


def warm_up(timer: Any = None) -> dict[str, float]:
    """Compile (or load from CuPy's disk cache) every kernel module once; ms per module."""
    fresh = [m for m in MODULES if m not in KERNELS.compile_ms]
    if fresh:
        span = timer.span("compile_kernels") if timer is not None else contextlib.nullcontext()
        with gpu_errors("compiling kernels"), span as record:
            for name in fresh:
                KERNELS.module(name, KERNEL_DEFINES.get(name))
            if record is not None:
                record.attrs.update({m: round(KERNELS.compile_ms[m], 1) for m in fresh})
    return dict(KERNELS.compile_ms)


KERNEL_DEFINES: dict[str, dict[str, int]] = {}
"""Tuning macros per kernel file (e.g. ``{"msm/msm.cu": {"MSM_PREFETCH": 1}}``), for A/B runs."""


def kernel(module: str, function: str) -> Any:
    """A compiled kernel by file and name, built with that file's KERNEL_DEFINES."""
    return KERNELS.kernel(module, function, KERNEL_DEFINES.get(module))


def launch(
    function: Any, threads: int, args: tuple, block: int = 256, shared_bytes: int = 0
) -> None:
    """Launch ``function`` over ``threads`` threads in blocks of ``block``."""
    if threads <= 0:
        return
    grid = math.ceil(threads / block)
    function((grid,), (block,), args, shared_mem=shared_bytes)


def synchronize() -> None:
    """Wait for the device to finish queued work."""
    cupy_module().cuda.get_current_stream().synchronize()


@contextlib.contextmanager
def step(timer: Any, name: str, **attrs: Any) -> Iterator[None]:
    """A finer span inside a phase; at CUZK_TIMING=2 it waits for the device (GPU time shows)."""
    with timer.span(name, **attrs):
        yield
        if timer.level >= 2:
            synchronize()


def free_bytes() -> int:
    """Device memory that allocations can still get: free on the device plus CuPy's pool."""
    cupy = cupy_module()
    free, _ = cupy.cuda.runtime.memGetInfo()
    return int(free) + int(cupy.get_default_memory_pool().free_bytes())


def total_bytes() -> int:
    """The device's memory size."""
    return int(cupy_module().cuda.runtime.memGetInfo()[1])


def ensure_fits(needed: int, what: str) -> None:
    """Refuse up front, with the sizes, a step whose working memory cannot fit on the device."""
    available = free_bytes()
    if needed > available:
        raise GpuError(
            f"cupy backend: {what} needs {needed / GIB:.2f} GiB of device memory, "
            f"{available / GIB:.2f} GiB is free (device total {total_bytes() / GIB:.2f} GiB)"
        )
