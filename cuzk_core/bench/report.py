"""Text tables of bench results, A/B runs, comparisons and isolations, for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cuzk_core.bench.arguments import format_size
from cuzk_core.bench.compare import Comparison
from cuzk_core.bench.results import variant_figures
from cuzk_core.bench.stats import WITHIN_SPREAD

_MIB = 2**20


def format_ms(ms: float) -> str:
    """Milliseconds with three decimals below 10 ms, one above."""
    return f"{ms:,.3f}" if abs(ms) < 10 else f"{ms:,.1f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell: the first left-aligned, the others right."""
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for row in [headers, *rows]:
        padded = zip(row[1:], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in padded]
        lines.append("  ".join(cells).rstrip())
    return lines


def _figure_label(name: str) -> str:
    """``parent/child`` figures indented under their parent."""
    return "  " + name.split("/", 1)[1] if "/" in name else name


def _params(document: dict[str, Any]) -> str:
    shown = []
    for key, value in document["benchmark"]["params"].items():
        text = format_size(value) if key == "size" and isinstance(value, int) else value
        shown.append(f"{key}={text}")
    return " ".join(shown)


def _header(document: dict[str, Any]) -> str:
    runs, warmup = document["runs"], document["warmup"]
    title = {"ab": "{} A/B", "isolate": "isolate ({})"}.get(document["kind"], "{}")
    return (
        f"bench {title.format(document['benchmark']['name'])}  {_params(document)}  "
        f"({runs} run{'s' * (runs != 1)} after {warmup} warm-up{'s' * (warmup != 1)})"
    )


def _variant_line(variant: dict[str, Any]) -> str:
    profile, backend, check = variant["profile"], variant["backend"], variant.get("check") or {}
    checked = ", ".join(f"{k} {v}" for k, v in check.items()) or "not checked"
    return (
        f"{variant['label']}: profile {profile['name']} (digest {profile['digest']}), "
        f"backend {backend['name']} {backend.get('version', '')}, clock {variant['clock']}; "
        f"checked: {checked}"
    )


def _environment_lines(document: dict[str, Any]) -> list[str]:
    env = document["environment"]
    machine = env["machine"]
    gpus = ", ".join(f"{g['name']} (driver {g['driver']})" for g in env.get("gpus", [])) or "none"
    commit = env.get("commit")
    commit_text = "no git checkout"
    if commit:
        commit_text = commit["id"][:12] + (" (uncommitted changes)" if commit["dirty"] else "")
        if commit.get("from"):
            commit_text += f" (as {commit['from']} names it: not a git checkout)"
    libraries = " ".join(f"{k} {v}" for k, v in env.get("libraries", {}).items())
    load = env.get("load_average")
    load_text = f"; load average {load[0]:.2f}" if load else ""
    lines = [
        f"machine: {machine['cpu_model']}, {machine['cpu_cores']} cores{load_text}; GPUs: {gpus}",
        f"commit {commit_text}; {libraries}",
    ]
    memory = document.get("memory")
    if memory:
        device = memory.get("peak_device_bytes")
        device_text = "not reported" if device is None else f"{device / _MIB:,.1f} MiB"
        lines.append(
            f"memory peaks: host RSS {memory['peak_rss_bytes'] / _MIB:,.1f} MiB, "
            f"device {device_text} ({memory['samples']} samples every {memory['interval_s']} s)"
        )
    return lines


def _single_table(variant: dict[str, Any]) -> list[str]:
    rows = [
        [
            _figure_label(name),
            format_ms(s.median_ms),
            format_ms(s.min_ms),
            format_ms(s.max_ms),
            f"{100 * s.spread:.1f}%",
        ]
        for name, s in variant_figures(variant).items()
    ]
    return _table(["figure", "median ms", "min ms", "max ms", "spread"], rows)


def _ab_table(document: dict[str, Any]) -> list[str]:
    a, b = (variant_figures(v) for v in document["variants"])
    rows = []
    for name, ratio in document["ratios"].items():
        rows.append(
            [
                _figure_label(name),
                f"{format_ms(a[name].median_ms)} ({format_ms(a[name].min_ms)}–"
                f"{format_ms(a[name].max_ms)})",
                f"{format_ms(b[name].median_ms)} ({format_ms(b[name].min_ms)}–"
                f"{format_ms(b[name].max_ms)})",
                f"{ratio['median']:.3f} ({ratio['min']:.3f}–{ratio['max']:.3f})",
                ratio["verdict"],
            ]
        )
    return _table(["figure", "A median ms (min–max)", "B median ms (min–max)", "B/A", ""], rows)


def _isolate_table(document: dict[str, Any]) -> list[str]:
    isolate = document["isolate"]
    baseline = variant_figures(document["variants"][0])
    labels = list(isolate["deltas"])
    rows = []
    for name, stats in baseline.items():
        if "/" in name:
            continue
        row = [name, format_ms(stats.median_ms)]
        for label in labels:
            delta = isolate["deltas"][label].get(name)
            if delta is None:
                row.append("-")
                continue
            pct = "" if delta["delta_pct"] is None else f" ({delta['delta_pct']:+.1f}%)"
            mark = " ~" if delta["verdict"] == WITHIN_SPREAD else ""
            row.append(f"{delta['delta_ms']:+,.3f}{pct}{mark}")
        rows.append(row)
    lines = _table(["figure", "baseline ms", *(f"Δ {label}" for label in labels)], rows)
    lines.append("(~: within the run-to-run spread)")
    for label, found in isolate["attribution"].items():
        if found is None:
            lines.append(f"{label}: no phase moved beyond the run-to-run spread")
        else:
            lines.append(
                f"{label}: {found['phase']} {found['verdict']} by {found['delta_ms']:+,.3f} ms"
            )
    return lines


def format_result(document: dict[str, Any]) -> str:
    """A results document (one profile, A/B or isolate) as text."""
    lines = [_header(document)]
    lines += [_variant_line(v) for v in document["variants"]]
    lines.append("")
    if document["kind"] == "ab":
        lines += _ab_table(document)
    elif document["kind"] == "isolate":
        lines += _isolate_table(document)
    else:
        lines += _single_table(document["variants"][0])
    lines.append("")
    lines += _environment_lines(document)
    return "\n".join(lines)


def format_comparison(comparison: Comparison) -> str:
    """A comparison as text, ending with the gate's outcome when there was one."""
    rows = []
    for figure in comparison.figures:
        rows.append(
            [
                figure.name,
                format_ms(figure.a.median_ms),
                format_ms(figure.b.median_ms),
                f"{figure.ratio:.3f}",
                figure.verdict,
                "REGRESSION" if figure.regression else "",
            ]
        )
    lines = [f"A = {comparison.a_path}", f"B = {comparison.b_path}", ""]
    lines += _table(["figure", "A median ms", "B median ms", "B/A", "", ""], rows)
    if comparison.threshold is not None:
        limit = f"{100 * comparison.threshold:g}%"
        regressions = comparison.regressions
        if regressions:
            names = ", ".join(f.name for f in regressions)
            lines.append(f"\nregression beyond {limit} and the run-to-run spread: {names}")
        else:
            lines.append(f"\nno regression beyond {limit}")
    return "\n".join(lines)
