"""The engine as a library, in process: scheduler order and batches, key residency under a
budget, the job store's idempotency and crash recovery, the pipeline's overlap in the trace,
cancellation; every proof checked by the verifier."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cuzk_core.bench.trace import overlaps, read_trace
from cuzk_core.cli import main
from cuzk_core.engine import (
    Engine,
    EngineConfig,
    IdempotencyConflict,
    JobError,
    JobInput,
    JobRequest,
    JobState,
    KeyBusy,
    KeyKind,
    KeyTooLarge,
    PathRefused,
    Priority,
    QueueFull,
    Tier,
    UnknownKey,
    check_key,
    checkers,
)
from cuzk_core.engine.handoff import Handoff
from cuzk_core.engine.keys import load_key, window_table_bytes
from cuzk_core.engine.residency import KeyResidency
from cuzk_core.engine.scheduler import QueuedJob, Scheduler
from cuzk_core.engine.store import JobStore
from cuzk_core.errors import BackendUnavailable, CuzkError, FormatError
from cuzk_core.groth16.keys import Proof
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import TableBits, load_profile
from cuzk_core.timing import Timer

FASTCPU = "fastcpu"


def _profile(tmp: Path, extra: str = "") -> Path:
    path = tmp / ("slow.toml" if extra else "profile.toml")
    path.write_text(f'extends = "cpu"\nbackend = "{FASTCPU}"\n{extra}')
    return path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two porep-lite keys of different sizes (depth 1 and 2, one challenge)."""
    folder = tmp_path_factory.mktemp("keys")
    made = {}
    for depth in (1, 2):
        out = folder / f"d{depth}"
        code = main(
            [
                "-q",
                "--profile",
                str(_profile(folder)),
                "setup",
                "--challenges",
                "1",
                "--depth",
                str(depth),
                "--seed",
                "5",
                "--out",
                str(out),
            ]
        )
        assert code == 0
        made[f"d{depth}"] = out
    return made


def _config(tmp: Path, keys: dict[str, Path], **changes) -> EngineConfig:
    specs = {name: check_key(name, KeyKind.PARAMS, path) for name, path in keys.items()}
    settings = {"budget_bytes": 1 << 30, **changes}
    chosen = settings.pop("profile", None)
    profile = load_profile(str(chosen if chosen is not None else _profile(tmp)))
    return EngineConfig(state_dir=tmp / "state", profile=profile, keys=specs, **settings)


def _verified(engine: Engine, job_id: str) -> None:
    record = engine.await_job(job_id, timeout_s=120)
    assert record.state is JobState.DONE, record.error
    vk = engine.verifying_key(record.key_id)
    ok, reason = verify_proof(vk, Proof.from_bytes(record.proof), list(record.public_inputs))
    assert ok, reason


# ---------------------------------------------------------------- scheduler


def test_scheduler_runs_priorities_first_then_submission_order():
    scheduler = Scheduler(max_queued=10, max_batch_size=1, max_batch_wait_ms=0)
    order = [
        ("a", Priority.LOW),
        ("b", Priority.NORMAL),
        ("c", Priority.CRITICAL),
        ("d", Priority.HIGH),
        ("e", Priority.CRITICAL),
        ("f", Priority.NORMAL),
    ]
    for seq, (job, priority) in enumerate(order):
        scheduler.push(QueuedJob.make(job, "k", priority, seq))
    taken = [scheduler.next_batch()[0].job_id for _ in order]
    assert taken == ["c", "e", "d", "b", "f", "a"]


def test_scheduler_batches_same_key_jobs_up_to_the_limit():
    scheduler = Scheduler(max_queued=10, max_batch_size=3, max_batch_wait_ms=0)
    for seq, key in enumerate(["x", "y", "x", "x", "x", "y"]):
        scheduler.push(QueuedJob.make(f"j{seq}", key, Priority.NORMAL, seq))
    assert [j.job_id for j in scheduler.next_batch()] == ["j0", "j2", "j3"]
    assert [j.job_id for j in scheduler.next_batch()] == ["j1", "j5"]
    assert [j.job_id for j in scheduler.next_batch()] == ["j4"]


