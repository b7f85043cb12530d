"""Building CSR constraint matrices from (row, column, coefficient) triples in bulk."""

from __future__ import annotations

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import SparseMatrix


def csr_from_triples(
    rows: np.ndarray, cols: np.ndarray, coeffs: np.ndarray, num_rows: int, num_cols: int
) -> SparseMatrix:
    """Sort by (row, column), add up repeated entries mod r and drop zeros.

    :param rows: int64 row of each entry, each below ``num_rows``.
    :param cols: int64 column of each entry, each below ``num_cols``.
    :param coeffs: ``(nnz, 4)`` canonical scalars.
    """
    if num_rows * num_cols < 1 << 62:  # one int64 key: already in order, as readers give it
        key = rows * num_cols + cols
        ordered = bool(np.all(key[1:] >= key[:-1]))
        order = None if ordered else np.argsort(key, kind="stable")
    else:
        order = np.lexsort((cols, rows))
    if order is not None:
        rows, cols, coeffs = rows[order], cols[order], coeffs[order]
    repeated = (rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])
    if repeated.any():
        starts = np.concatenate([[True], ~repeated])
        group = np.cumsum(starts) - 1
        summed = np.flatnonzero(np.bincount(group) > 1)  # the groups of repeats: few, mostly
        in_summed = np.isin(group, summed)
        sums = dict.fromkeys(summed.tolist(), 0)
        for g, value in zip(
            group[in_summed].tolist(), limbs_to_ints(coeffs[in_summed]), strict=True
        ):
            sums[g] += value
        rows, cols, coeffs = rows[starts], cols[starts], coeffs[starts].copy()
        if len(summed):
            coeffs[summed] = ints_to_limbs([sums[g] % FR_MODULUS for g in summed.tolist()])
    keep = coeffs.any(axis=1)
    rows, cols, coeffs = rows[keep], cols[keep], coeffs[keep]
    indptr = np.zeros(num_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=indptr[1:])
    return SparseMatrix(
        indptr=indptr,
        cols=cols.astype(np.int64),
        coeffs=np.ascontiguousarray(coeffs, dtype=np.uint64),
        num_cols=num_cols,
    )
