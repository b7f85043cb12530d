"""Constraint system, linear combinations, CSR matrices and limb packing."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from cuzk_core.conformance.inputs import SPECIAL_SCALARS, random_scalars
from cuzk_core.field.constants import FR_MODULUS as R
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import (
    ONE,
    ConstraintSystem,
    LinearCombination,
    R1CSMatrices,
    SparseMatrix,
    Variable,
    VariableKind,
)

rng = random.Random(1234)


# -- limbs ---------------------------------------------------------------------------------------


def test_limbs_round_trip_and_layout() -> None:
    values = [*SPECIAL_SCALARS, 2**256 - 1, *random_scalars(rng, 200)]
    arr = ints_to_limbs(values)
    assert arr.shape == (len(values), 4)
    assert arr.dtype == np.uint64
    assert arr.flags.writeable
    for v, row in zip(values, arr, strict=True):
        assert [int(x) for x in row] == [(v >> (64 * i)) & (2**64 - 1) for i in range(4)]
    assert limbs_to_ints(arr) == values


def test_limbs_other_widths_empty_and_overflow() -> None:
    values = [rng.randrange(2**384) for _ in range(10)]
    assert limbs_to_ints(ints_to_limbs(values, limbs=6)) == values
    assert ints_to_limbs([]).shape == (0, 4)
    assert limbs_to_ints(np.zeros((0, 4), np.uint64)) == []
    with pytest.raises(OverflowError):
        ints_to_limbs([2**256])
    with pytest.raises(ValueError, match="shape"):
        limbs_to_ints(np.zeros(4, np.uint64))


def test_limbs_accept_non_contiguous_views() -> None:
    arr = ints_to_limbs(random_scalars(rng, 8))
    assert limbs_to_ints(arr[::2]) == limbs_to_ints(arr)[::2]


# -- variables and linear combinations -----------------------------------------------------------


def test_variable_kind_index_column() -> None:
    x = Variable(VariableKind.AUX, 5)
    y = Variable(VariableKind.INPUT, 3)
    assert (x.kind, x.index, y.kind, y.index) == (VariableKind.AUX, 5, VariableKind.INPUT, 3)
    assert x.column(4) == 9 and y.column(4) == 3
    assert Variable(VariableKind.INPUT, 0) == ONE and bool(ONE)
    assert repr(x) == "Variable(AUX, 5)"
    assert pickle.loads(pickle.dumps(x)) == x and type(pickle.loads(pickle.dumps(x))) is Variable
    assert x != y and len({x, y, Variable(VariableKind.AUX, 5)}) == 2
    with pytest.raises(ValueError):
        Variable(VariableKind.AUX, -1)


def test_variable_arithmetic_builds_linear_combinations() -> None:
    x, y = Variable(VariableKind.AUX, 0), Variable(VariableKind.AUX, 1)
    assert isinstance(x + y, LinearCombination)
    assert dict(x + y) == {x: 1, y: 1}
    assert dict(x - y) == {x: 1, y: R - 1}
    assert dict(3 * x) == dict(x * 3) == {x: 3}
    assert dict(-x) == {x: R - 1}
    assert dict(5 - x) == {x: R - 1, ONE: 5}
    assert dict(sum([x, y, x])) == {x: 2, y: 1}


def test_linear_combination_operations() -> None:
    x, y = Variable(VariableKind.AUX, 0), Variable(VariableKind.INPUT, 1)
    a = LinearCombination.from_variable(x, -2)
    b = LinearCombination.from_variable(y) + LinearCombination.constant(7)
    assert dict(a + b) == {x: R - 2, y: 1, ONE: 7}
    assert dict(a - a) == {x: 0}
    assert dict((a + b) * 3) == {x: R - 6, y: 3, ONE: 21}
    assert dict(-b) == {y: R - 1, ONE: R - 7}
    assert dict(b + 1) == {y: 1, ONE: 8}
    assert dict(1 - b) == {y: R - 1, ONE: R - 6}
    assert a + b == b + a and a[x] == R - 2 and len(a + b) == 3 and y in b
    before = dict(a)
    _ = a + b, a - b, a * 5, -a, a.add_scaled([(4, b)])
    assert dict(a) == before


def test_scaled_sum_and_add_scaled_match_operators() -> None:
    vs = [Variable(VariableKind.AUX, i) for i in range(6)]
    lcs = [LinearCombination({v: rng.randrange(R) for v in rng.sample(vs, 3)}) for _ in range(4)]
    ks = random_scalars(rng, len(lcs))
    expected = LinearCombination()
    for k, lc in zip(ks, lcs, strict=True):
        expected = expected + lc * k
    got = LinearCombination.scaled_sum(zip(ks, lcs, strict=True))
    assert got == {v: c for v, c in expected.items() if c}
    assert lcs[0].add_scaled(zip(ks[1:], lcs[1:], strict=True)) == (
        lcs[0] + LinearCombination.scaled_sum(zip(ks[1:], lcs[1:], strict=True))
    )
    assert LinearCombination.scaled_sum([(1, lcs[0]), (R - 1, lcs[0])]) == {}


def test_evaluate_uses_the_canonical_order() -> None:
    cs = ConstraintSystem()
    a = cs.alloc("a", 10)
    i = cs.alloc_input("i", 3)
    b = cs.alloc("b", 4)
    lc = a * 2 + b - i + 5
    assert cs.assignment() == [1, 3, 10, 4]
    assert lc.evaluate(cs.assignment(), cs.num_inputs) == 2 * 10 + 4 - 3 + 5
    assert cs.value(a) == 10 and cs.value(i) == 3


# -- constraint system ---------------------------------------------------------------------------


def test_counts_and_assignment_order() -> None:
    cs = ConstraintSystem()
    assert (cs.num_inputs, cs.num_aux, cs.num_constraints) == (1, 0, 0)
    assert ConstraintSystem.one == ONE
    x = cs.alloc("x", -1)
    y = cs.alloc_input("y", 2)
    z = cs.alloc_input("z", R + 5)
    assert (x.kind, x.index, y.index, z.index) == (VariableKind.AUX, 0, 1, 2)
    assert cs.assignment() == [1, 2, 5, R - 1]
    cs.enforce("e", x, ONE, x)
    assert (cs.num_inputs, cs.num_aux, cs.num_constraints) == (3, 1, 1)


def test_is_satisfied_names_the_first_failing_constraint() -> None:
    cs = ConstraintSystem()
    x = cs.alloc("x", 3)
    y = cs.alloc("y", 9)
    cs.enforce("square", x, x, y)
    assert cs.is_satisfied() is None
    with cs.namespace("outer"):
        cs.enforce("fine", x + 1, ONE, LinearCombination.constant(4))
        with cs.namespace("inner"):
            cs.enforce("broken", x, x, x)
        cs.enforce("broken too", x, ONE, y)
    cs.enforce("top", x, ONE, x)
    assert cs.is_satisfied() == "constraint 2 'outer/inner/broken' is not satisfied"
    assert cs.constraint_name(3) == "outer/broken too"
    assert cs.constraint_name(4) == "top"


def test_enforce_rejects_other_types() -> None:
    cs = ConstraintSystem()
    x = cs.alloc("x", 1)
    with pytest.raises(TypeError, match="int"):
        cs.enforce("bad", x, 1, x)


def test_namespace_restores_after_errors_and_rejects_slashes() -> None:
    cs = ConstraintSystem()
    with pytest.raises(RuntimeError), cs.namespace("a"):
        assert cs.qualified_name("x") == "a/x"
        raise RuntimeError
    assert cs.qualified_name("x") == "x"
    with pytest.raises(ValueError, match="/"):
        cs.namespace("a/b")


# -- matrices ------------------------------------------------------------------------------------


def _random_system(
    n_constraints: int = 60,
) -> tuple[ConstraintSystem, list[tuple[LinearCombination, ...]]]:
    """A satisfied system (each constraint a·b = c, c a fresh product variable) and its LCs."""
    cs = ConstraintSystem()
    enforced = []
    pool = [cs.alloc_input(f"in {i}", rng.randrange(R)) for i in range(3)]
    pool += [cs.alloc(f"aux {i}", rng.randrange(R)) for i in range(5)]
    pool.append(ONE)
    z_value = dict(zip(pool, [cs.value(v) for v in pool], strict=True))
    for k in range(n_constraints):
        a = LinearCombination({v: rng.randrange(R) for v in rng.sample(pool, rng.randint(0, 4))})
        b = LinearCombination({v: rng.randrange(R) for v in rng.sample(pool, rng.randint(1, 4))})
        av = sum(c * z_value[v] for v, c in a.items())
        bv = sum(c * z_value[v] for v, c in b.items())
        out = cs.alloc(f"out {k}", av * bv)
        z_value[out] = av * bv % R
        pool.append(out)
        cs.enforce(f"c {k}", a, b, out)
        enforced.append((a, b, LinearCombination.from_variable(out)))
    return cs, enforced


def test_matrices_round_trip_a_random_system() -> None:
    cs, enforced = _random_system()
    assert cs.is_satisfied() is None
    m = cs.matrices()
    z = cs.assignment()
    assert isinstance(m, R1CSMatrices)
    assert (m.num_inputs, m.num_aux, m.num_constraints) == (4, cs.num_aux, 60)
    assert m.num_variables == len(z)
    for side, mat in enumerate((m.a, m.b, m.c)):
        assert mat.indptr.dtype == np.int64 and mat.indptr.shape == (61,)
        assert mat.cols.dtype == np.int64 and mat.coeffs.dtype == np.uint64
        assert mat.coeffs.shape == (mat.nnz, 4)
        lc_values = [lcs[side].evaluate(z, cs.num_inputs) for lcs in enforced]
        assert mat.dot(z) == lc_values
        for row in mat.rows():
            cols = [col for col, _ in row]
            assert cols == sorted(cols) and all(0 < c < R for _, c in row)
    az, bz, cz = m.a.dot(z), m.b.dot(z), m.c.dot(z)
    assert all(x * y % R == w for x, y, w in zip(az, bz, cz, strict=True))


def test_matrices_detect_a_corrupted_witness() -> None:
    cs, _ = _random_system(10)
    m = cs.matrices()
    z = cs.assignment()
    z[-1] = (z[-1] + 1) % R
    az, bz, cz = m.a.dot(z), m.b.dot(z), m.c.dot(z)
    assert any(x * y % R != w for x, y, w in zip(az, bz, cz, strict=True))


def test_sparse_matrix_from_rows() -> None:
    rows = [[(2, 5), (0, -1)], [], [(1, R), (3, R + 2)]]
    m = SparseMatrix.from_rows(rows, num_cols=4)
    assert m.indptr.tolist() == [0, 2, 2, 3]
    assert list(m.rows()) == [[(0, R - 1), (2, 5)], [], [(3, 2)]]
    assert m.dot([1, 2, 3, 4]) == [(-1 + 15) % R, 0, 8]
    assert (m.num_rows, m.nnz, m.num_cols) == (3, 3, 4)
    again = SparseMatrix.from_rows(m.rows(), 4)
    assert np.array_equal(again.coeffs, m.coeffs) and np.array_equal(again.cols, m.cols)
    with pytest.raises(ValueError, match="out of range"):
        SparseMatrix.from_rows([[(4, 1)]], num_cols=4)
    with pytest.raises(ValueError, match="twice"):
        SparseMatrix.from_rows([[(1, 1), (1, 2)]], num_cols=4)


def test_matrix_shapes_are_validated() -> None:
    m = SparseMatrix.from_rows([[(0, 1)]], num_cols=2)
    with pytest.raises(ValueError, match="indptr"):
        SparseMatrix(m.indptr.astype(np.int32), m.cols, m.coeffs, 2)
    with pytest.raises(ValueError, match="coeffs"):
        SparseMatrix(m.indptr, m.cols, m.coeffs[:, :3].copy(), 2)
    with pytest.raises(ValueError, match="matrix a"):
        R1CSMatrices(num_inputs=1, num_aux=2, num_constraints=1, a=m, b=m, c=m)


def test_coefficients_convert_per_distinct_value_across_chunks(monkeypatch):
    from cuzk_core.r1cs import matrices

    monkeypatch.setattr(matrices, "_DISTINCT_CHUNK", 3)
    rng = random.Random(5)
    values = [0, 1, R - 1, 1, 1, *(rng.randrange(R) for _ in range(8)), 0]
    codes, table = matrices._coefficient_codes(iter(values), len(values))
    assert (table[codes] == ints_to_limbs(values)).all()
    assert len(table) == 2 + 3 + 3 + 3 + 2  # distinct values per chunk of 3 (and the last 2)
    codes, table = matrices._coefficient_codes(iter([]), 0)
    assert codes.shape == (0,) and table.shape == (0, 4)


def test_term_dicts_shared_by_rows_match_from_rows() -> None:
    """Rows handing over one dict object are converted once; the matrix is the row-wise one."""
    x, y, z = (Variable(VariableKind.AUX, i) for i in range(3))
    shared = {z: 7, ONE: 1, x: 0, Variable(VariableKind.INPUT, 1): R - 1}
    other = {y: 3, x: 2}
    dicts = [shared, other, {}, shared, dict(shared), other, shared]
    m = SparseMatrix.from_term_dicts(dicts, num_inputs=2, num_cols=5)
    rows = [[(k if k >= 0 else 2 + ~k, v) for k, v in d.items()] for d in dicts]
    expected = SparseMatrix.from_rows(rows, num_cols=5)
    assert list(m.rows()) == list(expected.rows())
    assert next(m.rows()) == [(0, 1), (1, R - 1), (4, 7)]
    for field in ("indptr", "cols", "coeffs"):
        assert np.array_equal(getattr(m, field), getattr(expected, field))
    with pytest.raises(ValueError, match="out of range"):
        SparseMatrix.from_term_dicts([other, {Variable(VariableKind.AUX, 3): 1}], 2, 5)
    # input 2 of a 2-input system lands on aux 0's column
    with pytest.raises(ValueError, match="twice"):
        SparseMatrix.from_term_dicts([other, {Variable(VariableKind.INPUT, 2): 1, x: 1}], 2, 5)


def test_matrix_with_more_cells_than_int64_keys() -> None:
    """row·num_cols + col past int64 falls back to column ranks, with the same matrix."""
    big = 1 << 62
    rows = [[(big - 1, 5), (3, 1), (big - 7, 0)], [], [(3, 2), (0, 1)], [(big - 1, 9)]]
    m = SparseMatrix.from_rows(rows, num_cols=big)
    assert list(m.rows()) == [[(3, 1), (big - 1, 5)], [], [(0, 1), (3, 2)], [(big - 1, 9)]]
    with pytest.raises(ValueError, match="twice"):
        SparseMatrix.from_rows([[(big - 1, 1)], [(5, 1), (big - 1, 2), (5, 3)]], num_cols=big)
    empty = SparseMatrix.from_rows([[], []], num_cols=0)
    assert empty.indptr.tolist() == [0, 0, 0] and empty.coeffs.shape == (0, 4)
