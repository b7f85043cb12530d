"""Circuits shipped with cuzk, by name: what ``cuzk`` commands and benchmarks synthesize."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from cuzk_core.errors import CuzkError, shown
from cuzk_core.r1cs import ConstraintSystem

from .porep_lite import PorepLite

if TYPE_CHECKING:
    from cuzk_core.backend import Backend


class Circuit(Protocol):
    """What every embedded circuit provides: a name, its knobs, public inputs and synthesis."""

    name: ClassVar[str]

    def knobs(self) -> dict[str, int]:
        """The knob values (a caching key together with ``name``)."""
        ...

    # Optional: ``shape(self) -> dict[str, int]``, the knobs that fix the constraints (default:
    # all knobs); a compiled circuit is reused for every instance of one shape.
    # Optional: ``use_backend(self, backend)``, called before the circuit is synthesized on a
    # backend, so that it computes its instance (a Merkle tree) with that backend's hooks.
    # Optional: ``replay_values(self) -> (public inputs, hints)``, what synthesize allocates
    # with ``alloc_input`` and ``alloc``, in order, without running it; a compiled proof then
    # skips synthesize (the compile checks the values against it once).

    def public_inputs(self) -> list[int]:
        """The public inputs in allocation order (ONE excluded)."""
        ...

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Allocate the variables with their values and enforce the constraints."""
        ...


CIRCUITS: dict[str, type[Circuit]] = {PorepLite.name: PorepLite}
"""Every embedded circuit class by its ``name``."""


def bind_backend(circuit: Any, backend: Backend) -> None:
    """Hand ``circuit`` the backend it is about to be synthesized on, when it takes one."""
    use_backend = getattr(circuit, "use_backend", None)
    if use_backend is not None:
        use_backend(backend)


def get_circuit(name: str, **knobs: Any) -> Circuit:
    """Instantiate the circuit called ``name`` with ``knobs``; ValueError names the known ones."""
    try:
        cls = CIRCUITS[name]
    except KeyError:
        known = ", ".join(sorted(CIRCUITS))
        raise ValueError(f"unknown circuit {name!r}; known circuits: {known}") from None
    return cls(**knobs)


def circuit_from_spec(spec: Mapping[str, Any], where: object = None) -> Circuit:
    """The circuit ``{"circuit": name, knob: value, …}`` names (the command line's knobs or a
    params folder's circuit.json, ``where``), or a one-line CuzkError naming the bad knob."""
    knobs = {k: v for k, v in spec.items() if k != "circuit"}
    cls = CIRCUITS.get(spec["circuit"]) if isinstance(spec["circuit"], str) else None
    if cls is not None:
        allowed = [k for k in inspect.signature(cls).parameters if not k.startswith("_")]
        unknown = sorted(set(knobs) - set(allowed))
        if unknown:
            prefix = f"{where}: " if where is not None else ""
            raise CuzkError(
                f"{prefix}circuit {shown(spec['circuit'])}: unknown knob {unknown[0]!r} "
                f"(its knobs: {', '.join(allowed)})"
            )
    try:
        return get_circuit(spec["circuit"], **knobs)
    except (KeyError, TypeError, ValueError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        prefix = f"{where}: " if where is not None else ""
        raise CuzkError(f"{prefix}circuit {shown(spec['circuit'])}: {message}") from None


__all__ = ["CIRCUITS", "Circuit", "PorepLite", "bind_backend", "circuit_from_spec", "get_circuit"]
