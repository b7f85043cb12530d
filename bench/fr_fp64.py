"""The Fr Montgomery product on the FP64 pipe against the kernels' IMAD product, as JSON.

Round 45's experiment (bench/NOTES.md): is a second multiplier beside IMAD worth a field
representation of its own? ``bench/fp64/fr_fp64.cuh`` multiplies elements held as five 52-bit
limbs in doubles (three FP64 operations and two integer adds a limb product). This script

- checks it on the device: ``--pairs`` random products and every pair of the edges (0, 1,
  r − 1, and lazy inputs up to 2r − 1) against Python's integers, each below 2r;
- times chained products (four independent chains a thread, every SM full, as pipe_peak's
  fq_mul) by FP64, by fr_t's ``*`` and its ``mul_lazy`` (the NTT's product), and two chains of
  each kind in one thread (do the FP64 and integer pipes add up?), in products a second and a
  clock an SM.

    python bench/fr_fp64.py --out bench/results/2026-12-06-h200-round45-fr-fp64.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_backend_gpu import kernels
from cuzk_core.field.constants import FR_MODULUS

HERE = Path(__file__).resolve().parent
LIMBS, BITS = 5, 52
WAVES = 4
ITERS = 256
CHAINS = 4
FR_R = 1 << 256  # fr_t's Montgomery radix
FP64_R = 1 << (LIMBS * BITS)


def _limbs52(values: list[int]) -> np.ndarray:
    return np.array(
        [[(v >> (BITS * i)) & ((1 << BITS) - 1) for i in range(LIMBS)] for v in values],
        dtype=np.uint64,
    )


def _words32(values: list[int]) -> np.ndarray:
    data = b"".join(v.to_bytes(32, "little") for v in values)
    return np.frombuffer(data, dtype="<u4").reshape(-1, 8).copy()


def _check(gpu: Any, module: Any, count: int, rng: random.Random) -> dict[str, Any]:
    r = FR_MODULUS
    edges = [0, 1, 2, r - 1, r, r + 1, 2 * r - 1, (1 << 255) % r, (1 << 52) - 1, 1 << 52]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.randrange(2 * r), rng.randrange(2 * r)) for _ in range(count)]
    a = gpu.to_device(_limbs52([p[0] for p in pairs]))
    b = gpu.to_device(_limbs52([p[1] for p in pairs]))
    out = gpu.empty((len(pairs), LIMBS), np.uint64)
    n = len(pairs)
    gpu.launch(module.get_function("fr_fp64_products"), n, (a, b, out, np.uint32(n)), block=128)
    got = out.get()
    r_inv = pow(FP64_R, -1, r)
    wrong = 0
    for (x, y), row in zip(pairs, got, strict=True):
        t = sum(int(w) << (BITS * i) for i, w in enumerate(row))
        if any(int(w) >> BITS for w in row) or t >= 2 * r or t % r != x * y * r_inv % r:
            wrong += 1
    return {"products": n, "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    """Check the FP64 product, time the four kernels, write the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=1 << 16, help="random products checked")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--rounds", type=int, default=2, help="times each kernel, alternating")
    args = parser.parse_args(argv)
    import gpu_bench

    gp = gpu_bench.gpu_plugin("cupy")
    gpu = gp.gpu
    info = gpu.adapter.describe()
    sms = info["multiprocessors"]
    source = (
        kernels.assemble("ff/bls12_381.cuh")
        + (HERE / "fp64" / "fr_fp64.cuh").read_text()
        + (HERE / "fp64" / "fr_fp64_kernels.cu").read_text()
    )
    module = gpu.adapter.compile(source, kernels.COMPILE_OPTIONS)
    rng = random.Random(args.seed)
    elements = [rng.randrange(FR_MODULUS) for _ in range(1024)]
    with gpu.scope():
        check = _check(gpu, module, args.pairs, rng)
        in52 = gpu.to_device(_limbs52([e * FP64_R % FR_MODULUS for e in elements]))
        in32 = gpu.to_device(_words32([e * FR_R % FR_MODULUS for e in elements]))
        sink = gpu.zeros((1 << 22,), np.uint64)
        cases = {
            "fp64": ("peak_fr_fp64", (in52, sink)),
            "imad": ("peak_fr_mul", (in32, sink)),
            "imad_lazy": ("peak_fr_mul_lazy", (in32, sink)),
            "fp64+imad_lazy": ("peak_fr_mixed", (in52, in32, sink)),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        launches = {}
        for name, (kernel_name, _) in cases.items():
            kernel = module.get_function(kernel_name)
            per_sm = gpu.resident_threads(kernel, 128) // 128 // sms
            threads = per_sm * sms * WAVES * 128
            launches[name] = (kernel, threads, per_sm)
        for _ in range(args.rounds):
            for name, (_, kargs) in cases.items():
                kernel, threads, _ = launches[name]
                launch = lambda k=kernel, t=threads, a=kargs: gpu.launch(  # noqa: E731
                    k, t, (*a, np.uint32(ITERS)), block=128
                )
                times[name] += gpu_bench._time(gp, launch, args.runs)[0]
        results = []
        for name, (kernel_name, _) in cases.items():
            kernel, threads, per_sm = launches[name]
            ms = statistics.median(times[name])
            rate = threads * ITERS * CHAINS / (ms / 1000.0)
            results.append(
                {
                    "name": name,
                    "kernel": kernel_name,
                    "registers": gpu.adapter.registers(kernel),
                    "blocks_per_sm": per_sm,
                    "median_ms": round(ms, 3),
                    "times_ms": [round(t, 3) for t in times[name]],
                    "products_per_s": rate,
                    "per_sm_per_clock": rate / sms / (info["clock_mhz"] * 1e6),
                }
            )
    env = {
        "gpu": info["gpu"],
        "multiprocessors": sms,
        "clock_mhz": info["clock_mhz"],
        "library": info["library"],
        "python": platform.python_version(),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"environment": env, "check": check, "results": results}, indent=1)
    )
    print(f"check: {check['products']} products, {check['wrong']} wrong")
    base = next(r["products_per_s"] for r in results if r["name"] == "imad_lazy")
    print(f"{'product':16s} {'regs':>4s} {'ms':>8s} {'G/s':>8s} {'/SM/clk':>8s} {'vs lazy':>8s}")
    for r in results:
        print(
            f"{r['name']:16s} {r['registers']:4d} {r['median_ms']:8.3f} "
            f"{r['products_per_s'] / 1e9:8.2f} {r['per_sm_per_clock']:8.4f} "
            f"{r['products_per_s'] / base:8.2f}"
        )
    return 1 if check["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
