"""The S-box chains the GPU witness kernels run as one op (found by cuzk_core/witness/chains.py
and stored by the compile), against a by-definition reading of the rows, and the program they
schedule (backends/gpu/witness_chains.py): every op still
after everything it reads, the parts unchanged. (The kernels' values: the g++ harness,
tests/conformance/test_witness_kernel.py, and the GPU tests.)"""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from cuzk_backend_gpu.witness_chains import without_chain_tails
from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.checks import GadgetCircuit, WideRowsCircuit
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.witness.chains import find_sbox_heads, program_sbox_heads
from cuzk_core.witness.compiled import compile_circuit
from cuzk_core.witness.parts import program_parts
from cuzk_core.witness.program import SOLVE, WitnessProgram

CIRCUITS = {
    "porep-lite c3 d2": PorepLite(challenges=3, depth=2),
    "gadgets": GadgetCircuit(41, 3),
    "wide rows": WideRowsCircuit(2),
}


@pytest.fixture(scope="module")
def programs() -> dict[str, WitnessProgram]:
    backend = load_plugins().backend(load_profile("cpu"))
    out = {}
    for name, circuit in CIRCUITS.items():
        compiled, _ = compile_circuit(backend, circuit, use_cache=False)
        assert compiled.program is not None, compiled.problem
        out[name] = compiled.program
    return out


def _row(matrix, r: int) -> list[tuple[int, tuple[int, ...]]]:
    span = slice(matrix.indptr[r], matrix.indptr[r + 1])
    coeffs = [tuple(c) for c in matrix.coeffs[span].tolist()]
    return list(zip(matrix.cols[span].tolist(), coeffs, strict=True))


def _heads_by_definition(program: WitnessProgram) -> list[int]:
    m, n_in, one = program.matrices, program.num_inputs, (1, 0, 0, 0)
    found: list[int] = []
    for j in range(len(program.kind) - 2):
        if any(program.kind[j + k] != SOLVE for k in range(3)):
            continue
        r = [int(program.arg[j + k]) for k in range(3)]
        col = n_in + j
        if (
            _row(m.a, r[0]) == _row(m.b, r[0])
            and _row(m.c, r[0]) == [(col, one)]
            and _row(m.a, r[1]) == _row(m.b, r[1]) == [(col, one)]
            and _row(m.c, r[1]) == [(col + 1, one)]
            and _row(m.a, r[2]) == [(col + 1, one)]
            and _row(m.b, r[2]) == _row(m.b, r[0])
            and _row(m.c, r[2]) == [(col + 2, one)]
        ):
            found.append(j)
    chained = set(found)
    return [j for j in found if j - 1 not in chained and j - 2 not in chained]


@pytest.mark.parametrize("name", CIRCUITS)
def test_the_chains_are_the_rows_that_compute_x2_x4_x5(programs, name):
    program = programs[name]
    heads = find_sbox_heads(program)
    assert heads.tolist() == _heads_by_definition(program)
    if name.startswith("porep"):
        assert len(heads) == 3 * 2 * 80  # every S-box of the six hashes
    if name == "wide rows":
        assert not len(heads)


@pytest.mark.parametrize("name", CIRCUITS)
def test_without_the_tails_every_op_runs_after_what_it_reads(programs, name):
    """Each op stays in its order; a chain's tails are gone; an op reads only what an earlier
    level of the new lists computes (a tail's value is its chain's first op's); the parts
    group the ops as before."""
    program = programs[name]
    heads = find_sbox_heads(program)
    view = without_chain_tails(program, heads)
    tails = set((heads + 1).tolist()) | set((heads + 2).tolist())
    kept = [aux for aux in program.level_ops.tolist() if aux not in tails]
    assert view.level_ops.tolist() == kept
    assert (np.diff(view.level_ptr) > 0).all() and view.level_ptr[-1] == len(kept)
    level = {}
    for lvl in range(view.num_levels):
        for aux in view.level_ops[view.level_ptr[lvl] : view.level_ptr[lvl + 1]].tolist():
            level[aux] = lvl
    producer = {int(h) + k: int(h) for h in heads for k in (1, 2)}
    m, n_in = program.matrices, program.num_inputs
    for aux in kept:
        r = int(program.arg[aux])
        if program.kind[aux] == SOLVE:
            rows = [] if aux in heads else [*_row(m.a, r), *_row(m.c, r)]
            cols = [c for c, _ in [*rows, *_row(m.b, r)]]
        else:
            cols = [c for c, _ in _row(program.lin, r)]
        for col in cols:
            read = producer.get(col - n_in, col - n_in)
            if read >= 0 and read != aux and read in level:
                assert level[read] < level[aux], (aux, read)
    before = program_parts(program)
    position = {aux: i for i, aux in enumerate(program.level_ops.tolist())}
    after = view.parts
    for i, aux in enumerate(kept):
        first = kept[int(after[i])]
        assert before[position[aux]] == before[position[first]]
        assert int(after[i]) <= i
    assert len(set(after.tolist())) == len(set(before.tolist()))


def test_the_compile_stores_the_chains_and_a_load_checks_them(tmp_path, monkeypatch, programs):
    """A compiled circuit on disk carries its S-box chains (a fresh process's first proof does
    not search them again); a program made without the store gets them found; heads that are
    not ascending runs of three SOLVE ops are refused as corrupted."""
    from cuzk_core.witness import compiled as compiled_module
    from cuzk_core.witness import store

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})
    fresh = programs["porep-lite c3 d2"]
    assert fresh.sbox_heads is None
    found = find_sbox_heads(fresh)
    assert np.array_equal(program_sbox_heads(fresh), found)
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=3, depth=2))
    assert compiled.source == "compiled"  # read back from the file it wrote
    assert np.array_equal(compiled.program.sbox_heads, found)
    path = tmp_path / "p.cuzkc"
    store.save(path, "d", compiled.program, compiled.proving_matrices)
    loaded, proving = store.load(path, "d")
    assert np.array_equal(program_sbox_heads(loaded), found)
    not_solve = np.flatnonzero(loaded.kind != SOLVE)[0]
    overlapping = [found[0], found[0] + 2]
    for bad in (found[::-1], overlapping, np.append(found, len(loaded.kind) - 1), [not_solve]):
        with pytest.raises(ValueError, match="S-box heads"):
            store._check_bounds(attrs.evolve(loaded, sbox_heads=np.asarray(bad)), proving)
    none = attrs.evolve(loaded, sbox_heads=np.zeros(0, dtype=np.int64))
    store._check_bounds(none, proving)  # a circuit without chains