def test_batch_wait_collects_late_jobs_and_yields_to_higher_priority():
    scheduler = Scheduler(max_queued=10, max_batch_size=4, max_batch_wait_ms=400)
    scheduler.push(QueuedJob.make("first", "x", Priority.NORMAL, 0))
    late = threading.Timer(0.05, scheduler.push, [QueuedJob.make("late", "x", Priority.NORMAL, 1)])
    late.start()
    urgent = QueuedJob.make("urgent", "y", Priority.CRITICAL, 2)
    threading.Timer(0.15, scheduler.push, [urgent]).start()
    start = time.monotonic()
    batch = scheduler.next_batch()
    waited = time.monotonic() - start
    assert [j.job_id for j in batch] == ["first", "late"]
    assert 0.1 < waited < 0.35  # ended by the critical job, not by the 400 ms deadline
    assert scheduler.next_batch()[0].job_id == "urgent"


def test_scheduler_refuses_past_max_queued_and_skips_removed_jobs():
    scheduler = Scheduler(max_queued=2, max_batch_size=1, max_batch_wait_ms=0)
    scheduler.push(QueuedJob.make("a", "k", Priority.NORMAL, 0))
    scheduler.push(QueuedJob.make("b", "k", Priority.NORMAL, 1))
    with pytest.raises(QueueFull, match="queue is full"):
        scheduler.push(QueuedJob.make("c", "k", Priority.NORMAL, 2))
    assert scheduler.remove("a") and not scheduler.remove("a")
    assert scheduler.next_batch()[0].job_id == "b"
    scheduler.close()
    assert scheduler.next_batch() is None


def test_scheduler_counts_jobs_handed_out_until_they_start():
    scheduler = Scheduler(max_queued=2, max_batch_size=2, max_batch_wait_ms=0)
    for seq, job in enumerate("ab"):
        scheduler.push(QueuedJob.make(job, "k", Priority.NORMAL, seq))
    assert [j.job_id for j in scheduler.next_batch()] == ["a", "b"]
    assert len(scheduler) == 2  # handed out in a batch, not started: still waiting
    with pytest.raises(QueueFull, match="2 jobs waiting to start"):
        scheduler.push(QueuedJob.make("c", "k", Priority.NORMAL, 2))
    assert scheduler.start("a") and not scheduler.start("a")
    assert scheduler.push(QueuedJob.make("c", "k", Priority.NORMAL, 2)) == 1  # b runs first
    assert scheduler.remove("b") and not scheduler.start("b")  # cancelled while it waited
    assert len(scheduler) == 1


# ---------------------------------------------------------------- the stages' handoff


def test_handoff_holds_depth_jobs_from_reserve_to_done_in_order():
    handoff: Handoff[str] = Handoff(2)
    assert handoff.reserve() and handoff.reserve()
    handoff.put("a")
    handoff.put("b")
    third = threading.Event()
    waiter = threading.Thread(target=lambda: handoff.reserve() and third.set())
    waiter.start()
    assert handoff.get() == "a"
    assert not third.wait(0.1)  # "a" is in stage 2 and still holds its place
    handoff.done()
    assert third.wait(5)
    waiter.join()
    assert len(handoff) == 2
    handoff.release()  # the third job ended in stage 1
    handoff.close()
    assert handoff.get() == "b" and handoff.get() is None  # drained, then closed
    handoff.done()
    assert not handoff.reserve() and len(handoff) == 0
    with pytest.raises(RuntimeError, match="never reserved"):
        handoff.done()
    with pytest.raises(ValueError, match="at least one place"):
        Handoff(0)


# ---------------------------------------------------------------- residency


def _residency(keys: dict[str, Path], budget: int, loads: list[str]) -> KeyResidency:
    backend = load_plugins().backend(load_profile("cpu"), Timer(level=0))
    specs = {name: check_key(name, KeyKind.PARAMS, path) for name, path in keys.items()}

    def load(spec):
        loads.append(spec.key_id)
        return load_key(spec, backend)

    return KeyResidency(specs, budget, load)


