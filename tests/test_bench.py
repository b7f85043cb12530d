"""The bench library: inputs, checks, alternation, statistics, results, compare, isolate, memory."""

from __future__ import annotations

import gc
import inspect
import json
import time
from pathlib import Path
from types import SimpleNamespace

import attrs
import numpy as np
import pytest
from test_groth16 import CubeCircuit

from cuzk_backend_cpu import plugin as cpu_plugin
from cuzk_core import hookimpl, hookspecs
from cuzk_core.bench.arguments import parse_change, parse_percent, parse_size
from cuzk_core.bench.compare import compare_results
from cuzk_core.bench.definitions import MsmBench, NttBench, ProveBench, SynthBench
from cuzk_core.bench.errors import BenchCheckFailed, BenchError
from cuzk_core.bench.isolate import isolate_deltas, isolate_variants
from cuzk_core.bench.memlog import MemoryLog
from cuzk_core.bench.results import (
    SCHEMA,
    build_result,
    read_result,
    validate_result,
    write_result,
)
from cuzk_core.bench.runner import Variant, run_variants
from cuzk_core.bench.stats import (
    FASTER,
    ONE_RUN,
    SLOWER,
    WITHIN_SPREAD,
    FigureStats,
    paired_ratios,
    verdict,
)
from cuzk_core.conformance.inputs import random_bases, random_scalar_limbs
from cuzk_core.curve.g1 import G1_GENERATOR, g1_is_on_curve
from cuzk_core.curve.g2 import g2_is_on_curve
from cuzk_core.errors import ProfileError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.hookspecs import BackendInfo
from cuzk_core.layout import G1Affines, limbs_to_ints
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import PHASES

MACHINE = {"cpu_model": "Test CPU", "cpu_cores": 2, "gpus": []}
ENVIRONMENT = {"machine": MACHINE, "commit": None, "libraries": {}}


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("text", ["2^20", "2**20", " 2 ^ 20 ", "1048576"])
def test_sizes_in_both_forms(text):
    assert parse_size(text, power_of_two=True) == 1 << 20


@pytest.mark.parametrize(
    ("text", "power_of_two", "message"),
    [
        ("1000", True, r"--size 1000 is not a power of two \(nearest: 2\^9 = 512 or 2\^10"),
        ("big", False, "not a size"),
        ("0", False, "at least 1"),
        ("2^40", False, "at most 2"),
    ],
)
def test_bad_sizes_are_named(text, power_of_two, message):
    with pytest.raises(BenchError, match=message):
        parse_size(text, power_of_two=power_of_two)


def test_msm_sizes_need_not_be_powers_of_two():
    assert parse_size("1000", power_of_two=False) == 1000


def test_percentages_and_changes():
    assert parse_percent("5%") == pytest.approx(0.05)
    assert parse_percent("12.5") == pytest.approx(0.125)
    for bad in ("x%", "-1%"):
        with pytest.raises(BenchError, match="--fail-above"):
            parse_percent(bad)
    assert parse_change("msm.split_01=true") == ("msm.split_01", True)
    assert parse_change("memory.pinning=register") == ("memory.pinning", "register")
    assert parse_change('memory.pinning="pool"') == ("memory.pinning", "pool")
    assert parse_change("msm.window_bits.h=17") == ("msm.window_bits.h", 17)
    assert parse_change("debug.sleep_ms={msm_a = 5}") == ("debug.sleep_ms", {"msm_a": 5})
    with pytest.raises(BenchError, match="KEY=VALUE"):
        parse_change("msm.split_01")


# ---------------------------------------------------------------- inputs and checks


def test_inputs_are_seeded_nonzero_and_in_range():
    scalars = random_scalar_limbs(64, seed=3)
    assert np.array_equal(scalars, random_scalar_limbs(64, seed=3))
    assert not np.array_equal(scalars, random_scalar_limbs(64, seed=4))
    values = limbs_to_ints(scalars)
    assert all(0 < v < FR_MODULUS for v in values) and len(set(values)) == 64
    bases = random_bases("g1", 10, seed=3)
    assert len(bases) == 10 and not bases.infinity.any()
    assert all(g1_is_on_curve(p) for p in bases.to_points())
    assert all(g2_is_on_curve(p) for p in random_bases("g2", 2, seed=3).to_points())


def test_bases_repeat_with_a_period(monkeypatch):
    monkeypatch.setattr("cuzk_core.conformance.inputs.DISTINCT_BASES", 4)
    bases = random_bases("g1", 10, seed=1)
    assert np.array_equal(bases.coords[:4], bases.coords[4:8])
    assert len({p for p in bases.to_points()}) == 4


