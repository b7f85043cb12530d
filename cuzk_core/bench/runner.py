"""The bench runner: prepare and check once per profile, warm up, then time runs in alternation.

With several profiles (``--vs``, ``isolate``) every round runs each profile once in turn,
A B A B …, so drift of the machine (clocks, temperature, other load) falls on all of them alike
and run i of A can be paired with run i of B.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import attrs

from cuzk_core.backend import Backend
from cuzk_core.bench.clock import Clock
from cuzk_core.bench.definitions import Benchmark
from cuzk_core.bench.errors import BenchError
from cuzk_core.bench.stats import FigureStats, summarize
from cuzk_core.hookspecs import BackendInfo
from cuzk_core.plugins import Plugins
from cuzk_core.profile import Profile
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.timing import Timer


@attrs.frozen
class Variant:
    """A profile the benchmark runs under, the label it carries, and the changes that made it."""

    label: str
    profile: Profile
    changes: tuple[str, ...] = ()


@attrs.define
class VariantRun:
    """What one profile gave: its backend, clock, check and one figures dict per timed run."""

    variant: Variant
    info: BackendInfo
    backend: Backend
    state: Any
    clock: Clock
    check: dict[str, Any] = attrs.field(factory=dict)
    samples: list[dict[str, float]] = attrs.field(factory=list)

    def stats(self) -> dict[str, FigureStats]:
        """Median, min and max per figure."""
        return summarize(self.samples)

    def to_json(self) -> dict[str, Any]:
        """The variant as written in results files."""
        profile = self.variant.profile
        info = self.info
        return {
            "label": self.variant.label,
            "profile": {
                "name": profile.name,
                "digest": profile.digest(),
                "changes": list(self.variant.changes),
                "settings": profile.to_dict(),
            },
            "backend": {"name": info.name, "version": info.version},
            "clock": self.clock.name,
            "check": self.check,
            "figures": {name: stats.to_json() for name, stats in self.stats().items()},
        }


def span_figures(timer: Timer) -> dict[str, float]:
    """Milliseconds of top-level spans by name and of the spans just below as ``parent/name``."""
    top = {span.name for span in timer.spans if span.parent is None}
    figures: dict[str, float] = {}
    for span in timer.spans:
        if span.parent is None:
            key = span.name
        elif span.parent in top:
            key = f"{span.parent}/{span.name}"
        else:
            continue
        figures[key] = figures.get(key, 0.0) + span.ms
    return figures


@contextmanager
def _no_collector_pauses() -> Iterator[None]:
    """Collect garbage before a run and not during it, as timeit does.

    A collection inside a run lands in whichever phase happens to allocate, and at tens of
    milliseconds it can outweigh the change a variant makes to that phase.
    """
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _timed_run(bench: Benchmark, plugins: Plugins, entry: VariantRun) -> dict[str, float]:
    timer = Timer()
    backend = plugins.backend(entry.variant.profile, timer)
    with _no_collector_pauses():
        overrides = bench.run(backend, entry.state, entry.clock)
    figures = span_figures(timer)
    figures.update(overrides)
    return figures


def run_variants(
    bench: Benchmark,
    variants: Sequence[Variant],
    plugins: Plugins,
    runs: int,
    warmup: int,
    progress: Progress | None = None,
) -> list[VariantRun]:
    """Prepare and check each variant, then ``warmup`` untimed and ``runs`` timed rounds."""
    progress = progress or NullProgress()
    entries: list[VariantRun] = []
    try:
        for variant in variants:
            backend = plugins.backend(variant.profile, Timer(level=0))
            info = plugins.backends[backend.name]
            try:
                state = bench.prepare(backend)
            except MemoryError as exc:  # numpy says how much: a size too large for this host
                raise BenchError(f"{bench.name}: its inputs do not fit in memory ({exc})") from None
            entry = VariantRun(variant, info, backend, state, backend.clock())
            entries.append(entry)
            entry.check = bench.check(backend, entry.state)
            progress.step(f"check {variant.label}")
        for round_index in range(warmup + runs):
            kind = "warm-up" if round_index < warmup else "run"
            for entry in entries:
                figures = _timed_run(bench, plugins, entry)
                if round_index >= warmup:
                    entry.samples.append(figures)
                progress.step(f"{kind} {entry.variant.label}")
    finally:
        for entry in entries:
            bench.release(entry.backend, entry.state)
    return entries
