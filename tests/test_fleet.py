"""The fleet on a real local Ray cluster with the fastcpu backend: real proofs on small
porep-lite keys, each checked by the verifier. Routing keeps a key on the workers that hold it;
a worker killed mid-proof has its job re-run elsewhere, exactly once in the results; a worker
added while jobs wait takes them; priorities order the queue; a head restarted on its state
folder finds its queue. Router decisions are also checked alone, without Ray.

One Ray cluster serves the module (its start-up is most of the time); every head a test starts
is shut down by the test, and with it its workers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuzk_core.cli import main
from cuzk_core.engine import (
    EngineConfig,
    JobInput,
    JobRequest,
    JobState,
    KeyKind,
    Priority,
    check_key,
)
from cuzk_core.fleet.router import Pending, Router
from cuzk_core.fleet.sizing import Fleet, JobMix, KeyMix, predict, simulate
from cuzk_core.groth16.keys import Proof
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.profile import load_profile

ray = pytest.importorskip("ray", reason="the fleet extra (ray) is not installed")

from cuzk_core.fleet.head import FleetConfig, FleetEngine  # noqa: E402 - needs ray

REPO = Path(__file__).resolve().parents[1]
CUZK = (sys.executable, "-m", "cuzk_core")
VERIFY_FILES = (("vk", "bin"), ("proof", "bin"), ("public", "json"))
WAIT_S = 120
ONE_KEY_BUDGET = 600_000
"""Bytes: one of the test keys (~477 kB hot) fits, two do not."""


def _profile(folder: Path, extra: str = "") -> Path:
    path = folder / f"profile{abs(hash(extra))}.toml"
    path.write_text(f'extends = "cpu"\nbackend = "fastcpu"\n{extra}')
    return path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two porep-lite keys, one challenge at depth 4, of equal size (setup seeds 1 and 2)."""
    folder = tmp_path_factory.mktemp("keys")
    made = {}
    for seed in (1, 2):
        out = folder / f"k{seed}"
        argv = ["-q", "--profile", str(_profile(folder)), "setup", "--challenges", "1"]
        argv += ["--depth", "4", "--seed", str(seed), "--out", str(out)]
        assert main(argv) == 0
        made[f"k{seed}"] = out
    return made


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster for the module, shut down after it."""
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture
def heads(tmp_path: Path, keys, cluster):
    """Make fleet heads with ``heads(workers=N, ...)``; all are shut down after the test."""
    started: list[FleetEngine] = []

    def make(
        workers: int,
        budget: int = 1 << 30,
        slow_ms: int = 0,
        pipeline: bool = True,
        state: str = "state",
    ) -> FleetEngine:
        extra = f"[debug.sleep_ms]\nmsm_h = {slow_ms}\n" if slow_ms else ""
        specs = {name: check_key(name, KeyKind.PARAMS, path) for name, path in keys.items()}
        config = EngineConfig(
            state_dir=tmp_path / state,
            profile=load_profile(str(_profile(tmp_path, extra))),
            keys=specs,
            budget_bytes=budget,
            pipeline=pipeline,
        )
        head = FleetEngine(config, FleetConfig(workers=workers))
        head.start()
        started.append(head)
        return head

    yield make
    for head in started:
        head.shutdown()


def _submit(head: FleetEngine, key: str, seed: int, priority=Priority.NORMAL) -> str:
    return head.submit(JobRequest(key, JobInput(circuit_seed=seed), priority=priority)).job_id


def _verified(head: FleetEngine, job_id: str):
    record = head.await_job(job_id, timeout_s=WAIT_S)
    assert record.state is JobState.DONE, record.error
    vk = head.verifying_key(record.key_id)
    ok, reason = verify_proof(vk, Proof.from_bytes(record.proof), list(record.public_inputs))
    assert ok, reason
    return record


def _wait_up(head: FleetEngine, count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while sum(w.state == "up" for w in head.workers.values()) < count:
        assert time.monotonic() < deadline, "workers did not come up"
        time.sleep(0.05)


# ---------------------------------------------------------------- the router alone


def _router(budget: int = 100, workers: int = 2, slots: int = 1) -> Router:
    router = Router({"a": 60, "b": 60, "c": 60})
    for i in range(1, workers + 1):
        router.add_worker(f"w{i}", slots, budget)
    return router


def _ids(placed: list[tuple[Pending, str]]) -> list[tuple[str, str]]:
    return [(job.job_id, worker) for job, worker in placed]


def test_router_places_each_new_key_where_nothing_is_evicted_then_keeps_it():
    router = _router()
    router.add(Pending.make("a1", "a", Priority.NORMAL, 1))
    router.add(Pending.make("b1", "b", Priority.NORMAL, 2))
    assert _ids(router.plan()) == [("a1", "w1"), ("b1", "w2")]  # not b onto w1 over a
    router.finished("w1", "a1", {"a": 60}, proof_s=1.0, load_s=0.1)
    router.finished("w2", "b1", {"b": 60}, proof_s=1.0, load_s=0.1)
    for seq, key in enumerate("baba", start=3):
        router.add(Pending.make(f"{key}{seq}", key, Priority.NORMAL, seq))
    assert _ids(router.plan()) == [("b3", "w2"), ("a4", "w1")]  # each to its key's worker


def test_router_spreads_a_key_only_when_its_queue_outlasts_a_load():
    router = _router(budget=200)
    router.add(Pending.make("a1", "a", Priority.NORMAL, 1))
    assert [w for _, w in router.plan()] == ["w1"]
    router.add(Pending.make("a2", "a", Priority.NORMAL, 2))
    assert router.plan() == []  # a is hot on w1 and no proof of it is timed yet: w2 waits
    router.finished("w1", "a1", {"a": 60}, proof_s=0.05, load_s=1.0)
    [(job, worker)] = router.plan()
    assert (job.job_id, worker) == ("a2", "w1")  # hot beats a load
    for seq in range(3, 6):
        router.add(Pending.make(f"a{seq}", "a", Priority.NORMAL, seq))
    assert router.plan() == []  # 4 × 0.05 s on one worker < a 1 s load
    router.finished("w1", "a2", {"a": 60}, proof_s=5.0)
    router.costs["a"].proof_s = 5.0
    assert [w for _, w in router.plan()] == ["w1", "w2"]  # 3 × 5 s > 1 s: a goes to w2 too


def test_router_priorities_first_then_the_eviction_nobody_waits_for():
    router = _router(budget=100, workers=2)
    router.add(Pending.make("a1", "a", Priority.NORMAL, 1))
    router.add(Pending.make("b1", "b", Priority.NORMAL, 2))
    router.plan()
    router.finished("w1", "a1", {"a": 60}, proof_s=1.0, load_s=0.5)
    router.finished("w2", "b1", {"b": 60}, proof_s=1.0, load_s=0.5)
    router.add(Pending.make("a2", "a", Priority.NORMAL, 3))
    router.add(Pending.make("c1", "c", Priority.CRITICAL, 4))
    # c is hot nowhere and first by priority; on w1 it would evict a, which a2 waits for, so
    # it goes to w2, whose b has no job waiting; a2 stays with a on w1
    assert router.cost("c", router.workers["w1"]) == pytest.approx(1.0)  # load c + reload a
    assert router.cost("c", router.workers["w2"]) == pytest.approx(0.5)  # load c
    assert _ids(router.plan()) == [("c1", "w2"), ("a2", "w1")]


def test_router_sends_a_job_that_died_on_a_worker_to_another_and_requeues_its_jobs():
    router = _router(workers=2)
    router.add(Pending.make("a1", "a", Priority.NORMAL, 1, avoid=frozenset({"w1"})))
    assert _ids(router.plan()) == [("a1", "w2")]
    assert router.worker_down("w2") == ["a1"] and router.holders("a") == []
    router.add(Pending.make("a1", "a", Priority.NORMAL, 1, avoid=frozenset({"w1", "w2"})))
    assert _ids(router.plan()) == [("a1", "w1")]  # the only live worker takes it after all
    assert len(router) == 0 and router.queued_of("a") == 0


# ---------------------------------------------------------------- on Ray


def test_mixed_run_of_two_keys_loads_each_key_once_per_worker(heads):
    head = heads(workers=2, budget=ONE_KEY_BUDGET)
    _wait_up(head, 2)
    jobs = [_submit(head, f"k{1 + i % 2}", i) for i in range(16)]
    records = [_verified(head, job) for job in jobs]
    assert all(r.attempts == 1 for r in records)
    loads = {w.name: dict(w.loads) for w in head.workers.values()}
    assert all(count <= 1 for per in loads.values() for count in per.values()), loads
    assert sum(w.jobs_done for w in head.workers.values()) == 16
    assert all(w.jobs_done > 0 for w in head.workers.values()), loads
    status = head.status()
    assert status.counts[JobState.DONE] == 16 and status.queued == 0
    assert sum(k.loads for k in status.keys) <= 4


def test_a_worker_killed_mid_proof_has_its_job_rerun_once_elsewhere(heads):
    head = heads(workers=2, slow_ms=1500, pipeline=False)
    _wait_up(head, 2)
    jobs = [_submit(head, "k1", i) for i in range(3)]
    deadline = time.monotonic() + WAIT_S
    victim = None
    while victim is None:
        assert time.monotonic() < deadline, "no job started"
        for job in jobs:
            name = head.worker_of(job)
            if name is not None and head.get(job).state is JobState.RUNNING:
                victim = (job, name)
                break
        time.sleep(0.05)
    job, name = victim
    time.sleep(0.5)  # inside the proof (its MSM sleeps 1.5 s)
    pid = head.workers[name].pid
    os.kill(pid, signal.SIGKILL)
    records = {j: _verified(head, j) for j in jobs}
    assert records[job].attempts == 2
    assert all(r.attempts == 1 for j, r in records.items() if j != job)
    counts = head.status().counts
    assert counts[JobState.DONE] == 3 and counts[JobState.RUNNING] == 0
    assert counts[JobState.QUEUED] == 0 and counts[JobState.FAILED] == 0
    assert head.workers[name].generation == 1  # the head noticed its death once
    _wait_up(head, 2)  # Ray restarted it (a new pid), or the head replaced it
    back = head.workers[name]
    assert (back.state == "up" and back.pid != pid) or (
        back.state == "gone" and len(head.workers) == 3
    )


def test_priorities_then_a_worker_added_later_takes_queued_jobs(heads):
    head = heads(workers=1, slow_ms=300, pipeline=False)
    _wait_up(head, 1)
    first = _submit(head, "k1", 0)
    _verified(head, first)  # k1 is hot on w1 and its proof time known
    lows = [_submit(head, "k1", i, Priority.LOW) for i in range(1, 7)]
    critical = _submit(head, "k1", 99, Priority.CRITICAL)
    added = head.add_worker()
    records = {j: _verified(head, j) for j in [*lows, critical]}
    started = sorted(records, key=lambda j: records[j].started_at)
    assert started.index(critical) <= 2  # at most the two lows already sent ran before it
    assert head.workers[added].jobs_done > 0


def test_a_restarted_head_finds_its_queue_in_the_store(heads):
    head = heads(workers=0, state="restart")
    jobs = [_submit(head, "k2", i) for i in range(3)]
    head.store.mark_running(jobs[0])  # as a head that died while a worker proved it leaves it
    head.shutdown()
    again = heads(workers=1, state="restart")
    records = [_verified(again, job) for job in jobs]
    assert [r.attempts for r in records] == [2, 1, 1]


def test_cuzk_fleet_serves_the_daemons_api_to_client_and_bench(tmp_path, keys, cluster):
    sock = tmp_path / "fleet.sock"
    profile = _profile(tmp_path)
    address = f"unix://{sock}"
    options = ["--ray", cluster, "--workers", "1", "--state-dir", str(tmp_path / "state")]
    options += ["--listen", address, "--key", f"k1={keys['k1']}"]
    head = subprocess.Popen(
        [*CUZK, "--profile", str(profile), "fleet", *options],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "head.err").open("wb"),
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while "listening on" not in (tmp_path / "head.err").read_text():
            assert head.poll() is None, (tmp_path / "head.err").read_text()
            assert time.monotonic() < deadline, "the head did not start"
            time.sleep(0.1)
        bench = subprocess.run(
            [*CUZK, "bench", "batch", "--addr", address, "--key", "k1", "--count", "3"],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            cwd=REPO,
        )
        assert bench.returncode == 0, bench.stderr
        assert "3 jobs" in bench.stdout and "3 done" in bench.stdout
        out = tmp_path / "out"
        prove = subprocess.run(
            [*CUZK, "client", "prove", "--addr", address, "--key", "k1", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            cwd=REPO,
        )
        assert prove.returncode == 0, prove.stderr
        files = {name: str(out / f"{name}.{ext}") for name, ext in VERIFY_FILES}
        assert main(["verify", *(a for n, f in files.items() for a in (f"--{n}", f))]) == 0
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait(timeout=30)
    assert head.returncode == 0, (tmp_path / "head.err").read_text()


# ---------------------------------------------------------------- the sizing model


def test_sizing_model_matches_the_simulation():
    mix = JobMix((KeyMix("porep", 47 << 30, 1.0, 0.5), KeyMix("window", 8 << 30, 2.0, 0.5)))
    for gpus in (1, 4, 16):
        fleet = Fleet(gpus=gpus, key_load_s_per_gib=0.5, head_jobs_per_s=200.0)
        model = predict(fleet, mix)
        sim = simulate(fleet, mix, jobs=400 * gpus, seed=gpus)
        assert sim.proofs_per_s == pytest.approx(model.proofs_per_s, rel=0.1)
        assert sim.key_loads <= model.key_loads + gpus
