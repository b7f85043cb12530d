"""Groth16's blinding arithmetic, done on a host thread while the backend computes the MSMs.

A = α + Σa + r·δ, B = β + Σb + s·δ (in G2, and B₁ in G1), C = Σh + Σl + s·A + r·B₁ − rs·δ.
These are six scalar multiplications in pure-Python curve arithmetic, about 20 ms a proof on
the H200's host: done after the last MSM they were a tenth of a 2^20 proof's backend time.
On an accelerated backend each term starts on a host thread as soon as its inputs exist (the
r, s terms at once, s·A once Σa is back, r·B₁ once Σb is), so it runs beside the device's next
MSM; only the final sums remain. A CPU backend's MSMs use the host itself (its cores, or the
GIL), so there the terms are :class:`Deferred` to ``assemble``, where they always ran.
For a key kept resident (the daemon's), :func:`keep_delta_tables` precomputes fixed-base tables
of δ₁ and δ₂ once, and the four δ terms then cost about a quarter of their plain time.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

import attrs

from cuzk_core.curve.g1 import (
    G1FixedBaseTable,
    g1_add,
    g1_add_affine,
    g1_fixed_base_mul,
    g1_fixed_base_table,
    g1_from_affine,
    g1_mul,
    g1_neg,
    g1_to_affine,
)
from cuzk_core.curve.g2 import (
    G2FixedBaseTable,
    g2_add_affine,
    g2_fixed_base_mul,
    g2_fixed_base_table,
    g2_from_affine,
    g2_mul,
    g2_to_affine,
)
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.keys import Proof, VerifyingKey

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Pending(Protocol[T_co]):
    """Work submitted to a :class:`Runner`: its result, waited for or computed on demand."""

    def result(self) -> T_co:
        """The work's result (its exception, if it raised)."""
        ...


class Runner(Protocol):
    """Where host work runs: a one-worker ``ThreadPoolExecutor``, or :class:`Deferred`."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Pending[T]:
        """Start (or note) ``fn(*args)``."""
        ...


class _Later(Generic[T]):
    def __init__(self, fn: Callable[..., T], args: tuple) -> None:
        self._work: tuple[Callable[..., T], tuple] | None = (fn, args)
        self._value: T

    def result(self) -> T:
        if self._work is not None:
            fn, args = self._work
            self._value = fn(*args)
            self._work = None
        return self._value


class Deferred:
    """A :class:`Runner` that computes each piece of work when its result is first asked for,
    in the asking thread."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Pending[T]:
        """Note ``fn(*args)`` for later."""
        return _Later(fn, args)


DELTA_WINDOW_BITS = 6
"""Windows of the δ tables: 0.24 s to build here; r·δ₁, s·δ₁, rs·δ₁ and s·δ₂ then take
3.3 ms instead of 11.3 (8 bits: 2.2 ms, but 0.68 s to build)."""


@attrs.frozen
class _DeltaTables:
    g1: G1FixedBaseTable
    g2: G2FixedBaseTable


_DELTA_TABLES: weakref.WeakKeyDictionary[VerifyingKey, _DeltaTables] = weakref.WeakKeyDictionary()


def keep_delta_tables(vk: VerifyingKey) -> None:
    """Precompute fixed-base tables of ``vk``'s δ₁ and δ₂ for every later proof with it (a key
    kept resident); they live as long as ``vk``."""
    if vk not in _DELTA_TABLES and vk.delta_g1 is not None and vk.delta_g2 is not None:
        _DELTA_TABLES[vk] = _DeltaTables(
            g1_fixed_base_table(vk.delta_g1, DELTA_WINDOW_BITS),
            g2_fixed_base_table(vk.delta_g2, DELTA_WINDOW_BITS),
        )


class ProofAssembly:
    """The proof's A, B and C from its MSM sums and blinding scalars r, s, computed by
    ``runner`` (in submission order: each step sees the ones before it) as the sums arrive."""

    def __init__(self, vk: VerifyingKey, r: int, s: int, runner: Runner) -> None:
        self._vk, self._r, self._s = vk, r, s
        self._runner = runner
        self._blinding = runner.submit(self._blinding_terms)
        self._a: Pending[tuple[Any, Any]] | None = None
        self._b1: Pending[Any] | None = None

    def _blinding_terms(self) -> tuple[Any, Any, Any, Any]:
        """r·δ₁, s·δ₁, −rs·δ₁ and s·δ₂: they need no MSM sum."""
        r, s, rs = self._r, self._s, self._r * self._s % FR_MODULUS
        tables = _DELTA_TABLES.get(self._vk)
        if tables is not None:
            g1 = tables.g1
            return (
                g1_fixed_base_mul(g1, r),
                g1_fixed_base_mul(g1, s),
                g1_neg(g1_fixed_base_mul(g1, rs)),
                g2_fixed_base_mul(tables.g2, s),
            )
        delta1 = g1_from_affine(self._vk.delta_g1)
        return (
            g1_mul(delta1, r),
            g1_mul(delta1, s),
            g1_neg(g1_mul(delta1, rs)),
            g2_mul(g2_from_affine(self._vk.delta_g2), s),
        )

    def sum_a(self, point: Any) -> None:
        """Σa is back: A and s·A follow."""
        self._a = self._runner.submit(self._a_terms, point)

    def _a_terms(self, point: Any) -> tuple[Any, Any]:
        r_delta = self._blinding.result()[0]
        a = g1_add_affine(g1_add_affine(r_delta, self._vk.alpha_g1), point)
        return a, g1_mul(a, self._s)

    def sum_b_g1(self, point: Any) -> None:
        """Σb in G1 is back: r·B₁ follows."""
        self._b1 = self._runner.submit(self._b1_term, point)

    def _b1_term(self, point: Any) -> Any:
        s_delta = self._blinding.result()[1]
        b_g1 = g1_add_affine(g1_add_affine(s_delta, self._vk.beta_g1), point)
        return g1_mul(b_g1, self._r)

    def proof(self, sum_h: Any, sum_l: Any, sum_b_g2: Any) -> Proof:
        """The proof, once every sum has been given."""
        if self._a is None or self._b1 is None:
            raise RuntimeError("the proof needs Σa and Σb in G1 before the last sums")
        a, s_a = self._a.result()
        r_b1 = self._b1.result()
        minus_rs_delta, s_delta2 = self._blinding.result()[2:]
        b_g2 = g2_add_affine(g2_add_affine(s_delta2, self._vk.beta_g2), sum_b_g2)
        c = g1_add_affine(g1_from_affine(sum_h), sum_l)
        c = g1_add(g1_add(g1_add(c, s_a), r_b1), minus_rs_delta)
        return Proof(g1_to_affine(a), g2_to_affine(b_g2), g1_to_affine(c))
