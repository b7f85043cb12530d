"""``cuzk trace show``: a JSON-lines span trace as a text waterfall, or a PNG with matplotlib.

Each phase is one row; with ``--all`` the finer spans follow their phase, every repeat of a
name (one ``bucket_accumulation`` per window, say) on one row. Top-level spans that overlap in
time (B·G2 on CPU threads beside G1 MSMs on the GPU) are named beside their bars and summed up
under the waterfall. A span still open when the trace was written (an interrupted run) is drawn
to the end of the trace and marked ``open``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.bench.errors import BenchError
from cuzk_core.errors import FormatError
from cuzk_core.fileio import MAX_JSON_DEPTH, atomic_output, json_depth, read_input

MIN_OVERLAP_MS = 0.01
"""Overlaps shorter than this are rounding in the trace, not parallel work."""
_BAR = "█"


@attrs.frozen
class TraceSpan:
    """One span of a trace, times in seconds since the run's timer started."""

    name: str
    start: float
    end: float | None
    parent: str | None = None
    backend: str | None = None
    depth: int = 0
    holder: int | None = None
    """Index of the span that holds this one (its parent instance), in :func:`read_trace` order."""

    def finish(self, trace_end: float) -> float:
        """The span's end, or the trace's end while it is still open."""
        return trace_end if self.end is None else self.end


