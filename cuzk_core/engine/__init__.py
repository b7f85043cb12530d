"""The proving engine as a library: jobs, a durable store, scheduling, key residency, pipeline.

The daemon (:mod:`cuzk_core.service`) and any other front end drive an :class:`Engine`; nothing
here knows about gRPC.
"""

from cuzk_core.engine.engine import Engine, EngineConfig, EngineListener, EngineStatus
from cuzk_core.engine.jobs import (
    IdempotencyConflict,
    JobError,
    JobInput,
    JobRecord,
    JobRequest,
    JobState,
    PathRefused,
    PhaseTimings,
    Priority,
    QueueFull,
    Ticket,
    UnknownJob,
)
from cuzk_core.engine.keys import KeyKind, KeySpec, check_key
from cuzk_core.engine.residency import KeyBusy, KeyTooLarge, Tier, UnknownKey

__all__ = [
    "Engine",
    "EngineConfig",
    "EngineListener",
    "EngineStatus",
    "IdempotencyConflict",
    "JobError",
    "JobInput",
    "JobRecord",
    "JobRequest",
    "JobState",
    "KeyBusy",
    "KeyKind",
    "KeySpec",
    "KeyTooLarge",
    "PathRefused",
    "PhaseTimings",
    "Priority",
    "QueueFull",
    "Ticket",
    "Tier",
    "UnknownJob",
    "UnknownKey",
    "check_key",
]
