"""The daemon's job store with the one transition a fleet adds: a job whose worker died goes
back to the queue (or fails once it has been started ``max_attempts`` times)."""

from __future__ import annotations

import time

from cuzk_core.engine.jobs import JobState
from cuzk_core.engine.store import JobStore


class FleetStore(JobStore):
    """:class:`JobStore` plus :meth:`requeue`."""

    def requeue(self, job_id: str, max_attempts: int, reason: str) -> JobState | None:
        """A running job whose worker died: queued again, or failed with ``reason`` once it has
        had ``max_attempts`` starts; its new state, or None when it was not running."""
        with self._transaction() as db:
            row = db.execute(
                "SELECT attempts FROM jobs WHERE job_id = ? AND state = ?",
                (job_id, JobState.RUNNING.value),
            ).fetchone()
            if row is None:
                return None
            if row[0] >= max_attempts:
                db.execute(
                    "UPDATE jobs SET state = ?, error = ?, finished_at = ? WHERE job_id = ?",
                    (JobState.FAILED.value, reason, time.time(), job_id),
                )
                return JobState.FAILED
            db.execute(
                "UPDATE jobs SET state = ?, started_at = NULL WHERE job_id = ?",
                (JobState.QUEUED.value, job_id),
            )
            return JobState.QUEUED

    def seq_of(self, job_id: str) -> int:
        """The job's submission order."""
        with self._lock:
            row = self._db.execute("SELECT seq FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return int(row[0])
