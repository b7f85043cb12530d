"""R1CS matrices in CSR form with limb coefficients: what setup and the provers consume."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice, pairwise

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints

from .lc import Variable

_R = FR_MODULUS
_SCALAR_LIMBS = 4
_DISTINCT_CHUNK = 1 << 20
"""Coefficients whose distinct values are converted together (bounds the table of them)."""


def _coefficient_limbs(values: Iterable[int], count: int) -> np.ndarray:
    """The ``(count, 4)`` limbs of ``count`` canonical ``values``, each distinct value of a chunk
    converted once: circuits repeat a few constants (±1, S-box and MDS constants), and one
    conversion per entry was 12 of 17 s of the matrices of a 2^18 porep-lite."""
    out = np.empty((count, _SCALAR_LIMBS), dtype=np.uint64)
    remaining = iter(values)
    for start in range(0, count, _DISTINCT_CHUNK):
        size = min(_DISTINCT_CHUNK, count - start)
        code: dict[int, int] = {}
        codes = np.fromiter(
            (code.setdefault(v, len(code)) for v in islice(remaining, size)), np.int64, size
        )
        table = ints_to_limbs(list(code), _SCALAR_LIMBS)
        np.take(table, codes, axis=0, out=out[start : start + size])
    return out


@attrs.frozen(eq=False)
class SparseMatrix:
    """A CSR matrix over Fr: row i holds ``cols[indptr[i]:indptr[i+1]]`` and their ``coeffs``.

    ``indptr`` is int64 (rows + 1), ``cols`` int64 (nnz, ascending within a row), ``coeffs``
    uint64 (nnz, 4): little-endian limbs of the canonical, non-zero coefficient.
    """

    indptr: np.ndarray
    cols: np.ndarray
    coeffs: np.ndarray
    num_cols: int

    def __attrs_post_init__(self) -> None:
        nnz = len(self.cols)
        if self.indptr.dtype != np.int64 or self.indptr.ndim != 1 or len(self.indptr) < 1:
            raise ValueError("indptr must be a 1-D int64 array of length rows + 1")
        if self.indptr[0] != 0 or self.indptr[-1] != nnz:
            raise ValueError(f"indptr must run from 0 to nnz = {nnz}")
        if self.cols.dtype != np.int64 or self.cols.ndim != 1:
            raise ValueError("cols must be a 1-D int64 array")
        if self.coeffs.dtype != np.uint64 or self.coeffs.shape != (nnz, _SCALAR_LIMBS):
            raise ValueError(f"coeffs must be a uint64 array shaped ({nnz}, {_SCALAR_LIMBS})")

    @property
    def num_rows(self) -> int:
        """Rows (constraints)."""
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        """Stored (non-zero) entries."""
        return len(self.cols)

    def first_rows(self, rows: int) -> SparseMatrix:
        """The first ``rows`` rows, as views of this matrix's arrays (no copy)."""
        end = int(self.indptr[rows])
        return SparseMatrix(
            self.indptr[: rows + 1], self.cols[:end], self.coeffs[:end], self.num_cols
        )

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[tuple[int, int]]], num_cols: int) -> SparseMatrix:
        """Build from per-row ``(col, coeff)`` lists; coefficients reduced mod r, zeros dropped."""
        rows = list(rows)
        counts = [len(row) for row in rows]
        cols = np.fromiter((col for row in rows for col, _ in row), np.int64, sum(counts))
        coeffs = (coeff % _R for row in rows for _, coeff in row)
        return cls._from_entries(counts, cols, coeffs, num_cols)

    @classmethod
    def from_term_dicts(
        cls, rows: Sequence[dict[Variable, int]], num_inputs: int, num_cols: int
    ) -> SparseMatrix:
        """Build from linear-combination term dicts (canonical coefficients), mapping each
        variable to its column in z = [1, inputs..., aux...]."""
        counts = [len(row) for row in rows]
        keys = np.fromiter(chain.from_iterable(rows), np.int64, sum(counts))
        cols = np.where(keys >= 0, keys, num_inputs + ~keys)
        coeffs = chain.from_iterable(row.values() for row in rows)
        return cls._from_entries(counts, cols, coeffs, num_cols)

    @classmethod
    def _from_entries(
        cls, counts: list[int], cols: np.ndarray, coeffs: Iterable[int], num_cols: int
    ) -> SparseMatrix:
        n_rows = len(counts)
        if len(cols) and (cols.min() < 0 or cols.max() >= num_cols):
            raise ValueError(f"column index out of range 0..{num_cols - 1}")
        row_ids = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
        limbs = _coefficient_limbs(coeffs, len(cols))
        kept = np.flatnonzero(limbs.any(axis=1))
        row_ids, cols = row_ids[kept], cols[kept]
        order = np.lexsort((cols, row_ids))
        row_ids, cols = row_ids[order], cols[order]
        # one gather through np.take: indexing the (n, 4) limbs with an index array is ~30x slower
        limbs = np.take(limbs, kept[order], axis=0)
        if np.any((row_ids[1:] == row_ids[:-1]) & (cols[1:] == cols[:-1])):
            raise ValueError("a row names the same column twice")
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_ids, minlength=n_rows), out=indptr[1:])
        return cls(indptr=indptr, cols=cols, coeffs=limbs, num_cols=num_cols)

    def rows(self) -> Iterator[list[tuple[int, int]]]:
        """Each row as a list of ``(col, coeff)`` with plain ints, for plain-Python users."""
        cols = self.cols.tolist()
        coeffs = limbs_to_ints(self.coeffs)
        for start, end in pairwise(self.indptr.tolist()):
            yield list(zip(cols[start:end], coeffs[start:end], strict=True))

    def dot(self, z: Sequence[int]) -> list[int]:
        """The matrix-vector product M·z mod r with plain ints (reference, not fast)."""
        if len(z) != self.num_cols:
            raise ValueError(f"vector has {len(z)} entries, the matrix {self.num_cols} columns")
        return [sum(coeff * z[col] for col, coeff in row) % _R for row in self.rows()]