def test_residency_evicts_least_recently_used_but_never_a_key_in_use(keys):
    sizes = {k: check_key(k, KeyKind.PARAMS, p).disk_bytes for k, p in keys.items()}
    loads: list[str] = []
    residency = _residency(keys, max(sizes.values()) + min(sizes.values()) // 2, loads)
    with residency.lease("d1"):
        pass
    with residency.lease("d1") as lease:  # hot: no second load
        assert lease.load_ms == 0.0
    assert loads == ["d1"]
    with residency.lease("d2"):  # both do not fit: d1 (idle) is demoted to warm
        tiers = {s.key_id: s.tier for s in residency.status()}
        assert tiers == {"d1": Tier.WARM, "d2": Tier.HOT}
        with pytest.raises(KeyBusy, match="in use"):
            residency.evict("d2")
        with pytest.raises(KeyTooLarge, match=r"needs .* MiB; the budget is .* keys in use hold"):
            residency.preload("d1")  # d2 is leased: it may not be evicted for d1
    hot = {s.key_id: s.bytes for s in residency.status()}["d2"]
    assert residency.evict("d2") == (True, hot)
    assert {s.key_id: s.tier for s in residency.status()}["d2"] is Tier.COLD
    assert residency.preload("d1")[0] is False
    assert residency.preload("d1")[0] is True
    assert loads == ["d1", "d2", "d1"]
    residency.close()


def test_a_resident_keys_window_tables_count_against_the_budget(keys):
    """A key whose profile asks for window tables holds 13x its 20-bit batches on the device:
    window_table_bytes says how much more, an accelerated backend's hot key counts it, and a key
    that only fits the budget without its tables is refused once loaded."""
    spec = check_key("d1", KeyKind.PARAMS, keys["d1"])
    tables = {"memory.key_storage": "device", "msm.table_bits.a": 20, "msm.table_bits.h": 16}
    plain = load_key(spec, load_plugins().backend(load_profile("cpu", tables), Timer(level=0)))
    pk = plain.pk
    assert TableBits.windows(20) == 13 and TableBits.windows(16) == 16
    expected = 12 * pk.a.coords.nbytes + 15 * pk.h.coords.nbytes
    profile = load_profile("cpu", tables)
    assert window_table_bytes(pk, profile) == expected > 0
    assert window_table_bytes(pk, profile, ["h"]) == 15 * pk.h.coords.nbytes
    assert window_table_bytes(pk, load_profile("cpu", {"memory.key_storage": "device"})) == 0
    fewer = load_profile("cpu", {**tables, "msm.table_windows.a": 4})
    assert window_table_bytes(pk, fewer, ["a"]) == 3 * pk.a.coords.nbytes
    assert plain.table_bytes == 0  # a CPU backend builds no tables
    accelerated = load_plugins().backend(profile, Timer(level=0))
    accelerated.accelerated = True  # as a GPU backend: its hot keys count their tables
    counted = load_key(spec, accelerated)
    assert counted.table_bytes == expected and counted.nbytes == plain.nbytes + expected
    budget = plain.nbytes + expected // 2  # room for the key, not for its tables
    residency = KeyResidency({"d1": spec}, budget, lambda s: load_key(s, accelerated))
    with pytest.raises(KeyTooLarge, match=r"key 'd1' holds .* MiB once loaded; the budget is"):
        residency.preload("d1")
    assert {s.key_id: s.tier for s in residency.status()}["d1"] is Tier.WARM
    assert residency.hot_bytes() == 0


def test_residency_refuses_a_key_larger_than_the_budget(keys):
    residency = _residency(keys, 1024, [])
    with pytest.raises(KeyTooLarge, match=r"key 'd1' needs .* more than the whole budget"):
        residency.preload("d1")
    with pytest.raises(UnknownKey, match="unknown key 'nope'"):
        residency.spec("nope")


def test_check_key_names_a_missing_or_corrupt_key(tmp_path, keys):
    with pytest.raises(FormatError, match="not a folder made by `cuzk setup`"):
        check_key("gone", KeyKind.PARAMS, tmp_path / "gone")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("params.bin", "circuit.json"):
        (broken / name).write_bytes((keys["d1"] / name).read_bytes())
    (broken / "vk.bin").write_bytes((keys["d1"] / "vk.bin").read_bytes()[:100])
    with pytest.raises(FormatError, match=r"vk\.bin"):
        check_key("broken", KeyKind.PARAMS, broken)


# ---------------------------------------------------------------- store


def test_store_idempotency_and_crash_recovery(tmp_path):
    store = JobStore(tmp_path)
    request = JobRequest("k", JobInput(circuit_seed=1), idempotency_key="once")
    first, created, _ = store.insert(request)
    again, created_again, _ = store.insert(request)
    assert created and not created_again and again.job_id == first.job_id
    other, _, _ = store.insert(JobRequest("k", JobInput(circuit_seed=2)))
    assert store.mark_running(first.job_id) and store.mark_running(other.job_id)
    store.close()

    reopened = JobStore(tmp_path)  # as after kill -9: both were running
    assert reopened.recover(max_attempts=2) == []
    assert [r.job_id for r, _ in reopened.queued()] == [first.job_id, other.job_id]
    assert reopened.mark_running(first.job_id)  # second attempt
    assert [r.job_id for r in reopened.recover(max_attempts=2)] == [first.job_id]
    failed = reopened.get(first.job_id)
    assert failed.state is JobState.FAILED and "2 times" in failed.error
    assert reopened.get(other.job_id).state is JobState.QUEUED
    reopened.close()


def test_one_process_at_a_time_holds_a_store(tmp_path):
    store = JobStore(tmp_path)
    with pytest.raises(CuzkError, match=r"another process .* has this state folder's job store"):
        JobStore(tmp_path)
    store.close()
    JobStore(tmp_path).close()  # free again once closed


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("state", "bogus", "'bogus' is not a valid JobState"),
        ("priority", 9, "9 is not a valid Priority"),
        ("input", "not json", "Expecting value"),
        ("input", '{"colour": 1}', "unexpected keyword argument 'colour'"),
    ],
)
def test_a_damaged_row_is_a_one_line_error_at_open(tmp_path, column, value, message):
    store = JobStore(tmp_path)
    record, _, _ = store.insert(JobRequest("k", JobInput(circuit_seed=1)))
    store.close()
    with sqlite3.connect(tmp_path / "jobs.sqlite3") as db:
        db.execute(f"UPDATE jobs SET {column} = ? WHERE job_id = ?", (value, record.job_id))
    db.close()
    with pytest.raises(CuzkError) as damaged:
        JobStore(tmp_path)
    text = str(damaged.value)
    assert text.startswith(f"{tmp_path / 'jobs.sqlite3'}: job '{record.job_id}' is damaged (")
    assert message in text and "\n" not in text
    # the failed open let go of the folder: it opens once mended
    with sqlite3.connect(tmp_path / "jobs.sqlite3") as db:
        db.execute("DELETE FROM jobs WHERE job_id = ?", (record.job_id,))
    db.close()
    JobStore(tmp_path).close()


