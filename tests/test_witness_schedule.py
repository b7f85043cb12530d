"""The witness program's parts on blocks (backends/gpu/witness_schedule.py), checked on the host:
what ``witness_blocks`` relies on is that every op a block runs reads only ops of its own block
at earlier steps, and that each warp's ops come in step order."""

from __future__ import annotations

import random
import weakref

import numpy as np
import pytest

from cuzk_backend_gpu.driver import MAPPED_FILES, GpuError
from cuzk_backend_gpu.witness_schedule import (
    BlockSchedule,
    block_schedule,
    least_block_cost,
    level_cost,
)
from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.checks import GadgetCircuit, TinyCircuit
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.witness.compiled import compile_circuit
from cuzk_core.witness.parts import independent_parts, joining_pairs, program_parts
from cuzk_core.witness.program import HINT, WitnessProgram


def _program(circuit) -> WitnessProgram:
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, circuit, use_cache=False)
    assert compiled.program is not None, compiled.problem
    return compiled.program


def _reads_by_definition(program: WitnessProgram) -> list[set[int]]:
    """Per op (position in level_ops), the positions of the computed ops it reads, op by op."""
    position = {int(aux): i for i, aux in enumerate(program.level_ops)}
    m, n_in = program.matrices, program.num_inputs
    reads = []
    for aux in program.level_ops.tolist():
        row = int(program.arg[aux])
        matrices = (m.a, m.b, m.c) if program.kind[aux] != 2 else (program.lin,)
        cols = {c for mat in matrices for c in mat.cols[mat.indptr[row] : mat.indptr[row + 1]]}
        read = {int(c) - n_in for c in cols if c >= n_in and c - n_in != aux}
        reads.append({position[r] for r in read if program.kind[r] != HINT})
    return reads


