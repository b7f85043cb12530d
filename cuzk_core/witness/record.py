"""Recording a synthesis: the constraint system that also writes down the witness program.

It is an ordinary :class:`~cuzk_core.r1cs.ConstraintSystem` (same matrices, same values) that
notes, per aux variable, how it was made: a value the circuit itself supplied (a hint), one the
next constraint solves (``alloc_solved``), or a bit of a linear combination (``alloc_bit``). A
plain ``alloc`` inside a gadget means the gadget computed the value in Python where the program
cannot follow; the recording then says so and the circuit stays on the slow path.

With ``replicate`` on, a top-level gadget call of a shape already recorded twice is copied
(:mod:`.replicate`): same matrices and program, but its variables hold zero in the assignment,
so :attr:`Recording.replicated` marks them and the compile checks the program instead.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, R1CSMatrices, SparseMatrix, Variable
from cuzk_core.r1cs.lc import ONE, VariableKind

from .program import BIT, HINT, SOLVE, WitnessProgram, levels_of
from .replicate import (
    AUDIT_EVERY,
    MAX_HELD_ENTRIES,
    MIN_TEMPLATE_ROWS,
    ONE_REF,
    NotReplicable,
    Replica,
    Rows,
    Template,
    call_shape,
    relative_to,
    result_shape,
    template_dependencies,
    translated,
    with_replicas,
)

_R = FR_MODULUS
_EMPTY_ROW: dict[Variable, int] = {}
"""A copied call's rows in the term-dict lists: one shared empty dict, never written to."""


@attrs.frozen(eq=False)
class Recording:
    """What one recorded synthesis gives: matrices, the full assignment, and the program (None
    with ``problem`` saying why when the witness computation could not be recorded)."""

    matrices: R1CSMatrices
    assignment: list[int]
    program: WitnessProgram | None
    problem: str | None
    hint_names: list[str]
    proving: R1CSMatrices
    """The matrices with Groth16's input rows after them; ``matrices`` are its first rows."""
    replicated: np.ndarray | None = None
    """Per column of z, whether a copied call owns it (its assignment value is a zero, not the
    witness); None when no call was copied."""
    copies_differ: str | None = None
    """Why the copies cannot be trusted (an audited call differed), if so."""


