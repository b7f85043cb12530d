"""Statistics of repeated runs: median, min, max and spread per figure; paired ratios for A/B.

A difference counts only when it is beyond the run-to-run spread: B is called slower (faster)
when every run of B was slower (faster) than every run of A, i.e. the two ranges do not overlap.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import attrs

SLOWER = "slower"
FASTER = "faster"
WITHIN_SPREAD = "within spread"
ONE_RUN = "one run: no spread"


@attrs.frozen
class FigureStats:
    """One figure (a phase or finer span) over the timed runs, in milliseconds."""

    samples_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        """The median run."""
        return statistics.median(self.samples_ms)

    @property
    def min_ms(self) -> float:
        """The fastest run."""
        return min(self.samples_ms)

    @property
    def max_ms(self) -> float:
        """The slowest run."""
        return max(self.samples_ms)

    @property
    def spread(self) -> float:
        """``(max − min) / median``: how much runs disagree (0 for one run)."""
        median = self.median_ms
        return (self.max_ms - self.min_ms) / median if median > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        """The figure as written in results files."""
        return {
            "median_ms": round(self.median_ms, 4),
            "min_ms": round(self.min_ms, 4),
            "max_ms": round(self.max_ms, 4),
            "spread": round(self.spread, 4),
            "samples_ms": [round(s, 4) for s in self.samples_ms],
        }

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> FigureStats:
        """Read a figure back from its ``samples_ms``."""
        return cls(tuple(float(s) for s in record["samples_ms"]))


def summarize(samples: Sequence[dict[str, float]]) -> dict[str, FigureStats]:
    """Per-figure statistics over runs; figures keep the order they first appeared in."""
    names: dict[str, None] = {}
    for sample in samples:
        names.update(dict.fromkeys(sample))
    return {name: FigureStats(tuple(s[name] for s in samples if name in s)) for name in names}


def verdict(a: FigureStats, b: FigureStats) -> str:
    """Whether B is slower or faster than A beyond the run-to-run spread, or within it."""
    if len(a.samples_ms) < 2 or len(b.samples_ms) < 2:
        return ONE_RUN
    if b.min_ms > a.max_ms:
        return SLOWER
    if b.max_ms < a.min_ms:
        return FASTER
    return WITHIN_SPREAD


@attrs.frozen
class PairedRatio:
    """B/A of runs made side by side (A B A B …): the median ratio and its range."""

    ratios: tuple[float, ...]
    verdict: str

    @property
    def median(self) -> float:
        """The median paired ratio."""
        return statistics.median(self.ratios)

    def to_json(self) -> dict[str, Any]:
        """The ratio as written in results files."""
        return {
            "median": round(self.median, 4),
            "min": round(min(self.ratios), 4),
            "max": round(max(self.ratios), 4),
            "verdict": self.verdict,
        }


def paired_ratios(
    a_samples: Sequence[dict[str, float]], b_samples: Sequence[dict[str, float]]
) -> dict[str, PairedRatio]:
    """B/A per figure over runs paired by their index; figures with a zero A time are left out."""
    a_stats, b_stats = summarize(a_samples), summarize(b_samples)
    ratios = {}
    for name in a_stats:
        pairs = [
            b[name] / a[name]
            for a, b in zip(a_samples, b_samples, strict=True)
            if name in a and name in b and a[name] > 0
        ]
        if pairs and name in b_stats:
            ratios[name] = PairedRatio(tuple(pairs), verdict(a_stats[name], b_stats[name]))
    return ratios
