"""The queue: priorities (critical > high > normal > low, then submission order) and a batch
collector that hands out runs of same-key jobs so a key is loaded once for all of them.

A batch is the queue head plus the queued jobs of the same key and priority, up to
``max_batch_size``; when it is short, the collector waits up to ``max_batch_wait_ms`` for more
of them, ending the wait early when a job of higher priority arrives. The engine runs a batch's
jobs back to back under one key lease (today's prover has no multi-proof MSM to fuse them into).

A job handed out in a batch still waits (for a place in the engine's pipeline) until the engine
:meth:`Scheduler.start` s it: until then it counts toward ``max_queued`` and can be removed, so
the limit and the queue length always mean every accepted job that has not started.
"""

from __future__ import annotations

import heapq
import threading
import time

import attrs

from cuzk_core.engine.jobs import Priority, QueueFull


@attrs.frozen(order=True)
class QueuedJob:
    """A job waiting to run; ordered so that the heap's smallest is the next to run."""

    rank: tuple[int, int] = attrs.field(repr=False)
    job_id: str = attrs.field(order=False)
    key_id: str = attrs.field(order=False)
    priority: Priority = attrs.field(order=False)

    @classmethod
    def make(cls, job_id: str, key_id: str, priority: Priority, seq: int) -> QueuedJob:
        """A queue entry; ``seq`` is the job's submission order (ties of priority)."""
        return cls((-int(priority), seq), job_id, key_id, priority)


class Scheduler:
    """A thread-safe priority queue with same-key batching; :meth:`close` wakes every waiter."""

    def __init__(self, max_queued: int, max_batch_size: int, max_batch_wait_ms: float) -> None:
        self.max_queued = max_queued
        self.max_batch_size = max_batch_size
        self.max_batch_wait_s = max_batch_wait_ms / 1000.0
        self._heap: list[QueuedJob] = []
        self._queued: dict[str, QueuedJob] = {}
        self._handed: dict[str, QueuedJob] = {}
        """Jobs handed out in a batch that have not started: waiting for a pipeline place."""
        self._changed = threading.Condition()
        self._closed = False

    def __len__(self) -> int:
        """Jobs waiting: queued, or handed out in a batch and not started."""
        with self._changed:
            return self._waiting()

    def check_room(self) -> None:
        """:class:`QueueFull` when a new job would not fit."""
        with self._changed:
            self._check_room()

    def push(self, job: QueuedJob, force: bool = False) -> int:
        """Queue ``job`` (``force``: even past ``max_queued``, for jobs accepted before a
        restart); returns how many queued jobs run before it."""
        with self._changed:
            if not force:
                self._check_room()
            heapq.heappush(self._heap, job)
            self._queued[job.job_id] = job
            self._changed.notify_all()
            return len(self._handed) + sum(1 for other in self._queued.values() if other < job)

    def remove(self, job_id: str) -> bool:
        """Take a waiting job out (a cancel); False when it has started or is unknown."""
        with self._changed:
            if self._handed.pop(job_id, None) is not None:
                return True
            return self._queued.pop(job_id, None) is not None  # its heap entry is skipped later

    def start(self, job_id: str) -> bool:
        """A job handed out in a batch starts now (it stops counting as waiting); False when it
        was removed while it waited."""
        with self._changed:
            return self._handed.pop(job_id, None) is not None

    def close(self) -> None:
        """Stop handing out batches; :meth:`next_batch` returns None from now on."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def next_batch(self) -> list[QueuedJob] | None:
        """Block until a job is queued; the batch starting with it, or None once closed."""
        with self._changed:
            while True:
                if self._closed:
                    return None
                head = self._pop_live()
                if head is not None:
                    break
                self._changed.wait()
            batch = [head, *self._take_same(head, self.max_batch_size - 1)]
            deadline = time.monotonic() + self.max_batch_wait_s
            while len(batch) < self.max_batch_size and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0 or self._outranked(head):
                    break
                self._changed.wait(left)
                batch += self._take_same(head, self.max_batch_size - len(batch))
            self._handed.update((job.job_id, job) for job in batch)
            return batch

    # ------------------------------------------------------------ internals (hold the lock)

    def _waiting(self) -> int:
        return len(self._queued) + len(self._handed)

    def _check_room(self) -> None:
        if self._waiting() >= self.max_queued:
            raise QueueFull(
                f"the queue is full ({self.max_queued} jobs waiting to start); retry later"
            )

    def _pop_live(self) -> QueuedJob | None:
        while self._heap:
            job = heapq.heappop(self._heap)
            if self._queued.get(job.job_id) is job:
                del self._queued[job.job_id]
                return job
        return None

    def _take_same(self, head: QueuedJob, limit: int) -> list[QueuedJob]:
        if limit <= 0:
            return []
        same = sorted(
            j
            for j in self._queued.values()
            if j.key_id == head.key_id and j.priority == head.priority
        )[:limit]
        for job in same:
            del self._queued[job.job_id]
        return same

    def _outranked(self, head: QueuedJob) -> bool:
        return any(j.priority > head.priority for j in self._queued.values())
