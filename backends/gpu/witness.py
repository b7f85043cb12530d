"""A compiled circuit's witness program on the GPU, and the witness check (r1cs/witness.cu).

The program's tables go to the device once per program object and stay there; each proof then
uploads only its inputs and hints, and every level runs in one persistent launch. Which of the two
kernels runs a program is picked by a model of their op latencies; where the model's call is
close, the program's second run in the process times both and keeps the faster (a process that
makes one proof never pays for the timing). How many lanes run one op follows the program's
width: a warp an op, unless an average level holds more ops than the block kernel has warps
resident.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.witness.chains import program_sbox_heads
from cuzk_core.witness.program import BIT, HINT, SOLVE, WitnessProgram

from .driver import DeviceArray, EventClock, Gpu, GpuError
from .field import matrix_on_device, upload_bytes
from .witness_chains import without_chain_tails
from .witness_schedule import BlockSchedule, block_schedule, least_block_cost, level_cost

_R = FR_MODULUS
_R3 = pow(1 << 256, 3, _R)
_MODULE = "r1cs/witness.cu"
_OP_BYTES = 64  # an op_t row: eight int64
THREADS = 128
"""Threads per block of the witness kernels (the kernel's WITNESS_THREADS, unless a define
changes it)."""
SCALED_ROWS = 1
"""The kernel's WITNESS_SCALED_ROWS default: whether the kernels read A and C scaled per op."""
OP_LANES = 32
"""The kernel's WITNESS_OP_LANES default: the lanes of a warp that run one op together (the
schedules count these groups as their "warps"), and the lanes at which ``LANE_CHOICES``
counts the resident blocks."""
LANE_CHOICES = (32, 16, 8)
"""The op lanes a program's kernels run with, unless a ``WITNESS_OP_LANES`` define sets them:
the most of these that still give every op of an average level a group of its own among the
block kernel's resident blocks (fewer lanes sum an op's rows in more rounds, but more ops run at
once). On the H100, porep-lite c2165 d32 (2^24, ~2,700 ops a level against 1,584 groups of 32)
ran the block kernel in 26.1 ms at 32 lanes, 17.4 at 16, 17.3 at 8 and 22.5 at 4; c135 d32
(2^20, ~170 ops a level) in 7.7 ms at 32, 9.3 at 16 (bench/NOTES.md, round 32)."""
SBOX_CHAINS = 1
"""Whether the kernels run each S-box chain (x², x⁴, x⁵) as one op (witness_chains.py); a
``WITNESS_SBOX_CHAINS`` define overrides it (the host reads it, the kernels ignore it)."""
OP_SBOX = 3
"""The op_t kind of a chain's first op (witness.cuh's OP_SBOX)."""


SCHEDULES = ("levels", "blocks")
"""The witness kernels: ``witness_levels`` (every level across the device, a grid-wide barrier
between) and ``witness_blocks`` (each block its own independent parts; witness_schedule.py)."""
COST_SLACK = 3
"""How far the op-latency model is trusted: its pick stands when the other kernel costs more
than this times as much; closer than that, the program's second run times both. (On the H200 a
latency cost 0.49–0.69 of a level as a block's step, and at 2^24 blocks costed 1.9× the levels
ran 7.5% faster: bench/NOTES.md, round 27.)"""
CHOICE_ROUNDS = 2
"""Timed runs of each kernel, alternating, when a run chooses: the faster's best wins."""
_COMPARE_ROWS = 1 << 20
"""z rows brought to the host at once when the two kernels' results are compared (32 MiB)."""


