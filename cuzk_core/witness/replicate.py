"""Copying recorded gadget calls: a circuit that calls one gadget many times with arguments of
one shape (porep-lite: a Merkle path per challenge) is recorded once per shape, and the other
calls are copies made with numpy instead of runs of the gadget's Python.

A call's *shape* (:func:`call_shape`) is its gadget, its plain arguments (by value; functions
and other hashable objects by identity) and, for the variables in its arguments, which
positions name the same variable (slots, numbered by first occurrence) and with which
coefficients. Fields named ``value`` carry witness values and are not part of the shape: a
compiled circuit's structure never depends on values (one program serves every instance).

The first call of a shape is recorded as usual and becomes a :class:`Template`: its rows,
program ops and namespace marks relative to where it started, each variable as internal, a slot
or ONE. The second call is recorded too and must give an equal template, else the shape is never
copied (the gadget depends on something its arguments do not say). From the third call on, a
call is a :class:`Replica`: the counters move, its rows stay empty, and :func:`with_replicas`
writes the template's entries at the replica's offsets when the matrices are built. Every
:data:`AUDIT_EVERY`-th call is still recorded, and compared with the template.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, SparseMatrix, Variable
from cuzk_core.r1cs.lc import ONE

from .program import SOLVE

AUDIT_EVERY = 16
"""Every 16th copy of a shape is recorded for real and compared with its template: a gadget
whose constraints depend on more than its arguments' shape (a value, a counter) is caught
there, and the compile is recorded again without copies."""
MAX_HELD_ENTRIES = 1 << 21
"""Templates of shapes seen only once may hold this many entries in all (~200 MB of tuples);
a circuit of many one-off shapes then records the rest without keeping templates."""
MIN_TEMPLATE_ROWS = 64
"""Smaller calls are recorded every time: working out their shape costs what recording does."""
ONE_REF = -1
"""A template's reference to ONE; internal variable i is ``i``, slot k is ``-2 - k``."""

_ENTRY = np.dtype((np.void, 32))
"""One coefficient's four limbs as a single record, for fast gathers and scatters."""

Rows = tuple[tuple[tuple[int, int], ...], ...]
"""A template's rows of one matrix: per row, its ``(reference, coefficient)`` entries."""


class NotReplicable(Exception):
    """An argument that has no shape (an object that is neither data nor hashable)."""


def call_shape(
    fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]
) -> tuple[Hashable, list[Variable]]:
    """The call's shape and its slot variables in slot order (ONE is never a slot)."""
    slots: dict[Variable, int] = {}  # numbered by first occurrence

    def slot(v: Variable) -> int:
        return ONE_REF if v == ONE else -2 - slots.setdefault(v, len(slots))

    shape = (fn, _as_data(args, slot, True), _as_data(tuple(sorted(kwargs.items())), slot, True))
    return shape, list(slots)


def _as_data(obj: Any, ref: Callable[[Variable], int], arguments: bool) -> Hashable:
    """``obj`` as hashable data, its variables through ``ref`` and fields named ``value`` (witness
    values) left out. Arguments may also hold the constraint system and hashable objects (kept
    by identity); anything else is :class:`NotReplicable`."""
    kind = type(obj)
    if kind is Variable:
        return ("v", ref(obj))
    if kind is LinearCombination:
        return ("lc", tuple((ref(v), c) for v, c in obj.terms.items()))
    if kind in (int, bool, str, float, type(None)):
        return (kind.__name__, obj)
    if kind in (list, tuple):
        return (kind.__name__, tuple(_as_data(x, ref, arguments) for x in obj))
    if attrs.has(kind):
        fields = attrs.fields(kind)
        return (
            kind,
            tuple(
                None if f.name == "value" else _as_data(getattr(obj, f.name), ref, arguments)
                for f in fields
            ),
        )
    if not arguments:
        raise NotReplicable(f"returns a {kind.__name__}")
    if isinstance(obj, ConstraintSystem):
        return "cs"
    try:
        hash(obj)
    except TypeError:
        raise NotReplicable(kind.__name__) from None
    return ("object", obj)  # the object itself: equal only to itself, and kept alive


