"""The fleet on this machine: throughput of 2 CPU workers vs 1, and key loads per worker over a
mixed run of two keys (bench/NOTES.md, "The fleet").

    python bench/fleet_bench.py --count 16 --mixed 100 --out bench/results/F.json

Throughput: porep-lite 2 challenges at depth 8 (3876 constraints, "2^12"), one key, fastcpu
with one thread per worker (CUZK_FASTCPU_THREADS=1: a worker is one core's worth) and the
pipeline off, ``--count`` jobs submitted at once then awaited, a warm-up job first (the key
load is in the warm-up). Mixed: two keys of 1 challenge at depth 4, a worker budget that holds
one of them, ``--mixed`` jobs alternating between them on 2 workers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import ray

from cuzk_core.bench import environment
from cuzk_core.cli import main
from cuzk_core.engine import EngineConfig, JobInput, JobRequest, JobState, KeyKind, check_key
from cuzk_core.fileio import write_json_atomic
from cuzk_core.fleet.head import FleetConfig, FleetEngine
from cuzk_core.profile import load_profile


def _setup(folder: Path, profile: Path, challenges: int, depth: int, seed: int) -> Path:
    out = folder / f"c{challenges}-d{depth}-s{seed}"
    argv = ["-q", "--profile", str(profile), "setup", "--challenges", str(challenges)]
    assert main([*argv, "--depth", str(depth), "--seed", str(seed), "--out", str(out)]) == 0
    return out


def _head(folder: Path, profile: Path, keys: dict[str, Path], workers: int, budget: int):
    specs = {name: check_key(name, KeyKind.PARAMS, path) for name, path in keys.items()}
    state = Path(tempfile.mkdtemp(dir=folder))
    config = EngineConfig(
        state_dir=state,
        profile=load_profile(str(profile)),
        keys=specs,
        budget_bytes=budget,
        pipeline=False,
    )
    head = FleetEngine(config, FleetConfig(workers=workers, cpus_per_worker=1))
    head.start()
    while sum(w.state == "up" for w in head.workers.values()) < workers:
        time.sleep(0.05)
    return head


def _run(head: FleetEngine, jobs: list[tuple[str, int]]) -> dict[str, object]:
    start = time.perf_counter()
    ids = [head.submit(JobRequest(key, JobInput(circuit_seed=seed))).job_id for key, seed in jobs]
    records = [head.await_job(job_id, timeout_s=1800) for job_id in ids]
    wall = time.perf_counter() - start
    assert all(r.state is JobState.DONE for r in records), [r.error for r in records]
    phases = {
        name: round(sum(getattr(r.timings, name) for r in records) / len(records), 1)
        for name in ("synthesis_ms", "gpu_ms", "key_load_ms")
    }
    return {
        "mean_phases_ms": phases,
        "jobs": len(ids),
        "wall_s": round(wall, 3),
        "proofs_per_s": round(len(ids) / wall, 4),
        "attempts": sum(r.attempts for r in records),
        "per_worker_jobs": {w.name: w.jobs_done for w in head.workers.values()},
        "per_worker_key_loads": {w.name: dict(w.loads) for w in head.workers.values()},
    }


def main_bench() -> None:
    """Run both measurements and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=16, help="jobs per throughput run")
    parser.add_argument("--rounds", type=int, default=2, help="1-then-2-worker rounds")
    parser.add_argument("--mixed", type=int, default=100, help="jobs in the mixed run")
    parser.add_argument("--out", required=True, help="result JSON")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="cuzk-fleet-bench-"))
    try:
        profile = folder / "fastcpu.toml"
        profile.write_text('extends = "cpu"\nbackend = "fastcpu"\n')
        big = _setup(folder, profile, 2, 8, 1)
        small = {f"k{s}": _setup(folder, profile, 1, 4, s) for s in (1, 2)}
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        throughput: dict[str, list[dict[str, object]]] = {"1_workers": [], "2_workers": []}
        for workers in [1, 2] * args.rounds:  # alternating: the machine's load drifts
            head = _head(folder, profile, {"p": big}, workers, 1 << 30)
            _run(head, [("p", 10_000 + i) for i in range(2 * workers)])  # warm-up: keys hot
            run = _run(head, [("p", i) for i in range(args.count)])
            run["loadavg_1m"] = round(os.getloadavg()[0], 2)
            throughput[f"{workers}_workers"].append(run)
            head.shutdown()
            print(workers, run, flush=True)
        one = max(r["proofs_per_s"] for r in throughput["1_workers"])
        two = max(r["proofs_per_s"] for r in throughput["2_workers"])
        head = _head(folder, profile, small, 2, 600_000)
        mixed = _run(head, [(f"k{1 + i % 2}", i) for i in range(args.mixed)])
        head.shutdown()
        print("mixed", mixed, flush=True)
        ray.shutdown()
        document = {
            "kind": "fleet-bench",
            "params": {
                "throughput": "porep-lite c2 d8 (3876 constraints), one key, pipeline off, "
                "CUZK_FASTCPU_THREADS=1 per worker, a local Ray cluster of 2 CPUs",
                "count": args.count,
                "mixed": "two porep-lite c1 d4 keys alternating, worker budget 600000 bytes "
                "(one key), 2 workers",
                "mixed_jobs": args.mixed,
            },
            "environment": environment.capture(),
            "throughput": throughput,
            "speedup_2_vs_1_best_of_rounds": round(two / one, 3),
            "mixed": mixed,
        }
        write_json_atomic(Path(args.out), document)
        print(f"2 workers vs 1: {two / one:.2f}x; written to {args.out}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main_bench()
