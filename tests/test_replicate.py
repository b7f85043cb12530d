"""Copied gadget calls: a recording that copies repeated calls holds exactly what running every
call records (matrices, program, names), refuses to copy what it cannot, and a compile whose
copies turn out wrong is recorded again without them."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk_core.circuits import PorepLite
from cuzk_core.gadgets.num import PLACEHOLDER_NUM, AllocatedNum, Num
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.r1cs import LinearCombination, gadget
from cuzk_core.timing import Timer
from cuzk_core.witness import compiled as compiled_module
from cuzk_core.witness.compiled import compile_circuit
from cuzk_core.witness.record import Recording, RecordingConstraintSystem
from cuzk_core.witness.replicate import AUDIT_EVERY

PROGRAM_ARRAYS = ("kind", "arg", "extra", "inverses", "level_ptr", "level_ops")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiled_module, "_MEMORY", {})


def _recorded(circuit, replicate: bool) -> tuple[Recording, RecordingConstraintSystem]:
    cs = RecordingConstraintSystem(replicate=replicate)
    circuit.synthesize(cs)
    return cs.recording(), cs


def _same_matrix(x, y) -> bool:
    return all(np.array_equal(getattr(x, f), getattr(y, f)) for f in ("indptr", "cols", "coeffs"))


def _assert_same(full: Recording, copied: Recording) -> None:
    for side in "abc":
        assert _same_matrix(getattr(full.matrices, side), getattr(copied.matrices, side)), side
    rows = full.matrices.num_constraints
    assert copied.matrices.num_constraints == rows
    names = [full.matrices.names.name(i) for i in range(rows)]
    assert names == [copied.matrices.names.name(i) for i in range(rows)]
    assert full.program is not None and copied.program is not None
    for name in PROGRAM_ARRAYS:
        assert np.array_equal(getattr(full.program, name), getattr(copied.program, name)), name
    assert _same_matrix(full.program.lin, copied.program.lin)
    assert full.hint_names == copied.hint_names
    appended = with_input_rows(full.matrices)  # what the prover appends, in other memory
    for side in "abc":
        assert _same_matrix(getattr(appended, side), getattr(copied.proving, side)), side
        rows = getattr(copied.matrices, side)
        assert np.shares_memory(rows.cols, getattr(copied.proving, side).cols)


@pytest.mark.parametrize(("challenges", "depth"), [(3, 1), (20, 2), (2 * AUDIT_EVERY + 5, 1)])
def test_porep_lite_copied_records_what_running_every_call_records(challenges, depth):
    circuit = PorepLite(challenges=challenges, depth=depth, seed=challenges)
    full, _ = _recorded(circuit, replicate=False)
    copied, cs = _recorded(circuit, replicate=True)
    assert full.replicated is None
    assert len(cs.replicas) > 0 and copied.copies_differ is None
    _assert_same(full, copied)
    owned = np.flatnonzero(copied.replicated)
    assert len(owned) == sum(r.template.num_aux for r in cs.replicas)
    assert not copied.replicated[: copied.matrices.num_inputs].any()


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def _chain(cs, x: AllocatedNum, y: AllocatedNum, rounds: int) -> Num:
    """``rounds`` products in a chain, under namespaces: enough rows to be copied."""
    a, b = x, y
    for i in range(rounds):
        with cs.namespace(f"round {i}"):
            a, b = b, a.mul(cs, b)
    return Num(b.lc + x.lc * 3 + LinearCombination.constant(7), 0)


class _Chains:
    """Chains over pairs of allocated numbers, with the pair's order (and so the column order
    of a call's arguments) varied call by call, and one call naming one variable twice."""

    name = "test-chains"

    def __init__(self, calls: int, rounds: int = 70) -> None:
        self.calls, self.rounds = calls, rounds

    def knobs(self):
        return {"calls": self.calls}

    def synthesize(self, cs):
        out = AllocatedNum.alloc_input(cs, "out", 0)
        for k in range(self.calls):
            with cs.namespace(f"call {k}"):
                x = AllocatedNum.alloc(cs, "x", k + 2)
                y = AllocatedNum.alloc(cs, "y", 3 * k + 1)
                pair = (x, y) if k % 3 else (y, x)
                if k == 5:
                    pair = (x, x)
                total = _chain(cs, *pair, self.rounds)
                cs.enforce("use", total.lc, cs.one, total.lc)
        cs.enforce("out", out.variable, cs.one, out.variable)


def test_arguments_in_either_column_order_or_repeated_are_copied_alike():
    full, _ = _recorded(_Chains(calls=40), replicate=False)
    copied, cs = _recorded(_Chains(calls=40), replicate=True)
    assert len(cs.replicas) > 20
    _assert_same(full, copied)


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def _drifting(cs, x: AllocatedNum, after: int) -> Num:
    """A gadget whose constraints depend on the system's size (not on its arguments)."""
    rounds = 70 if cs.num_constraints < after else 71
    a = x
    for _ in range(rounds):
        a = a.mul(cs, x)
    return Num(a.lc, 0)


