"""Clocks for the bench: the backend's own (CUDA events on a GPU) or the host's ``perf_counter``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

T = TypeVar("T")


class Clock(Protocol):
    """Times one call of ``work``; a device clock must wait for the device before it reads."""

    name: str

    def time(self, work: Callable[[], T]) -> tuple[T, float]:
        """Run ``work``; its result and the elapsed milliseconds."""
        ...


class HostClock:
    """``time.perf_counter`` around the call: right for the CPU backend and whole proofs."""

    name = "perf_counter"

    def time(self, work: Callable[[], T]) -> tuple[T, float]:
        """Run ``work``; its result and the elapsed wall-clock milliseconds."""
        start = time.perf_counter()
        result = work()
        return result, (time.perf_counter() - start) * 1000.0


def clock_for(backend: Backend) -> Clock:
    """The backend's device clock when it offers one (``cuzk_bench_clock``), else the host's."""
    return backend.device_clock() or HostClock()