def test_checks_pass_on_the_cpu_reference(cpu):
    for bench in (MsmBench("g1", 64, "h"), MsmBench("g2", 16, "b_g2"), NttBench(256, coset=True)):
        state = bench.prepare(cpu)
        assert bench.check(cpu, state)["size"] == 16
        bench.release(cpu, state)


class WrongBackend:
    """A backend whose MSM and NTT give wrong answers: the checks must catch it."""

    name = "wrong"

    def msm_g1(self, bases, scalars, label, window_bits=None):
        return G1Affines.from_points([G1_GENERATOR])

    def ntt(self, values, domain):
        return values

    def upload(self, points, purpose):
        return points


def test_a_wrong_answer_fails_the_check_before_timing():
    backend = WrongBackend()
    msm = MsmBench("g1", 32, "h")
    with pytest.raises(BenchCheckFailed, match="'wrong': msm_g1 of 16 points disagrees"):
        msm.check(backend, msm.prepare(backend))
    ntt = NttBench(64)
    with pytest.raises(BenchCheckFailed, match="'wrong': ntt of size 16 disagrees"):
        ntt.check(backend, ntt.prepare(backend))


# ---------------------------------------------------------------- statistics


def test_verdicts_respect_the_spread():
    a = FigureStats((10.0, 11.0, 12.0))
    assert verdict(a, FigureStats((11.5, 12.5, 13.0))) == WITHIN_SPREAD
    assert verdict(a, FigureStats((12.5, 13.0, 14.0))) == SLOWER
    assert verdict(a, FigureStats((8.0, 9.0, 9.5))) == FASTER
    assert verdict(FigureStats((10.0,)), FigureStats((20.0,))) == ONE_RUN
    assert a.median_ms == 11.0 and a.spread == pytest.approx(2 / 11)


def test_paired_ratios_pair_runs_by_index():
    a = [{"x": 10.0, "y": 0.0}, {"x": 20.0, "y": 1.0}]
    b = [{"x": 15.0, "y": 1.0}, {"x": 20.0, "y": 1.0}]
    ratios = paired_ratios(a, b)
    assert ratios["x"].ratios == (1.5, 1.0)
    assert ratios["x"].to_json()["median"] == 1.25
    assert ratios["y"].ratios == (1.0,)  # the zero-time A run has no ratio


# ---------------------------------------------------------------- runner and clocks


class RecordingBench:
    """A benchmark that records which profile ran when."""

    name = "recording"

    def __init__(self):
        self.order: list[str] = []
        self.released: list[str] = []

    def params(self):
        return {}

    def prepare(self, backend):
        return backend.ctx.profile.name

    def check(self, backend, state):
        return {"reference": "none"}

    def run(self, backend, state, clock):
        self.order.append(state)
        with backend.ctx.timer.span("work", backend=backend.name):
            pass
        return {}

    def release(self, backend, state):
        self.released.append(state)


def _variants(tmp_path, **overrides):
    variants = [Variant("A", load_profile("cpu"))]
    for label, text in overrides.items():
        path = tmp_path / f"{label}.toml"
        path.write_text(f'extends = "cpu"\n{text}\n')
        variants.append(Variant(label, load_profile(path)))
    return variants


def test_profiles_alternate_and_warmups_are_not_recorded(tmp_path):
    bench = RecordingBench()
    variants = _variants(tmp_path, B="[msm]\nsigned_digits = false")
    entries = run_variants(bench, variants, load_plugins(), runs=2, warmup=1)
    assert bench.order == ["cpu", "B", "cpu", "B", "cpu", "B"]
    assert bench.released == ["cpu", "B"]
    assert [len(e.samples) for e in entries] == [2, 2]
    assert set(entries[0].samples[0]) == {"work"}


def test_msm_figures_include_the_finer_spans(tmp_path):
    entries = run_variants(MsmBench("g1", 64, "h"), _variants(tmp_path), load_plugins(), 2, 0)
    figures = entries[0].stats()
    assert next(iter(figures)) == "msm_g1"
    assert any(name.startswith("msm_g1/") for name in figures)  # the backend's finer spans
    assert entries[0].clock.name == "perf_counter"


class FakeEventClock:
    """Stands in for a GPU backend's CUDA-event clock."""

    name = "fake-events"

    def time(self, work):
        return work(), 42.0


@hookimpl
def _events_info():
    return BackendInfo("cpu-events", "0.1", True, "cpu with a fake device clock")


@hookimpl
def _fake_clock(ctx):
    return FakeEventClock()


@hookimpl
def _fake_memory(ctx):
    return 7 * 2**20


