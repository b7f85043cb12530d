"""A compiled circuit's witness program on the GPU, and the witness check (r1cs/witness.cu).

The program's tables go to the device once per program object and stay there; each proof then
uploads only its inputs and hints, and every level runs in one persistent launch.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.witness.program import BIT, HINT, SOLVE, WitnessProgram

from .driver import DeviceArray, Gpu, GpuError
from .field import matrix_on_device
from .mapped import mapping_of
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
"""The kernel's WITNESS_OP_LANES default: the lanes of a warp that run one op together. The
schedules count these groups as their "warps"."""


SCHEDULES = ("levels", "blocks")
"""The witness kernels: ``witness_levels`` (every level across the device, a grid-wide barrier
between) and ``witness_blocks`` (each block its own independent parts; witness_schedule.py)."""


@attrs.frozen(eq=False)
class DeviceProgram:
    """A witness program's tables on the device, and the kernel that runs it."""

    rows: dict[bool, tuple[DeviceArray, ...]]
    """Columns and coefficients of A, B, C and ``lin`` in the kernels' argument order: canonical
    (False), and once made, with A and C scaled per op (True; ``WITNESS_SCALED_ROWS``)."""
    inv_r3: DeviceArray
    """The SOLVE ops' inverses times R³."""
    hint_aux: DeviceArray
    hint_slot: DeviceArray
    num_hints: int
    schedule: str
    """The kernel that runs the program when none is asked for: one of ``SCHEDULES``."""
    launches: dict[tuple[str, str], tuple[int, tuple[DeviceArray, ...]]]
    """Per schedule and the kernels' defines, once uploaded: its blocks and its op tables in
    its argument order."""


def op_table(program: WitnessProgram) -> np.ndarray:
    """The non-hint ops in level order as the kernel's ``op_t`` rows: aux, kind | extra << 8,
    and the entry ranges of the rows they read (a BIT op's ``lin`` row in A's place)."""
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
    return table


def _threads(gpu: Gpu) -> int:
    threads = int(gpu.defines.get(_MODULE, {}).get("WITNESS_THREADS", THREADS))
    if threads < 32 or threads % 32:  # a whole warp's shuffle mask at 32 lanes an op
        raise GpuError(f"WITNESS_THREADS {threads}: the witness kernels need whole warps of 32")
    return threads


def _groups(gpu: Gpu) -> int:
    """Op groups a block (``WITNESS_OP_LANES`` lanes each): the schedules' warps."""
    lanes = int(gpu.defines.get(_MODULE, {}).get("WITNESS_OP_LANES", OP_LANES))
    if lanes not in (1, 2, 4, 8, 16, 32):
        raise GpuError(f"WITNESS_OP_LANES {lanes}: a power of two from 1 to 32")
    return _threads(gpu) // lanes


def _kernel_rows(
    gpu: Gpu, program: WitnessProgram, loaded: DeviceProgram, ops: DeviceArray
) -> tuple[DeviceArray, ...]:
    """The rows the kernels read under the current defines: with ``WITNESS_SCALED_ROWS`` (the
    default), copies of A and C scaled per op by ``witness_scale_rows``, made once from ``ops``
    (a launch's op table: every op once, in any order)."""
    scaled = _scaled_rows(gpu)
    found = loaded.rows.get(scaled)
    if found is None:
        a_cols, a, b_cols, b, c_cols, c, lin_cols, lin = loaded.rows[False]
        a_out, c_out = gpu.copy(a), gpu.copy(c)
        count = len(program.level_ops)
        gpu.launch(
            gpu.kernel(_MODULE, "witness_scale_rows"),
            count,
            (ops, np.uint64(count), a, c, loaded.inv_r3, a_out, c_out),
        )
        found = loaded.rows[scaled] = (a_cols, a_out, b_cols, b, c_cols, c_out, lin_cols, lin)
    return found


def _level_blocks(gpu: Gpu, program: WitnessProgram) -> int:
    """``witness_levels``' blocks: an op group per op of an average level, at most what is
    resident at once (its grid-wide barrier needs every block running)."""
    threads = _threads(gpu)
    fits = gpu.resident_threads(gpu.kernel(_MODULE, "witness_levels"), threads) // threads
    width = math.ceil(len(program.level_ops) / max(1, program.num_levels))
    return max(1, min(math.ceil(width / _groups(gpu)), fits))


def _blocks_resident(gpu: Gpu) -> int:
    """Blocks of ``witness_blocks`` resident at once: a schedule's most (more would run after
    them, not beside)."""
    threads = _threads(gpu)
    return gpu.resident_threads(gpu.kernel(_MODULE, "witness_blocks"), threads) // threads


def _scaled_rows(gpu: Gpu) -> bool:
    return bool(gpu.defines.get(_MODULE, {}).get("WITNESS_SCALED_ROWS", SCALED_ROWS))


def program_bytes(gpu: Gpu, program: WitnessProgram) -> int:
    """Device bytes ``program_on_device`` takes for ``program``: the rows not yet on the device
    (a compiled file's rows come as one upload of the whole file), the op table (the block
    kernel's order, steps and warps take less than the table again) and, with scaled rows,
    copies of A's and C's coefficients."""
    m = program.matrices
    uploaded, mapped = gpu.cache("matrices"), gpu.cache("mapped files")
    rows, mappings = 0, {}
    for matrix in (m.a, m.b, m.c, program.lin):
        if uploaded.get(matrix) is not None:
            continue
        for array in (matrix.indptr, matrix.cols, matrix.coeffs):
            found = mapping_of(array) if array.nbytes and array.flags.c_contiguous else None
            if found is None:
                rows += array.nbytes
            elif mapped.get(found[0]) is None:  # shared_copy uploads the whole file, once
                mappings[id(found[0])] = len(found[0])
    rows += sum(mappings.values())
    table = len(program.level_ops) * _OP_BYTES
    hints = int(np.count_nonzero(program.kind == HINT)) * 16
    scaled = m.a.coeffs.nbytes + m.c.coeffs.nbytes if _scaled_rows(gpu) else 0
    return rows + 2 * table + hints + scaled


