"""A/B of the GPU witness kernels and their tuning macros on a compiled porep-lite program, then
of the R1CS products' threads a row (``SPMV_LANES``) over that witness, as JSON.

Each witness variant is a kernel (``witness_levels`` or ``witness_blocks``, backends/gpu/
witness.py's schedules) and a set of defines for r1cs/witness.cu (see its tuning macros, and
``WITNESS_SBOX_CHAINS``, which only the host reads: backends/gpu/witness.py); each
products variant is r1cs/spmv.cu's ``SPMV_LANES``, timed over A·z, B·z and C·z of the proving
matrices as the prover makes them (a row that repeats another copied from its product) and
with every row summed. Variants run alternating, ``--runs`` rounds after one warm-up, each
timed with CUDA events around its kernels (inputs already on the device), and each variant's
results must equal the first one's bit for bit.

    python bench/gpu_witness_variants.py --challenges 135 --depth 8 --out bench/results/X.json
    python bench/gpu_witness_variants.py --challenges 2165 --depth 32 --witness none --lanes 1,4,8
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_backend_gpu import field
from cuzk_backend_gpu.driver import EventClock
from cuzk_backend_gpu.witness import op_lanes, run_program
from cuzk_core.bench.environment import capture
from cuzk_core.circuits import PorepLite
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.witness.compiled import compile_circuit
from cuzk_core.witness.replay import replay

VARIANTS: dict[str, tuple[str, dict[str, int]]] = {
    "levels, canonical rows (round 24)": ("levels", {"WITNESS_SCALED_ROWS": 0}),
    "levels": ("levels", {}),
    "blocks, canonical rows": ("blocks", {"WITNESS_SCALED_ROWS": 0}),
    "blocks": ("blocks", {}),
    "blocks, 4 blocks a multiprocessor": ("blocks", {"WITNESS_BLOCKS_PER_SM": 4}),
    "blocks, 64 threads": ("blocks", {"WITNESS_THREADS": 64}),
    "blocks, 32 threads": ("blocks", {"WITNESS_THREADS": 32}),
    "levels, 8 lanes an op": ("levels", {"WITNESS_OP_LANES": 8}),
    "blocks, 32 lanes an op": ("blocks", {"WITNESS_OP_LANES": 32}),
    "blocks, 8 lanes an op": ("blocks", {"WITNESS_OP_LANES": 8}),
    "blocks, 4 lanes an op": ("blocks", {"WITNESS_OP_LANES": 4}),
    "blocks, 16 lanes an op": ("blocks", {"WITNESS_OP_LANES": 16}),
    "levels, flat rows": ("levels", {"WITNESS_FLAT_ROWS": 1}),
    "blocks, flat rows": ("blocks", {"WITNESS_FLAT_ROWS": 1}),
    "blocks, flat rows, 8 lanes an op": ("blocks", {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 8}),
    "blocks, flat rows, 16 lanes an op": (
        "blocks",
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 16},
    ),
    # flat rows fit 128 registers without spilling (the per-row path spills 160 bytes)
    "blocks, flat rows, 8 lanes, 4 blocks a multiprocessor": (
        "blocks",
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 8, "WITNESS_BLOCKS_PER_SM": 4},
    ),
    "blocks, every op alone (no S-box chains)": ("blocks", {"WITNESS_SBOX_CHAINS": 0}),
    "levels, every op alone (no S-box chains)": ("levels", {"WITNESS_SBOX_CHAINS": 0}),
    "blocks, flat rows, 8 lanes, every op alone": (
        "blocks",
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 8, "WITNESS_SBOX_CHAINS": 0},
    ),
    "blocks, flat rows, every op alone": (
        "blocks",
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_SBOX_CHAINS": 0},
    ),
    "timing only: levels without barriers": ("levels", {"WITNESS_TIMING_NO_BARRIER": 1}),
    "timing only: blocks without barriers": ("blocks", {"WITNESS_TIMING_NO_BARRIER": 1}),
    "timing only: blocks' steps and barriers, no ops": ("blocks", {"WITNESS_TIMING_NO_OPS": 1}),
}
"""Variant name → (kernel, defines; the empty set is the kernel's defaults)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=33)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", default="cupy")
    parser.add_argument(
        "--witness",
        default="all",
        help="witness variants: all, or none (the blocks kernel only); --variant overrides it",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="time only this witness variant (repeatable; its name as VARIANTS lists it)",
    )
    parser.add_argument("--lanes", default="", help="SPMV_LANES values to time, e.g. 1,4,8")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.witness not in ("all", "none"):
        parser.error(f"--witness {args.witness!r}: all or none")
    variants = VARIANTS if args.witness == "all" else {"blocks": VARIANTS["blocks"]}
    if args.variant:
        unknown = [name for name in args.variant if name not in VARIANTS]
        if unknown:
            parser.error(f"--variant {unknown[0]!r}: one of {', '.join(map(repr, VARIANTS))}")
        variants = {name: VARIANTS[name] for name in args.variant}
    lanes = [int(x) for x in args.lanes.split(",") if x.strip()]

    plugins = load_plugins()
    profile = load_profile("h200")
    backend = plugins.backend(profile)
    plugin = plugins.plugin(args.backend)
    gpu = plugin.gpu
    circuit = PorepLite(challenges=args.challenges, depth=args.depth)
    # The compile (minutes at 2^24 when not cached) and the replay run on the host: say so.
    print(f"compiling porep-lite c{args.challenges} d{args.depth}", file=sys.stderr, flush=True)
    compiled, _ = compile_circuit(backend, circuit)
    program = compiled.program
    print(f"compiled ({compiled.source}); replaying", file=sys.stderr, flush=True)
    inputs, hints = replay(circuit, program)
    print(f"{len(variants)} variants x {args.runs + 1} rounds", file=sys.stderr, flush=True)
    clock = EventClock(gpu)
    times: dict[str, list[float]] = {name: [] for name in variants}
    lanes_run: dict[str, int] = {}  # the op lanes each variant ran with (a define, or chosen)
    first_z: np.ndarray | None = None
    with gpu.scope():
        on_device = [gpu.to_device(x) for x in (inputs, hints)]
        for round_ in range(args.runs + 1):
            for name, (schedule, defines) in variants.items():
                gpu.defines["r1cs/witness.cu"] = defines
                z, ms = clock.time(
                    lambda kernel=schedule: run_program(gpu, program, *on_device, kernel)
                )
                if round_ == 0:
                    lanes_run[name] = op_lanes(gpu, program)
                    got = z.get()
                    if "timing only" in name:  # a wrong witness by design
                        pass
                    elif first_z is None:
                        first_z = got
                    elif not np.array_equal(got, first_z):
                        print(f"variant {name}: a different witness", file=sys.stderr)
                        return 1
                else:
                    times[name].append(ms)
        gpu.defines.pop("r1cs/witness.cu", None)  # a real witness for the products, not a variant's
        z_mont = run_program(gpu, program, *on_device)
        matrices = compiled.proving_matrices
        for matrix in (matrices.a, matrices.b, matrices.c):  # uploaded first, as the prover does
            field.matrix_on_device(gpu, matrix)
        gpu.synchronize()
        start = time.perf_counter()  # the first proof's share: the repeats' search and the order
        field.row_plan(gpu, matrices)
        gpu.synchronize()
        plan_ms = 1000 * (time.perf_counter() - start)
        products = _time_lanes(gpu, clock, matrices, z_mont, lanes, args.runs)
        if products is None:
            return 1
    counts = program.counts()
    print(f"porep-lite c{args.challenges} d{args.depth}: {counts}")
    print(f"{'variant':48} {'median ms':>10} {'min':>8} {'max':>8} {'us/level':>9} {'lanes':>5}")
    rows = {}
    for name, values in times.items():
        median = statistics.median(values)
        rows[name] = {
            **_stats(values),
            "kernel": variants[name][0],
            "defines": variants[name][1],
            "op_lanes": lanes_run[name],
        }
        per_level = 1000 * median / max(1, counts["levels"])
        print(
            f"{name:48} {median:10.2f} {min(values):8.2f} {max(values):8.2f} {per_level:9.2f}"
            f" {lanes_run[name]:5}"
        )
    lane_rows = {name: _stats(v) for name, v in products.items()}
    for name, row in lane_rows.items():
        print(f"{'A·z, B·z, C·z, ' + name:48} {row['median_ms']:10.2f} {row['min_ms']:8.2f}")
    print(f"row plan, once per matrices (host clock): {plan_ms:.1f} ms")
    if args.out:
        record = {
            "benchmark": "gpu-witness-variants",
            "backend": args.backend,
            "circuit": {
                "name": "porep-lite",
                "challenges": args.challenges,
                "depth": args.depth,
                **counts,
            },
            "environment": capture(),
            "variants": rows,
            "r1cs_products": lane_rows,
            "row_plan_ms": plan_ms,
        }
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


def _stats(values: list[float]) -> dict[str, object]:
    return {
        "median_ms": statistics.median(values),
        "min_ms": min(values),
        "max_ms": max(values),
        "runs_ms": values,
    }


def _time_lanes(
    gpu: Any, clock: EventClock, matrices: Any, z_mont: Any, lanes: list[int], runs: int
) -> dict[str, list[float]] | None:
    """ms of the three products per ``SPMV_LANES`` value, as the prover makes them and with
    every row summed, alternating, after a warm-up round whose results must agree across the
    variants (None, said on stderr, when they do not)."""
    a, b, c = matrices.a, matrices.b, matrices.c
    forms = {
        "": lambda: field.r1cs_products(gpu, matrices, z_mont),
        ", every row": lambda: [field.spmv(gpu, m, z_mont) for m in (a, b, c)],
    }
    times: dict[str, list[float]] = {f"SPMV_LANES={k}{f}": [] for k in lanes for f in forms}
    first: list[np.ndarray] | None = None
    for round_ in range(runs + 1):
        for k in lanes:
            gpu.defines["r1cs/spmv.cu"] = {"SPMV_LANES": k}
            for form, products in forms.items():
                out, ms = clock.time(products)
                name = f"SPMV_LANES={k}{form}"
                if round_ == 0:
                    got = [x.get() for x in out]
                    first = first or got
                    if any(not np.array_equal(g, f) for g, f in zip(got, first, strict=True)):
                        print(f"{name}: different products", file=sys.stderr)
                        return None
                else:
                    times[name].append(ms)
    gpu.defines.pop("r1cs/spmv.cu", None)
    return times


if __name__ == "__main__":
    sys.exit(main())
