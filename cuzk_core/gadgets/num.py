"""Field-element gadgets: allocated numbers, value-carrying linear combinations, swap and select."""

from __future__ import annotations

import attrs

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.r1cs import ONE, ConstraintSystem, LinearCombination, Variable, gadget

from .boolean import AllocatedBit

_R = FR_MODULUS


@attrs.frozen
class Num:
    """A linear combination together with its value: the free (constraint-less) result of linear
    steps, such as a sum or a Poseidon linear layer."""

    lc: LinearCombination
    value: int

    def add(self, other: NumLike) -> Num:
        """self + other, as a linear combination (no constraint)."""
        return Num(self.lc + other.lc, (self.value + other.value) % _R)

    def sub(self, other: NumLike) -> Num:
        """self − other, as a linear combination (no constraint)."""
        return Num(self.lc - other.lc, (self.value - other.value) % _R)

    def scale(self, k: int) -> Num:
        """k · self, as a linear combination (no constraint)."""
        return Num(self.lc * k, self.value * k % _R)


@attrs.frozen
class AllocatedNum:
    """A variable of the constraint system together with its value."""

    variable: Variable
    value: int

    @classmethod
    def alloc(cls, cs: ConstraintSystem, name: str, value: int) -> AllocatedNum:
        """Allocate a private number."""
        return cls(cs.alloc(name, value), value % _R)

    @classmethod
    def alloc_input(cls, cs: ConstraintSystem, name: str, value: int) -> AllocatedNum:
        """Allocate a public input."""
        return cls(cs.alloc_input(name, value), value % _R)

    @property
    def lc(self) -> LinearCombination:
        """The number as the one-term combination 1·variable."""
        return LinearCombination({self.variable: 1})

    def add(self, other: NumLike) -> Num:
        """self + other, as a linear combination (no constraint)."""
        return Num(self.lc + other.lc, (self.value + other.value) % _R)

    @gadget(lambda *args, **kwargs: PLACEHOLDER_ALLOCATED)
    def mul(self, cs: ConstraintSystem, other: NumLike, name: str = "mul") -> AllocatedNum:
        """self · other, allocated and enforced by one constraint named ``name``."""
        value = self.value * other.value % _R
        product = AllocatedNum(cs.alloc_solved(name, value), value)
        cs.enforce(name, self.variable, other.lc, product.variable)
        return product

    def square(self, cs: ConstraintSystem, name: str = "square") -> AllocatedNum:
        """self², allocated and enforced by one constraint named ``name``."""
        return self.mul(cs, self, name)


PLACEHOLDER_NUM: Num = Num(LinearCombination(), 0)
"""What a skipped gadget returns for a number when a compiled circuit is replayed."""
PLACEHOLDER_ALLOCATED: AllocatedNum = AllocatedNum(ONE, 0)
"""The same for an allocated number."""

NumLike = Num | AllocatedNum | AllocatedBit
"""Anything with an ``lc`` and a ``value``: what the gadgets accept as a field element."""


def enforce_equal(cs: ConstraintSystem, name: str, a: NumLike, b: NumLike) -> None:
    """Enforce a = b with one constraint a · 1 = b."""
    cs.enforce(name, a.lc, ONE, b.lc)


@gadget(lambda *args, **kwargs: (PLACEHOLDER_ALLOCATED, PLACEHOLDER_NUM))
def conditional_swap(
    cs: ConstraintSystem, a: NumLike, b: NumLike, bit: AllocatedBit, name: str = "swap"
) -> tuple[AllocatedNum, Num]:
    """(a, b) when bit = 0, (b, a) when bit = 1, for one constraint.

    The first output is allocated and enforced by bit · (b − a) = first − a; the second is the
    free combination a + b − first.
    """
    value = b.value if bit.value else a.value
    first = AllocatedNum(cs.alloc_solved(name, value), value % _R)
    cs.enforce(name, bit.variable, b.lc - a.lc, first.lc - a.lc)
    second = Num(a.lc + b.lc - first.lc, (a.value + b.value - first.value) % _R)
    return first, second


@gadget(lambda *args, **kwargs: PLACEHOLDER_ALLOCATED)
def select(
    cs: ConstraintSystem,
    bit: AllocatedBit,
    if_true: NumLike,
    if_false: NumLike,
    name: str = "select",
) -> AllocatedNum:
    """``if_true`` when bit = 1 else ``if_false``, enforced by bit · (t − f) = out − f."""
    value = if_true.value if bit.value else if_false.value
    out = AllocatedNum(cs.alloc_solved(name, value), value % _R)
    cs.enforce(name, bit.variable, if_true.lc - if_false.lc, out.lc - if_false.lc)
    return out
