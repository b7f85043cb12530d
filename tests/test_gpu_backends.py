"""The GPU backends (cupy, pycuda) without a GPU: they load, say why they cannot run, refuse
clearly, map CUDA failures to one-line errors; and the shared driver's device arrays."""

from __future__ import annotations

import collections
import concurrent.futures
import ctypes
import functools
import itertools
import random
import threading
import weakref
from pathlib import Path
from types import SimpleNamespace

import attrs
import numpy as np
import pytest

from cuzk_backend_cupy.plugin import plugin as cupy_plugin
from cuzk_backend_gpu import driver, memory, msm, msm_sort, ntt, staging
from cuzk_backend_gpu.driver import DeviceArray, Gpu, GpuError
from cuzk_backend_gpu.plugin import GpuPlugin
from cuzk_backend_pycuda.plugin import plugin as pycuda_plugin
from cuzk_core.curve.g1 import G1_GENERATOR, G1_OPS, g1_eq, g1_from_affine
from cuzk_core.curve.g2 import G2_GENERATOR, G2_OPS, g2_eq, g2_from_affine
from cuzk_core.domain import EvaluationDomain
from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FQ_MODULUS as Q
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.hookspecs import BackendContext
from cuzk_core.host_work import HostWork
from cuzk_core.layout import ints_to_limbs
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import TableBits, load_profile
from cuzk_core.timing import Timer

PLUGINS = {"cupy": cupy_plugin, "pycuda": pycuda_plugin}
LIBRARY_MODULE = {"cupy": "cupy_backends.cuda.api.runtime", "pycuda": "pycuda._driver"}


@pytest.mark.parametrize("name", PLUGINS)
def test_plugin_loads_and_says_why_it_cannot_run(name):
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    assert info.name == name and info.accelerated and info.device == "cuda"
    available, reason = plugin.gpu.availability()
    assert info.available is available and info.reason == reason and reason
    assert plugin.gpu.adapter.library in reason
    listed = load_plugins().backends[name]
    assert listed.available is available and listed.source.endswith("(cuzk 0.1.0)")


@pytest.mark.parametrize("name", PLUGINS)
def test_cuda_failures_become_one_line_errors(name):
    gpu = PLUGINS[name].gpu
    fake = type("FakeCudaError", (RuntimeError,), {"__module__": LIBRARY_MODULE[name]})
    with pytest.raises(GpuError) as caught, gpu.errors("an MSM"):
        raise fake("CUDA_ERROR_OUT_OF_MEMORY: out of memory\nmore detail")
    message = str(caught.value)
    assert isinstance(caught.value, CuzkError) and caught.value.exit_code == 2
    assert message.startswith(f"{name} backend: an MSM failed") and "\n" not in message
    with pytest.raises(ValueError), gpu.errors("an MSM"):
        raise ValueError("not a CUDA failure: passes through unchanged")


@pytest.mark.parametrize("name", PLUGINS)
def test_hooks_refuse_clearly_without_a_gpu(monkeypatch, name):
    plugin = PLUGINS[name]
    monkeypatch.setattr(plugin.gpu, "availability", lambda: (False, "no CUDA device (test)"))
    ctx = BackendContext(name, load_profile("h200", {"backend": name}))
    values = np.zeros((4, 4), dtype=np.uint64)
    with pytest.raises(GpuError, match="cannot run here: no CUDA device"):
        plugin.cuzk_ntt(ctx, values, EvaluationDomain(2))
    with pytest.raises(GpuError, match="cannot run here: no CUDA device"):
        plugin.cuzk_fixed_base_g2(ctx, G2_GENERATOR, values)
    with pytest.raises(GpuError, match="cannot run here: no CUDA device"):
        plugin.cuzk_fixed_base_g1(ctx, G1_GENERATOR, values)
    host = plugin.cuzk_alloc_host(BackendContext(name, load_profile("cpu")), (3, 4), "uint64", "w")
    assert host.shape == (3, 4) and not host.any()  # pageable memory needs no GPU


class _HostAdapter:
    """Just enough of an adapter, over host memory, to check the driver's array bookkeeping."""

    name = "host"
    library = "none"

    def alloc(self, nbytes):
        buffer = ctypes.create_string_buffer(nbytes)
        return buffer, ctypes.addressof(buffer)

    def copy_htod(self, pointer, host):
        ctypes.memmove(pointer, host.ctypes.data, host.nbytes)

    def copy_dtoh(self, host, pointer):
        ctypes.memmove(host.ctypes.data, pointer, host.nbytes)

    def copy_dtod(self, destination, source, nbytes):
        ctypes.memmove(destination, source, nbytes)

    def zero(self, pointer, nbytes):
        ctypes.memset(pointer, 0, nbytes)

    def alloc_pinned(self, nbytes):
        return np.zeros(nbytes, np.uint8)

    def stream(self):
        return None

    def copy_htod_async(self, pointer, host, stream):
        self.copy_htod(pointer, host)

    def event(self, timing):
        return SimpleNamespace(record=lambda stream: None, synchronize=lambda: None)


def test_device_arrays_slice_view_and_copy_like_numpy():
    gpu = Gpu(_HostAdapter())
    host = np.arange(40, dtype=np.uint64).reshape(10, 4)
    array = gpu.to_device(host)
    assert isinstance(array, DeviceArray) and array.shape == (10, 4) and array.nbytes == 320
    assert (array[2:5].get() == host[2:5]).all() and (array[-1].get() == host[-1]).all()
    assert array[7:3].shape == (0, 4) and array[7:3].get().shape == (0, 4)
    words = array.view(np.uint32)
    assert words.shape == (10, 8) and (words[3:4].get() == host[3:4].view(np.uint32)).all()
    copy = gpu.copy(array[1:])
    gpu.clear(array[:2])
    assert (copy.get() == host[1:]).all() and not array[:2].get().any()
    assert int(gpu.zeros((3,), np.uint32)[-1].get()) == 0 and gpu.empty((0, 4), np.uint8).ptr == 0
    with pytest.raises(ValueError):
        array[::2]
    with pytest.raises(IndexError):
        array[10]


def test_a_refused_step_says_what_the_key_and_compiled_circuits_hold():
    """A step that does not fit names its need, what is free and how much of the device the
    resident key (its window tables included) and the compiled circuits' files already hold:
    where the memory of a card whose profile keeps tables went."""
    adapter = _HostAdapter()
    adapter.memory = lambda: (1 << 30, 80 << 30)  # type: ignore[attr-defined]
    gpu = Gpu(adapter)
    with pytest.raises(
        GpuError, match=r"R1CS needs 2\.00 GiB .* 1\.00 GiB is free \(device total 80\.00 GiB\)$"
    ):
        gpu.ensure_fits(2 << 30, "R1CS")
    batch, mapping = (type("Host", (), {})() for _ in range(2))  # what the caches are kept for
    n = 1 << 16
    table = gpu.empty((3 * n, 24), np.uint32)  # a G1 window table of 3 windows: 18 MiB
    gpu.cache(driver.RESIDENT)[batch] = memory.DeviceBases(
        "g1", n, table, gpu.empty((n,), np.uint8), True, None, 16, 3
    )
    assert gpu.held_bytes() == (3 * n * 96 + n, 0)
    with pytest.raises(GpuError, match=r"80\.00 GiB; held: the resident key 0\.02 GiB\)$"):
        gpu.ensure_fits(2 << 30, "R1CS")
    gpu.cache(driver.MAPPED_FILES)[mapping] = gpu.empty((40 << 20,), np.uint8)
    assert gpu.held_bytes()[1] == 40 << 20
    with pytest.raises(GpuError, match=r"key 0\.02 GiB, compiled circuits 0\.04 GiB\)$"):
        gpu.ensure_fits(2 << 30, "R1CS")


def test_device_scalars_slice_both_forms_alike():
    """A kept witness's handle slices its Montgomery rows with its canonical ones (the products
    read the first, the MSMs the second, of ``witness[num_inputs:]``)."""
    gpu = Gpu(_HostAdapter())
    canonical = np.arange(40, dtype=np.uint64).reshape(10, 4)
    kept = memory.DeviceScalars(gpu.to_device(canonical), gpu.to_device(canonical + 100))
    rows = kept[3:7]
    assert len(rows) == 4 and (rows.array.get() == canonical[3:7]).all()
    assert rows.montgomery is not None and (rows.montgomery.get() == canonical[3:7] + 100).all()
    assert memory.DeviceScalars(gpu.to_device(canonical))[2:].montgomery is None


def test_every_gpu_plugin_is_the_shared_one():
    assert all(isinstance(p, GpuPlugin) for p in PLUGINS.values())
    assert cupy_plugin.gpu is not pycuda_plugin.gpu


class _Occupancy:
    """What Gpu.resident_threads reads of an adapter: registers per kernel, device limits."""

    name = "occupancy"

    def __init__(self, registers: int, threads_per_sm: int) -> None:
        self._registers = registers
        self._threads = threads_per_sm

    def registers(self, function: object) -> int:
        return self._registers

    def describe(self) -> dict:
        return {
            "multiprocessors": 132,
            "threads_per_multiprocessor": self._threads,
            "registers_per_multiprocessor": 65536,
            "l2_bytes": 50 << 20,
        }


@pytest.mark.parametrize(
    ("registers", "block", "threads_per_sm", "blocks_per_sm"),
    [
        (160, 128, 2048, 3),  # the G1 bucket kernel: 3 warps a scheduler
        (168, 128, 2048, 3),
        (176, 128, 2048, 2),  # one register too many for the third warp
        (64, 256, 2048, 4),  # the NTT kernel under its launch bound
        (32, 128, 2048, 16),  # thread-limited
        (32, 128, 1536, 12),  # sm_120's smaller thread limit
    ],
)
def test_resident_threads_follow_registers_and_thread_limits(
    registers, block, threads_per_sm, blocks_per_sm
):
    gpu = Gpu(_Occupancy(registers, threads_per_sm))
    assert gpu.resident_threads(object(), block) == 132 * blocks_per_sm * block


def test_resident_threads_are_read_from_each_kernel_not_remembered_by_its_id():
    """A kernel compiled for one measurement and freed can leave its id to the next one
    (pipe_peak's fq_inverse once got fq_mul's count this way)."""

    class Registers(_Occupancy):
        def registers(self, function: object) -> int:
            return function.registers  # type: ignore[attr-defined]

    gpu = Gpu(Registers(0, 2048))
    kernel = SimpleNamespace(registers=104)
    assert gpu.resident_threads(kernel, 128) == 132 * 4 * 128
    kernel.registers = 72  # the same object, as a reused id would look
    assert gpu.resident_threads(kernel, 128) == 132 * 7 * 128


