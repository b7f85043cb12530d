"""``cuzk bench single|batch|stress`` against a daemon: latency, throughput and per-job phases.

single: one Prove at a time (latency). batch: N jobs submitted at once, then awaited
(throughput). stress: C clients looping Prove for a duration (throughput under contention,
latency tails). Each job's phases (queue wait, key load, synthesis, GPU, total) come from the
daemon; latency is what the client saw.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import numpy as np

from cuzk_core.service.client import Client, ServiceError
from cuzk_core.service.proto import cuzk_pb2 as pb

PHASES = ("queue_wait_ms", "key_load_ms", "synthesis_ms", "gpu_ms", "total_ms")


@attrs.frozen
class Sample:
    """One job as the bench saw it."""

    job_id: str
    state: str
    latency_ms: float
    phases: dict[str, float]
    error: str = ""
    done_s: float | None = None
    """Seconds from the run's start until the client had the result (batch runs)."""

    def to_json(self) -> dict[str, Any]:
        """The sample as JSON."""
        return attrs.asdict(self)


def _sample(result: pb.ProofResult, latency_ms: float, done_s: float | None = None) -> Sample:
    phases = {name: round(getattr(result.timings, name), 3) for name in PHASES}
    state = pb.JobState.Name(result.state).lower()
    done = None if done_s is None else round(done_s, 4)
    return Sample(result.job_id, state, round(latency_ms, 3), phases, result.error, done)


def _refused(error: ServiceError, latency_ms: float) -> Sample:
    return Sample("", f"refused:{error.code.name.lower()}", round(latency_ms, 3), {}, str(error))


def run_single(client: Client, request: Callable[[int], pb.SubmitProofRequest], runs: int):
    """``runs`` proofs one after another; (samples, wall seconds)."""
    samples = []
    start = time.perf_counter()
    for i in range(runs):
        began = time.perf_counter()
        result = client.prove(request(i))
        samples.append(_sample(result, (time.perf_counter() - began) * 1000.0))
    return samples, time.perf_counter() - start


def run_batch(client: Client, request: Callable[[int], pb.SubmitProofRequest], count: int):
    """``count`` jobs submitted at once, then awaited; (samples, wall seconds)."""
    start = time.perf_counter()
    submitted = [(client.submit(request(i)).job_id, time.perf_counter()) for i in range(count)]
    samples = []
    for job_id, began in submitted:
        result = client.await_proof(job_id)
        now = time.perf_counter()
        samples.append(_sample(result, (now - began) * 1000.0, now - start))
    return samples, time.perf_counter() - start


def run_stress(
    client: Client,
    request: Callable[[int], pb.SubmitProofRequest],
    duration_s: float,
    clients: int,
):
    """``clients`` threads each proving in a loop until ``duration_s`` passes; refusals (queue
    full) are samples too. (samples, wall seconds until the last proof came back)."""
    deadline = time.perf_counter() + duration_s
    counter = iter(range(1 << 62))
    lock = threading.Lock()
    samples: list[Sample] = []

    def worker() -> None:
        while time.perf_counter() < deadline:
            with lock:
                index = next(counter)
            began = time.perf_counter()
            try:
                sample = _sample(client.prove(request(index)), 0.0)
            except ServiceError as exc:
                sample = _refused(exc, 0.0)
            sample = attrs.evolve(sample, latency_ms=round((time.perf_counter() - began) * 1e3, 3))
            with lock:
                samples.append(sample)

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(worker) for _ in range(clients)]:
            future.result()
    return samples, time.perf_counter() - start


def summarize(samples: list[Sample], wall_s: float) -> dict[str, Any]:
    """Counts, throughput, client latency percentiles and mean phases of the finished proofs."""
    done = [s for s in samples if s.state == "done"]
    states: dict[str, int] = {}
    for s in samples:
        states[s.state] = states.get(s.state, 0) + 1
    summary: dict[str, Any] = {
        "jobs": len(samples),
        "states": states,
        "wall_s": round(wall_s, 3),
        "proofs_per_s": round(len(done) / wall_s, 4) if wall_s > 0 else None,
    }
    steady = steady_proofs_per_s(done)
    if steady is not None:
        summary["steady_proofs_per_s"] = steady
    if done:
        latency = np.array([s.latency_ms for s in done])
        summary["latency_ms"] = {
            name: round(float(np.percentile(latency, q)), 3)
            for name, q in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))
        }
        summary["phases_mean_ms"] = {
            name: round(float(np.mean([s.phases[name] for s in done])), 3) for name in PHASES
        }
    return summary


STEADY_MIN_JOBS = 8
"""Batches smaller than this get no steady-state figure."""


def steady_proofs_per_s(done: list[Sample]) -> float | None:
    """Throughput once the first quarter of the jobs has come back: the jobs after it over the
    time they took. A fresh daemon's one-time costs (its cold key, the first jobs' table uploads)
    fall in that first quarter. None for runs without completion times or under
    :data:`STEADY_MIN_JOBS` jobs."""
    times = sorted(s.done_s for s in done if s.done_s is not None)
    if len(times) < STEADY_MIN_JOBS:
        return None
    quarter = len(times) // 4
    span = times[-1] - times[quarter - 1]
    return round((len(times) - quarter) / span, 4) if span > 0 else None


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a few lines of text."""
    lines = [
        f"{summary['jobs']} jobs in {summary['wall_s']:.2f} s: "
        + ", ".join(f"{n} {state}" for state, n in sorted(summary["states"].items()))
    ]
    if summary.get("proofs_per_s") is not None:
        line = f"throughput {summary['proofs_per_s']:.3f} proofs/s"
        if summary.get("steady_proofs_per_s") is not None:
            line += f" ({summary['steady_proofs_per_s']:.3f} after the first quarter of the jobs)"
        lines.append(line)
    if "latency_ms" in summary:
        lat = summary["latency_ms"]
        lines.append(
            f"latency ms  p50 {lat['p50']:.1f}  p95 {lat['p95']:.1f}  p99 {lat['p99']:.1f}  "
            f"max {lat['max']:.1f}"
        )
        phases = summary["phases_mean_ms"]
        lines.append("mean phases ms  " + "  ".join(f"{k[:-3]} {v:.1f}" for k, v in phases.items()))
    return "\n".join(lines)
