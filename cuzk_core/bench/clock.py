"""Clocks for the bench: the backend's own (CUDA events on a GPU) or the host's ``perf_counter``
(the fallback of the optional ``cuzk_bench_clock`` hook)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

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
