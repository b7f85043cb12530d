"""Variables and linear combinations: the vocabulary of every constraint.

Both sit in the synthesis hot loop, so they are built for dict speed. A :class:`Variable` is an
``int`` subclass (inputs encode as their index, aux variables as ``~index``, so always negative):
dicts hash and compare it in C, about twice as fast as a frozen attrs class in a measured
linear-combination merge. A :class:`LinearCombination` is a thin wrapper around one
``dict[Variable, int]`` whose coefficients are always canonical (in ``[0, r)``), and every
operation returns a new combination, so a combination handed to ``enforce`` is never mutated.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence

from cuzk_core.field.constants import FR_MODULUS

_R = FR_MODULUS


class VariableKind(enum.Enum):
    """Whether a variable is a public input or a private (auxiliary) witness value."""

    INPUT = "input"
    AUX = "aux"


class Variable(int):
    """A wire of the constraint system, identified by its kind and its index within that kind.

    Equal to (and hashing like) its integer encoding: ``index`` for inputs, ``~index`` for aux
    variables. Arithmetic with ``+``, ``-``, ``*`` builds linear combinations, never ints.
    """

    __slots__ = ()

    def __new__(cls, kind: VariableKind, index: int) -> Variable:
        """Create the variable ``index`` of the given kind."""
        if index < 0:
            raise ValueError(f"variable index must be ≥ 0, got {index}")
        return int.__new__(cls, index if kind is VariableKind.INPUT else ~index)

    @property
    def kind(self) -> VariableKind:
        """INPUT or AUX."""
        return VariableKind.INPUT if int(self) >= 0 else VariableKind.AUX

    @property
    def index(self) -> int:
        """The position among variables of the same kind (input 0 is the constant ONE)."""
        key = int(self)
        return key if key >= 0 else ~key

    def column(self, num_inputs: int) -> int:
        """This variable's position in z = [1, inputs..., aux...] (the matrix column)."""
        key = int(self)
        return key if key >= 0 else num_inputs + ~key

    def __repr__(self) -> str:
        return f"Variable({self.kind.name}, {self.index})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return True

    def __reduce__(self) -> tuple:
        return (Variable, (self.kind, self.index))

    # A Variable is an int for dict speed only; its arithmetic deliberately builds combinations,
    # which int's signatures in typeshed cannot express: hence the override ignores below.
    def __add__(self, other: object) -> LinearCombination:  # type: ignore[override]
        return LinearCombination({self: 1}) + other

    __radd__ = __add__  # type: ignore[assignment]

    def __sub__(self, other: object) -> LinearCombination:  # type: ignore[override]
        return LinearCombination({self: 1}) - other

    def __rsub__(self, other: object) -> LinearCombination:  # type: ignore[override]
        return LinearCombination({self: _R - 1}) + other

    def __mul__(self, k: object) -> LinearCombination:  # type: ignore[override]
        return LinearCombination({self: 1}) * k

    __rmul__ = __mul__  # type: ignore[assignment]

    def __neg__(self) -> LinearCombination:  # type: ignore[override]
        return LinearCombination({self: _R - 1})


ONE = Variable(VariableKind.INPUT, 0)
"""Input 0: the wire fixed to 1, through which linear combinations carry constants."""


class LinearCombination(Mapping[Variable, int]):
    """A sparse Σ coeff·variable over Fr, keyed by :class:`Variable`; immutable by convention.

    ``terms`` is the underlying dict (read it, do not mutate it). ``+`` and ``-`` accept another
    combination, a variable or an int constant; ``*`` takes an int scalar. A term that cancels
    to 0 may stay in the dict (equality compares dicts); ``matrices()`` drops such entries.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Variable, int] | None = None) -> None:
        """Wrap ``terms`` (not copied; coefficients must already be canonical)."""
        self.terms: dict[Variable, int] = {} if terms is None else terms

    @classmethod
    def from_variable(cls, v: Variable, coeff: int = 1) -> LinearCombination:
        """The combination coeff·v."""
        return cls({v: coeff % _R})

    @classmethod
    def constant(cls, k: int) -> LinearCombination:
        """The constant k, i.e. k·ONE."""
        return cls({ONE: k % _R})

    @classmethod
    def scaled_sum(cls, pairs: Iterable[tuple[int, LinearCombination]]) -> LinearCombination:
        """Σ kᵢ·lcᵢ in one dict pass, reducing each coefficient once and dropping zeros (the
        linear-layer fast path)."""
        out: dict[Variable, int] = {}
        get = out.get
        for k, lc in pairs:
            for v, c in lc.terms.items():
                out[v] = get(v, 0) + k * c
        return cls({v: r for v, c in out.items() if (r := c % _R)})

    def add_scaled(self, pairs: Iterable[tuple[int, LinearCombination]]) -> LinearCombination:
        """self + Σ kᵢ·lcᵢ: copies self's dict in C and loops only over the lcᵢ, so it is the
        cheap way to add small combinations to a large one."""
        out = dict(self.terms)
        get = out.get
        for k, lc in pairs:
            if k:
                for v, c in lc.terms.items():
                    out[v] = (get(v, 0) + k * c) % _R
        return LinearCombination(out)

    def __getitem__(self, v: Variable) -> int:
        return self.terms[v]

    def __iter__(self) -> Iterator[Variable]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        inner = " + ".join(f"{c}·{v!r}" for v, c in self.terms.items())
        return f"LinearCombination({inner or '0'})"

    def _merged(self, other: object, sign: int) -> LinearCombination:
        out = dict(self.terms)
        if type(other) is LinearCombination:
            get = out.get
            for v, c in other.terms.items():
                out[v] = (get(v, 0) + sign * c) % _R
        elif isinstance(other, Variable):
            out[other] = (out.get(other, 0) + sign) % _R
        elif isinstance(other, int):
            if other % _R:
                out[ONE] = (out.get(ONE, 0) + sign * other) % _R
        else:
            return NotImplemented
        return LinearCombination(out)

    def __add__(self, other: object) -> LinearCombination:
        return self._merged(other, 1)

    __radd__ = __add__

    def __sub__(self, other: object) -> LinearCombination:
        return self._merged(other, -1)

    def __rsub__(self, other: object) -> LinearCombination:
        return (-self)._merged(other, 1)

    def __mul__(self, k: object) -> LinearCombination:
        if not isinstance(k, int) or isinstance(k, Variable):
            return NotImplemented
        return LinearCombination({v: c * k % _R for v, c in self.terms.items()})

    __rmul__ = __mul__

    def __neg__(self) -> LinearCombination:
        return LinearCombination({v: (_R - c) % _R for v, c in self.terms.items()})

    def evaluate(self, assignment: Sequence[int], num_inputs: int) -> int:
        """The value of the combination under z = ``assignment`` ([1, inputs..., aux...]).

        ``num_inputs`` (ONE included) is where the aux variables start in z.
        """
        total = 0
        for v, c in self.terms.items():
            total += c * assignment[v if v >= 0 else num_inputs + ~v]
        return total % _R