def test_store_sweeps_fetched_and_expired_results(tmp_path):
    store = JobStore(tmp_path)
    record, _, _ = store.insert(JobRequest("k", JobInput(), witness_upload=b"w"))
    assert Path(record.input.witness_path).read_bytes() == b"w"
    store.end(record.job_id, JobState.CANCELLED, "test")
    assert store.sweep(result_ttl_s=3600, fetched_ttl_s=3600) == 0
    store.mark_fetched(record.job_id)
    time.sleep(0.05)
    assert store.sweep(result_ttl_s=3600, fetched_ttl_s=0.01) == 1
    assert store.get(record.job_id) is None
    assert not (tmp_path / "spool" / record.job_id).exists()
    store.close()


# ---------------------------------------------------------------- engine


def _overlaps_across_jobs(trace: Path) -> list[tuple[str, str, float]]:
    """(synthesis span, other job's span, ms) for synthesis beside another job's phases."""
    found = []
    for first, second, ms in overlaps(read_trace(trace).spans):
        for a, b in ((first, second), (second, first)):
            if a.name.startswith("synthesis ") and a.name.split()[1] != b.name.split()[1]:
                found.append((a.name, b.name, ms))
    return found


@pytest.mark.parametrize("name", ["fastcpu", "cupy", "pycuda"])
def test_pipelined_proofs_verify_and_equal_the_sequential_ones(tmp_path, keys, name):
    """Synthesis of one job (witness, A·z, B·z, C·z and the check, on the device for a GPU
    backend) beside the proof of the one before, each stage on its own thread and stream:
    every proof verifies and has the bytes of the same job proven with pipelining off."""
    try:
        load_plugins().backend(load_profile("cpu", {"backend": name}))
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    profile = tmp_path / f"{name}.toml"
    profile.write_text(f'extends = "cpu"\nbackend = "{name}"\n')
    proofs = {}
    for pipeline in (True, False):
        folder = tmp_path / f"pipeline-{pipeline}"
        folder.mkdir()
        engine = Engine(_config(folder, {"d2": keys["d2"]}, pipeline=pipeline, profile=profile))
        engine.start()
        try:
            jobs = [JobInput(circuit_seed=i, seed=10 + i) for i in range(5)]
            tickets = [engine.submit(JobRequest("d2", job)) for job in jobs]
            for ticket in tickets:
                _verified(engine, ticket.job_id)
            proofs[pipeline] = [engine.get(t.job_id).proof for t in tickets]
        finally:
            engine.shutdown()
    assert proofs[True] == proofs[False]


