"""What a proving job is: its request, priority, state, and the result and timings it ends with."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from cuzk_core.errors import CuzkError


class Priority(enum.IntEnum):
    """Scheduling order: a higher value runs first; ties run in submission order."""

    LOW = 0
    NORMAL = 1
    HIGH = 2
    CRITICAL = 3

    @classmethod
    def parse(cls, name: str) -> Priority:
        """The priority called ``name`` (case-insensitive), or a one-line error."""
        try:
            return cls[name.upper()]
        except KeyError:
            allowed = ", ".join(p.name.lower() for p in sorted(cls, reverse=True))
            raise CuzkError(f"priority {name!r} is not one of {allowed}") from None


class JobState(enum.Enum):
    """Where a job is; the last three are final."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        """True once the job will not change again."""
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


class JobError(CuzkError):
    """A request the engine refuses: unknown key or job, bad input, a path outside the roots."""


class UnknownJob(JobError):
    """A job id the store does not hold (never submitted, or its result expired)."""


class PathRefused(JobError):
    """An input path outside the configured input roots (or with no roots configured)."""


class IdempotencyConflict(JobError):
    """An idempotency key seen before, sent with another request."""


class QueueFull(CuzkError):
    """The queue holds ``max_queued`` jobs already; the client should retry later."""


class JobCancelled(Exception):
    """Raised inside a running job when it has been cancelled (at its next phase boundary)."""


@attrs.frozen
class JobInput:
    """What varies per proof under one key.

    For an embedded-circuit key (a ``cuzk setup`` folder): ``circuit_seed``, the instance's
    seed. For a snarkjs key (.zkey): the witness, as a file in the job's spool folder or a path
    under the configured input roots. ``seed`` derives the proof randomness (tests, benches).
    """

    circuit_seed: int | None = None
    witness_path: str | None = None
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The input as stored in the job table."""
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> JobInput:
        """The inverse of :meth:`to_json`."""
        return cls(**record)


@attrs.frozen
class JobRequest:
    """A submission: which key, what input, how urgent, and an optional idempotency key."""

    key_id: str
    input: JobInput
    priority: Priority = Priority.NORMAL
    idempotency_key: str | None = None
    witness_upload: bytes | None = attrs.field(default=None, repr=False)
    """Witness bytes sent with the request; the engine spools them and sets ``witness_path``."""


@attrs.frozen
class PhaseTimings:
    """A job's time by phase (ms): waiting in the queue, loading its key, synthesis, the
    backend's phases (NTT, MSMs, transfers, assembly: the GPU on a GPU backend), end to end."""

    queue_wait_ms: float
    key_load_ms: float
    synthesis_ms: float
    gpu_ms: float
    total_ms: float

    def to_json(self) -> dict[str, float]:
        """The timings as a JSON object of rounded milliseconds."""
        return {k: round(v, 3) for k, v in attrs.asdict(self).items()}


@attrs.frozen
class JobRecord:
    """A job as the store holds it."""

    job_id: str
    key_id: str
    priority: Priority
    state: JobState
    input: JobInput
    attempts: int = 0
    error: str | None = None
    submitted_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    proof: bytes | None = attrs.field(default=None, repr=False)
    public_inputs: tuple[int, ...] = ()
    timings: PhaseTimings | None = None
    idempotency_key: str | None = None


@attrs.frozen
class Ticket:
    """What a submission returns: the job, whether this call created it, its queue position."""

    job_id: str
    created: bool
    queue_position: int