class _Drifting:
    name = "test-drifting"

    def __init__(self, calls: int, after: int) -> None:
        self.calls, self.after = calls, after

    def knobs(self):
        return {"calls": self.calls, "after": self.after}

    def synthesize(self, cs):
        for k in range(self.calls):
            with cs.namespace(f"call {k}"):
                _drifting(cs, AllocatedNum.alloc(cs, "x", k + 2), self.after)


def test_a_gadget_that_differs_on_its_second_call_is_never_copied():
    copied, cs = _recorded(_Drifting(calls=10, after=50), replicate=True)
    full, _ = _recorded(_Drifting(calls=10, after=50), replicate=False)
    assert cs.replicas == [] and copied.replicated is None
    _assert_same(full, copied)


def test_an_audited_copy_that_differs_makes_the_compile_record_again(cpu, capsys):
    circuit = _Drifting(calls=AUDIT_EVERY + 10, after=70 * 8)
    copied, _ = _recorded(circuit, replicate=True)
    assert copied.copies_differ is not None and "_drifting" in copied.copies_differ
    compiled, synthesized = compile_circuit(cpu, circuit, use_cache=False)
    assert "again without copied calls" in capsys.readouterr().err
    full, _ = _recorded(circuit, replicate=False)
    assert compiled.program is not None
    for name in PROGRAM_ARRAYS:
        assert np.array_equal(getattr(compiled.program, name), getattr(full.program, name))
    a, b, c = cpu.evaluate_r1cs(synthesized.matrices, synthesized.witness)
    assert cpu.first_unsatisfied(a, b, c) is None


_OUTSIDE: list[AllocatedNum] = []


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def _reads_outside(cs, x: AllocatedNum) -> Num:
    """Reads a variable it was not given (through a module global)."""
    a = x
    for _ in range(70):
        a = a.mul(cs, _OUTSIDE[-1])
    return Num(a.lc, 0)


class _Outside:
    name = "test-outside"

    def knobs(self):
        return {}

    def synthesize(self, cs):
        for k in range(6):
            _OUTSIDE.append(AllocatedNum.alloc(cs, f"outside {k}", k + 5))
            _reads_outside(cs, AllocatedNum.alloc(cs, f"x {k}", k + 2))


def test_a_gadget_reading_a_variable_it_was_not_given_is_never_copied():
    copied, cs = _recorded(_Outside(), replicate=True)
    assert cs.replicas == []
    full, _ = _recorded(_Outside(), replicate=False)
    _assert_same(full, copied)


def test_the_compile_copies_by_default_and_the_profile_can_switch_it_off(tmp_path, cpu):
    circuit = PorepLite(challenges=6, depth=2, seed=4)
    copied, synthesized = compile_circuit(cpu, circuit, use_cache=False)
    profile = tmp_path / "off.toml"
    profile.write_text('extends = "cpu"\n[synthesis]\nreplicate_gadgets = false\n')
    off = load_plugins().backend(load_profile(str(profile)), Timer(level=0))
    full, full_synthesized = compile_circuit(off, circuit, use_cache=False)
    assert np.array_equal(synthesized.witness, full_synthesized.witness)
    for name in PROGRAM_ARRAYS:
        assert np.array_equal(getattr(copied.program, name), getattr(full.program, name))


def test_past_the_bound_on_held_templates_calls_are_recorded_as_they_come(monkeypatch):
    monkeypatch.setattr("cuzk_core.witness.record.MAX_HELD_ENTRIES", 0)
    copied, cs = _recorded(PorepLite(challenges=5, depth=1), replicate=True)
    assert cs.replicas == []
    full, _ = _recorded(PorepLite(challenges=5, depth=1), replicate=False)
    _assert_same(full, copied)


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def _valued(cs, x: AllocatedNum) -> Num:
    """A chain whose result carries a value that differs call by call."""
    a = x
    for _ in range(70):
        a = a.mul(cs, x)
    return Num(a.lc, a.value)


class _Valued:
    name = "test-valued"

    def knobs(self):
        return {}

    def synthesize(self, cs):
        for k in range(8):
            with cs.namespace(f"call {k}"):
                _valued(cs, AllocatedNum.alloc(cs, "x", k + 2))


def test_results_whose_values_differ_call_by_call_are_still_copied():
    copied, cs = _recorded(_Valued(), replicate=True)
    assert len(cs.replicas) == 6
    full, _ = _recorded(_Valued(), replicate=False)
    _assert_same(full, copied)