@attrs.define(eq=False)
class DeviceProgram:
    """A witness program's tables on the device, and the kernel that runs it."""

    rows: dict[tuple[bool, bool], tuple[DeviceArray, ...]]
    """Columns and coefficients of A, B, C and ``lin`` in the kernels' argument order, per
    (scaled, chains): canonical (False, False), and once made, with A and C scaled per op of the
    op table (True, and whether that table runs S-box chains as one op)."""
    inv_r3: DeviceArray
    """The SOLVE ops' inverses times R³."""
    hint_aux: DeviceArray
    hint_slot: DeviceArray
    num_hints: int
    schedule: str
    """The kernel that runs the program when none is asked for (one of ``SCHEDULES``): the
    model's pick, until a run has timed both."""
    close_call: bool
    """Whether the model's pick is within ``COST_SLACK`` and no run has timed both yet."""
    launches: dict[tuple[str, str], tuple[int, tuple[DeviceArray, ...]]]
    """Per schedule and the kernels' defines, once uploaded: its blocks and its op tables in
    its argument order."""
    lanes: dict[str, int] = attrs.Factory(dict)
    """The op lanes ``LANE_CHOICES`` gave the program, per the kernel file's defines when asked
    (they change the residency and the kernel program the choice reads)."""
    chained: WitnessProgram | None = None
    """The program without its S-box chains' tails (witness_chains.py), once a run needs it."""
    heads: np.ndarray | None = None
    """The chains' first ops, beside ``chained``."""
    runs: int = 0
    """Runs by the program's own kernel so far."""
    timings: dict[str, float] = attrs.Factory(dict)
    """Device ms per kernel from the run that timed both (empty while the model's pick stands)."""

    @property
    def times_next_run(self) -> bool:
        """Whether the next run without a kernel asked for times both kernels: the second run
        of a close call."""
        return self.close_call and self.runs > 0