def _check(program: WitnessProgram, schedule: BlockSchedule) -> tuple[np.ndarray, np.ndarray]:
    """The schedule's promises, by definition; returns each op's block and step."""
    count = len(program.level_ops)
    assert sorted(schedule.order.tolist()) == list(range(count))  # every op, once
    warps = schedule.warps
    assert len(schedule.warp_ptr) == schedule.blocks * warps + 1
    assert schedule.warp_ptr[0] == 0 and schedule.warp_ptr[-1] == count
    block = np.empty(count, dtype=np.int64)
    step = np.empty(count, dtype=np.int64)
    for warp in range(schedule.blocks * warps):
        lo, hi = schedule.warp_ptr[warp : warp + 2]
        steps = schedule.step[lo:hi].tolist()
        assert steps == sorted(steps)  # a warp runs its ops in step order
        assert all(0 <= s < schedule.block_steps[warp // warps] for s in steps)
        block[schedule.order[lo:hi]] = warp // warps
        step[schedule.order[lo:hi]] = steps
    for op, reads in enumerate(_reads_by_definition(program)):
        for read in reads:
            assert block[read] == block[op] and step[read] < step[op], (op, read)
    # The ops of a step go round its block's warps in level-list order.
    warp_of = np.empty(count, dtype=np.int64)
    for warp in range(schedule.blocks * warps):
        warp_of[schedule.order[schedule.warp_ptr[warp] : schedule.warp_ptr[warp + 1]]] = warp
    for b, s in set(zip(block.tolist(), step.tolist(), strict=True)):
        ops = np.flatnonzero((block == b) & (step == s))
        assert (warp_of[ops] == b * warps + np.arange(len(ops)) % warps).all()
    # The cost: per block, each step's ops over the warps.
    cost = [0] * schedule.blocks
    for b in range(schedule.blocks):
        for s in range(int(schedule.block_steps[b])):
            width = int(np.sum((block == b) & (step == s)))
            assert width > 0  # a step is one of the block's levels
            cost[b] += -(-width // warps)
    assert schedule.cost == max(cost)
    return block, step


@pytest.mark.parametrize(("max_blocks", "warps"), [(1, 4), (2, 1), (3, 4), (64, 2)])
def test_porep_lite_paths_are_its_parts_and_each_block_runs_its_own(max_blocks, warps):
    program = _program(PorepLite(challenges=3, depth=2))
    schedule = block_schedule(program, max_blocks, warps)
    block, _ = _check(program, schedule)
    assert schedule.blocks == min(max_blocks, 3)  # one part per challenge's path
    # The paths are alike: a block of one path takes every level, one op a step at most
    # beside the full rounds' S-boxes.
    assert schedule.block_steps.max() == program.num_levels
    if max_blocks >= 3:
        assert schedule.cost <= level_cost(program, 1)
    if max_blocks == 1:
        assert (block == 0).all() and schedule.cost == level_cost(program, warps)


@pytest.mark.parametrize("structure", [3, 17, 40, 41])
def test_random_gadget_programs_schedule_by_definition(structure):
    program = _program(GadgetCircuit(structure, 0))
    for max_blocks, warps in ((1, 1), (2, 4), (7, 2), (1000, 4)):
        schedule = block_schedule(program, max_blocks, warps)
        _check(program, schedule)
        assert least_block_cost(program, max_blocks, warps) <= schedule.cost


def test_keys_sorted_or_counted_give_one_schedule(monkeypatch):
    """Sparse (block, level) keys go through ``np.unique``, dense ones are counted: the same
    schedule either way."""
    from cuzk_backend_gpu import witness_schedule

    program = _program(PorepLite(challenges=3, depth=2))
    counted = block_schedule(program, 3, 2)
    monkeypatch.setattr(witness_schedule, "COUNTED_KEYS", -1000)  # every bound sorts
    sorted_ = block_schedule(program, 3, 2)
    for field in ("order", "step", "warp_ptr", "block_steps"):
        assert np.array_equal(getattr(counted, field), getattr(sorted_, field)), field
    assert counted.cost == sorted_.cost
    _check(program, sorted_)


def test_the_least_block_cost_is_a_floor_that_can_be_reached():
    program = _program(PorepLite(challenges=4, depth=2))
    for max_blocks, warps in ((1, 1), (2, 1), (4, 4), (64, 1)):
        floor = least_block_cost(program, max_blocks, warps)
        assert floor <= block_schedule(program, max_blocks, warps).cost
    # one path a block, warps for every step's ops: the floor is the levels, and is met
    assert least_block_cost(program, 4, 32) == program.num_levels
    assert block_schedule(program, 4, 32).cost == program.num_levels


def _parts_one_edge_at_a_time(count: int, edges: list[tuple[int, int]]) -> list[int]:
    """The smallest op of each op's part, by union-find one edge at a time."""
    parent = list(range(count))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for u, v in edges:
        a, b = sorted((root(u), root(v)))
        parent[b] = a
    return [root(x) for x in range(count)]


@pytest.mark.parametrize("seed", range(8))
def test_independent_parts_match_union_find(seed):
    rng = random.Random(seed)
    count = rng.randrange(1, 300)
    shape = seed % 4
    if shape == 0:  # random reads of earlier ops, repeats included
        edges = [(j, rng.randrange(j)) for j in range(1, count) for _ in range(rng.randrange(3))]
    elif shape == 1:  # one chain, read backwards: the slowest case for the labels
        edges = [(j, j - 1) for j in range(1, count)]
    elif shape == 2:  # interleaved chains
        edges = [(j, j - 3) for j in range(3, count)]
    else:  # a few long-range reads
        edges = [(rng.randrange(count), rng.randrange(count)) for _ in range(count // 10)]
    reader = np.array([u for u, _ in edges], dtype=np.int64)
    read = np.array([v for _, v in edges], dtype=np.int64)
    expected = _parts_one_edge_at_a_time(count, edges)
    assert independent_parts(count, [(reader, read)]).tolist() == expected
    batches = [(reader[i : i + 7], read[i : i + 7]) for i in range(0, len(reader), 7)]
    assert independent_parts(count, batches).tolist() == expected


@pytest.mark.parametrize("chunk_entries", [1, 5, 1 << 22])
def test_joining_pairs_give_the_parts_of_the_reads(chunk_entries):
    """The pairs (a shared ``lin`` row read once, its other BIT ops paired with the first)
    join exactly the ops that reads join, however the entries are chunked."""
    programs = [_program(PorepLite(challenges=2, depth=2)), _program(GadgetCircuit(41, 3))]
    for program in programs:
        count = len(program.level_ops)
        edges = [(op, r) for op, reads in enumerate(_reads_by_definition(program)) for r in reads]
        pairs = list(joining_pairs(program, chunk_entries))
        for reader, read in pairs:
            assert (reader != read).all() and (reader >= 0).all() and (read >= 0).all()
        got = independent_parts(count, pairs)
        assert got.tolist() == _parts_one_edge_at_a_time(count, edges)


def test_a_program_of_hints_only_gets_an_empty_schedule():
    program = _program(TinyCircuit(5, steps=4))
    assert program.num_levels == 0
    schedule = block_schedule(program, 8, 4)
    assert schedule.cost == 0 and schedule.warp_ptr.tolist() == [0] * 5
    assert schedule.block_steps.tolist() == [0] and len(schedule.order) == 0


class _HostArray(np.ndarray):
    """A numpy array standing for a device array: ``get`` is its host copy."""

    def get(self) -> np.ndarray:
        return np.array(self)


class _Built(str):
    """A kernel's name, with the defines it was built with (None: the file's own)."""

    defines: dict | None


class _TablesOnHost:
    """What ``program_on_device`` and ``run_program`` ask of a GPU, with numpy arrays for
    device arrays and a fixed residency: enough to see which kernel runs and the tables it
    gets. A witness kernel fills the computed entries of z with 7 (``wrong_at`` makes the
    block kernel put 9 at one entry), and each takes the device ms in ``kernel_ms``."""

    def __init__(self, levels_resident: int, blocks_resident: int) -> None:
        self.defines: dict = {}
        self.launches: list[str] = []
        self.built: list[dict | None] = []
        self.residency_asked: list[tuple[str, dict | None]] = []
        self.launched: list[tuple[str, dict | None, int]] = []
        self.launch_args: list[tuple] = []
        self._caches: dict = {}
        self._resident = {"witness_levels": levels_resident, "witness_blocks": blocks_resident}
        self.free = 1 << 40
        self.synchronized = 0
        self.timing = False
        self.kernel_ms = {"witness_levels": 2.0, "witness_blocks": 1.0}
        self.wrong_at: int | None = None
        self.name = "host"

    def cache(self, name: str) -> weakref.WeakKeyDictionary:
        return self._caches.setdefault(name, weakref.WeakKeyDictionary())

    def to_device(self, host: np.ndarray) -> np.ndarray:
        assert not self.timing, "an upload inside a timed kernel run"
        return np.array(host).view(_HostArray)

    shared_copy = copy = to_device

    def zeros(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        return np.zeros(shape, dtype).view(_HostArray)

    def kernel(self, module: str, function: str, defines: dict | None = None) -> str:
        built = _Built(function)
        built.defines = self.defines.get(module) if defines is None else defines
        self.built.append(built.defines)
        return built

    def free_bytes(self) -> int:
        return self.free

    def ensure_fits(self, needed: int, what: str) -> None:
        if needed > self.free:
            raise GpuError(f"{what} needs {needed} bytes, {self.free} are free")

    def synchronize(self) -> None:
        self.synchronized += 1

    def resident_threads(self, function: str, block: int) -> int:
        self.residency_asked.append((str(function), getattr(function, "defines", None)))
        return self._resident[function]

    def launch(self, function: str, threads: int, args: tuple, block: int = 256) -> None:
        self.launches.append(function)
        self.launched.append((str(function), getattr(function, "defines", None), threads))
        self.launch_args.append(args)
        if function in self.kernel_ms:
            z, num_inputs = (args[-3], args[-2]) if function == "witness_levels" else args[-2:]
            z[int(num_inputs) :] = 7
            if function == "witness_blocks" and self.wrong_at is not None:
                z[self.wrong_at] = 9


class _ClockOnHost:
    """``EventClock`` for :class:`_TablesOnHost`: the ms of the kernel the work launched."""

    def __init__(self, gpu: _TablesOnHost) -> None:
        self._gpu = gpu

    def time(self, work):
        self._gpu.timing = True
        try:
            result = work()
        finally:
            self._gpu.timing = False
        return result, self._gpu.kernel_ms[self._gpu.launches[-1]]


def _run(gpu: _TablesOnHost, program: WitnessProgram):
    from cuzk_backend_gpu.witness import run_program

    inputs = np.zeros((program.num_inputs, 4), np.uint64)
    hints = np.zeros((int(np.count_nonzero(program.kind == HINT)), 4), np.uint64)
    gpu.launches.clear()
    return run_program(gpu, program, inputs, hints)


def test_the_model_picks_the_kernel_and_times_nothing_when_one_clearly_waits_less(monkeypatch):
    """Levels when no block schedule comes within COST_SLACK of them (the parts not even
    looked for when none can), blocks when they wait less than a third; no run times both."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import op_table, program_on_device

    searched = []
    monkeypatch.setattr(
        witness, "block_schedule", lambda *args: searched.append(1) or block_schedule(*args)
    )
    monkeypatch.setattr(witness, "EventClock", None)  # the model's choices time nothing
    # the level kernel one warp wide, the block kernel a warp for each of the eight paths
    program = _program(PorepLite(challenges=8, depth=2))
    blocks_win = _TablesOnHost(32, 1 << 16)
    blocks_win.defines["r1cs/witness.cu"] = {"WITNESS_THREADS": 32}
    loaded = program_on_device(blocks_win, program)
    assert loaded.schedule == "blocks" and not loaded.close_call
    ((blocks, tables),) = loaded.launches.values()
    view, heads = witness.kernel_program(blocks_win, program, loaded)
    assert heads is not None and len(heads) == 8 * 2 * 80  # the S-boxes of 16 hashes
    schedule = block_schedule(view, 1 << 11, 1)
    assert schedule.cost * witness.COST_SLACK < level_cost(view, 1)
    assert blocks == schedule.blocks == 8
    assert np.array_equal(tables[0], op_table(view, heads)[schedule.order])
    assert blocks_win.launches == ["witness_scale_rows"]  # the scaled rows, made once
    assert blocks_win.launch_args[0][0] is tables[0]  # from the launch's op table
    assert program_on_device(blocks_win, program) is loaded
    for _ in range(2):
        _run(blocks_win, program)
        assert blocks_win.launches == ["witness_start", "witness_blocks"]
    # one warp of the block kernel resident, many of the level kernel's: no block schedule
    # comes close, and the parts are not even looked for
    scarce = _TablesOnHost(1 << 16, 32)  # (a warp's lanes an op, as defined)
    scarce.defines["r1cs/witness.cu"] = {"WITNESS_THREADS": 32, "WITNESS_OP_LANES": 32}
    searched.clear()
    loaded = program_on_device(scarce, program)
    assert loaded.schedule == "levels" and not loaded.close_call and not searched
    assert [k[0] for k in loaded.launches] == ["levels"]
    for _ in range(2):
        _run(scarce, program)
        assert scarce.launches == ["witness_start", "witness_levels"]


@pytest.mark.parametrize("faster", ["levels", "blocks"])
def test_a_close_call_is_timed_on_the_second_run_and_the_faster_kept(monkeypatch, faster):
    """The first run takes the model's pick alone (a one-proof process pays nothing more); the
    second times each kernel twice, alternating, on a fresh z each, and returns the faster's z;
    the other kernel's tables are dropped and every later run takes only the faster."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import program_on_device

    monkeypatch.setattr(witness, "EventClock", _ClockOnHost)
    program = _program(PorepLite(challenges=3, depth=2))
    gpu = _TablesOnHost(1 << 16, 1 << 16)
    slower = "blocks" if faster == "levels" else "levels"
    gpu.kernel_ms = {f"witness_{faster}": 1.5, f"witness_{slower}": 1.6}
    loaded = program_on_device(gpu, program)
    picked = loaded.schedule
    assert loaded.close_call and not loaded.times_next_run
    assert [k[0] for k in loaded.launches] == [picked]
    _run(gpu, program)
    assert gpu.launches == ["witness_start", f"witness_{picked}"] and loaded.times_next_run
    z = _run(gpu, program)
    rounds = ["witness_start", "witness_levels", "witness_start", "witness_blocks"]
    assert gpu.launches == rounds * witness.CHOICE_ROUNDS  # rows scaled once, tables made
    assert gpu.synchronized == 1  # the device idle before the first timed run
    assert loaded.schedule == faster and loaded.timings == {faster: 1.5, slower: 1.6}
    assert not loaded.close_call and [k[0] for k in loaded.launches] == [faster]
    assert (z[program.num_inputs :] == 7).all()
    _run(gpu, program)
    assert gpu.launches == ["witness_start", f"witness_{faster}"]


def test_a_close_call_the_model_gives_the_levels_finds_the_blocks_only_to_time_them(monkeypatch):
    """Where the block schedule's floor already costs more than the levels (within the slack),
    the first run takes the levels without looking for the parts; the second finds them and
    builds the block kernel's tables before anything is timed."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import program_on_device

    searched = []
    monkeypatch.setattr(
        witness, "block_schedule", lambda *args: searched.append(1) or block_schedule(*args)
    )
    monkeypatch.setattr(witness, "EventClock", _ClockOnHost)
    program = _program(PorepLite(challenges=3, depth=2))
    gpu = _TablesOnHost(1 << 16, 64)  # two one-warp blocks of the block kernel resident
    gpu.defines["r1cs/witness.cu"] = {"WITNESS_THREADS": 32, "WITNESS_OP_LANES": 32}
    loaded = program_on_device(gpu, program)
    assert loaded.schedule == "levels" and loaded.close_call and not searched
    _run(gpu, program)
    assert not searched
    gpu.kernel_ms = {"witness_levels": 2.0, "witness_blocks": 1.0}
    _run(gpu, program)
    assert searched == [1] and loaded.schedule == "blocks"


def test_kernels_that_disagree_are_an_error_naming_the_entry_once(monkeypatch):
    """A disagreement fails that run with the first differing entry; the choice is then made
    (the model's pick, the other kernel's tables freed), so no later run times again."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import program_on_device

    monkeypatch.setattr(witness, "EventClock", _ClockOnHost)
    monkeypatch.setattr(witness, "_COMPARE_ROWS", 4)  # the difference in a later slice
    program = _program(PorepLite(challenges=3, depth=2))
    gpu = _TablesOnHost(1 << 16, 1 << 16)
    gpu.wrong_at = program.num_inputs + 9
    loaded = program_on_device(gpu, program)
    picked = loaded.schedule
    _run(gpu, program)
    with pytest.raises(GpuError, match=rf"the witness kernels disagree at z\[{gpu.wrong_at}\]"):
        _run(gpu, program)
    assert not loaded.times_next_run and loaded.schedule == picked and not loaded.timings
    assert [k[0] for k in loaded.launches] == [picked]
    _run(gpu, program)
    assert gpu.launches == ["witness_start", f"witness_{picked}"]


def test_a_failed_or_unaffordable_timing_leaves_the_models_pick(monkeypatch):
    """A device failure while timing settles the choice like a disagreement; without memory
    for the other kernel's tables and a second z the model's pick runs untimed."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import program_on_device

    monkeypatch.setattr(witness, "EventClock", _ClockOnHost)
    program = _program(PorepLite(challenges=3, depth=2))
    gpu = _TablesOnHost(1 << 16, 1 << 16)
    loaded = program_on_device(gpu, program)
    picked = loaded.schedule
    _run(gpu, program)
    del gpu.kernel_ms["witness_levels"]  # the clock cannot read the level kernel's time
    with pytest.raises(KeyError):
        _run(gpu, program)
    assert not loaded.times_next_run and loaded.schedule == picked and not loaded.timings
    assert [k[0] for k in loaded.launches] == [picked]

    short = _TablesOnHost(1 << 16, 1 << 16)
    loaded = program_on_device(short, program)
    _run(short, program)
    view, _ = witness.kernel_program(short, program, loaded)
    short.free = 2 * len(view.level_ops) * 64  # a second z does not fit beside the tables
    _run(short, program)
    assert short.launches == ["witness_start", f"witness_{loaded.schedule}"]
    assert not loaded.times_next_run and not loaded.timings


def test_narrower_op_groups_give_the_schedules_more_warps_a_block():
    """With ``WITNESS_OP_LANES`` below 32 a block of 128 threads holds 128 / lanes op groups:
    the block schedule deals over that many, and the level kernel needs fewer blocks for a
    level's ops. A width that is not a power of two up to 32 is refused by name."""
    from cuzk_backend_gpu.witness import (
        _launch_tables,
        _level_blocks,
        kernel_program,
        program_on_device,
    )

    program = _program(PorepLite(challenges=40, depth=2))
    wide = _TablesOnHost(1 << 16, 1 << 16)
    width = -(-len(program.level_ops) // program.num_levels)  # an average level's ops
    assert _level_blocks(wide, program, 32) == -(-width // 4) > 1
    assert _level_blocks(wide, program, 8) == -(-width // 16)
    wide.defines["r1cs/witness.cu"] = {"WITNESS_OP_LANES": 8}
    loaded = program_on_device(wide, program)
    blocks, tables = _launch_tables(wide, program, loaded, "blocks")
    schedule = block_schedule(kernel_program(wide, program, loaded)[0], (1 << 16) // 128, 16)
    assert blocks == schedule.blocks
    assert len(tables[3]) == blocks * 16 + 1  # warp_ptr over the groups
    assert np.array_equal(tables[3], schedule.warp_ptr)
    for lanes in (3, 64):
        odd = _TablesOnHost(1 << 16, 1 << 16)
        odd.defines["r1cs/witness.cu"] = {"WITNESS_OP_LANES": lanes}
        with pytest.raises(GpuError, match=f"WITNESS_OP_LANES {lanes}: a power of two"):
            program_on_device(odd, program)


def test_the_op_lanes_are_the_most_that_give_every_op_of_a_level_its_own_group(monkeypatch):
    """Without a ``WITNESS_OP_LANES`` define a program's kernels run with the most lanes of
    ``LANE_CHOICES`` whose groups, over the block kernel's resident blocks (asked of its 32-lane
    build), cover an average level's ops (the fewest when none do), chosen once per set of
    defines; narrower lanes are their own build, which both kernels' residency, blocks and
    launches then use. A define overrides the choice."""
    from cuzk_backend_gpu import witness
    from cuzk_backend_gpu.witness import (
        _launch_tables,
        kernel_program,
        op_lanes,
        program_on_device,
        run_program,
    )

    monkeypatch.setattr(witness, "EventClock", _ClockOnHost)  # a close call's second run
    program = _program(PorepLite(challenges=40, depth=2))
    probe = _TablesOnHost(1 << 16, 1 << 16)
    view, _ = kernel_program(probe, program, program_on_device(probe, program))
    width = -(-len(view.level_ops) // view.num_levels)
    assert width > 16
    fits = [-(-width * lanes // 128) for lanes in (32, 16)]  # blocks of 128 threads
    cases = ((32, fits[0]), (16, fits[0] - 1), (16, fits[1]), (8, fits[1] - 1), (8, 1))
    inputs = np.zeros((program.num_inputs, 4), np.uint64)
    hints = np.zeros((int(np.count_nonzero(program.kind == HINT)), 4), np.uint64)
    for lanes, blocks_resident in cases:
        gpu = _TablesOnHost(1 << 16, blocks_resident * 128)
        build = {} if lanes == 32 else {"WITNESS_OP_LANES": lanes}
        program_on_device(gpu, program)
        assert gpu.residency_asked[0] == ("witness_blocks", {}), blocks_resident  # the rule's
        assert all(asked == build for _, asked in gpu.residency_asked[1:])
        assert op_lanes(gpu, program) == lanes, blocks_resident
        loaded = program_on_device(gpu, program)
        blocks, tables = _launch_tables(gpu, program, loaded, "blocks")
        assert len(tables[3]) == blocks * (128 // lanes) + 1  # warp_ptr over the groups
        for schedule in ("levels", "blocks"):
            gpu.launched.clear()
            run_program(gpu, program, inputs, hints, schedule)
            function, built, threads = gpu.launched[-1]
            assert function == f"witness_{schedule}" and built == build
            if schedule == "levels":  # an op group per op of an average level
                assert threads == 128 * min(-(-width * lanes // 128), (1 << 16) // 128)
        gpu._resident["witness_blocks"] = 1 << 20  # later runs keep the program's lanes
        for _ in range(3):
            _run(gpu, program)
            assert gpu.launched[-1][1] == build
        assert op_lanes(gpu, program) == lanes
    # Other defines are another choice: 64 threads a block, as many blocks resident, half the
    # groups: the program that took 32 lanes takes 16 under them.
    gpu = _TablesOnHost(1 << 16, fits[0] * 128)
    assert op_lanes(gpu, program) == 32
    gpu.defines["r1cs/witness.cu"] = {"WITNESS_THREADS": 64}
    gpu._resident["witness_blocks"] = fits[0] * 64
    assert op_lanes(gpu, program) == 16
    _run(gpu, program)
    assert gpu.launched[-1][1] == {"WITNESS_THREADS": 64, "WITNESS_OP_LANES": 16}
    pinned = _TablesOnHost(1 << 16, 128)
    pinned.defines["r1cs/witness.cu"] = {"WITNESS_OP_LANES": 32}
    assert op_lanes(pinned, program) == 32 and not program_on_device(pinned, program).lanes
    _run(pinned, program)
    assert pinned.launched[-1][1] == {"WITNESS_OP_LANES": 32}


def test_a_program_that_cannot_fit_is_refused_before_any_upload():
    from cuzk_backend_gpu.witness import program_bytes, program_on_device

    program = _program(PorepLite(challenges=3, depth=2))
    gpu = _TablesOnHost(1 << 16, 1 << 16)
    needed = program_bytes(gpu, program)
    m = program.matrices
    coefficients = sum(x.coeffs.nbytes for x in (m.a, m.b, m.c, program.lin))
    assert needed > coefficients + m.a.coeffs.nbytes + m.c.coeffs.nbytes  # scaled copies too
    gpu.defines["r1cs/witness.cu"] = {"WITNESS_SCALED_ROWS": 0}
    assert program_bytes(gpu, program) == needed - m.a.coeffs.nbytes - m.c.coeffs.nbytes
    gpu.defines.clear()
    gpu.free = needed - 1
    with pytest.raises(GpuError, match="the witness program's tables needs"):
        program_on_device(gpu, program)
    assert not gpu.launches and not gpu.cache("witness programs")
    gpu.free = needed
    assert program_on_device(gpu, program).launches


def test_the_compile_stores_the_parts_and_a_load_checks_them(tmp_path, monkeypatch):
    """A compiled circuit on disk carries its program's parts (a fresh process does not search
    them again); a program without them (from a file written before, or never stored) gets them
    found; parts that are not root labels are refused as corrupted."""
    import attrs

    from cuzk_core.witness import compiled as compiled_module
    from cuzk_core.witness import store

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})
    fresh = _program(PorepLite(challenges=3, depth=2))
    assert fresh.parts is None
    found = program_parts(fresh)
    assert len(np.unique(found)) == 3
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=3, depth=2))
    assert compiled.program.parts is not None
    assert np.array_equal(program_parts(compiled.program), found)
    path = tmp_path / "p.cuzkc"
    store.save(path, "d", compiled.program, compiled.proving_matrices)
    loaded, proving = store.load(path, "d")
    assert np.array_equal(loaded.parts, found)
    pointing_at_a_member = found.copy()
    pointing_at_a_member[0] = np.flatnonzero(found != np.arange(len(found)))[0]
    for bad in (found[:-1], found + len(found), pointing_at_a_member):
        with pytest.raises(ValueError, match="parts"):
            store._check_bounds(attrs.evolve(loaded, parts=bad), proving)


def test_program_bytes_count_a_compiled_file_as_one_upload(tmp_path, monkeypatch):
    """A program read from its compiled file has its rows uploaded as the whole file, once
    (``shared_copy``): counted as the file's size, and not at all once the file is resident."""
    from cuzk_backend_gpu.mapped import mapping_of
    from cuzk_backend_gpu.witness import program_bytes
    from cuzk_core.witness import compiled as compiled_module
    from cuzk_core.witness.compiled import compiled_path

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})  # read from this folder's file
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=3, depth=2))
    program, gpu = compiled.program, _TablesOnHost(1 << 16, 1 << 16)
    m = program.matrices
    table = len(program.level_ops) * 64
    rest = 2 * table + int(np.count_nonzero(program.kind == HINT)) * 16
    rest += m.a.coeffs.nbytes + m.c.coeffs.nbytes  # the scaled copies
    size = compiled_path(compiled.digest).stat().st_size
    assert program_bytes(gpu, program) == size + rest
    (mapping, _) = mapping_of(m.a.coeffs)
    gpu.cache(MAPPED_FILES)[mapping] = object()
    assert program_bytes(gpu, program) == rest


def test_the_products_count_only_what_is_not_on_the_device_yet(tmp_path, monkeypatch):
    """The R1CS products' fit check asks for the matrices not yet on the device and the row
    plan until it is made: a compiled circuit's proving matrices are views of the file the
    witness program uploaded, so once it is resident they ask for nothing more (round 42: the
    whole file counted again refused a 2^24 proof that fitted on an H100)."""
    from cuzk_backend_gpu.field import matrix_on_device, products_table_bytes
    from cuzk_backend_gpu.mapped import mapping_of
    from cuzk_core.witness import compiled as compiled_module
    from cuzk_core.witness.compiled import compiled_path

    loose = _program(PorepLite(challenges=3, depth=2)).matrices
    gpu = _TablesOnHost(1 << 16, 1 << 16)
    plan = 24 * loose.num_constraints
    arrays = [(x.indptr, x.cols, x.coeffs) for x in (loose.a, loose.b, loose.c)]
    sizes = [sum(a.nbytes for a in three) for three in arrays]
    assert products_table_bytes(gpu, loose) == sum(sizes) + plan
    matrix_on_device(gpu, loose.b)
    assert products_table_bytes(gpu, loose) == sizes[0] + sizes[2] + plan
    gpu.cache("row_plans")[loose] = None
    assert products_table_bytes(gpu, loose) == sizes[0] + sizes[2]

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})  # read from this folder's file
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=3, depth=2))
    proving = compiled.proving_matrices
    plan = 24 * proving.num_constraints
    size = compiled_path(compiled.digest).stat().st_size
    assert products_table_bytes(gpu, proving) == size + plan
    (mapping, _) = mapping_of(proving.a.cols)
    gpu.cache(MAPPED_FILES)[mapping] = object()  # the witness program's upload
    assert products_table_bytes(gpu, proving) == plan
