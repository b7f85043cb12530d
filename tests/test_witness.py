"""Compiled circuits: recording, the on-disk cache, replay and the slow path."""

from __future__ import annotations

import os

import numpy as np
import pytest

from cuzk_core import cache as cache_module
from cuzk_core.circuits import PorepLite
from cuzk_core.gadgets.num import AllocatedNum
from cuzk_core.groth16.prover import UnsatisfiedWitness, prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import ConstraintSystem, gadget
from cuzk_core.witness import compiled as compiled_module
from cuzk_core.witness import store
from cuzk_core.witness.compiled import (
    compile_circuit,
    compiled_path,
    shape_digest,
    synthesize_native,
)
from cuzk_core.witness.program import BIT, HINT, SOLVE, levels_of
from cuzk_core.witness.replay import (
    ReplayMismatch,
    _replayed,
    _supplied,
    replay,
    supplied_values_differ,
)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})


def _gadget_witness(circuit) -> np.ndarray:
    cs = ConstraintSystem()
    circuit.synthesize(cs)
    return ints_to_limbs(cs.assignment())


def test_porep_lite_program_has_every_op_kind_and_levels(cpu):
    compiled, _ = compile_circuit(cpu, PorepLite(challenges=2, depth=3))
    program = compiled.program
    assert compiled.problem is None and compiled.source == "compiled"
    kinds = set(program.kind.tolist())
    assert kinds == {HINT, SOLVE, BIT}
    assert program.num_hints == 2 * (1 + 3)  # leaf and siblings per challenge
    counts = program.counts()
    assert counts["bits"] == 2 * 3 and counts["solved"] == program.num_aux - 14
    # a level reads only earlier levels: every op's level exceeds its dependencies'
    assert 1 < program.num_levels < counts["solved"]


def _levels_one_op_at_a_time(kind, deps_ptr, deps):
    """The definition, op by op: 1 + the deepest computed op read (hints are level 0)."""
    level = [0] * len(kind)
    for j in range(len(kind)):
        if kind[j] != HINT:
            read = deps[deps_ptr[j] : deps_ptr[j + 1]].tolist()
            level[j] = 1 + max((level[d] for d in read), default=0)
    return level


@pytest.mark.parametrize("seed", range(6))
def test_levels_match_their_definition_on_random_programs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    kind = rng.choice([HINT, SOLVE, BIT], size=n, p=[0.2, 0.6, 0.2]).astype(np.uint8)
    reads = [rng.integers(0, j, size=rng.integers(0, 4)) if j else np.zeros(0) for j in range(n)]
    if seed % 2:  # a chain: one level per op
        reads = [np.array([j - 1]) if j else np.zeros(0) for j in range(n)]
    deps_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(r) for r in reads], out=deps_ptr[1:])
    deps = np.concatenate(reads).astype(np.int64)  # duplicates allowed
    level_ptr, level_ops = levels_of(kind, deps_ptr, deps)
    level = _levels_one_op_at_a_time(kind, deps_ptr, deps)
    expected = sorted((level[j], j) for j in range(n) if kind[j] != HINT)
    assert level_ops.tolist() == [j for _, j in expected]
    sizes = np.bincount([lv for lv, _ in expected], minlength=1)[1:]
    assert np.diff(level_ptr).tolist() == sizes.tolist()
    assert level_ptr.dtype == np.int64 and level_ops.dtype == np.int64


def test_levels_of_a_program_of_hints_only():
    no_deps = np.zeros(0, np.int64)
    level_ptr, level_ops = levels_of(np.zeros(3, np.uint8), np.zeros(4, np.int64), no_deps)
    assert level_ptr.tolist() == [0] and level_ops.tolist() == []


def test_other_instances_of_the_shape_get_the_gadget_witness(cpu):
    compile_circuit(cpu, PorepLite(challenges=2, depth=3, seed=0))
    for seed in (1, 2**255):
        circuit = PorepLite(challenges=2, depth=3, seed=seed)
        compiled, synthesized = synthesize_native(cpu, circuit)
        assert compiled.source == "memory"
        assert np.array_equal(synthesized.witness, _gadget_witness(circuit))


