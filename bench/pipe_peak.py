"""Peak rates of the GPU's multiply pipes and of the MSM's field arithmetic, as JSON.

What bounds the bucket sums: each kernel here keeps every SM busy with independent chains of
one operation (no memory traffic), so its rate is the ceiling that operation can reach:

- ``imad_wide``: ``mad.wide.u32`` (IMAD.WIDE.U32, the 32×32→64 multiply-add a Montgomery
  product is made of), ``imad``: ``mad.lo.u32``, ``dfma``: ``fma.rn.f64``, and
  ``imad_wide+dfma`` both interleaved in one thread (do the integer and FP64 pipes overlap?);
- ``fq_mul``: the kernels' Fq Montgomery product (``fq_t::mul_call``, as the curve formulas call
  it), ``fq_madd``: the MSM loop's mixed addition (``xyzz_t::accumulate``) of L1-resident
  points, the bucket sums' arithmetic without their loads, ``fq_inverse``: the field inversion;
- ``batch_affine/K`` (``--batch-lanes K,…``): affine additions K a thread sharing one inversion
  (Montgomery's trick), with their scratch in global memory, checked against ``fq_madd``'s
  XYZZ formulas: what a batch-affine bucket sum could reach, against ``fq_madd``.

Rates are per second and per SM per clock at the device's reported clock (the boost clock; a
lower sustained clock shows as a lower per-clock figure). Then the G1 MSMs of ``--msm`` sizes
(gpu_bench's tiled device case) run with their steps synchronised (``CUZK_TIMING=2``): the sort,
bucket-sum and reduction milliseconds, and the bucket sums' mixed additions a second against
``fq_madd``'s peak.

    python bench/pipe_peak.py --out bench/results/2026-12-02-h200-pipe-peak.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_backend_gpu import kernels

CHAINS = 8
"""Independent accumulators a thread: enough to cover a multiply's latency at full occupancy."""
WAVES = 4
"""Full waves of resident blocks a launch: the tail of the last one is a small share."""

