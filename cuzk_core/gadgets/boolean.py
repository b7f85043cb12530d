"""Boolean gadgets: a variable constrained to {0, 1}, and the logic built on it."""

from __future__ import annotations

import attrs

from cuzk_core.r1cs import ONE, ConstraintSystem, LinearCombination, Variable, gadget


@attrs.frozen
class AllocatedBit:
    """A variable with b · (1 − b) = 0 enforced, together with its value."""

    variable: Variable
    value: bool

    @classmethod
    def alloc(cls, cs: ConstraintSystem, name: str, value: bool | int) -> AllocatedBit:
        """Allocate a bit and enforce its booleanity with one constraint named ``name``."""
        if value not in (0, 1):
            raise ValueError(f"a bit must be 0 or 1, got {value!r}")
        v = cs.alloc(name, int(value))
        cs.enforce(name, v, ONE - v, LinearCombination())
        return cls(v, bool(value))

    @property
    def lc(self) -> LinearCombination:
        """The bit as the one-term combination 1·variable."""
        return LinearCombination({self.variable: 1})

    def not_lc(self) -> LinearCombination:
        """1 − b, which is boolean whenever b is, so it needs no constraint."""
        return ONE - self.variable

    @gadget(lambda *args, **kwargs: PLACEHOLDER_BIT)
    def and_(self, cs: ConstraintSystem, other: AllocatedBit, name: str = "and") -> AllocatedBit:
        """a ∧ b, enforced by a · b = c (c is boolean because a and b are)."""
        out = cs.alloc_solved(name, int(self.value and other.value))
        cs.enforce(name, self.variable, other.variable, out)
        return AllocatedBit(out, self.value and other.value)

    @gadget(lambda *args, **kwargs: PLACEHOLDER_BIT)
    def xor(self, cs: ConstraintSystem, other: AllocatedBit, name: str = "xor") -> AllocatedBit:
        """a ⊕ b, enforced by 2a · b = a + b − c (c is boolean because a and b are)."""
        out = cs.alloc_solved(name, int(self.value != other.value))
        cs.enforce(name, self.variable * 2, other.variable, self.variable + other.variable - out)
        return AllocatedBit(out, self.value != other.value)


PLACEHOLDER_BIT: AllocatedBit = AllocatedBit(ONE, False)
"""What a skipped gadget returns for a bit when a compiled circuit is replayed."""