def test_the_cache_is_reused_stale_files_and_corrupt_files_are_rebuilt(cpu, capsys):
    circuit = PorepLite(challenges=1, depth=2)
    digest = shape_digest(circuit)
    first, _ = compile_circuit(cpu, circuit)
    path = compiled_path(digest)
    assert path.is_file() and first.cache_bytes == path.stat().st_size
    compiled_module._MEMORY.clear()
    again, _ = compile_circuit(cpu, circuit)
    assert again.source == "disk"
    with pytest.raises(store.StoreRefused, match="stale"):
        store.load(path, "0" * 64)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(store.StoreRefused, match=r"corrupted|unreadable"):
        store.load(path, digest)
    compiled_module._MEMORY.clear()
    rebuilt, _ = compile_circuit(cpu, circuit)
    assert rebuilt.source == "compiled" and "recompiling porep-lite" in capsys.readouterr().err
    assert store.load(path, digest)[0].num_aux == rebuilt.program.num_aux


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_saved_program_finds_its_parts_and_heads_once_before_its_check(
    cpu, monkeypatch, use_cache
):
    """A program the cache will keep gets its parts and S-box heads before the check, whose
    witness (a GPU's) reads them, and the save writes those: each found once. A program not
    kept finds neither (a CPU witness does not read them)."""
    from cuzk_core.witness import chains, parts

    found = {"parts": 0, "heads": 0}

    def counted(name, function):
        def wrapper(*args, **kwargs):
            found[name] += 1
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(parts, "independent_parts", counted("parts", parts.independent_parts))
    monkeypatch.setattr(chains, "find_sbox_heads", counted("heads", chains.find_sbox_heads))
    checked = []
    check = compiled_module._check_program

    def spy(backend, circuit, program, recording):
        checked.append((program.parts is not None, program.sbox_heads is not None))
        return check(backend, circuit, program, recording)

    monkeypatch.setattr(compiled_module, "_check_program", spy)
    circuit = PorepLite(challenges=2, depth=3)
    compile_circuit(cpu, circuit, use_cache=use_cache)
    assert checked == [(use_cache, use_cache)]
    assert found == ({"parts": 1, "heads": 1} if use_cache else {"parts": 0, "heads": 0})
    if use_cache:
        stored, _ = store.load(compiled_path(shape_digest(circuit)), shape_digest(circuit))
        assert stored.parts is not None and len(stored.parts) == len(stored.level_ops)
        fresh = parts.independent_parts(len(stored.level_ops), parts.joining_pairs(stored))
        assert np.array_equal(stored.parts, fresh)
        assert np.array_equal(stored.sbox_heads, chains.find_sbox_heads(stored))


def test_a_loaded_circuit_is_mapped_and_its_rows_are_the_proving_rows(cpu):
    circuit = PorepLite(challenges=2, depth=2)
    compile_circuit(cpu, circuit)
    program, proving = store.load(compiled_path(shape_digest(circuit)), shape_digest(circuit))
    rows = program.matrices.num_constraints
    assert proving.num_constraints == rows + program.num_inputs
    for mine, theirs in ((program.matrices.a, proving.a), (program.matrices.b, proving.b)):
        assert not theirs.coeffs.flags.writeable  # a read-only view of the mapped file
        assert np.shares_memory(mine.coeffs, theirs.coeffs)
        assert np.array_equal(mine.indptr, theirs.indptr[: rows + 1])
    assert proving.row_name(rows) == "input row 0"
    assert program.matrices.row_name(rows - 1) == "challenge 1/root"


def test_the_full_check_runs_again_after_any_change_to_the_file(cpu, monkeypatch):
    """A stamp skips the checksums of an unchanged file; any write, even one restoring the old
    times, changes the ctime and so brings the full check back."""
    monkeypatch.setattr(cache_module, "_RACY_NS", 0)  # files written just now count as settled
    circuit = PorepLite(challenges=1, depth=2)
    digest = shape_digest(circuit)
    compile_circuit(cpu, circuit)
    path = compiled_path(digest)
    stamp = store.stamp_path(path)
    assert stamp.is_file()  # the load-back after compiling checked it in full
    store.load(path, digest)
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[-100] ^= 0x01  # inside the last array, past every header
    path.write_bytes(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(store.StoreRefused, match="fails its checksum"):
        store.load(path, digest)


def test_a_file_changed_within_a_ctime_tick_is_not_stamped(cpu, monkeypatch):
    """A rewrite of the same size within the ctime's granularity could keep the stamped identity,
    so a file that recent is checked in full again at its next load."""
    monkeypatch.setattr(cache_module, "_RACY_NS", 10**15)
    circuit = PorepLite(challenges=1, depth=1)
    digest = shape_digest(circuit)
    compile_circuit(cpu, circuit)
    path = compiled_path(digest)
    store.load(path, digest)
    assert not store.stamp_path(path).exists()
    checks = []
    monkeypatch.setattr(store, "_check_sums", lambda *args: checks.append(args))
    store.load(path, digest)
    assert len(checks) == 1


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: data[:-64], "bytes, the header describes"),
        (lambda data: data[:20], "unreadable"),
        (lambda data: data[:40] + bytes([data[40] ^ 0x20]) + data[41:], "header fails"),
        (lambda data: b"PK" + data[2:], "unreadable"),
    ],
)
def test_a_truncated_or_damaged_header_is_refused(cpu, damage, reason):
    circuit = PorepLite(challenges=1, depth=1)
    digest = shape_digest(circuit)
    compile_circuit(cpu, circuit)
    path = compiled_path(digest)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(store.StoreRefused, match=reason):
        store.load(path, digest)


def test_cuzk_cache_lists_compiled_circuits(cpu):
    from cuzk_core.cli.cache_commands import entries

    compile_circuit(cpu, PorepLite(challenges=1, depth=1))
    listed = [(path.parent.name, what) for path, what in entries()]
    assert listed == [("compiled", "compiled circuit (matrices and witness program)")]