SOURCE = r"""
#define CHAINS 8

extern "C" __global__ void peak_imad_wide(unsigned long long* out, uint32_t iters) {
    const uint32_t x = threadIdx.x * 2654435761u + blockIdx.x;
    unsigned long long acc[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) acc[k] = x + k;
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < CHAINS; k++)
            asm volatile("mad.wide.u32 %0, %1, %2, %0;" : "+l"(acc[k]) : "r"(x + k), "r"(i));
    }
    unsigned long long s = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) s ^= acc[k];
    if (s == 0x5eed) out[0] = s;  // keeps the chains live
}

extern "C" __global__ void peak_imad(unsigned long long* out, uint32_t iters) {
    const uint32_t x = threadIdx.x * 2654435761u + blockIdx.x;
    uint32_t acc[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) acc[k] = x + k;
    for (uint32_t i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < CHAINS; k++)
            asm volatile("mad.lo.u32 %0, %1, %2, %0;" : "+r"(acc[k]) : "r"(x + k), "r"(i));
    }
    uint32_t s = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) s ^= acc[k];
    if (s == 0x5eed) out[0] = s;
}

extern "C" __global__ void peak_dfma(unsigned long long* out, uint32_t iters) {
    const double x = 1.0 + threadIdx.x * 1e-9;
    double acc[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) acc[k] = k;
    for (uint32_t i = 0; i < iters; i++) {
        const double y = 0.999999 + i * 1e-12;
#pragma unroll
        for (int k = 0; k < CHAINS; k++)
            asm volatile("fma.rn.f64 %0, %1, %2, %0;" : "+d"(acc[k]) : "d"(x), "d"(y));
    }
    double s = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) s += acc[k];
    if (s == 0.5) out[0] = 1;
}

// CHAINS IMAD.WIDE and CHAINS DFMA an iteration, interleaved.
extern "C" __global__ void peak_imad_wide_dfma(unsigned long long* out, uint32_t iters) {
    const uint32_t x = threadIdx.x * 2654435761u + blockIdx.x;
    const double xd = 1.0 + threadIdx.x * 1e-9;
    unsigned long long acc[CHAINS];
    double accd[CHAINS];
#pragma unroll
    for (int k = 0; k < CHAINS; k++) acc[k] = x + k, accd[k] = k;
    for (uint32_t i = 0; i < iters; i++) {
        const double y = 0.999999 + i * 1e-12;
#pragma unroll
        for (int k = 0; k < CHAINS; k++) {
            asm volatile("mad.wide.u32 %0, %1, %2, %0;" : "+l"(acc[k]) : "r"(x + k), "r"(i));
            asm volatile("fma.rn.f64 %0, %1, %2, %0;" : "+d"(accd[k]) : "d"(xd), "d"(y));
        }
    }
    unsigned long long s = 0;
    double sd = 0;
#pragma unroll
    for (int k = 0; k < CHAINS; k++) s ^= acc[k], sd += accd[k];
    if (s == 0x5eed || sd == 0.5) out[0] = s;
}

// 4 independent Fq products a step, each the called product the curve formulas use.
extern "C" __global__ void peak_fq_mul(const fq_t* in, fq_t* out, uint32_t iters) {
    const uint64_t t = global_thread();
    fq_t a = in[t & 1023], b = in[(t + 1) & 1023], c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const fq_t y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = fq_t::mul_call(a, y);
        b = fq_t::mul_call(b, y);
        c = fq_t::mul_call(c, y);
        d = fq_t::mul_call(d, y);
    }
    if ((a.v[0] ^ b.v[0] ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = a;
}

// The MSM loop's mixed addition into one accumulator, over 1024 L1/L2-resident points.
extern "C" __global__ void peak_fq_madd(const affine_t<fq_t>* points, xyzz_t<fq_t>* out,
                                        uint32_t iters) {
    const uint64_t t = global_thread();
    xyzz_t<fq_t> acc = xyzz_t<fq_t>::from_affine(load_vec(points + (t & 1023)));
    for (uint32_t i = 0; i < iters; i++) {
        acc.accumulate(load_vec(points + ((t + 7 * i + 1) & 1023)), (i & 1) != 0);
    }
    if (acc.X.v[0] == 0x5eed) store_vec(out + t, acc);
}

// The field inversion (field_inverse: the binary GCD since round 19), 2 independent a thread.
extern "C" __global__ void peak_fq_inverse(const fq_t* in, fq_t* out, uint32_t iters) {
    const uint64_t t = global_thread();
    fq_t a = in[t & 1023], b = in[(t + 1) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = field_inverse(a);
        b = field_inverse(b);
    }
    if ((a.v[0] ^ b.v[0]) == 0x5eed) out[t] = a;
}

// Lane k of thread t starts from points[first_point(t, k)] and adds points[batch_point(t, i, k)]
// in step i: hashed across all mask + 1 points (a real bucket sum's gathers miss the caches),
// and 513·(i + 1) apart modulo 2^14, gpu_bench's tile of distinct points, so the first step
// never adds a point to itself.
__device__ __forceinline__ uint32_t lane_hash(uint64_t t, uint32_t k) {
    return (uint32_t)t * 2654435761u + k * 2246822519u;
}
__device__ __forceinline__ uint32_t first_point(uint64_t t, uint32_t k, uint32_t mask) {
    return lane_hash(t, k) & mask;
}
__device__ __forceinline__ uint32_t batch_point(uint64_t t, uint32_t i, uint32_t k,
                                                uint32_t mask) {
    const uint32_t h = lane_hash(t, k);
    return (h + (i + 1) * (((h >> 7) << 14) + 513u)) & mask;
}

extern "C" __global__ void batch_affine_init(const affine_t<fq_t>* points, uint32_t mask,
                                             affine_t<fq_t>* acc, uint32_t lanes) {
    const uint64_t t = global_thread(), threads = (uint64_t)gridDim.x * blockDim.x;
    for (uint32_t k = 0; k < lanes; k++) acc[k * threads + t] = points[first_point(t, k, mask)];
}

// Affine additions in batches of `lanes` a thread sharing one inversion (Montgomery's trick):
// a batch-affine bucket sum's arithmetic (5 products, 1 square, 1/lanes of an inversion an
// addition) and its scratch traffic (accumulators and prefix products in global memory,
// lane-major so each step's accesses coalesce), without the sort's bookkeeping. The added
// points are gathered from mask + 1 of them: 1024 stay in L1 as in peak_fq_madd, 2^24 do not.
extern "C" __global__ void peak_batch_affine(const affine_t<fq_t>* points, uint32_t mask,
                                             affine_t<fq_t>* acc, fq_t* prefix, uint32_t lanes,
                                             uint32_t iters) {
    const uint64_t t = global_thread(), threads = (uint64_t)gridDim.x * blockDim.x;
    for (uint32_t i = 0; i < iters; i++) {
        fq_t run = fq_t::one();
        for (uint32_t k = 0; k < lanes; k++) {
            const fq_t d = points[batch_point(t, i, k, mask)].x - acc[k * threads + t].x;
            prefix[k * threads + t] = run;
            run = fq_t::mul_call(run, d);
        }
        fq_t inv = field_inverse(run);
        for (uint32_t k = lanes; k-- > 0;) {
            const affine_t<fq_t> q = load_vec(points + batch_point(t, i, k, mask));
            const affine_t<fq_t> a = load_vec(acc + k * threads + t);
            const fq_t d_inv = fq_t::mul_call(inv, prefix[k * threads + t]);
            inv = fq_t::mul_call(inv, q.x - a.x);
            const fq_t lambda = fq_t::mul_call(q.y - a.y, d_inv);
            const fq_t x3 = fq_t::sqr_call(lambda) - a.x - q.x;
            store_vec(acc + k * threads + t,
                      affine_t<fq_t>{x3, fq_t::mul_call(lambda, a.x - x3) - a.y});
        }
    }
}

// After one step of peak_batch_affine: each lane's sum against the XYZZ mixed addition of the
// same two points (x·ZZ = X, y·ZZZ = Y); mismatches counted in errors[0].
extern "C" __global__ void batch_affine_check(const affine_t<fq_t>* points, uint32_t mask,
                                              const affine_t<fq_t>* acc, uint32_t lanes,
                                              unsigned long long* errors) {
    const uint64_t t = global_thread(), threads = (uint64_t)gridDim.x * blockDim.x;
    for (uint32_t k = 0; k < lanes; k++) {
        xyzz_t<fq_t> r = xyzz_t<fq_t>::from_affine(points[first_point(t, k, mask)]);
        r.add_affine(points[batch_point(t, 0, k, mask)], false);
        const affine_t<fq_t> s = acc[k * threads + t];
        if (!(s.x * r.ZZ == r.X) || !(s.y * r.ZZZ == r.Y)) atomicAdd(errors, 1ull);
    }
}
"""

