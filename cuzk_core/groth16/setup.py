"""Groth16 key generation (a trusted setup in one process: fine for tests and development).

The toxic waste τ, α, β, γ, δ comes from the operating system's randomness, or from ``seed``
for reproducible test keys — a seeded key is not secure, since anyone can recompute its secrets.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.domain import EvaluationDomain
from cuzk_core.fallbacks import reference_fixed_base_g1, reference_fixed_base_g2
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.field.fr import fr_inv
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey, query_density
from cuzk_core.groth16.qap import column_sums, lagrange_at
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.r1cs import R1CSMatrices
from cuzk_core.timing import Timer

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

_R = FR_MODULUS


def _toxic_waste(seed: int | None) -> tuple[int, int, int, int, int]:
    """τ, α, β, γ, δ: nonzero elements of Fr."""

    def draw(label: str) -> int:
        if seed is None:
            return secrets.randbelow(_R - 1) + 1
        digest = hashlib.sha512(f"cuzk setup {seed} {label}".encode()).digest()
        return int.from_bytes(digest, "big") % (_R - 1) + 1

    return tuple(draw(label) for label in ("tau", "alpha", "beta", "gamma", "delta"))


def generate_parameters(
    matrices: R1CSMatrices,
    seed: int | None = None,
    progress: Progress | None = None,
    backend: Backend | None = None,
) -> ProvingKey:
    """Groth16 parameters for ``matrices`` (which must already hold the input rows).

    The five query batches (h, l, a, b_g1, b_g2: one point per constraint or variable) are
    fixed-base multiplications of the generators; they go to ``backend``'s fixed-base hooks
    (the core's reference when it has none), or straight to the reference without a backend.
    Either way the key is the same, bit for bit. Each step runs in a ``setup_*`` span of the
    backend's timer, so ``CUZK_TIMING=2`` shows where the time goes.
    """
    progress = progress or NullProgress()
    timer = backend.ctx.timer if backend is not None else Timer(level=0)
    backend_name = backend.name if backend is not None else None

    @contextlib.contextmanager
    def step(span: str, name: str) -> Iterator[None]:
        with timer.span(f"setup_{span}", backend=backend_name):
            yield
        progress.step(name)

    def g1_batch(scalars: list[int]) -> G1Affines:
        limbs = ints_to_limbs(scalars)
        if backend is None:
            return reference_fixed_base_g1(G1_GENERATOR, limbs)
        return backend.fixed_base_g1(G1_GENERATOR, limbs)

    def g2_batch(scalars: list[int]) -> G2Affines:
        limbs = ints_to_limbs(scalars)
        if backend is None:
            return reference_fixed_base_g2(G2_GENERATOR, limbs)
        return backend.fixed_base_g2(G2_GENERATOR, limbs)

    if backend is not None:
        with timer.span("setup_prepare", backend=backend_name):  # kernel builds, not key work
            backend.prepare()
    tau, alpha, beta, gamma, delta = _toxic_waste(seed)
    num_inputs = matrices.num_inputs
    num_vars = num_inputs + matrices.num_aux
    domain = EvaluationDomain.covering(matrices.num_constraints)
    m = domain.size
    while pow(tau, m, _R) == 1:  # τ must not lie in the domain (probability ~ m/r)
        tau = tau * 7 % _R

    with step("qap", "QAP at τ"):
        lagrange = lagrange_at(domain, tau)
        u = column_sums(matrices.a, lagrange, num_vars)
        v = column_sums(matrices.b, lagrange, num_vars)
        w = column_sums(matrices.c, lagrange, num_vars)
        gamma_inv, delta_inv = fr_inv(gamma), fr_inv(delta)
        combined = [(beta * u[i] + alpha * v[i] + w[i]) % _R for i in range(num_vars)]
        ic_scalars = [c * gamma_inv % _R for c in combined[:num_inputs]]
        l_scalars = [c * delta_inv % _R for c in combined[num_inputs:]]
        z_tau = (pow(tau, m, _R) - 1) % _R
        h_scalars, power = [], z_tau * delta_inv % _R
        for _ in range(m - 1):
            h_scalars.append(power)
            power = power * tau % _R
        a_cols = query_density(matrices.a, num_vars).nonzero()[0].tolist()
        b_cols = query_density(matrices.b, num_vars).nonzero()[0].tolist()
        b_scalars = [v[i] for i in b_cols]

    with step("h", "h"):
        h = g1_batch(h_scalars)
    with step("l", "l"):
        l = g1_batch(l_scalars)
    with step("a", "a"):
        a = g1_batch([u[i] for i in a_cols])
    with step("b_g1", "b_g1"):
        b_g1 = g1_batch(b_scalars)
    with step("b_g2", "b_g2"):
        b_g2 = g2_batch(b_scalars)

    with step("vk", "verifying key"):  # a few points: the reference's tuples are what vk holds
        singles = g1_fixed_base_batch(G1_GENERATOR, [alpha, beta, delta, *ic_scalars])
        alpha_g1, beta_g1, delta_g1, *ic = singles
        beta_g2, gamma_g2, delta_g2 = g2_fixed_base_batch(G2_GENERATOR, [beta, gamma, delta])
        vk = VerifyingKey(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic)
    return ProvingKey(vk, h, l, a, b_g1, b_g2)


SETUP_STEPS = 7
"""How many progress steps :func:`generate_parameters` reports."""
