"""Recording a synthesis: the constraint system that also writes down the witness program.

It is an ordinary :class:`~cuzk_core.r1cs.ConstraintSystem` (same matrices, same values) that
notes, per aux variable, how it was made: a value the circuit itself supplied (a hint), one the
next constraint solves (``alloc_solved``), or a bit of a linear combination (``alloc_bit``). A
plain ``alloc`` inside a gadget means the gadget computed the value in Python where the program
cannot follow; the recording then says so and the circuit stays on the slow path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, R1CSMatrices, SparseMatrix, Variable
from cuzk_core.r1cs.lc import VariableKind

from .program import BIT, HINT, SOLVE, WitnessProgram, levels_of

_R = FR_MODULUS


@attrs.frozen(eq=False)
class Recording:
    """What one recorded synthesis gives: matrices, the full assignment, and the program (None
    with ``problem`` saying why when the witness computation could not be recorded)."""

    matrices: R1CSMatrices
    assignment: list[int]
    program: WitnessProgram | None
    problem: str | None
    hint_names: list[str]


class RecordingConstraintSystem(ConstraintSystem):
    """A constraint system that records the witness program beside the constraints."""

    def __init__(self) -> None:
        """Empty, like :class:`ConstraintSystem`, with an empty program."""
        super().__init__()
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
        """Run the gadget, noting that its allocations must be recordable."""
        self._gadgets.append(gadget.__qualname__)
        try:
            return gadget(*args, **kwargs)
        finally:
            self._gadgets.pop()

    def recording(self) -> Recording:
        """The matrices, the assignment and the program (or why there is none)."""
        matrices = self.matrices()
        assignment = self.assignment()
        for _, var_name in self._pending:
            self._fail(f"{var_name!r} (alloc_solved) is never fixed by a constraint")
        program = None
        if self._problem is None:
            program = self._program(matrices)
        return Recording(matrices, assignment, program, self._problem, list(self._hint_names))

    def _program(self, matrices: R1CSMatrices) -> WitnessProgram | None:
        n_in = matrices.num_inputs
        kind = np.asarray(self._kind, dtype=np.uint8)
        arg = np.asarray(self._arg, dtype=np.int64)
        extra = np.asarray(self._extra, dtype=np.int64)
        lin = SparseMatrix.from_term_dicts(self._lin, n_in, matrices.num_variables)
        inverses = [pow(c, -1, _R) for c in self._inverse_index]
        deps_ptr, deps = _dependencies(kind, arg, matrices, lin)
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


def _row_entries(matrix: SparseMatrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``rows`` (in order), its column entries: ``(owner position, column)``."""
    starts, ends = matrix.indptr[rows], matrix.indptr[rows + 1]
    counts = ends - starts
    owner = np.repeat(np.arange(len(rows)), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, matrix.cols[np.repeat(starts, counts) + offsets]


def _dependencies(
    kind: np.ndarray, arg: np.ndarray, matrices: R1CSMatrices, lin: SparseMatrix
) -> tuple[np.ndarray, np.ndarray]:
    """Per op, the distinct aux indices it reads (itself excluded), as CSR ``(ptr, deps)``."""
    n_in = matrices.num_inputs
    owners, columns = [], []
    solved = np.flatnonzero(kind == SOLVE)
    for matrix in (matrices.a, matrices.b, matrices.c):
        owner, cols = _row_entries(matrix, arg[solved])
        owners.append(solved[owner])
        columns.append(cols)
    bits = np.flatnonzero(kind == BIT)
    owner, cols = _row_entries(lin, arg[bits])
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