@pytest.mark.parametrize("pipeline", [True, False], ids=["pipeline-on", "pipeline-off"])
def test_engine_proves_verifies_and_the_trace_shows_the_pipeline(tmp_path, keys, pipeline):
    trace = tmp_path / "trace.jsonl"
    # stage 2 far longer than the next synthesis, which lasts long enough to see beside it
    slow = "[debug.sleep_ms]\nmsm_h = 150\nsynthesis = 5\n"
    config = _config(
        tmp_path,
        {"d1": keys["d1"]},
        pipeline=pipeline,
        trace_path=trace,
        profile=_profile(tmp_path, slow),
    )
    engine = Engine(config)
    engine.start()
    try:
        tickets = [engine.submit(JobRequest("d1", JobInput(circuit_seed=i))) for i in range(4)]
        for ticket in tickets:
            _verified(engine, ticket.job_id)
        timings = engine.get(tickets[-1].job_id).timings
        assert timings.gpu_ms >= 150 and timings.total_ms >= timings.gpu_ms
    finally:
        engine.shutdown()
    beside = _overlaps_across_jobs(trace)
    # stage 1's and the prover's synthesis spans, each with its planted 5 ms (seconds here)
    syntheses = [s for s in read_trace(trace).spans if s.name.startswith("synthesis ")]
    assert len(syntheses) == 8
    assert all(s.end is not None and s.end - s.start >= 0.005 for s in syntheses)
    if pipeline:
        # beside one of the job before's backend phases (which one depends on the host's speed)
        spans = sorted(read_trace(trace).spans, key=lambda span: span.start)
        shown = [
            (span.name, round(span.start, 4), span.end and round(span.end, 4)) for span in spans
        ]
        assert any(ms > 1 and not other.startswith("synthesis ") for _, other, ms in beside), (
            beside,
            shown,  # these show where time went
        )
    else:
        assert all(ms < 1 for _, _, ms in beside), beside
    spans = [json.loads(line) for line in trace.read_text().splitlines()]
    assert {s["job"] for s in spans} == {t.job_id for t in tickets}


def test_warm_up_proofs_run_at_start_and_leave_no_job(tmp_path, keys):
    config = _config(tmp_path, {"d1": keys["d1"]}, preload=("d1",), warm_up_proofs=2)
    engine = Engine(config)
    engine.start()
    try:
        assert len(engine.warm_up_ms) == 2 and all(ms > 0 for ms in engine.warm_up_ms)
        first, second = engine._warm_ups
        assert second.began >= first.ended  # one at a time, the device to itself
        assert sum(engine.status().counts.values()) == 0  # nothing in the store
        _verified(engine, engine.submit(JobRequest("d1", JobInput(circuit_seed=3))).job_id)
    finally:
        engine.shutdown()


def test_a_warm_up_that_fails_stops_the_start_naming_the_key(tmp_path, keys):
    odd = tmp_path / "odd"
    odd.mkdir()
    for name in ("params.bin", "vk.bin"):
        (odd / name).write_bytes((keys["d1"] / name).read_bytes())
    spec = json.loads((keys["d1"] / "circuit.json").read_text())
    (odd / "circuit.json").write_text(json.dumps({**spec, "depth": 0}))
    engine = Engine(_config(tmp_path, {"odd": odd}, preload=("odd",), warm_up_proofs=1))
    try:
        with pytest.raises(CuzkError, match="key 'odd': warm-up proof failed: circuit"):
            engine.start()
    finally:
        engine.shutdown()


def test_engine_input_checks_and_malformed_jobs(tmp_path, keys):
    (tmp_path / "roots").mkdir()
    config = _config(tmp_path, {"d1": keys["d1"]}, input_roots=(tmp_path / "roots",))
    engine = Engine(config)
    engine.start()
    try:
        with pytest.raises(UnknownKey):
            engine.submit(JobRequest("nope", JobInput()))
        with pytest.raises(PathRefused, match="outside the input roots"):
            engine.submit(JobRequest("d1", JobInput(witness_path="/etc/passwd")))
        with pytest.raises(PathRefused, match="outside the input roots"):
            escape = str(tmp_path / "roots" / ".." / "x.wtns")
            engine.submit(JobRequest("d1", JobInput(witness_path=escape)))
        with pytest.raises(JobError, match="embedded circuit: send no witness"):
            engine.submit(JobRequest("d1", JobInput(), witness_upload=b"123"))
        with pytest.raises(PathRefused, match="a path holds no NUL character"):
            engine.submit(JobRequest("d1", JobInput(witness_path=str(tmp_path / "roots/x\0"))))
        bad = engine.submit(JobRequest("d1", JobInput(circuit_seed=1 << 256)))
        good = engine.submit(JobRequest("d1", JobInput(circuit_seed=3)))
        failed = engine.await_job(bad.job_id, timeout_s=60)
        assert failed.state is JobState.FAILED
        assert failed.error.startswith("circuit 'porep-lite': porep-lite knob seed must be")
        assert "\n" not in failed.error
        _verified(engine, good.job_id)
    finally:
        engine.shutdown()