def op_table(program: WitnessProgram, heads: np.ndarray | None = None) -> np.ndarray:
    """The non-hint ops in level order as the kernel's ``op_t`` rows: aux, kind | extra << 8,
    and the entry ranges of the rows they read (a BIT op's ``lin`` row in A's place). The ops
    at ``heads`` (:mod:`cuzk_core.witness.chains`) are ``OP_SBOX`` rows that read their B row
    only."""
    aux = program.level_ops
    kind, arg = program.kind[aux].astype(np.int64), program.arg[aux]
    table = np.zeros((len(aux), _OP_BYTES // 8), dtype=np.int64)
    table[:, 0] = aux
    table[:, 1] = kind | program.extra[aux] << 8
    solve, bit = kind == SOLVE, kind == BIT
    m = program.matrices
    for column, matrix in ((2, m.a), (4, m.b), (6, m.c)):
        table[solve, column] = matrix.indptr[arg[solve]]
        table[solve, column + 1] = matrix.indptr[arg[solve] + 1]
    table[bit, 2] = program.lin.indptr[arg[bit]]
    table[bit, 3] = program.lin.indptr[arg[bit] + 1]
    if heads is not None and len(heads):
        chain = np.zeros(program.num_aux, dtype=bool)
        chain[heads] = True
        chain = chain[aux]
        table[chain, 1] = OP_SBOX | program.extra[aux[chain]] << 8
        table[chain, 2] = table[chain, 3]  # A and C empty
        table[chain, 6] = table[chain, 7]
    return table


def _threads(gpu: Gpu) -> int:
    threads = int(gpu.defines.get(_MODULE, {}).get("WITNESS_THREADS", THREADS))
    if threads < 32 or threads % 32:  # blocks of whole warps: op groups and their shuffle masks
        raise GpuError(f"WITNESS_THREADS {threads}: the witness kernels need whole warps of 32")
    return threads


def _lanes(gpu: Gpu, loaded: DeviceProgram, view: WitnessProgram) -> int:
    """The op lanes ``loaded``'s kernels run with: a ``WITNESS_OP_LANES`` define's, else the
    program's own, chosen for ``view`` (its kernel program) on first asking."""
    defined = gpu.defines.get(_MODULE, {}).get("WITNESS_OP_LANES")
    if defined is None:
        key = _defines_key(gpu)
        if key not in loaded.lanes:
            loaded.lanes[key] = _chosen_lanes(gpu, view)
        return loaded.lanes[key]
    lanes = int(defined)
    if lanes not in (1, 2, 4, 8, 16, 32):
        raise GpuError(f"WITNESS_OP_LANES {lanes}: a power of two from 1 to 32")
    return lanes


def _chosen_lanes(gpu: Gpu, view: WitnessProgram) -> int:
    """The most of ``LANE_CHOICES`` whose op groups, on the block kernel's resident blocks (at
    32 lanes), are at least as many as the ops of ``view``'s average level; the fewest when
    none are."""
    resident = _blocks_resident(gpu, OP_LANES) * _threads(gpu)
    width = math.ceil(len(view.level_ops) / max(1, view.num_levels))
    return next((n for n in LANE_CHOICES if width * n <= resident), LANE_CHOICES[-1])


def _solver(gpu: Gpu, function: str, lanes: int) -> object:
    """A witness kernel built for ``lanes`` op lanes (the file's other defines as they are)."""
    defines = dict(gpu.defines.get(_MODULE, {}))
    if lanes != int(defines.get("WITNESS_OP_LANES", OP_LANES)):
        defines["WITNESS_OP_LANES"] = lanes
    return gpu.kernel(_MODULE, function, defines)


def _kernel_rows(
    gpu: Gpu, view: WitnessProgram, loaded: DeviceProgram, ops: DeviceArray
) -> tuple[DeviceArray, ...]:
    """The rows the kernels read under the current defines: with ``WITNESS_SCALED_ROWS`` (the
    default), copies of A and C scaled per op by ``witness_scale_rows``, made once from ``ops``
    (a launch's op table of ``view``, the kernel program: every op once, in any order; an
    S-box chain's rows are left as they are, as its op reads only B)."""
    scaled = _scaled_rows(gpu)
    key = (scaled, scaled and _sbox_chains(gpu))
    found = loaded.rows.get(key)
    if found is None:
        a_cols, a, b_cols, b, c_cols, c, lin_cols, lin = loaded.rows[False, False]
        a_out, c_out = gpu.copy(a), gpu.copy(c)
        count = len(view.level_ops)
        gpu.launch(
            gpu.kernel(_MODULE, "witness_scale_rows"),
            count,
            (ops, np.uint64(count), a, c, loaded.inv_r3, a_out, c_out),
        )
        found = loaded.rows[key] = (a_cols, a_out, b_cols, b, c_cols, c_out, lin_cols, lin)
    return found


def _level_blocks(gpu: Gpu, program: WitnessProgram, lanes: int) -> int:
    """``witness_levels``' blocks: an op group per op of an average level, at most what is
    resident at once (its grid-wide barrier needs every block running)."""
    threads = _threads(gpu)
    fits = gpu.resident_threads(_solver(gpu, "witness_levels", lanes), threads) // threads
    width = math.ceil(len(program.level_ops) / max(1, program.num_levels))
    return max(1, min(math.ceil(width * lanes / threads), fits))


def _blocks_resident(gpu: Gpu, lanes: int) -> int:
    """Blocks of ``witness_blocks`` resident at once: a schedule's most (more would run after
    them, not beside)."""
    threads = _threads(gpu)
    return gpu.resident_threads(_solver(gpu, "witness_blocks", lanes), threads) // threads


def _scaled_rows(gpu: Gpu) -> bool:
    return bool(gpu.defines.get(_MODULE, {}).get("WITNESS_SCALED_ROWS", SCALED_ROWS))


def _sbox_chains(gpu: Gpu) -> bool:
    return bool(gpu.defines.get(_MODULE, {}).get("WITNESS_SBOX_CHAINS", SBOX_CHAINS))


def kernel_program(
    gpu: Gpu, program: WitnessProgram, loaded: DeviceProgram
) -> tuple[WitnessProgram, np.ndarray | None]:
    """The program the kernels schedule under the current defines, and its S-box chains' first
    ops (None: every op runs alone)."""
    if not _sbox_chains(gpu):
        return program, None
    if loaded.chained is None:
        loaded.heads = program_sbox_heads(program)
        loaded.chained = without_chain_tails(program, loaded.heads)
    assert loaded.heads is not None
    return loaded.chained, loaded.heads


def program_bytes(gpu: Gpu, program: WitnessProgram) -> int:
    """Device bytes ``program_on_device`` takes for ``program``: the rows not yet on the device
    (a compiled file's rows come as one upload of the whole file), the op table (the block
    kernel's order, steps and warps take less than the table again) and, with scaled rows,
    copies of A's and C's coefficients. (A run that times both kernels asks for its own.)"""
    m = program.matrices
    rows = upload_bytes(gpu, (m.a, m.b, m.c, program.lin))
    table = len(program.level_ops) * _OP_BYTES
    hints = int(np.count_nonzero(program.kind == HINT)) * 16
    scaled = m.a.coeffs.nbytes + m.c.coeffs.nbytes if _scaled_rows(gpu) else 0
    return rows + 2 * table + hints + scaled


def program_on_device(gpu: Gpu, program: WitnessProgram) -> DeviceProgram:
    """``program``'s tables on the device, uploaded once per program object, with the tables of
    the kernel the model picks; GpuError up front when they cannot fit."""
    cache = gpu.cache("witness programs")
    found = cache.get(program)
    if found is None:
        gpu.ensure_fits(program_bytes(gpu, program), "the witness program's tables")
        m = program.matrices
        rows = [matrix_on_device(gpu, matrix)[1:] for matrix in (m.a, m.b, m.c, program.lin)]
        # Per distinct coefficient, not per op: a few values for any circuit.
        inv_r3 = ints_to_limbs([v * _R3 % _R for v in limbs_to_ints(program.inverses)])
        hint_aux = np.flatnonzero(program.kind == HINT).astype(np.int64)
        found = DeviceProgram(
            rows={(False, False): tuple(array for pair in rows for array in pair)},
            inv_r3=gpu.to_device(inv_r3.reshape(-1, 4)),
            hint_aux=gpu.to_device(hint_aux),
            hint_slot=gpu.to_device(program.arg[hint_aux].astype(np.int64)),
            num_hints=len(hint_aux),
            schedule="levels",
            close_call=False,
            launches={},
        )
        view, _ = kernel_program(gpu, program, found)
        lanes = _lanes(gpu, found, view)
        groups = _threads(gpu) // lanes
        levels = level_cost(view, _level_blocks(gpu, view, lanes) * groups)
        fits = _blocks_resident(gpu, lanes)
        least = least_block_cost(view, fits, groups) if view.num_levels else levels + 1
        # The schedule costs ~0.15 s a million ops: found now only when it may run first.
        blocks = block_schedule(view, fits, groups) if least <= levels else None
        found.schedule = "blocks" if blocks is not None and blocks.cost <= levels else "levels"
        cost = blocks.cost if blocks is not None else least
        # The least cost is a floor: blocks beyond the slack by it are beyond by any.
        found.close_call = levels <= COST_SLACK * cost and cost <= COST_SLACK * levels
        cache[program] = found
        if program.num_levels:
            _, tables = _launch_tables(gpu, program, found, found.schedule, blocks)
            _kernel_rows(gpu, view, found, tables[0])
    return found


def _launch_tables(
    gpu: Gpu,
    program: WitnessProgram,
    loaded: DeviceProgram,
    schedule: str,
    blocks: BlockSchedule | None = None,
) -> tuple[int, tuple[DeviceArray, ...]]:
    """The blocks and op tables ``schedule``'s kernel runs ``program`` with (its kernel program
    under the current defines: ``blocks`` is that one's), uploaded once."""
    key = _launch_key(gpu, schedule)
    found = loaded.launches.get(key)
    if found is None:
        view, heads = kernel_program(gpu, program, loaded)
        table = op_table(view, heads)
        lanes = _lanes(gpu, loaded, view)
        tables: tuple[DeviceArray, ...]
        if schedule == "levels":
            tables = (gpu.to_device(table), loaded.inv_r3, gpu.to_device(view.level_ptr))
            found = (_level_blocks(gpu, view, lanes), tables)
        else:
            if blocks is None:
                groups = _threads(gpu) // lanes
                blocks = block_schedule(view, _blocks_resident(gpu, lanes), groups)
            tables = (
                gpu.to_device(table[blocks.order]),
                loaded.inv_r3,
                gpu.to_device(blocks.step),
                gpu.to_device(blocks.warp_ptr),
                gpu.to_device(blocks.block_steps),
            )
            found = (blocks.blocks, tables)
        loaded.launches[key] = found
    return found


def _launch_key(gpu: Gpu, schedule: str) -> tuple[str, str]:
    # A tuning run's defines may change the block size and the blocks resident.
    return schedule, _defines_key(gpu)


def _defines_key(gpu: Gpu) -> str:
    return repr(sorted(gpu.defines.get(_MODULE, {}).items()))


def op_lanes(gpu: Gpu, program: WitnessProgram) -> int:
    """The op lanes ``program``'s kernels run with under the current defines."""
    loaded = program_on_device(gpu, program)
    return _lanes(gpu, loaded, kernel_program(gpu, program, loaded)[0])


def run_program(
    gpu: Gpu,
    program: WitnessProgram,
    inputs: DeviceArray,
    hints: DeviceArray,
    schedule: str | None = None,
) -> DeviceArray:
    """The witness ``z`` in Montgomery form on the device, from device inputs and hints, by
    ``schedule``'s kernel (one of ``SCHEDULES``), or when None by the program's own (timing
    both first if ``times_next_run``)."""
    if schedule not in (None, *SCHEDULES):
        raise ValueError(f"witness schedule {schedule!r}: one of {', '.join(SCHEDULES)}")
    loaded = program_on_device(gpu, program)
    if not program.num_levels:
        return _started(gpu, program, loaded, inputs, hints)
    if schedule is None:
        if loaded.times_next_run:
            return _choose(gpu, program, loaded, inputs, hints)
        schedule = loaded.schedule
        loaded.runs += 1
    z = _started(gpu, program, loaded, inputs, hints)
    _solve(gpu, program, loaded, schedule, z)
    return z


def _started(
    gpu: Gpu,
    program: WitnessProgram,
    loaded: DeviceProgram,
    inputs: DeviceArray,
    hints: DeviceArray,
) -> DeviceArray:
    """A fresh z holding the inputs and hints; every computed entry 0, as the kernels need."""
    num_inputs = program.num_inputs
    z = gpu.zeros((num_inputs + program.num_aux, 4), np.uint64)
    gpu.launch(
        gpu.kernel(_MODULE, "witness_start"),
        num_inputs + loaded.num_hints,
        (
            inputs,
            np.uint64(num_inputs),
            hints,
            loaded.hint_aux,
            loaded.hint_slot,
            np.uint64(loaded.num_hints),
            z,
        ),
    )
    return z


def _solve(
    gpu: Gpu, program: WitnessProgram, loaded: DeviceProgram, schedule: str, z: DeviceArray
) -> None:
    """Every computed entry of a started ``z``, by ``schedule``'s kernel."""
    blocks, tables = _launch_tables(gpu, program, loaded, schedule)
    view, _ = kernel_program(gpu, program, loaded)
    rows = _kernel_rows(gpu, view, loaded, tables[0])
    threads, lanes = _threads(gpu), _lanes(gpu, loaded, view)
    num_inputs = np.uint64(program.num_inputs)
    if schedule == "blocks":
        gpu.launch(
            _solver(gpu, "witness_blocks", lanes),
            blocks * threads,
            (*rows, *tables, z, num_inputs),
            block=threads,
        )
        return
    sync = gpu.zeros((2,), np.uint32)
    ops, inv_r3, level_ptr = tables
    gpu.launch(
        _solver(gpu, "witness_levels", lanes),
        blocks * threads,
        (*rows, ops, inv_r3, level_ptr, np.uint64(view.num_levels), z, num_inputs, sync),
        block=threads,
    )
    if sync.get()[1]:
        raise GpuError(
            f"{gpu.name} backend: the witness kernel's {blocks} blocks were not all resident "
            "at once (it waited 10 s at a level barrier)"
        )


def _choose(
    gpu: Gpu,
    program: WitnessProgram,
    loaded: DeviceProgram,
    inputs: DeviceArray,
    hints: DeviceArray,
) -> DeviceArray:
    """This run's z, by both kernels ``CHOICE_ROUNDS`` times each, alternating, with the device
    otherwise idle as far as this thread can tell (its queued work finished first): the faster
    one's best time makes it the program's kernel, and the two z must agree bit for bit. Where
    both kernels' tables cannot fit, the model's pick stays untimed. Whatever happens, the
    choice is made once: a failure (GpuError naming the first entry where the kernels disagree,
    or the device's own) leaves the model's pick, and the other kernel's tables are freed."""
    z_bytes = (program.num_inputs + program.num_aux) * 32
    view, _ = kernel_program(gpu, program, loaded)
    # the other kernel's op table with its steps, and a second z
    if gpu.free_bytes() < 2 * len(view.level_ops) * _OP_BYTES + z_bytes:
        loaded.close_call = False
        return run_program(gpu, program, inputs, hints)
    clock = EventClock(gpu)
    z: dict[str, DeviceArray] = {}
    chosen = loaded.schedule
    loaded.timings.clear()
    try:
        for schedule in SCHEDULES:  # tables and rows ready before anything is timed
            _kernel_rows(gpu, view, loaded, _launch_tables(gpu, program, loaded, schedule)[1][0])
        gpu.synchronize()
        for _ in range(CHOICE_ROUNDS):
            for schedule in SCHEDULES:
                z.pop(schedule, None)
                z[schedule] = _started(gpu, program, loaded, inputs, hints)
                _, ms = clock.time(lambda s=schedule: _solve(gpu, program, loaded, s, z[s]))
                loaded.timings[schedule] = min(ms, loaded.timings.get(schedule, ms))
        differs = _first_difference(z["levels"], z["blocks"])
        if differs is not None:
            raise GpuError(
                f"{gpu.name} backend: the witness kernels disagree at z[{differs}] "
                f"(witness_levels against witness_blocks, {len(view.level_ops)} ops)"
            )
        chosen = min(SCHEDULES, key=loaded.timings.__getitem__)
        return z[chosen]
    except BaseException:
        loaded.timings.clear()
        raise
    finally:
        loaded.schedule, loaded.close_call = chosen, False
        loaded.runs += 1
        for schedule in SCHEDULES:
            if schedule != chosen:
                loaded.launches.pop(_launch_key(gpu, schedule), None)


def _first_difference(x: DeviceArray, y: DeviceArray) -> int | None:
    """The first row where two device arrays of one shape differ, or None; a slice at a time."""
    for start in range(0, len(x), _COMPARE_ROWS):
        stop = min(len(x), start + _COMPARE_ROWS)
        unequal = np.flatnonzero((x[start:stop].get() != y[start:stop].get()).any(axis=1))
        if len(unequal):
            return start + int(unequal[0])
    return None


def from_montgomery(gpu: Gpu, z_mont: DeviceArray) -> DeviceArray:
    """A canonical copy of device scalars in Montgomery form."""
    out = gpu.copy(z_mont)
    count = out.shape[0]
    gpu.launch(gpu.kernel(_MODULE, "witness_from_mont"), count, (out, np.uint64(count)))
    return out


def first_unsatisfied(gpu: Gpu, a: DeviceArray, b: DeviceArray, c: DeviceArray) -> int:
    """The first row with ``a·b ≠ c`` (canonical device scalars), or the row count."""
    count = a.shape[0]
    first = gpu.to_device(np.array([count], dtype=np.uint64))
    gpu.launch(
        gpu.kernel(_MODULE, "witness_first_unsatisfied"),
        count,
        (a, b, c, np.uint64(count), first),
    )
    return int(first.get()[0])
