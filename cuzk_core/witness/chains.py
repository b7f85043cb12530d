"""S-box chains of a witness program: three SOLVE ops that compute x², x⁴ and x⁵ of one x.

A Poseidon S-box is three SOLVE ops in a row: x² = x·x, x⁴ = x²·x², x⁵ = x⁴·x (aux j, j + 1,
j + 2; x a linear combination). Each op waits for the one before, so a chain costs three op
latencies where its products need one: porep-lite's witness is 98% such chains, and a backend
may run each as one op (the GPU witness kernels' ``OP_SBOX``). The chains are found in the
matrices alone (any circuit whose rows have this shape, whatever made them), once by the
compile, and stored with the program (``WitnessProgram.sbox_heads``) like its parts.
"""

from __future__ import annotations

import numpy as np

from cuzk_core.r1cs import SparseMatrix

from .program import SOLVE, WitnessProgram

CHUNK_ENTRIES = 1 << 16
"""Row entries compared at once: small gathers stay in memory the allocator reuses (1 << 22:
0.93 s at c135 d32 on the 2-core VM, 1 << 16: 0.65 s; a 2^24 program's x rows hold ~150 M)."""


def _single(matrix: SparseMatrix, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Per row: whether it is exactly the one entry ``(cols, 1)``."""
    start = np.take(matrix.indptr, rows)
    one = np.take(matrix.indptr, rows + 1) - start == 1
    at = np.where(one, start, 0)
    if not matrix.nnz:
        return np.zeros(len(rows), dtype=bool)
    coeff = np.take(matrix.coeffs, at, axis=0)  # take: ~10× numpy's fancy indexing of rows
    unit = (coeff[:, 0] == 1) & (coeff[:, 1:] == 0).all(axis=1)
    return one & (np.take(matrix.cols, at) == cols) & unit


def _same_rows(
    first: SparseMatrix, first_rows: np.ndarray, second: SparseMatrix, second_rows: np.ndarray
) -> np.ndarray:
    """Per pair: whether the two rows hold the same entries (columns and coefficients)."""
    length = first.indptr[first_rows + 1] - first.indptr[first_rows]
    same = length == second.indptr[second_rows + 1] - second.indptr[second_rows]
    ends = np.cumsum(np.where(same, length, 0))
    if not len(ends) or not ends[-1]:
        return same
    starts = np.searchsorted(ends, np.arange(0, ends[-1], CHUNK_ENTRIES), side="right")
    starts[0] = 0
    for lo, hi in zip(starts, [*starts[1:], len(ends)], strict=True):
        count = np.where(same[lo:hi], length[lo:hi], 0)
        owner = np.repeat(np.arange(lo, hi), count)
        offset = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
        a = np.take(first.indptr, first_rows[owner]) + offset
        b = np.take(second.indptr, second_rows[owner]) + offset
        differs = np.take(first.cols, a) != np.take(second.cols, b)
        differs |= (np.take(first.coeffs, a, axis=0) != np.take(second.coeffs, b, axis=0)).any(1)
        same[np.unique(owner[differs])] = False
    return same


def find_sbox_heads(program: WitnessProgram) -> np.ndarray:
    """The aux j (ascending, at least 3 apart) whose ops j, j + 1, j + 2 compute x², x⁴ and x⁵
    of one linear combination x: row j is x·x = aux j, row j + 1 is aux j · aux j = aux j + 1,
    row j + 2 is aux j + 1 · x = aux j + 2 (the x rows equal entry for entry, every other
    entry one aux with coefficient 1)."""
    kind, arg, m = program.kind, program.arg, program.matrices
    solve = kind == SOLVE
    j = np.flatnonzero(solve[:-2] & solve[1:-1] & solve[2:]) if len(kind) > 2 else np.zeros(0, int)
    column = program.num_inputs + j
    square, fourth, fifth = arg[j], arg[j + 1], arg[j + 2]
    ok = _single(m.c, square, column) & _single(m.c, fourth, column + 1)
    ok &= _single(m.c, fifth, column + 2) & _single(m.a, fourth, column)
    ok &= _single(m.b, fourth, column) & _single(m.a, fifth, column + 1)
    j, square, fifth = j[ok], square[ok], fifth[ok]
    j = j[_same_rows(m.a, square, m.b, square) & _same_rows(m.b, fifth, m.b, square)]
    # A chain overlapping an earlier one runs unfused (no S-box makes one: x⁵ is not x²).
    candidate = np.zeros(len(kind) + 2, dtype=bool)
    candidate[j + 2] = True
    return j[~candidate[j + 1] & ~candidate[j]]


def program_sbox_heads(program: WitnessProgram) -> np.ndarray:
    """The first aux of every S-box chain (:func:`find_sbox_heads`): the stored ones, or found now
    for a program made without the store (~0.7 s a million ops on a 2-core VM)."""
    if program.sbox_heads is not None:
        return program.sbox_heads
    return find_sbox_heads(program)
