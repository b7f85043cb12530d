"""Phase spans: every step of a proof runs inside one, so any slowdown can be attributed.

A :class:`Timer` records spans (name, start, end, parent, backend). Spans nest: a span named
after a phase counts as that phase only when no enclosing span is a phase, so a phase's total
counts each millisecond once and a backend's finer spans (the split MSM's :data:`SUB_PHASES`
among them) sit below their phase. With ``CUZK_TIMING=1`` each phase is printed to stderr as
``CUZK_TIMING phase=<name> ms=<float> backend=<name>`` the moment it ends, and the sub-phases as
``CUZK_TIMING span=<name> … parent=<phase>``; ``CUZK_TIMING=2`` prints every finer span too.
Lines are flushed at once so an interrupted run still shows where it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from cuzk_core.fileio import atomic_output

PHASES = (
    "prepare",
    "synthesis",
    "load_params",
    "pin",
    "ntt_h",
    "msm_h",
    "msm_b_g2",
    "msm_b_g1",
    "msm_a",
    "msm_l",
    "assemble",
    "unpin",
)
"""The phase names of a proof, in pipeline order; backends add finer spans below these."""
TIMINGS_FILE = "timings.json"
"""The file ``cuzk prove`` writes every span of the proof to, beside the proof."""

SUB_PHASES = ("prep_msm", "batch_add", "tail_msm")
"""The split MSM's stages (scalar classification, the 0/1 batch addition, Pippenger on the rest):
named spans a backend opens inside an ``msm_*`` phase, reported at ``CUZK_TIMING=1`` as its
children."""


@attrs.define
class Span:
    """One timed region; times are seconds since the timer started."""

    name: str
    start: float
    end: float | None = None
    parent: str | None = None
    backend: str | None = None
    attrs: dict[str, Any] = attrs.field(factory=dict)
    is_phase: bool = False
    """A phase of the proof: named in :data:`PHASES` with no phase around it."""

    @property
    def ms(self) -> float:
        """Duration in milliseconds (0 while still open)."""
        return 0.0 if self.end is None else (self.end - self.start) * 1000.0

    def to_json(self) -> dict[str, Any]:
        """The span as a JSON-ready dict."""
        record = {
            "name": self.name,
            "start": round(self.start, 6),
            "end": None if self.end is None else round(self.end, 6),
            "ms": round(self.ms, 3),
            "parent": self.parent,
            "backend": self.backend,
            "phase": self.is_phase,
        }
        if self.attrs:
            record["attrs"] = self.attrs
        return record


def timing_level_from_env() -> int:
    """The ``CUZK_TIMING`` level: 0 (quiet), 1 (phases) or 2 (phases and finer spans)."""
    value = os.environ.get("CUZK_TIMING", "0").strip() or "0"
    try:
        return max(0, int(value))
    except ValueError:
        return 1 if value.lower() in ("true", "yes", "on") else 0


class Timer:
    """Collects spans; parents are tracked per thread so parallel work nests correctly."""

    def __init__(self, level: int | None = None, stream: IO[str] | None = None) -> None:
        self.level = timing_level_from_env() if level is None else level
        self.stream = stream if stream is not None else sys.stderr
        self.spans: list[Span] = []
        self._origin = time.perf_counter()
        self._local = threading.local()
        self._lock = threading.Lock()

    def _stack(self) -> list[Span]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    @contextlib.contextmanager
    def span(
        self, name: str, backend: str | None = None, parent: str | None = None, **extra: Any
    ) -> Iterator[Span]:
        """Time the body as span ``name``; ``parent`` overrides the enclosing span (for threads)."""
        stack = self._stack()
        if parent is None and stack:
            parent = stack[-1].name
        if backend is None and stack:
            backend = stack[-1].backend
        inside_phase = any(s.is_phase for s in stack) or parent in PHASES
        record = Span(name, time.perf_counter() - self._origin, None, parent, backend, dict(extra))
        record.is_phase = name in PHASES and not inside_phase
        with self._lock:
            self.spans.append(record)
        stack.append(record)
        try:
            yield record
        finally:
            stack.pop()
            record.end = time.perf_counter() - self._origin
            self._report(record)

    def _report(self, record: Span) -> None:
        named = record.is_phase or record.name in SUB_PHASES
        if self.level >= 2 or (self.level >= 1 and named):
            kind = "phase" if record.is_phase else "span"
            line = f"CUZK_TIMING {kind}={record.name} ms={record.ms:.3f} backend={record.backend}"
            if not record.is_phase and record.parent:
                line += f" parent={record.parent}"
            for key, value in record.attrs.items():
                line += f" {key}={value}"
            with self._lock:
                print(line, file=self.stream, flush=True)

    def phase_totals(self) -> dict[str, float]:
        """Milliseconds per phase, summed over repeats, in pipeline order (nested spans named
        like a phase are not counted again)."""
        totals: dict[str, float] = {}
        for record in self.spans:
            if record.is_phase:
                totals[record.name] = totals.get(record.name, 0.0) + record.ms
        return {name: totals[name] for name in PHASES if name in totals}

    def wall_ms(self) -> float:
        """Milliseconds during which at least one phase ran: phases that overlap (B·G2 on CPU
        threads beside the G1 MSMs) count once, so this is the proof's wall time."""
        intervals = sorted((s.start, s.end) for s in self.spans if s.is_phase and s.end is not None)
        total, reach = 0.0, float("-inf")
        for start, end in intervals:
            if end > reach:
                total += end - max(start, reach)
                reach = end
        return total * 1000.0

    def to_json(self) -> dict[str, Any]:
        """Every span, for ``timings.json``."""
        return {
            "spans": [s.to_json() for s in self.spans],
            "phases_ms": self.phase_totals(),
            "wall_ms": round(self.wall_ms(), 3),
        }

    def write_trace(self, path: str | Path, memory: dict[str, Any] | None = None) -> None:
        """Write every span as JSON lines (atomically; spans still open have ``end: null``),
        then the run's memory peaks, when sampled, as a last ``{"memory": …}`` line."""
        with atomic_output(path, "w") as f:
            for record in self.spans:
                f.write(json.dumps(record.to_json()) + "\n")
            if memory is not None:
                f.write(json.dumps({"memory": memory}) + "\n")