def test_a_zkey_job_whose_witness_does_not_satisfy_the_circuit_fails(tmp_path):
    """A zkey has no C rows, so a job's witness is checked by verifying its proof, as `cuzk
    prove --zkey` does: a wrong value fails the job instead of giving a proof nobody accepts."""
    corpus = Path(__file__).resolve().parent / "fuzz_corpus"
    zkey = tmp_path / "k.zkey"  # a copy: the key's cache is written beside it
    zkey.write_bytes((corpus / "zkey" / "seed-one_private.zkey").read_bytes())
    good = (corpus / "wtns" / "seed-one_private.wtns").read_bytes()
    bad = bytearray(good)
    assert bad[-32] == 27  # the last value, 3^3: one more still parses
    bad[-32] = 28
    profile = load_profile(str(_profile(tmp_path)))
    specs = {"zk": check_key("zk", KeyKind.ZKEY, zkey)}
    engine = Engine(EngineConfig(tmp_path / "state", profile, specs, budget_bytes=1 << 30))
    engine.start()
    try:
        wrong = engine.submit(JobRequest("zk", JobInput(), witness_upload=bytes(bad)))
        right = engine.submit(JobRequest("zk", JobInput(), witness_upload=good))
        failed = engine.await_job(wrong.job_id, timeout_s=60)
        assert failed.state is JobState.FAILED and failed.proof is None
        assert "does not verify against its own verifying key" in failed.error
        assert "\n" not in failed.error
        _verified(engine, right.job_id)
    finally:
        engine.shutdown()


def test_zkey_jobs_refuse_a_circuit_seed_and_a_witness_for_another_circuit(tmp_path):
    """A circuit seed means nothing to a zkey's job (refused, not dropped: a retry with it
    would not match its own job); a witness of another length fails from its header alone."""
    engine, witness = _zkey_engine(tmp_path, workers=0)
    try:
        with pytest.raises(JobError, match="a circuit seed applies only to embedded-circuit"):
            engine.submit(JobRequest("zk", JobInput(circuit_seed=5), witness_upload=witness))
        announced = bytearray(witness)  # 4 values stored, 2^25 announced
        count_at = 12 + 12 + 4 + 32  # sections' table, section 1's head, n8, the prime
        assert announced[count_at : count_at + 4] == (4).to_bytes(4, "little")
        announced[count_at : count_at + 4] = (1 << 25).to_bytes(4, "little")
        failed = engine.await_job(_zkey_job(engine, bytes(announced)), timeout_s=60)
        assert failed.state is JobState.FAILED
        assert "the witness has 33554432 values, the key 'zk' has 4" in failed.error
    finally:
        engine.shutdown()


def test_submits_racing_with_one_idempotency_key_agree_or_conflict(tmp_path, monkeypatch):
    """Two submits with one key can both pass the check before either is stored: the loser gets
    the winner's job only when it is the same request (the same witness, seed and priority)."""
    engine, witness = _zkey_engine(tmp_path, workers=0)
    try:
        first = engine.submit(
            JobRequest("zk", JobInput(), idempotency_key="k", witness_upload=witness)
        )
        monkeypatch.setattr(engine.store, "get_by_idempotency", lambda key: None)  # the race
        again = engine.submit(
            JobRequest("zk", JobInput(), idempotency_key="k", witness_upload=witness)
        )
        assert (again.job_id, again.created) == (first.job_id, False)
        other = bytearray(witness)
        other[-32] ^= 1
        for differs, request in (
            (
                "witness",
                JobRequest("zk", JobInput(), idempotency_key="k", witness_upload=bytes(other)),
            ),
            (
                "seed",
                JobRequest("zk", JobInput(seed=9), idempotency_key="k", witness_upload=witness),
            ),
            ("priority", JobRequest("zk", JobInput(), Priority.HIGH, "k", witness_upload=witness)),
        ):
            with pytest.raises(IdempotencyConflict, match=f"whose {differs} differs"):
                engine.submit(request)
        _verified(engine, first.job_id)
    finally:
        engine.shutdown()


