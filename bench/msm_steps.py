"""GPU MSMs by step: each case's total (CUDA events) and its sort, bucket-sum, reduction and
combination steps (CUZK_TIMING=2), G1 or G2, plain or over a window table, as JSON.

A case is ``GROUP:TABLE_BITS[:LOG]``: ``g1:20`` is a G1 MSM of 2^20 tiled device points over a
20-bit window table, ``g2:0:22`` a plain G2 MSM of 2^22 (table bits 0: no table; LOG defaults
to 20). Every timed run's sum is checked against the first run's.

    python bench/msm_steps.py g1:0 g1:20 g2:0 g2:20 g1:0:24 --out steps.json

With ``--ncu`` each case runs one MSM (after two warm-ups) between cudaProfilerStart and
cudaProfilerStop, for Nsight Compute's per-kernel durations in launch order:

    ncu --profile-from-start off --metrics gpu__time_duration.sum -o steps \\
        python bench/msm_steps.py --ncu g1:20
    python bench/ncu_summary.py steps.ncu-rep --brief

Round 17 (bench/NOTES.md) timed and profiled the bucket reduction this way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import gpu_bench

from cuzk_backend_gpu import msm
from cuzk_backend_gpu.driver import GpuError
from cuzk_core.timing import Timer


def parse_case(case: str) -> tuple[str, int, int]:
    """``GROUP:TABLE_BITS[:LOG]`` as (group, table bits, log2 of the points)."""
    parts = case.split(":")
    if len(parts) not in (2, 3) or parts[0] not in msm.GROUPS:
        raise SystemExit(f"case {case!r}: expected GROUP:TABLE_BITS[:LOG], GROUP g1 or g2")
    try:
        bits, log = int(parts[1]), int(parts[2]) if len(parts) == 3 else 20
    except ValueError:
        raise SystemExit(f"case {case!r}: TABLE_BITS and LOG are integers") from None
    return parts[0], bits, log


def run_case(gp: Any, case: str, runs: int, ncu: bool) -> dict[str, Any] | None:
    """One case's medians (None under ``ncu``: one profiled MSM instead)."""
    group, bits, log = parse_case(case)
    ops = msm.GROUPS[group]
    same = gpu_bench.g1_eq if group == "g1" else gpu_bench.g2_eq
    clock = gpu_bench.EventClock(gp.gpu)
    with gp.gpu.scope():
        coords, scalars, _ = gpu_bench._tiled_case(gp, group, log)
        table = (
            gpu_bench.window_table(gp, ops, coords, bits, msm.table_windows(bits))[0]
            if bits
            else None
        )

        def run(timer: Timer | None = None) -> Any:
            return gpu_bench._device_msm(gp, ops, coords, scalars, timer=timer, table=table)

        want = run()
        run()
        if ncu:
            import cupy

            cupy.cuda.runtime.deviceSynchronize()
            cupy.cuda.runtime.profilerStart()
            run()
            cupy.cuda.runtime.deviceSynchronize()
            cupy.cuda.runtime.profilerStop()
            return None

        def check(got: Any) -> None:
            if not same(got, want):
                raise AssertionError(f"{case}: a run's sum differs from the first")

        totals = []
        for _ in range(runs):
            got, ms = clock.time(run)
            totals.append(ms)
            check(got)
        steps, _ = gpu_bench.timed_steps(run, runs, check)
    return {
        "total_ms": round(statistics.median(totals), 3),
        "runs_ms": [round(t, 3) for t in totals],
        "steps_ms": {k: round(v, 3) for k, v in steps.items()},
    }


def main(argv: list[str] | None = None) -> int:
    """Time (or profile) each case and print a line per case."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+", help="GROUP:TABLE_BITS[:LOG], e.g. g1:20 g2:0:22")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, help="write the medians here as JSON")
    parser.add_argument("--label", default="", help="a tag printed before each line (A/B runs)")
    parser.add_argument("--backend", default="cupy", help="the GPU backend measured")
    parser.add_argument("--ncu", action="store_true", help="one profiled MSM a case, no timing")
    parser.add_argument("--chunk-threads", type=int, help="msm.CHUNK_THREADS for this process")
    parser.add_argument(
        "--batch-lanes", type=int, default=0, help="the batch-affine first pass's lanes (0: none)"
    )
    parser.add_argument(
        "--define", action="append", default=[], help="kernel macro, [FILE:]K=V (FILE msm/msm.cu)"
    )
    args = parser.parse_args(argv)
    for case in args.cases:
        parse_case(case)  # a bad case fails before any device work
    if args.chunk_threads:
        msm.CHUNK_THREADS = args.chunk_threads
    gpu_bench.BATCH_LANES = args.batch_lanes
    try:
        gp = gpu_bench.gpu_plugin(args.backend)
    except GpuError as exc:
        raise SystemExit(str(exc)) from None
    gpu_bench.apply_defines(gp, args.define)
    results = {}
    for case in args.cases:
        found = run_case(gp, case, args.runs, args.ncu)
        if found is None:
            continue
        results[case] = found
        steps = " ".join(f"{k[4:]} {v:.2f}" for k, v in found["steps_ms"].items())
        print(f"{args.label} {case:10s} {found['total_ms']:9.3f} ms  {steps}".lstrip(), flush=True)
    if args.out:
        env = gpu_bench.environment([gp])
        args.out.write_text(json.dumps({"environment": env, "cases": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
