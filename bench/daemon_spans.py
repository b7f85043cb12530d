"""Where a warm daemon job's time goes with pipelining on and off: every span, side by side.

Each round starts one warm daemon per mode (the key preloaded and its warm-up proofs made, as
``daemon_bench.py``'s warm runs, with ``[engine] trace`` on), runs ``cuzk bench batch --count N``
against it and averages every span over the jobs after the first quarter. The table lists the
spans largest growth first: the ones pipelining stretches are where the two stages contend
(the GIL, the device, memory), the question issue 14's 1.3× turns on; for the most stretched,
it lists what the other jobs ran beside them.

    python bench/daemon_spans.py --profile h200 --params /tmp/p20 --count 20 --rounds 2 \\
        --json bench/results/DATE-h200-daemon-spans-2e20.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from daemon_bench import REPO, WARM_CONFIG, check, cuzk, stop_daemon

from cuzk_core.bench import environment

MODES = ("on", "off")


def batch_spans(profile: str, key: Path, folder: Path, pipeline: str, count: int) -> dict:
    """One warm daemon's batch: its wall and every span's mean ms a job (later jobs only)."""
    tag = f"{pipeline}-{len(list(folder.glob('*.jsonl')))}"
    trace, config = folder / f"{tag}.jsonl", folder / f"{tag}.toml"
    config.write_text(WARM_CONFIG + f'trace = "{trace}"\n')
    err_path, sock = folder / f"{tag}.err", folder / f"{tag}.sock"
    serve = cuzk(profile, "serve", "--config", str(config), "--state-dir", str(folder / tag))
    serve += ["--listen", f"unix://{sock}", "--key", f"k={key}", "--pipeline", pipeline]
    with err_path.open("wb") as err:
        process = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
    try:
        deadline = time.monotonic() + 300
        while "listening on" not in err_path.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"daemon did not start: {err_path.read_text()}")
            time.sleep(0.05)
        report = folder / f"{tag}.json"
        batch = ("bench", "batch", "--addr", f"unix://{sock}", "--key", "k", "--count", str(count))
        check(cuzk(profile, *batch, "--json", str(report)))
    finally:
        stop_daemon(process)
    summary = json.loads(report.read_text())["summary"]
    if summary["states"] != {"done": count}:
        sys.exit(f"pipeline {pipeline}: not every job done: {summary['states']}")
    spans = [json.loads(line) for line in trace.read_text().splitlines()]
    first_seen: dict[str, float] = {}
    for span in spans:
        first_seen[span["job"]] = min(first_seen.get(span["job"], span["start"]), span["start"])
    jobs = sorted(first_seen, key=first_seen.__getitem__)
    kept = set(jobs[len(jobs) // 4 :])  # the warm-ups and the pipeline's filling left out
    totals: dict[str, float] = defaultdict(float)
    for span in spans:
        if span["job"] in kept and span.get("end") is not None:
            totals[_name(span)] += (span["end"] - span["start"]) * 1000.0
    means = {name: round(total / len(kept), 3) for name, total in totals.items()}
    return {
        "wall_s": summary["wall_s"],
        "jobs_averaged": len(kept),
        "span_ms": means,
        "overlap_ms": overlaps(spans, kept),
    }


def overlaps(spans: list[dict], kept: set[str]) -> dict[str, dict[str, float]]:
    """For each span name, the mean ms a job that other jobs' spans (by name) ran beside it:
    what a stretched span shared its time with."""
    closed = [s for s in spans if s.get("end") is not None]
    found: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for span in closed:
        if span["job"] not in kept:
            continue
        for other in closed:
            if other["job"] == span["job"]:
                continue
            shared = min(span["end"], other["end"]) - max(span["start"], other["start"])
            if shared > 0:
                found[_name(span)][_name(other)] += shared * 1000.0 / len(kept)
    return {k: {o: round(ms, 3) for o, ms in v.items()} for k, v in found.items()}


def _name(span: dict) -> str:
    return span["name"].rsplit(" j", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--params", required=True, help="a key folder from `cuzk setup`")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="write the runs and the table here")
    args = parser.parse_args()
    key = Path(args.params).absolute()
    folder = Path(tempfile.mkdtemp(prefix="cuzk-daemon-spans-"))
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    for round_ in range(args.rounds):
        for mode in MODES:  # alternating, so drift hits both
            runs[mode].append(batch_spans(args.profile, key, folder, mode, args.count))
            print(f"round {round_ + 1}, pipeline {mode}: {runs[mode][-1]['wall_s']:.2f} s")
    medians = {
        mode: {
            name: statistics.median(run["span_ms"].get(name, 0.0) for run in runs[mode])
            for name in {n for run in runs[mode] for n in run["span_ms"]}
        }
        for mode in MODES
    }
    names = sorted(
        set(medians["on"]) | set(medians["off"]),
        key=lambda n: medians["off"].get(n, 0.0) - medians["on"].get(n, 0.0),
    )
    print(f"{'span (median of rounds, ms a job)':36s}{'off':>9s}{'on':>9s}{'growth':>9s}")
    table = []
    for name in names:
        off, on = medians["off"].get(name, 0.0), medians["on"].get(name, 0.0)
        table.append({"span": name, "off_ms": off, "on_ms": on, "growth_ms": round(on - off, 3)})
        print(f"{name[:36]:36s}{off:9.1f}{on:9.1f}{on - off:9.1f}")
    print("with pipelining on, what other jobs ran beside the most stretched spans (ms a job):")
    for row in table[:4]:
        beside = runs["on"][-1]["overlap_ms"].get(row["span"], {})
        top = sorted(beside.items(), key=lambda item: -item[1])[:5]
        print(f"  {row['span']}: " + ", ".join(f"{name} {ms:.1f}" for name, ms in top))
    walls = {mode: [run["wall_s"] for run in runs[mode]] for mode in MODES}
    ratios = [round(off / on, 3) for on, off in zip(walls["on"], walls["off"], strict=True)]
    print(f"walls on {walls['on']}, off {walls['off']}: off/on {ratios}")
    if args.json:
        document = {
            "benchmark": "daemon spans, pipelining on vs off (bench/daemon_spans.py)",
            "environment": environment.capture(),
            "profile": args.profile,
            "params": str(key),
            "count": args.count,
            "runs": runs,
            "off_over_on": ratios,
            "table": table,
        }
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
