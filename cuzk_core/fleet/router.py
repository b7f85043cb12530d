"""Which worker runs which queued job: key affinity first, then the cheapest eviction.

The router keeps a model of every worker: its free slots, the keys it holds hot (and their
last use), its byte budget. Each planning pass repeatedly picks the best (job, worker) pair
among each key's first queued job and each worker with a free slot, ranked by

1. the job's priority (higher first), then
2. the cost of running it there: 0 with its key hot on the worker; otherwise the key's load
   time plus the load time of every key the load would evict that still has queued jobs and no
   other worker holding it, then
3. the worker's jobs in flight (fewer first), then submission order.

A key hot on no worker may go to any worker. A key hot on some worker is loaded on one more
only when its queue would take longer on the workers holding it than the load costs:
``pending × proof_s / holders > cost``; until a proof of the key has been timed, never. So a
key is loaded on at most as many workers as its queue needs, and a worker keeps its keys for
as long as they have work.
"""

from __future__ import annotations

import heapq
import itertools

import attrs

from cuzk_core.engine.jobs import Priority

DEFAULT_LOAD_BYTES_PER_S = 1 << 30
"""A key's load time before any load was timed: its size at 1 GiB/s (the key cache read from
the page cache; bench/NOTES.md). Replaced by the rate of the first load timed."""
SMOOTHING = 0.3
"""Weight of a new timing in a key's running estimates of proof and load time."""


@attrs.frozen(order=True)
class Pending:
    """A queued job as the router sees it; ordered so the smallest runs first."""

    rank: tuple[int, int] = attrs.field(repr=False)
    job_id: str = attrs.field(order=False)
    key_id: str = attrs.field(order=False)
    priority: Priority = attrs.field(order=False)
    avoid: frozenset[str] = attrs.field(order=False, default=frozenset())
    """Workers this job failed on (they died under it): others are preferred."""

    @classmethod
    def make(
        cls,
        job_id: str,
        key_id: str,
        priority: Priority,
        seq: int,
        avoid: frozenset[str] = frozenset(),
    ) -> Pending:
        """A queue entry; ``seq`` is the job's submission order (ties of priority)."""
        return cls((-int(priority), seq), job_id, key_id, priority, avoid)


@attrs.define(eq=False)
class WorkerModel:
    """What the router knows of one worker."""

    name: str
    slots: int
    budget_bytes: int
    up: bool = True
    inflight: dict[str, str] = attrs.field(factory=dict)
    """job id → key id of the jobs it runs now."""
    hot: dict[str, int] = attrs.field(factory=dict)
    """key id → the tick it was last used at: keys hot there, or being loaded for a job."""

    @property
    def free_slots(self) -> int:
        """How many more jobs it may take now."""
        return self.slots - len(self.inflight) if self.up else 0


@attrs.define
class KeyCosts:
    """Running estimates of one key's proof and load time, in seconds (None: not timed yet)."""

    proof_s: float | None = None
    load_s: float | None = None

    @staticmethod
    def _blend(old: float | None, new: float) -> float:
        return new if old is None else (1 - SMOOTHING) * old + SMOOTHING * new


