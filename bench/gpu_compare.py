"""Two GPU backends side by side (default cupy vs pycuda): G1 MSM, NTT and whole proofs.

Both backends run the same shared driver (cuzk_backend_gpu) and kernel sources; what differs is
the adapter: compiler (NVRTC vs nvcc), pools, launches and copies. Each case is set up on both
with the same inputs, warmed up once on each, then timed in alternating order (A B, B A, …) so
drift (clocks, other tenants) falls on both alike; medians and the ratio B/A are recorded.
MSM and NTT figures are CUDA-event device time with the data on the device; proofs are wall
clock (synthesis on the host included) with the GPU phases' medians beside them, and must give
the same bytes on both backends.

    python bench/gpu_compare.py --out bench/results/2026-11-30-h200-cupy-vs-pycuda.json \
        --msm-g1 20,24 --ntt 24 --prove <params folder or K,D>
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_bench import (
    _size,
    environment,
    gpu_plugin,
    msm_case,
    ntt_cases,
    prove_inputs,
)

from cuzk_backend_gpu.driver import EventClock
from cuzk_backend_gpu.plugin import GpuPlugin
from cuzk_core.curve.g1 import g1_eq
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer

GPU_PHASES = ("ntt_h", "msm_h", "msm_b_g2", "msm_b_g1", "msm_a", "msm_l")
"""The prover's phases that run on the device (pin, synthesis and assembly excluded)."""


def alternate(works: dict[str, Callable[[], float]], runs: int) -> dict[str, list[float]]:
    """Each work (returning its own ms) once to warm up, then ``runs`` times in turn, the
    order reversed every round."""
    for work in works.values():
        work()
    times: dict[str, list[float]] = {name: [] for name in works}
    order = list(works)
    for round_ in range(runs):
        for name in order if round_ % 2 == 0 else order[::-1]:
            times[name].append(works[name]())
    return times


def _device_timed(gp: GpuPlugin, work: Callable[[], Any], results: dict[str, Any]) -> Callable:
    clock = EventClock(gp.gpu)

    def run() -> float:
        results[gp.gpu.name], ms = clock.time(work)
        return ms

    return run


def _record(out: list, name: str, size: int, times: dict[str, list[float]], **extra: Any) -> None:
    a, b = times
    medians = {k: statistics.median(v) for k, v in times.items()}
    entry = {
        "name": name,
        "size": size,
        "median_ms": {k: round(v, 3) for k, v in medians.items()},
        "ratio": round(medians[b] / medians[a], 4),
        "runs_ms": {k: [round(t, 3) for t in v] for k, v in times.items()},
        **extra,
    }
    out.append(entry)
    print(f"{name:24s} {_size(size):>7s} " + " ".join(f"{v:10.3f}" for v in medians.values()))


def compare_msm(plugins: list[GpuPlugin], logs: list[int], runs: int, out: list) -> None:
    """G1 MSM of 2^log tiled points, data on the device; both backends must agree."""
    for log in logs:
        sums: dict[str, Any] = {}
        works = {}
        for gp in plugins:
            with gp.gpu.scope():
                work, _ = msm_case(gp, "g1", log)
            works[gp.gpu.name] = _device_timed(gp, work, sums)
        times = alternate(works, runs)
        first, *others = sums.values()
        assert all(g1_eq(first, other) for other in others), f"MSM 2^{log}: backends disagree"
        _record(out, "msm_g1_device", 1 << log, times)


def compare_ntt(plugins: list[GpuPlugin], logs: list[int], runs: int, out: list) -> None:
    """Forward NTT of 2^log scalars, natural order, data on the device."""
    for log in logs:
        outputs: dict[str, Any] = {}
        works = {}
        for gp in plugins:
            with gp.gpu.scope():
                work = ntt_cases(gp, log)["ntt_device"]
            works[gp.gpu.name] = _device_timed(gp, work, outputs)
        times = alternate(works, runs)
        hosts = []
        for gp in plugins:
            with gp.gpu.scope():
                hosts.append(outputs[gp.gpu.name].get())
        assert all((hosts[0] == h).all() for h in hosts[1:]), f"NTT 2^{log}: backends disagree"
        _record(out, "ntt_device", 1 << log, times)


