"""The fleet's head: the daemon's job store and queue, routing jobs to Ray worker actors.

:class:`FleetEngine` answers every call the daemon's gRPC servicer makes of an engine (submit,
await, cancel, status, preload, evict, verifying keys), so ``cuzk client`` and ``cuzk bench``
work against a fleet unchanged. Jobs are durable in the store before their ids are returned; a
head that restarts on the same state folder finds its queue there (jobs it had sent to workers
are queued again). One thread runs the head's state: it plans with the router, sends jobs to
workers, and takes their results, worker deaths and restarts as events. A worker that dies is
restarted by Ray (``MAX_RESTARTS`` times); the jobs it had in flight go back to the queue and
prefer another worker, and a result reaches the store once (only from the job's current start).
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import shutil
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.engine import (
    EngineConfig,
    EngineListener,
    EngineStatus,
    JobRecord,
    JobRequest,
    JobState,
    KeySpec,
    PhaseTimings,
    QueueFull,
    Ticket,
    Tier,
    UnknownKey,
)
from cuzk_core.engine.engine import admit, retry_ticket
from cuzk_core.engine.keys import read_verifying_key
from cuzk_core.engine.residency import KeyStatus
from cuzk_core.errors import CuzkError
from cuzk_core.fleet.router import Pending, Router
from cuzk_core.fleet.store import FleetStore
from cuzk_core.fleet.worker import ProvingWorker, WorkerSpec
from cuzk_core.groth16.keys import VerifyingKey

MAX_RESTARTS = 3
"""How often Ray restarts a worker that died before the head gives it up and starts another."""
RECONCILE_S = 2.0
"""How often the head compares its workers with the target (and the cluster, for ``auto``)."""
ACTOR_CONCURRENCY = 8
"""Calls a worker serves at once: its running jobs plus cancels, preloads and evictions."""
WORKERS_FOLDER = "workers"
"""Under the state folder: the workers' scratch stores (when they run on this machine)."""


@attrs.frozen
class FleetConfig:
    """Where the workers run and how many there are."""

    ray_address: str | None = None
    """A Ray cluster to join (None: start a local one in this process)."""
    workers: int | None = None
    """How many workers; None: one per GPU, or per ``cpus_per_worker`` CPUs, of the cluster."""
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    local_cpus: int | None = None
    """A local cluster's CPUs (None: Ray counts this machine's)."""


@attrs.define(eq=False)
class WorkerInfo:
    """One worker as the head knows it."""

    name: str
    actor: Any
    state: str = "starting"
    """starting, up, restarting (Ray restarts it after it died), or gone."""
    generation: int = 0
    pid: int | None = None
    hot: dict[str, int] = attrs.field(factory=dict)
    loads: dict[str, int] = attrs.field(factory=dict)
    """key id → loads, summed over the worker's lives."""
    lives_loads: dict[str, int] = attrs.field(factory=dict)
    """key id → loads in the current life (what the actor reports)."""
    jobs_done: int = 0


@attrs.define(eq=False)
class _Running:
    worker: str
    generation: int
    started_at: float


