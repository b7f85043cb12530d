"""A one-line progress bar on stderr, shown only on a terminal and never with ``--quiet``."""

from __future__ import annotations

import sys
import time
from typing import IO


class Progress:
    """Counts steps of a long task and redraws ``label [#####.....] 5/10 step (3.2 s)``."""

    def __init__(
        self, label: str, total: int, enabled: bool | None = None, stream: IO[str] | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.label = label
        self.total = max(1, total)
        self.done = 0
        self._start = time.perf_counter()

    def step(self, name: str, amount: int = 1) -> None:
        """Record ``amount`` finished steps, the last one being ``name``."""
        self.done = min(self.total, self.done + amount)
        self._draw(name)

    def _draw(self, name: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * self.done // self.total
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.perf_counter() - self._start
        line = f"\r{self.label} [{bar}] {self.done}/{self.total} {name} ({elapsed:.1f} s)"
        self.stream.write(line.ljust(100)[:100])
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


class NullProgress(Progress):
    """A progress bar that shows nothing (library use, tests, ``--quiet``)."""

    def __init__(self) -> None:
        super().__init__("", 1, enabled=False)
