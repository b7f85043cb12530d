"""Groth16's blinding arithmetic, done on a host thread while the backend computes the MSMs.

A = α + Σa + r·δ, B = β + Σb + s·δ (in G2, and B₁ in G1), C = Σh + Σl + s·A + r·B₁ − rs·δ.
These are six scalar multiplications in pure-Python curve arithmetic, about 20 ms a proof on
the H200's host: done after the last MSM they were a tenth of a 2^20 proof's backend time.
Here each term starts as soon as its inputs exist (the r, s terms at once, s·A once Σa is
back, r·B₁ once Σb is), so it runs beside the device's next MSM; only the final sums remain.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from cuzk_core.curve.g1 import (
    g1_add,
    g1_add_affine,
    g1_from_affine,
    g1_mul,
    g1_neg,
    g1_to_affine,
)
from cuzk_core.curve.g2 import g2_add_affine, g2_from_affine, g2_mul, g2_to_affine
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.keys import Proof, VerifyingKey


class ProofAssembly:
    """The proof's A, B and C from its MSM sums and blinding scalars r, s, computed on
    ``pool`` (one worker: each step sees the ones submitted before it) as the sums arrive."""

    def __init__(self, vk: VerifyingKey, r: int, s: int, pool: ThreadPoolExecutor) -> None:
        self._vk, self._r, self._s = vk, r, s
        self._pool = pool
        self._blinding = pool.submit(self._blinding_terms)
        self._a: Future | None = None
        self._b1: Future | None = None

    def _blinding_terms(self) -> tuple[Any, Any, Any, Any]:
        """r·δ₁, s·δ₁, −rs·δ₁ and s·δ₂: they need no MSM sum."""
        delta1 = g1_from_affine(self._vk.delta_g1)
        r, s = self._r, self._s
        return (
            g1_mul(delta1, r),
            g1_mul(delta1, s),
            g1_neg(g1_mul(delta1, r * s % FR_MODULUS)),
            g2_mul(g2_from_affine(self._vk.delta_g2), s),
        )

    def sum_a(self, point: Any) -> None:
        """Σa is back: A and s·A follow."""
        self._a = self._pool.submit(self._a_terms, point)

    def _a_terms(self, point: Any) -> tuple[Any, Any]:
        r_delta = self._blinding.result()[0]
        a = g1_add_affine(g1_add_affine(r_delta, self._vk.alpha_g1), point)
        return a, g1_mul(a, self._s)

    def sum_b_g1(self, point: Any) -> None:
        """Σb in G1 is back: r·B₁ follows."""
        self._b1 = self._pool.submit(self._b1_term, point)

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
