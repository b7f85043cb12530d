"""The proving engine: a job store, a scheduler, key residency and a two-stage pipeline.

Stage 1 (a CPU thread) takes the next job and synthesizes it; stage 2 (another thread) leases
the job's key and runs the backend's phases. The stages meet in a bounded :class:`Handoff`: with
``pipeline`` on it has :data:`PIPELINE_DEPTH` places, so synthesis of job N+1 runs while job N
is in stage 2; with it off :data:`SEQUENTIAL_DEPTH`, so a job starts only when the one before
has finished (the A/B baseline). A zkey job's proof is verified in ``check_workers`` processes
(:mod:`cuzk_core.engine.checkers`) by checker threads, so stage 2 goes on to the next job
meanwhile (with ``pipeline`` on; at most :data:`CHECKS_WAITING` a worker wait). The engine is a
library: the gRPC service and the CLI are thin layers over it.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.backend import Backend
from cuzk_core.engine.checkers import ProofCheckers
from cuzk_core.engine.handoff import PIPELINE_DEPTH, SEQUENTIAL_DEPTH, Handoff
from cuzk_core.engine.jobs import (
    IdempotencyConflict,
    JobCancelled,
    JobError,
    JobInput,
    JobRecord,
    JobRequest,
    JobState,
    PathRefused,
    PhaseTimings,
    Ticket,
)
from cuzk_core.engine.keys import KeyKind, KeySpec, ResidentKey, load_key, read_verifying_key
from cuzk_core.engine.proving import Prepared, prove_prepared, synthesize_job
from cuzk_core.engine.residency import KeyResidency, KeyStatus
from cuzk_core.engine.scheduler import QueuedJob, Scheduler
from cuzk_core.engine.store import JobStore
from cuzk_core.errors import CuzkError
from cuzk_core.groth16.keys import VerifyingKey
from cuzk_core.groth16.prover import ProofResult, phase_span
from cuzk_core.groth16.verifier import check_own_proof
from cuzk_core.plugins import Plugins, load_plugins
from cuzk_core.profile import Profile
from cuzk_core.progress import NullProgress
from cuzk_core.timing import Timer

SYNTHESIS = "synthesis"
KEY_LOAD = "load_params"
CHECK_PROOF = "check_proof"
"""The span of a zkey job's proof verification."""
CHECKS_WAITING = 2
"""Proofs a checker process may have waiting before stage 2 waits too: jobs past their proof
stay few (each one is re-run after a crash)."""
SWEEP_INTERVAL_S = 30.0


