"""How fast a fleet of N GPUs proves a job mix, and what limits it: a closed-form model and a
discrete-event simulation that routes with the fleet's own :class:`Router` (docs/fleet.md).

Model, for a batch of J jobs over keys k with shares s_k, proof times p_k and sizes b_k:

- workers: each proves one job at a time, so N workers need J·p̄/N seconds (p̄ = Σ s_k·p_k),
  plus the key loads, b_k·t_load each. The router loads a key on one more worker while its
  queue outlasts a load there (J·s_k·p_k/h > b_k·t_load). When a worker's budget holds every
  key, a key spreads to h_k = min(N, J·s_k·p_k/(b_k·t_load)) workers; when it does not, the
  workers split between the keys, h_k ≈ N·s_k·p_k/p̄ (at least one);
- head: every job costs the head a fixed time (store commits, dispatch: 1/head_jobs_per_s)
  plus its input over the head's network link (input_bytes/net_bytes_per_s);

throughput = J / max(worker time, head time), and it stops growing with N at
N* = p̄ / head time per job: past N*, more GPUs wait for the head.
"""

from __future__ import annotations

import heapq
import math
import random

import attrs

from cuzk_core.engine.jobs import Priority
from cuzk_core.fleet.router import Pending, Router

GIB = 1 << 30


@attrs.frozen
class KeyMix:
    """One key of a job mix: its size, a proof's time on one GPU, its share of the jobs."""

    name: str
    size_bytes: int
    proof_s: float
    share: float


@attrs.frozen
class JobMix:
    """The keys jobs use, and per-job input bytes the head forwards (a witness upload)."""

    keys: tuple[KeyMix, ...]
    input_bytes: int = 0

    @property
    def mean_proof_s(self) -> float:
        """p̄: the mean proof time over the mix."""
        total = sum(k.share for k in self.keys)
        return sum(k.share * k.proof_s for k in self.keys) / total


@attrs.frozen
class Fleet:
    """N GPUs (one worker each), how fast a key moves onto one, and the head's limits."""

    gpus: int
    key_load_s_per_gib: float
    head_jobs_per_s: float
    net_bytes_per_s: float = 10e9 / 8
    budget_bytes: int = 96 * GIB
    """Hot keys a worker holds (an H200's 141 GB less working memory)."""

    def head_s_per_job(self, mix: JobMix) -> float:
        """Head time a job costs: bookkeeping plus forwarding its input."""
        return 1.0 / self.head_jobs_per_s + mix.input_bytes / self.net_bytes_per_s


@attrs.frozen
class Prediction:
    """What a fleet should reach on a batch, and what bounds it."""

    proofs_per_s: float
    bound: str
    """"workers" or "head"."""
    key_loads: int
    saturation_gpus: float
    """N*: past this many GPUs, throughput is the head's."""


def predict(fleet: Fleet, mix: JobMix, jobs: int = 10_000) -> Prediction:
    """The model's throughput on a batch of ``jobs`` jobs (see the module docstring)."""
    total = sum(k.share for k in mix.keys)
    mean = mix.mean_proof_s
    loads = 0
    load_time = 0.0
    fits_all = sum(k.size_bytes for k in mix.keys) <= fleet.budget_bytes
    for key in mix.keys:
        load_s = key.size_bytes / GIB * fleet.key_load_s_per_gib
        work_s = jobs * key.share / total * key.proof_s
        if fits_all:
            holders = math.ceil(work_s / load_s) if load_s > 0 else fleet.gpus
        else:
            holders = round(fleet.gpus * work_s / (jobs * mean))
        holders = min(fleet.gpus, max(1, holders))
        loads += holders
        load_time += holders * key.size_bytes / GIB * fleet.key_load_s_per_gib
    worker_s = (jobs * mean + load_time) / fleet.gpus
    head_s = jobs * fleet.head_s_per_job(mix)
    bound = "workers" if worker_s >= head_s else "head"
    return Prediction(
        proofs_per_s=jobs / max(worker_s, head_s),
        bound=bound,
        key_loads=loads,
        saturation_gpus=mean / fleet.head_s_per_job(mix),
    )


@attrs.frozen
class Simulated:
    """What the simulation saw."""

    proofs_per_s: float
    key_loads: int
    makespan_s: float
    loads_per_worker_key: dict[tuple[str, str], int]


def simulate(fleet: Fleet, mix: JobMix, jobs: int, seed: int = 0) -> Simulated:
    """Route a batch of ``jobs`` jobs, drawn from the mix, over ``fleet.gpus`` simulated
    workers with the fleet's router; each worker keeps its hot keys least recently used under
    its budget and proves one job at a time; the head dispatches one job per head time."""
    rng = random.Random(seed)
    keys = {k.name: k for k in mix.keys}
    router = Router({k.name: k.size_bytes for k in mix.keys})
    names = [f"w{i}" for i in range(fleet.gpus)]
    hot: dict[str, dict[str, float]] = {n: {} for n in names}  # key → last use
    for name in names:
        router.add_worker(name, 1, fleet.budget_bytes)
    weights = [k.share for k in mix.keys]
    for seq in range(jobs):
        key = rng.choices(mix.keys, weights)[0]
        router.add(Pending.make(f"j{seq}", key.name, Priority.NORMAL, seq))
    events: list[tuple[float, int, str, str, str, float, float]] = []
    order = 0
    loads: dict[tuple[str, str], int] = {}
    now = head_free = 0.0
    per_job = fleet.head_s_per_job(mix)
    done = 0
    while done < jobs:
        for job, name in router.plan():
            head_free = max(head_free, now) + per_job
            key = keys[job.key_id]
            held = hot[name]
            load_s = 0.0
            if key.name not in held:
                load_s = key.size_bytes / GIB * fleet.key_load_s_per_gib
                loads[(name, key.name)] = loads.get((name, key.name), 0) + 1
                while held and sum(keys[k].size_bytes for k in held) + key.size_bytes > (
                    fleet.budget_bytes
                ):
                    del held[min(held, key=held.__getitem__)]
            held[key.name] = head_free
            end = head_free + load_s + key.proof_s
            order += 1
            heapq.heappush(events, (end, order, name, job.job_id, key.name, load_s, key.proof_s))
        end, _, name, job_id, _key_id, load_s, proof_s = heapq.heappop(events)
        now = end
        done += 1
        report = {k: keys[k].size_bytes for k in hot[name]}
        router.finished(name, job_id, report, proof_s=proof_s, load_s=load_s or None)
    return Simulated(
        proofs_per_s=jobs / now,
        key_loads=sum(loads.values()),
        makespan_s=now,
        loads_per_worker_key=loads,
    )


def describe(fleet: Fleet, mix: JobMix, jobs: int) -> dict[str, object]:
    """Model and simulation side by side, as JSON (for docs/fleet.md's table)."""
    model = predict(fleet, mix, jobs)
    sim = simulate(fleet, mix, jobs)
    return {
        "gpus": fleet.gpus,
        "model_proofs_per_s": round(model.proofs_per_s, 3),
        "sim_proofs_per_s": round(sim.proofs_per_s, 3),
        "bound": model.bound,
        "model_key_loads": model.key_loads,
        "sim_key_loads": sim.key_loads,
        "saturation_gpus": round(model.saturation_gpus, 1)
        if math.isfinite(model.saturation_gpus)
        else None,
    }
