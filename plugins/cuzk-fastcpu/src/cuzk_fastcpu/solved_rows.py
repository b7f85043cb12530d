"""A·z and B·z of the rows a witness program solved, kept for the ``evaluate_r1cs`` that follows.

Solving row r computes A_r·z and B_r·z on the way (z_j = (A_r·z · B_r·z − C_r·z) / c); without
this, ``evaluate_r1cs`` computes them again, about 40% of a compiled proof's synthesis. The
witness hook keeps them beside the witness it returned; ``evaluate_r1cs`` takes them only for
that very array, unchanged since (a fingerprint of its words), and only for matrices whose A and B
start with the program's rows in the same memory (the program's own matrices, or the proving
matrices the core builds around them). Every other row, and C in full, is computed from z, so the
check a·b = c still tests the program's work. A kept entry is used once, then dropped, and
dropped too when its witness is freed unused.
"""

from __future__ import annotations

import threading
import weakref

import attrs
import numpy as np

from cuzk_core.r1cs import R1CSMatrices, SparseMatrix
from cuzk_core.witness.program import SOLVE, WitnessProgram

from . import kernels

_KEEP = 2
"""Witnesses kept at most (two proofs' syntheses may interleave in one process)."""


@attrs.define(eq=False)
class _Kept:
    witness: weakref.ref
    fingerprint: int
    a_rows: SparseMatrix
    b_rows: SparseMatrix
    unsolved: np.ndarray
    """The program's rows no op solves (their A·z, B·z were not computed)."""
    zm: np.ndarray
    a: np.ndarray
    b: np.ndarray


_kept: list[_Kept] = []
_lock = threading.RLock()  # re-entered when a freed witness's callback runs inside a section


def _forget(dead: weakref.ref) -> None:
    with _lock:
        _kept[:] = [kept for kept in _kept if kept.witness is not dead]


def witness(program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray) -> np.ndarray:
    """The witness z (from :func:`kernels.witness_rows`), with the solved rows' A·z, B·z kept."""
    m = program.matrices
    z, zm, a, b = kernels.witness_rows(program, inputs, hints, m.num_constraints + m.num_inputs)
    solved = np.zeros(m.num_constraints, dtype=bool)
    solved[program.arg[program.kind == SOLVE]] = True
    kept = _Kept(
        weakref.ref(z, _forget), kernels.fingerprint(z), m.a, m.b, np.flatnonzero(~solved), zm, a, b
    )
    with _lock:
        _kept.append(kept)
        del _kept[:-_KEEP]
    return z


def evaluate(
    matrices: R1CSMatrices, witness: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(A·z, B·z, C·z)`` with what :func:`witness` kept for ``witness``, or None when nothing
    kept fits (another array, a changed one, or other matrices)."""
    kept = _take(witness, matrices)
    if kept is None:
        return None
    rows = matrices.num_constraints
    extra = np.concatenate([kept.unsolved, np.arange(kept.a_rows.num_rows, rows)])
    out = []
    for matrix, values in ((matrices.a, kept.a), (matrices.b, kept.b)):
        result = values[:rows]
        kernels.spmv_rows(matrix, kept.zm, extra, result)
        out.append(result)
    c = np.empty((rows, 4), dtype=np.uint64)
    kernels.spmv_rows(matrices.c, kept.zm, np.arange(rows), c)
    return out[0], out[1], c


def _take(witness: np.ndarray, matrices: R1CSMatrices) -> _Kept | None:
    with _lock:
        for k, kept in enumerate(_kept):
            if kept.witness() is witness:
                del _kept[k]
                break
        else:
            return None
    fits = (
        matrices.num_constraints <= len(kept.a)
        and _extends(matrices.a, kept.a_rows)
        and _extends(matrices.b, kept.b_rows)
        and kernels.fingerprint(witness) == kept.fingerprint
    )
    return kept if fits else None


def _extends(big: SparseMatrix, small: SparseMatrix) -> bool:
    """Whether ``big``'s first rows are ``small``'s rows, in the very same memory."""
    return big is small or (
        big.num_cols == small.num_cols
        and big.num_rows >= small.num_rows
        and _same_start(big.indptr, small.indptr)
        and _same_start(big.cols, small.cols)
        and _same_start(big.coeffs, small.coeffs)
    )


def _same_start(big: np.ndarray, small: np.ndarray) -> bool:
    if len(small) == 0:
        return True
    return (
        len(big) >= len(small)
        and big.strides == small.strides
        and big.__array_interface__["data"][0] == small.__array_interface__["data"][0]
    )