def _zkey_engine(tmp_path: Path, workers: int) -> tuple[Engine, bytes]:
    """A started engine with one zkey key (the corpus's one_private circuit) and its witness."""
    corpus = Path(__file__).resolve().parent / "fuzz_corpus"
    zkey = tmp_path / "k.zkey"  # a copy: the key's cache is written beside it
    zkey.write_bytes((corpus / "zkey" / "seed-one_private.zkey").read_bytes())
    profile = load_profile(str(_profile(tmp_path)))
    specs = {"zk": check_key("zk", KeyKind.ZKEY, zkey)}
    config = EngineConfig(tmp_path / "state", profile, specs, 1 << 30, check_workers=workers)
    engine = Engine(config)
    engine.start()
    return engine, (corpus / "wtns" / "seed-one_private.wtns").read_bytes()


def _zkey_job(engine: Engine, witness: bytes) -> str:
    return engine.submit(JobRequest("zk", JobInput(), witness_upload=witness)).job_id


@pytest.mark.parametrize("workers", [0, 2])
def test_zkey_proofs_are_checked_in_worker_processes_or_on_the_prover_thread(tmp_path, workers):
    """``check_workers`` processes verify zkey jobs' proofs (spawned only for an engine with a
    zkey key, gone at shutdown); with 0 stage 2 verifies them itself. Either way good proofs
    are kept and a bad witness fails its job with the verifier's reason."""
    before = set(multiprocessing.active_children())
    engine, good = _zkey_engine(tmp_path, workers)
    bad = bytearray(good)
    bad[-32] = 28  # the last value, 3^3, one more
    try:
        assert len(set(multiprocessing.active_children()) - before) == workers
        jobs = [_zkey_job(engine, good) for _ in "abc"]
        wrong = _zkey_job(engine, bytes(bad))
        for job in jobs:
            _verified(engine, job)
        failed = engine.await_job(wrong, timeout_s=60)
        assert failed.state is JobState.FAILED
        assert "does not verify against its own verifying key" in failed.error
    finally:
        engine.shutdown()
    assert set(multiprocessing.active_children()) <= before


def test_checker_processes_ignore_sigint_and_are_replaced_when_they_die(
    tmp_path, monkeypatch, capsys
):
    """A Ctrl-C to the process group leaves the checkers be (the daemon handles it); a killed
    checker is replaced; when no new ones start, the checks run on the engine's threads."""
    before = set(multiprocessing.active_children())
    engine, good = _zkey_engine(tmp_path, 2)
    try:
        workers = set(multiprocessing.active_children()) - before
        for worker in workers:
            os.kill(worker.pid, signal.SIGINT)
        _verified(engine, _zkey_job(engine, good))
        assert all(worker.is_alive() for worker in workers)
        os.kill(next(iter(workers)).pid, signal.SIGKILL)
        for _ in "ab":
            _verified(engine, _zkey_job(engine, good))
        replaced = set(multiprocessing.active_children()) - before
        assert len(replaced) == 2 and not replaced & workers
        assert "a proof checker process died; starting new ones" in capsys.readouterr().err

        class Refused(checkers.ProcessPoolExecutor):
            def submit(self, *args, **kwargs):
                raise checkers.BrokenProcessPool("no processes here")

        monkeypatch.setattr(checkers, "ProcessPoolExecutor", Refused)
        os.kill(next(iter(replaced)).pid, signal.SIGKILL)
        for _ in "ab":
            _verified(engine, _zkey_job(engine, good))
        assert "proofs are checked on its threads" in capsys.readouterr().err
    finally:
        engine.shutdown()


def test_a_zkey_job_cancelled_during_its_proof_check_ends_cancelled(tmp_path, monkeypatch):
    from cuzk_core.engine import engine as engine_module

    checking, check = threading.Event(), engine_module.check_own_proof

    def slow_check(*args):
        checking.set()
        time.sleep(0.5)
        check(*args)

    monkeypatch.setattr(engine_module, "check_own_proof", slow_check)
    engine, good = _zkey_engine(tmp_path, 0)  # checked on stage 2's thread, where it is patched
    try:
        job = _zkey_job(engine, good)
        assert checking.wait(30)
        assert engine.cancel(job)[1]  # it was running
        ended = engine.await_job(job, timeout_s=30)
        assert ended.state is JobState.CANCELLED and ended.proof is None
        assert ended.error == "cancelled while running (after its proof check)"
        _verified(engine, _zkey_job(engine, good))  # the next job is proven and kept
    finally:
        engine.shutdown()


