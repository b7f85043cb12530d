"""Replaying a compiled circuit: run its code once more, gadgets skipped, to collect the only
per-proof data, its public inputs and the values it supplies itself (the hints).

Gadgets return placeholders (zero values) instead of running, and constraints are dropped, so a
replay costs what the circuit's own code costs outside its gadgets: O(inputs) for porep-lite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, Variable

from .program import WitnessProgram

_R = FR_MODULUS


class ReplayMismatch(CuzkError):
    """A replay allocated other inputs or hints than the compiled program expects."""


class ReplayConstraintSystem(ConstraintSystem):
    """Keeps public inputs and hints; skips gadgets and drops constraints."""

    def __init__(self) -> None:
        """Empty: only the input ONE."""
        super().__init__()
        self.hints: list[int] = []

    def alloc(self, name: str, value: int) -> Variable:
        """A hint: keep its value."""
        self.hints.append(value % _R)
        return super().alloc(name, 0)

    def alloc_solved(self, name: str, value: int) -> Variable:
        """Computed by the program: nothing to keep."""
        return super().alloc(name, 0)

    def alloc_bit(
        self, name: str, value: int, source: LinearCombination, position: int
    ) -> Variable:
        """Computed by the program: nothing to keep."""
        return super().alloc(name, 0)

    def enforce(self, name: str, a: Any, b: Any, c: Any) -> None:
        """Constraints are in the compiled matrices already."""

    def call_gadget(
        self,
        gadget: Callable[..., Any],
        placeholder: Callable[..., Any],
        args: tuple,
        kwargs: dict[str, Any],
    ) -> Any:
        """The gadget's result shape, with zero values; the program computes the real ones."""
        return placeholder(*args, **kwargs)


def replay(circuit: Any, program: WitnessProgram) -> tuple[np.ndarray, np.ndarray]:
    """``(inputs, hints)`` as ``(n, 4)`` scalars for ``program``: inputs with ONE first."""
    cs = ReplayConstraintSystem()
    circuit.synthesize(cs)
    if cs.num_inputs != program.num_inputs or len(cs.hints) != program.num_hints:
        raise ReplayMismatch(
            f"circuit {getattr(circuit, 'name', circuit)!r} allocated {cs.num_inputs} inputs and "
            f"{len(cs.hints)} hints, its compiled program expects {program.num_inputs} and "
            f"{program.num_hints}: its shape() must name every knob that changes its constraints"
        )
    inputs = ints_to_limbs(cs.assignment()[: cs.num_inputs]).reshape(-1, 4)
    return inputs, ints_to_limbs(cs.hints).reshape(-1, 4)
