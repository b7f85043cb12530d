"""Replaying a compiled circuit: run its code once more, gadgets skipped, to collect the only
per-proof data, its public inputs and the values it supplies itself (the hints).

Gadgets return placeholders (zero values) instead of running, and constraints are dropped, so a
replay costs what the circuit's own code costs outside its gadgets: O(inputs) for porep-lite.
A circuit may also say what its synthesize allocates without running it: ``replay_values()``,
``(public inputs, hints)`` in allocation order, the hints as ints or as ``(n, 4)`` uint64 scalars
below r (no per-allocation Python: ~3 µs an allocation, 71 k hints at 2^24). The compile checks
those against a replay once (:func:`supplied_values_differ`) before any proof uses them.
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


def _replayed(circuit: Any) -> tuple[list[int], list[int]]:
    """Inputs (ONE first) and hints, from the circuit's synthesize with its gadgets skipped."""
    cs = ReplayConstraintSystem()
    circuit.synthesize(cs)
    return cs.assignment()[: cs.num_inputs], cs.hints


def _supplied(circuit: Any) -> tuple[list[int], np.ndarray] | None:
    """Inputs (ONE first) and hints (as scalars) from the circuit's ``replay_values()``, or None
    without one."""
    values = getattr(circuit, "replay_values", None)
    if values is None:
        return None
    public, hints = values()
    return [1, *(v % _R for v in public)], _as_scalars(hints)


def _as_scalars(hints: Any) -> np.ndarray:
    """Hints given as ints (any size: taken mod r) or as ``(n, 4)`` uint64 scalars below r."""
    if not isinstance(hints, np.ndarray):
        return ints_to_limbs([h % _R for h in hints]).reshape(-1, 4)
    if hints.dtype != np.uint64 or hints.ndim != 2 or hints.shape[1] != 4:
        raise ReplayMismatch(
            f"replay_values() gave hints as a {hints.dtype} array of shape {hints.shape}: "
            "expected (n, 4) uint64 scalars or a list of ints"
        )
    return hints


def replay(circuit: Any, program: WitnessProgram) -> tuple[np.ndarray, np.ndarray]:
    """``(inputs, hints)`` as ``(n, 4)`` scalars for ``program``: inputs with ONE first."""
    supplied = _supplied(circuit)
    if supplied is None:
        inputs, hint_values = _replayed(circuit)
        hints = _as_scalars(hint_values)
    else:
        inputs, hints = supplied
    if len(inputs) != program.num_inputs or len(hints) != program.num_hints:
        raise ReplayMismatch(
            f"circuit {getattr(circuit, 'name', circuit)!r} allocated {len(inputs)} inputs and "
            f"{len(hints)} hints, its compiled program expects {program.num_inputs} and "
            f"{program.num_hints}: its shape() must name every knob that changes its constraints"
        )
    return ints_to_limbs(inputs).reshape(-1, 4), hints


def supplied_values_differ(circuit: Any) -> str | None:
    """Why the circuit's ``replay_values()`` is not what its synthesize allocates (None when it
    is, or when it has none)."""
    supplied = _supplied(circuit)
    if supplied is None:
        return None
    inputs, hints = _replayed(circuit)
    replayed = (ints_to_limbs(inputs).reshape(-1, 4), _as_scalars(hints))
    given = (ints_to_limbs(supplied[0]).reshape(-1, 4), supplied[1])
    for kind, got, want in zip(("public input", "hint"), given, replayed, strict=True):
        if len(got) != len(want):
            return f"replay_values() gives {len(got)} {kind}s, synthesize allocates {len(want)}"
        differs = np.flatnonzero(np.any(got != want, axis=1))
        if len(differs):
            return f"replay_values() differs from synthesize at {kind} {int(differs[0])}"
    return None