class RecordingConstraintSystem(ConstraintSystem):
    """A constraint system that records the witness program beside the constraints."""

    def __init__(self, replicate: bool = False) -> None:
        """Empty, like :class:`ConstraintSystem`, with an empty program; ``replicate`` copies
        repeated top-level gadget calls instead of running them."""
        super().__init__()
        self._replicate = replicate
        self._seen: dict[Hashable, Template | None] = {}
        """Shapes recorded once (their template) or refused (None)."""
        self._copyable: dict[Hashable, Template] = {}
        self._copies: dict[Hashable, int] = {}
        self._held = 0
        """Entries of the templates of shapes seen once (bounded by MAX_HELD_ENTRIES)."""
        self.replicas: list[Replica] = []
        self.copies_differ: str | None = None
        """Set when an audited copy's real recording differed from its template: the copies
        made before it may be wrong, so the whole recording must be made again without."""
        self._kind: list[int] = []
        self._arg: list[int] = []
        self._extra: list[int] = []
        self._hint_names: list[str] = []
        self._pending: list[tuple[int, str]] = []
        self._inverse_index: dict[int, int] = {}
        self._lin: list[dict[Variable, int]] = []
        self._last_source: dict[Variable, int] | None = None
        self._gadgets: list[str] = []
        self._problem: str | None = None

    def _fail(self, problem: str) -> None:
        if self._problem is None:
            self._problem = problem

    def alloc(self, name: str, value: int) -> Variable:
        """An aux variable the circuit supplies: a hint, unless a gadget is running."""
        v = super().alloc(name, value)
        if self._gadgets:
            self._fail(
                f"gadget {self._gadgets[-1]} allocates {self.qualified_name(name)!r} with "
                "cs.alloc, a value computed in Python (alloc_solved or alloc_bit can be recorded)"
            )
        self._kind.append(HINT)
        self._arg.append(len(self._hint_names))
        self._extra.append(0)
        self._hint_names.append(self.qualified_name(name))
        return v

    def alloc_solved(self, name: str, value: int) -> Variable:
        """An aux variable the next constraint solves."""
        v = ConstraintSystem.alloc(self, name, value)
        self._pending.append((len(self._aux) - 1, name))
        self._kind.append(SOLVE)
        self._arg.append(-1)
        self._extra.append(0)
        return v

    def alloc_bit(
        self, name: str, value: int, source: LinearCombination, position: int
    ) -> Variable:
        """Bit ``position`` of ``source``; consecutive bits of one source share its ``lin`` row."""
        v = ConstraintSystem.alloc(self, name, value)
        if source.terms is not self._last_source:
            self._lin.append(source.terms)
            self._last_source = source.terms
        self._kind.append(BIT)
        self._arg.append(len(self._lin) - 1)
        self._extra.append(position)
        return v

    def enforce(self, name: str, a: Any, b: Any, c: Any) -> None:
        """Add the constraint; it must solve every variable ``alloc_solved`` left pending."""
        super().enforce(name, a, b, c)
        if not self._pending:
            return
        row = len(self._names) - 1
        a_terms, b_terms, c_terms = self._a[row], self._b[row], self._c[row]
        for index, var_name in self._pending:
            key = Variable(VariableKind.AUX, index)
            coeff = c_terms.get(key, 0) % _R
            if not coeff or key in a_terms or key in b_terms:
                self._fail(
                    f"{self.qualified_name(var_name)!r} (alloc_solved) is not fixed by the next "
                    f"constraint {self.qualified_name(name)!r}: it must appear in C only"
                )
                continue
            self._arg[index] = row
            self._extra[index] = self._inverse_index.setdefault(coeff, len(self._inverse_index))
        self._pending.clear()

    def call_gadget(
        self,
        gadget: Callable[..., Any],
        placeholder: Callable[..., Any],
        args: tuple,
        kwargs: dict[str, Any],
    ) -> Any:
        """Run the gadget, noting that its allocations must be recordable; a top-level call
        whose shape has been recorded twice alike is copied instead."""
        if self._gadgets:  # part of the enclosing call's recording
            return self._run(gadget, args, kwargs)
        self._last_source = None  # a bit decomposition never spans a top-level call's edge
        try:
            return self._top_level(gadget, args, kwargs)
        finally:
            self._last_source = None

    def _run(self, gadget: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
        self._gadgets.append(gadget.__qualname__)
        try:
            return gadget(*args, **kwargs)
        finally:
            self._gadgets.pop()

    def _top_level(self, gadget: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
        if not self._replicate or self._pending:
            return self._run(gadget, args, kwargs)
        try:
            shape, slots = call_shape(gadget, args, kwargs)
        except NotReplicable:
            return self._run(gadget, args, kwargs)
        copyable = self._copyable.get(shape)
        if copyable is not None:
            calls = self._copies[shape] = self._copies.get(shape, 0) + 1
            if calls % AUDIT_EVERY:
                return self._copy(copyable, slots)
            result, audited = self._recorded(gadget, args, kwargs, slots)
            if audited is None or not copyable.same_as(audited):
                self.copies_differ = (
                    f"gadget {gadget.__qualname__}: call {calls + 2} records other constraints "
                    "than the first two calls with arguments of its shape"
                )
                del self._copyable[shape]
                self._seen[shape] = None
            return result
        seen = self._seen.get(shape, ...)
        if seen is None:
            return self._run(gadget, args, kwargs)
        result, template = self._recorded(gadget, args, kwargs, slots)
        if seen is not ...:
            self._held -= seen.num_entries
        if template is None or (seen is not ... and not seen.same_as(template)):
            self._seen[shape] = None
        elif seen is not ...:
            self._copyable[shape] = seen
        elif self._held + template.num_entries > MAX_HELD_ENTRIES:
            self._seen[shape] = None  # too many shapes seen once: record the rest as they come
        else:
            self._seen[shape] = template
            self._held += template.num_entries
        return result

    def _recorded(
        self, gadget: Callable[..., Any], args: tuple, kwargs: dict[str, Any], slots: list[Variable]
    ) -> tuple[Any, Template | None]:
        """Run and record the call: its result and its template (None: not copyable)."""
        start = self._counters()
        result = self._run(gadget, args, kwargs)
        return result, self._template(start, slots, result)

    def _counters(self) -> tuple[int, int, int, int, int, int, str, str | None]:
        return (
            len(self._names),
            len(self._aux),
            len(self._lin),
            len(self._mark_at),
            len(self._inputs),
            len(self._hint_names),
            self._prefix,
            self._problem,
        )

    def _template(
        self,
        start: tuple[int, int, int, int, int, int, str, str | None],
        slots: list[Variable],
        result: Any,
    ) -> Template | None:
        """The call just recorded as a template, or None when it cannot be copied: it
        allocates inputs or hints, reads variables that are not its arguments, leaves its
        namespace or a pending variable, or is too small to be worth it."""
        row0, aux0, lin0, mark0, inputs0, hints0, prefix0, problem0 = start
        unchanged = (len(self._inputs), len(self._hint_names), self._prefix, self._problem)
        if unchanged != (inputs0, hints0, prefix0, problem0) or self._pending:
            return None
        if len(self._names) - row0 < MIN_TEMPLATE_ROWS:
            return None
        ref = relative_to(aux0, len(self._aux), slots)

        def rows(matrix: list[dict[Variable, int]], first: int) -> Rows:
            return tuple(tuple((ref(v), c) for v, c in row.items() if c) for row in matrix[first:])

        marks = []
        for at, prefix in zip(self._mark_at[mark0:], self._mark_prefix[mark0:], strict=True):
            if prefix == prefix0:
                below = ""
            elif not prefix0 or prefix.startswith(prefix0 + "/"):
                below = prefix[len(prefix0) + 1 :] if prefix0 else prefix
            else:
                return None
            marks.append((at - row0, below))
        kinds = tuple(self._kind[aux0:])
        if HINT in kinds:
            return None
        offsets = {SOLVE: row0, BIT: lin0}
        try:
            return Template(
                rows=(rows(self._a, row0), rows(self._b, row0), rows(self._c, row0)),
                lin=rows(self._lin, lin0),
                names=tuple(self._names[row0:]),
                marks=tuple(marks),
                kind=kinds,
                arg=tuple(a - offsets[k] for k, a in zip(kinds, self._arg[aux0:], strict=True)),
                extra=tuple(self._extra[aux0:]),
                result=result_shape(result, ref),
                example=(result, ref),
            )
        except NotReplicable:
            return None

    def _copy(self, template: Template, slots: list[Variable]) -> Any:
        """Append a copy of ``template`` for a call whose slot variables are ``slots``."""
        row0, aux0, lin0 = len(self._names), len(self._aux), len(self._lin)
        n_rows, n_aux = template.num_rows, template.num_aux
        self._aux += [0] * n_aux
        empty = [_EMPTY_ROW] * n_rows
        self._a += empty
        self._b += empty
        self._c += empty
        self._names += template.names
        self._lin += [_EMPTY_ROW] * len(template.lin)
        self._kind += template.kind
        self._extra += template.extra
        self._arg += [
            a + (row0 if k == SOLVE else lin0)
            for k, a in zip(template.kind, template.arg, strict=True)
        ]
        prefix = self._prefix
        for at, below in template.marks:
            self._mark_at.append(row0 + at)
            self._mark_prefix.append(f"{prefix}/{below}" if prefix and below else prefix or below)
        self.replicas.append(Replica(template, row0, aux0, lin0, tuple(slots)))

        def variable(v: int) -> Variable:
            r = template_ref(v)
            if r >= 0:
                return Variable(VariableKind.AUX, aux0 + r)
            return ONE if r == ONE_REF else slots[-2 - r]

        result, template_ref = template.example
        return translated(result, variable)

    def proving_matrices(self) -> R1CSMatrices:
        """A, B and C with copied calls' rows and, after the circuit's rows, the input rows
        Groth16 appends (``z_i · 0 = 0``, as :func:`~cuzk_core.groth16.qap.with_input_rows`):
        built in one allocation, so the compile never holds the matrices twice."""
        n_in, rows = self.num_inputs, self.num_constraints
        n_cols = n_in + self.num_aux
        input_rows = [{Variable(VariableKind.INPUT, i): 1} for i in range(n_in)]
        no_rows = [_EMPTY_ROW] * n_in

        def side(dicts: list[dict[Variable, int]], extra: list, which: int) -> SparseMatrix:
            return with_replicas(
                SparseMatrix.from_term_dicts(dicts + extra, n_in, n_cols),
                self.replicas,
                lambda t: t.rows[which],
                lambda r: r.row,
                n_in,
            )

        return R1CSMatrices(
            num_inputs=n_in,
            num_aux=self.num_aux,
            num_constraints=rows + n_in,
            a=side(self._a, input_rows, 0),
            b=side(self._b, no_rows, 1),
            c=side(self._c, no_rows, 2),
            names=self.names(),
        )

    def matrices(self) -> R1CSMatrices:
        """A, B and C, copied calls' rows included: the first rows of
        :meth:`proving_matrices`, as views."""
        return _circuit_rows(self.proving_matrices())

    def recording(self) -> Recording:
        """The matrices, the assignment and the program (or why there is none)."""
        proving = self.proving_matrices()
        matrices = _circuit_rows(proving)
        assignment = self.assignment()
        for _, var_name in self._pending:
            self._fail(f"{var_name!r} (alloc_solved) is never fixed by a constraint")
        program = None
        if self._problem is None:
            program = self._program(matrices)
        replicated = None
        if self.replicas:
            replicated = np.zeros(matrices.num_variables, dtype=bool)
            for replica in self.replicas:
                first = matrices.num_inputs + replica.aux
                replicated[first : first + replica.template.num_aux] = True
        return Recording(
            matrices,
            assignment,
            program,
            self._problem,
            list(self._hint_names),
            proving,
            replicated,
            self.copies_differ,
        )

    def _program(self, matrices: R1CSMatrices) -> WitnessProgram | None:
        n_in = matrices.num_inputs
        kind = np.asarray(self._kind, dtype=np.uint8)
        arg = np.asarray(self._arg, dtype=np.int64)
        extra = np.asarray(self._extra, dtype=np.int64)
        lin = with_replicas(
            SparseMatrix.from_term_dicts(self._lin, n_in, matrices.num_variables),
            self.replicas,
            lambda t: t.lin,
            lambda r: r.lin,
            n_in,
        )
        inverses = [pow(c, -1, _R) for c in self._inverse_index]
        deps_ptr, deps = _dependencies(kind, arg, matrices, lin, self.replicas)
        ops = np.repeat(np.arange(len(kind)), np.diff(deps_ptr))
        later = np.flatnonzero(deps >= ops)
        if len(later):
            j, dep = int(ops[later[0]]), int(deps[later[0]])
            self._fail(
                f"aux {j} is computed from aux {dep}, allocated after it: a gadget must allocate "
                "what a constraint solves after everything the constraint reads"
            )
            return None
        level_ptr, level_ops = levels_of(kind, deps_ptr, deps)
        return WitnessProgram(
            matrices=matrices,
            kind=kind,
            arg=arg,
            extra=extra,
            inverses=ints_to_limbs(inverses).reshape(-1, 4),
            lin=lin,
            num_hints=len(self._hint_names),
            level_ptr=level_ptr,
            level_ops=level_ops,
        )


def _circuit_rows(proving: R1CSMatrices) -> R1CSMatrices:
    """The circuit's own rows of ``proving`` (all but the input rows), as views."""
    rows = proving.num_constraints - proving.num_inputs
    return attrs.evolve(
        proving,
        num_constraints=rows,
        a=proving.a.first_rows(rows),
        b=proving.b.first_rows(rows),
        c=proving.c.first_rows(rows),
    )


def _dependencies(
    kind: np.ndarray,
    arg: np.ndarray,
    matrices: R1CSMatrices,
    lin: SparseMatrix,
    replicas: list[Replica],
) -> tuple[np.ndarray, np.ndarray]:
    """Per op, the distinct aux indices it reads (itself excluded), as CSR ``(ptr, deps)``; a
    copied call's ops take their template's (:func:`template_dependencies`), not a pass over
    their rows' entries."""
    n_in = matrices.num_inputs
    copied = np.zeros(len(kind), dtype=bool)
    owners, columns = [], []
    templates: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for replica in replicas:
        first = replica.aux
        copied[first : first + replica.template.num_aux] = True
        found = templates.get(id(replica.template))
        if found is None:
            found = templates[id(replica.template)] = template_dependencies(replica.template)
        op, ref = found
        slot_aux = np.array([~v if v < 0 else -1 for v in replica.slots] + [-1], dtype=np.int64)
        aux = np.where(ref >= 0, first + ref, slot_aux[np.clip(-2 - ref, 0, len(slot_aux) - 1)])
        keep = aux >= 0  # a slot that is an input is not a dependency
        owners.append(first + op[keep])
        columns.append(n_in + aux[keep])
    solved = np.flatnonzero((kind == SOLVE) & ~copied)
    for matrix in (matrices.a, matrices.b, matrices.c):
        owner, cols = matrix.row_entries(arg[solved])
        owners.append(solved[owner])
        columns.append(cols)
    bits = np.flatnonzero((kind == BIT) & ~copied)
    owner, cols = lin.row_entries(arg[bits])
    owners.append(bits[owner])
    columns.append(cols)
    owner, cols = np.concatenate(owners), np.concatenate(columns)
    aux = cols - n_in
    keep = (aux >= 0) & (aux != owner)
    pairs = np.sort(owner[keep] * (len(kind) + 1) + aux[keep], kind="stable")  # runs by owner
    pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])] if len(pairs) else pairs
    owner, dep = np.divmod(pairs, len(kind) + 1)
    ptr = np.zeros(len(kind) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=len(kind)), out=ptr[1:])
    return ptr, dep.astype(np.int64)
