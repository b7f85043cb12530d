"""The daemon against one-process-per-proof, pipelining on against off, and its added latency.

For each porep-lite size it makes a key (``cuzk setup``, seeded), then times:

- ``processes``: COUNT sequential ``cuzk prove --params DIR`` processes (each loads the key);
- ``daemon_pipeline_on`` / ``daemon_pipeline_off``: a fresh ``cuzk serve`` (key cold at the
  start, so its one load is counted) and ``cuzk bench batch --count COUNT`` against it;
- ``daemon_warm``: the same batches (WARM_ROUNDS of each, alternating) against a daemon that
  preloads the key and makes its warm-up proofs before it listens, as a daemon is run;
- ``latency``: ``cuzk bench single`` against a daemon with the key hot and one job done, beside
  the same stages run in this process (``synthesize_job`` + ``prove_prepared`` on a loaded
  key): the daemon's added latency is the client's latency minus the in-process time (two
  medians of different runs: noisy when proofs vary), per job the client's latency minus that
  job's key load, synthesis and backend phases (paired), and minus the daemon's own
  accepted-to-done time (transport and wake-up alone).

    python bench/daemon_bench.py --profile fastcpu --sizes 12 14 16 --count 20 --out bench/results

Every proof the daemon makes is one the tests verify; here each run's states are recorded and
a run with any job not done stops the benchmark. Results: one JSON per size.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cuzk_core.bench import environment

REPO = Path(__file__).resolve().parents[1]
SIZES = {12: (2, 8), 14: (8, 8), 16: (33, 8)}
WARM_ROUNDS = 2
WARM_CONFIG = '[residency]\npreload = ["k"]\n[engine]\nwarm_up_proofs = 2\n'
"""The warm daemon's configuration: key ``k`` (given by ``--key``) hot and warmed at start."""
"""log2 size → porep-lite (challenges, depth): (242·depth + 2)·challenges constraints."""


def cuzk(profile: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "cuzk_core", "-q", "--profile", profile, *args]


def check(command: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{done.stdout}\n{done.stderr}")
    return done


def start_daemon(
    profile: str, key: Path, folder: Path, pipeline: str, warm: bool = False
) -> tuple[subprocess.Popen, str]:
    name = f"{pipeline}-warm" if warm else pipeline
    sock = folder / f"{name}.sock"
    err_path = folder / f"{name}.err"
    err = err_path.open("wb")
    config: list[str] = []
    if warm:
        (folder / "warm.toml").write_text(WARM_CONFIG)
        config = ["--config", str(folder / "warm.toml")]
    process = subprocess.Popen(
        cuzk(
            profile,
            "serve",
            *config,
            "--state-dir",
            str(folder / name),
            "--listen",
            f"unix://{sock}",
            "--key",
            f"k={key}",
            "--pipeline",
            pipeline,
        ),
        stdout=subprocess.DEVNULL,
        stderr=err,
        cwd=REPO,
    )
    deadline = time.monotonic() + 300
    while "listening on" not in err_path.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"daemon did not start: {err_path.read_text()}")
        time.sleep(0.05)
    return process, f"unix://{sock}"


def stop_daemon(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=300)


def daemon_bench(
    profile: str,
    key: Path,
    folder: Path,
    pipeline: str,
    mode: str,
    count: int,
    preload: bool,
    warm: bool = False,
) -> dict[str, Any]:
    process, address = start_daemon(profile, key, folder, pipeline, warm)
    try:
        if preload:  # the key hot and one job done (its verifying key read), as in_process
            check(cuzk(profile, "client", "preload", "--addr", address, "k"))
            warm = ("--addr", address, "--key", "k", "--circuit-seed", "1000", "--out")
            check(cuzk(profile, "client", "prove", *warm, str(folder / "warm")))
        report = folder / f"{pipeline}-{mode}{'-warm' if warm else ''}.json"
        option = "--count" if mode == "batch" else "--runs"
        check(
            cuzk(
                profile,
                "bench",
                mode,
                "--addr",
                address,
                "--key",
                "k",
                option,
                str(count),
                "--json",
                str(report),
            )
        )
    finally:
        stop_daemon(process)
    document = json.loads(report.read_text())
    if document["summary"]["states"] != {"done": count}:
        sys.exit(f"{pipeline} {mode}: not every job done: {document['summary']['states']}")
    return document