@attrs.frozen(eq=False)
class Template:
    """One recorded call of a shape, relative to where it started."""

    rows: tuple[Rows, Rows, Rows]
    """A, B and C."""
    lin: Rows
    """The bit decompositions' source rows."""
    names: tuple[str, ...]
    marks: tuple[tuple[int, str], ...]
    """Namespace marks: (row, path below the call's namespace)."""
    kind: tuple[int, ...]
    arg: tuple[int, ...]
    """Relative: a row (solved ops) or a lin row (bits)."""
    extra: tuple[int, ...]
    result: Hashable
    """The result's shape, its variables as references."""
    example: tuple[Any, Callable[[int], int]]
    """The recorded call's result object and its variable → reference map (copies translate
    it)."""

    def same_as(self, other: Template) -> bool:
        """Whether two calls recorded the same thing (the second call's check)."""
        return all(
            getattr(self, f.name) == getattr(other, f.name)
            for f in attrs.fields(Template)
            if f.name != "example"
        )

    @property
    def num_entries(self) -> int:
        """Entries of its rows and lin rows: what holding it costs."""
        return sum(len(row) for rows in (*self.rows, self.lin) for row in rows)

    @property
    def num_rows(self) -> int:
        """Constraints a call adds."""
        return len(self.names)

    @property
    def num_aux(self) -> int:
        """Aux variables a call allocates."""
        return len(self.kind)


@attrs.frozen(eq=False)
class Replica:
    """A copied call: where its rows, aux variables and lin rows start, and its slot variables."""

    template: Template
    row: int
    aux: int
    lin: int
    slots: tuple[Variable, ...]


def relative_to(aux_start: int, aux_end: int, slots: Sequence[Variable]) -> Callable[[int], int]:
    """A call's variable → template reference map; :class:`NotReplicable` for a variable
    outside the call (not allocated in it, not an argument, not ONE)."""
    slot_of: dict[int, int] = {v: -2 - k for k, v in enumerate(slots)}

    def ref(v: int) -> int:
        if v == ONE:
            return ONE_REF
        if v < 0 and aux_start <= ~v < aux_end:
            return ~v - aux_start
        try:
            return slot_of[v]
        except KeyError:
            raise NotReplicable(f"reads {v!r}, not an argument") from None

    return ref


def result_shape(obj: Any, ref: Callable[[Variable], int]) -> Hashable:
    """A gadget's result as data, its variables as references (what two calls must share;
    values are left out, as in arguments)."""
    return _as_data(obj, ref, False)


def translated(template_result: Any, template_var: Callable[[int], Variable]) -> Any:
    """The template's result object with its variables replaced (a replica's result); values
    are the template's, which nothing may read (the program computes the real ones)."""

    def walk(obj: Any) -> Any:
        kind = type(obj)
        if kind is Variable:
            return template_var(obj)
        if kind is LinearCombination:
            return LinearCombination({template_var(v): c for v, c in obj.terms.items()})
        if kind in (list, tuple):
            return kind(walk(x) for x in obj)
        if attrs.has(kind):
            changes = {f.name: walk(getattr(obj, f.name)) for f in attrs.fields(kind)}
            return attrs.evolve(obj, **{k.lstrip("_"): v for k, v in changes.items()})
        return obj

    return walk(template_result)


def template_dependencies(template: Template) -> tuple[np.ndarray, np.ndarray]:
    """Per op of a call, the references its row reads other than itself and ONE, as
    ``(op, reference)`` pairs: every copy of the call shares them."""
    ops, refs = [], []
    for j, (kind, arg) in enumerate(zip(template.kind, template.arg, strict=True)):
        rows = [m[arg] for m in template.rows] if kind == SOLVE else [template.lin[arg]]
        read = {r for row in rows for r, _ in row if r != ONE_REF and r != j}
        ops += [j] * len(read)
        refs += sorted(read)
    return np.array(ops, dtype=np.int64), np.array(refs, dtype=np.int64)


