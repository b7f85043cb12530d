"""``cuzk serve``, ``cuzk client …`` and ``cuzk bench single|batch|stress``.

:mod:`cuzk_core.cli.parser` registers these through :func:`add_serve_parser`,
:func:`add_client_parser` and :func:`add_daemon_bench_parsers`. gRPC is imported only when
one of them runs, so cuzk without the ``serve`` extra still works.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuzk_core.cli.parser import whole_number
from cuzk_core.errors import CuzkError
from cuzk_core.fileio import (
    check_output_folder,
    json_bytes,
    read_input,
    write_json_atomic,
    write_together,
)

if TYPE_CHECKING:  # the service imports gRPC: only when a command needs it
    from cuzk_core.engine import EngineConfig
    from cuzk_core.service.config import ServerConfig


def _need_serve_extra() -> None:
    try:
        import grpc  # noqa: F401
        import prometheus_client  # noqa: F401
    except ImportError:
        raise CuzkError("this command needs the serve extra: pip install 'cuzk[serve]'") from None


def _key_assignment(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"{text!r} is not ID=PATH")
    return name, Path(path)


def _add_address(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--addr", help="daemon address: unix:///path or host:port (default: $CUZK_ADDR)"
    )
    parser.add_argument("--token-file", help="bearer token for a TCP daemon ($CUZK_TOKEN_FILE)")


def _add_job_options(parser: argparse.ArgumentParser, seed: Callable[[str], int]) -> None:
    parser.add_argument("--key", required=True, help="key id from the daemon's configuration")
    parser.add_argument(
        "--priority",
        choices=("low", "normal", "high", "critical"),
        default="normal",
        help="scheduling priority (default normal)",
    )
    parser.add_argument("--circuit-seed", type=seed, help="embedded circuit: the instance seed")
    witness = parser.add_mutually_exclusive_group()
    witness.add_argument("--wtns", help="zkey: a witness file to upload")
    witness.add_argument("--wtns-path", help="zkey: a witness path under the daemon's roots")
    parser.add_argument("--seed", type=seed, help="derive the proof randomness (tests only)")


def add_serve_parser(sub: argparse._SubParsersAction, name: str, text: str) -> None:
    """Register ``serve``."""
    serve = sub.add_parser(name, help=text)
    serve.add_argument("--config", help="cuzk-serve.toml (see cuzk_core/service/config.py)")
    serve.add_argument("--listen", help="unix:///path (default) or host:port (needs --token-file)")
    serve.add_argument("--token-file", help="bearer token clients must send (required for TCP)")
    serve.add_argument("--state-dir", help="job store and spool folder")
    serve.add_argument(
        "--key",
        action="append",
        default=[],
        type=_key_assignment,
        metavar="ID=PATH",
        help="serve a key (a `cuzk setup` folder or a .zkey) beside the configured ones",
    )
    serve.add_argument(
        "--pipeline", choices=("on", "off"), help="override engine.pipeline (A/B runs)"
    )
    serve.set_defaults(handler=serve_command)


def add_client_parser(
    sub: argparse._SubParsersAction, name: str, text: str, seed: Callable[[str], int]
) -> None:
    """Register ``client ACTION``."""
    client = sub.add_parser(name, help=text)
    actions = client.add_subparsers(dest="client_command", required=True, metavar="ACTION")
    for name, text in (("prove", "prove and wait"), ("submit", "queue a proof, print its id")):
        action = actions.add_parser(name, help=text)
        _add_address(action)
        _add_job_options(action, seed)
        action.add_argument("--idempotency-key", help="a resubmit with it returns the same job")
        if name == "prove":
            action.add_argument("--out", default="out", help="output folder (default out)")
        action.set_defaults(handler=client_command)
    wait = actions.add_parser("await", help="wait for a job and write its result")
    _add_address(wait)
    wait.add_argument("job", help="job id")
    wait.add_argument("--timeout", type=_wait_seconds, help="seconds to wait at most")
    wait.add_argument("--out", default="out", help="output folder (default out)")
    wait.set_defaults(handler=client_command)
    cancel = actions.add_parser("cancel", help="cancel a job")
    _add_address(cancel)
    cancel.add_argument("job", help="job id")
    cancel.set_defaults(handler=client_command)
    for name, text in (("preload", "make a key hot"), ("evict", "drop a key to cold")):
        action = actions.add_parser(name, help=text)
        _add_address(action)
        action.add_argument("key", help="key id")
        action.set_defaults(handler=client_command)
    for name, text in (("status", "queue, jobs and keys"), ("metrics", "Prometheus text")):
        action = actions.add_parser(name, help=text)
        _add_address(action)
        action.set_defaults(handler=client_command)


def add_daemon_bench_parsers(
    actions: argparse._SubParsersAction, seed: Callable[[str], int]
) -> None:
    """Register ``bench single|batch|stress`` (against a running daemon)."""
    for name, text in (
        ("single", "proofs one at a time through the daemon: latency"),
        ("batch", "N proofs submitted at once: throughput"),
        ("stress", "C clients proving in a loop for a duration"),
    ):
        bench = actions.add_parser(name, help=text)
        _add_address(bench)
        _add_job_options(bench, seed)
        if name == "single":
            bench.add_argument("--runs", type=whole_number, default=5, help="proofs (default 5)")
        elif name == "batch":
            bench.add_argument("--count", type=whole_number, default=20, help="proofs (default 20)")
        else:
            bench.add_argument("--duration", default="60s", help="how long (default 60s)")
            bench.add_argument(
                "--clients", type=whole_number, default=8, help="clients (default 8)"
            )
        bench.add_argument("--json", metavar="FILE", help="write summary and samples as JSON")
        bench.set_defaults(handler=bench_command)


# ---------------------------------------------------------------- handlers


def serve_command(args: argparse.Namespace) -> int:
    """``cuzk serve``: run the daemon until SIGTERM/SIGINT."""
    _need_serve_extra()
    from cuzk_core.service.server import serve

    return serve(*serve_configs(args))


def serve_configs(args: argparse.Namespace) -> tuple[ServerConfig, EngineConfig]:
    """The server's and the engine's settings from ``serve``'s (or ``fleet``'s) options: the
    config file, then the command line on top."""
    import attrs

    from cuzk_core.profile import load_profile
    from cuzk_core.service.config import build_configs, read_config

    table, base = read_config(Path(args.config) if args.config else None)
    server, engine = build_configs(
        table,
        base,
        load_profile(args.profile),
        listen=args.listen,
        token_file=args.token_file,
        state_dir=args.state_dir,
        extra_keys=dict(args.key),
    )
    if args.pipeline is not None:
        engine = attrs.evolve(engine, pipeline=args.pipeline == "on")
    return server, engine


def _request(args: argparse.Namespace, index: int | None = None):
    from cuzk_core.service.client import PRIORITIES
    from cuzk_core.service.proto import cuzk_pb2 as pb

    request = pb.SubmitProofRequest(key_id=args.key, priority=PRIORITIES[args.priority])
    circuit_seed = args.circuit_seed
    if index is not None:  # bench: a distinct instance per job
        circuit_seed = (circuit_seed or 0) + index
    if circuit_seed is not None:
        request.circuit_seed = str(circuit_seed)
    if args.seed is not None:
        request.proof_seed = str(args.seed)
    if getattr(args, "idempotency_key", None):
        request.idempotency_key = args.idempotency_key
    if args.wtns is not None:
        what = "witness to upload (a larger one goes by --wtns-path)"
        request.witness_upload = read_input(args.wtns, WITNESS_UPLOAD_BYTES, what)
    if args.wtns_path is not None:
        request.witness_path = args.wtns_path
    return request


RESULT_FILES = ("proof.bin", "vk.bin", "public.json", "timings.json")
MAX_WAIT_S = 4_000_000.0
"""The longest ``client await --timeout``: the call's wait is a 32-bit count of milliseconds."""
WITNESS_UPLOAD_BYTES = (64 << 20) - (64 << 10)
"""The largest witness ``--wtns`` uploads: the client's 64 MiB message limit, less room for the
request's other fields (a larger witness goes by ``--wtns-path``)."""


