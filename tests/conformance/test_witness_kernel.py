"""r1cs/witness.cuh's device code built for the host with g++: both witness kernels (by levels
with a grid barrier, by independent parts a block each) on canonical and on per-op scaled rows,
with a whole warp an op or fewer lanes (WITNESS_OP_LANES), each row on the lanes or the three
rows as one list (WITNESS_FLAT_ROWS), every op alone or each S-box chain as one op
(witness_chains.py), an op's lanes as threads, against the core's witness, bit for bit, without
a GPU.

The programs: porep-lite paths (several parts, one part, parts dealt onto fewer blocks than
there are), random gadget circuits, and a circuit whose A, C and ``lin`` rows all run past a
warp, with bits up to 253 (the lane-strided tail and the full warp sum in every slot)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from host_build import build_harness

from cuzk_backend_gpu.witness import op_table
from cuzk_backend_gpu.witness_chains import without_chain_tails
from cuzk_backend_gpu.witness_schedule import block_schedule
from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.checks import GadgetCircuit, WideRowsCircuit
from cuzk_core.field.constants import FR_MODULUS as R
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.witness.chains import find_sbox_heads
from cuzk_core.witness.compiled import compile_circuit
from cuzk_core.witness.evaluate import evaluate_program
from cuzk_core.witness.program import HINT, WitnessProgram
from cuzk_core.witness.replay import replay

HARNESS = Path(__file__).with_name("witness_host.cpp")
MONT = 1 << 256


CIRCUITS = {
    "porep-lite 3 paths": PorepLite(challenges=3, depth=2),
    "porep-lite 1 path": PorepLite(challenges=1, depth=3),
    "gadgets 41": GadgetCircuit(41, 3),
    "gadgets 7": GadgetCircuit(7, 5),
    "wide rows, 3 parts": WideRowsCircuit(3),
}


@pytest.fixture(
    scope="module",
    params=[(0, 32, 0), (1, 32, 0), (1, 8, 0), (1, 1, 0), (1, 32, 1), (1, 8, 1), (0, 2, 1)],
    ids=lambda p: f"{'scaled' if p[0] else 'canonical'}-{p[1]}-lanes{'-flat' if p[2] else ''}",
)
def harness(request, tmp_path_factory):
    """The harness built for a row setting (``WITNESS_SCALED_ROWS``), lanes an op and whether
    the op's rows are dealt over its lanes as one list (``WITNESS_FLAT_ROWS``); the narrower
    groups split every row of the wide circuit over several rounds."""
    scaled, lanes, flat = request.param
    folder = tmp_path_factory.mktemp(f"witness{scaled}-{lanes}-{flat}")
    flags = (
        "-pthread",
        f"-DWITNESS_SCALED_ROWS={scaled}",
        f"-DWITNESS_OP_LANES={lanes}",
        f"-DWITNESS_FLAT_ROWS={flat}",
    )
    return scaled, build_harness(HARNESS, folder, "-O2", flags)


@pytest.fixture(scope="module")
def programs():
    backend = load_plugins().backend(load_profile("cpu"))
    out = {}
    for name, circuit in CIRCUITS.items():
        compiled, _ = compile_circuit(backend, circuit, use_cache=False)
        assert compiled.program is not None, compiled.problem
        program = compiled.program
        inputs, hints = replay(circuit, program)
        out[name] = (program, inputs, hints, evaluate_program(program, inputs, hints))
    return out


def _words(array: np.ndarray, dtype: str) -> str:
    """A count, then the array's 32-bit words (hex)."""
    array = np.ascontiguousarray(array, dtype=dtype)
    count = len(array)
    return " ".join([f"{count:x}", *(f"{w:x}" for w in array.reshape(-1).view("<u4"))])


def _montgomery(limbs: np.ndarray) -> np.ndarray:
    return ints_to_limbs([v * MONT % R for v in limbs_to_ints(limbs)]).reshape(-1, 4)


def _start(program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray) -> np.ndarray:
    """z as witness_start leaves it: inputs, and hints at their aux, in Montgomery form."""
    z = np.zeros((program.num_inputs + program.num_aux, 4), dtype=np.uint64)
    z[: program.num_inputs] = _montgomery(inputs)
    hint_aux = np.flatnonzero(program.kind == HINT)
    z[program.num_inputs + hint_aux] = _montgomery(hints[program.arg[hint_aux]])
    return z


def _run(harness, program, inputs, hints, kernel: str, table: np.ndarray, launch: list[str]):
    scaled, run = harness
    m = program.matrices
    inv_r3 = ints_to_limbs([v * MONT**3 % R for v in limbs_to_ints(program.inverses)])
    lines = [kernel, f"{scaled:x}", f"{program.num_inputs:x}"]
    lines.append(_words(_start(program, inputs, hints), "<u8"))
    for matrix in (m.a, m.b, m.c, program.lin):
        lines += [_words(matrix.cols, "<i8"), _words(matrix.coeffs, "<u8")]
    lines += [_words(table, "<i8"), _words(inv_r3.reshape(-1, 4), "<u8"), *launch]
    words = [[int(w, 16) for w in line.split()] for line in run(lines).splitlines()]
    z = np.array(words, dtype="<u4").view("<u8")
    return ints_to_limbs([v * pow(MONT, -1, R) % R for v in limbs_to_ints(z)]).reshape(-1, 4)


def _kernel_program(program: WitnessProgram, chains: bool):
    """The program the kernels schedule, and the S-box chains' first ops (None: none fused)."""
    if not chains:
        return program, None
    heads = find_sbox_heads(program)
    return without_chain_tails(program, heads), heads


@pytest.mark.parametrize("name", CIRCUITS)
@pytest.mark.parametrize(("warps", "chains"), [(1, False), (3, False), (3, True)])
def test_levels_kernel_gives_the_witness(harness, programs, name, warps, chains):
    program, inputs, hints, expected = programs[name]
    view, heads = _kernel_program(program, chains)
    launch = [f"{warps:x}", _words(view.level_ptr, "<i8")]
    got = _run(harness, program, inputs, hints, "levels", op_table(view, heads), launch)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("name", CIRCUITS)
@pytest.mark.parametrize(
    ("max_blocks", "warps", "chains"),
    [(1, 1, False), (2, 2, False), (64, 4, False), (2, 2, True), (64, 4, True)],
)
def test_blocks_kernel_gives_the_witness(harness, programs, name, max_blocks, warps, chains):
    program, inputs, hints, expected = programs[name]
    view, heads = _kernel_program(program, chains)
    schedule = block_schedule(view, max_blocks, warps)
    launch = [
        f"{warps:x}",
        _words(schedule.block_steps, "<i4"),
        _words(schedule.step, "<i4"),
        _words(schedule.warp_ptr, "<i8"),
    ]
    table = op_table(view, heads)[schedule.order]
    got = _run(harness, program, inputs, hints, "blocks", table, launch)
    assert np.array_equal(got, expected)
