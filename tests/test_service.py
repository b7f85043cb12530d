"""``cuzk serve`` for real: a daemon process on a unix socket (or TCP with a token), driven over
gRPC by concurrent clients, killed with SIGKILL mid-proof and restarted, fed malformed jobs,
cancels, abandoned awaits and a full queue. Every proof is checked by the verifier; every
process a test starts is stopped by the test.

The concurrency test runs 6 clients × 3 proofs here; ``CUZK_SERVE_SCALE=50x20`` runs the
issue's full 50 × 20.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from cuzk_core.cli import main
from cuzk_core.groth16 import files
from cuzk_core.groth16.keys import Proof
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.service.client import Client, ServiceError
from cuzk_core.service.loadgen import PHASES, Sample, steady_proofs_per_s, summarize
from cuzk_core.service.proto import cuzk_pb2 as pb
from cuzk_core.service.proto import cuzk_pb2_grpc as rpc

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 60
SCALE = os.environ.get("CUZK_SERVE_SCALE", "6x3")


def _profile(folder: Path, extra: str = "") -> Path:
    path = folder / f"profile{abs(hash(extra))}.toml"
    path.write_text(f'extends = "cpu"\nbackend = "fastcpu"\n{extra}')
    return path


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A porep-lite key of one challenge at depth 1 (a proof takes ~0.3 s on fastcpu)."""
    folder = tmp_path_factory.mktemp("key")
    code = main(
        [
            "-q",
            "--profile",
            str(_profile(folder)),
            "setup",
            "--challenges",
            "1",
            "--depth",
            "1",
            "--seed",
            "9",
            "--out",
            str(folder / "k"),
        ]
    )
    assert code == 0
    return folder / "k"


class Daemon:
    """A ``cuzk serve`` process; :meth:`stop` ends it (SIGTERM, then SIGKILL)."""

    def __init__(
        self,
        folder: Path,
        key: Path,
        config: str = "",
        slow_ms: int = 0,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.folder = folder
        self.sock = folder / "d.sock"
        self.address = f"unix://{self.sock}"
        profile = _profile(folder, f"[debug.sleep_ms]\nmsm_h = {slow_ms}\n" if slow_ms else "")
        (folder / "serve.toml").write_text(config)
        self.command = [
            sys.executable,
            "-m",
            "cuzk_core",
            "--profile",
            str(profile),
            "serve",
            "--config",
            str(folder / "serve.toml"),
            "--state-dir",
            str(folder / "state"),
            "--listen",
            self.address,
            "--key",
            f"k={key}",
            *extra,
        ]
        self.process: subprocess.Popen | None = None
        self.stderr = folder / "daemon.err"

    def start(self) -> Daemon:
        """Start it and wait for its listening line."""
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.DEVNULL, stderr=self.stderr.open("wb"), cwd=REPO
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while "listening on" not in self.stderr.read_text():
            if self.process.poll() is not None:
                pytest.fail(f"daemon exited {self.process.returncode}: {self.stderr.read_text()}")
            assert time.monotonic() < deadline, "daemon did not start"
            time.sleep(0.05)
        return self

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM (it drains in-flight jobs), SIGKILL if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)

    def client(self) -> Client:
        return Client(self.address)


@pytest.fixture
def daemons(tmp_path: Path):
    """Make daemons with ``daemons(key, ...)``; all are stopped at the end of the test."""
    started: list[Daemon] = []

    def make(key: Path, **options) -> Daemon:
        daemon = Daemon(tmp_path, key, **options)
        started.append(daemon)
        return daemon.start()

    yield make
    for daemon in started:
        daemon.stop()


def _job(seed: int | str, **fields) -> pb.SubmitProofRequest:
    return pb.SubmitProofRequest(key_id="k", circuit_seed=str(seed), **fields)