def compare_prove(plugins: list[GpuPlugin], spec: str, runs: int, out: list) -> None:
    """Whole porep-lite proofs under the h200 profile with each backend; same bytes required."""
    circuit, key = prove_inputs(spec)
    proofs: dict[str, bytes] = {}
    phases: dict[str, dict[str, list[float]]] = {gp.gpu.name: {} for gp in plugins}

    def work(name: str) -> Callable[[], float]:
        def run() -> float:
            timer = Timer(level=0)
            backend = load_plugins().backend(load_profile("h200", {"backend": name}), timer)
            start = time.perf_counter()
            result = prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=1)
            elapsed = (time.perf_counter() - start) * 1000
            proofs[name] = result.proof.to_bytes()
            for phase, ms in timer.phase_totals().items():
                phases[name].setdefault(phase, []).append(ms)
            return elapsed

        return run

    times = alternate({gp.gpu.name: work(gp.gpu.name) for gp in plugins}, runs)
    assert len(set(proofs.values())) == 1, "backends disagree on the proof bytes"
    timed = {  # the warm-up's phases are left out
        name: {p: round(statistics.median(v[1:]), 3) for p, v in per.items()}
        for name, per in phases.items()
    }
    gpu_ms = {
        name: round(sum(per.get(p, 0.0) for p in GPU_PHASES), 3) for name, per in timed.items()
    }
    _record(
        out,
        "prove_porep_lite",
        len(key.h) + 1,
        times,
        circuit=circuit.knobs(),
        gpu_phases_ms=gpu_ms,
        phases_ms=timed,
        same_proof_bytes=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and write one JSON file; a table last."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--backends", default="cupy,pycuda", help="A,B: the ratio is B/A")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--prove-runs", type=int, default=3)
    parser.add_argument("--msm-g1", default="20,24")
    parser.add_argument("--ntt", default="24")
    parser.add_argument("--prove", action="append", default=[], help="K,D or a params folder")
    parser.add_argument("--commit", default="", help="the commit measured (else git's HEAD)")
    args = parser.parse_args(argv)
    logs = lambda text: [int(x) for x in text.split(",") if x]  # noqa: E731
    plugins = [gpu_plugin(name) for name in args.backends.split(",")]
    if len(plugins) != 2:
        raise SystemExit("--backends names two GPU backends")
    env = environment(plugins, args.commit)
    print(json.dumps(env), flush=True)
    results: list[dict[str, Any]] = []
    compare_ntt(plugins, logs(args.ntt), args.runs, results)
    compare_msm(plugins, logs(args.msm_g1), args.runs, results)
    for spec in args.prove:
        compare_prove(plugins, spec, args.prove_runs, results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    record = {"schema": "cuzk-gpu-compare/1", "environment": env, "results": results}
    Path(args.out).write_text(json.dumps(record, indent=1))
    a, b = (gp.gpu.name for gp in plugins)
    print(f"\n{'case':22s} {'size':>7s} {a + ' ms':>11s} {b + ' ms':>11s} {b + '/' + a:>12s}")
    for r in results:
        ms = r["median_ms"]
        print(
            f"{r['name']:22s} {_size(r['size']):>7s} {ms[a]:11.3f} {ms[b]:11.3f} {r['ratio']:12.3f}"
        )
        if "gpu_phases_ms" in r:
            gpu = r["gpu_phases_ms"]
            ratio = gpu[b] / gpu[a] if gpu[a] else float("nan")
            print(
                f"{'  GPU phases of it':22s} {'':>7s} {gpu[a]:11.3f} {gpu[b]:11.3f} {ratio:12.3f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