class Router:
    """The queue of jobs not yet sent to a worker, and the placement of each on one."""

    def __init__(self, key_bytes: dict[str, int]) -> None:
        self.key_bytes = dict(key_bytes)
        """key id → bytes it takes hot (its size on disk until a worker reports the real one)."""
        self.workers: dict[str, WorkerModel] = {}
        self.costs = {key_id: KeyCosts() for key_id in key_bytes}
        self._queues: dict[str, list[Pending]] = {key_id: [] for key_id in key_bytes}
        self._queued: dict[str, Pending] = {}
        self._counts = dict.fromkeys(key_bytes, 0)
        self._tick = itertools.count(1)
        self._load_rate: float | None = None

    # ------------------------------------------------------------ the queue

    def __len__(self) -> int:
        return len(self._queued)

    def add(self, job: Pending) -> None:
        """Queue a job (new, recovered after a restart, or back from a worker that died)."""
        self._queued[job.job_id] = job
        self._counts[job.key_id] += 1
        heapq.heappush(self._queues[job.key_id], job)

    def remove(self, job_id: str) -> bool:
        """Take a queued job out (a cancel); False when it is not queued."""
        job = self._queued.pop(job_id, None)  # its heap entry is skipped later
        if job is None:
            return False
        self._counts[job.key_id] -= 1
        return True

    def position(self, job: Pending) -> int:
        """How many queued jobs rank before ``job`` (for a submission's reply)."""
        return sum(1 for other in self._queued.values() if other < job)

    def queued_of(self, key_id: str) -> int:
        """Jobs of ``key_id`` waiting for a worker."""
        return self._counts[key_id]

    # ------------------------------------------------------------ workers

    def add_worker(self, name: str, slots: int, budget_bytes: int) -> None:
        """A worker ready for jobs (new, or back after a restart with every key cold)."""
        self.workers[name] = WorkerModel(name, slots, budget_bytes)

    def worker_down(self, name: str) -> list[str]:
        """A worker died (or is restarting): its keys count as gone; the ids of the jobs it
        was running, which the caller queues again."""
        worker = self.workers[name]
        worker.up = False
        worker.hot.clear()
        lost = list(worker.inflight)
        worker.inflight.clear()
        return lost

    def remove_worker(self, name: str) -> None:
        """Forget a worker for good."""
        self.workers.pop(name, None)

    def finished(
        self,
        name: str,
        job_id: str,
        hot: dict[str, int],
        proof_s: float | None = None,
        load_s: float | None = None,
    ) -> None:
        """A job ended on worker ``name``, which now holds ``hot`` (key id → bytes); the job's
        proof and key load times (when it proved, and loaded its key) update the estimates."""
        worker = self.workers.get(name)
        if worker is None:
            return
        key_id = worker.inflight.pop(job_id, None)
        self.sync(name, hot)
        if key_id is not None and key_id in worker.hot:
            worker.hot[key_id] = next(self._tick)
        if key_id is None:
            return
        costs = self.costs[key_id]
        if proof_s is not None:
            costs.proof_s = KeyCosts._blend(costs.proof_s, proof_s)
        if load_s is not None and load_s > 0:
            costs.load_s = KeyCosts._blend(costs.load_s, load_s)
            if self._load_rate is None:
                self._load_rate = self.key_bytes[key_id] / load_s

    def sync(self, name: str, hot: dict[str, int]) -> None:
        """Worker ``name`` reports the keys hot there (key id → bytes); keys its running jobs
        need count as hot too (they are being loaded)."""
        worker = self.workers.get(name)
        if worker is None:
            return
        for held, nbytes in hot.items():
            self.key_bytes[held] = nbytes
        in_use = set(worker.inflight.values())
        worker.hot = {
            k: worker.hot.get(k, next(self._tick)) for k in (hot.keys() | in_use) if k in self.costs
        }

    def holders(self, key_id: str) -> list[str]:
        """The live workers holding ``key_id`` hot (or loading it)."""
        return [w.name for w in self.workers.values() if w.up and key_id in w.hot]

    # ------------------------------------------------------------ planning

    def load_s(self, key_id: str) -> float:
        """The expected time to load ``key_id`` on a worker."""
        timed = self.costs[key_id].load_s
        if timed is not None:
            return timed
        rate = self._load_rate or DEFAULT_LOAD_BYTES_PER_S
        return self.key_bytes[key_id] / rate

    def _evicted(self, worker: WorkerModel, key_id: str) -> list[str]:
        """The keys ``worker`` would drop to fit ``key_id``: least recently used first,
        keys its running jobs hold last (those go once the jobs end)."""
        in_use = set(worker.inflight.values())
        order = sorted(worker.hot, key=lambda k: (k in in_use, worker.hot[k]))
        used = sum(self.key_bytes[k] for k in worker.hot)
        need = self.key_bytes[key_id]
        evicted = []
        for victim in order:
            if used + need <= worker.budget_bytes:
                break
            evicted.append(victim)
            used -= self.key_bytes[victim]
        return evicted

    def cost(self, key_id: str, worker: WorkerModel) -> float | None:
        """Seconds it costs to run a job of ``key_id`` on ``worker`` beyond the proof itself,
        or None when it should wait for a worker that holds its key."""
        if key_id in worker.hot:
            return 0.0
        cost = self.load_s(key_id)
        for victim in self._evicted(worker, key_id):
            others = [h for h in self.holders(victim) if h != worker.name]
            if not others and self.queued_of(victim):
                cost += self.load_s(victim)
        holders = self.holders(key_id)
        if not holders:
            return cost
        proof_s = self.costs[key_id].proof_s
        if proof_s is None:
            return None
        running = sum(1 for w in self.workers.values() for k in w.inflight.values() if k == key_id)
        pending = self.queued_of(key_id) + running
        return cost if pending * proof_s / len(holders) > cost else None

    def _first(self, key_id: str) -> Pending | None:
        queue = self._queues[key_id]
        while queue and self._queued.get(queue[0].job_id) is not queue[0]:
            heapq.heappop(queue)
        return queue[0] if queue else None

    def _candidate(self, key_id: str, worker: WorkerModel, spare: bool) -> Pending | None:
        """The first queued job of ``key_id`` that may run on ``worker``: one that did not fail
        there, unless no other live worker (``spare`` False) could take it."""
        head = self._first(key_id)
        if head is None or worker.name not in head.avoid or not spare:
            return head
        for job in sorted(self._queues[key_id]):
            if self._queued.get(job.job_id) is job and worker.name not in job.avoid:
                return job
        return None

    def plan(self) -> list[tuple[Pending, str]]:
        """Jobs to send now, each with its worker, taken off the queue; the model counts them
        as running there (with their keys hot) until :meth:`finished` or :meth:`worker_down`."""
        assignments = []
        while self._queued:
            free = [w for w in self.workers.values() if w.free_slots > 0]
            if not free:
                break
            live = sum(1 for w in self.workers.values() if w.up)
            best: tuple[tuple[int, float, int, int, str], Pending, WorkerModel] | None = None
            for key_id in self._queues:
                for worker in free:
                    job = self._candidate(key_id, worker, spare=live > 1)
                    if job is None:
                        continue
                    cost = self.cost(key_id, worker)
                    if cost is None:
                        continue
                    rank = (job.rank[0], cost, len(worker.inflight), job.rank[1], worker.name)
                    if best is None or rank < best[0]:
                        best = (rank, job, worker)
            if best is None:
                break
            _, job, worker = best
            in_use = set(worker.inflight.values())
            for victim in self._evicted(worker, job.key_id):
                if victim not in in_use:  # a key in use goes when its jobs end
                    del worker.hot[victim]
            worker.hot[job.key_id] = next(self._tick)
            worker.inflight[job.job_id] = job.key_id
            del self._queued[job.job_id]
            self._counts[job.key_id] -= 1
            assignments.append((job, worker.name))
        return assignments