def test_a_digest_covers_the_shape_not_the_instance():
    assert shape_digest(PorepLite(2, 3, seed=1)) == shape_digest(PorepLite(2, 3, seed=2))
    assert shape_digest(PorepLite(2, 3)) != shape_digest(PorepLite(2, 4))
    assert shape_digest(PorepLite(2, 3)) != shape_digest(PorepLite(3, 3))


class _PythonGadgetCircuit:
    """A circuit whose own gadget computes a value in Python (cs.alloc inside a gadget)."""

    name = "test-python-gadget"

    def knobs(self):
        return {}

    def public_inputs(self):
        return []

    def synthesize(self, cs):
        x = AllocatedNum.alloc(cs, "x", 3)
        _cube(cs, x)


@gadget(lambda cs, x: x)
def _cube(cs, x):
    y = cs.alloc("cube", pow(x.value, 3))
    cs.enforce("cube", x.square(cs).variable, x.variable, y)
    return AllocatedNum(y, pow(x.value, 3))


class _CallbackCircuit:
    """A circuit that computes a hint from a gadget's result in Python."""

    name = "test-callback"

    def knobs(self):
        return {}

    def public_inputs(self):
        return []

    def synthesize(self, cs):
        x = AllocatedNum.alloc(cs, "x", 5)
        square = x.square(cs)
        AllocatedNum.alloc(cs, "from the square", square.value + 1)


class _SuppliedValuesCircuit:
    """A circuit whose ``replay_values()`` is not what its synthesize allocates."""

    name = "test-supplied-values"

    def __init__(self, hints: list[int]) -> None:
        self.hints = hints

    def knobs(self):
        return {"hints": len(self.hints)}

    def public_inputs(self):
        return []

    def synthesize(self, cs):
        x = AllocatedNum.alloc(cs, "x", 5)
        x.square(cs)

    def replay_values(self):
        return [], self.hints


@pytest.mark.parametrize(
    ("circuit", "reason"),
    [
        (_PythonGadgetCircuit(), "gadget _cube allocates 'cube' with cs.alloc"),
        (_CallbackCircuit(), "'from the square' differs when the circuit is replayed"),
        (_SuppliedValuesCircuit([6]), "replay_values() differs from synthesize at hint 0"),
        (_SuppliedValuesCircuit([5, 1]), "replay_values() gives 2 hints, synthesize allocates 1"),
    ],
)
def test_an_unrecordable_circuit_runs_on_the_slow_path_and_says_why(cpu, circuit, reason):
    compiled, synthesized = synthesize_native(cpu, circuit)
    assert compiled.program is None and reason in compiled.problem
    assert np.array_equal(synthesized.witness, _gadget_witness(circuit))
    again, synthesized = synthesize_native(cpu, circuit)
    assert again.program is None
    assert np.array_equal(synthesized.witness, _gadget_witness(circuit))


@pytest.mark.parametrize(
    ("challenges", "depth", "seed"), [(1, 1, 0), (5, 1, 1), (6, 2, 2), (4, 32, 2**255), (9, 7, 3)]
)
def test_porep_lite_supplies_what_its_synthesize_allocates(challenges, depth, seed):
    """Its replay_values() against a replay of synthesize, repeated indices included (five
    challenges of a depth-1 tree share two leaves)."""
    circuit = PorepLite(challenges=challenges, depth=depth, seed=seed)
    assert supplied_values_differ(circuit) is None
    inputs, hints = _supplied(circuit)
    assert (inputs, limbs_to_ints(hints)) == _replayed(circuit)


def test_alloc_solved_must_be_fixed_by_the_next_constraint(cpu):
    class Unfixed:
        name = "test-unfixed"

        def knobs(self):
            return {}

        def synthesize(self, cs):
            x = cs.alloc_solved("x", 4)
            cs.enforce("x in A", x, cs.one, x)

    compiled, _ = compile_circuit(cpu, Unfixed(), use_cache=False)
    assert "'x' (alloc_solved) is not fixed by the next constraint 'x in A'" in compiled.problem


def test_a_replay_of_another_shape_is_refused(cpu):
    compiled, _ = compile_circuit(cpu, PorepLite(challenges=1, depth=2))
    with pytest.raises(ReplayMismatch, match="shape"):
        replay(PorepLite(challenges=2, depth=2), compiled.program)


def test_an_unsatisfied_compiled_witness_is_named_by_its_namespace_path(cpu, monkeypatch):
    circuit = PorepLite(challenges=1, depth=1, seed=3)
    key = LoadedKey(generate_parameters(NativeCircuit(circuit).assign(cpu).matrices, seed=5))
    monkeypatch.setattr(PorepLite, "leaf", lambda self, index: 12345)  # a leaf off the tree
    with pytest.raises(UnsatisfiedWitness, match="'challenge 0/root'"):
        prove(cpu, NativeCircuit(circuit), key, seed=1)
