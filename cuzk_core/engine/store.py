"""The job store: SQLite in WAL mode for job state and results, a spool folder for inputs.

Every accepted job is a committed (fsynced) row before its id is returned, so ``kill -9``, or
a power loss, loses none. A result (proof, public inputs, timings) is written in the same
fsynced transaction that marks the job done. On open, jobs left ``running`` by a crash are
queued again, or failed with the reason once they have been started ``max_attempts`` times.
One process at a time holds a store (a lock on ``jobs.lock``). Finished jobs are deleted, with
their spool folders, ``result_ttl_s`` after they finished, or ``fetched_ttl_s`` after a client
fetched them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from cuzk_core.engine.jobs import (
    JobInput,
    JobRecord,
    JobRequest,
    JobState,
    PhaseTimings,
    Priority,
    UnknownJob,
)
from cuzk_core.errors import CuzkError
from cuzk_core.fileio import write_bytes_atomic

DB_FILE = "jobs.sqlite3"
SPOOL_DIR = "spool"
LOCK_FILE = "jobs.lock"
WITNESS_FILE = "input.wtns"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL UNIQUE,
    idempotency_key TEXT UNIQUE,
    key_id TEXT NOT NULL,
    priority INTEGER NOT NULL,
    state TEXT NOT NULL,
    input TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    submitted_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    fetched_at REAL,
    proof BLOB,
    public_inputs TEXT,
    timings TEXT
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, seq);
"""
_COLUMNS = (
    "job_id, key_id, priority, state, input, attempts, error, submitted_at, started_at, "
    "finished_at, proof, public_inputs, timings, idempotency_key"
)


def _record(row: tuple[Any, ...]) -> JobRecord:
    (job_id, key_id, priority, state, inputs, attempts, error, submitted, started, finished,
     proof, public, timings, idempotency) = row  # fmt: skip
    return JobRecord(
        job_id=job_id,
        key_id=key_id,
        priority=Priority(priority),
        state=JobState(state),
        input=JobInput.from_json(json.loads(inputs)),
        attempts=attempts,
        error=error,
        submitted_at=submitted,
        started_at=started,
        finished_at=finished,
        proof=proof,
        public_inputs=tuple(int(v) for v in json.loads(public)) if public else (),
        timings=PhaseTimings(**json.loads(timings)) if timings else None,
        idempotency_key=idempotency,
    )