def steady_ratio(on: dict[str, Any], off: dict[str, Any]) -> float | None:
    """Pipelining on against off once the first quarter of each batch is back (None for
    batches too small to have that figure)."""
    if on.get("steady_proofs_per_s") is None or off.get("steady_proofs_per_s") is None:
        return None
    return round(on["steady_proofs_per_s"] / off["steady_proofs_per_s"], 3)


def processes(profile: str, key: Path, folder: Path, count: int) -> dict[str, Any]:
    times = []
    start = time.perf_counter()
    for i in range(count):
        began = time.perf_counter()
        check(cuzk(profile, "prove", "--params", str(key), "--out", str(folder / f"p{i}")))
        times.append(time.perf_counter() - began)
    wall = time.perf_counter() - start
    return {
        "count": count,
        "wall_s": round(wall, 3),
        "proofs_per_s": round(count / wall, 4),
        "per_proof_s": {
            "median": round(statistics.median(times), 3),
            "min": round(min(times), 3),
            "max": round(max(times), 3),
        },
    }


def in_process(profile_name: str, key: Path, runs: int) -> dict[str, Any]:
    """The daemon's two stages run back to back in this process, key loaded once."""
    from cuzk_core.engine import JobInput, KeyKind, check_key
    from cuzk_core.engine.keys import load_key
    from cuzk_core.engine.proving import prove_prepared, synthesize_job
    from cuzk_core.plugins import load_plugins
    from cuzk_core.profile import load_profile
    from cuzk_core.progress import NullProgress
    from cuzk_core.timing import Timer

    plugins = load_plugins()
    profile = load_profile(profile_name)
    spec = check_key("k", KeyKind.PARAMS, key)
    loaded = load_key(spec, plugins.backend(profile, Timer(level=0)))
    times = []
    for i in range(runs + 1):
        backend = plugins.backend(profile, Timer(level=0))
        began = time.perf_counter()
        prepared = synthesize_job(backend, spec, JobInput(circuit_seed=i))
        prove_prepared(backend, prepared, loaded, None, NullProgress())
        if i:  # the first run warms the backend (as the daemon's first job does)
            times.append((time.perf_counter() - began) * 1000.0)
    return {
        "runs": runs,
        "median_ms": round(statistics.median(times), 3),
        "min_ms": round(min(times), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile",
        default=str(REPO / "plugins/cuzk-fastcpu/src/cuzk_fastcpu/profiles/fastcpu.toml"),
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--latency-runs", type=int, default=5)
    parser.add_argument("--out", default="bench/results")
    parser.add_argument("--label", default="fastcpu", help="machine/backend tag of the files")
    parser.add_argument(
        "--params", help="an existing key folder (e.g. from bench/setup_params.py): one size"
    )
    args = parser.parse_args()
    os.environ.setdefault("CUZK_CACHE_DIR", tempfile.mkdtemp(prefix="cuzk-bench-cache-"))
    Path(args.out).mkdir(parents=True, exist_ok=True)  # now, not after minutes of runs
    if args.params is not None and len(args.sizes) != 1:
        parser.error("--params is one key: give its size alone with --sizes N")
    for size in args.sizes:
        folder = Path(tempfile.mkdtemp(prefix=f"cuzk-daemon-bench-{size}-"))
        if args.params is not None:
            key = Path(args.params).absolute()
            circuit = json.loads((key / "circuit.json").read_text())
            challenges, depth = circuit["challenges"], circuit["depth"]
        else:
            challenges, depth = SIZES[size]
            key = folder / "key"
            check(
                cuzk(
                    args.profile,
                    "setup",
                    "--challenges",
                    str(challenges),
                    "--depth",
                    str(depth),
                    "--seed",
                    "1",
                    "--out",
                    str(key),
                )
            )
        print(f"2^{size}: {args.count} processes", flush=True)
        sequential = processes(args.profile, key, folder, args.count)
        runs = {}
        for pipeline in ("on", "off"):
            print(f"2^{size}: daemon batch, pipeline {pipeline}", flush=True)
            runs[pipeline] = daemon_bench(
                args.profile, key, folder, pipeline, "batch", args.count, preload=False
            )
        warm: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
        for _ in range(WARM_ROUNDS):
            for pipeline in ("on", "off"):
                print(f"2^{size}: warm daemon batch, pipeline {pipeline}", flush=True)
                batch = daemon_bench(
                    args.profile, key, folder, pipeline, "batch", args.count, False, warm=True
                )
                warm[pipeline].append(batch["summary"])
        warm_ratios = [
            round(on["proofs_per_s"] / off["proofs_per_s"], 3)
            for on, off in zip(warm["on"], warm["off"], strict=True)
        ]
        print(f"2^{size}: latency", flush=True)
        single = daemon_bench(
            args.profile, key, folder, "on", "single", args.latency_runs, preload=True
        )
        local = in_process(args.profile, key, args.latency_runs)
        samples = single["samples"]
        client_ms = statistics.median(s["latency_ms"] for s in samples)
        transport_ms = statistics.median(s["latency_ms"] - s["phases"]["total_ms"] for s in samples)
        # Paired, per job: what the client waited beyond the proof's own work (key load,
        # synthesis, backend phases), i.e. queueing, the engine's bookkeeping and transport.
        overhead_ms = statistics.median(
            s["latency_ms"] - sum(s["phases"][p] for p in ("key_load_ms", "synthesis_ms", "gpu_ms"))
            for s in samples
        )
        on, off = (runs[p]["summary"] for p in ("on", "off"))
        document = {
            "kind": "daemon-vs-processes",
            "benchmark": f"porep-lite-2e{size}",
            "params": {
                "challenges": challenges,
                "depth": depth,
                "constraints": (242 * depth + 2) * challenges,
                "count": args.count,
                "profile": args.profile,
            },
            "environment": environment.capture(),
            "processes": sequential,
            "daemon_pipeline_on": on,
            "daemon_pipeline_off": off,
            "daemon_warm": {**warm, "config": WARM_CONFIG},
            "ratios": {
                "daemon_vs_processes": round(on["proofs_per_s"] / sequential["proofs_per_s"], 3),
                "pipeline_on_vs_off": round(on["proofs_per_s"] / off["proofs_per_s"], 3),
                "pipeline_on_vs_off_steady": steady_ratio(on, off),
                "warm_pipeline_on_vs_off": warm_ratios,
                "warm_pipeline_on_vs_off_median": round(statistics.median(warm_ratios), 3),
            },
            "latency": {
                "daemon_single_median_ms": round(client_ms, 3),
                "in_process_median_ms": local["median_ms"],
                "added_vs_in_process_ms": round(client_ms - local["median_ms"], 3),
                "added_per_job_median_ms": round(overhead_ms, 3),
                "transport_and_wakeup_median_ms": round(transport_ms, 3),
                "runs": args.latency_runs,
            },
            "samples": {p: runs[p]["samples"] for p in ("on", "off")},
        }
        out = (
            Path(args.out)
            / f"{time.strftime('%Y-%m-%d')}-{args.label}-daemon-porep-lite-2e{size}.json"
        )
        out.write_text(json.dumps(document, indent=2) + "\n")
        print(json.dumps({"size": size, **document["ratios"], **document["latency"]}), flush=True)


if __name__ == "__main__":
    main()