class FleetEngine:
    """The engine interface of :class:`~cuzk_core.engine.Engine`, over a fleet of workers."""

    def __init__(
        self,
        config: EngineConfig,
        fleet: FleetConfig,
        listener: EngineListener | None = None,
    ) -> None:
        self.config = config
        self.fleet = fleet
        self.listener = listener or EngineListener()
        self.store = FleetStore(config.state_dir)
        self.router = Router({k: spec.disk_bytes for k, spec in config.keys.items()})
        self.workers: dict[str, WorkerInfo] = {}
        self._spec = WorkerSpec(
            config,
            threads=max(1, round(fleet.cpus_per_worker)) if not fleet.gpus_per_worker else None,
            scratch_root=config.state_dir / WORKERS_FOLDER,
        )
        self._roots = tuple(root.resolve() for root in config.input_roots)
        self._running: dict[str, _Running] = {}
        self._events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        self._lock = threading.RLock()
        self._finished = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._names = itertools.count(1)
        self._started = time.monotonic()
        self._vks: dict[str, VerifyingKey] = {}
        self._owns_ray = False
        self._closed = False
        self._remote: Any = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Join (or start) Ray, recover the queue from the store, start the workers."""
        import ray

        if not ray.is_initialized():
            ray.init(
                address=self.fleet.ray_address,
                num_cpus=self.fleet.local_cpus,
                include_dashboard=False,
                log_to_driver=False,
            )
            self._owns_ray = True
        self._remote = ray.remote(ProvingWorker)
        shutil.rmtree(self.config.state_dir / WORKERS_FOLDER, ignore_errors=True)
        for record in self.store.recover(self.config.max_attempts):
            self.listener.job_finished(record)
        with self._lock:
            for record, seq in self.store.queued():
                self.router.add(Pending.make(record.job_id, record.key_id, record.priority, seq))
            for _ in range(self._target()):
                self._start_worker()
        for key_id in self.config.preload:
            self.preload(key_id)
        self._thread = threading.Thread(target=self._loop, name="cuzk-fleet-head", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Send no more jobs, let the ones in flight finish, stop the workers, close the store
        (once: a second call does nothing)."""
        import ray

        if self._closed:
            return
        self._closed = True
        with self._lock:
            self._stopping.set()
        self._events.put(("stop",))
        with self._finished:
            while any(w.state == "up" for w in self.workers.values()) and self._running:
                self._finished.wait(0.5)
        if self._thread is not None:
            self._thread.join()
        for worker in self.workers.values():
            if worker.state in ("up", "starting"):
                with contextlib.suppress(Exception):  # one that cannot stop is killed below
                    ray.get(worker.actor.stop.remote(), timeout=30)
            ray.kill(worker.actor, no_restart=True)
        with self._finished:
            self._finished.notify_all()
        self.store.close()
        if self._owns_ray:
            ray.shutdown()

    def _target(self) -> int:
        if self.fleet.workers is not None:
            return self.fleet.workers
        import ray

        resources = ray.cluster_resources()
        if self.fleet.gpus_per_worker:
            return int(resources.get("GPU", 0) // self.fleet.gpus_per_worker)
        return max(1, int(resources.get("CPU", 0) // max(self.fleet.cpus_per_worker, 1e-9)))

    def add_worker(self) -> str:
        """Start one more worker; it takes queued jobs once its engine is up. Its name."""
        with self._lock:
            return self._start_worker()

    def _start_worker(self) -> str:
        name = f"w{next(self._names)}"
        actor = self._remote.options(
            num_cpus=self.fleet.cpus_per_worker,
            num_gpus=self.fleet.gpus_per_worker,
            max_restarts=MAX_RESTARTS,
            max_task_retries=0,
            max_concurrency=ACTOR_CONCURRENCY,
        ).remote(name, self._spec)
        worker = WorkerInfo(name, actor)
        self.workers[name] = worker
        self._watch_ready(worker)
        return name

    def _watch_ready(self, worker: WorkerInfo) -> None:
        generation = worker.generation
        future = worker.actor.ready.remote().future()
        future.add_done_callback(lambda f: self._events.put(("ready", worker.name, generation, f)))

    # ------------------------------------------------------------ requests

    def _spec_of(self, key_id: str) -> KeySpec:
        try:
            return self.config.keys[key_id]
        except KeyError:
            known = ", ".join(sorted(self.config.keys)) or "none"
            raise UnknownKey(f"unknown key {key_id!r} (this fleet serves: {known})") from None

    def submit(self, request: JobRequest) -> Ticket:
        """Accept a job (durably) or refuse it: unknown key, bad input, or the queue is full."""
        admitted = admit(request, self._spec_of(request.key_id), self._roots, self.store)
        if isinstance(admitted, Ticket):
            return admitted
        request = admitted
        with self._lock:
            if len(self.router) >= self.config.max_queued:
                raise QueueFull(
                    f"the queue is full ({self.config.max_queued} jobs waiting); retry later"
                )
        record, created, seq = self.store.insert(request)
        if not created:
            return retry_ticket(record, request)
        job = Pending.make(record.job_id, record.key_id, record.priority, seq)
        with self._lock:
            self.router.add(job)
            position = self.router.position(job)
        self.listener.job_submitted(record)
        self._events.put(("kick",))
        return Ticket(record.job_id, True, position)

    def get(self, job_id: str) -> JobRecord:
        """The job's current record, or :class:`UnknownJob`."""
        return self.store.known(job_id)

    def await_job(
        self, job_id: str, timeout_s: float | None = None, abandon: threading.Event | None = None
    ) -> JobRecord:
        """The job once final (marked fetched), or its current record when ``timeout_s``
        passes, ``abandon`` is set (the client went away) or the head stops."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            record = self.get(job_id)
            if record.state.final:
                self.store.mark_fetched(job_id)
                return record
            left = 0.5 if deadline is None else deadline - time.monotonic()
            if left <= 0 or self._stopping.is_set() or (abandon and abandon.is_set()):
                return record
            with self._finished:
                self._finished.wait(min(left, 0.5))

    def cancel(self, job_id: str) -> tuple[JobRecord, bool]:
        """Cancel a job: (its record, whether it had started). A queued job ends at once; one
        on a worker at its next phase boundary there."""
        record = self.get(job_id)
        if record.state.final:
            return record, False
        with self._lock:
            if self.router.remove(job_id):
                self._end(job_id, JobState.CANCELLED, "cancelled before it ran")
                return self.get(job_id), False
            running = self._running.get(job_id)
            if running is not None:
                self.workers[running.worker].actor.cancel.remote(job_id)
        return self.get(job_id), running is not None

    def verifying_key(self, key_id: str) -> VerifyingKey:
        """The key's verifying key (read once)."""
        spec = self._spec_of(key_id)
        if key_id not in self._vks:
            self._vks[key_id] = read_verifying_key(spec)
        return self._vks[key_id]

    def preload(self, key_id: str) -> tuple[bool, float]:
        """Make a key hot on one worker (the one where it costs least): (whether some worker
        had it hot already, load ms)."""
        import ray

        self._spec_of(key_id)
        with self._lock:
            if self.router.holders(key_id):
                return True, 0.0
            up = [self.router.workers[n] for n, w in self.workers.items() if w.state == "up"]
            if not up:
                raise CuzkError(f"key {key_id!r}: no worker is up to preload it on")
            chosen = min(up, key=lambda w: (self.router.cost(key_id, w) or 0.0, len(w.inflight)))
            actor = self.workers[chosen.name].actor
        reply = _unwrap(lambda: ray.get(actor.preload.remote(key_id)))
        with self._lock:
            self._note_keys(chosen.name, reply["hot"], reply["loads"])
            self.router.sync(chosen.name, reply["hot"])
        return reply["already"], reply["load_ms"]

    def evict(self, key_id: str) -> tuple[bool, int]:
        """Drop a key to cold on every worker: (whether any had it hot, bytes freed)."""
        import ray

        self._spec_of(key_id)
        with self._lock:
            up = [(n, w.actor) for n, w in self.workers.items() if w.state == "up"]
        was_hot, freed = False, 0
        for name, actor in up:
            reply = _unwrap(lambda a=actor: ray.get(a.evict.remote(key_id)))
            was_hot, freed = was_hot or reply["was_hot"], freed + reply["freed"]
            with self._lock:
                self._note_keys(name, reply["hot"], reply["loads"])
                self.router.sync(name, reply["hot"])
        return was_hot, freed

    def status(self) -> EngineStatus:
        """Queue, jobs and keys now (keys summed over the workers)."""
        counts = self.store.counts()
        with self._lock:
            up = [w for w in self.workers.values() if w.state == "up"]
            keys = []
            running = [k for m in self.router.workers.values() for k in m.inflight.values()]
            for key_id in sorted(self.config.keys):
                holders = [w for w in up if key_id in w.hot]
                refs = running.count(key_id)
                keys.append(
                    KeyStatus(
                        key_id,
                        Tier.HOT if holders else Tier.COLD,
                        sum(w.hot[key_id] for w in holders) or self.config.keys[key_id].disk_bytes,
                        refs,
                        sum(w.loads.get(key_id, 0) for w in self.workers.values()),
                    )
                )
            queued = len(self.router)
        return EngineStatus(
            backend=self.config.profile.backend,
            pipeline=self.config.pipeline,
            queued=queued,
            running=counts[JobState.RUNNING],
            counts=counts,
            keys=keys,
            budget_bytes=self.config.budget_bytes * len(up),
            hot_bytes=sum(sum(w.hot.values()) for w in up),
            uptime_s=time.monotonic() - self._started,
        )

    def worker_of(self, job_id: str) -> str | None:
        """The worker running ``job_id`` now (None when it is not running)."""
        with self._lock:
            running = self._running.get(job_id)
            return None if running is None else running.worker

    # ------------------------------------------------------------ the head's thread

    def _loop(self) -> None:
        last_reconcile = time.monotonic()
        while True:
            try:
                event = self._events.get(timeout=RECONCILE_S)
            except queue.Empty:
                event = ("tick",)
            kind = event[0]
            with self._lock:
                if kind == "result":
                    self._on_result(*event[1:])
                elif kind == "ready":
                    self._on_ready(*event[1:])
                if self._stopping.is_set():
                    if not self._running or not any(w.state == "up" for w in self.workers.values()):
                        self._finished.notify_all()
                        return
                    continue
                if time.monotonic() - last_reconcile >= RECONCILE_S:
                    self._reconcile()
                    last_reconcile = time.monotonic()
                self._dispatch()

    def _reconcile(self) -> None:
        live = [w for w in self.workers.values() if w.state != "gone"]
        for _ in range(self._target() - len(live)):
            self._start_worker()

    def _dispatch(self) -> None:
        for job, name in self.router.plan():
            worker = self.workers[name]
            if not self.store.mark_running(job.job_id):  # cancelled meanwhile
                self.router.finished(name, job.job_id, worker.hot)
                continue
            record = self.get(job.job_id)
            witness = None
            if record.input.witness_path is not None:
                try:
                    witness = Path(record.input.witness_path).read_bytes()
                except OSError as exc:
                    self.router.finished(name, job.job_id, worker.hot)
                    reason = f"{record.input.witness_path}: cannot read: {exc.strerror}"
                    self._end(job.job_id, JobState.FAILED, reason)
                    continue
            self._running[job.job_id] = _Running(name, worker.generation, time.time())
            future = worker.actor.run.remote(
                job.job_id,
                record.attempts,
                record.key_id,
                record.input.to_json(),
                int(record.priority),
                witness,
            ).future()
            generation = worker.generation
            future.add_done_callback(
                lambda f, j=job.job_id, n=name, g=generation: self._events.put(
                    ("result", j, n, g, f)
                )
            )

    def _on_ready(self, name: str, generation: int, future: Future) -> None:
        import ray

        worker = self.workers[name]
        if generation != worker.generation or worker.state == "gone":
            return
        try:
            info = future.result()
        except ray.exceptions.ActorUnavailableError:  # still restarting: ask again
            time.sleep(0.1)
            self._watch_ready(worker)
            return
        except ray.exceptions.RayActorError:
            worker.state = "gone"  # restarts used up, or it could not start
            self.router.remove_worker(name)
            return
        worker.state, worker.pid, worker.hot, worker.lives_loads = "up", info["pid"], {}, {}
        self.router.add_worker(name, info["slots"], info["budget_bytes"])

    def _on_result(self, job_id: str, name: str, generation: int, future: Future) -> None:
        import ray

        running = self._running.get(job_id)
        worker = self.workers[name]
        if running is None or running.worker != name or running.generation != generation:
            return  # a start superseded by a worker's death
        try:
            outcome = future.result()
        except ray.exceptions.RayActorError:
            self._lost(worker)
            return
        except Exception as exc:  # a failure inside the worker's call
            del self._running[job_id]
            self.router.finished(name, job_id, worker.hot)
            self._end(job_id, JobState.FAILED, f"worker {name}: {_first_line(exc)}")
            return
        del self._running[job_id]
        worker.jobs_done += 1
        loaded = self._note_keys(name, outcome["hot"], outcome["loads"])
        timings = outcome["timings"] or {}
        key_id = self.router.workers[name].inflight.get(job_id)
        proof_s = load_s = None
        if outcome["state"] == JobState.DONE.value:
            proof_s = (timings["synthesis_ms"] + timings["gpu_ms"]) / 1000.0
            if key_id in loaded:
                load_s = timings["key_load_ms"] / 1000.0
        self.router.finished(name, job_id, outcome["hot"], proof_s, load_s)
        if key_id in loaded:
            nbytes = outcome["hot"].get(key_id, 0)
            self.listener.key_loaded(key_id, timings.get("key_load_ms", 0.0), nbytes)
        if outcome["state"] == JobState.DONE.value:
            now = time.time()
            record = self.get(job_id)
            phases = PhaseTimings(
                queue_wait_ms=(running.started_at - record.submitted_at) * 1000.0,
                key_load_ms=timings["key_load_ms"],
                synthesis_ms=timings["synthesis_ms"],
                gpu_ms=timings["gpu_ms"],
                total_ms=(now - record.submitted_at) * 1000.0,
            )
            public = [int(v) for v in outcome["public_inputs"]]
            self.store.finish(job_id, outcome["proof"], public, phases)
            self._after(job_id)
        else:
            state = JobState(outcome["state"])
            self._end(job_id, state, outcome["error"] or state.value)

    def _note_keys(self, name: str, hot: dict[str, int], loads: dict[str, int]) -> set[str]:
        """Record a worker's hot keys (and load counts); the keys it loaded since its last
        report. Keys that left are counted as evictions."""
        worker = self.workers[name]
        for key_id, nbytes in worker.hot.items():
            if key_id not in hot:
                self.listener.key_evicted(key_id, nbytes)
        worker.hot = dict(hot)
        loaded = set()
        for key_id, count in loads.items():
            new = count - worker.lives_loads.get(key_id, 0)
            if new > 0:
                loaded.add(key_id)
                worker.loads[key_id] = worker.loads.get(key_id, 0) + new
            worker.lives_loads[key_id] = count
        return loaded

    def _lost(self, worker: WorkerInfo) -> None:
        """A worker died: its running jobs go back to the queue (or fail after
        ``max_attempts`` starts); Ray restarts it, and it takes jobs again once up."""
        worker.state = "restarting"
        worker.generation += 1
        worker.hot, worker.lives_loads = {}, {}
        lost = self.router.worker_down(worker.name)
        reason = (
            f"the worker proving this job died {self.config.max_attempts} times; not retried again"
        )
        for job_id in lost:
            self._running.pop(job_id, None)
            state = self.store.requeue(job_id, self.config.max_attempts, reason)
            record = self.get(job_id)
            if state is JobState.QUEUED:
                self.router.add(
                    Pending.make(
                        job_id,
                        record.key_id,
                        record.priority,
                        self.store.seq_of(job_id),
                        frozenset({worker.name}),
                    )
                )
            elif state is JobState.FAILED:
                self._after(job_id)
        self._watch_ready(worker)

    def _end(self, job_id: str, state: JobState, reason: str) -> None:
        if self.store.end(job_id, state, reason):
            self._after(job_id)

    def _after(self, job_id: str) -> None:
        record = self.store.get(job_id)
        if record is not None:
            self.listener.job_finished(record)
        with self._finished:
            self._finished.notify_all()


def _first_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"


def _unwrap(call: Any) -> Any:
    """``call()``, with an error raised inside a worker re-raised as itself (a one-line
    :class:`CuzkError`), not as Ray's wrapper with the worker's traceback."""
    import ray

    try:
        return call()
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, CuzkError):
            raise CuzkError(str(cause)) from None
        raise CuzkError(f"internal error in a worker: {_first_line(exc)}") from None