def _check_proof(result: pb.ProofResult) -> None:
    """The job is done and its proof verifies under the verifying key it came with."""
    assert result.state == pb.DONE, result.error
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(result.verifying_key)
        f.flush()
        vk = files.read_vk(f.name)
    publics = [int(v) for v in result.public_inputs]
    ok, reason = verify_proof(vk, Proof.from_bytes(result.proof), publics)
    assert ok, reason


def _wait_state(client: Client, job_id: str, state: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while client.await_proof(job_id, 0.05).state != state:
        assert time.monotonic() < deadline, f"job {job_id} never reached {state}"


# ---------------------------------------------------------------- the protocol files


def test_generated_code_matches_the_proto(tmp_path):
    proto = Path("cuzk_core/service/proto/cuzk.proto")
    (tmp_path / proto.parent).mkdir(parents=True)
    (tmp_path / proto).write_bytes((REPO / proto).read_bytes())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I.",
            "--python_out=.",
            "--pyi_out=.",
            "--grpc_python_out=.",
            str(proto),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for name in ("cuzk_pb2.py", "cuzk_pb2.pyi", "cuzk_pb2_grpc.py"):
        regenerated = (tmp_path / proto.parent / name).read_text()
        assert regenerated == (REPO / proto.parent / name).read_text(), f"{name} is stale"


def test_generated_code_runs_on_the_oldest_grpcio_the_serve_extra_allows():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (grpcio,) = [d for d in extras["optional-dependencies"]["serve"] if d.startswith("grpcio")]
    (tools,) = [d for d in extras["optional-dependencies"]["test"] if d.startswith("grpcio-")]
    assert grpcio == f"grpcio>={rpc.GRPC_GENERATED_VERSION}"
    assert tools == f"grpcio-tools=={rpc.GRPC_GENERATED_VERSION}"


# ---------------------------------------------------------------- concurrency


def test_concurrent_clients_lose_and_duplicate_nothing(daemons, key):
    clients, per_client = (int(n) for n in SCALE.split("x"))
    daemon = daemons(key, config=f"rpc_threads = {clients + 8}\n")
    assert stat.S_IMODE(daemon.sock.stat().st_mode) == 0o600

    def one_client(index: int) -> list[pb.ProofResult]:
        with daemon.client() as client:
            return [
                client.prove(_job(index * 1000 + n, idempotency_key=f"c{index}-{n}"))
                for n in range(per_client)
            ]

    with ThreadPoolExecutor(clients) as pool:
        results = [r for batch in pool.map(one_client, range(clients)) for r in batch]
    assert len(results) == clients * per_client
    assert len({r.job_id for r in results}) == clients * per_client
    for result in results:
        _check_proof(result)
    with daemon.client() as client:
        status = client.status()
        assert (status.done, status.failed, status.queued) == (clients * per_client, 0, 0)
        again = client.submit(_job(0, idempotency_key="c0-0"))
        assert not again.created and again.job_id == results[0].job_id
        with pytest.raises(ServiceError, match="whose seed differs") as conflict:
            client.submit(_job(5, idempotency_key="c0-0"))  # another instance, the same key
        assert conflict.value.code is grpc.StatusCode.ALREADY_EXISTS
        metrics = client.metrics()
    assert f'cuzk_jobs_finished_total{{key="k",state="done"}} {clients * per_client}.0' in metrics
    assert 'cuzk_job_phase_seconds_count{phase="gpu"}' in metrics


# ---------------------------------------------------------------- crashes


def test_kill_mid_proof_then_restart_completes_every_job_once(daemons, key):
    daemon = daemons(key, slow_ms=1500)
    with daemon.client() as client:
        jobs = [client.submit(_job(n, idempotency_key=f"j{n}")).job_id for n in range(3)]
        _wait_state(client, jobs[0], pb.RUNNING)
    daemon.kill()  # mid-proof: job 0 is in its planted 1.5 s msm_h
    restarted = daemons(key, slow_ms=0)
    with restarted.client() as client:
        resubmitted = [client.submit(_job(n, idempotency_key=f"j{n}")) for n in range(3)]
        assert [r.job_id for r in resubmitted] == jobs and not any(r.created for r in resubmitted)
        results = [client.await_proof(job_id) for job_id in jobs]
        status = client.status()
    for result in results:
        _check_proof(result)
    assert results[0].attempts == 2  # started before the kill, re-run after it
    assert (status.done, status.failed, status.cancelled, status.queued) == (3, 0, 0, 0)


def test_a_job_the_daemon_keeps_dying_in_fails_with_the_reason(daemons, key):
    config = "[engine]\nmax_attempts = 1\n"
    daemon = daemons(key, slow_ms=3000, config=config)
    with daemon.client() as client:
        job = client.submit(_job(1)).job_id
        _wait_state(client, job, pb.RUNNING)
    daemon.kill()
    with daemons(key, config=config).client() as client:
        result = client.await_proof(job)
    assert result.state == pb.FAILED
    assert result.error == "the daemon stopped while proving this job 1 times; not retried again"


# ---------------------------------------------------------------- bad input and refusals


def test_malformed_job_fails_in_one_line_and_the_daemon_serves_the_next(daemons, key, tmp_path):
    daemon = daemons(key)
    out = tmp_path / "out"
    code = main(
        [
            "-q",
            "client",
            "prove",
            "--addr",
            daemon.address,
            "--key",
            "k",
            "--circuit-seed",
            str(1 << 256),
            "--out",
            str(out),
        ]
    )
    assert code == 2 and not out.exists()
    code = main(
        [
            "-q",
            "client",
            "prove",
            "--addr",
            daemon.address,
            "--key",
            "k",
            "--circuit-seed",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert (
        main(
            [
                "verify",
                "--vk",
                str(out / "vk.bin"),
                "--proof",
                str(out / "proof.bin"),
                "--public",
                str(out / "public.json"),
            ]
        )
        == 0
    )
    with daemon.client() as client:
        refusals = {
            "circuit_seed 'x1'": (_job("x1"), grpc.StatusCode.INVALID_ARGUMENT),
            "circuit_seed '²'": (_job("²"), grpc.StatusCode.INVALID_ARGUMENT),
            "proof_seed '1111": (_job(0, proof_seed="1" * 5000), grpc.StatusCode.INVALID_ARGUMENT),
            "unknown key 'zz'": (pb.SubmitProofRequest(key_id="zz"), grpc.StatusCode.NOT_FOUND),
            "no input roots": (
                _job(0, witness_path="/etc/passwd"),
                grpc.StatusCode.PERMISSION_DENIED,
            ),
            "send no witness": (_job(0, witness_upload=b"12"), grpc.StatusCode.INVALID_ARGUMENT),
        }
        for text, (request, code) in refusals.items():
            with pytest.raises(ServiceError, match=text) as refused:
                client.submit(request)
            assert refused.value.code is code
        with pytest.raises(ServiceError, match="unknown job") as unknown:
            client.await_proof("nope")
        assert unknown.value.code is grpc.StatusCode.NOT_FOUND


def test_client_refuses_bad_local_inputs_and_outputs_before_any_call(tmp_path, capsys):
    """Checked before the daemon is called (none listens at this address): a result with
    nowhere to go, a witness that is not a regular file or is over the upload limit, a
    --timeout that is not a positive finite number of seconds."""
    nobody = f"unix://{tmp_path / 'nobody.sock'}"
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.wtns"
    with huge.open("wb") as f:
        f.truncate(70 << 20)
    cases = {
        "--out is a file": (
            ["prove", "--key", "k", "--out", str(a_file / "sub")],
            f"--out {a_file / 'sub'}: ",
        ),
        "--out under a missing folder": (
            ["prove", "--key", "k", "--out", str(tmp_path / "no" / "such")],
            f"--out {tmp_path / 'no' / 'such'}: ",
        ),
        "a fifo": (
            ["submit", "--key", "k", "--wtns", str(fifo)],
            f"{fifo}: is a FIFO; cuzk reads only regular files",
        ),
        "over the upload limit": (
            ["submit", "--key", "k", "--wtns", str(huge)],
            f"{huge}: 73400320 bytes, more than any valid witness to upload (a larger one goes "
            "by --wtns-path)",
        ),
    }
    for name, (args, message) in cases.items():
        code = main(["-q", "client", *args, "--addr", nobody])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith(f"cuzk: error: {message}"), (name, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (name, err)
    assert not (tmp_path / "no").exists()
    for bad in ("nan", "inf", "1e30", "0", "-1", "soon"):
        with pytest.raises(SystemExit) as stopped:
            main(["client", "await", "j", "--timeout", bad, "--addr", nobody])
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and "expected seconds above 0" in err, (bad, err)


def test_malformed_job_message_matches_the_cli(daemons, key, tmp_path, capsys):
    daemon = daemons(key)
    capsys.readouterr()
    assert (
        main(
            [
                "-q",
                "client",
                "prove",
                "--addr",
                daemon.address,
                "--key",
                "k",
                "--circuit-seed",
                str(1 << 256),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    via_daemon = capsys.readouterr().err
    assert (
        main(
            [
                "-q",
                "--profile",
                str(_profile(tmp_path)),
                "prove",
                "--challenges",
                "1",
                "--depth",
                "1",
                "--circuit-seed",
                str(1 << 256),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert via_daemon == capsys.readouterr().err
    assert via_daemon.count("\n") == 1 and via_daemon.startswith("cuzk: error: circuit")


def test_cancel_queued_and_running_jobs(daemons, key):
    daemon = daemons(key, slow_ms=1000)
    with daemon.client() as client:
        running = client.submit(_job(1)).job_id
        _wait_state(client, running, pb.RUNNING)
        queued = [client.submit(_job(n)).job_id for n in (2, 3, 4)]
        reply = client.cancel(queued[-1])
        assert (reply.state, reply.was_running) == (pb.CANCELLED, False)
        assert client.await_proof(queued[-1]).state == pb.CANCELLED
        reply = client.cancel(running)
        assert reply.was_running
        ended = client.await_proof(running)
        assert ended.state == pb.CANCELLED and "cancelled while running" in ended.error
        for job in queued[:2]:
            _check_proof(client.await_proof(job))


def test_clients_that_disconnect_mid_await_free_their_threads(daemons, key):
    daemon = daemons(key, slow_ms=2000, config="rpc_threads = 12\n")  # 4 places to wait
    with daemon.client() as client:
        job = client.submit(_job(1)).job_id
    for _ in range(6):  # more abandoned awaits than the daemon has places for them
        channel = grpc.insecure_channel(daemon.address)
        future = rpc.ProverStub(channel).AwaitProof.future(pb.AwaitProofRequest(job_id=job))
        time.sleep(0.1)
        future.cancel()
        channel.close()
    time.sleep(1.0)  # abandoned waits notice within half a second
    with daemon.client() as client:
        started = time.monotonic()
        assert client.status().backend == "fastcpu"
        assert time.monotonic() - started < 2.0
        _check_proof(client.await_proof(job))


def test_a_prove_whose_client_leaves_is_cancelled_unless_it_can_come_back(daemons, key):
    """A Prove call past its deadline: without an idempotency key its job is cancelled (no one
    holds its id); with one, the job goes on and the same call again gets its proof."""
    daemon = daemons(key, slow_ms=1500)
    with daemon.client() as client:
        channel = grpc.insecure_channel(daemon.address)
        stub = rpc.ProverStub(channel)
        with pytest.raises(grpc.RpcError) as left:
            stub.Prove(_job(1), timeout=0.3)
        assert left.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        deadline = time.monotonic() + 10
        while client.status().cancelled != 1:
            assert time.monotonic() < deadline, "the orphaned job was not cancelled"
            time.sleep(0.1)
        with pytest.raises(grpc.RpcError):
            stub.Prove(_job(2, idempotency_key="again"), timeout=0.3)
        channel.close()
        _check_proof(client.prove(_job(2, idempotency_key="again")))
        now = client.status()
        assert (now.cancelled, now.done) == (1, 1)


def test_waiting_calls_leave_threads_for_cancel_and_status(daemons, key):
    """rpc_threads = 10 leaves 2 places for calls that wait for a job: a third waiter is
    refused at once (a Prove before its job is queued), and cancel and status are answered
    while both places are held."""
    daemon = daemons(key, slow_ms=1500, config="rpc_threads = 10\n")
    with daemon.client() as client:
        jobs = [client.submit(_job(n)).job_id for n in range(3)]
        with ThreadPoolExecutor(2) as pool:
            waits = [pool.submit(client.await_proof, job) for job in jobs[:2]]
            time.sleep(0.5)  # both are waiting
            started = time.monotonic()
            with pytest.raises(ServiceError, match="2 calls are waiting for jobs") as refused:
                client.await_proof(jobs[2])
            assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
            with pytest.raises(ServiceError, match="2 calls are waiting for jobs"):
                client.prove(_job(99))
            assert client.cancel(jobs[2]).state == pb.CANCELLED
            assert client.status().queued + client.status().running == 2  # the refused Prove
            assert time.monotonic() - started < 1.0  # queued nothing, each answered at once
            for wait in waits:
                _check_proof(wait.result(timeout=60))
        _check_proof(client.prove(_job(7)))  # the places are free again


def test_a_full_queue_is_resource_exhausted(daemons, key, capsys):
    daemon = daemons(key, slow_ms=3000, config="[engine]\nmax_queued = 2\n")
    with daemon.client() as client:
        first = client.submit(_job(0)).job_id
        _wait_state(client, first, pb.RUNNING)
        accepted = [first]
        with pytest.raises(ServiceError, match="the queue is full") as full:
            for n in range(1, 10):
                accepted.append(client.submit(_job(n)).job_id)
        assert full.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        # 2 waiting to start (queued, or taken into a batch and waiting for a pipeline place),
        # beside the running job and, once it has its place, the one synthesized beside it
        assert 3 <= len(accepted) <= 4
        # the CLI's submit while full; until the second job has its pipeline place it counts as
        # waiting, and taking it frees room, so refill before each try
        for attempt in range(10, 15):
            with contextlib.suppress(ServiceError):
                for n in range(10 * attempt, 10 * attempt + 10):
                    accepted.append(client.submit(_job(n)).job_id)
            capsys.readouterr()
            code = main(["-q", "client", "submit", "--addr", daemon.address, "--key", "k"])
            if code == 75:
                break
        assert code == 75
        assert "RESOURCE_EXHAUSTED" in capsys.readouterr().err
        for job in accepted:
            client.cancel(job)


def _serve(tmp_path: Path, *args: str) -> tuple[int, str]:
    """``cuzk serve`` in this process, for starts that must fail: (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                "-q",
                "--profile",
                str(_profile(tmp_path)),
                "serve",
                "--state-dir",
                str(tmp_path / "state"),
                *args,
            ]
        )
    return code, err.getvalue()


def test_start_with_a_missing_or_corrupt_key_exits_2(tmp_path, key):
    (tmp_path / "c.toml").write_text("[keys.x]\nparams = 'nowhere'\n")
    done = subprocess.run(  # one for real: a process, its exit status, its stderr
        [
            sys.executable,
            "-m",
            "cuzk_core",
            "serve",
            "--state-dir",
            str(tmp_path / "state"),
            "--config",
            str(tmp_path / "c.toml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == f"cuzk: error: key 'x': {tmp_path / 'nowhere'} is not a folder made by `cuzk setup`\n"
    )
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("vk.bin", "circuit.json"):
        (broken / name).write_bytes((key / name).read_bytes())
    (broken / "params.bin").write_bytes((key / "params.bin").read_bytes()[:5000])
    bad_vk = tmp_path / "bad_vk"
    bad_vk.mkdir()
    for name in ("params.bin", "circuit.json"):
        (bad_vk / name).write_bytes((key / name).read_bytes())
    (bad_vk / "vk.bin").write_bytes((key / "vk.bin").read_bytes()[:77])
    cases = {
        "corrupt preloaded": (
            f"[keys.x]\nparams = '{broken}'\n[residency]\npreload = ['x']\n",
            "params.bin",
        ),
        "corrupt vk": (
            f"[keys.x]\nparams = '{key}'\n[keys.y]\nparams = '{broken / 'vk.bin'}'\n",
            "is not a folder",
        ),
        "bad config": ("[engine]\nmax_batch_size = 0\n", "engine.max_batch_size must be"),
        "unknown key": ("[engine]\nthreads = 2\n", "unknown key 'engine.threads'"),
        "bad warm-up": ("[engine]\nwarm_up_proofs = 1.5\n", "engine.warm_up_proofs must be"),
        "unknown preload": ("[residency]\npreload = ['y']\n", "residency.preload names 'y'"),
        "too few threads": ("rpc_threads = 8\n", "rpc_threads must be more than 8"),
        "request over 2 GiB": ("max_request_mib = 2048\n", "max_request_mib must be at most"),
        "trace folder missing": (
            "[engine]\ntrace = 'nowhere/t.jsonl'\n",
            "engine.trace 'nowhere/t.jsonl': the folder",
        ),
        "trace is a folder": (f"[engine]\ntrace = '{tmp_path}'\n", "a folder, not a file"),
        "endless batch wait": ("[engine]\nmax_batch_wait_ms = 1e13\n", "at most 3.6e+06"),
        "infinite budget": ("[residency]\nbudget_mib = inf\n", "must be a number > 0"),
        "not a number": ("[engine]\nresult_ttl_s = nan\n", "must be a number > 0"),
        "half a thread": ("rpc_threads = 8.5\n", "rpc_threads must be a whole number"),
        "half a job": ("[engine]\nmax_queued = 0.5\n", "must be a whole number ≥ 1"),
        "no bytes": ("max_request_mib = 1e-9\n", "at least 1/1024 (1 KiB)"),
        "roots of numbers": ("[inputs]\nroots = [1]\n", "must be a list of strings"),
        "workers unbounded": ("[engine]\ncheck_workers = 100000\n", "at most 256"),
        "socket under a file": (
            f"listen = 'unix://{tmp_path / 'c.toml' / 'x.sock'}'\n",
            "cannot make its folder",
        ),
        "socket path too long": (
            f"listen = 'unix://{tmp_path / ('s' * 120)}.sock'\n",
            "a unix socket's path holds at most 107",
        ),
    }
    for name, (config, message) in cases.items():
        (tmp_path / "c.toml").write_text(config)
        code, err = _serve(tmp_path, "--config", str(tmp_path / "c.toml"))
        assert code == 2, (name, err)
        errors = [line for line in err.splitlines() if line.startswith("cuzk: error:")]
        assert len(errors) == 1 and message in errors[0], (name, err)  # beside: the key
        assert err.endswith(errors[0] + "\n") and "Traceback" not in err  # cache's log line
    assert not (tmp_path / "state" / "cuzk.sock").exists()


def test_a_second_daemon_on_a_state_folder_in_use_exits_2_and_leaves_it_alone(
    daemons, key, tmp_path
):
    first = daemons(key, slow_ms=300)
    client = first.client()
    jobs = [client.submit(_job(seed)).job_id for seed in range(3)]
    other = f"unix://{tmp_path / 'other.sock'}"
    code, err = _serve(tmp_path, "--listen", other, "--key", f"k={key}")
    assert code == 2 and "Traceback" not in err
    assert err == (
        f"cuzk: error: {tmp_path / 'state'}: another process (a daemon?) has this state "
        "folder's job store open; give each daemon its own --state-dir\n"
    )
    for job_id in jobs:  # each proven once, by the first daemon
        result = client.await_proof(job_id, 60)
        _check_proof(result)
        assert result.attempts == 1
    file = tmp_path / "a-file"
    file.write_text("")
    code, err = _serve(tmp_path, "--state-dir", str(file / "sub"))
    assert code == 2 and err.startswith(f"cuzk: error: state dir {file / 'sub'}: cannot make")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tcp_needs_a_token_and_checks_it(tmp_path, key, daemons):
    code, err = _serve(tmp_path, "--listen", "127.0.0.1:0", "--key", f"k={key}")
    assert code == 2 and "TCP needs --token-file" in err
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    token.chmod(0o644)
    code, err = _serve(tmp_path, "--listen", "127.0.0.1:0", "--token-file", str(token))
    assert code == 2 and "readable by others" in err
    token.chmod(0o600)
    port = _free_port()
    daemon = daemons(key, extra=("--listen", f"127.0.0.1:{port}", "--token-file", str(token)))
    address = f"127.0.0.1:{port}"
    with Client(address) as anonymous, pytest.raises(ServiceError) as refused:
        anonymous.status()
    assert refused.value.code is grpc.StatusCode.UNAUTHENTICATED
    wrong = tmp_path / "wrong"
    wrong.write_text("guess")
    wrong.chmod(0o600)
    with Client(address, wrong) as guessing, pytest.raises(ServiceError, match="bearer"):
        guessing.status()
    with Client(address, token) as client:
        _check_proof(client.prove(_job(5)))
    assert daemon.process.poll() is None
    other_state = str(tmp_path / "state2")
    for listen, message in (
        (address, f"--listen {address}: cannot listen there (Address already in use)"),
        ("127.0.0.1:99999", "--listen 127.0.0.1:99999: expected HOST:PORT, PORT 0–65535"),
    ):
        code, err = _serve(tmp_path, "--state-dir", other_state, "--listen", listen,
                           "--token-file", str(token))  # fmt: skip
        assert (code, err) == (2, f"cuzk: error: {message}\n")


def test_a_key_over_the_budget_and_a_request_over_the_limit_are_refused(daemons, key):
    daemon = daemons(key, config="max_request_mib = 0.01\n[residency]\nbudget_mib = 0.01\n")
    with daemon.client() as client:
        with pytest.raises(ServiceError, match="larger than max") as too_big:
            client.submit(pb.SubmitProofRequest(key_id="k", witness_upload=bytes(20_000)))
        assert too_big.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        with pytest.raises(ServiceError, match=r"key 'k' needs .* MiB, more than") as refused:
            client.preload("k")
        assert refused.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        result = client.prove(_job(1))
        assert result.state == pb.FAILED and "more than the whole budget of 0.0 MiB" in result.error
        assert client.evict("k").was_loaded is False


def test_bench_commands_and_key_tiers(daemons, key, tmp_path):
    daemon = daemons(key)
    with daemon.client() as client:
        assert client.status().keys[0].tier == "cold"
        first = client.preload("k")
        assert not first.already_loaded and client.preload("k").already_loaded
        assert client.status().keys[0].tier == "hot"
    report = tmp_path / "batch.json"
    assert (
        main(
            [
                "-q",
                "bench",
                "batch",
                "--addr",
                daemon.address,
                "--key",
                "k",
                "--count",
                "3",
                "--json",
                str(report),
            ]
        )
        == 0
    )
    document = json.loads(report.read_text())
    assert document["summary"]["states"] == {"done": 3}
    assert len({s["job_id"] for s in document["samples"]}) == 3
    assert all(
        s["phases"]["gpu_ms"] > 0 and s["phases"]["key_load_ms"] < 50 for s in document["samples"]
    )
    assert (
        main(
            [
                "-q",
                "bench",
                "stress",
                "--addr",
                daemon.address,
                "--key",
                "k",
                "--duration",
                "1s",
                "--clients",
                "2",
            ]
        )
        == 0
    )
    with daemon.client() as client:
        evicted = client.evict("k")
        assert evicted.was_loaded and evicted.freed_bytes > 0
        status = client.status()
        assert (status.keys[0].tier, status.keys[0].loads, status.hot_bytes) == ("cold", 1, 0)


def test_sigterm_drains_the_running_job(daemons, key):
    daemon = daemons(key, slow_ms=800)
    with daemon.client() as client:
        job = client.submit(_job(3)).job_id
        _wait_state(client, job, pb.RUNNING)
    waiter = threading.Thread(target=daemon.stop)
    waiter.start()
    waiter.join(timeout=60)
    assert daemon.process.returncode == 0
    with daemons(key).client() as client:
        result = client.await_proof(job)
    _check_proof(result)
    assert result.attempts == 1  # finished before the daemon exited: not re-run


_SIGTERM_ELSEWHERE = """\
import signal, sys, threading
# A thread that takes signals (as the CUDA libraries' threads may), then the main thread
# blocks SIGTERM: the kernel hands it to that thread, which cannot interrupt the main one.
threading.Thread(target=threading.Event().wait, daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
from cuzk_core.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs POSIX signal masks")
def test_sigterm_taken_by_another_thread_still_stops_the_daemon(tmp_path, key):
    daemon = Daemon(tmp_path, key)
    daemon.command[1:3] = ["-c", _SIGTERM_ELSEWHERE]
    daemon.start()
    try:
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(timeout=30) == 0
    finally:
        if daemon.process.poll() is None:
            daemon.kill()
    assert not daemon.sock.exists()


def test_steady_throughput_leaves_the_first_quarter_of_a_batch_out():
    """A batch whose first two jobs paid a cold start: 8 jobs, the 2nd back at 3 s, then one a
    second: 6 jobs in 6 s after the first quarter, whatever the start cost."""

    def sample(done_s):
        return Sample("j", "done", 1.0, dict.fromkeys(PHASES, 1.0), "", done_s)

    done = [sample(t) for t in (2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)]
    assert steady_proofs_per_s(done) == 1.0
    assert summarize(done, 9.0)["steady_proofs_per_s"] == 1.0
    assert steady_proofs_per_s(done[:7]) is None  # under STEADY_MIN_JOBS
    assert steady_proofs_per_s([sample(None)] * 8) is None  # single runs carry no times


def test_a_status_carries_at_most_max_details_characters_of_an_error():
    """An error echoes the client's values; a long one is cut in the middle, so a 20 kB job id
    still gets NOT_FOUND (gRPC's 16 KiB metadata would otherwise make it RESOURCE_EXHAUSTED)."""
    from cuzk_core.service.server import MAX_DETAILS, status_details

    assert status_details("unknown job 'x'") == "unknown job 'x'"
    long = f"unknown job {'x' * 20_000!r} (never submitted)"
    cut = status_details(long)
    assert len(cut) <= MAX_DETAILS
    assert cut.startswith("unknown job 'xxx") and cut.endswith("(never submitted)")
    assert "characters cut" in cut


def test_a_relative_state_dir_is_kept_absolute(tmp_path, monkeypatch):
    """The job store records spool paths under the state folder: a restart from another
    working folder must find them."""
    from cuzk_core.profile import load_profile
    from cuzk_core.service.config import build_configs

    monkeypatch.chdir(tmp_path)
    _, engine = build_configs({}, tmp_path, load_profile("cpu"), state_dir="st")
    assert engine.state_dir == tmp_path / "st" and engine.state_dir.is_absolute()
    monkeypatch.setenv("CUZK_STATE_DIR", "env-state")
    _, engine = build_configs({}, tmp_path, load_profile("cpu"))
    assert engine.state_dir == tmp_path / "env-state"
