"""fastcpu's evaluate_r1cs reusing the A·z, B·z its witness hook computed: only for that very,
unchanged witness and matrices starting with the program's rows in the same memory."""

from __future__ import annotations

import numpy as np
import pytest
from cuzk_fastcpu import kernels, plugin, solved_rows

from cuzk_core.circuits import PorepLite
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.witness.record import RecordingConstraintSystem
from cuzk_core.witness.replay import replay


@pytest.fixture(scope="module")
def compiled():
    cs = RecordingConstraintSystem()
    circuit = PorepLite(challenges=3, depth=4, seed=1)
    circuit.synthesize(cs)
    recording = cs.recording()
    program, proving = recording.program, recording.proving  # the program's rows are views
    return program, proving, replay(PorepLite(challenges=3, depth=4, seed=2), program)


def _full(matrices, z):
    return [kernels.spmv(m, z) for m in (matrices.a, matrices.b, matrices.c)]


@pytest.mark.parametrize("which", ["program", "proving"])
def test_the_witness_rows_are_reused_and_equal_the_full_products(compiled, which):
    program, proving, (inputs, hints) = compiled
    matrices = program.matrices if which == "program" else proving
    z = plugin.cuzk_witness(None, program, inputs, hints)
    assert np.array_equal(z, kernels.witness(program, inputs, hints))
    reused = solved_rows.evaluate(matrices, z)
    assert reused is not None
    for got, want in zip(reused, _full(matrices, z), strict=True):
        assert np.array_equal(got, want)
    assert solved_rows.evaluate(matrices, z) is None  # used once


def test_a_changed_witness_or_copied_matrices_are_computed_in_full(compiled):
    program, proving, (inputs, hints) = compiled
    z = plugin.cuzk_witness(None, program, inputs, hints)
    z[program.num_inputs + 5, 0] ^= 1
    assert solved_rows.evaluate(proving, z) is None
    copied = with_input_rows(program.matrices)  # the same rows in other memory
    z = plugin.cuzk_witness(None, program, inputs, hints)
    assert solved_rows.evaluate(copied, z) is None
    z = plugin.cuzk_witness(None, program, inputs, hints)
    assert solved_rows.evaluate(proving, z.copy()) is None
    reused = plugin.cuzk_evaluate_r1cs(None, proving, z)
    for got, want in zip(reused, _full(proving, z), strict=True):
        assert np.array_equal(got, want)


def test_a_witness_freed_unused_drops_what_was_kept(compiled):
    program, _, (inputs, hints) = compiled
    plugin.cuzk_witness(None, program, inputs, hints)  # never evaluated, freed at once
    assert solved_rows._kept == []


def test_a_tampered_witness_still_fails_its_check(compiled):
    """The check a·b = c still sees a wrong value: C·z is computed from z."""
    program, proving, (inputs, hints) = compiled
    z = plugin.cuzk_witness(None, program, inputs, hints)
    a, b, c = plugin.cuzk_evaluate_r1cs(None, proving, z)
    residue = kernels.quotient(a, b, c, 1)
    assert not residue.any()
    z = plugin.cuzk_witness(None, program, inputs, hints)
    z[-1, 0] ^= 1
    a, b, c = plugin.cuzk_evaluate_r1cs(None, proving, z)
    assert kernels.quotient(a, b, c, 1).any()
