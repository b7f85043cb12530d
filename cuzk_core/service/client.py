"""A client of ``cuzk serve``: a channel to its address (with the bearer token) and one method
per call, gRPC errors turned into one-line :class:`ServiceError`."""

from __future__ import annotations

import os
from pathlib import Path

import grpc

from cuzk_core.errors import CuzkError
from cuzk_core.service.config import default_state_dir
from cuzk_core.service.proto import cuzk_pb2 as pb
from cuzk_core.service.proto import cuzk_pb2_grpc as rpc
from cuzk_core.service.server import read_token

ADDR_ENV = "CUZK_ADDR"
TOKEN_ENV = "CUZK_TOKEN_FILE"
TEMPORARY = (
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
)
EX_TEMPFAIL = 75
"""Exit status for a refusal worth retrying (queue full, daemon unreachable)."""
PRIORITIES = {"low": pb.LOW, "normal": pb.NORMAL, "high": pb.HIGH, "critical": pb.CRITICAL}


class ServiceError(CuzkError):
    """The daemon refused a call or could not be reached; ``code`` is the gRPC status."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{message} [{code.name}]")
        self.code = code
        if code in TEMPORARY:
            self.exit_code = EX_TEMPFAIL


def default_address() -> str:
    """``$CUZK_ADDR``, else the default state folder's socket."""
    return os.environ.get(ADDR_ENV) or f"unix://{default_state_dir() / 'cuzk.sock'}"


class Client:
    """Calls to one daemon; ``token_file`` (or ``$CUZK_TOKEN_FILE``) for a TCP daemon."""

    def __init__(
        self,
        address: str | None = None,
        token_file: str | Path | None = None,
        max_message_bytes: int = 64 << 20,
    ) -> None:
        self.address = address or default_address()
        token_file = token_file or os.environ.get(TOKEN_ENV)
        self._metadata: tuple[tuple[str, str], ...] = ()
        if token_file:
            self._metadata = (("authorization", f"Bearer {read_token(Path(token_file))}"),)
        options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
        self.channel = grpc.insecure_channel(self.address, options=options)
        self.stub = rpc.ProverStub(self.channel)

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, request, timeout: float | None = None):
        try:
            return getattr(self.stub, method)(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as exc:
            code = exc.code()
            details = exc.details() or ""
            if code is grpc.StatusCode.UNAVAILABLE:
                details = f"cannot reach the daemon at {self.address}: {details}"
            raise ServiceError(code, details) from None

    def submit(self, request: pb.SubmitProofRequest) -> pb.SubmitProofResponse:
        """Queue a job."""
        return self._call("SubmitProof", request)

    def await_proof(self, job_id: str, timeout_s: float | None = None) -> pb.ProofResult:
        """Wait for a job (``timeout_s``: give back its state when it is not done by then)."""
        timeout_ms = 0 if timeout_s is None else max(1, int(timeout_s * 1000))
        return self._call("AwaitProof", pb.AwaitProofRequest(job_id=job_id, timeout_ms=timeout_ms))

    def prove(self, request: pb.SubmitProofRequest) -> pb.ProofResult:
        """Queue a job and wait for its result."""
        return self._call("Prove", request)

    def cancel(self, job_id: str) -> pb.CancelProofResponse:
        """Cancel a job."""
        return self._call("CancelProof", pb.CancelProofRequest(job_id=job_id))

    def status(self) -> pb.GetStatusResponse:
        """The daemon's queue, jobs and keys."""
        return self._call("GetStatus", pb.GetStatusRequest(), timeout=30)

    def metrics(self) -> str:
        """Prometheus text."""
        return self._call("GetMetrics", pb.GetMetricsRequest(), timeout=30).prometheus_text

    def preload(self, key_id: str) -> pb.PreloadSrsResponse:
        """Make a key hot."""
        return self._call("PreloadSRS", pb.PreloadSrsRequest(key_id=key_id))

    def evict(self, key_id: str) -> pb.EvictSrsResponse:
        """Drop a key to cold."""
        return self._call("EvictSRS", pb.EvictSrsRequest(key_id=key_id))