@pytest.mark.parametrize("log_n", range(1, 33))
def test_ntt_plans_cover_every_stage_within_a_block(log_n):
    stage = 0
    for first, stages, run in ntt.passes(log_n):
        assert first == stage and stages >= 1
        assert run <= first and stages + run <= ntt.SHARED_LOG  # a block: 2^(stages+run) elements
        assert first == 0 or stages + run == min(ntt.SHARED_LOG, first + stages)  # blocks full
        stage += stages
    assert stage == log_n


@pytest.mark.parametrize("c", range(6, 22))
@pytest.mark.parametrize("l2_mib", [2, 6, 50, 60])
def test_scatter_launches_keep_their_write_fronts_within_the_l2_share(c, l2_mib):
    per_window = msm.bucket_count(c, True)
    step = msm_sort.scatter_windows(l2_mib << 20, per_window)
    assert step >= 1
    assert step == 1 or step * per_window * 32 <= (l2_mib << 20) // msm_sort.SCATTER_L2_SHARE


@pytest.mark.parametrize("nbytes", [0, 1, staging.COPY_SLICE, 3 * staging.COPY_SLICE + 17])
def test_staging_copies_in_slices_give_every_byte(nbytes):
    source = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    destination = np.zeros_like(source)
    staging.parallel_copy(destination, source)
    assert np.array_equal(destination, source)


# ---------------------------------------------------------------- streamed bases (stream / mmap)


class _Upload:
    """A stand-in for one chunk's device upload: the test counts how many are alive at once."""


def _scheduled(n: int, chunk: int) -> tuple[list[tuple], int]:
    """Run for_each_chunk with uploads that log when they start and when their chunk is summed;
    the log and the most uploads alive at once."""
    log: list[tuple] = []
    alive = set()
    peak = 0

    def bases(start: int, stop: int) -> msm.BaseChunk:
        nonlocal peak
        upload = _Upload()
        alive.add(id(upload))
        weakref.finalize(upload, alive.discard, id(upload))
        peak = max(peak, len(alive))
        log.append(("upload", start, stop))
        return msm.BaseChunk(upload, None, lambda: None)

    def compute(chunk: msm.BaseChunk, start: int, stop: int) -> None:
        assert isinstance(chunk.coords, _Upload)
        log.append(("sum", start, stop))

    msm.for_each_chunk(bases, n, chunk, compute)
    return log, peak


def test_streamed_chunks_upload_one_ahead_and_hold_two_at_most():
    log, peak = _scheduled(10, 3)
    assert log == [
        ("upload", 0, 3),
        ("upload", 3, 6),
        ("sum", 0, 3),
        ("upload", 6, 9),
        ("sum", 3, 6),
        ("upload", 9, 10),
        ("sum", 6, 9),
        ("sum", 9, 10),
    ]
    assert peak == 2
    assert _scheduled(5, 8) == ([("upload", 0, 5), ("sum", 0, 5)], 1)
    assert _scheduled(0, 4) == ([], 0)
    log, peak = _scheduled(1000, 1)
    assert peak == 2 and [e[1] for e in log if e[0] == "sum"] == list(range(1000))


@pytest.mark.parametrize("group", [msm.G1, msm.G2])
def test_the_device_budget_bounds_two_streamed_chunks(group):
    base_bytes = 4 * group.affine_words  # 96 (G1) or 192 (G2) bytes a point
    assert msm.stream_chunk_limit(group, None) is None
    assert msm.stream_chunk_limit(group, 1 << 10) == (1 << 10) // (2 * base_bytes)
    assert msm.stream_chunk_limit(group, base_bytes) == 1  # at least one point
    plenty, threads = 1 << 40, 1 << 16
    args = (group, 100_000, 12, True)
    assert msm.plan_chunk(*args, False, None, plenty, threads)[0] == 100_000
    assert msm.plan_chunk(*args, True, None, plenty, threads)[0] == 100_000
    budget = 1 << 20
    chunk, _ = msm.plan_chunk(*args, True, budget, plenty, threads)
    assert chunk == budget // (2 * base_bytes) and 2 * chunk * base_bytes <= budget
    assert msm.plan_chunk(*args, False, budget, plenty, threads)[0] == 100_000  # resident
    whole = msm.plan_chunk(*args, True, None, plenty, threads)[1]
    chunk, need = msm.plan_chunk(*args, True, None, whole - 1, threads)  # a little short
    assert chunk == 50_000 and need <= whole - 1


@pytest.mark.parametrize("group", [msm.G1, msm.G2], ids=["g1", "g2"])
def test_batch_lanes_shrink_to_keep_runs_and_stop_below_the_groups_floor(group):
    """A pass gets the profile's lanes while its runs keep BATCH_MIN_RUN entries, fewer lanes
    below that, and the XYZZ pass (0) once those would be under the group's BATCH_MIN_LANES."""
    threads, most = 1 << 15, 256
    floor = msm.BATCH_MIN_LANES[group.name]
    full = threads * most * msm.BATCH_MIN_RUN
    assert msm.batch_lanes_for(group, 4 * full, threads, most) == most
    assert msm.batch_lanes_for(group, full, threads, most) == most
    assert msm.batch_lanes_for(group, full - 1, threads, most) == most - 1
    at_floor = threads * floor * msm.BATCH_MIN_RUN
    assert msm.batch_lanes_for(group, at_floor, threads, most) == floor
    assert msm.batch_lanes_for(group, at_floor - 1, threads, most) == 0
    assert msm.batch_lanes_for(group, full, threads, floor - 1) == 0  # the knob under the floor


