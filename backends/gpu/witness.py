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

_R = FR_MODULUS
_R3 = pow(1 << 256, 3, _R)
_MODULE = "r1cs/witness.cu"
THREADS = 128
"""Threads per block of ``witness_levels`` (the kernel's WITNESS_THREADS, unless a define
changes it)."""


@attrs.frozen(eq=False)
class DeviceProgram:
    """A witness program's tables on the device, in ``witness_levels``' argument order."""

    tables: tuple[DeviceArray, ...]
    """Columns and coefficients of A, B, C and ``lin``, the ops in level order, inverses·R³
    and the level boundaries."""
    hint_aux: DeviceArray
    hint_slot: DeviceArray
    num_hints: int
    num_levels: int
    width: int
    """Ops per level on average: how many warps the launch is worth."""


def op_table(program: WitnessProgram) -> np.ndarray:
    """The non-hint ops in level order as the kernel's ``op_t`` rows: aux, kind | extra << 8,
    and the entry ranges of the rows they read (a BIT op's ``lin`` row in A's place)."""
    aux = program.level_ops
    kind, arg = program.kind[aux].astype(np.int64), program.arg[aux]
    table = np.zeros((len(aux), 8), dtype=np.int64)
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


def program_on_device(gpu: Gpu, program: WitnessProgram) -> DeviceProgram:
    """``program``'s tables on the device, uploaded once per program object."""
    cache = gpu.cache("witness programs")
    found = cache.get(program)
    if found is None:
        m = program.matrices
        rows = [matrix_on_device(gpu, matrix)[1:] for matrix in (m.a, m.b, m.c, program.lin)]
        # Per distinct coefficient, not per op: a few values for any circuit.
        inv_r3 = ints_to_limbs([v * _R3 % _R for v in limbs_to_ints(program.inverses)])
        hint_aux = np.flatnonzero(program.kind == HINT).astype(np.int64)
        found = DeviceProgram(
            tables=(
                *(array for pair in rows for array in pair),
                gpu.to_device(op_table(program)),
                gpu.to_device(inv_r3.reshape(-1, 4)),
                gpu.to_device(program.level_ptr),
            ),
            hint_aux=gpu.to_device(hint_aux),
            hint_slot=gpu.to_device(program.arg[hint_aux].astype(np.int64)),
            num_hints=len(hint_aux),
            num_levels=program.num_levels,
            width=math.ceil(len(program.level_ops) / max(1, program.num_levels)),
        )
        cache[program] = found
    return found


def run_program(
    gpu: Gpu, program: WitnessProgram, inputs: DeviceArray, hints: DeviceArray
) -> DeviceArray:
    """The witness ``z`` in Montgomery form on the device, from device inputs and hints."""
    loaded = program_on_device(gpu, program)
    num_inputs = program.num_inputs
    z = gpu.zeros((num_inputs + program.num_aux, 4), np.uint64)
    start = (inputs, np.uint64(num_inputs), hints, loaded.hint_aux, loaded.hint_slot)
    gpu.launch(
        gpu.kernel(_MODULE, "witness_start"),
        num_inputs + loaded.num_hints,
        (*start, np.uint64(loaded.num_hints), z),
    )
    if loaded.num_levels:
        levels = gpu.kernel(_MODULE, "witness_levels")
        threads = gpu.defines.get(_MODULE, {}).get("WITNESS_THREADS", THREADS)
        # Every block must be resident at once (the kernel's barrier): at most what fits.
        fits = gpu.resident_threads(levels, threads) // threads
        blocks = max(1, min(math.ceil(loaded.width / (threads // 32)), fits))
        sync = gpu.zeros((2,), np.uint32)
        gpu.launch(
            levels,
            blocks * threads,
            (*loaded.tables, np.uint64(loaded.num_levels), z, np.uint64(num_inputs), sync),
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
