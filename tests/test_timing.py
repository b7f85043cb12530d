"""Phase spans and the CUZK_TIMING log."""

from __future__ import annotations

import io
import threading
import time

from cuzk_core.timing import PHASES, Timer


def test_phase_lines_have_the_documented_format():
    stream = io.StringIO()
    timer = Timer(level=1, stream=stream)
    with timer.span("msm_a", backend="cpu"), timer.span("bucket_reduction"):
        pass
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1  # level 1: phases only
    name, ms, backend = lines[0].split(" ")[1:]
    assert lines[0].startswith("CUZK_TIMING phase=msm_a ")
    assert float(ms.removeprefix("ms=")) >= 0
    assert backend == "backend=cpu"
    assert name == "phase=msm_a"


def test_level_two_shows_finer_spans_with_their_parent():
    stream = io.StringIO()
    timer = Timer(level=2, stream=stream)
    with timer.span("ntt_h", backend="cpu"), timer.span("intt", size=8):
        pass
    first = stream.getvalue().splitlines()[0]
    assert first.startswith("CUZK_TIMING span=intt ")
    assert "parent=ntt_h" in first and "size=8" in first and "backend=cpu" in first


def test_quiet_by_default_and_spans_recorded():
    stream = io.StringIO()
    timer = Timer(level=0, stream=stream)
    with timer.span("synthesis", backend="cpu"):
        pass
    assert stream.getvalue() == ""
    record = timer.to_json()["spans"][0]
    assert set(record) >= {"name", "start", "end", "parent", "backend"}
    assert list(timer.phase_totals()) == ["synthesis"]


def test_threads_keep_their_own_parents():
    timer = Timer(level=0)
    with timer.span("msm_a", backend="gpu"):
        worker = threading.Thread(target=lambda: timer.span("msm_b_g2", backend="cpu").__enter__())
        worker.start()
        worker.join()
    spans = {s.name: s for s in timer.spans}
    assert spans["msm_b_g2"].parent is None
    assert spans["msm_b_g2"].backend == "cpu"


def test_phase_names_are_the_design_ones():
    assert PHASES[:2] == ("prepare", "synthesis") and PHASES[-1] == "unpin"
    assert {"ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2", "assemble"} <= set(PHASES)


def test_nested_phase_spans_count_once_and_sub_phases_are_children():
    stream = io.StringIO()
    timer = Timer(level=1, stream=stream)
    with timer.span("bench_run"), timer.span("msm_h", backend="gpu"):
        with timer.span("prep_msm"):
            time.sleep(0.01)
        with timer.span("tail_msm"), timer.span("msm_l"):  # a phase name inside a phase
            time.sleep(0.01)
    totals = timer.phase_totals()
    assert list(totals) == ["msm_h"]
    spans = {s.name: s for s in timer.spans}
    assert totals["msm_h"] == spans["msm_h"].ms >= spans["prep_msm"].ms + spans["tail_msm"].ms
    assert not spans["msm_l"].is_phase and not spans["prep_msm"].is_phase
    lines = stream.getvalue().splitlines()
    assert [line.split(" ")[1].split("=")[0] for line in lines] == ["span", "span", "phase"]
    assert "parent=msm_h" in lines[0] and lines[0].startswith("CUZK_TIMING span=prep_msm ")
    assert (
        sum(totals.values()) == timer.wall_ms()
        or abs(sum(totals.values()) - timer.wall_ms()) < 1e-6
    )


def test_wall_time_counts_overlapping_phases_once():
    timer = Timer(level=0)
    with timer.span("msm_a"):
        worker = threading.Thread(target=lambda: _sleep_in(timer, "msm_b_g2", 0.03))
        worker.start()
        time.sleep(0.02)
        worker.join()
    spans = {s.name: s for s in timer.spans}
    assert spans["msm_b_g2"].is_phase and spans["msm_a"].is_phase
    union = max(s.end for s in spans.values()) - min(s.start for s in spans.values())
    assert abs(timer.wall_ms() - union * 1000) < 1e-6
    assert timer.wall_ms() < sum(timer.phase_totals().values())


def _sleep_in(timer: Timer, name: str, seconds: float) -> None:
    with timer.span(name):
        time.sleep(seconds)
