"""GPU benchmarks of a GPU backend (cupy, pycuda): MSM (G1, G2), NTT, whole proofs, as JSON.

Timing: CUDA events around each call, median of ``--runs`` after one warm-up run. "device"
figures start with bases and scalars in device memory; "host" figures include copying both
from pageable or page-locked host memory. Bases are a set of distinct random points tiled to
the size (generating 2^24 distinct points in Python would take hours; the arithmetic per
bucket addition is the same), checked once per size against the MSM over the distinct points
with the scalars folded onto them.

    python bench/gpu_bench.py --out bench/results/2026-12-01-h200-cupy.json [--backend pycuda]

Everything runs through the shared GPU driver (cuzk_backend_gpu) of the chosen backend's
plugin, inside its device scope; bench/gpu_compare.py times two backends side by side.
"""

from __future__ import annotations

import argparse
import functools
import io
import itertools
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_backend_gpu import msm, msm_sort, ntt
from cuzk_backend_gpu.driver import DeviceArray, EventClock
from cuzk_backend_gpu.plugin import GpuPlugin
from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.inputs import random_bases, random_scalar_limbs
from cuzk_core.curve.g1 import g1_eq
from cuzk_core.curve.g2 import g2_eq
from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.host_work import drained
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer

REPO = Path(__file__).resolve().parents[1]
DISTINCT = {"g1": 1 << 14, "g2": 1 << 12}
BATCH_LANES = 0
"""The device MSMs' batch-affine lanes (the profile's msm.batch_lanes_*), set by --batch-lanes."""


@functools.cache
def _points(group: str, count: int) -> G1Affines | G2Affines:
    """``count`` distinct random subgroup points (made once per process)."""
    return random_bases(group, count, seed=1, distinct=count)


def _upload(gp: GpuPlugin, points: G1Affines | G2Affines) -> Any:
    """Bases on the device in Montgomery form, the upload complete."""
    bases = gp.memory.upload_points(load_profile("h200"), points, resident=False)
    gp.memory.wait_ready(bases)
    return bases


def gpu_plugin(name: str) -> GpuPlugin:
    """The registered plugin of GPU backend ``name``, checked to run here."""
    plugin = load_plugins().plugin(name)
    if not isinstance(plugin, GpuPlugin):
        raise SystemExit(f"{name!r} is not a GPU backend of the shared driver")
    plugin.gpu.require()
    return plugin