# kernel -> (operations per thread per iteration, the operation counted)
KERNELS = {
    "peak_imad_wide": (CHAINS, "imad_wide"),
    "peak_imad": (CHAINS, "imad"),
    "peak_dfma": (CHAINS, "dfma"),
    "peak_imad_wide_dfma": (2 * CHAINS, "imad_wide+dfma"),
    "peak_fq_mul": (4, "fq_mul"),
    "peak_fq_madd": (1, "fq_madd"),
    "peak_fq_inverse": (2, "fq_inverse"),
}


def main(argv: list[str] | None = None) -> int:
    """Time each peak kernel and write the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--msm", default="20,24", help="G1 MSM sizes (log2) timed by step")
    parser.add_argument(
        "--tables", default="", help="window-table bits timed by step at the largest --msm size"
    )
    parser.add_argument(
        "--batch-lanes", default="", help="batch-affine additions a thread sharing an inversion"
    )
    parser.add_argument(
        "--batch-points",
        type=int,
        default=10,
        help="log2 of the points the batch-affine additions gather from (10: L1-resident)",
    )
    args = parser.parse_args(argv)
    import gpu_bench

    gp = gpu_bench.gpu_plugin("cupy")
    gpu = gp.gpu
    info = gpu.adapter.describe()
    sms = info["multiprocessors"]
    module = gpu.adapter.compile(kernels.assemble("msm/msm.cu") + SOURCE, kernels.COMPILE_OPTIONS)
    results = []
    with gpu.scope():
        points = gpu_bench._upload(gp, gpu_bench._points("g1", 1024)).coords
        scratch = gpu.zeros((1 << 22,), np.uint64)
        for name, (per_iter, what) in KERNELS.items():
            kernel = module.get_function(name)
            block = 128 if name.startswith("peak_fq") else 256
            per_sm = gpu.resident_threads(kernel, block) // block // sms
            threads = per_sm * sms * WAVES * block
            iters = {"peak_fq_mul": 256, "peak_fq_madd": 64, "peak_fq_inverse": 1}.get(name, 4096)
            kargs = (scratch, np.uint32(iters))
            if name.startswith("peak_fq"):
                kargs = (points, scratch, np.uint32(iters))
            launch = lambda k=kernel, t=threads, b=block, a=kargs: gpu.launch(k, t, a, b)  # noqa: E731
            times, _ = gpu_bench._time(gp, launch, args.runs)
            ms = statistics.median(times)
            entry = _rate(gpu, info, what, name, kernel, per_sm, ms, threads * iters * per_iter)
            results.append(entry)
    peak_madd = next(r["ops_per_s"] for r in results if r["name"] == "fq_madd")
    batch_lanes = [int(x) for x in args.batch_lanes.split(",") if x]
    if batch_lanes:
        with gpu.scope():
            gathered = gpu_bench._tiled_case(gp, "g1", args.batch_points)[0]
            for lanes in batch_lanes:
                results.append(
                    _batch_affine(gp, info, module, gathered, lanes, args.runs, peak_madd)
                )
    logs = [int(x) for x in args.msm.split(",") if x]
    for log in logs:
        results.append(_msm_phases(gp, log, args.runs, peak_madd))
    for bits in [int(x) for x in args.tables.split(",") if x]:
        results.append(_msm_phases(gp, max(logs), args.runs, peak_madd, bits))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"environment": environment(info), "results": results}, indent=1)
    )
    print(f"{'operation':16s} {'regs':>4s} {'ms':>8s} {'G ops/s':>10s} {'/SM/clk':>8s}")
    for r in results:
        if "registers" in r:
            print(
                f"{r['name']:16s} {r['registers']:4d} {r['median_ms']:8.3f} "
                f"{r['ops_per_s'] / 1e9:10.2f} {r['per_sm_per_clock']:8.2f}"
            )
        else:
            steps = " ".join(f"{k} {v:.2f}" for k, v in r["steps_ms"].items())
            table = f" table {r['table_bits']} bits" if r["table_bits"] else ""
            print(
                f"{r['name']} 2^{r['log']}{table}: {steps}; "
                f"madd {r['madd_share_of_peak']:.0%} of peak"
            )
    return 0


def environment(info: dict[str, Any]) -> dict[str, Any]:
    """The results' environment from the adapter's description ``info``."""
    return {
        "gpu": info["gpu"],
        "multiprocessors": info["multiprocessors"],
        "clock_mhz": info["clock_mhz"],
        "library": info["library"],
        "python": platform.python_version(),
    }


def _batch_affine(
    gp: Any,
    info: dict[str, Any],
    module: Any,
    points: Any,
    lanes: int,
    runs: int,
    peak_madd: float,
) -> dict[str, Any]:
    """Affine additions in batches of ``lanes`` a thread sharing one inversion, over one wave
    of resident threads gathering from ``points`` (a power of two of them): the first step
    checked against the XYZZ addition, then timed."""
    import gpu_bench

    gpu = gp.gpu
    kernel = module.get_function("peak_batch_affine")
    block = 128
    threads = gpu.resident_threads(kernel, block)
    mask = np.uint32(points.shape[0] - 1)
    acc = gpu.zeros((threads * lanes * 12,), np.uint64)  # affine G1 points, 96 bytes each
    prefix = gpu.zeros((threads * lanes * 6,), np.uint64)
    errors = gpu.zeros((1,), np.uint64)
    init = module.get_function("batch_affine_init")
    gpu.launch(init, threads, (points, mask, acc, np.uint32(lanes)), block)
    gpu.launch(kernel, threads, (points, mask, acc, prefix, np.uint32(lanes), np.uint32(1)), block)
    check = module.get_function("batch_affine_check")
    gpu.launch(check, threads, (points, mask, acc, np.uint32(lanes), errors), block)
    wrong = int(errors.get()[0])
    if wrong:
        raise SystemExit(f"batch-affine at {lanes} lanes: {wrong} sums differ from XYZZ's")
    iters = max(1, 2048 // lanes)
    args = (points, mask, acc, prefix, np.uint32(lanes), np.uint32(iters))
    times, _ = gpu_bench._time(gp, lambda: gpu.launch(kernel, threads, args, block), runs)
    ms = statistics.median(times)
    per_sm = threads // block // info["multiprocessors"]
    entry = _rate(
        gpu,
        info,
        f"batch_affine/{lanes}",
        "peak_batch_affine",
        kernel,
        per_sm,
        ms,
        threads * iters * lanes,
    )
    entry.update(
        points=points.shape[0],
        vs_fq_madd=entry["ops_per_s"] / peak_madd,
        scratch_bytes=threads * lanes * 144,
        checked_sums=threads * lanes,
    )
    return entry


def _rate(
    gpu: Any,
    info: dict[str, Any],
    what: str,
    name: str,
    kernel: Any,
    blocks_per_sm: int,
    ms: float,
    ops: int,
) -> dict[str, Any]:
    """A peak kernel's entry: ``ops`` operations in ``ms`` milliseconds, a second and a clock
    an SM (at the clock ``info``, the adapter's description, reports)."""
    rate = ops / (ms / 1000.0)
    return {
        "name": what,
        "kernel": name,
        "registers": gpu.adapter.registers(kernel),
        "blocks_per_sm": blocks_per_sm,
        "median_ms": round(ms, 3),
        "ops_per_s": rate,
        "per_sm_per_clock": rate / info["multiprocessors"] / (info["clock_mhz"] * 1e6),
    }


def _msm_phases(
    gp: Any, log: int, runs: int, peak_madd: float, table_bits: int | None = None
) -> dict[str, Any]:
    """The G1 MSM of 2^log tiled device points, its steps timed (median of ``runs``); over a
    window table of ``table_bits`` when given (built once, not timed)."""
    import gpu_bench

    from cuzk_backend_gpu import msm

    with gp.gpu.scope():
        coords, scalars, _ = gpu_bench._tiled_case(gp, "g1", log)
        table = None
        if table_bits is not None:
            windows = msm.table_windows(table_bits)
            table, _ = gpu_bench.window_table(gp, msm.G1, coords, table_bits, windows)

        def run(timer: Any) -> Any:
            return gpu_bench._device_msm(gp, msm.G1, coords, scalars, timer=timer, table=table)

        run(None)  # warms up
        medians, entries = gpu_bench.timed_steps(run, runs)
    madds = entries / (medians["msm_buckets"] / 1000.0)
    return {
        "name": "msm_g1_steps",
        "log": log,
        "table_bits": table_bits,
        "entries": entries,
        "steps_ms": medians,
        "madd_per_s": madds,
        "madd_share_of_peak": madds / peak_madd,
    }


if __name__ == "__main__":
    sys.exit(main())