def _span_from(record: Any, where: str) -> TraceSpan:
    if not isinstance(record, dict) or not isinstance(record.get("name"), str):
        raise BenchError(f"{where}: not a cuzk span (needs at least name and start)")
    try:
        start = float(record["start"])
        end = None if record.get("end") is None else float(record["end"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise BenchError(f"{where}: not a cuzk span (start and end must be numbers)") from None
    for field in ("parent", "backend"):
        if not isinstance(record.get(field), str | None):
            raise BenchError(f"{where}: not a cuzk span ({field} must be a string)")
    if not math.isfinite(start) or (end is not None and not (math.isfinite(end) and end >= start)):
        raise BenchError(f"{where}: span {record['name']!r} runs from {start} to {end}")
    return TraceSpan(record["name"], start, end, record.get("parent"), record.get("backend"))


def _placed(spans: list[TraceSpan]) -> list[TraceSpan]:
    """Spans in start order, each linked to the span of its parent's name that holds it."""
    ordered = sorted(spans, key=lambda s: s.start)
    trace_end = max(s.finish(s.start) for s in ordered)
    placed: list[TraceSpan] = []
    for span in ordered:
        holder = None
        if span.parent is not None:
            holder = next(
                (
                    i
                    for i in range(len(placed) - 1, -1, -1)
                    if placed[i].name == span.parent
                    and placed[i].start <= span.start <= placed[i].finish(trace_end)
                ),
                None,
            )
        depth = 0 if span.parent is None else 1 if holder is None else placed[holder].depth + 1
        placed.append(attrs.evolve(span, depth=depth, holder=holder))
    return placed


@attrs.frozen
class Trace:
    """A trace's spans, in start order, and the memory peaks of the run when they were sampled."""

    spans: list[TraceSpan]
    memory: dict[str, Any] | None = None


MAX_TRACE_BYTES = 1 << 30
"""The largest trace read (a daemon's trace of every job grows; a proof's is a few KB)."""


def read_trace(path: str | Path) -> Trace:
    """Every span of a trace written by ``cuzk prove --trace``, and its memory peaks."""
    try:
        lines = read_input(path, MAX_TRACE_BYTES, "cuzk trace").decode().splitlines()
    except FormatError as exc:
        raise BenchError(str(exc)) from None
    except UnicodeDecodeError:
        raise BenchError(f"{path}: not a text file, so not a cuzk trace") from None
    spans = []
    memory = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if json_depth(line.encode()) > MAX_JSON_DEPTH:  # before the parser recurses that deep
            raise BenchError(f"{path}:{number}: JSON nested too deep to be a span")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchError(f"{path}:{number}: not JSON: {exc.msg}") from None
        if isinstance(record, dict) and isinstance(record.get("memory"), dict):
            memory = record["memory"]
            continue
        spans.append(_span_from(record, f"{path}:{number}"))
    if not spans:
        raise BenchError(f"{path}: no spans in the trace")
    return Trace(_placed(spans), memory)


def memory_line(memory: dict[str, Any]) -> str:
    """The run's memory peaks in one line."""

    def mib(value: Any) -> str:
        return "-" if value is None else f"{value / 2**20:.1f} MiB"

    return (
        f"memory peaks: host RSS {mib(memory.get('peak_rss_bytes'))}, "
        f"device {mib(memory.get('peak_device_bytes'))}"
    )


@attrs.define
class Row:
    """One line of the waterfall: a span, or every repeat of a finer span under one holder."""

    name: str
    backend: str | None
    depth: int
    segments: list[tuple[float, float]]
    open: bool = False

    @property
    def start(self) -> float:
        """When the first segment started (seconds)."""
        return self.segments[0][0]

    @property
    def ms(self) -> float:
        """Time in all segments together."""
        return sum(end - start for start, end in self.segments) * 1000.0


def waterfall_rows(spans: list[TraceSpan], all_spans: bool = False) -> list[Row]:
    """The rows to draw: top-level spans, and with ``all_spans`` the finer ones below them."""
    trace_end = max(s.finish(s.start) for s in spans)
    rows: list[Row] = []
    row_of_span: dict[int, int] = {}
    row_of_key: dict[tuple[Any, ...], int] = {}
    for index, span in enumerate(spans):
        if span.depth > 0 and not all_spans:
            continue
        holder_row = row_of_span.get(span.holder) if span.holder is not None else None
        key = (holder_row, span.name, span.backend) if span.depth > 0 else (index,)
        if key not in row_of_key:
            row_of_key[key] = len(rows)
            rows.append(Row(span.name, span.backend, span.depth, []))
        row = rows[row_of_key[key]]
        row.segments.append((span.start, span.finish(trace_end)))
        row.open = row.open or span.end is None
        row_of_span[index] = row_of_key[key]
    return rows


def overlaps(spans: list[TraceSpan]) -> list[tuple[TraceSpan, TraceSpan, float]]:
    """Pairs of top-level spans that ran at the same time, with how long (ms)."""
    top = [s for s in spans if s.depth == 0]
    trace_end = max(s.finish(s.start) for s in spans)
    found = []
    for i, first in enumerate(top):
        for second in top[i + 1 :]:
            shared = min(first.finish(trace_end), second.finish(trace_end))
            shared_ms = (shared - max(first.start, second.start)) * 1000.0
            if shared_ms > MIN_OVERLAP_MS:
                found.append((first, second, shared_ms))
    return found


def _label(span: TraceSpan) -> str:
    return f"{span.name} [{span.backend}]" if span.backend else span.name


def waterfall(spans: list[TraceSpan], width: int = 60, all_spans: bool = False) -> str:
    """The rows as bars on a shared time axis; overlapping top-level spans named."""
    trace_end = max(s.finish(s.start) for s in spans)
    origin = min(s.start for s in spans)
    total = max(trace_end - origin, 1e-9)
    rows = waterfall_rows(spans, all_spans)
    pairs = overlaps(spans)
    beside: dict[tuple[str, float], list[str]] = {}
    for first, second, _ in pairs:
        beside.setdefault((first.name, first.start), []).append(second.name)
        beside.setdefault((second.name, second.start), []).append(first.name)
    names = [
        "  " * row.depth + row.name + (f" ×{len(row.segments)}" if len(row.segments) > 1 else "")
        for row in rows
    ]
    name_width = max(len(n) for n in [*names, "span"])
    backend_width = max(len(b) for b in ["backend", *(row.backend or "-" for row in rows)])
    axis = f" {total * 1000:.1f} ms ".center(width, "-")
    header = f"{'span':<{name_width}} {'backend':<{backend_width}} {'start ms':>10} {'ms':>10}"
    lines = [f"{header}  |{axis}|"]
    for row, name in zip(rows, names, strict=True):
        cells = [" "] * width
        for start, end in row.segments:
            first_col = min(width - 1, int((start - origin) / total * width))
            last_col = max(first_col + 1, math.ceil((end - origin) / total * width))
            cells[first_col:last_col] = _BAR * (min(last_col, width) - first_col)
        note = " open" if row.open else ""
        if row.depth == 0 and (row.name, row.start) in beside:
            note += "  ∥ " + ", ".join(beside[(row.name, row.start)])
        start_ms = (row.start - origin) * 1000
        text = f"{name:<{name_width}} {row.backend or '-':<{backend_width}} {start_ms:>10.1f}"
        lines.append(f"{text} {row.ms:>10.1f}  |{''.join(cells)}|{note}")
    if pairs:
        lines.append("")
        lines.append("overlaps (ran at the same time):")
        for first, second, shared_ms in pairs:
            lines.append(f"  {_label(first)} beside {_label(second)}: {shared_ms:.1f} ms")
    return "\n".join(lines)


def render_png(
    spans: list[TraceSpan], path: str | Path, all_spans: bool = False, title: str = ""
) -> None:
    """Draw the waterfall with matplotlib (the ``plot`` extra) into a PNG, atomically."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError:
        raise BenchError("--png needs matplotlib: pip install 'cuzk[plot]'") from None
    origin = min(s.start for s in spans)
    rows = waterfall_rows(spans, all_spans)
    backends = sorted({row.backend or "-" for row in rows})
    colors = {b: f"C{i % 10}" for i, b in enumerate(backends)}
    figure = Figure(figsize=(10, 1.5 + 0.3 * len(rows)))
    axes = figure.subplots()
    for index, row in enumerate(rows):
        bars = [((start - origin) * 1000, (end - start) * 1000) for start, end in row.segments]
        axes.broken_barh(bars, (index - 0.4, 0.8), color=colors[row.backend or "-"])
    axes.set_yticks(range(len(rows)), ["  " * row.depth + row.name for row in rows])
    axes.invert_yaxis()
    axes.set_xlabel("ms")
    axes.set_title(title)
    handles = [Patch(color=colors[b], label=b) for b in backends]
    axes.legend(handles=handles, title="backend", loc="lower right")
    figure.tight_layout()
    with atomic_output(path, "wb") as f:
        figure.savefig(f, format="png")