def _time(gp: GpuPlugin, work: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    """CUDA-event milliseconds of ``runs`` calls after one warm-up; and the last result."""
    clock = EventClock(gp.gpu)
    result = work()
    times = []
    for _ in range(runs):
        result, ms = clock.time(work)
        times.append(ms)
    return times, result


def timed_steps(
    run: Callable[[Timer], Any], runs: int, check: Callable[[Any], None] = lambda _: None
) -> tuple[dict[str, float], int]:
    """Median milliseconds of each ``msm_*`` step over ``runs`` calls of ``run(timer)`` at
    CUZK_TIMING=2 (GPU time), each result handed to ``check``; and the bucket entries the
    last call's spans counted."""
    steps: dict[str, list[float]] = {}
    entries = 0
    for _ in range(runs):
        timer = Timer(2, stream=io.StringIO())
        check(run(timer))
        for span in timer.spans:
            if span.name.startswith("msm_"):
                steps.setdefault(span.name, []).append(span.ms)
            entries = span.attrs.get("entries", entries)
    return {k: statistics.median(v) for k, v in steps.items()}, entries


def tiled(gp: GpuPlugin, small: DeviceArray, n: int) -> DeviceArray:
    """The first ``n`` rows of ``small`` repeated, on the device."""
    out = gp.gpu.empty((n, *small.shape[1:]), small.dtype)
    for start in range(0, n, len(small)):
        stop = min(n, start + len(small))
        gp.gpu.copy_into(out[start:stop], small[: stop - start])
    return out


def _record(results: list, name: str, size: int, times: list[float], **extra: Any) -> None:
    entry = {"name": name, "size": size, "median_ms": round(statistics.median(times), 3)}
    entry.update(runs_ms=[round(t, 3) for t in times], **extra)
    results.append(entry)
    print(f"{name:28s} {_size(size):>7s} {entry['median_ms']:10.3f} ms", flush=True)


def _size(n: int) -> str:
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def _device_msm(
    gp: GpuPlugin,
    ops: msm.Group,
    coords: DeviceArray,
    scalars: DeviceArray,
    window_bits: int | None = None,
    timer: Timer | None = None,
    table: msm.WindowTable | None = None,
    wait: Callable[[], None] = lambda: None,
) -> Any:
    """Σ scalars·coords with both on the device (the MSM of the "device" figures), over the
    window ``table`` of coords when given; ``wait`` is called after each pass's sort."""
    slices = lambda a, b: msm.BaseChunk(coords[a:b], None, wait)  # noqa: E731
    timer = timer if timer is not None else Timer(0)
    passes = msm.device_sums(
        gp.gpu,
        ops,
        slices,
        False,
        scalars,
        window_bits,
        True,
        False,
        timer,
        None,
        table,
        batch_lanes=BATCH_LANES,
    )
    return drained(msm.host_sum(ops, passes, timer))


def _tiled_case(gp: GpuPlugin, group: str, log: int) -> tuple[DeviceArray, DeviceArray, np.ndarray]:
    """2^log tiled points and random scalars on the device, and the host scalars."""
    small = _upload(gp, _points(group, DISTINCT[group]))
    coords = tiled(gp, small.coords, 1 << log)
    scalars_host = random_scalar_limbs(1 << log, log)
    return coords, gp.gpu.to_device(scalars_host).view(np.uint32), scalars_host


def msm_case(gp: GpuPlugin, group: str, log: int) -> tuple[Callable[[], Any], np.ndarray]:
    """A device-resident MSM of 2^log tiled points with random scalars, and the host scalars."""
    coords, scalars, scalars_host = _tiled_case(gp, group, log)
    return lambda: _device_msm(gp, msm.GROUPS[group], coords, scalars), scalars_host


def window_table(
    gp: GpuPlugin, ops: msm.Group, coords: DeviceArray, c: int, windows: int
) -> tuple[msm.WindowTable, float]:
    """A c-bit window table of ``windows`` windows of the device bases ``coords``, and its
    build's milliseconds."""
    n = coords.shape[0]
    rows = gp.gpu.empty((windows * n, coords.shape[1]), coords.dtype)
    gp.gpu.copy_into(rows[:n], coords)
    build = lambda: msm.build_window_table(gp.gpu, ops, rows, n, c, windows)  # noqa: E731
    _, build_ms = EventClock(gp.gpu).time(build)
    return msm.WindowTable(rows, c, windows), build_ms


def _table_msm(
    gp: GpuPlugin,
    ops: msm.Group,
    coords: DeviceArray,
    scalars: DeviceArray,
    c: int,
    windows: int,
    runs: int,
) -> tuple[list[float], Any, float, int]:
    """The MSM over a c-bit window table of ``windows`` windows of ``coords``: its times and
    sum, the table's build milliseconds and bytes (freed on return)."""
    table, build_ms = window_table(gp, ops, coords, c, windows)
    run = lambda: _device_msm(gp, ops, coords, scalars, table=table)  # noqa: E731
    times, total = _time(gp, run, runs)
    return times, total, build_ms, table.rows.nbytes


def bench_tables(
    gp: GpuPlugin,
    group: str,
    logs: list[int],
    bits: list[int],
    windows: list[int],
    runs: int,
    results: list,
) -> None:
    """The MSM over a window table of each width (``msm.table_bits``) and each count of its
    windows (``msm.table_windows``; 0: all), checked against the plain MSM's sum; with the
    table's one-time build and its device bytes."""
    ops = msm.GROUPS[group]
    same = g1_eq if group == "g1" else g2_eq
    for log in logs:
        n = 1 << log
        coords, scalars, _ = _tiled_case(gp, group, log)
        want = _device_msm(gp, ops, coords, scalars)
        for c, asked in itertools.product(bits, windows):
            k = min(asked, msm.table_windows(c)) if asked else msm.table_windows(c)
            name = f"msm_{group}_device_table{c}" + (f"_w{k}" if asked else "")
            if k * coords.nbytes + (8 << 30) > gp.gpu.free_bytes():
                print(f"{name} 2^{log}: no room, skipped", flush=True)
                continue
            times, total, build_ms, nbytes = _table_msm(gp, ops, coords, scalars, c, k, runs)
            if not same(total, want):
                raise AssertionError(f"MSM {group} 2^{log} over {name} disagrees")
            extra = {"table_bits": c, "table_windows": k, "table_bytes": nbytes}
            _record(results, name, n, times, **extra, build_ms=round(build_ms, 1))
        del coords, scalars


def bench_msm(
    gp: GpuPlugin, group: str, logs: list[int], runs: int, results: list, host_logs: list[int]
) -> None:
    """MSM with data on the device (and from host memory for ``host_logs``)."""
    ops = msm.GROUPS[group]
    distinct = _points(group, DISTINCT[group])
    small = _upload(gp, distinct)
    for log in logs:
        n = 1 << log
        run, scalars_host = msm_case(gp, group, log)
        times, total = _time(gp, run, runs)
        c = msm.auto_window_bits(ops, n, True)
        _record(results, f"msm_{group}_device", n, times, window_bits=c)
        if log <= 20:
            folded = gp.gpu.to_device(_fold(scalars_host, len(distinct))).view(np.uint32)
            check = _device_msm(gp, ops, small.coords, folded)
            if not (g1_eq if group == "g1" else g2_eq)(total, check):
                raise AssertionError(f"MSM {group} 2^{log} disagrees with its folded form")
        if log in host_logs:
            reps = -(-n // len(distinct))
            _bench_from_host(gp, group, distinct, reps, n, scalars_host, runs, results, total)
        del run


def _fold(scalars: np.ndarray, distinct: int) -> np.ndarray:
    """Σ of the scalars of each distinct base (base i is used by scalars i, i + d, …) mod r."""
    ints = limbs_to_ints(scalars)
    sums = [0] * distinct
    for i, k in enumerate(ints):
        sums[i % distinct] += k
    return ints_to_limbs([s % FR_MODULUS for s in sums])


HOST_PIECES = "1,2,4"
"""The streamed MSM's ``msm.upload_pieces`` variants, set by --host-pieces."""
HOST_WINDOW_BITS: int | None = None
"""The streamed MSM's window bits (None: by size, as a proof's), set by --host-window-bits."""


def _bench_from_host(gp, group, distinct, reps, n, scalars_host, runs, results, want) -> None:
    """The MSM with bases and scalars copied from host memory, through the streamed path a key
    kept on the host takes (``msm.msm`` uploading the bases piece by piece): pageable with the
    driver's copies (pinning ``none``), pageable through the staging pool (``pool``), and
    page-locked; the last two for each of HOST_PIECES, alternated run by run. Each variant's
    warm-up sum must equal ``want``, the sum with the data on the device."""
    batch = type(distinct)
    coords = np.tile(distinct.coords, (reps,) + (1,) * (distinct.coords.ndim - 1))[:n]
    points = batch(coords, np.zeros(n, dtype=bool))
    ops = msm.GROUPS[group]
    cases = (
        ("pageable", "none", False),
        ("pageable_pool", "pool", False),
        ("pinned", "pool", True),
    )
    for label, pinning, page_locked in cases:
        profile = load_profile("h200", {"memory.pinning": pinning})
        if page_locked:
            pinned = gp.memory.alloc_host(profile, coords.shape, "uint64")
            pinned[...] = coords
            points = batch(pinned, np.zeros(n, dtype=bool))
            scal = gp.memory.alloc_host(profile, scalars_host.shape, "uint64")
            scal[...] = scalars_host
        else:
            scal = scalars_host

        def streamed(start, stop, points=points, profile=profile):
            up = gp.memory.upload_points(profile, points[start:stop], resident=False)
            return msm.BaseChunk(up.coords, up.skip, functools.partial(gp.memory.wait_ready, up))

        def run(piece_count, scal=scal, profile=profile, streamed=streamed):
            scalars = gp.memory.to_device(profile, scal).view(np.uint32)
            timer = Timer(0)
            passes = msm.device_sums(
                gp.gpu,
                ops,
                streamed,
                True,
                scalars,
                HOST_WINDOW_BITS,
                True,
                False,
                timer,
                upload_pieces=piece_count,
                batch_lanes=BATCH_LANES,
            )
            return drained(msm.host_sum(ops, passes, timer))

        variants = [int(x) for x in HOST_PIECES.split(",")] if pinning != "none" else [1]
        times: dict[int, list[float]] = {count: [] for count in variants}
        clock = EventClock(gp.gpu)
        for count in variants:  # warm-up
            if not (g1_eq if group == "g1" else g2_eq)(run(count), want):
                raise AssertionError(f"MSM {group} from host ({label}, {count} pieces) disagrees")
        for _ in range(runs):
            for count in variants:
                times[count].append(clock.time(functools.partial(run, count))[1])
        for count in variants:
            name = f"msm_{group}_from_host_{label}"
            if len(variants) > 1:
                name += f"_p{count}"
            _record(results, name, n, times[count], upload_pieces=count)


def bench_msm_windows(
    gp: GpuPlugin, group: str, logs: list[int], windows: list[int], runs: int, results: list
) -> None:
    """MSM on the device per window size, with the time of each step (sort, bucket sums,
    reduction on the device, window combination on the host) from CUZK_TIMING=2 spans."""
    distinct = _points(group, DISTINCT[group])
    small = _upload(gp, distinct)
    for log in logs:
        n = 1 << log if log < 64 else log  # a size above 64 is a count of points
        coords = tiled(gp, small.coords, n)
        scalars = gp.gpu.to_device(random_scalar_limbs(n, log)).view(np.uint32)
        for c in windows:
            timer = Timer(level=2, stream=io.StringIO())

            def run(c=c, timer=timer, coords=coords, scalars=scalars):
                return _device_msm(gp, msm.GROUPS[group], coords, scalars, c, timer)

            times, _ = _time(gp, run, runs)
            steps: dict[str, list[float]] = {}
            for span in timer.spans[-(runs * 5) :]:
                if span.name.startswith("msm_"):
                    steps.setdefault(span.name, []).append(span.ms)
            medians = {k: round(statistics.median(v), 3) for k, v in steps.items()}
            name = f"msm_{group}_device_c{c}"
            _record(results, name, n, times, window_bits=c, steps_ms=medians)
        del coords, scalars


def bench_sort_beside(gp: GpuPlugin, group: str, logs: list[int], runs: int, results: list) -> None:
    """An MSM with the counting sort of other scalars run beside it by a second host thread
    (its own stream under CuPy; PyCUDA's null stream orders it after), against each alone:
    how much of a later MSM's sort one MSM's bucket sums could hide. ``beside_buckets`` starts
    the sort when the MSM's own sort has ended, ``beside_start`` with the MSM. Wall-clock
    milliseconds (two streams), alternated run by run; the sums are checked against the MSM
    alone, the sort's total against the sort alone."""
    small = _upload(gp, _points(group, DISTINCT[group]))
    with ThreadPoolExecutor(max_workers=1) as worker:
        for log in logs:
            n = 1 << log
            mine = gp.gpu.to_device(random_scalar_limbs(n, log)).view(np.uint32)
            other = gp.gpu.to_device(random_scalar_limbs(n, log + 1)).view(np.uint32)
            case = (tiled(gp, small.coords, n), mine, other)
            _sort_beside_size(gp, group, case, worker, runs, results)
            del case, mine, other


def _sort_beside_size(
    gp: GpuPlugin,
    group: str,
    case: tuple[DeviceArray, DeviceArray, DeviceArray],
    worker: ThreadPoolExecutor,
    runs: int,
    results: list,
) -> None:
    """bench_sort_beside at one size: ``case`` is the bases, the MSM's scalars and the other
    scalars, on the device."""
    ops, (coords, mine, other) = msm.GROUPS[group], case
    same = g1_eq if group == "g1" else g2_eq
    n = coords.shape[0]
    c = msm.auto_window_bits(ops, n, True)

    def sort_other() -> int:
        with gp.gpu.scope():
            sorted_ = msm_sort.counting_sort(gp.gpu, other, None, c, True, 0)
            gp.gpu.synchronize()
            return 0 if sorted_ is None else sorted_.total

    def run(mode: str) -> tuple[float, Any, int]:
        pending: list[Future] = []
        begin = time.perf_counter()
        if mode == "sort":
            total = worker.submit(sort_other).result()
            return (time.perf_counter() - begin) * 1e3, None, total
        if mode == "beside_start":
            pending.append(worker.submit(sort_other))

        def wait() -> None:
            if mode == "beside_buckets":
                pending.append(worker.submit(sort_other))

        total_msm = _device_msm(gp, ops, coords, mine, c, wait=wait)
        total = pending[0].result() if pending else 0
        return (time.perf_counter() - begin) * 1e3, total_msm, total

    modes = ("msm", "sort", "beside_buckets", "beside_start")
    for mode in modes:
        run(mode)  # warm-up
    want_sum, want_total = run("msm")[1], run("sort")[2]
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(runs):
        for mode in modes:
            ms, got_sum, got_total = run(mode)
            times[mode].append(ms)
            if got_sum is not None and not same(got_sum, want_sum):
                raise AssertionError(f"MSM {group} {_size(n)} ({mode}) disagrees with it alone")
            if mode != "msm" and got_total != want_total:
                raise AssertionError(f"the sort beside MSM {group} {_size(n)} ({mode}) differs")
    medians = {m: statistics.median(t) for m, t in times.items()}
    for mode in modes:
        extra: dict[str, Any] = {"window_bits": c, "sort_block": msm_sort.SORT_BLOCK}
        if mode.startswith("beside"):
            hidden = medians["msm"] + medians["sort"] - medians[mode]
            extra["sort_hidden"] = round(hidden / medians["sort"], 3)
        _record(results, f"sort_beside_{group}_{mode}", n, times[mode], **extra)


def ntt_cases(gp: GpuPlugin, log: int) -> dict[str, Callable[[], Any]]:
    """Forward, coset and inverse coset NTTs of 2^log random scalars on the device."""
    domain = EvaluationDomain(log, 7)
    values = gp.gpu.to_device(random_scalar_limbs(1 << log, log))
    w = domain.omega
    return {
        "ntt_device": lambda: ntt.forward(gp.gpu, values, log, w),
        "coset_ntt_device": lambda: ntt.forward(gp.gpu, values, log, w, 7),
        "coset_intt_device": lambda: ntt.inverse(gp.gpu, values, log, w, 7),
    }


def bench_ntt(gp: GpuPlugin, logs: list[int], runs: int, results: list) -> None:
    """Forward NTT (natural in and out) and coset NTT, data on the device."""
    for log in logs:
        for name, work in ntt_cases(gp, log).items():
            times, _ = _time(gp, work, runs)
            _record(results, name, 1 << log, times)


def prove_inputs(spec: str) -> tuple[PorepLite, Any]:
    """The circuit and proving key of ``"K,D"`` (set up now) or of a params folder."""
    folder = Path(spec)
    if folder.is_dir():
        circuit_spec = params_dir.read_circuit_spec(folder)
        circuit = PorepLite(circuit_spec["challenges"], circuit_spec["depth"], circuit_spec["seed"])
        return circuit, files.read_params(folder / params_dir.PARAMS_FILE)
    challenges, depth = (int(x) for x in spec.split(","))
    circuit = PorepLite(challenges, depth)
    cs_backend = load_plugins().backend(load_profile("cpu"), Timer(0))
    return circuit, generate_parameters(NativeCircuit(circuit).assign(cs_backend).matrices, seed=1)


def bench_prove(spec: str, backends: list[str], runs: int, results: list) -> None:
    """Whole proofs of porep-lite (``"K,D"`` or a params folder), phases from the prover."""
    circuit, key = prove_inputs(spec)
    proofs = {}
    for name in backends:
        gpu = name != "cpu"
        profile = load_profile("h200", {"backend": name}) if gpu else load_profile("cpu")
        totals = []
        phases: dict[str, list[float]] = {}
        for run in range(runs + (1 if gpu else 0)):
            timer = Timer(level=0)
            backend = load_plugins().backend(profile, timer)
            start = time.perf_counter()
            result = prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=1)
            elapsed = (time.perf_counter() - start) * 1000
            proofs[name] = result.proof.to_bytes()
            if gpu and run == 0:
                continue  # warm-up: kernels, twiddles, resident bases
            totals.append(elapsed)
            for phase, ms in timer.phase_totals().items():
                phases.setdefault(phase, []).append(ms)
        size = len(key.h) + 1
        _record(
            results,
            f"prove_porep_lite_{name}",
            size,
            totals,
            circuit=circuit.knobs(),
            phases_ms={p: round(statistics.median(v), 3) for p, v in phases.items()},
        )
    if len(proofs) > 1:
        assert len(set(proofs.values())) == 1, "backends disagree on the proof bytes"


def _nvidia_driver() -> str:
    """The NVIDIA driver's version as nvidia-smi reports it ("unknown" without nvidia-smi)."""
    query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
    try:
        out = subprocess.run(query, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.splitlines()[0] if out else "unknown"


def environment(plugins: list[GpuPlugin], commit: str = "") -> dict[str, Any]:
    """GPU, driver, libraries, compilers, commit and host beside every figure."""
    commit = (
        commit
        or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
    )
    first = plugins[0].gpu.adapter.describe()
    env = {key: first[key] for key in ("gpu", "sm", "multiprocessors", "driver_cuda")}
    env["nvidia_driver"] = _nvidia_driver()
    for gp in plugins:
        info = gp.gpu.adapter.describe()
        env[gp.gpu.name] = {"library": info["library"], "compiler": info["compiler"]}
        with gp.gpu.scope():
            env[gp.gpu.name]["compile_ms"] = gp.gpu.warm_up()
    env.update(
        python=platform.python_version(),
        commit=commit or "unknown",
        profile="h200",
        profile_digest=load_profile("h200").digest(),
    )
    return env


def apply_defines(gp: Any, defines: list[str]) -> None:
    """Kernel macros ``[FILE:]K=V`` (FILE defaults to msm/msm.cu) for the modules ``gp`` builds."""
    for define in defines:
        target, _, setting = define.rpartition(":")
        key, value = setting.split("=")
        gp.gpu.defines.setdefault(target or "msm/msm.cu", {})[key] = int(value)


def main(argv: list[str] | None = None) -> int:
    """Run the selected benchmarks and write one JSON file."""
    global BATCH_LANES, HOST_PIECES, HOST_WINDOW_BITS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--backend", default="cupy", help="the GPU backend measured")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--msm-g1", default="16,20,22,24")
    parser.add_argument("--msm-g2", default="16,20")
    parser.add_argument("--host", default="20,24", help="G1 sizes also timed from host memory")
    parser.add_argument(
        "--host-pieces",
        default=HOST_PIECES,
        help="msm.upload_pieces variants timed from host, comma-separated",
    )
    parser.add_argument(
        "--host-window-bits", type=int, help="window bits of the MSMs from host (default: by size)"
    )
    parser.add_argument("--ntt", default="20,24,26")
    parser.add_argument(
        "--sweep", default="", help="G1 sizes to time per window size (log2, or a count above 64)"
    )
    parser.add_argument("--sweep-windows", default="13,14,15,16,17,18,19,20,21")
    parser.add_argument("--sweep-g2", default="", help="G2 sizes, as --sweep's")
    parser.add_argument("--tables", default="", help="G1 sizes to time over window tables")
    parser.add_argument("--tables-g2", default="", help="G2 sizes to time over window tables")
    parser.add_argument("--table-bits", default="16,18,20,22", help="the tables' window bits")
    parser.add_argument(
        "--table-windows",
        default="0",
        help="windows each table holds (msm.table_windows; 0: every window), a run each",
    )
    parser.add_argument("--commit", default="", help="the commit measured (else git's HEAD)")
    parser.add_argument(
        "--define", action="append", default=[], help="kernel macro, [FILE:]K=V (FILE msm/msm.cu)"
    )
    parser.add_argument(
        "--batch-lanes",
        type=int,
        default=0,
        help="msm.batch_lanes_g1/g2 of the device MSMs: the batch-affine first pass's lanes",
    )
    parser.add_argument(
        "--batch-min-run",
        type=int,
        default=msm.BATCH_MIN_RUN,
        help="msm.BATCH_MIN_RUN: fewest entries a batch-affine lane's run is cut to",
    )
    parser.add_argument(
        "--batch-min-lanes",
        default=",".join(str(msm.BATCH_MIN_LANES[g]) for g in ("g1", "g2")),
        help="msm.BATCH_MIN_LANES for G1,G2: fewest lanes for which the batch pass is taken",
    )
    parser.add_argument("--chunk-threads", type=int, help="msm.CHUNK_THREADS for this process")
    parser.add_argument(
        "--min-upload-piece", type=int, help="msm.MIN_UPLOAD_PIECE (points) for this process"
    )
    parser.add_argument(
        "--sort-beside", default="", help="G1 sizes: an MSM with another sort beside it"
    )
    parser.add_argument("--sort-beside-g2", default="", help="G2 sizes, as --sort-beside's")
    parser.add_argument(
        "--sort-block", type=int, help="msm_sort.SORT_BLOCK: the sort kernels' block size"
    )
    parser.add_argument("--prove", action="append", default=[], help="K,D or a params folder")
    parser.add_argument("--prove-backends", default="cpu,cupy")
    args = parser.parse_args(argv)
    logs = lambda text: [int(x) for x in text.split(",") if x]  # noqa: E731
    gp = gpu_plugin(args.backend)
    apply_defines(gp, args.define)
    BATCH_LANES, HOST_PIECES = args.batch_lanes, args.host_pieces
    HOST_WINDOW_BITS = args.host_window_bits
    msm.BATCH_MIN_RUN = args.batch_min_run
    msm.CHUNK_THREADS = args.chunk_threads or msm.CHUNK_THREADS
    msm.MIN_UPLOAD_PIECE = args.min_upload_piece or msm.MIN_UPLOAD_PIECE
    msm_sort.SORT_BLOCK = args.sort_block or msm_sort.SORT_BLOCK
    msm.BATCH_MIN_LANES = dict(
        zip(("g1", "g2"), map(int, args.batch_min_lanes.split(",")), strict=True)
    )
    env = environment([gp], args.commit)
    env["defines"] = gp.gpu.defines
    env["batch_lanes"] = BATCH_LANES
    env["batch_min_run"], env["batch_min_lanes"] = msm.BATCH_MIN_RUN, msm.BATCH_MIN_LANES
    env["chunk_threads"] = msm.CHUNK_THREADS
    env["min_upload_piece"] = msm.MIN_UPLOAD_PIECE
    env["host_window_bits"] = HOST_WINDOW_BITS
    env["sort_block"] = msm_sort.SORT_BLOCK
    print(json.dumps(env), flush=True)
    results: list[dict[str, Any]] = []
    with gp.gpu.scope():
        bench_ntt(gp, logs(args.ntt), args.runs, results)
        bench_msm_windows(gp, "g1", logs(args.sweep), logs(args.sweep_windows), 3, results)
        bench_msm_windows(gp, "g2", logs(args.sweep_g2), logs(args.sweep_windows), 3, results)
        bench_msm(gp, "g1", logs(args.msm_g1), args.runs, results, logs(args.host))
        bench_msm(gp, "g2", logs(args.msm_g2), args.runs, results, [])
        bits = logs(args.table_bits)
        counts = logs(args.table_windows)
        bench_tables(gp, "g1", logs(args.tables), bits, counts, args.runs, results)
        bench_tables(gp, "g2", logs(args.tables_g2), bits, counts, args.runs, results)
        bench_sort_beside(gp, "g1", logs(args.sort_beside), args.runs, results)
        bench_sort_beside(gp, "g2", logs(args.sort_beside_g2), args.runs, results)
    for spec in args.prove:
        names = args.prove_backends.split(",") if "," in spec else [args.backend]
        bench_prove(spec, names, max(1, args.runs // 2), results)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"environment": env, "results": results}, indent=1))
    print(f"{'benchmark':28s} {'size':>7s} {'median ms':>10s}")
    for r in results:
        print(f"{r['name']:28s} {_size(r['size']):>7s} {r['median_ms']:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