def device_backend() -> SimpleNamespace:
    """The cpu reference under another name, offering the optional measurement hooks."""
    hooks = {h: getattr(cpu_plugin, h) for h in hookspecs.REQUIRED_HOOKS}
    hooks |= {
        "cuzk_backend_info": _events_info,
        "cuzk_bench_clock": _fake_clock,
        "cuzk_device_memory": _fake_memory,
    }
    return SimpleNamespace(**hooks)


def test_a_backend_clock_replaces_the_host_clock(tmp_path):
    plugins = load_plugins()
    plugins.add(device_backend())
    events = load_profile("cpu", {"backend": "cpu-events"})
    entries = run_variants(NttBench(256), [Variant("A", events)], plugins, runs=2, warmup=0)
    assert entries[0].clock.name == "fake-events"
    assert entries[0].stats()["ntt"].samples_ms == (42.0, 42.0)
    backend = plugins.backend(events)
    assert backend.device_memory() == 7 * 2**20
    assert load_plugins().backend(load_profile("cpu")).device_memory() is None


@pytest.mark.parametrize("name", ["cuzk_bench_clock", "cuzk_device_memory"])
def test_optional_hooks_are_documented(name):
    spec = getattr(hookspecs, name)
    doc = inspect.getdoc(spec) or ""
    assert ":return:" in doc and all(
        f":param {param}:" in doc for param in inspect.signature(spec).parameters
    )
    guide = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"
    assert f"`{name}(" in guide.read_text()


# ---------------------------------------------------------------- results files


def _document(tmp_path, samples, machine=MACHINE, params=None):
    """A results document with one figure per name in ``samples``."""
    entries = run_variants(RecordingBench(), _variants(tmp_path), load_plugins(), 1, 0)
    entries[0].samples = [
        dict(zip(samples, run, strict=True)) for run in zip(*samples.values(), strict=True)
    ]
    env = {**ENVIRONMENT, "machine": machine}
    return build_result("bench", "prove", params or {"circuit": "cube"}, entries, 3, 0, env, None)


def test_results_round_trip_and_validate(tmp_path):
    document = _document(tmp_path, {"msm_l": [1.0, 2.0, 3.0]})
    path = tmp_path / "r.json"
    write_result(path, document)
    back = read_result(path)
    assert back["schema"] == SCHEMA
    assert back["variants"][0]["figures"]["msm_l"]["median_ms"] == 2.0
    assert back["variants"][0]["profile"]["digest"] == load_profile("cpu").digest()


def test_a_tree_outside_git_records_the_commit_cuzk_commit_names(tmp_path, monkeypatch):
    """A tree copied to a GPU machine has no .git: CUZK_COMMIT names the commit measured, marked
    as named rather than checked; without it the commit is unknown (None)."""
    from cuzk_core.bench import environment

    monkeypatch.setattr(environment, "_REPO", tmp_path)
    monkeypatch.delenv("CUZK_COMMIT", raising=False)
    assert environment.git_commit() is None
    monkeypatch.setenv("CUZK_COMMIT", "94b4e91 ")
    assert environment.git_commit() == {"id": "94b4e91", "dirty": None, "from": "CUZK_COMMIT"}


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda d: d.pop("variants"), "missing variants"),
        (lambda d: d.update(schema="other/1"), "not a cuzk bench result"),
        (lambda d: d["variants"][0]["figures"]["msm_l"].pop("samples_ms"), "figures.msm_l"),
        (lambda d: d["variants"][0]["figures"]["msm_l"].update(samples_ms=[]), "non-empty"),
        (lambda d: d.update(runs="three"), "runs must be an integer"),
        (lambda d: d.update(kind="other"), "kind 'other'"),
    ],
)
def test_malformed_results_name_the_key(tmp_path, mangle, message):
    document = _document(tmp_path, {"msm_l": [1.0]})
    mangle(document)
    with pytest.raises(BenchError, match=message):
        validate_result(document, "r.json")


