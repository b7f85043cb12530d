"""Montgomery products of Fr and Fq on the FP64 pipe against the kernels' IMAD products, as JSON.

Round 45's experiment (bench/NOTES.md): is a second multiplier beside IMAD worth a field
representation of its own? ``bench/fp64/fp64_mont.cuh`` multiplies elements held as 52-bit
limbs in doubles (Fr 5, Fq 8; three FP64 operations and two integer adds a limb product).
This script

- checks it on the device: ``--pairs`` random products a field and every pair of the edges
  (0, 1, p − 1, and lazy inputs up to 2p − 1) against Python's integers, each below 2p;
- times chained products (four independent chains a thread, every SM full, as pipe_peak's
  fq_mul): by FP64, by fr_t/fq_t's ``*`` (and Fr's ``mul_lazy``, the NTT's product), and two
  chains of each kind in one thread (do the FP64 and integer pipes add up?), alternating
  ``--rounds`` times, in products a second and a clock an SM.

    python bench/fp64_products.py --out bench/results/2026-12-06-h200-round45-fp64-products.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_backend_gpu import kernels
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS

HERE = Path(__file__).resolve().parent
BITS = 52
FIELDS = {"fr": (FR_MODULUS, 5, 8), "fq": (FQ_MODULUS, 8, 12)}
"""modulus, 52-bit limbs (FP64 form), 32-bit words (fr_t / fq_t)"""
WAVES = 4
ITERS = 256
CHAINS = 4
CASES = {
    "fr_fp64": ("fr", "peak_fr_fp64", "52"),
    "fr_imad": ("fr", "peak_fr_mul", "32"),
    "fr_imad_lazy": ("fr", "peak_fr_mul_lazy", "32"),
    "fr_fp64+imad_lazy": ("fr", "peak_fr_mixed", "52,32"),
    "fq_fp64": ("fq", "peak_fq_fp64", "52"),
    "fq_imad": ("fq", "peak_fq_mul", "32"),
    "fq_fp64+imad": ("fq", "peak_fq_mixed", "52,32"),
}
"""name: field, kernel, its inputs (52: limbs for FP64, 32: the kernels' Montgomery words)"""
BASELINE = {"fr": "fr_imad_lazy", "fq": "fq_imad"}


def _limbs52(values: list[int], n: int) -> np.ndarray:
    return np.array(
        [[(v >> (BITS * i)) & ((1 << BITS) - 1) for i in range(n)] for v in values],
        dtype=np.uint64,
    )


def _words32(values: list[int], words: int) -> np.ndarray:
    data = b"".join(v.to_bytes(4 * words, "little") for v in values)
    return np.frombuffer(data, dtype="<u4").reshape(-1, words).copy()


def _check(gpu: Any, module: Any, field: str, count: int, rng: random.Random) -> dict[str, int]:
    p, n, _ = FIELDS[field]
    edges = [0, 1, 2, p - 1, p, p + 1, 2 * p - 1, 1 << (p.bit_length() - 1), (1 << 52) - 1]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.randrange(2 * p), rng.randrange(2 * p)) for _ in range(count)]
    a = gpu.to_device(_limbs52([x for x, _ in pairs], n))
    b = gpu.to_device(_limbs52([y for _, y in pairs], n))
    out = gpu.empty((len(pairs), n), np.uint64)
    kernel = module.get_function(f"{field}_fp64_products")
    gpu.launch(kernel, len(pairs), (a, b, out, np.uint32(len(pairs))), block=128)
    r_inv = pow(1 << (BITS * n), -1, p)
    wrong = 0
    for (x, y), row in zip(pairs, out.get(), strict=True):
        t = sum(int(w) << (BITS * i) for i, w in enumerate(row))
        if any(int(w) >> BITS for w in row) or t >= 2 * p or t % p != x * y * r_inv % p:
            wrong += 1
    return {"products": len(pairs), "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    """Check the FP64 products, time every case, write the rates."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=1 << 15, help="random products checked")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the cases, alternating")
    args = parser.parse_args(argv)
    import gpu_bench
    import pipe_peak

    gp = gpu_bench.gpu_plugin("cupy")
    gpu = gp.gpu
    info = gpu.adapter.describe()
    sms = info["multiprocessors"]
    source = (
        kernels.assemble("ff/bls12_381.cuh")
        + (HERE / "fp64" / "fp64_mont.cuh").read_text()
        + (HERE / "fp64" / "fp64_kernels.cu").read_text()
    )
    module = gpu.adapter.compile(source, kernels.COMPILE_OPTIONS)
    rng = random.Random(args.seed)
    with gpu.scope():
        checks = {field: _check(gpu, module, field, args.pairs, rng) for field in FIELDS}
        inputs = {}
        for field, (p, n, words) in FIELDS.items():
            values = [rng.randrange(p) for _ in range(1024)]
            fp64_form = [v * 2 ** (BITS * n) % p for v in values]
            imad_form = [v * 2 ** (32 * words) % p for v in values]
            inputs[field, "52"] = gpu.to_device(_limbs52(fp64_form, n))
            inputs[field, "32"] = gpu.to_device(_words32(imad_form, words))
        sink = gpu.zeros((1 << 22,), np.uint64)
        launches = {}
        for name, (field, kernel_name, kinds) in CASES.items():
            kernel = module.get_function(kernel_name)
            per_sm = gpu.resident_threads(kernel, 128) // 128 // sms
            kargs = (*(inputs[field, kind] for kind in kinds.split(",")), sink)
            launches[name] = (kernel, per_sm * sms * WAVES * 128, per_sm, kargs)
        times: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(args.rounds):
            for name, (kernel, threads, _, kargs) in launches.items():
                launch = lambda k=kernel, t=threads, a=kargs: gpu.launch(  # noqa: E731
                    k, t, (*a, np.uint32(ITERS)), block=128
                )
                times[name] += gpu_bench._time(gp, launch, args.runs)[0]
    results = []
    for name, (kernel, threads, per_sm, _) in launches.items():
        ms = statistics.median(times[name])
        rate = threads * ITERS * CHAINS / (ms / 1000.0)
        results.append(
            {
                "name": name,
                "kernel": CASES[name][1],
                "registers": gpu.adapter.registers(kernel),
                "blocks_per_sm": per_sm,
                "median_ms": round(ms, 3),
                "times_ms": [round(t, 3) for t in times[name]],
                "products_per_s": rate,
                "per_sm_per_clock": rate / sms / (info["clock_mhz"] * 1e6),
            }
        )
    env = pipe_peak.environment(info)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"environment": env, "checks": checks, "results": results}, indent=1)
    )
    for field, check in checks.items():
        print(f"check {field}: {check['products']} products, {check['wrong']} wrong")
    rates = {r["name"]: r["products_per_s"] for r in results}
    print(f"{'product':18s} {'regs':>4s} {'ms':>8s} {'G/s':>8s} {'/SM/clk':>8s} {'vs IMAD':>8s}")
    for r in results:
        base = rates[BASELINE[CASES[r["name"]][0]]]
        print(
            f"{r['name']:18s} {r['registers']:4d} {r['median_ms']:8.3f} "
            f"{r['products_per_s'] / 1e9:8.2f} {r['per_sm_per_clock']:8.4f} "
            f"{r['products_per_s'] / base:8.2f}"
        )
    return 1 if any(c["wrong"] for c in checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
