"""The daemon's Prometheus metrics: an engine listener feeding counters, histograms and gauges."""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from cuzk_core.engine import EngineListener, EngineStatus, JobRecord, JobState

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)
PHASES = ("queue_wait", "key_load", "synthesis", "gpu", "total")


class Metrics(EngineListener):
    """Counters and histograms of jobs and keys; gauges read from the engine on each scrape."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.submitted = Counter(
            "cuzk_jobs_submitted", "Jobs accepted", ["key", "priority"], registry=r
        )
        self.finished = Counter("cuzk_jobs_finished", "Jobs ended", ["key", "state"], registry=r)
        self.phase_seconds = Histogram(
            "cuzk_job_phase_seconds",
            "Time per phase of finished proofs",
            ["phase"],
            buckets=_SECONDS,
            registry=r,
        )
        self.key_loads = Counter("cuzk_key_loads", "Keys made hot", ["key"], registry=r)
        self.key_load_seconds = Histogram(
            "cuzk_key_load_seconds", "Time to load a key", buckets=_SECONDS, registry=r
        )
        self.key_evictions = Counter(
            "cuzk_key_evictions", "Hot keys demoted to make room", ["key"], registry=r
        )
        self.queued = Gauge("cuzk_jobs_queued", "Jobs waiting to start", registry=r)
        self.running = Gauge("cuzk_jobs_running", "Jobs in synthesis or proving", registry=r)
        self.hot_bytes = Gauge("cuzk_key_hot_bytes", "Bytes held by hot keys", registry=r)
        self.budget_bytes = Gauge("cuzk_key_budget_bytes", "Hot key budget", registry=r)
        self.key_tier = Gauge(
            "cuzk_key_tier", "1 for the tier each key is in", ["key", "tier"], registry=r
        )

    def job_submitted(self, record: JobRecord) -> None:
        """Count an accepted job."""
        self.submitted.labels(record.key_id, record.priority.name.lower()).inc()

    def job_finished(self, record: JobRecord) -> None:
        """Count an ended job; a proof's phases go into the histogram."""
        self.finished.labels(record.key_id, record.state.value).inc()
        if record.state is JobState.DONE and record.timings is not None:
            for phase in PHASES:
                ms = getattr(record.timings, f"{phase}_ms")
                self.phase_seconds.labels(phase).observe(ms / 1000.0)

    def key_loaded(self, key_id: str, ms: float, nbytes: int) -> None:
        """Count a key load."""
        self.key_loads.labels(key_id).inc()
        self.key_load_seconds.observe(ms / 1000.0)

    def key_evicted(self, key_id: str, nbytes: int) -> None:
        """Count an eviction."""
        self.key_evictions.labels(key_id).inc()

    def exposition(self, status: Callable[[], EngineStatus]) -> str:
        """The Prometheus text, gauges refreshed from ``status()`` first."""
        now = status()
        self.queued.set(now.queued)
        self.running.set(now.running)
        self.hot_bytes.set(now.hot_bytes)
        self.budget_bytes.set(now.budget_bytes)
        for key in now.keys:
            for tier in ("hot", "warm", "cold"):
                self.key_tier.labels(key.key_id, tier).set(1 if key.tier.value == tier else 0)
        return generate_latest(self.registry).decode()