def test_unreadable_results_are_one_line_errors(tmp_path):
    with pytest.raises(BenchError, match="no such file"):
        read_result(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(BenchError, match=r"bad\.json: not valid JSON"):
        read_result(tmp_path / "bad.json")


# ---------------------------------------------------------------- compare


def test_compare_flags_regressions_beyond_threshold_and_spread(tmp_path):
    a = _document(tmp_path, {"msm_l": [10.0, 10.5, 11.0], "msm_a": [10.0, 10.5, 11.0]})
    b = _document(tmp_path, {"msm_l": [14.0, 14.5, 15.0], "msm_a": [10.2, 11.2, 11.5]})
    comparison = compare_results(a, b, "a.json", "b.json", threshold=0.05)
    assert [f.name for f in comparison.regressions] == ["msm_l"]
    rows = {f.name: f for f in comparison.figures}
    assert rows["msm_a"].verdict == WITHIN_SPREAD and not rows["msm_a"].regression
    assert not compare_results(a, b, "a", "b", threshold=0.5).regressions
    assert not compare_results(a, b, "a", "b", threshold=0.05, min_delta_ms=5).regressions
    only = compare_results(a, b, "a", "b", threshold=0.05, phases=["msm_a"])
    assert [f.name for f in only.figures] == ["msm_a"] and not only.regressions


def test_compare_refuses_other_machines_and_benchmarks_unless_forced(tmp_path):
    a = _document(tmp_path, {"msm_l": [1.0]})
    other = _document(tmp_path, {"msm_l": [1.0]}, machine={**MACHINE, "cpu_model": "Other CPU"})
    with pytest.raises(BenchError, match=r"different machines \(cpu_model .*--force"):
        compare_results(a, other, "a.json", "b.json")
    assert compare_results(a, other, "a.json", "b.json", force=True).figures
    bigger = _document(tmp_path, {"msm_l": [1.0]}, params={"circuit": "cube", "depth": 9})
    with pytest.raises(BenchError, match="time different benchmarks"):
        compare_results(a, bigger, "a.json", "b.json")
    with pytest.raises(BenchError, match="unknown phase 'msm_x'"):
        compare_results(a, a, "a.json", "a.json", phases=["msm_x"])
    two = {**a, "kind": "ab", "variants": a["variants"] * 2}
    with pytest.raises(BenchError, match="holds ab results of 2 profiles"):
        compare_results(two, a, "ab.json", "a.json")


# ---------------------------------------------------------------- planted slowdowns


@pytest.fixture(scope="module")
def cube_bench(cpu):
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    pk = generate_parameters(matrices, seed=5)
    return ProveBench(lambda: CubeCircuit(3), LoadedKey(pk), {"circuit": "cube"})


def _prove_document(tmp_path, bench, variants, kind="bench"):
    entries = run_variants(bench, variants, load_plugins(), runs=3, warmup=1)
    document = build_result(kind, "prove", bench.params(), entries, 3, 1, ENVIRONMENT, None)
    return validate_result(document)


def test_compare_finds_a_planted_slowdown(tmp_path, cube_bench):
    base = _prove_document(tmp_path, cube_bench, _variants(tmp_path))
    slow_variants = _variants(tmp_path, slow="[debug.sleep_ms]\nmsm_l = 200")[1:]
    slow = _prove_document(tmp_path, cube_bench, slow_variants)
    assert base["variants"][0]["check"]["reference"] == "proof verifies"
    comparison = compare_results(base, slow, "a.json", "b.json", threshold=0.05)
    assert "msm_l" in [f.name for f in comparison.regressions]
    assert max(comparison.figures, key=lambda f: f.b.median_ms - f.a.median_ms).name in (
        "msm_l",
        "total",
    )
    assert slow["variants"][0]["figures"]["msm_l"]["min_ms"] >= 200


def test_isolate_attributes_each_change_to_its_phase(tmp_path, cube_bench):
    # Sleeps well above a loaded runner's stalls: the attribution needs each planted change to
    # move its phase past the baseline's slowest run.
    changes = [("debug.sleep_ms.msm_a", 200), ("debug.sleep_ms.ntt_h", 120)]
    variants = isolate_variants("cpu", changes)
    assert [v.label for v in variants] == [
        "baseline",
        "debug.sleep_ms.msm_a=200",
        "debug.sleep_ms.ntt_h=120",
        "all changes",
    ]
    document = _prove_document(tmp_path, cube_bench, variants, kind="isolate")
    isolate = isolate_deltas(document["variants"])
    attribution = isolate["attribution"]
    assert attribution["debug.sleep_ms.msm_a=200"]["phase"] == "msm_a"
    assert attribution["debug.sleep_ms.ntt_h=120"]["phase"] == "ntt_h"
    assert attribution["all changes"]["phase"] == "msm_a"
    assert isolate["deltas"]["debug.sleep_ms.msm_a=200"]["msm_a"]["delta_ms"] >= 190


@attrs.frozen
class _CollectorProbe(ProveBench):
    """The prove benchmark, noting per run whether the garbage collector could pause it."""

    seen: list[bool] = attrs.field(factory=list)

    def run(self, backend, state, clock):
        self.seen.append(gc.isenabled())
        return super().run(backend, state, clock)


def test_runs_are_timed_without_collector_pauses(tmp_path, cube_bench):
    probe = _CollectorProbe(cube_bench.make_circuit, cube_bench.key, cube_bench.spec)
    _prove_document(tmp_path, probe, _variants(tmp_path)[:1])
    assert probe.seen == [False] * 4  # one warm-up and three timed runs
    assert gc.isenabled()


def test_isolate_rejects_bad_changes():
    with pytest.raises(ProfileError, match=r"--change: unknown key 'msm\.split01'"):
        isolate_variants("cpu", [("msm.split01", True)])
    with pytest.raises(ProfileError, match=r"'debug\.sleep_ms\.msm_x'"):
        isolate_variants("cpu", [("debug.sleep_ms.msm_x", 5)])
    with pytest.raises(BenchError, match="more than once"):
        isolate_variants("cpu", [("msm.split_01", True), ("msm.split_01", False)])
    with pytest.raises(BenchError, match="at least one --change"):
        isolate_variants("cpu", [])


# ---------------------------------------------------------------- the profile's test-only knob


def test_sleep_knob_is_validated_and_absent_from_real_profiles(tmp_path):
    assert "debug" not in load_profile("cpu").to_dict()
    path = tmp_path / "p.toml"
    path.write_text('extends = "cpu"\n[debug.sleep_ms]\nmsm_q = 5\n')
    with pytest.raises(ProfileError, match=r"p\.toml: unknown key 'debug\.sleep_ms\.msm_q'"):
        load_profile(path)
    path.write_text('extends = "cpu"\n[debug.sleep_ms]\nassemble = 0\n')
    with pytest.raises(ProfileError, match="positive integer"):
        load_profile(path)
    with pytest.raises(ProfileError, match="'extends' cannot be changed"):
        load_profile("cpu", {"extends": "h200"})
    with pytest.raises(ProfileError, match="conflicts with another change"):
        load_profile("cpu", {"msm": 1, "msm.split_01": True})
    changed = load_profile("cpu", {"debug.sleep_ms.assemble": 5})
    assert dict(changed.debug.sleep_ms) == {"assemble": 5}
    assert changed.digest() != load_profile("cpu").digest()
    assert set(PHASES) >= {name for name, _ in changed.debug.sleep_ms}


# ---------------------------------------------------------------- memory sampler


def test_memlog_writes_csv_and_keeps_peaks(tmp_path):
    path = tmp_path / "mem.csv"
    with MemoryLog(path, interval_s=0.01, device=lambda: 1234) as log:
        ballast = bytearray(8 * 2**20)
        time.sleep(0.05)
    del ballast
    lines = path.read_text().splitlines()
    assert lines[0] == "t_s,rss_bytes,device_bytes"
    assert len(lines) >= 3 and lines[1].endswith(",1234")
    peaks = log.peaks()
    assert peaks["peak_device_bytes"] == 1234 and peaks["peak_rss_bytes"] > 8 * 2**20
    assert peaks["csv"] == str(path)


def test_memlog_survives_a_failing_device_probe(tmp_path):
    def probe():
        raise RuntimeError("no device")

    with MemoryLog(None, interval_s=0.01, device=probe) as log:
        time.sleep(0.03)
    peaks = log.peaks()
    assert peaks["peak_device_bytes"] is None
    assert peaks["device_error"] == "RuntimeError: no device"
    with pytest.raises(BenchError, match="must be more than 0"):
        MemoryLog(None, interval_s=0)


def test_synth_bench_waits_for_kept_products_inside_their_span():
    """Products a backend keeps on its device may still be computing when the hook returns:
    the bench reads one row inside ``evaluate_r1cs``, so their time is not the check's."""
    from test_groth16 import _KeptRows, _products_keeping_backend

    open_spans: list[list[str]] = []

    class Pending(_KeptRows):
        def __array__(self, dtype=None, copy=None):
            open_spans.append([s.name for s in backend.ctx.timer.spans if s.end is None])
            return self.rows

    calls: list[bool] = []
    backend = _products_keeping_backend(calls, kept=Pending)
    SynthBench(lambda: CubeCircuit(3), {"circuit": "cube"}).run(backend, None, None)
    assert calls == [True]
    assert open_spans == [["synthesis", "evaluate_r1cs"]]


def test_synth_bench_reports_constraints_and_spans(tmp_path, cpu):
    bench = SynthBench(lambda: CubeCircuit(3), {"circuit": "cube"})
    entries = run_variants(bench, _variants(tmp_path), load_plugins(), runs=2, warmup=0)
    assert entries[0].check["constraints"] == 3
    figures = entries[0].stats()
    assert "synthesis" in figures and any(name.startswith("synthesis/") for name in figures)
    assert json.dumps(entries[0].to_json())