def with_replicas(
    base: SparseMatrix,
    replicas: Sequence[Replica],
    rows_of: Callable[[Template], Rows],
    start_of: Callable[[Replica], int],
    num_inputs: int,
) -> SparseMatrix:
    """``base`` (whose replica rows are empty) with every replica's entries written in: per
    replica one contiguous run of the template's entries, sorted within each row by column."""
    if not replicas:
        return base
    counts = np.diff(base.indptr)
    prepared: dict[int, _Entries] = {}
    for replica in replicas:
        entries = prepared.get(id(replica.template))
        if entries is None:
            entries = prepared[id(replica.template)] = _Entries(rows_of(replica.template))
        start = start_of(replica)
        if counts[start : start + len(entries.counts)].any():
            raise ValueError("a replica's rows already hold entries")
        counts[start : start + len(entries.counts)] = entries.counts
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    cols = np.empty(int(indptr[-1]), dtype=np.int64)
    coeffs = np.empty((len(cols), 4), dtype=np.uint64)
    base_counts = np.diff(base.indptr)
    base_dest = np.arange(base.nnz) + np.repeat(indptr[:-1] - base.indptr[:-1], base_counts)
    cols[base_dest] = base.cols
    # through 32-byte records: scattering (n, 4) rows with an index array is many times slower
    coeffs.view(_ENTRY)[base_dest, 0] = np.ascontiguousarray(base.coeffs).view(_ENTRY)[:, 0]
    for replica in replicas:
        entries = prepared[id(replica.template)]
        begin = int(indptr[start_of(replica)])
        run_cols, run_coeffs = entries.placed(replica, num_inputs)
        cols[begin : begin + len(run_cols)] = run_cols
        coeffs[begin : begin + len(run_cols)] = run_coeffs
    return SparseMatrix(indptr, cols, coeffs, base.num_cols)


class _Entries:
    """One template matrix's entries as arrays, ordered within rows for each slot order."""

    def __init__(self, rows: Rows) -> None:
        self.counts = np.array([len(row) for row in rows], dtype=np.int64)
        self.row = np.repeat(np.arange(len(rows), dtype=np.int64), self.counts)
        self.ref = np.array([r for row in rows for r, _ in row], dtype=np.int64)
        self.limbs = ints_to_limbs([c for row in rows for _, c in row]).reshape(-1, 4)
        self._orders: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def placed(self, replica: Replica, num_inputs: int) -> tuple[np.ndarray, np.ndarray]:
        """The replica's columns and coefficients, in CSR order."""
        slot_cols = np.array([v.column(num_inputs) for v in replica.slots], dtype=np.int64)
        ranks = tuple(np.argsort(np.argsort(slot_cols, kind="stable"), kind="stable").tolist())
        order = self._orders.get(ranks)
        if order is None:
            order = self._orders[ranks] = self._ordered(np.array(ranks, dtype=np.int64))
        ref, limbs, is_slot = order
        # internal i: its aux column; slot k (ref −2 − k): the argument's column; ONE: column 0
        cols = np.where(ref >= 0, num_inputs + replica.aux + ref, 0)
        if len(slot_cols):
            cols[is_slot] = slot_cols[-2 - ref[is_slot]]
        return cols, limbs

    def _ordered(self, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Entries sorted by (row, column) for replicas whose slots' columns rank as ``ranks``:
        ONE's column is 0, arguments were allocated before the call, its own variables after."""
        ref = self.ref
        local = np.where(ref >= 0, 1 + len(ranks) + ref, 0)
        slot = ref <= -2
        if len(ranks):
            local[slot] = 1 + ranks[-2 - ref[slot]]
        order = np.lexsort((local, self.row))
        return ref[order], self.limbs[order], slot[order]
