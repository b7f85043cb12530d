"""bench/ncu_summary.py's parsing of Nsight Compute's raw and source pages (no ncu needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "ncu_summary.py"
spec = importlib.util.spec_from_file_location("ncu_summary", SCRIPT)
assert spec is not None and spec.loader is not None
ncu_summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ncu_summary)

RAW = (
    '"Kernel Name","gpu__time_duration.sum","launch__registers_per_thread",'
    '"sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_elapsed",'
    '"smsp__pcsamp_warps_issue_stalled_wait","smsp__pcsamp_warps_issue_stalled_wait_not_issued",'
    '"smsp__pcsamp_warps_issue_stalled_selected","smsp__pcsamp_warps_issue_stalled_barrier"\n'
    '"","ms","register/thread","%","","","",""\n'
    '"msm_sum_affine_g1","118.99","182","82.67","3,000","2,000","1,000","0"\n'
    '"ntt_stages","1.65","64","72.4","10","5","30",""\n'
)
SOURCE = (
    '"Kernel Name","msm_sum_affine_g1",\n'
    '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"\n'
    '"0x10","      IMAD.WIDE.U32.X R2, P0, R4, R5, R2 ;","3","60"\n'
    '"0x20","  @!P1 IADD3.X R6, R7, R8, RZ, P2, !PT ;","1","30"\n'
    '"0x30","      RET.REL.NODEC R20 0x0 ;","0","10"\n'
    '"Kernel Name","ntt_stages",\n'
    '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"\n'
    '"0x10","      BAR.SYNC.DEFER_BLOCKING 0x0 ;","5","4"\n'
)


def test_launches_give_figures_and_stall_shares():
    first, second = ncu_summary.launches(RAW)
    assert first["kernel"] == "msm_sum_affine_g1"
    assert (first["ms"], first["registers"], first["fmaheavy_pct"]) == (118.99, 182, 82.67)
    assert first["alu_pct"] is None  # a metric the report lacks
    assert first["stalls_pct"] == {"wait": 75.0, "selected": 25.0}  # not-issued kept apart
    assert list(second["stalls_pct"]) == ["selected", "wait"]  # largest first


def test_mixes_count_opcodes_per_launch_past_predicates():
    msm, ntt = ncu_summary.mixes(SOURCE)
    assert msm == {"IMAD.WIDE.U32.X": 60.0, "IADD3.X": 30.0, "RET.REL.NODEC": 10.0}
    assert ntt == {"BAR.SYNC.DEFER_BLOCKING": 100.0}


def test_brief_lists_the_launches_in_order_with_their_total():
    lines = ncu_summary.durations(ncu_summary.launches(RAW)).splitlines()
    assert [line.split()[0] for line in lines] == ["msm_sum_affine_g1", "ntt_stages", "total"]
    assert [float(line.split()[1]) for line in lines] == [118990.0, 1650.0, 120640.0]
