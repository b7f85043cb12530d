"""Circuits shipped with cuzk, by name: what ``cuzk`` commands and benchmarks synthesize."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from cuzk_core.r1cs import ConstraintSystem

from .porep_lite import PorepLite


class Circuit(Protocol):
    """What every embedded circuit provides: a name, its knobs, public inputs and synthesis."""

    name: ClassVar[str]

    def knobs(self) -> dict[str, int]:
        """The knob values (a caching key together with ``name``)."""
        ...

    # Optional: ``shape(self) -> dict[str, int]``, the knobs that fix the constraints (default:
    # all knobs); a compiled circuit is reused for every instance of one shape.

    def public_inputs(self) -> list[int]:
        """The public inputs in allocation order (ONE excluded)."""
        ...

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Allocate the variables with their values and enforce the constraints."""
        ...


CIRCUITS: dict[str, type[Circuit]] = {PorepLite.name: PorepLite}
"""Every embedded circuit class by its ``name``."""


def get_circuit(name: str, **knobs: Any) -> Circuit:
    """Instantiate the circuit called ``name`` with ``knobs``; ValueError names the known ones."""
    try:
        cls = CIRCUITS[name]
    except KeyError:
        known = ", ".join(sorted(CIRCUITS))
        raise ValueError(f"unknown circuit {name!r}; known circuits: {known}") from None
    return cls(**knobs)


__all__ = ["CIRCUITS", "Circuit", "PorepLite", "get_circuit"]