def _lock_folder(folder: Path) -> IO[bytes]:
    """An exclusive lock on ``folder``'s job store for as long as the returned file is open:
    two daemons on one store would each run the other's jobs and lose their results."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        held = (folder / LOCK_FILE).open("ab")
    except OSError as exc:
        raise CuzkError(f"{folder}: cannot open the job store there: {exc.strerror}") from None
    try:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        held.close()
        raise CuzkError(
            f"{folder}: another process (a daemon?) has this state folder's job store open; "
            "give each daemon its own --state-dir"
        ) from None
    return held


class JobStore:
    """Jobs in ``folder``/jobs.sqlite3, inputs in ``folder``/spool/JOB/; thread-safe."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.spool = folder / SPOOL_DIR
        self._lock_file = _lock_folder(folder)
        try:
            self.spool.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                folder / DB_FILE, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            self._lock_file.close()
            raise CuzkError(f"{folder}: cannot open the job store there: {exc}") from None
        self._lock = threading.Lock()
        try:
            self._check_rows()
        except BaseException:
            self.close()
            raise

    def _check_rows(self) -> None:
        """Every row reads as a job, so that no later call fails on one: a damaged row (edited
        by hand, another program) is a one-line error at open."""
        for row in self._db.execute(f"SELECT {_COLUMNS} FROM jobs"):
            try:
                _record(row)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise CuzkError(
                    f"{self.folder / DB_FILE}: job {row[0]!r} is damaged ({exc}); delete its row, "
                    "or the file to start with no jobs"
                ) from None

    @contextlib.contextmanager
    def _transaction(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``durable`` ones are fsynced before they return (acceptance,
        results, endings), the others (attempt starts, fetch marks) only reach the WAL: a
        process crash keeps them, a power loss may drop them, and the next durable commit
        fsyncs them too."""
        with self._lock:
            self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the database and let another process open the folder."""
        with self._lock:
            self._db.close()
        self._lock_file.close()

    def insert(self, request: JobRequest) -> tuple[JobRecord, bool, int]:
        """Store a new queued job: (the job, True, its seq); for an idempotency key seen
        before, (that job, False, its seq). The request's witness upload goes to the spool."""
        if request.idempotency_key is not None:
            found = self.get_by_idempotency_row(request.idempotency_key)
            if found is not None:
                return found[0], False, found[1]
        job_id = uuid.uuid4().hex
        job_input = request.input
        if request.witness_upload is not None:
            path = self.spool / job_id / WITNESS_FILE
            write_bytes_atomic(path, request.witness_upload)
            job_input = JobInput(None, str(path), job_input.seed)
        now = time.time()
        try:
            with self._transaction() as db:
                cursor = db.execute(
                    "INSERT INTO jobs (job_id, idempotency_key, key_id, priority, state, input,"
                    " submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        job_id,
                        request.idempotency_key,
                        request.key_id,
                        int(request.priority),
                        JobState.QUEUED.value,
                        json.dumps(job_input.to_json()),
                        now,
                    ),
                )
                seq = cursor.lastrowid
        except sqlite3.IntegrityError:  # the same idempotency key, submitted concurrently
            shutil.rmtree(self.spool / job_id, ignore_errors=True)
            found = self.get_by_idempotency_row(request.idempotency_key or "")
            assert found is not None
            return found[0], False, found[1]
        record = self.get(job_id)
        assert record is not None and seq is not None
        return record, True, seq

    def get_by_idempotency(self, key: str) -> JobRecord | None:
        """The job submitted with idempotency key ``key``, or None."""
        found = self.get_by_idempotency_row(key)
        return None if found is None else found[0]

    def get_by_idempotency_row(self, key: str) -> tuple[JobRecord, int] | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS}, seq FROM jobs WHERE idempotency_key = ?", (key,)
            ).fetchone()
        return None if row is None else (_record(row[:-1]), row[-1])

    def get(self, job_id: str) -> JobRecord | None:
        """The job, or None when unknown (or expired)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE job_id = ?", (job_id,)
            ).fetchone()
        return None if row is None else _record(row)

    def known(self, job_id: str) -> JobRecord:
        """The job, or :class:`UnknownJob` when unknown (or expired)."""
        record = self.get(job_id)
        if record is None:
            raise UnknownJob(f"unknown job {job_id!r} (never submitted, or its result expired)")
        return record

    def queued(self) -> list[tuple[JobRecord, int]]:
        """Every queued job with its seq, in submission order."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS}, seq FROM jobs WHERE state = ? ORDER BY seq",
                (JobState.QUEUED.value,),
            ).fetchall()
        return [(_record(row[:-1]), row[-1]) for row in rows]

    def recover(self, max_attempts: int) -> list[JobRecord]:
        """After a crash: re-queue jobs left running, failing those started ``max_attempts``
        times already; returns the failed ones, for the listener."""
        reason = (
            f"the daemon stopped while proving this job {max_attempts} times; not retried again"
        )
        with self._transaction() as db:
            failed = [
                row[0]
                for row in db.execute(
                    "SELECT job_id FROM jobs WHERE state = ? AND attempts >= ?",
                    (JobState.RUNNING.value, max_attempts),
                )
            ]
            db.execute(
                "UPDATE jobs SET state = ?, error = ?, finished_at = ? "
                "WHERE state = ? AND attempts >= ?",
                (JobState.FAILED.value, reason, time.time(), JobState.RUNNING.value, max_attempts),
            )
            db.execute(
                "UPDATE jobs SET state = ? WHERE state = ?",
                (JobState.QUEUED.value, JobState.RUNNING.value),
            )
        return [record for record in map(self.get, failed) if record is not None]

    def mark_running(self, job_id: str) -> bool:
        """Queued → running (one more attempt); False when it is no longer queued."""
        with self._transaction(durable=False) as db:
            cursor = db.execute(
                "UPDATE jobs SET state = ?, attempts = attempts + 1, started_at = ? "
                "WHERE job_id = ? AND state = ?",
                (JobState.RUNNING.value, time.time(), job_id, JobState.QUEUED.value),
            )
            return cursor.rowcount == 1

    def finish(
        self, job_id: str, proof: bytes, public_inputs: list[int], timings: PhaseTimings
    ) -> None:
        """Running → done, with the result, in one transaction."""
        with self._transaction() as db:
            db.execute(
                "UPDATE jobs SET state = ?, proof = ?, public_inputs = ?, timings = ?, "
                "finished_at = ?, error = NULL WHERE job_id = ? AND state = ?",
                (
                    JobState.DONE.value,
                    proof,
                    json.dumps([str(v) for v in public_inputs]),
                    json.dumps(timings.to_json()),
                    time.time(),
                    job_id,
                    JobState.RUNNING.value,
                ),
            )

    def end(self, job_id: str, state: JobState, reason: str) -> bool:
        """A job that is not final → failed or cancelled, with the reason; False if it was
        final already."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE jobs SET state = ?, error = ?, finished_at = ? "
                "WHERE job_id = ? AND state IN (?, ?)",
                (
                    state.value,
                    reason,
                    time.time(),
                    job_id,
                    JobState.QUEUED.value,
                    JobState.RUNNING.value,
                ),
            )
            return cursor.rowcount == 1

    def mark_fetched(self, job_id: str) -> None:
        """Note that a client received the job's final state (starts its ``fetched_ttl_s``)."""
        with self._transaction(durable=False) as db:
            db.execute(
                "UPDATE jobs SET fetched_at = COALESCE(fetched_at, ?) WHERE job_id = ?",
                (time.time(), job_id),
            )

    def counts(self) -> dict[JobState, int]:
        """How many jobs are in each state."""
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall()
        found = {JobState(state): count for state, count in rows}
        return {state: found.get(state, 0) for state in JobState}

    def sweep(self, result_ttl_s: float, fetched_ttl_s: float) -> int:
        """Delete expired finished jobs and their spool folders; how many went."""
        now = time.time()
        final = tuple(s.value for s in JobState if s.final)
        with self._transaction() as db:
            expired = [
                row[0]
                for row in db.execute(
                    "SELECT job_id FROM jobs WHERE state IN (?, ?, ?) AND "
                    "(finished_at < ? OR (fetched_at IS NOT NULL AND fetched_at < ?))",
                    (*final, now - result_ttl_s, now - fetched_ttl_s),
                )
            ]
            db.executemany("DELETE FROM jobs WHERE job_id = ?", [(j,) for j in expired])
        for job_id in expired:
            shutil.rmtree(self.spool / job_id, ignore_errors=True)
        return len(expired)
