"""Groth16's blinding arithmetic, done as host work while the backend computes the MSMs.

A = α + Σa + r·δ, B = β + Σb + s·δ (in G2, and B₁ in G1), C = Σh + Σl + s·A + r·B₁ − rs·δ.
These are six scalar multiplications in pure-Python curve arithmetic, about 20 ms a proof on
the H200's host: done after the last MSM they were a tenth of a 2^20 proof's backend time.
Each term is submitted, to be done a step at a time, as soon as its inputs exist
(the r, s terms at once, s·A once Σa is back, r·B₁ once Σb is; a sum may itself be pending host
work queued before the term, see :meth:`Backend.msm_g1_pending`); the prover's
:class:`~cuzk_core.host_work.HostWork` runs them while an accelerated backend's device computes
the next MSM, and on a CPU backend when ``assemble`` asks for them. Only the final sums remain.
For a key kept resident (the daemon's), :func:`keep_delta_tables` precomputes fixed-base tables
of δ₁ and δ₂ once, and the four δ terms then cost about a quarter of their plain time.
"""

from __future__ import annotations

import weakref
from typing import Any

import attrs

from cuzk_core.curve.g1 import (
    G1_OPS,
    G1FixedBaseTable,
    g1_add,
    g1_add_affine,
    g1_fixed_base_table,
    g1_from_affine,
    g1_neg,
    g1_to_affine,
)
from cuzk_core.curve.g2 import (
    G2_OPS,
    G2FixedBaseTable,
    g2_add_affine,
    g2_fixed_base_table,
    g2_from_affine,
    g2_to_affine,
)
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.keys import Proof, VerifyingKey
from cuzk_core.host_work import Deferred, Pending, Steps
from cuzk_core.layout import G1Affines, G2Affines

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
    ``runner`` (HostWork in the prover; each piece asks for the ones it needs) as the sums
    arrive."""

    def __init__(self, vk: VerifyingKey, r: int, s: int, runner: Deferred) -> None:
        self._vk, self._r, self._s = vk, r, s
        self._runner = runner
        rs = r * s % FR_MODULUS
        # Pieces, each a step at a time: host work between device waits stops between steps.
        self._r_delta = runner.submit_steps(self._delta_g1, r)
        self._s_delta = runner.submit_steps(self._delta_g1, s)
        self._minus_rs_delta = runner.submit_steps(self._minus_delta_g1, rs)
        self._s_delta2 = runner.submit_steps(self._delta_g2, s)
        self._a: Pending[tuple[Any, Any]] | None = None
        self._b1: Pending[Any] | None = None

    def _delta_g1(self, k: int) -> Steps[Any]:
        """k·δ₁: it needs no MSM sum."""
        tables = _DELTA_TABLES.get(self._vk)
        if tables is not None:
            return (yield from G1_OPS.fixed_base_mul_steps(tables.g1, k))
        return (yield from G1_OPS.mul_steps(g1_from_affine(self._vk.delta_g1), k))

    def _minus_delta_g1(self, k: int) -> Steps[Any]:
        """−k·δ₁."""
        return g1_neg((yield from self._delta_g1(k)))

    def _delta_g2(self, k: int) -> Steps[Any]:
        """k·δ₂."""
        tables = _DELTA_TABLES.get(self._vk)
        if tables is not None:
            return (yield from G2_OPS.fixed_base_mul_steps(tables.g2, k))
        return (yield from G2_OPS.mul_steps(g2_from_affine(self._vk.delta_g2), k))

    def sum_a(self, total: Pending[G1Affines]) -> None:
        """Σa is back from the device: A and s·A follow."""
        self._a = self._runner.submit_steps(self._a_terms, total)

    def _a_terms(self, total: Pending[G1Affines]) -> Steps[tuple[Any, Any]]:
        r_delta = self._r_delta.result()
        a = g1_add_affine(g1_add_affine(r_delta, self._vk.alpha_g1), _point(total))
        return a, (yield from G1_OPS.mul_steps(a, self._s))

    def sum_b_g1(self, total: Pending[G1Affines]) -> None:
        """Σb in G1 is back from the device: r·B₁ follows."""
        self._b1 = self._runner.submit_steps(self._b1_term, total)

    def _b1_term(self, total: Pending[G1Affines]) -> Steps[Any]:
        s_delta = self._s_delta.result()
        b_g1 = g1_add_affine(g1_add_affine(s_delta, self._vk.beta_g1), _point(total))
        return (yield from G1_OPS.mul_steps(b_g1, self._r))

    def proof(
        self, sum_h: Pending[G1Affines], sum_l: Pending[G1Affines], sum_b_g2: Pending[G2Affines]
    ) -> Proof:
        """The proof, once every sum has been given."""
        if self._a is None or self._b1 is None:
            raise RuntimeError("the proof needs Σa and Σb in G1 before the last sums")
        a, s_a = self._a.result()
        r_b1 = self._b1.result()
        minus_rs_delta, s_delta2 = self._minus_rs_delta.result(), self._s_delta2.result()
        b_g2 = g2_add_affine(g2_add_affine(s_delta2, self._vk.beta_g2), _point(sum_b_g2))
        c = g1_add_affine(g1_from_affine(_point(sum_h)), _point(sum_l))
        c = g1_add(g1_add(g1_add(c, s_a), r_b1), minus_rs_delta)
        return Proof(g1_to_affine(a), g2_to_affine(b_g2), g1_to_affine(c))


def _point(total: Pending[G1Affines] | Pending[G2Affines]) -> Any:
    """An MSM's sum as an affine tuple (None for infinity), its host work done first if left."""
    return total.result().to_points()[0]
