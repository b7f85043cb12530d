"""The gadget boundary: a decorator that lets a compiled circuit skip a gadget's Python.

A gadget computes every variable it allocates from its arguments (with ``alloc_solved`` or
``alloc_bit``), so once a circuit is compiled its witness program recomputes them; replaying the
circuit for a new proof then only needs the gadget's result *shape*, which ``placeholder`` gives
(same signature, values zero). Circuit code calls gadgets exactly as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .constraint_system import ConstraintSystem

F = TypeVar("F", bound=Callable[..., Any])


def gadget(placeholder: Callable[..., Any]) -> Callable[[F], F]:
    """Mark a function (or method) taking a constraint system as a gadget; ``placeholder``,
    called with the same arguments, returns a result of the same shape with zero values."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            for arg in args:
                if isinstance(arg, ConstraintSystem):
                    return arg.call_gadget(fn, placeholder, args, kwargs)
            raise TypeError(f"gadget {fn.__qualname__} was called without a constraint system")

        return call  # type: ignore[return-value]

    return wrap