@pytest.mark.parametrize("group", [msm.G1, msm.G2], ids=["g1", "g2"])
def test_batch_lanes_count_their_scratch_only_in_passes_that_take_them(group):
    """A pass that takes the batch-affine pass needs its lanes' scratch (a sum, a head and a
    prefix: 2.5 affine points, and two group indices a lane, for each of the batch kernel's
    threads); a smaller one needs none, so a device too small for the lanes gets smaller
    passes, never a refusal."""
    threads, batch_threads, most, c = 1 << 16, 3 << 14, 512, 16
    windows = msm.window_count(c, True)
    n = -(-batch_threads * most * msm.BATCH_MIN_RUN // windows)
    lanes = msm.batch_lanes_for(group, n * windows, batch_threads, most)
    assert lanes == most
    plain = msm._bucket_workspace(group, n, c, True, threads)
    batch = msm._bucket_workspace(group, n, c, True, threads, False, most, batch_threads)
    scratch = batch_threads * lanes * (8 + 10 * group.affine_words)
    partials = 4 * group.xyzz_words * (batch_threads - min(n * windows // msm.MIN_RANGE, threads))
    assert batch - plain == scratch + partials
    small = n * msm.BATCH_MIN_LANES[group.name] // most // 2  # under the floor: the XYZZ pass
    assert msm._bucket_workspace(group, small, c, True, threads, False, most, batch_threads) == (
        msm._bucket_workspace(group, small, c, True, threads)
    )
    args = (group, n, c, True, False, None)
    whole = msm.plan_chunk(*args, 1 << 45, threads, 1, most, batch_threads)
    assert whole[0] == n and whole[1] - plain - 32 * n == scratch + partials
    assert msm.plan_chunk(*args, whole[1], threads, 1, most, batch_threads) == whole
    chunk, need = msm.plan_chunk(*args, whole[1] - 1, threads, 1, most, batch_threads)
    assert chunk == -(-n // 2)  # half the runs: half the lanes and their scratch
    half = msm._bucket_workspace(group, chunk, c, True, threads, False, most, batch_threads)
    assert need == half + msm.merged_set_bytes(group, c, True) + 32 * chunk  # chunks merge
    assert msm.batch_lanes_for(group, chunk * windows, batch_threads, most) == most // 2


class _PlanningDevice:
    """What _plan_passes asks of a device: its kernels' resident threads and its free bytes."""

    def __init__(self, free: int) -> None:
        self.free, self.asked = free, []

    def kernel(self, module: str, name: str) -> str:
        return name

    def resident_threads(self, function: str, block: int) -> int:
        return 1 << 16

    def free_bytes(self) -> int:
        return self.free

    def ensure_fits(self, need: int, what: str) -> None:
        self.asked.append(need)
        assert need <= self.free, what


@pytest.mark.parametrize("group", [msm.G1, msm.G2], ids=["g1", "g2"])
def test_wide_windows_only_for_passes_that_are_large_and_fit(group):
    """Passes of WIDE_WINDOW_POINTS or more take the wide windows when their many buckets fit;
    a device too small for them, or an upload in smaller pieces, keeps 16 bits; a width the
    profile names is kept at any size. A sort ahead plans the width its MSM will take."""
    wide, n = msm.WIDE_WINDOW_BITS, msm.WIDE_WINDOW_POINTS[group.name]
    assert msm.auto_window_bits(group, n - 1, True) == 16
    assert msm.auto_window_bits(group, n, True) == wide
    args = (group, n, None, True, False, None, 1, 256)
    roomy = _PlanningDevice(1 << 45)
    assert msm._plan_passes(roomy, *args) == (wide, n)
    need_wide = roomy.asked[-1]
    threads = roomy.resident_threads("", 128)
    chunk, need = msm.plan_chunk(group, n, 16, True, False, None, 1 << 45, threads, 1, 256, threads)
    assert chunk == n and need < need_wide
    tight = _PlanningDevice(need)  # room for 16 bits' buckets, not for 20 bits'
    assert msm._plan_passes(tight, *args) == (16, n)
    for device, bits in ((roomy, wide), (_PlanningDevice(need_wide - 1), 16)):
        planned = msm.sort_ahead_key(device, group, n, None, True, True, 256)
        assert planned is not None and planned[0].c == bits, (device.free, planned)
    pieces = (group, 1 << 24, None, True, True, None, 2, 256)  # two uploads of 2^23 points
    assert msm._plan_passes(roomy, *pieces) == (16, 1 << 23)
    assert msm._plan_passes(roomy, group, n - 1, None, True, False, None, 1, 256)[0] == 16
    assert msm._plan_passes(roomy, group, 1000, wide, True, False, None, 1, 256) == (wide, 1000)


def test_a_sort_ahead_over_a_window_table_takes_its_bits_and_windows():
    """A sort ahead for bases with a window table plans the table's pass: its bits (whatever
    width is asked) and its windows in the key, its sets' groups in the bytes; none when the
    table's pass does not fit, or the sort beside the sorts named before it."""
    n = 1 << 20
    rows = np.broadcast_to(np.uint32(0), (7 * n, 48))  # the shape of a 7-window table, no memory
    table = msm.WindowTable(rows, 20, 7)
    roomy = _PlanningDevice(1 << 45)
    planned = msm.sort_ahead_key(roomy, msm.G2, n, 16, True, True, 128, 0, table)
    assert planned is not None and planned[0] == msm_sort.SortKey(0, n, 20, True, 7, True)
    plain = msm.sort_ahead_key(roomy, msm.G2, n, 20, True, True, 128)
    assert plain is not None and plain[0].table_windows == 0
    assert plain[1] - planned[1] == 12 * (13 - 2) * msm.bucket_count(20, True)
    tight = _PlanningDevice(1 << 24)
    assert msm.sort_ahead_key(tight, msm.G2, n, None, True, True, 128, 0, table) is None
    taken = (1 << 45) - planned[1]  # the sorts ahead named before leave too little room
    assert msm.sort_ahead_key(roomy, msm.G2, n, 16, True, True, 128, taken, table) is None


def _xyzz_rows(group: msm.Group, points: list, rng: random.Random) -> np.ndarray:
    """Canonical XYZZ words of affine points (None: infinity), each scaled by a random z."""
    mul = group.mul
    rows = []
    for point in points:
        if point is None:
            coords = [0 if group.fq_per_coord == 1 else (0, 0)] * 4
        else:
            z = rng.randrange(1, Q) if group.fq_per_coord == 1 else (rng.randrange(Q), 1)
            zz = mul(z, z)
            zzz = mul(zz, z)
            coords = [mul(point[0], zz), mul(point[1], zzz), zz, zzz]
        rows.append([v for c in coords for v in ((c,) if group.fq_per_coord == 1 else c)])
    return ints_to_limbs([v for row in rows for v in row], 6).view(np.uint32).reshape(len(rows), -1)


@pytest.mark.parametrize("group", [msm.G1, msm.G2], ids=["g1", "g2"])
@pytest.mark.parametrize("host_int", ["gmpy2", "int"])
def test_the_windows_combination_in_either_integer_type(group, host_int, monkeypatch, rng):
    """Σ_w 2^(c·w)·S_w from canonical XYZZ window sums (an infinity and a repeated sum among
    them) is the core's sum, returned in Python ints whichever integer type computed it; it
    stops between steps of COMBINE_STEP_WINDOWS windows (host work beside a device)."""
    if host_int == "gmpy2":
        pytest.importorskip("gmpy2")
    else:
        monkeypatch.setattr(msm, "_host_int", int)
    ops, generator = (G1_OPS, G1_GENERATOR) if group is msm.G1 else (G2_OPS, G2_GENERATOR)
    from_affine = g1_from_affine if group is msm.G1 else g2_from_affine
    c, multiples = 16, [5, 0, rng.randrange(FR_MODULUS), 5, FR_MODULUS - 1]
    affine = ops.batch_to_affine([ops.mul(from_affine(generator), k) for k in multiples])
    affine = [None if k == 0 else a for k, a in zip(multiples, affine, strict=True)]
    steps = msm._combine_windows(group, _xyzz_rows(group, affine, rng), c, Timer(0))
    stops = 0
    while True:
        try:
            next(steps)
            stops += 1
        except StopIteration as done:
            total = done.value
            break
    assert stops == -(-len(multiples) // msm.COMBINE_STEP_WINDOWS) - 1
    want = ops.mul(from_affine(generator), sum(k << (c * w) for w, k in enumerate(multiples)))
    assert (g1_eq if group is msm.G1 else g2_eq)(total, want)
    coords = [v for coord in total for v in (coord if isinstance(coord, tuple) else (coord,))]
    assert all(type(v) is int for v in coords)


@pytest.mark.parametrize(
    ("n", "pieces", "chunk"),
    [
        (1 << 24, 2, 1 << 23),
        (1 << 24, 3, -(-(1 << 24) // 3)),
        (1 << 24, 16, 1 << 22),  # pieces of at least MIN_UPLOAD_PIECE points: four
        ((1 << 23) - 1, 2, (1 << 23) - 1),  # under two pieces' worth: one upload
        ((1 << 23) + 1, 2, (1 << 22) + 1),
        (1 << 24, 1, 1 << 24),
    ],
)
def test_streamed_bases_upload_in_pieces_of_a_minimum_size(n, pieces, chunk):
    plenty, threads = 1 << 45, 1 << 16
    args = (msm.G1, n, 16, True)
    assert msm.MIN_UPLOAD_PIECE == 1 << 22
    assert msm.plan_chunk(*args, True, None, plenty, threads, pieces)[0] == chunk
    assert msm.plan_chunk(*args, False, None, plenty, threads, pieces)[0] == n  # resident


def test_the_witness_op_table_points_at_each_ops_rows():
    """The kernel's op rows (built with array operations, once per program) name the aux, the
    kind and extra, and the entry ranges of the rows each op reads, in level order."""
    from cuzk_backend_gpu.witness import op_table
    from cuzk_core.circuits import PorepLite
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.program import BIT, SOLVE

    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=1, depth=2), use_cache=False)
    program = compiled.program
    table = op_table(program)
    assert len(table) == len(program.level_ops)
    m = program.matrices
    kinds = set()
    for row, aux in zip(table.tolist(), program.level_ops.tolist(), strict=True):
        kind, arg, extra = int(program.kind[aux]), int(program.arg[aux]), int(program.extra[aux])
        assert row[:2] == [aux, kind | extra << 8]
        if kind == SOLVE:
            ranges = [(mat.indptr[arg], mat.indptr[arg + 1]) for mat in (m.a, m.b, m.c)]
        else:
            assert kind == BIT
            ranges = [(program.lin.indptr[arg], program.lin.indptr[arg + 1]), (0, 0), (0, 0)]
        assert row[2:] == [int(x) for pair in ranges for x in pair]
        kinds.add(kind)
    assert kinds == {SOLVE, BIT}


def test_mirrors_find_a_returned_array_by_identity_only_while_it_lives():
    from cuzk_backend_gpu.memory import Mirrors

    mirrors = Mirrors()
    host, device = np.zeros((4, 4), np.uint64), object()
    assert mirrors.keep(host, device, "canonical") is host
    assert not host.flags.writeable  # the two copies cannot drift apart
    assert mirrors.find(host, "canonical") is device
    assert mirrors.find(host, "montgomery") is None
    assert mirrors.find(host.copy(), "canonical") is None  # equal values, another array
    assert mirrors.find(host[1:], "canonical") is None
    key = (id(host), "canonical")
    del host
    assert key not in mirrors._by_id


def test_mirrors_find_the_rows_of_a_view():
    """``witness[num_inputs:]`` (the L query's scalars) is a view: its rows of the mirror."""
    from cuzk_backend_gpu.memory import Mirrors

    mirrors = Mirrors()
    pool = np.zeros(64 * 4 + 8, np.uint64)  # a returned array may itself view a pooled buffer
    host = pool[8:].reshape(64, 4)
    device = np.arange(64 * 4, dtype=np.uint64).reshape(64, 4)  # slices like a DeviceArray
    mirrors.keep(host, device, "canonical")
    assert np.array_equal(mirrors.find_rows(host[5:], "canonical"), device[5:])
    assert np.array_equal(mirrors.find_rows(host[5:9], "canonical"), device[5:9])
    assert mirrors.find_rows(host, "canonical") is device
    assert mirrors.find_rows(host[5:], "montgomery") is None
    assert mirrors.find_rows(host[::2], "canonical") is None  # not contiguous rows
    assert mirrors.find_rows(host[5:].copy(), "canonical") is None
    assert mirrors.find_rows(host.reshape(-1)[1:5], "canonical") is None  # not whole rows
    assert mirrors.find_rows(pool[:4].reshape(1, 4), "canonical") is None  # outside it


def test_result_buffers_are_reused_only_after_their_last_view_is_gone():
    from cuzk_backend_gpu.memory import PINNED, ResultBuffers

    results = ResultBuffers(Gpu(_HostAdapter()))
    first = results.take((8, 4), np.uint64)
    assert first.shape == (8, 4) and first.dtype == np.uint64 and first.flags.writeable
    assert PINNED.covers(first)  # uploads of it need no staging
    address = first.ctypes.data
    view = first[2:].view(np.uint8)
    del first
    busy = results.take((8, 4), np.uint64)
    assert busy.ctypes.data != address  # a view still uses the first block
    del view
    again = results.take((8, 4), np.uint64)
    assert again.ctypes.data == address
    other = results.take((4, 4), np.uint64)  # another size: another block
    assert other.ctypes.data != address
    held = [results.take((2,), np.uint64) for _ in range(ResultBuffers.KEEP_PER_SIZE + 2)]
    del held
    assert len(results._idle[16]) == ResultBuffers.KEEP_PER_SIZE
    for count in range(1, ResultBuffers.KEEP_SIZES + 2):  # many sizes: the oldest go
        results.take((count, 8), np.uint64)
    assert len(results._idle) == ResultBuffers.KEEP_SIZES and 16 not in results._idle


def _resident_kib(path):
    """This process's resident kB of the mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0]:
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_views_of_a_read_only_mapping_share_one_upload_and_drop_their_pages(tmp_path, monkeypatch):
    from cuzk_backend_gpu import driver
    from cuzk_backend_gpu.mapped import mapping_of

    # The 6 MiB file in three staged 2 MiB halves: a half no smaller than the page cache's
    # largest folio (a PMD), or faulting in one half can map the last half's pages back.
    monkeypatch.setattr(driver, "CHUNK_BYTES", 1 << 21)

    path = tmp_path / "tables.bin"
    values = np.arange(3 << 18, dtype=np.uint64)
    values.tofile(path)
    mapped = np.memmap(path, dtype=np.uint64, mode="r")
    assert mapping_of(mapped[10:20])[1] == 80
    assert mapping_of(np.memmap(path, dtype=np.uint64, mode="c")) is None  # private writes
    assert mapping_of(values) is None
    gpu = Gpu(_HostAdapter())
    prefix, whole = gpu.shared_copy(mapped[:1000]), gpu.shared_copy(mapped)
    assert whole.ptr == prefix.ptr  # one copy of the file serves both views
    assert (prefix.get() == values[:1000]).all() and (whole.get() == values).all()
    if Path("/proc/self/smaps").exists():
        assert _resident_kib(path) == 0  # every copied page left this process
    assert (mapped[-5:] == values[-5:]).all()  # dropped pages read back from the file
    anonymous = gpu.shared_copy(values[:8])
    assert (anonymous.get() == values[:8]).all()


@pytest.mark.parametrize("name", PLUGINS)
def test_a_mapped_file_uploads_through_the_staging_halves_on_the_gpu(tmp_path, monkeypatch, name):
    """The real DMA path of a mapped file's upload: page-locked halves, asynchronous copies,
    a last half shorter than the others."""
    from cuzk_backend_gpu import driver

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    monkeypatch.setattr(driver, "CHUNK_BYTES", 1 << 21)
    path = tmp_path / "tables.bin"
    values = np.arange((5 << 18) + 7, dtype=np.uint64)  # 10 MiB and a bit: six halves
    values.tofile(path)
    mapped = np.memmap(path, dtype=np.uint64, mode="r")
    gpu = plugin.gpu
    with gpu.scope():
        whole = gpu.shared_copy(mapped)
        assert np.array_equal(whole.get(), values)


def test_cupy_key_buffers_are_page_locked_at_their_exact_size():
    """A key section's host buffer is its own cudaHostAlloc, not a block of CuPy's pinned pool
    (which rounds up to a power of two and keeps freed blocks pinned)."""
    info = cupy_plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"cupy cannot run here: {info.reason}")
    import cupy

    pool = cupy.get_default_pinned_memory_pool()
    before = pool.n_free_blocks()
    nbytes = (3 << 20) + 5
    array = cupy_plugin.gpu.adapter.alloc_pinned(nbytes)
    assert array.nbytes == nbytes
    assert cupy.cuda.pinned_memory.is_memory_pinned(array.ctypes.data)
    del array
    assert pool.n_free_blocks() == before


def test_an_msm_refused_its_window_table_runs_on_the_plain_bases(monkeypatch):
    """When one pass over the table does not fit, the MSM takes its own window width over the
    table's first rows (the bases): never the table with a width it was not built for."""
    n, seen = 64, []
    rows = np.zeros((msm.table_windows(20) * n, 24), np.uint32)  # stands in for device rows

    def bases(start: int, stop: int) -> msm.BaseChunk:
        return msm.BaseChunk(rows[start:stop], None, lambda: None)

    def one_pass(gpu, group, chunk, scalars, c, signed, split_01, timer, table, lanes, slot, *_):
        seen.append((table is None, len(chunk.coords), c))
        return msm.PassSums(None, None, c, 0 if table is None else table.windows)

    monkeypatch.setattr(msm, "_table_fits", lambda *args: False)
    monkeypatch.setattr(msm, "_plan_passes", lambda gpu, group, count, bits, *rest: (bits, count))
    monkeypatch.setattr(msm, "_msm_pass", one_pass)
    scalars = np.zeros((n, 8), np.uint32)
    table = msm.WindowTable(rows, 20, msm.table_windows(20))
    msm.device_sums(None, msm.G1, bases, False, scalars, 7, True, False, Timer(0), None, table)
    assert seen == [(True, n, 7)]
    monkeypatch.setattr(msm, "_table_fits", lambda *args: True)
    msm.device_sums(None, msm.G1, bases, False, scalars, 7, True, False, Timer(0), None, table)
    assert seen[1] == (False, n, 20)  # a pass that fits takes the table and its bits


def test_an_msm_over_kept_scalars_takes_their_width_and_slot(monkeypatch):
    """With a sort share, an MSM over the scalars whose sort is kept takes the kept width where
    the groups' size rules differ (G1 16 bits, G2 20 at 11 M points) and asks its pass for that
    sort; bases with points at infinity, other scalars, a set width and no owner do not."""
    n, seen = 11_000_000, []
    share, owner = msm_sort.SortShare(), _Handle()
    kept = msm_sort.SortedDigits(np.zeros(3, np.uint32), np.zeros(5, np.uint32), 5, 4)
    share.keep(owner, msm_sort.SortKey(0, n, 20, True, 0, True), kept)

    def bases(skip):
        return lambda start, stop: msm.BaseChunk(rows[start:stop], skip, lambda: None)

    def one_pass(gpu, group, chunk, scalars, c, signed, split_01, timer, table, lanes, slot, *_):
        found = None if slot is None else slot.share.find(slot.owner, slot.key)
        seen.append((c, found is kept))
        return msm.PassSums(None, None, c, 0)

    monkeypatch.setattr(msm, "_plan_passes", lambda gpu, group, count, bits, *rest: (bits, count))
    monkeypatch.setattr(msm, "_msm_pass", one_pass)
    rows = np.broadcast_to(np.uint32(0), (n, 24))  # the shapes of n points and scalars, no memory
    scalars = np.broadcast_to(np.uint32(0), (n, 8))
    run = functools.partial(msm.device_sums, None, msm.G1)
    assert msm.auto_window_bits(msm.G1, n, True) == 16
    assert msm.auto_window_bits(msm.G2, n, True) == 20
    run(bases(None), False, scalars, None, True, True, Timer(0), share=share, owner=owner)
    run(
        bases(np.zeros(n, np.uint8)),
        False,
        scalars,
        None,
        True,
        True,
        Timer(0),
        share=share,
        owner=owner,
    )
    run(bases(None), False, scalars, 16, True, True, Timer(0), share=share, owner=owner)
    run(bases(None), False, scalars, 20, True, True, Timer(0), share=share, owner=None)
    run(bases(None), False, scalars, 20, True, True, Timer(0), share=share, owner=owner)
    assert seen == [(20, True), (20, False), (16, False), (20, False), (20, False)]


def test_a_table_pass_counts_a_sort_it_takes_over_as_room(monkeypatch):
    """Whether a table's pass fits is asked less the bytes of the sort it will take over (kept
    or sorted ahead for its scalars under its key, already allocated); not for bases with
    points at infinity (whose pass takes no sort) or a pass under another key."""
    n, asked, took = 1000, [], []
    share, owner = msm_sort.SortShare(), _Handle()
    kept = msm_sort.SortedDigits(np.zeros(3, np.uint32), np.zeros(5, np.uint32), 5, 4)
    share.keep(owner, msm_sort.SortKey(0, n, 20, True, 7, True), kept)

    def fits(gpu, group, table, count, signed, lanes, reserved):
        asked.append(reserved)
        return True

    def one_pass(gpu, group, chunk, scalars, c, signed, split_01, timer, table, lanes, slot, *_):
        took.append(slot is not None and slot.share.find(owner, slot.key) is kept)
        return msm.PassSums(None, None, c, 0)

    monkeypatch.setattr(msm, "_table_fits", fits)
    monkeypatch.setattr(msm, "_msm_pass", one_pass)
    rows = np.broadcast_to(np.uint32(0), (7 * n, 24))  # a 7-window table's shape, no memory
    scalars = np.broadcast_to(np.uint32(0), (n, 8))
    table = msm.WindowTable(rows, 20, 7)

    def run(skip, split_01):
        def chunks(start, stop):
            return msm.BaseChunk(rows[start:stop], skip, lambda: None)

        args = (chunks, False, scalars, None, True, split_01, Timer(0))
        msm.device_sums(None, msm.G1, *args, table=table, share=share, owner=owner)

    run(None, True)
    run(np.zeros(n, np.uint8), True)
    run(None, False)
    assert asked == [-(3 * 4 + 5 * 4), 0, 0]
    assert took == [True, False, False]


def test_window_tables_hold_at_most_the_kernels_windows():
    assert msm.table_windows(16) == msm.MAX_TABLE_WINDOWS
    with pytest.raises(ValueError, match="holds 2 to 16 windows, not 22"):
        msm.build_window_table(None, msm.G1, None, 1, 12)
    with pytest.raises(ValueError, match="holds 2 to 16 windows, not 1"):
        msm.build_window_table(None, msm.G1, None, 1, 20, windows=1)


def test_cached_gather_indices_are_checked_on_every_use():
    """A key's read-only query indices are uploaded once; each later gather still checks them
    against the values it gathers from (no read past a shorter witness on the device)."""

    class HostAsDevice:  # to_device's copies stay numpy arrays
        def to_device(self, host: np.ndarray) -> np.ndarray:
            return np.array(host)

    store = memory.Memory(HostAsDevice())
    profile = load_profile("cpu")
    indices = np.array([0, 5, 9])
    indices.flags.writeable = False
    first = store.index_array(profile, indices, 10)
    assert first.dtype == np.uint32 and store.index_array(profile, indices, 10) is first
    with pytest.raises(ValueError, match=r"\[0, 9\), one is 9"):
        store.index_array(profile, indices, 9)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        store.index_array(profile, np.array([-1, 2]), 4)


@pytest.mark.parametrize("name", PLUGINS)
def test_an_msm_runs_the_threads_host_work_while_its_buckets_sum(name):
    """The proof's queued Python (the blinding terms) runs inside a GPU MSM, while its bucket
    sums compute, in the calling thread; the MSM's own host part (the windows' combination)
    is queued after it, and its sum is unchanged."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    ctx = BackendContext(name, load_profile("h200", {"backend": name}))
    rng = random.Random(5)
    n = 1 << 17  # full-width scalars: ~2.4 M bucket entries, over msm.HOST_WORK_MIN_ENTRIES
    logs = [rng.randrange(1, 1 << 62) for _ in range(n)]
    ks = [rng.randrange(FR_MODULUS) for _ in range(n)]
    windows = msm.window_count(msm.auto_window_bits(msm.G1, n, True), True)
    assert n * windows > 2 * msm.HOST_WORK_MIN_ENTRIES
    bases = plugin.cuzk_fixed_base_g1(ctx, G1_GENERATOR, ints_to_limbs(logs, 4))
    work, ran = HostWork(), []
    piece = work.submit(lambda: ran.append(threading.get_ident()) or 42)
    with work.beside_device():
        pending = plugin.cuzk_msm_g1(ctx, bases, ints_to_limbs(ks, 4), None, "t")
    assert ran == [threading.get_ident()] and work.queued == 1 and piece.result() == 42
    work.run_while(lambda: True)
    total = pending.result()
    expected = sum(k * g for k, g in zip(ks, logs, strict=True)) % FR_MODULUS
    want = plugin.cuzk_fixed_base_g1(ctx, G1_GENERATOR, ints_to_limbs([expected], 4))
    assert np.array_equal(total.coords, want.coords) and not total.infinity.any()
    assert plugin.cuzk_msm_g1(ctx, bases, ints_to_limbs(ks, 4), None, "t").equals(total)
    small = work.submit(lambda: 1)  # an MSM of a few µs of device work runs none of it
    few = bases.coords[:256], bases.infinity[:256]
    with work.beside_device():
        plugin.cuzk_msm_g1(ctx, type(bases)(*few), ints_to_limbs(ks[:256], 4), None, "t")
    assert work.queued == 2 and small.result() == 1


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_a_streamed_msm_merges_its_pieces_buckets_and_reduces_once(name, group, monkeypatch):
    """A key streamed in pieces (msm.upload_pieces 4, the piece floor lowered) adds each
    pass's buckets into one set and reduces that once: three merges, one reduction, one row
    of window sums for the host. The pieces are A, A, −A and −A with its last 8 points and
    scalars new, so merged buckets meet as P + P, then mostly as P + (−P); 0, 1 and r − 1 are
    among the scalars (the 0/1 split on). Σ kᵢ·logᵢ·G, as one pass gives."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    quarter = 1 << 10  # four pieces of a quarter
    changes = {"backend": name, "msm.upload_pieces": 4, "msm.split_01": True}
    streamed = BackendContext(
        name, load_profile("h200", {**changes, "memory.key_storage": "stream"})
    )
    whole = BackendContext(name, load_profile("h200", {**changes, "memory.key_storage": "device"}))
    rng = random.Random(f"merged:{group}")
    a_logs = [rng.randrange(1, FR_MODULUS) for _ in range(quarter)]
    a_ks = [0, 1, FR_MODULUS - 1] + [rng.randrange(FR_MODULUS) for _ in range(quarter - 3)]
    minus_a = [FR_MODULUS - x for x in a_logs]
    new_logs = [rng.randrange(1, FR_MODULUS) for _ in range(8)]
    new_ks = [rng.randrange(FR_MODULUS) for _ in range(8)]
    logs = a_logs + a_logs + minus_a + minus_a[:-8] + new_logs
    ks = a_ks * 3 + a_ks[:-8] + new_ks
    fixed, msm_hook, generator = {
        "g1": (plugin.cuzk_fixed_base_g1, plugin.cuzk_msm_g1, G1_GENERATOR),
        "g2": (plugin.cuzk_fixed_base_g2, plugin.cuzk_msm_g2, G2_GENERATOR),
    }[group]
    bases = fixed(whole, generator, ints_to_limbs(logs, 4))
    expected = sum(k * x for k, x in zip(ks, logs, strict=True)) % FR_MODULUS
    want = fixed(whole, generator, ints_to_limbs([expected], 4))
    monkeypatch.setattr(msm, "MIN_UPLOAD_PIECE", quarter)
    purpose = "a" if group == "g1" else "b_g2"
    total = msm_hook(
        streamed, plugin.cuzk_upload(streamed, bases, purpose), ints_to_limbs(ks, 4), None, "t"
    )
    assert np.array_equal(total.coords, want.coords) and not total.infinity.any()
    counts = collections.Counter(span.name for span in streamed.timer.spans)
    assert (counts["tail_msm"], counts["msm_merge"], counts["msm_reduce"]) == (4, 3, 1)
    one = msm_hook(
        whole, plugin.cuzk_upload(whole, bases, purpose), ints_to_limbs(ks, 4), None, "t"
    )
    assert one.equals(total)


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("lanes", [1, 5])
def test_the_batch_affine_first_pass_sums_as_the_xyzz_pass(name, group, lanes, monkeypatch):
    """The profile's msm.batch_lanes_g1/g2 on (the run and lane floors lowered): an MSM over
    bases with known logarithms sums to Σ kᵢ·logᵢ·G. A quarter of the points come three times,
    as P, P and −P with one scalar, so they meet in a bucket: doublings and P + (−P) in a lane.
    Infinity bases, and scalars 0, 1 and r − 1 are among random ones; 2^16 points keep several
    entries in every lane."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    overrides = {"backend": name, f"msm.batch_lanes_{group}": lanes}
    ctx = BackendContext(name, load_profile("h200", overrides))
    rng = random.Random(f"batch:{group}:{lanes}")
    n, quarter = 1 << 16, 1 << 14
    logs = [rng.randrange(1, FR_MODULUS) for _ in range(2 * quarter)]
    logs += logs[:quarter] + [FR_MODULUS - x for x in logs[: quarter - 3]] + [0, 0, 0]
    ks = [0, 1, FR_MODULUS - 1] + [rng.randrange(FR_MODULUS) for _ in range(2 * quarter - 3)]
    ks += ks[:quarter] + ks[: quarter - 3] + [rng.randrange(FR_MODULUS) for _ in range(3)]
    assert len(logs) == len(ks) == n
    fixed, msm_hook, generator = {
        "g1": (plugin.cuzk_fixed_base_g1, plugin.cuzk_msm_g1, G1_GENERATOR),
        "g2": (plugin.cuzk_fixed_base_g2, plugin.cuzk_msm_g2, G2_GENERATOR),
    }[group]
    bases = fixed(ctx, generator, ints_to_limbs(logs, 4))
    monkeypatch.setattr(msm, "BATCH_MIN_RUN", 1)
    monkeypatch.setattr(msm, "BATCH_MIN_LANES", {"g1": 1, "g2": 1})
    total = msm_hook(ctx, bases, ints_to_limbs(ks, 4), None, "t")
    expected = sum(k * x for k, x in zip(ks, logs, strict=True)) % FR_MODULUS
    want = fixed(ctx, generator, ints_to_limbs([expected], 4))
    assert np.array_equal(total.coords, want.coords)
    assert np.array_equal(total.infinity, want.infinity)


@pytest.mark.parametrize("name", PLUGINS)
def test_a_resident_window_table_serves_msms_that_ask_for_none(name):
    """A profile without tables (an A/B's other side) gets the resident table's first rows as
    its bases: no upload, no rebuild, and the table is still there for the profile that wants
    it. Both sum to Σ kᵢ·logᵢ·G."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    storage = {"backend": name, "memory.key_storage": "device"}
    tables = BackendContext(name, load_profile("h200", {**storage, "msm.table_bits.a": 16}))
    plain = BackendContext(name, load_profile("h200", storage))
    rng = random.Random(f"plain-view:{name}")
    n = 1 << 10
    logs = [rng.randrange(1, FR_MODULUS) for _ in range(n - 2)] + [0, 1]
    ks = [rng.randrange(FR_MODULUS) for _ in range(n - 2)] + [FR_MODULUS - 1, 1]
    bases = plugin.cuzk_fixed_base_g1(tables, G1_GENERATOR, ints_to_limbs(logs, 4))
    expected = sum(k * x for k, x in zip(ks, logs, strict=True)) % FR_MODULUS
    want = plugin.cuzk_fixed_base_g1(tables, G1_GENERATOR, ints_to_limbs([expected], 4))
    with_table = plugin.cuzk_upload(tables, bases, "a")
    assert with_table.table_bits == 16
    view = plugin.cuzk_upload(plain, bases, "a")
    assert view.table_bits == 0 and view.coords is with_table.coords and view.resident
    for ctx, handle in ((plain, view), (tables, plugin.cuzk_upload(tables, bases, "a"))):
        total = plugin.cuzk_msm_g1(ctx, handle, ints_to_limbs(ks, 4), None, "a")
        assert np.array_equal(total.coords, want.coords)
    assert plugin.cuzk_upload(tables, bases, "a") is with_table  # kept, not rebuilt
    builds = [s for s in plain.timer.spans + tables.timer.spans if s.name == "window_table"]
    assert len(builds) <= 1  # the first upload's, if its timer keeps spans


@pytest.mark.parametrize("name", PLUGINS)
def test_a_window_table_of_fewer_windows_is_built_grown_and_viewed(name):
    """``msm.table_windows``: a table of 4 of a 16-bit table's 16 windows holds 4 copies of the
    bases; a profile asking for all 16 rebuilds it; one asking for 5 then gets the first 5
    windows' rows of that table, not a build. Every one sums to Σ kᵢ·logᵢ·G."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    tables = {"backend": name, "memory.key_storage": "device", "msm.table_bits.a": 16}
    context = {
        k: BackendContext(name, load_profile("h200", {**tables, **extra}))
        for k, extra in ((4, {"msm.table_windows.a": 4}), (16, {}), (5, {"msm.table_windows.a": 5}))
    }
    rng = random.Random(f"fewer-windows:{name}")
    n = 1 << 10
    logs = [rng.randrange(1, FR_MODULUS) for _ in range(n - 2)] + [0, 1]
    ks = [rng.randrange(FR_MODULUS) for _ in range(n - 2)] + [FR_MODULUS - 1, 1 << 200]
    bases = plugin.cuzk_fixed_base_g1(context[16], G1_GENERATOR, ints_to_limbs(logs, 4))
    expected = sum(k * x for k, x in zip(ks, logs, strict=True)) % FR_MODULUS
    want = plugin.cuzk_fixed_base_g1(context[16], G1_GENERATOR, ints_to_limbs([expected], 4))
    handles = {}
    for k, ctx in context.items():
        handles[k] = handle = plugin.cuzk_upload(ctx, bases, "a")
        assert (handle.table_bits, handle.table_windows, len(handle.coords)) == (16, k, k * n)
        total = plugin.cuzk_msm_g1(ctx, handle, ints_to_limbs(ks, 4), None, "a")
        assert np.array_equal(total.coords, want.coords), k
    assert handles[4].coords.ptr != handles[16].coords.ptr  # grown: a new table
    assert handles[5].coords.ptr == handles[16].coords.ptr  # the larger one's rows


def test_window_tables_hold_the_windows_the_core_counts():
    """The daemon's residency counts a table's windows as the core's TableBits.windows says;
    the kernels build msm.table_windows of them."""
    for bits in range(16, 25):
        assert TableBits.windows(bits) == msm.table_windows(bits)


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("schedule", ["levels", "blocks"])
@pytest.mark.parametrize(
    "defines",
    [
        {"WITNESS_SCALED_ROWS": 0},
        {"WITNESS_SCALED_ROWS": 1},
        {"WITNESS_OP_LANES": 8},
        {"WITNESS_OP_LANES": 2, "WITNESS_SCALED_ROWS": 0},
        {"WITNESS_FLAT_ROWS": 1},
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 8},
        {"WITNESS_FLAT_ROWS": 1, "WITNESS_OP_LANES": 4, "WITNESS_SCALED_ROWS": 0},
        {"WITNESS_SBOX_CHAINS": 0},
        {"WITNESS_SBOX_CHAINS": 0, "WITNESS_SCALED_ROWS": 0, "WITNESS_FLAT_ROWS": 1},
    ],
    ids=[
        "canonical",
        "scaled",
        "8-lanes",
        "2-lanes-canonical",
        "flat",
        "flat-8",
        "flat-4-canonical",
        "every-op-alone",
        "every-op-alone-flat-canonical",
    ],
)
def test_both_witness_kernels_give_the_reference_witness(monkeypatch, name, schedule, defines):
    """``witness_levels`` and ``witness_blocks``, on canonical or per-op scaled rows, a whole
    warp an op or several ops a warp (``WITNESS_OP_LANES``, its groups shuffling apart), each
    row on the lanes or the three as one list (``WITNESS_FLAT_ROWS``), S-box chains as one op
    or every op alone (``WITNESS_SBOX_CHAINS``, read by the host), each give the CPU's
    witness, bit for bit, on programs of several parts (porep-lite paths), one part (a single
    path), random gadgets and rows past a warp."""
    from cuzk_backend_gpu.witness import from_montgomery, run_program
    from cuzk_core.circuits import PorepLite
    from cuzk_core.conformance.checks import GadgetCircuit, WideRowsCircuit
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.evaluate import evaluate_program
    from cuzk_core.witness.replay import replay

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    backend = load_plugins().backend(load_profile("cpu"))
    gpu = plugin.gpu
    monkeypatch.setitem(gpu.defines, "r1cs/witness.cu", defines)
    circuits = (PorepLite(challenges=5, depth=2), PorepLite(1, 3), GadgetCircuit(41, 3))
    for circuit in (*circuits, WideRowsCircuit(2)):  # the last: rows past a warp
        compiled, _ = compile_circuit(backend, circuit, use_cache=False)
        program = compiled.program
        inputs, hints = replay(circuit, program)
        with gpu.scope():
            z = run_program(gpu, program, gpu.to_device(inputs), gpu.to_device(hints), schedule)
            got = from_montgomery(gpu, z).get()
        assert np.array_equal(got, evaluate_program(program, inputs, hints)), circuit.name


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("lane_choices", [(32, 16, 8), (16,)], ids=["lanes-by-width", "16-lanes"])
def test_a_close_call_between_the_witness_kernels_is_timed_on_the_second_run(
    monkeypatch, name, lane_choices
):
    """With the model trusting nothing, the second run times both kernels and keeps the
    faster; every run gives the CPU's witness, at the op lanes the program's width chooses (a
    small program: a warp an op) or at 16 (the kernels built for them)."""
    from cuzk_backend_gpu import witness
    from cuzk_core.circuits import PorepLite
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.evaluate import evaluate_program
    from cuzk_core.witness.replay import replay

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    monkeypatch.setattr(witness, "COST_SLACK", 1 << 40)
    monkeypatch.setattr(witness, "LANE_CHOICES", lane_choices)
    backend = load_plugins().backend(load_profile("cpu"))
    gpu = plugin.gpu
    monkeypatch.setitem(gpu.defines, "r1cs/witness.cu", {})
    circuit = PorepLite(challenges=7, depth=3)
    compiled, _ = compile_circuit(backend, circuit, use_cache=False)
    program = compiled.program
    inputs, hints = replay(circuit, program)
    expected = evaluate_program(program, inputs, hints)
    with gpu.scope():
        loaded = witness.program_on_device(gpu, program)
        assert loaded.close_call
        for _ in range(3):
            z = witness.run_program(gpu, program, gpu.to_device(inputs), gpu.to_device(hints))
            assert np.array_equal(witness.from_montgomery(gpu, z).get(), expected)
        assert witness.op_lanes(gpu, program) == lane_choices[0]
    assert not loaded.close_call and loaded.schedule in witness.SCHEDULES
    assert sorted(loaded.timings) == sorted(witness.SCHEDULES)
    assert all(ms > 0 for ms in loaded.timings.values())
    assert [key[0] for key in loaded.launches] == [loaded.schedule]


@pytest.mark.parametrize("name", PLUGINS)
def test_a_witness_kept_on_the_device_is_the_host_one_to_every_reader(name):
    """With ``for_prover`` the witness stays on the device as a handle (both forms): its host
    copy, the products, the gathered rows and an MSM over its rows equal the host witness's;
    the prover asks for it, and a proof through it verifies."""
    from cuzk_backend_gpu.memory import DeviceScalars
    from cuzk_core.circuits import PorepLite
    from cuzk_core.groth16.prover import keeps_witness, prove
    from cuzk_core.groth16.setup import generate_parameters
    from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
    from cuzk_core.groth16.verifier import verify_proof
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.replay import replay

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    plugins = load_plugins()
    gpu_backend = plugins.backend(load_profile("h200", {"backend": name}), Timer(level=0))
    cpu = plugins.backend(load_profile("cpu"), Timer(level=0))
    assert keeps_witness(gpu_backend)
    circuit = PorepLite(challenges=3, depth=3)
    compiled, _ = compile_circuit(cpu, circuit, use_cache=False)
    program = compiled.program
    inputs, hints = replay(circuit, program)
    host = gpu_backend.witness(program, inputs, hints)
    kept = gpu_backend.witness(program, inputs, hints, for_prover=True)
    assert isinstance(host, np.ndarray) and isinstance(kept, DeviceScalars)
    assert np.array_equal(np.asarray(kept), host) and len(kept) == len(host)
    assert np.array_equal(np.asarray(kept[1 : program.num_inputs]), host[1 : program.num_inputs])
    matrices = compiled.proving_matrices
    for got, want in zip(
        gpu_backend.evaluate_r1cs(matrices, kept), cpu.evaluate_r1cs(matrices, host), strict=True
    ):
        assert np.array_equal(np.asarray(got), want)
    rows = [np.arange(0, len(host), 3), np.array([len(host) - 1, 0, 5])]
    gathered = gpu_backend.gather_scalars(kept, rows, "kept")
    for got, index in zip(gathered, rows, strict=True):
        assert np.array_equal(np.asarray(got), host[index])
    key = generate_parameters(NativeCircuit(circuit).assign(cpu).matrices, seed=7)
    result = prove(gpu_backend, NativeCircuit(circuit), LoadedKey(key), seed=3)
    assert verify_proof(key.vk, result.proof, result.public_inputs) == (True, "")


@pytest.mark.parametrize("name", PLUGINS)
def test_products_kept_on_the_device_give_the_host_arrays_check_and_h(name):
    """With ``for_quotient`` A·z, B·z, C·z stay on the device as handles: they turn into the
    CPU reference's arrays, and the witness check and H take them as they take host arrays
    (a satisfied and an unsatisfied witness)."""
    from cuzk_backend_gpu.memory import DeviceScalars
    from cuzk_core.conformance.inputs import random_r1cs

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    ctx = BackendContext(name, load_profile("h200", {"backend": name}))
    cpu = load_plugins().backend(load_profile("cpu"), Timer(level=0))
    rng = random.Random(17)
    matrices = random_r1cs(rng, 300, 40)
    z = ints_to_limbs([1] + [rng.randrange(FR_MODULUS) for _ in range(39)])
    expected = cpu.evaluate_r1cs(matrices, z)
    kept = plugin.cuzk_evaluate_r1cs(ctx, matrices, z, True)
    assert all(isinstance(p, DeviceScalars) for p in kept)
    for got, want in zip(kept, expected, strict=True):
        assert np.array_equal(np.asarray(got), want)
    domain = EvaluationDomain(9)  # 512 points over 300 rows
    quotient = (domain, domain.generator, 7, True, False)
    h_kept = plugin.cuzk_quotient_on_coset(ctx, *kept, *quotient)
    assert np.array_equal(h_kept, plugin.cuzk_quotient_on_coset(ctx, *expected, *quotient))
    first = cpu.first_unsatisfied(*expected)
    assert first is not None and plugin.cuzk_first_unsatisfied(ctx, *kept) == first
    ab = cpu.quotient_pointwise(expected[0], expected[1], np.zeros_like(expected[0]), scale=1)
    with plugin.gpu.scope():
        satisfied = DeviceScalars(plugin.gpu.to_device(ab))
    assert plugin.cuzk_first_unsatisfied(ctx, kept[0], kept[1], satisfied) == 300


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("lanes", [1, 2, 4, 32])
def test_r1cs_products_with_threads_sharing_a_row_are_the_reference(monkeypatch, name, lanes):
    """``SPMV_LANES`` threads a row (empty, short and dense rows; a last warp partly past the
    rows) give the CPU reference's A·z, B·z, C·z."""
    from cuzk_core.conformance.inputs import random_r1cs

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    monkeypatch.setitem(plugin.gpu.defines, "r1cs/spmv.cu", {"SPMV_LANES": lanes})
    plugins = load_plugins()
    gpu_backend = plugins.backend(load_profile("h200", {"backend": name}), Timer(level=0))
    cpu = plugins.backend(load_profile("cpu"), Timer(level=0))
    rng = random.Random(lanes)
    matrices = random_r1cs(rng, 301, 50)
    z = ints_to_limbs([1] + [rng.randrange(FR_MODULUS) for _ in range(49)])
    got, want = gpu_backend.evaluate_r1cs(matrices, z), cpu.evaluate_r1cs(matrices, z)
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.asarray(g), w)


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("lanes", [1, 2, 32])
def test_repeated_rows_are_copied_from_their_first_and_give_the_reference(monkeypatch, name, lanes):
    """Each row of A, B and C gets as its first the least id (A's rows, then B's, then C's)
    whose row holds the same entries, found on the device (across matrices and indices, empty
    rows included; rows one coefficient or one column off are not repeats); the rows summed are
    the firsts, shortest first, and the products, repeats copied, stay the CPU reference's;
    matrices whose rows are all distinct need no firsts and are summed by length too."""
    from cuzk_backend_gpu import field
    from cuzk_core.conformance.inputs import random_r1cs
    from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    monkeypatch.setitem(plugin.gpu.defines, "r1cs/spmv.cu", {"SPMV_LANES": lanes})
    rng = random.Random(lanes)
    matrices = random_r1cs(rng, 301, 50)
    count, last_col = matrices.num_constraints, matrices.b.num_cols - 1
    a_rows, b_rows = list(matrices.a.rows()), list(matrices.b.rows())
    k = next(
        i for i, row in enumerate(a_rows) if row and row == b_rows[i] and row[-1][0] < last_col
    )
    b_rows[k] = [*b_rows[k][:-1], (b_rows[k][-1][0] + 1, b_rows[k][-1][1])]  # a column moved
    matrices = attrs.evolve(matrices, b=SparseMatrix.from_rows(b_rows, last_col + 1))
    rows = [tuple(r) for m in (matrices.a, matrices.b, matrices.c) for r in m.rows()]
    seen: dict[tuple, int] = {}
    want = np.array([seen.setdefault(row, i) for i, row in enumerate(rows)], np.uint32)
    assert want[count + k] == count + k
    repeats = [i for i in range(3 * count) if want[i] != i and rows[i]]
    assert len(repeats) > 100 and any(want[i] // count != i // count for i in repeats)
    assert any(want[i] // count == i // count for i in repeats)  # within one matrix too
    want_order = sorted(seen.values(), key=lambda i: len(rows[i]))
    assert len({len(rows[i]) for i in want_order}) > 5
    a, b, c = (
        SparseMatrix.from_rows(
            [[(j, i + m + j) for j in range(i % 4 + 1)] for i in range(count)], 50
        )
        for m in (1, 400, 800)
    )
    distinct = R1CSMatrices(num_inputs=2, num_aux=48, num_constraints=count, a=a, b=b, c=c)
    by_length = sorted(range(3 * count), key=lambda i: i % count % 4)
    with plugin.gpu.scope():
        plan = field.row_plan(plugin.gpu, matrices)
        assert plan is not None and plan.first is not None
        assert np.array_equal(plan.first.get(), want)
        assert plan.order.get().tolist() == want_order
        assert field.row_plan(plugin.gpu, matrices) is plan  # once per matrices
        plan = field.row_plan(plugin.gpu, distinct)
        assert plan is not None and plan.first is None
        assert plan.order.get().tolist() == by_length
    plugins = load_plugins()
    gpu_backend = plugins.backend(load_profile("h200", {"backend": name}), Timer(level=0))
    cpu = plugins.backend(load_profile("cpu"), Timer(level=0))
    z = ints_to_limbs([1] + [rng.randrange(FR_MODULUS) for _ in range(49)])
    for m in (matrices, distinct):
        got, want_products = gpu_backend.evaluate_r1cs(m, z), cpu.evaluate_r1cs(m, z)
        for g, w in zip(got, want_products, strict=True):
            assert np.array_equal(np.asarray(g), w)
    # Hashes of 3 bits collide, so rows of other entries meet in a slot: each row's first is
    # itself or a row with its entries, and the products stay the reference's.
    defines = {"SPMV_LANES": lanes, "R1CS_ROW_HASH_MASK": 7}
    monkeypatch.setitem(plugin.gpu.defines, "r1cs/spmv.cu", defines)
    colliding = attrs.evolve(matrices)
    with plugin.gpu.scope():
        plan = field.row_plan(plugin.gpu, colliding)
        assert plan is not None and plan.first is not None
        got_first = plan.first.get()
    assert all(f == i or rows[f] == rows[i] for i, f in enumerate(got_first))
    got, want_products = gpu_backend.evaluate_r1cs(colliding, z), cpu.evaluate_r1cs(colliding, z)
    for g, w in zip(got, want_products, strict=True):
        assert np.array_equal(np.asarray(g), w)


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize(
    ("rows", "longest"),
    [(200, 70_000), (1500, 7), (50, 0)],
    ids=["rows-past-65535", "three-bits-several-tiles", "all-empty"],
)
def test_order_by_length_takes_the_firsts_shortest_first(name, rows, longest):
    """The products' order, made on the device: the ids that are their own first, by their
    row's length (ids ascending within a length; rows of 65535 entries or more as one length),
    across A, B and C; with no repeats, every id. Cases: 16 passes of the radix sort, 3 over
    several scan tiles, none."""
    from cuzk_backend_gpu import field
    from cuzk_core.r1cs import SparseMatrix

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    rng = np.random.default_rng(rows)
    ids = np.arange(3 * rows)
    lengths = rng.integers(0, min(longest, 11) + 1, 3 * rows)
    long_ids = [3, 250, 420, 599] if longest > 0xFFFF else []
    lengths[long_ids] = [70_000, 65_536, 65_535, 65_534][: len(long_ids)]

    def matrix(part: np.ndarray) -> SparseMatrix:
        cols = np.concatenate([np.arange(n) for n in part])
        coeffs = np.zeros((len(cols), 4), np.uint64)
        coeffs[:, 0] = 1
        return SparseMatrix(np.concatenate([[0], np.cumsum(part)]), cols, coeffs, 70_000)

    a, b, c = (matrix(part) for part in np.split(lengths, 3))
    matrices = SimpleNamespace(num_constraints=rows, a=a, b=b, c=c)
    first = np.where(rng.random(3 * rows) < 0.4, ids // 2, ids).astype(np.uint32)
    first[long_ids] = long_ids
    for firsts in (first, ids.astype(np.uint32)):  # some repeats; none
        want = sorted(np.flatnonzero(firsts == ids), key=lambda i: min(lengths[i], 0xFFFF))
        if long_ids:
            assert want[-4:] == [599, 3, 250, 420]  # the longest: one length past 65534
        with plugin.gpu.scope():
            on_device = plugin.gpu.to_device(firsts)
            got = field.order_by_length(plugin.gpu, matrices, on_device).get()  # type: ignore[arg-type]
        assert got.dtype == np.uint32 and got.tolist() == want


@pytest.mark.parametrize("name", PLUGINS)
def test_products_without_a_row_plan_sum_every_row(monkeypatch, name):
    """When the repeats' search would not fit in device memory, the products sum every row of
    each matrix and stay the CPU reference's; the plan is not kept, so a later proof asks
    again."""
    from cuzk_backend_gpu import field
    from cuzk_core.conformance.inputs import random_r1cs

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    rng = random.Random(5)
    matrices = random_r1cs(rng, 301, 50)
    z = ints_to_limbs([1] + [rng.randrange(FR_MODULUS) for _ in range(49)])
    want = load_plugins().backend(load_profile("cpu"), Timer(level=0)).evaluate_r1cs(matrices, z)
    gpu = plugin.gpu
    with gpu.scope():
        z_mont = field.to_montgomery(gpu, gpu.to_device(z))
        with monkeypatch.context() as patch:
            patch.setattr(gpu, "free_bytes", lambda: 0)
            assert field.row_plan(gpu, matrices) is None
            got = [x.get() for x in field.r1cs_products(gpu, matrices, z_mont)]
        assert field.row_plan(gpu, matrices) is not None
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w)


SIGN_BIT = 1 << 31
"""A sorted digit entry's sign (msm/groups.cuh's MSM_SIGN_BIT)."""


def _digit_groups(
    scalars: list[int], c: int, signed: bool, table: int, skip: set[int]
) -> tuple[list[int], list[list[int]]]:
    """Python's digit sort, the oracle of the GPU's: each group's count and entries (point |
    sign bit), groups by (window, bucket) or, with a table of ``table`` windows (0: none), by
    (window // table, bucket), the point window w's multiple w % table."""
    windows, per_window = msm.window_count(c, signed), msm.bucket_count(c, signed)
    sets = -(-windows // table) if table else windows
    groups: list[list[int]] = [[] for _ in range(sets * per_window)]
    n = len(scalars)
    for i, s in enumerate(scalars):
        if i in skip:
            continue
        carry = 0
        for w in range(windows):
            d = ((s >> (w * c)) & ((1 << c) - 1)) + carry
            negative = signed and d > 1 << (c - 1)
            carry = int(negative)
            magnitude = (1 << c) - d if negative else d
            if magnitude:
                point = (w % table) * n + i if table else i
                group = (w // table if table else w) * per_window + magnitude - 1
                groups[group].append(point | (SIGN_BIT if negative else 0))
    return [len(g) for g in groups], groups


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize(
    ("case", "c", "signed", "table"),
    [
        ("random", 16, True, 0),
        ("random", 13, False, 0),
        ("random", 20, True, 13),
        ("random", 16, True, 16),
        ("random", 20, True, 4),
        ("random", 16, False, 5),
        ("edges", 16, True, 3),
        ("random", 7, True, 2),
        ("edges", 8, True, 0),
        ("one value", 12, True, 0),
        ("zeros", 16, True, 0),
    ],
)
def test_the_counting_sort_groups_every_digit_as_python_does(name, case, c, signed, table):
    """msm_sort.counting_sort's offsets, largest group and entries (each group's as a multiset: the
    order inside a group is the atomics') against Python's digits: random scalars, the edges
    (0, 1, r − 1, 2^c − 1, powers of two), one value repeated (every digit of a window in one
    bucket), all zeros (no entries), with skipped points, and over tables of every window and
    of fewer (sets of their windows, the last one short or not)."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    rng = random.Random(f"{case} {c}")
    n = 3001
    values = {
        "random": lambda: [rng.randrange(FR_MODULUS) for _ in range(n)],
        "edges": lambda: [
            rng.choice([0, 1, FR_MODULUS - 1, (1 << c) - 1, 1 << rng.randrange(255)])
            for _ in range(n)
        ],
        "one value": lambda: [FR_MODULUS - 2] * n,
        "zeros": lambda: [0] * n,
    }[case]()
    skip = set(rng.sample(range(n), 40))
    counts, groups = _digit_groups(values, c, signed, table, skip)
    gpu = plugin.gpu
    flags = np.zeros(n, np.uint8)
    flags[sorted(skip)] = 1
    with gpu.scope():
        scalars = gpu.to_device(ints_to_limbs(values).view(np.uint32).reshape(n, 8))
        got = msm_sort.counting_sort(gpu, scalars, gpu.to_device(flags), c, signed, table)
        if sum(counts) == 0:
            assert got is None
            return
        assert got is not None
        offsets, entries = got.offsets.get(), got.entries.get()
    assert got.total == sum(counts) and got.max_count == max(counts)
    assert offsets.tolist() == [0, *itertools.accumulate(counts)]
    for g, want in enumerate(groups):
        assert sorted(entries[offsets[g] : offsets[g + 1]].tolist()) == sorted(want), g


class _Handle:
    """A stand-in owner for msm_sort.SortShare: any object a weak reference can follow."""


def test_a_kept_sort_serves_only_its_scalars_key_and_width():
    """msm_sort.SortShare gives a kept sort back only for the same scalars' owner and key, offers
    its width only for all n rows, no table, and a width the caller allows; an MSM over other
    scalars drops it, and so does its owner's end, but not a newer owner's sort."""
    share = msm_sort.SortShare()
    a, b = _Handle(), _Handle()
    key = msm_sort.SortKey(0, 1000, 20, True, 0, True)
    sort = msm_sort.SortedDigits(np.zeros(3, np.uint32), np.zeros(5, np.uint32), 5, 4)
    assert share.find(a, key) is None and share.width(a, 1000, {16, 20}) is None
    share.keep(a, key, sort)
    assert share.find(a, key) is sort
    assert share.find(b, key) is None
    assert share.find(a, key._replace(c=16)) is None
    assert share.find(a, key._replace(split_01=False)) is None
    assert share.width(a, 1000, {16, 20}) == 20
    assert share.width(a, 1000, {16}) is None  # a width neither group's rule picks
    assert share.width(a, 2000, {16, 20}) is None  # the kept sort covers other rows
    assert share.width(b, 1000, {16, 20}) is None
    share.begin(a)
    assert share.find(a, key) is sort
    share.begin(b)
    assert share.find(a, key) is None
    share.keep(a, key._replace(table_windows=13), sort)
    assert share.width(a, 1000, {16, 20}) is None  # a table's width is the table's
    share.keep(b, key, sort)
    del a  # a's weak reference ends: b's sort, kept after it, stays
    assert share.find(b, key) is sort
    del b
    assert share.find(_Handle(), key) is None and share._kept is None


def test_sorts_ahead_start_with_a_pass_and_serve_their_own_scalars_and_key():
    """msm_sort.SortShare runs queued sorts only once a pass's own sort has ended (on its own
    thread), hands one to an MSM over its owner and key after every sort ahead has finished,
    and keeps it; passes leave out the bytes of the others' sorts ahead. A sort ahead under
    another key, one that found no room (None), one queued but not begun when its MSM begins,
    and one whose owner ended are dropped, not served; one that failed otherwise fails its MSM."""
    share = msm_sort.SortShare()
    a, b, c, d, e = (_Handle() for _ in range(5))
    key = msm_sort.SortKey(0, 1000, 20, True, 0, True)
    sort_a = msm_sort.SortedDigits(np.zeros(3, np.uint32), np.zeros(5, np.uint32), 5, 4)
    ran: list[tuple[str, str]] = []
    release = threading.Event()

    def sort_of(name: str, result: object):
        def sort() -> msm_sort.SortedDigits | None:
            ran.append((name, threading.current_thread().name))
            release.wait(5)
            if isinstance(result, Exception):
                raise result
            return result  # type: ignore[return-value]

        return sort

    share.queue(a, key, sort_of("a", sort_a), 100)
    share.queue(b, key._replace(c=16), sort_of("b", sort_a), 20)
    share.queue(c, key, sort_of("c", None), 3)  # no room on the device
    share.queue(e, key, sort_of("e", RuntimeError("illegal address")), 1)
    assert share.reserved() == 124 and share.reserved(a) == 24
    assert share.find(d, key) is None and not ran  # queued, not begun: a pass starts them
    share.start_queued()
    share.queue(d, key, sort_of("d", sort_a), 7)  # queued after the start: for the next pass
    assert share.reserved() == 131
    release.set()
    assert share.find(a, key) is sort_a  # waits for the others too
    assert [r[0] for r in ran] == ["a", "b", "c", "e"]
    assert all(r[1].startswith("cuzk-sort-ahead") for r in ran)
    assert share.find(a, key) is sort_a and share.reserved() == 31  # now the kept sort
    assert share.find(b, key) is None  # sorted ahead under 16 bits, asked under 20: dropped
    assert share.find(b, key._replace(c=16)) is None
    assert share.find(c, key) is None  # no room: the MSM sorts for itself
    with pytest.raises(RuntimeError, match="illegal address"):
        share.find(e, key)
    assert share.find(d, key) is None  # its MSM began before a pass started it: dropped
    share.queue(b, key, sort_of("b", sort_a), 5)
    del b  # its owner ended before a pass started it
    share.start_queued()
    assert [r[0] for r in ran] == ["a", "b", "c", "e"] and share.reserved() == 0


def test_a_sort_held_for_a_pass_is_not_asked_for_twice():
    """msm_sort.SortShare.held gives the bytes of a finished sort kept or sorted ahead for the
    same scalars' owner and key (memory a pass under that key takes over instead of
    allocating): none for a queued or running one, one that found no room, another owner or
    another key."""
    share = msm_sort.SortShare()
    a, b = _Handle(), _Handle()
    key = msm_sort.SortKey(0, 1000, 20, True, 7, True)
    sort = msm_sort.SortedDigits(np.zeros(3, np.uint32), np.zeros(5, np.uint32), 5, 4)
    running = threading.Event()
    share.queue(a, key, lambda: running.wait(5) and sort, 100)
    share.queue(b, key, lambda: None, 100)  # found no room
    assert share.held(a, key) == 0  # not begun: dropped when its MSM begins
    share.start_queued()
    assert share.held(a, key) == 0  # still running
    running.set()
    concurrent.futures.wait([ahead.future for ahead in share._ahead])
    assert share.held(a, key) == 3 * 4 + 5 * 4 and share.held(b, key) == 0
    assert share.held(a, key._replace(table_windows=4)) == 0
    assert share.find(a, key) is sort  # taken: now the kept sort
    assert share.held(a, key) == 3 * 4 + 5 * 4 and share.held(b, key) == 0


def _proofs_and_kept_sorts(name: str, changes: dict[bool, dict]) -> tuple[dict, dict]:
    """A small PorepLite proof on GPU backend ``name`` under h200 with each of ``changes``
    (by key), verified: its bytes and, per MSM phase, whether each msm_sort span in it took a
    kept sort."""
    from cuzk_core.circuits import PorepLite
    from cuzk_core.groth16.prover import prove
    from cuzk_core.groth16.setup import generate_parameters
    from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
    from cuzk_core.groth16.verifier import verify_proof

    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    plugins = load_plugins()
    cpu = plugins.backend(load_profile("cpu"), Timer(level=0))
    circuit = PorepLite(challenges=3, depth=3)
    key = generate_parameters(NativeCircuit(circuit).assign(cpu).matrices, seed=7)
    proofs, kept = {}, {}
    for on, change in changes.items():
        timer = Timer(level=0)
        backend = plugins.backend(load_profile("h200", {"backend": name, **change}), timer)
        result = prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=3)
        assert verify_proof(key.vk, result.proof, result.public_inputs) == (True, "")
        proofs[on] = result.proof.to_bytes()
        sorts = [s for s in timer.spans if s.name == "msm_sort"]
        kept[on] = {
            phase.name: [s.attrs["kept"] for s in sorts if phase.start <= s.start <= phase.end]
            for phase in timer.spans
            if phase.is_phase and phase.name.startswith("msm_")
        }
    return proofs, kept


@pytest.mark.parametrize("name", PLUGINS)
def test_a_proofs_msms_named_ahead_take_their_sorts_and_prove_the_same_bytes(name):
    """With ``msm.sorts_ahead`` a proof's B·G2, A and Σl take the sorts the prover named ahead
    (their msm_sort spans say kept), B·G1 B·G2's; H sorts for itself. The proof's bytes are
    those of a proof with every sort done in its MSM, which verifies."""
    changes = {on: {"msm.share_sorts": on, "msm.sorts_ahead": on} for on in (False, True)}
    proofs, kept = _proofs_and_kept_sorts(name, changes)
    assert proofs[True] == proofs[False]
    phases = ("msm_h", "msm_b_g2", "msm_b_g1", "msm_a", "msm_l")
    assert kept[False] == {phase: [False] for phase in phases}
    assert kept[True] == {"msm_h": [False], **{phase: [True] for phase in phases[1:]}}


@pytest.mark.parametrize("name", PLUGINS)
def test_msms_over_window_tables_take_their_sorts_ahead_too(name):
    """With B's bases in window tables of fewer windows (as h100-tables keeps them), B·G2
    still takes the sort named ahead for it, over its table, and B·G1 the one B·G2 kept (the
    same bits and windows); A and Σl theirs. The bytes are those of the same tables with every
    sort done in its MSM."""
    tables = {
        **{f"msm.table_bits.{m}": 16 for m in ("b_g1", "b_g2")},
        **{f"msm.table_windows.{m}": 5 for m in ("b_g1", "b_g2")},
    }
    changes = {on: {"msm.share_sorts": on, "msm.sorts_ahead": on, **tables} for on in (False, True)}
    proofs, kept = _proofs_and_kept_sorts(name, changes)
    assert proofs[True] == proofs[False]
    phases = ("msm_h", "msm_b_g2", "msm_b_g1", "msm_a", "msm_l")
    assert kept[False] == {phase: [False] for phase in phases}
    assert kept[True] == {"msm_h": [False], **{phase: [True] for phase in phases[1:]}}


@pytest.mark.parametrize("name", PLUGINS)
def test_b_g1_takes_b_g2s_sort_and_proves_the_same_bytes(name):
    """With ``msm.share_sorts`` a proof's B·G1 takes the sort B·G2 kept for their common
    scalars (its msm_sort span says so; no other MSM's does), and the proof's bytes are those
    of a proof with every sort done fresh, which verifies."""
    # the sorts ahead (on in h200) would hand every named MSM a sort: the share alone here
    changes = {on: {"msm.share_sorts": on, "msm.sorts_ahead": False} for on in (False, True)}
    proofs, kept = _proofs_and_kept_sorts(name, changes)
    assert proofs[True] == proofs[False]
    fresh = {phase: [False] for phase in ("msm_h", "msm_a", "msm_b_g2", "msm_b_g1", "msm_l")}
    assert kept[False] == fresh
    assert kept[True] == {**fresh, "msm_b_g1": [True]}