def _wait_seconds(text: str) -> float:
    """``--timeout``: seconds above 0, at most :data:`MAX_WAIT_S`."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_WAIT_S:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected seconds above 0 and at most {MAX_WAIT_S:.0f}"
        )
    return seconds


def write_result(result, out: Path) -> None:
    """proof.bin, vk.bin, public.json and timings.json of a finished job into ``out``; a job
    that failed or was cancelled is an error (nothing written)."""
    from cuzk_core.service.proto import cuzk_pb2 as pb

    if result.state == pb.FAILED:
        raise CuzkError(result.error)
    if result.state == pb.CANCELLED:
        raise CuzkError(f"job {result.job_id} was cancelled: {result.error}")
    if result.state != pb.DONE:
        raise CuzkError(f"job {result.job_id} is still {pb.JobState.Name(result.state).lower()}")
    timings = {
        name: getattr(result.timings, name) for name in result.timings.DESCRIPTOR.fields_by_name
    }
    summary = {"job_id": result.job_id, "key_id": result.key_id, "attempts": result.attempts}
    contents = dict(
        zip(
            RESULT_FILES,
            (
                result.proof,
                result.verifying_key,
                json_bytes(list(result.public_inputs)),
                json_bytes({**summary, **timings}),
            ),
            strict=True,
        )
    )
    write_together(out, contents)


def client_command(args: argparse.Namespace) -> int:
    """``cuzk client ACTION``."""
    _need_serve_extra()
    from google.protobuf import json_format

    from cuzk_core.service.client import Client

    action = args.client_command
    if action in ("prove", "await"):  # a result with nowhere to go is refused before the call
        check_output_folder(args.out, RESULT_FILES)
    with Client(args.addr, args.token_file) as client:
        if action == "prove":
            result = client.prove(_request(args))
            write_result(result, Path(args.out))
            print(
                f"proof written to {args.out}/proof.bin (job {result.job_id}, "
                f"{result.timings.total_ms / 1000:.2f} s)"
            )
        elif action == "submit":
            ticket = client.submit(_request(args))
            print(ticket.job_id)
        elif action == "await":
            result = client.await_proof(args.job, args.timeout)
            write_result(result, Path(args.out))
            print(f"proof written to {args.out}/proof.bin (job {result.job_id})")
        elif action == "cancel":
            reply = client.cancel(args.job)
            print(json_format.MessageToJson(reply, always_print_fields_with_no_presence=True))
        elif action == "preload":
            reply = client.preload(args.key)
            state = "already hot" if reply.already_loaded else f"loaded in {reply.load_ms:.1f} ms"
            print(f"{args.key}: {state}")
        elif action == "evict":
            reply = client.evict(args.key)
            print(
                f"{args.key}: {'evicted' if reply.was_loaded else 'was not hot'}, "
                f"{reply.freed_bytes} bytes freed"
            )
        elif action == "status":
            reply = client.status()
            print(json_format.MessageToJson(reply, always_print_fields_with_no_presence=True))
        else:
            sys.stdout.write(client.metrics())
    return 0


def _duration(text: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)?", text.strip())
    if found is None:
        raise CuzkError(f"--duration {text!r}: a number with ms, s or m (e.g. 60s)")
    value, unit = float(found.group(1)), found.group(2) or "s"
    return value * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]


def bench_command(args: argparse.Namespace) -> int:
    """``cuzk bench single|batch|stress``."""
    _need_serve_extra()
    from cuzk_core.bench import environment
    from cuzk_core.service import loadgen
    from cuzk_core.service.client import Client

    kind = args.bench_command
    params: dict[str, Any] = {"key": args.key, "priority": args.priority}
    with Client(args.addr, args.token_file) as client:
        status = client.status()
        make = lambda i: _request(args, i)  # noqa: E731 - one line per mode below
        if kind == "single":
            if args.runs < 1:
                raise CuzkError(f"--runs {args.runs}: at least one")
            params["runs"] = args.runs
            samples, wall = loadgen.run_single(client, make, args.runs)
        elif kind == "batch":
            if args.count < 1:
                raise CuzkError(f"--count {args.count}: at least one")
            params["count"] = args.count
            samples, wall = loadgen.run_batch(client, make, args.count)
        else:
            duration = _duration(args.duration)
            if args.clients < 1:
                raise CuzkError(f"--clients {args.clients}: at least one")
            params.update(duration_s=duration, clients=args.clients)
            samples, wall = loadgen.run_stress(client, make, duration, args.clients)
    summary = loadgen.summarize(samples, wall)
    print(loadgen.format_summary(summary))
    if args.json is not None:
        document = {
            "kind": "daemon-bench",
            "benchmark": kind,
            "params": params,
            "daemon": {"backend": status.backend, "pipeline": status.pipeline},
            "environment": environment.capture(),
            "summary": summary,
            "samples": [s.to_json() for s in samples],
        }
        write_json_atomic(args.json, document)
        print(f"results written to {args.json}")
    return 0 if all(s.state == "done" for s in samples) or kind == "stress" else 1
