"""``cuzk serve``: the engine behind a gRPC server, on a unix socket or a token-guarded TCP port.

The servicer only translates: protobuf in, an engine call, protobuf out, and engine errors to
gRPC status codes. The socket is created owner-only (umask 077, then chmod 600); TCP needs a
bearer token, compared in constant time.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc

from cuzk_core.engine import (
    Engine,
    EngineConfig,
    IdempotencyConflict,
    JobError,
    JobInput,
    JobRecord,
    JobRequest,
    JobState,
    KeyBusy,
    KeyTooLarge,
    PathRefused,
    Priority,
    QueueFull,
    UnknownJob,
    UnknownKey,
)
from cuzk_core.errors import CuzkError
from cuzk_core.service.config import RESERVED_RPC_THREADS, ConfigError, ServerConfig
from cuzk_core.service.metrics import Metrics
from cuzk_core.service.proto import cuzk_pb2 as pb
from cuzk_core.service.proto import cuzk_pb2_grpc as rpc

GRACE_S = 2.0
"""How long in-flight calls get to finish when the daemon stops."""
SIGNAL_POLL_S = 0.2
"""How often the serving thread wakes to run a signal handler that another thread took."""
STATE_TO_PB = {
    JobState.QUEUED: pb.QUEUED,
    JobState.RUNNING: pb.RUNNING,
    JobState.DONE: pb.DONE,
    JobState.FAILED: pb.FAILED,
    JobState.CANCELLED: pb.CANCELLED,
}
_PRIORITY_FROM_PB = {
    pb.PRIORITY_UNSPECIFIED: Priority.NORMAL,
    pb.LOW: Priority.LOW,
    pb.NORMAL: Priority.NORMAL,
    pb.HIGH: Priority.HIGH,
    pb.CRITICAL: Priority.CRITICAL,
}


class TooManyWaiting(CuzkError):
    """Every thread a waiting call may hold is held."""


_CODES: tuple[tuple[type[Exception], grpc.StatusCode], ...] = (
    (UnknownJob, grpc.StatusCode.NOT_FOUND),
    (UnknownKey, grpc.StatusCode.NOT_FOUND),
    (PathRefused, grpc.StatusCode.PERMISSION_DENIED),
    (IdempotencyConflict, grpc.StatusCode.ALREADY_EXISTS),
    (QueueFull, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (TooManyWaiting, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (KeyTooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (KeyBusy, grpc.StatusCode.FAILED_PRECONDITION),
    (CuzkError, grpc.StatusCode.INVALID_ARGUMENT),
)


_DECIMAL_DIGITS = 100
_DECIMAL = re.compile(f"[0-9]{{1,{_DECIMAL_DIGITS}}}")


def _decimal(text: str, field: str) -> int | None:
    if not text:
        return None
    if not _DECIMAL.fullmatch(text):  # ASCII only: str.isdigit() takes '²' and '٦'
        raise JobError(
            f"{field} {text[:40]!r} is not a non-negative decimal integer (at most "
            f"{_DECIMAL_DIGITS} digits)"
        )
    return int(text)


def job_request(message: pb.SubmitProofRequest) -> JobRequest:
    """The engine's request for a SubmitProof message."""
    which = message.WhichOneof("witness")
    if message.priority not in _PRIORITY_FROM_PB:
        raise JobError(f"priority {message.priority} is not one of low, normal, high, critical")
    job_input = JobInput(
        circuit_seed=_decimal(message.circuit_seed, "circuit_seed"),
        witness_path=message.witness_path if which == "witness_path" else None,
        seed=_decimal(message.proof_seed, "proof_seed"),
    )
    return JobRequest(
        key_id=message.key_id,
        input=job_input,
        priority=_PRIORITY_FROM_PB[message.priority],
        idempotency_key=message.idempotency_key or None,
        witness_upload=message.witness_upload if which == "witness_upload" else None,
    )


MAX_DETAILS = 2048
"""Characters of an error a status carries: it echoes the client's values (a path, a job id),
and gRPC's metadata holds 16 KiB, past which the client sees RESOURCE_EXHAUSTED instead."""