@attrs.frozen(eq=False)
class ConstraintNames:
    """Constraint names with their namespaces, joined only when asked (an error message).

    ``names[i]`` is row i's bare name; ``mark_at``/``mark_prefix`` say that from row
    ``mark_at[k]`` on, the namespace path is ``mark_prefix[k]`` (ascending, starting at 0).
    """

    names: Sequence[str]
    mark_at: Sequence[int]
    mark_prefix: Sequence[str]

    def name(self, index: int) -> str:
        """Row ``index``'s full name, ``path/name``; rows past the named ones (the input rows
        Groth16 appends) are ``input row k``."""
        if index >= len(self.names):
            return f"input row {index - len(self.names)}"
        prefix = self.mark_prefix[bisect_right(self.mark_at, index) - 1]
        name = self.names[index]
        return f"{prefix}/{name}" if prefix else name


@attrs.frozen(eq=False)
class R1CSMatrices:
    """A synthesized circuit's shape: A, B, C over z = [1, inputs..., aux...] and the counts;
    ``names`` (when known) names each row for error messages."""

    num_inputs: int
    num_aux: int
    num_constraints: int
    a: SparseMatrix
    b: SparseMatrix
    c: SparseMatrix
    names: ConstraintNames | None = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        for label, m in (("a", self.a), ("b", self.b), ("c", self.c)):
            if m.num_rows != self.num_constraints or m.num_cols != self.num_variables:
                raise ValueError(
                    f"matrix {label} is {m.num_rows}×{m.num_cols}, expected "
                    f"{self.num_constraints}×{self.num_variables}"
                )

    @property
    def num_variables(self) -> int:
        """Columns of z: inputs (ONE included) plus aux."""
        return self.num_inputs + self.num_aux

    def row_name(self, index: int) -> str | None:
        """Row ``index``'s namespaced name, or None when the rows are unnamed (circom)."""
        return None if self.names is None else self.names.name(index)
