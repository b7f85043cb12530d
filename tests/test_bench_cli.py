"""`cuzk bench …`, `cuzk trace show` and `cuzk prove --trace/--memlog`, end to end on the CPU."""

from __future__ import annotations

import functools
import json
import threading
import time
from pathlib import Path

import pytest
from test_groth16 import CubeCircuit

from cuzk_core.bench.results import read_result
from cuzk_core.circuits import CIRCUITS
from cuzk_core.cli import main
from cuzk_core.timing import Timer

CUBE = ["--circuit", "cube"]
FAST = ["--runs", "2", "--warmup", "0"]


@pytest.fixture(autouse=True)
def private_env(tmp_path_factory, monkeypatch):
    """A private parameters cache, no inherited profile or timing level, and a tiny circuit."""
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("CUZK_PROFILE", raising=False)
    monkeypatch.delenv("CUZK_TIMING", raising=False)
    monkeypatch.setitem(CIRCUITS, "cube", functools.partial(CubeCircuit, 3))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``cuzk argv`` in this process: exit status, stdout, stderr."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def profile(tmp_path: Path, name: str, text: str) -> Path:
    """A profile extending cpu with ``text``."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'extends = "cpu"\n{text}\n')
    return path


def assert_one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert err.startswith("cuzk: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_bench_msm_table_and_json(tmp_path, capsys):
    out = tmp_path / "msm.json"
    code, text, err = run(capsys, "bench", "msm", "--size", "2^6", *FAST, "--json", out)
    assert code == 0 and err == ""  # no progress bar off a terminal
    assert "bench msm  curve=g1 size=2^6 msm=h" in text
    rows = text.split("\n\n")[1].splitlines()
    assert rows[1].startswith("msm_g1 ") and rows[2].startswith("  ")  # finer spans below it
    assert "machine: " in text
    document = read_result(out)
    assert document["benchmark"] == {
        "name": "msm",
        "params": {"curve": "g1", "size": 64, "msm": "h", "seed": 1, "distinct_bases": 64},
    }
    assert document["environment"]["machine"]["cpu_cores"] >= 1
    assert document["memory"]["peak_rss_bytes"] > 0
    assert document["variants"][0]["profile"]["name"] == "cpu"


def test_bench_json_to_stdout(capsys):
    code, text, _ = run(capsys, "bench", "ntt", "--size", "256", *FAST, "--json", "-")
    assert code == 0
    assert json.loads(text)["variants"][0]["figures"]["ntt"]["samples_ms"]


def test_bench_poseidon_checks_then_times_one_call(capsys):
    code, text, _ = run(capsys, "bench", "poseidon", "--size", "2^5", *FAST, "--json", "-")
    assert code == 0
    document = json.loads(text)
    assert document["benchmark"] == {"name": "poseidon", "params": {"size": 32, "t": 3, "seed": 1}}
    variant = document["variants"][0]
    assert variant["figures"]["poseidon"]["samples_ms"]
    assert variant["check"]["reference"] == "plain-Python permutation"


def test_bench_ab_alternates_two_profiles(tmp_path, capsys):
    unsigned = profile(tmp_path, "unsigned", "[msm]\nsigned_digits = false")
    args = ["bench", "ntt", "--size", "2^8", "--coset", *FAST, "--vs", unsigned]
    code, text, _ = run(capsys, *args, "--json", tmp_path / "ab.json")
    assert code == 0
    assert "bench ntt A/B" in text and "B: profile unsigned" in text and "B/A" in text
    document = read_result(tmp_path / "ab.json")
    assert document["kind"] == "ab"
    assert document["ratios"]["coset_ntt"]["verdict"]


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["bench", "ntt", "--size", "1000"], ["--size 1000 is not a power of two"]),
        (["bench", "msm", "--size", "lots"], ["--size 'lots': not a size"]),
        (["bench", "msm", "--size", "8", "--curve", "g2", "--msm", "h"], ["not a g2 MSM"]),
        (["bench", "msm", "--size", "8", "--runs", "0"], ["--runs 0"]),
        (["bench", "msm", "--size", "8", "--memlog-interval", "0"], ["more than 0"]),
        (["bench", "synth", "--circuit", "nosuch"], ["unknown circuit 'nosuch'"]),
        (["bench", "compare", "missing-a.json", "missing-b.json"], ["missing-a.json: no such"]),
        (["bench", "isolate", "cpu", *CUBE, "--change", "msm.split01=true"], ["'msm.split01'"]),
        (
            ["bench", "isolate", "cpu", *CUBE, "--change", "debug.sleep_ms.nope=5"],
            ["sleep_ms.nope"],
        ),
        (["trace", "show", "missing.jsonl"], ["missing.jsonl: no such file"]),
        (["bench", "compare", "a.json", "b.json", "--json", "."], ["--json .: is a folder"]),
        (["trace", "show", "missing.jsonl", "--png", "."], ["--png .: is a folder"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, fragments):
    assert_one_line_error(*run(capsys, *argv)[::2], *fragments)


def test_bench_synth(capsys):
    code, text, _ = run(capsys, "bench", "synth", *CUBE, *FAST)
    assert code == 0
    assert "synthesis" in text and "constraints 3" in text


def test_bench_synth_says_where_a_fresh_compile_went(tmp_path, capsys, monkeypatch):
    """A compile made by the bench's check reports its steps (record, check, save) beside its
    total; a compile loaded from the cache reports none."""
    from cuzk_core.witness import compiled as compiled_module

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})  # not an earlier test's compile
    args = ["bench", "synth", "--challenges", "2", "--depth", "3", *FAST, "--json"]
    assert run(capsys, *args, tmp_path / "fresh.json")[0] == 0
    fresh = json.loads((tmp_path / "fresh.json").read_text())["variants"][0]["check"]
    steps = [fresh[f"compile_{step}_ms"] for step in ("record", "check", "save")]
    assert all(ms > 0 for ms in steps)
    # The save comes after the compile's span; each figure is rounded to 0.1 ms.
    assert fresh["compile_ms"] >= steps[0] + steps[1] - 0.15
    assert run(capsys, *args, tmp_path / "cached.json")[0] == 0
    cached = json.loads((tmp_path / "cached.json").read_text())["variants"][0]["check"]
    assert cached["compile_ms"] is None and not any(
        k.startswith("compile_") for k in cached if k != "compile_ms"
    )


def test_planted_slowdown_fails_compare_and_isolate_names_its_phase(tmp_path, capsys):
    slow = profile(tmp_path, "slow", "[debug.sleep_ms]\nmsm_l = 200")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "bench", "prove", *CUBE, "--runs", "3", "--json", a)[0] == 0
    args = ["--profile", slow, "bench", "prove", *CUBE, "--runs", "3", "--json", b]
    assert run(capsys, *args)[0] == 0

    code, text, _ = run(capsys, "bench", "compare", a, b, "--fail-above", "5%")
    assert code == 1
    assert any(line.startswith("msm_l") and "REGRESSION" in line for line in text.splitlines())
    assert "regression beyond 5%" in text
    assert run(capsys, "bench", "compare", a, a, "--fail-above", "5%")[0] == 0
    code, text, _ = run(capsys, "bench", "compare", a, b, "--phase", "msm_a", "--json", "-")
    assert code == 0 and list(json.loads(text)["figures"]) == ["msm_a"]

    change = "debug.sleep_ms.msm_a=200"
    iso = tmp_path / "iso.json"
    code, text, _ = run(capsys, "bench", "isolate", "cpu", *CUBE, "--change", change, *FAST,
                        "--json", iso)  # fmt: skip
    assert code == 0
    assert f"{change}: msm_a slower by" in text
    assert read_result(iso)["isolate"]["attribution"][change]["phase"] == "msm_a"


def test_compare_refuses_results_of_other_machines(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(capsys, "bench", "ntt", "--size", "64", *FAST, "--json", a)[0] == 0
    document = json.loads(a.read_text())
    document["environment"]["machine"]["cpu_model"] = "Some Other CPU"
    b.write_text(json.dumps(document))
    code, _, err = run(capsys, "bench", "compare", a, b)
    assert_one_line_error(code, err, "different machines", "--force")
    assert run(capsys, "bench", "compare", a, b, "--force")[0] == 0
    b.write_text('{"schema": "cuzk-bench/1", "kind": "bench"')
    assert_one_line_error(*run(capsys, "bench", "compare", a, b)[::2], "not valid JSON")


def test_prove_writes_trace_and_memlog_and_trace_show_draws_it(tmp_path, capsys):
    out, trace, memlog = tmp_path / "out", tmp_path / "trace.jsonl", tmp_path / "mem.csv"
    args = ["-q", "prove", *CUBE, "--out", out, "--trace", trace, "--memlog", memlog]
    code, _, _ = run(capsys, *args, "--memlog-interval", "0.01")
    assert code == 0
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    names = [record["name"] for record in records[:-1]]
    assert {"synthesis", "msm_h", "msm_b_g2", "unpin"} <= set(names)
    assert records[-1]["memory"]["peak_rss_bytes"] > 0  # the peaks close the trace
    assert memlog.read_text().startswith("t_s,rss_bytes,device_bytes\n")
    assert json.loads((out / "timings.json").read_text())["memory"]["peak_rss_bytes"] > 0

    code, text, _ = run(capsys, "trace", "show", trace, "--all", "--png", tmp_path / "w.png")
    assert code == 0
    assert text.splitlines()[1].startswith("job ")  # the CLI's own work before the proof
    assert text.splitlines()[2].startswith("prepare ")
    assert text.splitlines()[3].startswith("synthesis ")
    assert text.splitlines()[4].startswith("  ") and "█" in text  # finer spans under synthesis
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "memory peaks: host RSS " in text

    code, text, _ = run(capsys, "trace", "show", trace)
    rows = [line.split()[0] for line in text.splitlines()[1:] if "|" in line]
    assert rows == list(dict.fromkeys(rows)), rows  # each phase once (unpin was drawn twice)


def test_trace_show_marks_overlaps_and_open_spans(tmp_path, capsys):
    timer = Timer(level=0)
    path = tmp_path / "t.jsonl"
    with timer.span("msm_h", backend="gpu"):
        worker = threading.Thread(target=_b_g2_beside, args=(timer,))
        worker.start()
        worker.join()
    with timer.span("msm_l", backend="gpu"):
        timer.write_trace(path)  # written mid-run, as an interrupted prove leaves it
    code, text, _ = run(capsys, "trace", "show", path)
    assert code == 0
    table, overlaps = text.split("\n\n")
    rows = {line.split()[0]: line for line in table.splitlines()[1:]}
    assert "∥ msm_b_g2" in rows["msm_h"] and "open" in rows["msm_l"]
    assert "msm_h [gpu] beside msm_b_g2 [cpu]: " in overlaps
    path.write_text('{"name": "msm_h", "start": 0, "end": 1}\nnot json\n')
    assert_one_line_error(*run(capsys, "trace", "show", path)[::2], "t.jsonl:2: not JSON")


def _b_g2_beside(timer: Timer) -> None:
    with timer.span("msm_b_g2", backend="cpu"):
        time.sleep(0.02)


@pytest.mark.parametrize(
    "span",
    ['"start": NaN, "end": 1', '"start": 1, "end": Infinity', '"start": 1, "end": 0'],
)
def test_a_span_that_does_not_run_forward_is_refused(tmp_path, capsys, span):
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"name": "x", ' + span + ', "parent": null}\n')
    assert_one_line_error(*run(capsys, "trace", "show", trace)[::2], "span 'x' runs from")


def _memory_total() -> int:
    with open("/proc/meminfo") as f:
        return int(next(line for line in f if line.startswith("MemTotal:")).split()[1]) << 10


@pytest.mark.skipif(
    not Path("/proc/meminfo").exists() or _memory_total() > 256 << 30,
    reason="a host whose memory might hold a 2^32 G2 MSM's inputs would start timing it",
)
def test_a_bench_size_whose_inputs_cannot_fit_is_one_line(capsys):
    argv = ["bench", "msm", "--curve", "g2", "--size", "2^32", "--runs", "1", "--warmup", "0"]
    assert_one_line_error(*run(capsys, *argv)[::2], "msm: its inputs do not fit in memory")
