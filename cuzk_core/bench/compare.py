"""``cuzk bench compare``: two saved results, figure by figure, with a regression gate.

A figure regresses when B's median exceeds A's by more than the threshold, the difference is
beyond the run-to-run spread (every B run slower than every A run, unless there was only one
run), and it is at least
``min_delta_ms`` (so microsecond phases cannot fail a gate on noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from cuzk_core.bench.environment import machine_difference
from cuzk_core.bench.errors import BenchError
from cuzk_core.bench.results import variant_figures
from cuzk_core.bench.stats import ONE_RUN, SLOWER, FigureStats, verdict

DEFAULT_MIN_DELTA_MS = 0.1


@attrs.frozen
class FigureComparison:
    """One figure in both files: their statistics, B/A of the medians, and the verdict."""

    name: str
    a: FigureStats
    b: FigureStats
    verdict: str
    regression: bool

    @property
    def ratio(self) -> float:
        """B's median over A's (infinite when A took no time and B did)."""
        if self.a.median_ms > 0:
            return self.b.median_ms / self.a.median_ms
        return 1.0 if self.b.median_ms == 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        """The row as written by ``compare --json``."""
        return {
            "a_median_ms": round(self.a.median_ms, 4),
            "b_median_ms": round(self.b.median_ms, 4),
            "ratio": round(self.ratio, 4),
            "verdict": self.verdict,
            "regression": self.regression,
        }


@attrs.frozen
class Comparison:
    """Every compared figure, and the threshold the gate used (None: no gate)."""

    a_path: str
    b_path: str
    threshold: float | None
    figures: tuple[FigureComparison, ...]

    @property
    def regressions(self) -> list[FigureComparison]:
        """Figures beyond the threshold and the spread."""
        return [f for f in self.figures if f.regression]

    def to_json(self) -> dict[str, Any]:
        """The comparison as written by ``compare --json``."""
        return {
            "a": self.a_path,
            "b": self.b_path,
            "threshold": self.threshold,
            "figures": {f.name: f.to_json() for f in self.figures},
            "regressions": [f.name for f in self.regressions],
        }


def single_variant(document: dict[str, Any], path: str) -> dict[str, Any]:
    """The one profile's results of a file written by a plain bench run."""
    variants = document["variants"]
    if len(variants) != 1:
        raise BenchError(
            f"{path}: holds {document['kind']} results of {len(variants)} profiles; compare takes "
            "files of one profile each (cuzk bench msm|ntt|synth|prove --json FILE)"
        )
    return variants[0]


def _check_comparable(a: dict[str, Any], b: dict[str, Any], a_path: str, b_path: str) -> None:
    machines = machine_difference(a["environment"]["machine"], b["environment"]["machine"])
    if machines:
        raise BenchError(
            f"{a_path} and {b_path} come from different machines ({machines}); "
            "pass --force to compare them anyway"
        )
    if a["benchmark"] != b["benchmark"]:
        raise BenchError(
            f"{a_path} and {b_path} time different benchmarks ({_describe(a)} vs {_describe(b)}); "
            "pass --force to compare them anyway"
        )


def _describe(document: dict[str, Any]) -> str:
    params = " ".join(f"{k}={v}" for k, v in document["benchmark"]["params"].items())
    return f"{document['benchmark']['name']} {params}".strip()


def compare_results(
    a: dict[str, Any],
    b: dict[str, Any],
    a_path: str,
    b_path: str,
    *,
    threshold: float | None = None,
    phases: Sequence[str] = (),
    force: bool = False,
    min_delta_ms: float = DEFAULT_MIN_DELTA_MS,
) -> Comparison:
    """Compare B against A: the top-level figures, or only ``phases`` when given."""
    if not force:
        _check_comparable(a, b, a_path, b_path)
    figures_a = variant_figures(single_variant(a, a_path))
    figures_b = variant_figures(single_variant(b, b_path))
    common = [name for name in figures_a if name in figures_b]
    for phase in phases:
        if phase not in common:
            raise BenchError(
                f"unknown phase {phase!r}: the figures in both files are {', '.join(common)}"
            )
    names = list(dict.fromkeys(phases)) or [name for name in common if "/" not in name]
    rows = []
    for name in names:
        fa, fb = figures_a[name], figures_b[name]
        judged = verdict(fa, fb)
        delta = fb.median_ms - fa.median_ms
        regression = (
            threshold is not None
            and fb.median_ms > fa.median_ms * (1 + threshold)
            and judged in (SLOWER, ONE_RUN)  # one run has no spread to hide behind
            and delta >= min_delta_ms
        )
        rows.append(FigureComparison(name, fa, fb, judged, regression))
    return Comparison(a_path, b_path, threshold, tuple(rows))