def status_details(message: str) -> str:
    """``message``, its middle cut when it is longer than :data:`MAX_DETAILS`."""
    if len(message) <= MAX_DETAILS:
        return message
    cut = len(message) - MAX_DETAILS + 64
    head = (MAX_DETAILS - 64) * 3 // 4
    return f"{message[:head]} …[{cut} characters cut]… {message[head + cut :]}"


class ProverServicer(rpc.ProverServicer):
    """The gRPC methods, each a call into the engine."""

    def __init__(self, engine: Engine, metrics: Metrics, max_waiting: int) -> None:
        self.engine = engine
        self.metrics = metrics
        self.max_waiting = max_waiting
        self._waiting = threading.BoundedSemaphore(max_waiting)

    @contextlib.contextmanager
    def _errors(self, context: grpc.ServicerContext) -> Iterator[None]:
        try:
            yield
        except CuzkError as exc:
            code = next(c for kind, c in _CODES if isinstance(exc, kind))
            context.abort(code, status_details(str(exc)))

    def _result(self, record: JobRecord) -> pb.ProofResult:
        result = pb.ProofResult(
            job_id=record.job_id,
            key_id=record.key_id,
            state=STATE_TO_PB[record.state],
            error=record.error or "",
            attempts=record.attempts,
        )
        if record.state is JobState.DONE and record.proof is not None:
            result.proof = record.proof
            result.public_inputs.extend(str(v) for v in record.public_inputs)
            result.verifying_key = self.engine.verifying_key(record.key_id).to_bytes()
        if record.timings is not None:
            result.timings.CopyFrom(pb.PhaseTimings(**record.timings.to_json()))
        return result

    @contextlib.contextmanager
    def _waiter(self) -> Iterator[None]:
        """A place for one call that waits for a job: each holds a server thread, so they may
        not take the threads that the other calls need."""
        if not self._waiting.acquire(blocking=False):
            raise TooManyWaiting(
                f"{self.max_waiting} calls are waiting for jobs already (rpc_threads less "
                f"{RESERVED_RPC_THREADS}); submit and await later, or raise rpc_threads"
            )
        try:
            yield
        finally:
            self._waiting.release()

    def _await(self, job_id: str, timeout_ms: int, context: grpc.ServicerContext) -> JobRecord:
        gone = threading.Event()
        if not context.add_callback(gone.set):  # the client went away, or the call was cancelled
            gone.set()  # before the callback could be added: the call has ended already
        timeout = timeout_ms / 1000.0 if timeout_ms else None
        return self.engine.await_job(job_id, timeout, abandon=gone)

    def SubmitProof(self, request, context):
        """Queue a job."""
        with self._errors(context):
            ticket = self.engine.submit(job_request(request))
            return pb.SubmitProofResponse(
                job_id=ticket.job_id, created=ticket.created, queue_position=ticket.queue_position
            )

    def AwaitProof(self, request, context):
        """Wait for a job."""
        with self._errors(context), self._waiter():
            return self._result(self._await(request.job_id, request.timeout_ms, context))

    def Prove(self, request, context):
        """Queue a job and wait for it. A client that leaves first (its deadline, a cancel)
        never learned the job's id: without an idempotency key to come back with, nobody
        could fetch the proof, so the job is cancelled rather than proved for no one. The
        daemon's own stop ends calls too and counts the same, up to the engine's shutdown
        (whose store is then closing)."""
        with self._errors(context), self._waiter():  # refused before the job is queued
            ticket = self.engine.submit(job_request(request))
            record = self._await(ticket.job_id, 0, context)
            left = not record.state.final and not context.is_active()
            if left and not request.idempotency_key and not self.engine.stopping:
                record, _ = self.engine.cancel(ticket.job_id)
            return self._result(record)

    def CancelProof(self, request, context):
        """Cancel a job."""
        with self._errors(context):
            record, was_running = self.engine.cancel(request.job_id)
            return pb.CancelProofResponse(state=STATE_TO_PB[record.state], was_running=was_running)

    def GetStatus(self, request, context):
        """Queue, jobs and keys."""
        now = self.engine.status()
        return pb.GetStatusResponse(
            backend=now.backend,
            pipeline=now.pipeline,
            queued=now.queued,
            running=now.running,
            done=now.counts[JobState.DONE],
            failed=now.counts[JobState.FAILED],
            cancelled=now.counts[JobState.CANCELLED],
            keys=[
                pb.KeyStatus(
                    key_id=k.key_id,
                    tier=k.tier.value,
                    size_bytes=k.bytes,
                    ref_count=k.refs,
                    loads=k.loads,
                )
                for k in now.keys
            ],
            budget_bytes=now.budget_bytes,
            hot_bytes=now.hot_bytes,
            uptime_s=now.uptime_s,
        )

    def GetMetrics(self, request, context):
        """Prometheus text."""
        return pb.GetMetricsResponse(prometheus_text=self.metrics.exposition(self.engine.status))

    def PreloadSRS(self, request, context):
        """Make a key hot."""
        with self._errors(context):
            already, ms = self.engine.preload(request.key_id)
            return pb.PreloadSrsResponse(already_loaded=already, load_ms=ms)

    def EvictSRS(self, request, context):
        """Drop a key to cold."""
        with self._errors(context):
            was_hot, freed = self.engine.evict(request.key_id)
            return pb.EvictSrsResponse(was_loaded=was_hot, freed_bytes=freed)