def under_roots(path: str, roots: Sequence[Path]) -> str:
    """``path`` resolved, or :class:`PathRefused` unless it lies under one of ``roots``."""
    if not roots:
        raise PathRefused(
            f"input path {path!r} refused: no input roots are configured (upload the file)"
        )
    if "\0" in path:
        raise PathRefused(f"input path {path!r} refused: a path holds no NUL character")
    resolved = Path(path).resolve()
    if not any(resolved.is_relative_to(root) for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise PathRefused(f"input path {path!r} is outside the input roots ({shown})")
    return str(resolved)


def admit(
    request: JobRequest, spec: KeySpec, roots: Sequence[Path], store: JobStore
) -> JobRequest | Ticket:
    """The checks every front end (daemon, fleet) makes of a new job: the request with its
    witness path resolved under the roots, or the ticket of the job an earlier submit with the
    same idempotency key made; :class:`JobError` for a request that cannot be proven."""
    if request.witness_upload is not None and request.input.witness_path is not None:
        raise JobError("send the witness as an upload or as a path, not both")
    if request.input.witness_path is not None:
        path = under_roots(request.input.witness_path, roots)
        request = attrs.evolve(request, input=attrs.evolve(request.input, witness_path=path))
    if spec.circuit is not None and (
        request.witness_upload is not None or request.input.witness_path is not None
    ):
        raise JobError(f"key {spec.key_id!r} proves an embedded circuit: send no witness")
    if spec.circuit is None and request.input.circuit_seed is not None:
        raise JobError(
            f"key {spec.key_id!r} proves a snarkjs circuit from its witness: a circuit seed "
            "applies only to embedded-circuit keys"
        )
    if request.idempotency_key is not None:
        existing = store.get_by_idempotency(request.idempotency_key)
        if existing is not None:
            return retry_ticket(existing, request)
    return request


def retry_ticket(existing: JobRecord, request: JobRequest) -> Ticket:
    """The ticket of ``existing``, the job ``request``'s idempotency key made, when the request
    is the same one again; :class:`IdempotencyConflict` when it is not (also when two submits
    with one key raced to the store: the loser gets the winner's job only if they agree)."""
    differs = _differs(existing, request)
    if differs:
        raise IdempotencyConflict(
            f"idempotency key {request.idempotency_key!r} is job {existing.job_id}, whose "
            f"{differs} differs from this request's; a new request needs a new key"
        )
    return Ticket(existing.job_id, False, 0)


def _differs(existing: JobRecord, request: JobRequest) -> str:
    """What of ``request`` is not what made ``existing`` ("" when nothing is): a retry with
    the same idempotency key must be the same request, or its result would answer another."""
    if existing.key_id != request.key_id:
        return "key"
    if existing.priority != request.priority:
        return "priority"
    old, new = existing.input, request.input
    if (old.circuit_seed, old.seed) != (new.circuit_seed, new.seed):
        return "seed"
    if request.witness_upload is not None:
        try:
            same = old.witness_path is not None and (
                Path(old.witness_path).read_bytes() == request.witness_upload
            )
        except OSError:  # swept with its result: nothing to compare against
            same = True
        return "" if same else "witness"
    return "" if old.witness_path == new.witness_path else "witness"


@attrs.frozen
class EngineConfig:
    """Everything an engine needs; :mod:`cuzk_core.service.config` builds it from TOML."""

    state_dir: Path
    profile: Profile
    keys: dict[str, KeySpec]
    budget_bytes: int
    preload: tuple[str, ...] = ()
    pipeline: bool = True
    max_batch_size: int = 8
    max_batch_wait_ms: float = 0.0
    max_queued: int = 1000
    max_attempts: int = 3
    result_ttl_s: float = 86400.0
    fetched_ttl_s: float = 600.0
    input_roots: tuple[Path, ...] = ()
    trace_path: Path | None = None
    check_workers: int = 2
    """Processes that verify zkey jobs' proofs beside stage 2 and each other (a pairing check
    in Python: ~30 ms that would hold the GIL); 0 verifies on stage 2's thread. The processes
    are spawned only for zkey keys, so a program starting such an engine guards its entry point
    (``if __name__ == "__main__"``), as multiprocessing's spawn needs; ``cuzk serve`` does."""
    warm_up_proofs: int = 2
    """Throwaway proofs of each preloaded embedded-circuit key that :meth:`Engine.start` makes
    through both stages before it returns (see :class:`_WarmUp`)."""


class EngineListener:
    """Told what the engine does (the service's metrics); every method is a no-op here."""

    def job_submitted(self, record: JobRecord) -> None:
        """A new job was accepted."""

    def job_finished(self, record: JobRecord) -> None:
        """A job reached a final state."""

    def key_loaded(self, key_id: str, ms: float, nbytes: int) -> None:
        """A key became hot."""

    def key_evicted(self, key_id: str, nbytes: int) -> None:
        """A hot key was demoted to make room."""


@attrs.frozen
class EngineStatus:
    """A snapshot for GetStatus."""

    backend: str
    pipeline: bool
    queued: int
    running: int
    counts: dict[JobState, int]
    keys: list[KeyStatus]
    budget_bytes: int
    hot_bytes: int
    uptime_s: float


@attrs.define(eq=False)
class _Live:
    """A job between stage 1 and its end: its timer, where that sits on the engine's clock."""

    record: JobRecord
    timer: Timer
    offset_s: float
    started_at: float


@attrs.define(eq=False)
class _WarmUp:
    """A throwaway proof of a preloaded key, made through both stages before the first job.

    A fresh process pays one-time costs in its first two proofs: the compiled circuit and its
    device tables loaded, memory pools grown (per stream, so per stage thread under CuPy) and
    the heap's pages first touched, kernels loaded. Warm-up proofs move them from the first
    clients' jobs to the start, where the daemon has not yet said it listens.
    """

    key_id: str
    done: threading.Event = attrs.Factory(threading.Event)
    error: str | None = None
    began: float = 0.0
    ended: float = 0.0


class _CancelPoint(NullProgress):
    """The prover's progress steps as cancellation points: a cancelled job stops at the next."""

    def __init__(self, cancelled: set[str], job_id: str) -> None:
        super().__init__()
        self._cancelled = cancelled
        self._job_id = job_id

    def step(self, name: str, amount: int = 1) -> None:
        """Raise :class:`JobCancelled` once the job has been cancelled."""
        if self._job_id in self._cancelled:
            raise JobCancelled(name)


class Engine:
    """Accepts jobs, runs them in priority order on the profile's backend, keeps the results."""

    def __init__(
        self,
        config: EngineConfig,
        plugins: Plugins | None = None,
        listener: EngineListener | None = None,
    ) -> None:
        self.config = config
        self.listener = listener or EngineListener()
        self._plugins = plugins or load_plugins()
        self._setup_backend = self._plugins.backend(config.profile, Timer(level=0))
        self.store = JobStore(config.state_dir)
        self.scheduler = Scheduler(
            config.max_queued, config.max_batch_size, config.max_batch_wait_ms
        )
        self.residency = KeyResidency(
            config.keys,
            config.budget_bytes,
            self._load_key,
            on_load=self.listener.key_loaded,
            on_evict=self.listener.key_evicted,
        )
        self._roots = tuple(root.resolve() for root in config.input_roots)
        depth = PIPELINE_DEPTH if config.pipeline else SEQUENTIAL_DEPTH
        self._handoff: Handoff[tuple[_Live | _WarmUp, Backend, Prepared]] = Handoff(depth)
        self._checks: queue.Queue[tuple[_Live, ProofResult] | None] = queue.Queue(
            CHECKS_WAITING * max(1, config.check_workers)
        )
        self._checkers: ProofCheckers | None = None
        self._warm_ups: list[_WarmUp] = []
        self._live: dict[str, _Live] = {}
        self._cancelled: set[str] = set()
        self._lock = threading.Lock()
        self._finished = threading.Condition()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._origin = time.perf_counter()
        self._started = time.monotonic()
        self._vks: dict[str, VerifyingKey] = {}
        self._trace_lock = threading.Lock()

    def _load_key(self, spec: KeySpec) -> ResidentKey:
        return load_key(spec, self._setup_backend)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover the store after a crash, preload the configured keys, start the stages and
        make the warm-up proofs; a warm-up that fails is a :class:`CuzkError` naming the key."""
        for record in self.store.recover(self.config.max_attempts):
            self.listener.job_finished(record)
        for record, seq in self.store.queued():
            job = QueuedJob.make(record.job_id, record.key_id, record.priority, seq)
            self.scheduler.push(job, force=True)
        for key_id in self.config.preload:
            self.residency.preload(key_id)
            if self.residency.spec(key_id).kind is KeyKind.PARAMS:  # a zkey's jobs bring witnesses
                self._warm_ups += [_WarmUp(key_id) for _ in range(self.config.warm_up_proofs)]
        checkers = []
        workers = self.config.check_workers
        if workers and any(spec.kind is KeyKind.ZKEY for spec in self.config.keys.values()):
            self._checkers = ProofCheckers(workers, _say)
            checkers = [(f"cuzk-checker-{i}", self._checker_loop) for i in range(workers)]
        for name, target in (
            ("cuzk-synthesis", self._synthesis_loop),
            ("cuzk-prover", self._prover_loop),
            ("cuzk-sweeper", self._sweep_loop),
            *checkers,
        ):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        for warm_up in self._warm_ups:
            warm_up.done.wait()
            if warm_up.error is not None:
                raise CuzkError(f"key {warm_up.key_id!r}: warm-up proof failed: {warm_up.error}")

    @property
    def stopping(self) -> bool:
        """Whether :meth:`shutdown` has begun."""
        return self._stopping.is_set()

    @property
    def warm_up_ms(self) -> list[float]:
        """How long each warm-up proof took, from its synthesis to the end of its proof."""
        return [(w.ended - w.began) * 1000.0 for w in self._warm_ups if w.ended]

    def shutdown(self) -> None:
        """Stop taking jobs from the queue, finish the ones in flight, close the store."""
        self._stopping.set()
        self.scheduler.close()
        if self._threads:
            synthesis, prover, sweeper, *checkers = self._threads
            synthesis.join()
            self._handoff.close()
            prover.join()
            for _ in checkers:
                self._checks.put(None)
            for checker in checkers:
                checker.join()
            sweeper.join()
        if self._checkers is not None:
            self._checkers.close()
        with self._finished:
            self._finished.notify_all()
        self.residency.close()
        self.store.close()

    # ------------------------------------------------------------ requests

    def submit(self, request: JobRequest) -> Ticket:
        """Accept a job (durably) or refuse it: unknown key, bad input, or the queue is full."""
        admitted = admit(request, self.residency.spec(request.key_id), self._roots, self.store)
        if isinstance(admitted, Ticket):
            return admitted
        request = admitted
        self.scheduler.check_room()
        record, created, seq = self.store.insert(request)
        if not created:
            return retry_ticket(record, request)
        position = self.scheduler.push(
            QueuedJob.make(record.job_id, record.key_id, record.priority, seq), force=True
        )
        self.listener.job_submitted(record)
        return Ticket(record.job_id, True, position)

    def get(self, job_id: str) -> JobRecord:
        """The job's current record, or :class:`JobError` when unknown."""
        return self.store.known(job_id)

    def await_job(
        self, job_id: str, timeout_s: float | None = None, abandon: threading.Event | None = None
    ) -> JobRecord:
        """The job once final (marked fetched), or its current record when ``timeout_s``
        passes, ``abandon`` is set (the client went away) or the engine stops."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._finished:
            while True:
                record = self.get(job_id)
                if record.state.final:
                    self.store.mark_fetched(job_id)
                    return record
                left = 0.5 if deadline is None else deadline - time.monotonic()
                if left <= 0 or self._stopping.is_set() or (abandon and abandon.is_set()):
                    return record
                self._finished.wait(min(left, 0.5))

    def cancel(self, job_id: str) -> tuple[JobRecord, bool]:
        """Cancel a job: (its record, whether it had started). A queued job ends at once; a
        running one at its next phase boundary. A final job is left as it is."""
        record = self.get(job_id)
        if record.state.final:
            return record, False
        with self._lock:
            self._cancelled.add(job_id)
            running = job_id in self._live
        if self.scheduler.remove(job_id):
            self._end(job_id, JobState.CANCELLED, "cancelled before it ran")
            return self.get(job_id), False
        return self.get(job_id), running

    def verifying_key(self, key_id: str) -> VerifyingKey:
        """The key's verifying key (read once)."""
        spec = self.residency.spec(key_id)
        if key_id not in self._vks:
            self._vks[key_id] = read_verifying_key(spec)
        return self._vks[key_id]

    def preload(self, key_id: str) -> tuple[bool, float]:
        """Make a key hot now: (whether it already was, load ms)."""
        return self.residency.preload(key_id)

    def evict(self, key_id: str) -> tuple[bool, int]:
        """Drop a key to cold: (whether it was hot, bytes freed)."""
        return self.residency.evict(key_id)

    def status(self) -> EngineStatus:
        """Queue, jobs and keys now."""
        counts = self.store.counts()
        return EngineStatus(
            backend=self.config.profile.backend,
            pipeline=self.config.pipeline,
            queued=len(self.scheduler),
            running=counts[JobState.RUNNING],
            counts=counts,
            keys=self.residency.status(),
            budget_bytes=self.residency.budget_bytes,
            hot_bytes=self.residency.hot_bytes(),
            uptime_s=time.monotonic() - self._started,
        )

    # ------------------------------------------------------------ the stages

    def _synthesis_loop(self) -> None:
        self._synthesize_warm_ups()
        while True:
            batch = self.scheduler.next_batch()
            if batch is None:
                return
            for queued in batch:
                if not self._handoff.reserve():
                    return
                if self._stopping.is_set():  # the rest stay queued in the store
                    self._handoff.release()
                    return
                try:
                    handed = self.scheduler.start(queued.job_id) and self._stage_one(queued)
                except Exception as exc:  # the thread outlives any job (the store's errors too)
                    _say(f"stage 1, job {queued.job_id}: {_reason(exc)}")
                    handed = False
                if not handed:
                    self._handoff.release()  # cancelled while it waited, or ended in stage 1

    def _synthesize_warm_ups(self) -> None:
        for n, warm_up in enumerate(self._warm_ups):
            # One at a time: a GPU backend times its two witness kernels in a program's second
            # run when their model's call is close (backends/gpu/witness.py), which wants the
            # device to itself, not beside the previous warm-up's MSMs.
            previous = self._warm_ups[n - 1].done if n else None
            while previous is not None and not previous.wait(0.1) and not self._stopping.is_set():
                continue
            if not self._handoff.reserve():  # shut down meanwhile
                for left in self._warm_ups[n:]:
                    left.done.set()
                return
            backend = self._plugins.backend(self.config.profile, Timer(level=0))
            warm_up.began = time.perf_counter()
            try:
                prepared = synthesize_job(backend, self.residency.spec(warm_up.key_id), JobInput())
            except Exception as exc:
                self._handoff.release()
                warm_up.error = _reason(exc)
                warm_up.done.set()
                continue
            self._handoff.put((warm_up, backend, prepared))

    def _prove_warm_up(self, warm_up: _WarmUp, backend: Backend, prepared: Prepared) -> None:
        try:
            with self.residency.lease(warm_up.key_id) as lease:
                prove_prepared(backend, prepared, lease.key, None, NullProgress())
        except Exception as exc:
            warm_up.error = _reason(exc)
        warm_up.ended = time.perf_counter()
        warm_up.done.set()

    def _stage_one(self, queued: QueuedJob) -> bool:
        """Synthesize one job and hand it to stage 2; False when it ended here instead."""
        job_id = queued.job_id
        if job_id in self._cancelled:
            self._end(job_id, JobState.CANCELLED, "cancelled before it ran")
            return False
        with self._lock:  # marked running and live in one step, as cancel() sees them
            if not self.store.mark_running(job_id):
                return False
            record = self.get(job_id)
            timer = Timer()  # its spans go on the engine's clock from this offset
            live = _Live(record, timer, time.perf_counter() - self._origin, time.time())
            self._live[job_id] = live
        try:
            backend = self._plugins.backend(self.config.profile, timer)
            spec = self.residency.spec(record.key_id)
            with phase_span(backend, SYNTHESIS):
                prepared = synthesize_job(backend, spec, record.input)
        except Exception as exc:
            self._fail(live, exc)
            return False
        if job_id in self._cancelled:
            self._finish_cancelled(live, "synthesis")
            return False
        self._handoff.put((live, backend, prepared))
        return True

    def _prover_loop(self) -> None:
        while True:
            item = self._handoff.get()
            if item is None:
                return
            try:
                self._prove_handed(*item)
            except Exception as exc:  # the thread outlives any job (the store's errors too)
                _say(f"stage 2: {_reason(exc)}")
            finally:
                del item  # the job's device arrays (its witness, products) go before the wait
                self._handoff.done()

    def _prove_handed(self, live: _Live | _WarmUp, backend: Backend, prepared: Prepared) -> None:
        if isinstance(live, _WarmUp):
            self._prove_warm_up(live, backend, prepared)
        else:
            self._stage_two(live, backend, prepared)

    def _stage_two(self, live: _Live, backend: Backend, prepared: Prepared) -> None:
        record = live.record
        if record.job_id in self._cancelled:
            self._finish_cancelled(live, "synthesis")
            return
        try:
            with contextlib.ExitStack() as held:
                with live.timer.span(KEY_LOAD, backend=backend.name):
                    lease = held.enter_context(self.residency.lease(record.key_id))
                result = prove_prepared(
                    backend,
                    prepared,
                    lease.key,
                    record.input.seed,
                    _CancelPoint(self._cancelled, record.job_id),
                )
        except JobCancelled as stop:
            self._finish_cancelled(live, str(stop))
            return
        except Exception as exc:
            self._fail(live, exc)
            return
        if prepared.assignment is None:
            # A zkey job's witness was never checked (the key has no C rows): its proof is
            # verified before it is kept, as `cuzk prove` does.
            if self._checkers is None or not self.config.pipeline:
                self._check(live, result)
            else:
                self._checks.put((live, result))  # this thread goes on meanwhile
        else:
            self._keep(live, result)

    def _checker_loop(self) -> None:
        while True:
            item = self._checks.get()
            if item is None:
                return
            try:
                self._check(*item)
            except Exception as exc:  # the thread outlives any job (the store's errors too)
                _say(f"checker: {_reason(exc)}")

    def _check(self, live: _Live, result: ProofResult) -> None:
        """Verify a zkey job's proof, then keep it; a cancel before or during the check (a
        phase boundary on each side) ends the job instead."""
        if live.record.job_id in self._cancelled:
            self._finish_cancelled(live, "its proof")
            return
        try:
            key_id = live.record.key_id
            with live.timer.span(CHECK_PROOF):
                vk = self.verifying_key(key_id)
                path = str(self.residency.spec(key_id).path)
                args = (vk, result.proof, result.public_inputs, path)
                if self._checkers is None:
                    check_own_proof(*args)
                else:
                    self._checkers.check(*args)
        except Exception as exc:
            self._fail(live, exc)
            return
        if live.record.job_id in self._cancelled:
            self._finish_cancelled(live, "its proof check")
            return
        self._keep(live, result)

    def _keep(self, live: _Live, result: ProofResult) -> None:
        """Store a finished job's proof and end it."""
        try:
            timings = self._timings(live, time.time())
            self.store.finish(
                live.record.job_id, result.proof.to_bytes(), result.public_inputs, timings
            )
        except Exception as exc:
            self._fail(live, exc)
            return
        self._after(live)

    # ------------------------------------------------------------ endings

    def _timings(self, live: _Live, finished: float) -> PhaseTimings:
        phases = live.timer.phase_totals()
        synthesis = phases.get(SYNTHESIS, 0.0)
        key_load = phases.get(KEY_LOAD, 0.0)
        return PhaseTimings(
            queue_wait_ms=(live.started_at - live.record.submitted_at) * 1000.0,
            key_load_ms=key_load,
            synthesis_ms=synthesis,
            # A job's own phases run one after another, except B·G2 on CPU threads beside the
            # G1 MSMs: the wall time of all of them, less synthesis and key load, counts that once.
            gpu_ms=max(0.0, live.timer.wall_ms() - synthesis - key_load),
            total_ms=(finished - live.record.submitted_at) * 1000.0,
        )

    def _fail(self, live: _Live, exc: Exception) -> None:
        self._end_live(live, JobState.FAILED, _reason(exc))

    def _finish_cancelled(self, live: _Live, where: str) -> None:
        self._end_live(live, JobState.CANCELLED, f"cancelled while running (after {where})")

    def _end_live(self, live: _Live, state: JobState, reason: str) -> None:
        """End a running job; if the store cannot be written it stays running there (a restart
        runs it again) and the engine goes on."""
        try:
            self.store.end(live.record.job_id, state, reason)
        except sqlite3.Error as exc:
            _say(f"job {live.record.job_id}: the job store could not be written ({exc}): {reason}")
        self._after(live)

    def _end(self, job_id: str, state: JobState, reason: str) -> None:
        """End a job that never started (cancelled in the queue)."""
        if self.store.end(job_id, state, reason):
            record = self.get(job_id)
            self.listener.job_finished(record)
        with self._lock:
            self._cancelled.discard(job_id)
        with self._finished:
            self._finished.notify_all()

    def _after(self, live: _Live) -> None:
        job_id = live.record.job_id
        with self._lock:
            self._live.pop(job_id, None)
            self._cancelled.discard(job_id)
        try:
            self._append_trace(live)
        except OSError as exc:  # the trace is an observation: a job never fails for it
            _say(f"job {job_id}: the trace could not be written: {exc}")
        try:
            record = self.store.get(job_id)
        except sqlite3.Error as exc:
            _say(f"job {job_id}: the job store could not be read: {exc}")
            record = None
        if record is not None:
            self.listener.job_finished(record)
        with self._finished:
            self._finished.notify_all()

    def _append_trace(self, live: _Live) -> None:
        """The job's spans on the engine's clock, named ``phase jJOB``, for ``cuzk trace show``."""
        path = self.config.trace_path
        if path is None:
            return
        tag = live.record.job_id[:6]
        lines = []
        for span in live.timer.spans:
            record: dict[str, Any] = span.to_json()
            record["name"] = f"{span.name} j{tag}"
            if span.parent is not None:
                record["parent"] = f"{span.parent} j{tag}"
            record["start"] = round(span.start + live.offset_s, 6)
            if span.end is not None:
                record["end"] = round(span.end + live.offset_s, 6)
            record["job"] = live.record.job_id
            lines.append(json.dumps(record) + "\n")
        with self._trace_lock, path.open("a") as f:
            f.writelines(lines)

    def _sweep_loop(self) -> None:
        self.store.sweep(self.config.result_ttl_s, self.config.fetched_ttl_s)
        while not self._stopping.wait(SWEEP_INTERVAL_S):
            self.store.sweep(self.config.result_ttl_s, self.config.fetched_ttl_s)


def _say(line: str) -> None:
    """A line in the daemon's log (its stderr): what went wrong outside any one job's reason."""
    print(f"cuzk engine: {line}", file=sys.stderr, flush=True)


def _reason(exc: Exception) -> str:
    """A failed job's one-line reason."""
    if isinstance(exc, CuzkError):
        return str(exc).splitlines()[0]
    return f"internal error: {type(exc).__name__}: {exc}".splitlines()[0]
