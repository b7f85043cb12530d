"""``cuzk bench isolate``: the baseline, each profile change alone, and all together, in one run.

This is the "Test A…E" method as one command: every variant runs in alternation with the
baseline, and each change's effect is attributed to the phase whose time moved most beyond the
run-to-run spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cuzk_core.bench.errors import BenchError
from cuzk_core.bench.results import variant_figures
from cuzk_core.bench.runner import Variant
from cuzk_core.bench.stats import FASTER, SLOWER, verdict
from cuzk_core.profile import load_profile

BASELINE = "baseline"
ALL_CHANGES = "all changes"
TOTAL = "total"


def change_label(key: str, value: Any) -> str:
    """``key=value`` as the user would write it."""
    shown = str(value).lower() if isinstance(value, bool) else value
    return f"{key}={shown}"


def isolate_variants(base: str | Path, changes: Sequence[tuple[str, Any]]) -> list[Variant]:
    """The baseline profile, one variant per change, and one with every change (if several)."""
    if not changes:
        raise BenchError("isolate needs at least one --change KEY=VALUE")
    keys = [key for key, _ in changes]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise BenchError(f"--change names {', '.join(repeated)} more than once")
    labels = [change_label(key, value) for key, value in changes]
    variants = [Variant(BASELINE, load_profile(base))]
    for (key, value), label in zip(changes, labels, strict=True):
        variants.append(Variant(label, load_profile(base, {key: value}), (label,)))
    if len(changes) > 1:
        variants.append(Variant(ALL_CHANGES, load_profile(base, dict(changes)), tuple(labels)))
    return variants


def isolate_deltas(variants: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-figure deltas of each variant against the first (the baseline), and the attribution.

    The attribution of a variant is the phase (not ``total``) whose median moved most, among
    those that moved beyond the run-to-run spread; None when none did.
    """
    baseline = variant_figures(variants[0])
    names = [name for name in baseline if "/" not in name]
    deltas: dict[str, Any] = {}
    attribution: dict[str, Any] = {}
    for variant in variants[1:]:
        figures = variant_figures(variant)
        rows: dict[str, dict[str, Any]] = {}
        for name in names:
            if name not in figures:
                continue
            base, other = baseline[name], figures[name]
            delta = other.median_ms - base.median_ms
            rows[name] = {
                "delta_ms": round(delta, 4),
                "delta_pct": round(100 * delta / base.median_ms, 2) if base.median_ms else None,
                "verdict": verdict(base, other),
            }
        moved = [
            (abs(row["delta_ms"]), name)
            for name, row in rows.items()
            if name != TOTAL and row["verdict"] in (SLOWER, FASTER)
        ]
        label = variant["label"]
        deltas[label] = rows
        if moved:
            phase = max(moved)[1]
            attribution[label] = {"phase": phase, **rows[phase]}
        else:
            attribution[label] = None
    return {"baseline": variants[0]["label"], "deltas": deltas, "attribution": attribution}
