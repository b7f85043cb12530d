"""R1CS matrices in CSR form with limb coefficients: what setup and the provers consume."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, count, islice, pairwise

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints

from .lc import Variable

_R = FR_MODULUS
_SCALAR_LIMBS = 4
_DISTINCT_CHUNK = 1 << 20
"""Coefficients coded through one dict of their distinct values (bounds that dict's size)."""


def _coefficient_codes(values: Iterable[int], nnz: int) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, table)`` for ``nnz`` canonical ``values``: ``table[codes[i]]`` are the 4 limbs
    of value i. Circuits repeat a few constants (±1, S-box and MDS constants), so each distinct
    value of a chunk is converted once and the entries carry an 8-byte code, not 32 bytes of
    limbs, until the sorted matrix gathers them with ``np.take(table, codes, axis=0)`` (~4x
    faster than ``table[codes]``)."""
    codes = np.empty(nnz, dtype=np.int64)
    tables = [np.empty((0, _SCALAR_LIMBS), dtype=np.uint64)]
    coded = 0
    remaining = iter(values)
    for start in range(0, nnz, _DISTINCT_CHUNK):
        size = min(_DISTINCT_CHUNK, nnz - start)
        # a missing value gets the next code: the lookups run in C, where a generator with
        # setdefault per entry was most of the matrices' time; keys keep the codes' order
        code: defaultdict[int, int] = defaultdict(count(coded).__next__)
        codes[start : start + size] = np.fromiter(
            map(code.__getitem__, islice(remaining, size)), np.int64, size
        )
        tables.append(ints_to_limbs(list(code), _SCALAR_LIMBS))
        coded += len(code)
    return codes, np.concatenate(tables)


def _check_cols(cols: np.ndarray, num_cols: int) -> None:
    """Raise unless every column is in ``0..num_cols - 1`` (zero coefficients' included)."""
    if len(cols) and (cols.min() < 0 or cols.max() >= num_cols):
        raise ValueError(f"column index out of range 0..{num_cols - 1}")


def _row_order(
    counts: np.ndarray, cols: np.ndarray, codes: np.ndarray, table: np.ndarray, num_cols: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(indptr, order)`` of the CSR matrix whose row i holds the next ``counts[i]`` entries,
    less those whose coefficient (``table[codes]``) is zero: ``order`` indexes the kept entries
    row by row, in ascending column order. Only the order is returned, so that the caller's
    unsorted arrays can be freed one by one as it gathers them."""
    n_rows = len(counts)
    width = max(int(num_cols), 1)
    if n_rows * width >= 1 << 63:
        # row·num_cols + col would overflow int64: key on each column's rank among the columns
        # present instead (at most nnz of them)
        ranks = np.unique(cols, return_inverse=True)[1].reshape(-1)
        width = max(len(cols), 1)
    else:
        ranks = cols
    # one int64 key per entry, row·width + col: a single sort orders rows, then columns
    starts = np.arange(n_rows + 1, dtype=np.int64) * width
    key = np.repeat(starts[:-1], counts)
    key += ranks
    del ranks
    zero = ~np.asarray(table.any(axis=1))
    if zero.any():
        dropped = zero[codes]
        counts = counts - np.bincount(key[dropped] // width, minlength=n_rows)
        # past every row's keys: the dropped entries sort last, where the order is cut
        key[dropped] = starts[-1]
    # rows arrive in order, so the keys come in runs: a stable sort is ~2.5x the default here
    order = np.argsort(key, kind="stable")[: int(counts.sum())]
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, order


def _reject_repeats(indptr: np.ndarray, cols: np.ndarray) -> None:
    """Raise if a row of the CSR ``(indptr, cols)``, its columns sorted, names one twice."""
    repeats = cols[1:] == cols[:-1]
    # a pair straddling a row start is two rows' entries
    row_starts = indptr[1:-1]
    repeats[row_starts[(row_starts > 0) & (row_starts < len(cols))] - 1] = False
    if repeats.any():
        raise ValueError("a row names the same column twice")


def _spread_rows(
    indptr: np.ndarray, cols: np.ndarray, codes: np.ndarray, which: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR ``(indptr, cols, codes)`` whose row i is row ``which[i]`` of the given one."""
    counts = np.diff(indptr)[which]
    out_ptr = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(counts, out=out_ptr[1:])
    # entry k of output row i is entry k - out_ptr[i] + indptr[which[i]] of the source
    source = np.repeat(indptr[which] - out_ptr[:-1], counts)
    source += np.arange(len(source), dtype=np.int64)
    return out_ptr, cols[source], codes[source]


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

    def row_entries(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every entry of ``rows`` (in order) as ``(position in rows, column)``."""
        starts = self.indptr[rows]
        counts = self.indptr[rows + 1] - starts
        owner = np.repeat(np.arange(len(rows)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return owner, self.cols[np.repeat(starts, counts) + offsets]

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
        counts = np.fromiter(map(len, rows), np.int64, len(rows))
        nnz = int(counts.sum())
        cols = np.fromiter((col for row in rows for col, _ in row), np.int64, nnz)
        _check_cols(cols, num_cols)
        codes, table = _coefficient_codes((coeff % _R for row in rows for _, coeff in row), nnz)
        indptr, order = _row_order(counts, cols, codes, table, num_cols)
        # one gather per statement: the unsorted array is freed before the next is gathered
        cols = cols[order]
        codes = codes[order]
        del order
        _reject_repeats(indptr, cols)
        return cls(indptr, cols, np.take(table, codes, axis=0), num_cols)

    @classmethod
    def from_term_dicts(
        cls, rows: Sequence[dict[Variable, int]], num_inputs: int, num_cols: int
    ) -> SparseMatrix:
        """Build from linear-combination term dicts (canonical coefficients), mapping each
        variable to its column in z = [1, inputs..., aux...].

        Rows often hand over the very same dict object (a gadget reuses one combination: a third
        of porep-lite's B rows, half its terms), so each distinct object's terms are read, coded
        and sorted once, then copied to its rows with array gathers: reading the terms from
        Python is most of the cost.
        """
        # each row's dict object by address (id), repeats found by one sort: a dict from ids to
        # slots cost ~0.5 µs a row
        ids = np.fromiter(map(id, rows), np.uint64, len(rows))
        _, firsts, slots = np.unique(ids, return_index=True, return_inverse=True)
        del ids
        distinct, which = rows, None
        if len(firsts) < len(rows):
            # number the distinct objects in order of first appearance, so they follow the rows
            by_first = np.argsort(firsts)
            rank = np.empty_like(by_first)
            rank[by_first] = np.arange(len(by_first))
            which = rank[slots]
            distinct = list(map(rows.__getitem__, firsts[by_first].tolist()))
        del firsts, slots
        counts = np.fromiter(map(len, distinct), np.int64, len(distinct))
        nnz = int(counts.sum())
        cols = np.fromiter(chain.from_iterable(distinct), np.int64, nnz)
        # aux variable j is keyed ~j (negative): its column is num_inputs + j, converted in place
        aux = cols < 0
        np.invert(cols, out=cols, where=aux)
        np.add(cols, num_inputs, out=cols, where=aux)
        del aux
        _check_cols(cols, num_cols)
        codes, table = _coefficient_codes(chain.from_iterable(map(dict.values, distinct)), nnz)
        indptr, order = _row_order(counts, cols, codes, table, num_cols)
        cols = cols[order]
        codes = codes[order]
        del order
        _reject_repeats(indptr, cols)
        if which is not None:
            indptr, cols, codes = _spread_rows(indptr, cols, codes, which)
        return cls(indptr, cols, np.take(table, codes, axis=0), num_cols)

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
