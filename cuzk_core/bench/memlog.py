"""A memory sampler: host RSS and, when the backend reports it, device memory, at an interval.

It runs on a daemon thread while the work runs, keeps the peaks, and writes every sample to a
CSV file (``t_s,rss_bytes,device_bytes``) when the work ends, atomically. Reading RSS costs one
small ``/proc`` read, so sampling every 0.1 s does not disturb what it measures.
"""

from __future__ import annotations

import csv
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from cuzk_core.bench.errors import BenchError
from cuzk_core.fileio import atomic_output

DEFAULT_INTERVAL_S = 0.1
MAX_INTERVAL_S = 86400.0
"""The longest interval between samples (a day; Event.wait takes at most ~9.2e9 s)."""
DeviceProbe = Callable[[], int | None]
"""Bytes of device memory in use now, or None when the backend has no device."""


def host_rss_bytes() -> int:
    """This process's resident set size now (``/proc``), else its peak so far (``getrusage``)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # kB on Linux, bytes on macOS


class MemoryLog:
    """Samples memory while the ``with`` block runs; ``peaks()`` and the CSV come after it."""

    def __init__(
        self,
        path: str | Path | None = None,
        interval_s: float = DEFAULT_INTERVAL_S,
        device: DeviceProbe | None = None,
    ) -> None:
        if not 0 < interval_s <= MAX_INTERVAL_S:  # also refuses nan; inf overflowed the wait
            raise BenchError(
                f"memory sampling interval {interval_s} s: must be more than 0 and at most "
                f"{MAX_INTERVAL_S:.0f}"
            )
        self.path = None if path is None else Path(path)
        self.interval_s = interval_s
        self._device = device
        self._device_error: str | None = None
        self.rows: list[tuple[float, int, int | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cuzk-memlog", daemon=True)
        self._origin = time.perf_counter()

    def _sample(self) -> None:
        device = None
        if self._device is not None:
            try:
                device = self._device()
            except Exception as exc:  # a failing probe must not kill the run it watches
                self._device_error = f"{type(exc).__name__}: {exc}"
                self._device = None
        self.rows.append((time.perf_counter() - self._origin, host_rss_bytes(), device))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> MemoryLog:
        self._origin = time.perf_counter()
        self._sample()
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        if self.path is not None:
            self._write_csv(self.path)

    def _write_csv(self, path: Path) -> None:
        with atomic_output(path, "w") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(["t_s", "rss_bytes", "device_bytes"])
            for t, rss, device in self.rows:
                writer.writerow([f"{t:.3f}", rss, "" if device is None else device])

    def peaks(self) -> dict[str, Any]:
        """Peak host RSS and device bytes, how they were sampled, and where the CSV went."""
        devices = [d for _, _, d in self.rows if d is not None]
        record: dict[str, Any] = {
            "peak_rss_bytes": max(rss for _, rss, _ in self.rows),
            "peak_device_bytes": max(devices) if devices else None,
            "interval_s": self.interval_s,
            "samples": len(self.rows),
        }
        if self.path is not None:
            record["csv"] = str(self.path)
        if self._device_error is not None:
            record["device_error"] = self._device_error
        return record