def program_on_device(gpu: Gpu, program: WitnessProgram) -> DeviceProgram:
    """``program``'s tables on the device, uploaded once per program object, with the tables of
    the kernel it runs on; GpuError up front when they cannot fit."""
    cache = gpu.cache("witness programs")
    found = cache.get(program)
    if found is None:
        gpu.ensure_fits(program_bytes(gpu, program), "the witness program's tables")
        m = program.matrices
        rows = [matrix_on_device(gpu, matrix)[1:] for matrix in (m.a, m.b, m.c, program.lin)]
        # Per distinct coefficient, not per op: a few values for any circuit.
        inv_r3 = ints_to_limbs([v * _R3 % _R for v in limbs_to_ints(program.inverses)])
        hint_aux = np.flatnonzero(program.kind == HINT).astype(np.int64)
        warps = _groups(gpu)
        levels = level_cost(program, _level_blocks(gpu, program) * warps)
        fits = _blocks_resident(gpu)
        # Finding the parts costs ~1 s a million ops: not when no block schedule could win.
        blocks = None
        if least_block_cost(program, fits, warps) <= levels:
            blocks = block_schedule(program, fits, warps)
        found = DeviceProgram(
            rows={False: tuple(array for pair in rows for array in pair)},
            inv_r3=gpu.to_device(inv_r3.reshape(-1, 4)),
            hint_aux=gpu.to_device(hint_aux),
            hint_slot=gpu.to_device(program.arg[hint_aux].astype(np.int64)),
            num_hints=len(hint_aux),
            # A block's step waits on no grid barrier and reads z from L1: expected no slower
            # than a level (bench/NOTES.md, round 25, has the A/B that tests it), so the
            # blocks are taken whenever they wait through no more op latencies.
            schedule="blocks" if blocks is not None and blocks.cost <= levels else "levels",
            launches={},
        )
        cache[program] = found
        if program.num_levels:
            _, tables = _launch_tables(gpu, program, found, found.schedule, blocks)
            _kernel_rows(gpu, program, found, tables[0])
    return found


def _launch_tables(
    gpu: Gpu,
    program: WitnessProgram,
    loaded: DeviceProgram,
    schedule: str,
    blocks: BlockSchedule | None = None,
) -> tuple[int, tuple[DeviceArray, ...]]:
    """The blocks and op tables ``schedule``'s kernel runs ``program`` with, uploaded once."""
    # A tuning run's defines may change the block size and the blocks resident.
    key = (schedule, repr(sorted(gpu.defines.get(_MODULE, {}).items())))
    found = loaded.launches.get(key)
    if found is None:
        table = op_table(program)
        tables: tuple[DeviceArray, ...]
        if schedule == "levels":
            tables = (gpu.to_device(table), loaded.inv_r3, gpu.to_device(program.level_ptr))
            found = (_level_blocks(gpu, program), tables)
        else:
            if blocks is None:
                blocks = block_schedule(program, _blocks_resident(gpu), _groups(gpu))
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


def run_program(
    gpu: Gpu,
    program: WitnessProgram,
    inputs: DeviceArray,
    hints: DeviceArray,
    schedule: str | None = None,
) -> DeviceArray:
    """The witness ``z`` in Montgomery form on the device, from device inputs and hints, by
    ``schedule``'s kernel (one of ``SCHEDULES``; the program's own choice when None)."""
    if schedule not in (None, *SCHEDULES):
        raise ValueError(f"witness schedule {schedule!r}: one of {', '.join(SCHEDULES)}")
    loaded = program_on_device(gpu, program)
    num_inputs = program.num_inputs
    z = gpu.zeros((num_inputs + program.num_aux, 4), np.uint64)
    start = (inputs, np.uint64(num_inputs), hints, loaded.hint_aux, loaded.hint_slot)
    gpu.launch(
        gpu.kernel(_MODULE, "witness_start"),
        num_inputs + loaded.num_hints,
        (*start, np.uint64(loaded.num_hints), z),
    )
    if not program.num_levels:
        return z
    schedule = schedule or loaded.schedule
    blocks, tables = _launch_tables(gpu, program, loaded, schedule)
    rows = _kernel_rows(gpu, program, loaded, tables[0])
    threads = _threads(gpu)
    if schedule == "blocks":
        gpu.launch(
            gpu.kernel(_MODULE, "witness_blocks"),
            blocks * threads,
            (*rows, *tables, z, np.uint64(num_inputs)),
            block=threads,
        )
        return z
    sync = gpu.zeros((2,), np.uint32)
    ops, inv_r3, level_ptr = tables
    gpu.launch(
        gpu.kernel(_MODULE, "witness_levels"),
        blocks * threads,
        (
            *rows,
            ops,
            inv_r3,
            level_ptr,
            np.uint64(program.num_levels),
            z,
            np.uint64(num_inputs),
            sync,
        ),
        block=threads,
    )
    if sync.get()[1]:
        raise GpuError(
            f"{gpu.name} backend: the witness kernel's {blocks} blocks were not all resident "
            "at once (it waited 10 s at a level barrier)"
        )
    return z


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
