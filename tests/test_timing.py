"""Phase spans and the CUZK_TIMING log."""

from __future__ import annotations

import io
import threading

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