class _BearerToken(grpc.ServerInterceptor):
    """Refuse every call whose ``authorization`` metadata is not ``Bearer <token>``."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

        def deny(request: Any, context: grpc.ServicerContext) -> None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        sent = dict(details.invocation_metadata or ()).get("authorization", "")
        if hmac.compare_digest(sent.encode(), self._expected):
            return continuation(details)
        return self._deny


def read_token(path: Path) -> str:
    """The bearer token in ``path``: non-empty, and the file readable by its owner only."""
    try:
        mode = path.stat().st_mode
        token = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"token file {path}: cannot read: {exc.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"token file {path}: readable by others; chmod 600 {path}")
    if not token:
        raise ConfigError(f"token file {path}: empty")
    return token


def unix_path(listen: str) -> Path | None:
    """The socket path of a ``unix:`` address, or None for TCP."""
    if not listen.startswith("unix:"):
        return None
    rest = listen[len("unix:") :]
    return Path(rest[2:] if rest.startswith("//") else rest)


UNIX_PATH_MAX = 107
"""Bytes of a unix socket's path, the terminating NUL left out (Linux's sun_path is 108)."""


def _claim_socket(path: Path) -> None:
    """Remove a stale socket file; refuse a live one, a path that is not a socket, one too long
    for a socket or one whose folder cannot be made."""
    if len(os.fsencode(path)) > UNIX_PATH_MAX:
        raise ConfigError(
            f"listen path {path}: {len(os.fsencode(path))} bytes, a unix socket's path holds at "
            f"most {UNIX_PATH_MAX}"
        )
    if not path.exists() and not path.is_symlink():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"listen path {path}: cannot make its folder ({exc.strerror or exc})"
            ) from None
        return
    if not stat.S_ISSOCK(path.lstat().st_mode):
        raise ConfigError(f"listen path {path} exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()  # nobody answers: a daemon that died left it
        return
    finally:
        probe.close()
    raise ConfigError(f"another daemon is listening on {path}")


def check_listen(config: ServerConfig) -> str | None:
    """The bearer token calls must carry (None: none needed), after checking that TCP has
    one; done before anything starts, so a bad address or token file costs nothing."""
    tcp = unix_path(config.listen) is None
    if tcp:
        host, _, port = config.listen.rpartition(":")
        if not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
            raise ConfigError(f"--listen {config.listen}: expected HOST:PORT, PORT 0–65535")
    if config.token_file is not None:
        return read_token(config.token_file)
    if tcp:
        raise ConfigError(
            f"--listen {config.listen}: TCP needs --token-file (or listen on a unix socket)"
        )
    return None


def _why_not(listen: str) -> str:
    """Why a TCP address cannot be bound, as the OS says it (gRPC only says that it failed)."""
    host, _, port = listen.rpartition(":")
    try:
        with socket.create_server((host.strip("[]"), int(port))):
            return "gRPC refused it"
    except OSError as exc:  # create_server's own message adds the address: the errno's alone
        return os.strerror(exc.errno) if exc.errno else str(exc)


def build_server(
    engine: Engine, metrics: Metrics, config: ServerConfig, token: str | None
) -> tuple[grpc.Server, str]:
    """A server bound to ``config.listen``, not yet started, and the address it is reached at
    (the real port for ``host:0``); a bad address is a one-line error. Bound before the engine
    starts, so an address in use costs no warm-up."""
    sock = unix_path(config.listen)
    interceptors = [] if token is None else [_BearerToken(token)]
    options = [
        ("grpc.max_receive_message_length", config.max_request_bytes),
        ("grpc.max_send_message_length", config.max_request_bytes),
        ("grpc.so_reuseport", 0),
    ]
    server = grpc.server(
        ThreadPoolExecutor(max_workers=config.rpc_threads, thread_name_prefix="cuzk-rpc"),
        interceptors=interceptors,
        options=options,
        maximum_concurrent_rpcs=config.max_concurrent_rpcs,
    )
    servicer = ProverServicer(engine, metrics, config.rpc_threads - RESERVED_RPC_THREADS)
    rpc.add_ProverServicer_to_server(servicer, server)
    if sock is not None:
        _claim_socket(sock)
        mask = os.umask(0o077)
        try:
            bound = server.add_insecure_port(f"unix:{sock}")
        except RuntimeError:
            bound = 0
        finally:
            os.umask(mask)
        if bound == 0:
            raise ConfigError(f"--listen {config.listen}: cannot bind the socket")
        os.chmod(sock, 0o600)
        address = config.listen
    else:
        try:
            bound = server.add_insecure_port(config.listen)
        except RuntimeError:
            bound = 0
        if bound == 0:
            raise ConfigError(
                f"--listen {config.listen}: cannot listen there ({_why_not(config.listen)})"
            )
        address = f"{config.listen.rpartition(':')[0]}:{bound}"
    return server, address


def release(server: grpc.Server, config: ServerConfig) -> None:
    """Stop a bound server (calls in flight get :data:`GRACE_S`) and remove its unix socket."""
    server.stop(GRACE_S).wait()
    sock = unix_path(config.listen)
    if sock is not None:
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()


def start_serving(
    engine: Engine, metrics: Metrics, config: ServerConfig, token: str | None
) -> tuple[grpc.Server, str]:
    """Bind the server, start ``engine``, then take calls; if any step fails, what started is
    stopped and the socket removed."""
    server = None
    try:
        server, address = build_server(engine, metrics, config, token)
        engine.start()
        server.start()
    except BaseException:
        if server is not None:
            release(server, config)
        engine.shutdown()
        raise
    return server, address


def serve(server_config: ServerConfig, engine_config: EngineConfig) -> int:
    """Run the daemon until SIGTERM or SIGINT; in-flight jobs finish before it exits. The
    line saying where it listens goes to stderr once it accepts calls."""
    token = check_listen(server_config)
    metrics = Metrics()
    engine = Engine(engine_config, listener=metrics)
    server, address = start_serving(engine, metrics, server_config, token)
    keys = ", ".join(sorted(engine_config.keys)) or "none"
    banner = (
        f"cuzk serve: listening on {address} "
        f"(backend {engine_config.profile.backend}, keys {keys}, "
        f"pipeline {'on' if engine_config.pipeline else 'off'}{_warmed(engine.warm_up_ms)})"
    )
    return run_until_signalled(server, engine, server_config, banner)


def _warmed(warm_up_ms: list[float]) -> str:
    """The banner's note of the warm-up proofs made at start, if any."""
    if not warm_up_ms:
        return ""
    shown = ", ".join(f"{ms / 1000.0:.2f}" for ms in warm_up_ms)
    return f", warmed up by {len(warm_up_ms)} proofs: {shown} s"


def run_until_signalled(
    server: grpc.Server, engine: Any, server_config: ServerConfig, banner: str
) -> int:
    """Say ``banner`` on stderr, serve until SIGTERM or SIGINT, then stop the server (calls in
    flight get GRACE_S), shut ``engine`` down and remove the unix socket; 0."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(banner, file=sys.stderr, flush=True)
    # Wake now and then: a handler runs only when this thread runs Python, and a signal taken
    # by another thread (one that the CUDA libraries start, say) does not interrupt a wait
    # without a timeout. An untimed wait here kept a GPU daemon alive after SIGTERM.
    while not stop.wait(SIGNAL_POLL_S):
        pass
    release(server, server_config)
    engine.shutdown()
    return 0
