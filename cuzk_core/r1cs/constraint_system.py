"""The constraint system that circuits synthesize into, bellpepper style, with real values."""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, ClassVar

from cuzk_core.field.constants import FR_MODULUS

from .lc import ONE, LinearCombination, Variable
from .matrices import ConstraintNames, R1CSMatrices, SparseMatrix

_R = FR_MODULUS

LCLike = LinearCombination | Variable
"""What ``enforce`` accepts for each of a, b, c."""


def _single(v: object) -> dict[Variable, int]:
    """The terms of 1·v, for a side of ``enforce`` given as a bare variable."""
    if type(v) is not Variable:
        raise TypeError(
            f"enforce takes LinearCombination or Variable sides, got {type(v).__name__}"
        )
    return {v: 1}


class _Namespace:
    """Context manager returned by :meth:`ConstraintSystem.namespace`."""

    __slots__ = ("_cs", "_name")

    def __init__(self, cs: ConstraintSystem, name: str) -> None:
        self._cs = cs
        self._name = name

    def __enter__(self) -> ConstraintSystem:
        self._cs._push_namespace(self._name)
        return self._cs

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._cs._pop_namespace()


class ConstraintSystem:
    """Collects variables with their values and constraints ⟨a,z⟩·⟨b,z⟩ = ⟨c,z⟩ over Fr.

    Synthesis is a measured phase, so the hot path only appends: a value per allocation, three
    term dicts and a bare name per constraint. Namespaces are recorded as (constraint count, prefix)
    marks when they open and close, and a full name is only joined when an error needs it.
    """

    one: ClassVar[Variable] = ONE

    def __init__(self) -> None:
        """An empty system holding only the input ONE."""
        self._inputs: list[int] = [1]
        self._aux: list[int] = []
        self._a: list[dict[Variable, int]] = []
        self._b: list[dict[Variable, int]] = []
        self._c: list[dict[Variable, int]] = []
        self._names: list[str] = []
        self._path: list[str] = []
        self._prefix = ""
        self._mark_at: list[int] = [0]
        self._mark_prefix: list[str] = [""]

    # -- allocation ------------------------------------------------------------------------------

    def alloc(self, name: str, value: int) -> Variable:
        """Allocate a private (aux) variable holding ``value`` mod r.

        ``name`` is accepted for bellpepper parity and readability but not stored (synthesis
        speed); only constraint names appear in error messages.
        """
        aux = self._aux
        aux.append(value % _R)
        return int.__new__(Variable, ~(len(aux) - 1))

    def alloc_solved(self, name: str, value: int) -> Variable:
        """Allocate an aux variable that the *next* constraint fixes: it must appear in that
        constraint's C side only, with every other variable of the row allocated before it.

        Gadgets use this for products, swaps and S-boxes: recorded, the value becomes
        ``(A·z · B·z − C'·z) / c`` (C' the row without it), so the compiled witness program
        needs no Python. Here it is :meth:`alloc`.
        """
        return self.alloc(name, value)

    def alloc_bit(
        self, name: str, value: int, source: LinearCombination, position: int
    ) -> Variable:
        """Allocate bit ``position`` of the value of ``source`` (its canonical integer): what a
        bit decomposition records. Here it is :meth:`alloc`."""
        return self.alloc(name, value)

    def call_gadget(
        self,
        gadget: Callable[..., Any],
        placeholder: Callable[..., Any],
        args: tuple,
        kwargs: dict[str, Any],
    ) -> Any:
        """Run ``gadget(*args, **kwargs)`` (see :func:`cuzk_core.r1cs.gadget.gadget`); a
        recording system marks the boundary, a replaying one returns ``placeholder(...)``."""
        return gadget(*args, **kwargs)

    def alloc_input(self, name: str, value: int) -> Variable:
        """Allocate a public input holding ``value`` mod r (inputs keep allocation order)."""
        inputs = self._inputs
        inputs.append(value % _R)
        return int.__new__(Variable, len(inputs) - 1)

    def value(self, v: Variable) -> int:
        """The value assigned to variable ``v``."""
        return self._inputs[v] if v >= 0 else self._aux[~v]

    # -- constraints -----------------------------------------------------------------------------

    def enforce(self, name: str, a: LCLike, b: LCLike, c: LCLike) -> None:
        """Add the constraint a · b = c, where each side is a linear combination or a variable."""
        self._a.append(a.terms if type(a) is LinearCombination else _single(a))
        self._b.append(b.terms if type(b) is LinearCombination else _single(b))
        self._c.append(c.terms if type(c) is LinearCombination else _single(c))
        self._names.append(name)

    def namespace(self, name: str) -> _Namespace:
        """A context manager under which constraint names are prefixed with ``name/``."""
        if "/" in name:
            raise ValueError(f"namespace names may not contain '/': {name!r}")
        return _Namespace(self, name)

    def _push_namespace(self, name: str) -> None:
        self._path.append(name)
        self._set_prefix("/".join(self._path))

    def _pop_namespace(self) -> None:
        self._path.pop()
        self._set_prefix("/".join(self._path))

    def _set_prefix(self, prefix: str) -> None:
        self._prefix = prefix
        self._mark_at.append(len(self._names))
        self._mark_prefix.append(prefix)

    def qualified_name(self, name: str) -> str:
        """``name`` with the current namespace path in front, as error messages show it."""
        return f"{self._prefix}/{name}" if self._prefix else name

    def constraint_name(self, index: int) -> str:
        """The full namespaced name of constraint ``index``."""
        return self.names().name(index)

    def names(self) -> ConstraintNames:
        """Every constraint's namespaced name, for error messages after synthesis."""
        return ConstraintNames(self._names, self._mark_at, self._mark_prefix)

    # -- inspection ------------------------------------------------------------------------------

    @property
    def num_inputs(self) -> int:
        """Public inputs, ONE included."""
        return len(self._inputs)

    @property
    def num_aux(self) -> int:
        """Private (aux) variables."""
        return len(self._aux)

    @property
    def num_constraints(self) -> int:
        """Constraints enforced so far."""
        return len(self._names)

    def assignment(self) -> list[int]:
        """z = [1, inputs..., aux...]: the canonical variable order (matrix column j is z[j])."""
        return self._inputs + self._aux

    def is_satisfied(self) -> str | None:
        """None when every constraint holds, else a message naming the first failing one."""
        # inputs, then aux reversed: aux j (encoded ~j = -j-1) lands at index -j-1 from the end.
        values = self._inputs + self._aux[::-1]
        for i, (a, b, c) in enumerate(zip(self._a, self._b, self._c, strict=True)):
            av = sum([k * values[v] for v, k in a.items()])
            bv = sum([k * values[v] for v, k in b.items()])
            cv = sum([k * values[v] for v, k in c.items()])
            if (av * bv - cv) % _R:
                return f"constraint {i} '{self.constraint_name(i)}' is not satisfied"
        return None

    def matrices(self) -> R1CSMatrices:
        """The constraint matrices A, B, C in CSR form over the columns of :meth:`assignment`."""
        n_in = self.num_inputs
        n_cols = n_in + self.num_aux
        return R1CSMatrices(
            num_inputs=n_in,
            num_aux=self.num_aux,
            num_constraints=self.num_constraints,
            a=SparseMatrix.from_term_dicts(self._a, n_in, n_cols),
            b=SparseMatrix.from_term_dicts(self._b, n_in, n_cols),
            c=SparseMatrix.from_term_dicts(self._c, n_in, n_cols),
            names=self.names(),
        )
