"""A few lines per kernel launch of an Nsight Compute report: pipes, stalls, instruction mix.

    ncu --clock-control none --set full -k regex:msm_sum_affine_g1 -c 1 -o /tmp/g1 \\
        python3 bench/gpu_bench.py --runs 1 --msm-g1 24 --msm-g2 '' --host '' --ntt '' --out /tmp/x
    python bench/ncu_summary.py /tmp/g1.ncu-rep [--json OUT] [--brief]

It reads the report through ``ncu -i`` (the raw and the source pages), so it runs where ncu is
installed. Pipe shares are of the peak sustained rate. FMA-heavy is the pipe IMAD and IMAD.WIDE
issue on (an IMAD.WIDE holds it 4 cycles a warp, an IMAD 2). Stalls are shares of the
warp-state samples. The mix is the executed instructions by opcode. bench/NOTES.md (round 15)
reads these for the bucket sums, the NTT and pipe_peak's kernels.
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

METRICS = {
    "ms": "gpu__time_duration.sum",
    "registers": "launch__registers_per_thread",
    "grid": "launch__grid_size",
    "warps_per_sm": "sm__warps_active.avg.per_cycle_active",
    "fmaheavy_pct": "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "alu_pct": "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "issue_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "memory_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
}
STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
OPCODE = re.compile(r"\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def launches(raw_csv: str) -> list[dict[str, Any]]:
    """Each launch's name, METRICS and stall shares (%, largest first) from the raw page."""
    rows = list(csv.reader(io.StringIO(raw_csv)))
    header = rows[0]
    found = []
    for row in rows[2:]:  # rows[1] holds the units
        values = dict(zip(header, row, strict=False))
        stalls = {
            key[len(STALL_PREFIX) :]: number
            for key, text in values.items()
            if key.startswith(STALL_PREFIX) and not key.endswith("_not_issued")
            if (number := _number(text)) is not None
        }
        total = sum(stalls.values()) or 1.0
        found.append(
            {
                "kernel": values.get("Kernel Name", "?"),
                **{name: _number(values.get(key, "")) for name, key in METRICS.items()},
                "stalls_pct": {
                    k: round(100 * v / total, 1)
                    for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])
                    if v
                },
            }
        )
    return found


def mixes(source_csv: str) -> list[dict[str, float]]:
    """Each launch's executed instructions by opcode (% of the launch's) from the source page."""
    found: list[collections.Counter[str]] = []
    column = None
    for row in csv.reader(io.StringIO(source_csv)):
        if row and row[0] == "Kernel Name":
            found.append(collections.Counter())
        elif row and row[0] == "Address":
            column = row.index("Instructions Executed")
        elif found and column is not None and len(row) > column:
            match, count = OPCODE.match(row[1]), _number(row[column])
            if match and count:
                found[-1][match.group(1)] += int(count)
    return [{op: round(100 * n / sum(c.values()), 1) for op, n in c.most_common()} for c in found]


def durations(found: list[dict[str, Any]]) -> str:
    """The launches in order, a line each with its time (µs), and their total."""
    lines = [f"{launch['kernel']:32s} {1000 * (launch['ms'] or 0):10.1f} us" for launch in found]
    total = sum(launch["ms"] or 0 for launch in found)
    return "\n".join([*lines, f"{'total':32s} {1000 * total:10.1f} us"])


def _ncu_page(report: Path, *page: str) -> str:
    done = subprocess.run(
        ["ncu", "-i", str(report), "--csv", "--page", *page], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"ncu could not read {report}: {done.stderr.strip()[:200]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    """Print the summary of the report; also write it as JSON with ``--json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument(
        "--brief", action="store_true", help="a line a launch, its time only (no source page)"
    )
    args = parser.parse_args(argv)
    found = launches(_ncu_page(args.report, "raw"))
    if args.brief:
        print(durations(found))
        if args.json:
            args.json.write_text(json.dumps(found, indent=1))
        return 0
    for launch, mix in zip(
        found, mixes(_ncu_page(args.report, "source", "--print-source", "sass")), strict=False
    ):
        launch["mix_pct"] = mix
    for launch in found:
        figures = " ".join(f"{k} {launch[k]:g}" for k in METRICS if launch[k] is not None)
        print(f"{launch['kernel']}: {figures}")
        print(
            "  stalls: "
            + ", ".join(f"{k} {v:g}%" for k, v in list(launch["stalls_pct"].items())[:7])
        )
        mix = list(launch.get("mix_pct", {}).items())[:10]
        print("  mix: " + ", ".join(f"{k} {v:g}%" for k, v in mix))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
