"""A fleet worker: one :class:`~cuzk_core.engine.Engine` in a Ray actor, proving what the head
sends it under keys it keeps resident.

The head owns the queue, the retries and the results; the worker's engine keeps a scratch job
store in a folder of its own (removed when the actor ends) and runs each job it is given through
the engine's synthesis/prove pipeline. A job comes back as a plain dict (what Ray pickles):
its final state, proof, public inputs, timings, and which keys are hot here now.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.engine import Engine, EngineConfig, JobInput, JobRequest, JobState, Priority
from cuzk_core.engine.residency import Tier

THREADS_ENV = "CUZK_FASTCPU_THREADS"
"""fastcpu's thread count; a CPU worker sets it to the CPUs Ray reserved for it."""


@attrs.frozen
class WorkerSpec:
    """What every worker of a fleet is made with."""

    engine: EngineConfig
    """The head's engine configuration: profile, keys, budget, pipeline (state folder unused)."""
    threads: int | None = None
    """CPU backends: the backend's threads (None: leave the environment's choice)."""
    scratch_root: Path | None = None
    """Where workers make their scratch stores (None: the system's temporary folder)."""


class ProvingWorker:
    """The actor's body: an engine on a scratch store; every method is called through Ray."""

    def __init__(self, name: str, spec: WorkerSpec) -> None:
        if spec.threads is not None:
            os.environ[THREADS_ENV] = str(spec.threads)
        self.name = name
        if spec.scratch_root is not None:
            spec.scratch_root.mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=spec.scratch_root))
        config = attrs.evolve(
            spec.engine,
            state_dir=self._scratch,
            preload=(),
            input_roots=(),
            max_attempts=1,
            trace_path=None,
        )
        self.engine = Engine(config)
        self.engine.start()
        self._local: dict[str, str] = {}
        """head job id → this engine's job id, for cancels."""

    def ready(self) -> dict[str, Any]:
        """The worker's pid, slots and budget, once its engine has started."""
        config = self.engine.config
        return {
            "pid": os.getpid(),
            "slots": 2 if config.pipeline else 1,
            "budget_bytes": config.budget_bytes,
        }

    def hot_keys(self) -> dict[str, int]:
        """key id → bytes of every key hot here."""
        return {k.key_id: k.bytes for k in self.engine.residency.status() if k.tier is Tier.HOT}

    def key_loads(self) -> dict[str, int]:
        """key id → how many times this worker loaded it."""
        return {k.key_id: k.loads for k in self.engine.residency.status()}

    def run(
        self,
        job_id: str,
        attempt: int,
        key_id: str,
        job_input: dict[str, Any],
        priority: int,
        witness: bytes | None,
    ) -> dict[str, Any]:
        """Prove the head's job ``job_id`` (its ``attempt``-th start) and wait for the end."""
        request = JobRequest(
            key_id=key_id,
            input=JobInput(circuit_seed=job_input.get("circuit_seed"), seed=job_input.get("seed")),
            priority=Priority(priority),
            idempotency_key=f"{job_id}:{attempt}",
            witness_upload=witness,
        )
        ticket = self.engine.submit(request)
        self._local[job_id] = ticket.job_id
        try:
            record = self.engine.await_job(ticket.job_id)
            while not record.state.final:  # only if the engine is stopping
                record = self.engine.await_job(ticket.job_id)
        finally:
            self._local.pop(job_id, None)
        timings = record.timings
        return {
            "worker": self.name,
            "state": record.state.value,
            "error": record.error,
            "proof": record.proof if record.state is JobState.DONE else None,
            "public_inputs": [str(v) for v in record.public_inputs],
            "timings": None if timings is None else timings.to_json(),
            "hot": self.hot_keys(),
            "loads": self.key_loads(),
        }

    def cancel(self, job_id: str) -> bool:
        """Cancel the head's job ``job_id`` here; False when it is not running here."""
        local = self._local.get(job_id)
        if local is None:
            return False
        self.engine.cancel(local)
        return True

    def preload(self, key_id: str) -> dict[str, Any]:
        """Make a key hot here: whether it was, load ms, and the keys hot now."""
        already, ms = self.engine.preload(key_id)
        return {
            "already": already,
            "load_ms": ms,
            "hot": self.hot_keys(),
            "loads": self.key_loads(),
        }

    def evict(self, key_id: str) -> dict[str, Any]:
        """Drop a key to cold here: whether it was hot, bytes freed, the keys hot now."""
        was_hot, freed = self.engine.evict(key_id)
        return {
            "was_hot": was_hot,
            "freed": freed,
            "hot": self.hot_keys(),
            "loads": self.key_loads(),
        }

    def stop(self) -> None:
        """Finish the jobs in flight, close the engine, remove the scratch store."""
        self.engine.shutdown()
        shutil.rmtree(self._scratch, ignore_errors=True)
