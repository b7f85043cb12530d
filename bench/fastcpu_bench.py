"""The fastcpu plugin against the reference CPU backend: MSM, NTT and whole proofs, side by side.

Each benchmark runs through the backend façade (hooks, layout conversions included), alternating
the two backends A B A B; medians, minima and the cpu/fastcpu ratio go to bench/results/ as JSON
with the machine, its load, the commit and both profiles. Whole proofs run ``cuzk prove`` on the
embedded porep-lite circuit (about 2^12 constraints) as a command, after one untimed warm-up that
caches its parameters, and check that both backends wrote the same proof bytes.

    python bench/fastcpu_bench.py --repeat 3
    python bench/fastcpu_bench.py --quick          # smaller sizes, one repeat: a smoke run
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.bench import environment
from cuzk_core.conformance.inputs import random_bases, random_scalar_limbs
from cuzk_core.domain import EvaluationDomain
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import Profile, load_profile
from cuzk_core.timing import Timer

REPO = Path(__file__).resolve().parents[1]
CPU, FAST = "cpu", "fastcpu"


def time_pair(
    runs: dict[str, Callable[[], Any]], repeat: int, check: Callable[[Any, Any], bool]
) -> dict[str, Any]:
    """Alternate the backends ``repeat`` times; seconds per run, medians, and equal results."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    outputs: dict[str, Any] = {}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            outputs[name] = run()
            seconds[name].append(time.perf_counter() - start)
    row: dict[str, Any] = {}
    for name, values in seconds.items():
        row[name] = {
            "seconds": [round(s, 4) for s in values],
            "median_s": round(statistics.median(values), 4),
            "min_s": round(min(values), 4),
        }
    if len(runs) == 2:
        row["cpu_over_fastcpu"] = round(row[CPU]["median_s"] / row[FAST]["median_s"], 1)
        row["equal_results"] = check(outputs[CPU], outputs[FAST])
    return row


def msm_rows(backends: dict[str, Backend], sizes: dict[str, list[int]], repeat: int) -> list:
    """MSM G1 and G2 with random full-size scalars on distinct bases, auto window."""
    rows = []
    for group, logs in sizes.items():
        for log_n in logs:
            n = 1 << log_n
            points = random_bases(group, n, seed=2024, distinct=n)
            scalars = random_scalar_limbs(n, seed=2024)
            runs = {
                name: functools.partial(getattr(b, f"msm_{group}"), points, scalars, "bench")
                for name, b in backends.items()
                if name == FAST or log_n <= 12
            }
            row = time_pair(runs, repeat, lambda a, b: a.equals(b))
            rows.append({"benchmark": f"msm_{group}", "log_n": log_n, **row})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def forward_and_coset(backend: Backend, values: np.ndarray, domain: EvaluationDomain) -> tuple:
    """The two forward transforms H needs per input."""
    return backend.ntt(values, domain), backend.coset_ntt(values, domain, 7)


def ntt_rows(backends: dict[str, Backend], logs: list[int], repeat: int) -> list:
    """Forward NTT plus coset NTT (what H needs per input), random values."""
    rows = []
    for log_n in logs:
        domain = EvaluationDomain(log_n)
        values = random_scalar_limbs(domain.size, seed=7)
        runs = {
            name: functools.partial(forward_and_coset, b, values, domain)
            for name, b in backends.items()
            if name == FAST or log_n <= 12
        }
        row = time_pair(
            runs, repeat, lambda a, b: all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        )
        rows.append({"benchmark": "ntt+coset_ntt", "log_n": log_n, **row})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def prove_rows(profiles: dict[str, Path | str], repeat: int, challenges: int) -> list:
    """``cuzk prove`` on porep-lite as a whole command; phases from its timings.json."""
    cuzk = shutil.which("cuzk")
    if cuzk is None:
        sys.exit("the cuzk command is not on PATH: pip install -e . first")
    with tempfile.TemporaryDirectory(prefix="cuzk-fastcpu-bench-") as scratch:
        env = dict(os.environ, CUZK_CACHE_DIR=str(Path(scratch) / "cache"))
        knobs = ["--circuit", "porep-lite", "--challenges", str(challenges)]

        def prove(profile: Path | str, out: Path) -> None:
            command = [cuzk, "-q", "--profile", str(profile), "prove", *knobs]
            done = subprocess.run(
                [*command, "--out", str(out), "--seed", "1"], env=env, capture_output=True
            )
            if done.returncode != 0:
                sys.exit(f"cuzk prove failed:\n{done.stderr.decode()}")

        warm = Path(scratch) / "warm"
        prove(profiles[FAST], warm)  # generates and caches the parameters, untimed
        outs = {name: Path(scratch) / name for name in profiles}
        runs = {name: functools.partial(prove, p, outs[name]) for name, p in profiles.items()}
        row = time_pair(runs, repeat, lambda a, b: True)
        proofs = {name: (out / "proof.bin").read_bytes() for name, out in outs.items()}
        row["equal_results"] = proofs[CPU] == proofs[FAST]
        for name, out in outs.items():
            row[name]["phase_ms"] = json.loads((out / "timings.json").read_text())["phases_ms"]
        row = {"benchmark": "cuzk prove", "circuit": f"porep-lite challenges={challenges}", **row}
        print(json.dumps(row), file=sys.stderr, flush=True)
        return [row]


def main() -> None:
    """Parse arguments, run every benchmark, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each backend per size")
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    parser.add_argument("--out", type=Path, help="results file (default bench/results/…)")
    args = parser.parse_args()
    import cuzk_fastcpu

    plugins = load_plugins()
    info = plugins.backends.get(FAST)
    if info is None or not info.available:
        sys.exit(f"fastcpu cannot run here: {info.reason if info else 'not installed'}")
    profile_paths: dict[str, Path | str] = {CPU: "cpu", FAST: cuzk_fastcpu.profile_path()}
    profiles: dict[str, Profile] = {n: load_profile(p) for n, p in profile_paths.items()}
    backends = {n: plugins.backend(p, Timer(level=0)) for n, p in profiles.items()}
    repeat = 1 if args.quick else args.repeat
    msm_sizes = {
        "g1": [8, 10] if args.quick else [10, 12, 15],
        "g2": [8] if args.quick else [10, 12],
    }
    results = {
        "benchmark": "fastcpu vs cpu backends",
        **environment.capture(),
        "profiles": {n: {"name": p.name, "digest": p.digest()} for n, p in profiles.items()},
        "fastcpu": {"version": cuzk_fastcpu.__version__, "info": attrs.asdict(info)},
        "notes": "cpu rows are omitted above 2^12 (the reference takes tens of seconds there)",
        "rows": [],
    }
    results["rows"] += msm_rows(backends, msm_sizes, repeat)
    results["rows"] += ntt_rows(backends, [10] if args.quick else [12, 15], repeat)
    results["rows"] += prove_rows(profile_paths, repeat, 1 if args.quick else 2)
    results["machine"]["load_average_end"] = list(os.getloadavg())
    name = f"{time.strftime('%Y-%m-%d')}-fastcpu-vs-cpu{'-quick' if args.quick else ''}.json"
    out = args.out or REPO / "bench" / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
