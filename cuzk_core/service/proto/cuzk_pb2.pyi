from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Priority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRIORITY_UNSPECIFIED: _ClassVar[Priority]
    LOW: _ClassVar[Priority]
    NORMAL: _ClassVar[Priority]
    HIGH: _ClassVar[Priority]
    CRITICAL: _ClassVar[Priority]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    QUEUED: _ClassVar[JobState]
    RUNNING: _ClassVar[JobState]
    DONE: _ClassVar[JobState]
    FAILED: _ClassVar[JobState]
    CANCELLED: _ClassVar[JobState]
PRIORITY_UNSPECIFIED: Priority
LOW: Priority
NORMAL: Priority
HIGH: Priority
CRITICAL: Priority
JOB_STATE_UNSPECIFIED: JobState
QUEUED: JobState
RUNNING: JobState
DONE: JobState
FAILED: JobState
CANCELLED: JobState

class SubmitProofRequest(_message.Message):
    __slots__ = ("key_id", "priority", "idempotency_key", "circuit_seed", "witness_upload", "witness_path", "proof_seed")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CIRCUIT_SEED_FIELD_NUMBER: _ClassVar[int]
    WITNESS_UPLOAD_FIELD_NUMBER: _ClassVar[int]
    WITNESS_PATH_FIELD_NUMBER: _ClassVar[int]
    PROOF_SEED_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    priority: Priority
    idempotency_key: str
    circuit_seed: str
    witness_upload: bytes
    witness_path: str
    proof_seed: str
    def __init__(self, key_id: _Optional[str] = ..., priority: _Optional[_Union[Priority, str]] = ..., idempotency_key: _Optional[str] = ..., circuit_seed: _Optional[str] = ..., witness_upload: _Optional[bytes] = ..., witness_path: _Optional[str] = ..., proof_seed: _Optional[str] = ...) -> None: ...

class SubmitProofResponse(_message.Message):
    __slots__ = ("job_id", "created", "queue_position")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    QUEUE_POSITION_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    created: bool
    queue_position: int
    def __init__(self, job_id: _Optional[str] = ..., created: _Optional[bool] = ..., queue_position: _Optional[int] = ...) -> None: ...

class AwaitProofRequest(_message.Message):
    __slots__ = ("job_id", "timeout_ms")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    timeout_ms: int
    def __init__(self, job_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class PhaseTimings(_message.Message):
    __slots__ = ("queue_wait_ms", "key_load_ms", "synthesis_ms", "gpu_ms", "total_ms")
    QUEUE_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    KEY_LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIS_MS_FIELD_NUMBER: _ClassVar[int]
    GPU_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    queue_wait_ms: float
    key_load_ms: float
    synthesis_ms: float
    gpu_ms: float
    total_ms: float
    def __init__(self, queue_wait_ms: _Optional[float] = ..., key_load_ms: _Optional[float] = ..., synthesis_ms: _Optional[float] = ..., gpu_ms: _Optional[float] = ..., total_ms: _Optional[float] = ...) -> None: ...

class ProofResult(_message.Message):
    __slots__ = ("job_id", "state", "error", "proof", "public_inputs", "verifying_key", "timings", "attempts", "key_id")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PROOF_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_INPUTS_FIELD_NUMBER: _ClassVar[int]
    VERIFYING_KEY_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    state: JobState
    error: str
    proof: bytes
    public_inputs: _containers.RepeatedScalarFieldContainer[str]
    verifying_key: bytes
    timings: PhaseTimings
    attempts: int
    key_id: str
    def __init__(self, job_id: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., error: _Optional[str] = ..., proof: _Optional[bytes] = ..., public_inputs: _Optional[_Iterable[str]] = ..., verifying_key: _Optional[bytes] = ..., timings: _Optional[_Union[PhaseTimings, _Mapping]] = ..., attempts: _Optional[int] = ..., key_id: _Optional[str] = ...) -> None: ...

class CancelProofRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class CancelProofResponse(_message.Message):
    __slots__ = ("state", "was_running")
    STATE_FIELD_NUMBER: _ClassVar[int]
    WAS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    state: JobState
    was_running: bool
    def __init__(self, state: _Optional[_Union[JobState, str]] = ..., was_running: _Optional[bool] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class KeyStatus(_message.Message):
    __slots__ = ("key_id", "tier", "size_bytes", "ref_count", "loads")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    REF_COUNT_FIELD_NUMBER: _ClassVar[int]
    LOADS_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    tier: str
    size_bytes: int
    ref_count: int
    loads: int
    def __init__(self, key_id: _Optional[str] = ..., tier: _Optional[str] = ..., size_bytes: _Optional[int] = ..., ref_count: _Optional[int] = ..., loads: _Optional[int] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("backend", "pipeline", "queued", "running", "done", "failed", "cancelled", "keys", "budget_bytes", "hot_bytes", "uptime_s")
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    BUDGET_BYTES_FIELD_NUMBER: _ClassVar[int]
    HOT_BYTES_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    backend: str
    pipeline: bool
    queued: int
    running: int
    done: int
    failed: int
    cancelled: int
    keys: _containers.RepeatedCompositeFieldContainer[KeyStatus]
    budget_bytes: int
    hot_bytes: int
    uptime_s: float
    def __init__(self, backend: _Optional[str] = ..., pipeline: _Optional[bool] = ..., queued: _Optional[int] = ..., running: _Optional[int] = ..., done: _Optional[int] = ..., failed: _Optional[int] = ..., cancelled: _Optional[int] = ..., keys: _Optional[_Iterable[_Union[KeyStatus, _Mapping]]] = ..., budget_bytes: _Optional[int] = ..., hot_bytes: _Optional[int] = ..., uptime_s: _Optional[float] = ...) -> None: ...

class GetMetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetMetricsResponse(_message.Message):
    __slots__ = ("prometheus_text",)
    PROMETHEUS_TEXT_FIELD_NUMBER: _ClassVar[int]
    prometheus_text: str
    def __init__(self, prometheus_text: _Optional[str] = ...) -> None: ...

class PreloadSrsRequest(_message.Message):
    __slots__ = ("key_id",)
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    def __init__(self, key_id: _Optional[str] = ...) -> None: ...

class PreloadSrsResponse(_message.Message):
    __slots__ = ("already_loaded", "load_ms")
    ALREADY_LOADED_FIELD_NUMBER: _ClassVar[int]
    LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    already_loaded: bool
    load_ms: float
    def __init__(self, already_loaded: _Optional[bool] = ..., load_ms: _Optional[float] = ...) -> None: ...

class EvictSrsRequest(_message.Message):
    __slots__ = ("key_id",)
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    def __init__(self, key_id: _Optional[str] = ...) -> None: ...

class EvictSrsResponse(_message.Message):
    __slots__ = ("was_loaded", "freed_bytes")
    WAS_LOADED_FIELD_NUMBER: _ClassVar[int]
    FREED_BYTES_FIELD_NUMBER: _ClassVar[int]
    was_loaded: bool
    freed_bytes: int
    def __init__(self, was_loaded: _Optional[bool] = ..., freed_bytes: _Optional[int] = ...) -> None: ...