_ORPHAN_SCRIPT = """
import sys, time, multiprocessing
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_engine import _zkey_engine
if __name__ == "__main__":
    engine, _ = _zkey_engine(Path(sys.argv[1]), 2)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    time.sleep(120)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie nobody reaps has exited


def test_checker_processes_exit_when_their_daemon_is_killed(tmp_path):
    script = tmp_path / "daemon.py"
    script.write_text(_ORPHAN_SCRIPT)
    tests = str(Path(__file__).resolve().parent)
    daemon = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), tests], stdout=subprocess.PIPE, text=True
    )
    try:
        pids = [int(p) for p in daemon.stdout.readline().split()]
        assert len(pids) >= 2
    finally:
        daemon.kill()
        daemon.wait()
    deadline = time.monotonic() + 10 * checkers.PARENT_POLL_S
    while not all(_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, "checker processes outlived their daemon"
        time.sleep(0.1)


def test_the_stages_outlive_a_trace_or_store_that_cannot_be_written(tmp_path, keys, capsys):
    """A trace folder removed while the daemon runs, and a job store write that fails (a fault
    put in ``store.finish`` once: a full or failing disk cannot be made here): each job ends,
    the error goes to stderr, and the next job is proven."""
    (tmp_path / "traces").mkdir()
    config = _config(tmp_path, {"d1": keys["d1"]}, trace_path=tmp_path / "traces" / "t.jsonl")
    engine = Engine(config)
    engine.start()
    try:
        (tmp_path / "traces").rmdir()
        _verified(engine, engine.submit(JobRequest("d1", JobInput(circuit_seed=1))).job_id)
        assert "the trace could not be written" in capsys.readouterr().err

        real_finish = engine.store.finish

        def finish_fails_once(*args, **kwargs):
            engine.store.finish = real_finish
            raise sqlite3.OperationalError("disk I/O error")

        engine.store.finish = finish_fails_once
        lost = engine.submit(JobRequest("d1", JobInput(circuit_seed=2)))
        failed = engine.await_job(lost.job_id, timeout_s=60)
        assert failed.state is JobState.FAILED
        assert failed.error == "internal error: OperationalError: disk I/O error"
        _verified(engine, engine.submit(JobRequest("d1", JobInput(circuit_seed=3))).job_id)
    finally:
        engine.shutdown()


def test_engine_cancels_queued_and_running_jobs(tmp_path, keys):
    slow = "[debug.sleep_ms]\nmsm_h = 800\n"
    config = _config(tmp_path, {"d1": keys["d1"]}, profile=_profile(tmp_path, slow))
    engine = Engine(config)
    engine.start()
    try:
        running = engine.submit(JobRequest("d1", JobInput(circuit_seed=1)))
        queued = [engine.submit(JobRequest("d1", JobInput(circuit_seed=i))) for i in (2, 3)]
        deadline = time.monotonic() + 30
        while engine.get(running.job_id).state is not JobState.RUNNING:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        record, was_running = engine.cancel(queued[-1].job_id)
        assert record.state is JobState.CANCELLED and not was_running
        record, was_running = engine.cancel(running.job_id)
        assert was_running
        ended = engine.await_job(running.job_id, timeout_s=30)
        assert ended.state is JobState.CANCELLED and "cancelled while running" in ended.error
        _verified(engine, queued[0].job_id)  # the engine goes on with the next job
        assert engine.cancel(queued[0].job_id) == (engine.get(queued[0].job_id), False)
    finally:
        engine.shutdown()


def test_max_queued_counts_the_jobs_waiting_for_a_pipeline_place(tmp_path, keys):
    slow = "[debug.sleep_ms]\nmsm_h = 1500\n"
    config = _config(tmp_path, {"d1": keys["d1"]}, max_queued=2, profile=_profile(tmp_path, slow))
    engine = Engine(config)
    engine.start()
    try:
        started = [engine.submit(JobRequest("d1", JobInput(circuit_seed=i))) for i in (1, 2)]
        deadline = time.monotonic() + 30
        while any(engine.get(t.job_id).state is not JobState.RUNNING for t in started):
            assert time.monotonic() < deadline  # one in stage 2, one synthesized beside it
            time.sleep(0.02)
        waiting = [engine.submit(JobRequest("d1", JobInput(circuit_seed=i))) for i in (3, 4)]
        with pytest.raises(QueueFull, match="2 jobs waiting to start"):
            engine.submit(JobRequest("d1", JobInput(circuit_seed=5)))
        assert engine.status().queued == 2  # the first taken out of the queue into a batch
        record, was_running = engine.cancel(waiting[0].job_id)
        assert record.state is JobState.CANCELLED and not was_running
        assert engine.status().queued == 1
        for ticket in [*started, waiting[1]]:
            engine.cancel(ticket.job_id)
    finally:
        engine.shutdown()
