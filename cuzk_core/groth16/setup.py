"""Groth16 key generation (a trusted setup in one process: fine for tests and development).

The toxic waste τ, α, β, γ, δ comes from the operating system's randomness, or from ``seed``
for reproducible test keys — a seeded key is not secure, since anyone can recompute its secrets.
"""

from __future__ import annotations

import hashlib
import secrets

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.field.fr import fr_inv
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey, query_density
from cuzk_core.groth16.qap import column_sums, lagrange_at
from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.r1cs import R1CSMatrices

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
    matrices: R1CSMatrices, seed: int | None = None, progress: Progress | None = None
) -> ProvingKey:
    """Groth16 parameters for ``matrices`` (which must already hold the input rows)."""
    progress = progress or NullProgress()
    tau, alpha, beta, gamma, delta = _toxic_waste(seed)
    num_inputs = matrices.num_inputs
    num_vars = num_inputs + matrices.num_aux
    domain = EvaluationDomain.covering(matrices.num_constraints)
    m = domain.size
    while pow(tau, m, _R) == 1:  # τ must not lie in the domain (probability ~ m/r)
        tau = tau * 7 % _R

    lagrange = lagrange_at(domain, tau)
    u = column_sums(matrices.a, lagrange, num_vars)
    v = column_sums(matrices.b, lagrange, num_vars)
    w = column_sums(matrices.c, lagrange, num_vars)
    progress.step("QAP at τ")

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

    def g1_batch(scalars: list[int], name: str) -> G1Affines:
        points = G1Affines.from_points(g1_fixed_base_batch(G1_GENERATOR, scalars))
        progress.step(name)
        return points

    h = g1_batch(h_scalars, "h")
    l = g1_batch(l_scalars, "l")
    a = g1_batch([u[i] for i in a_cols], "a")
    b_g1 = g1_batch([v[i] for i in b_cols], "b_g1")
    b_g2 = G2Affines.from_points(g2_fixed_base_batch(G2_GENERATOR, [v[i] for i in b_cols]))
    progress.step("b_g2")

    singles = g1_fixed_base_batch(G1_GENERATOR, [alpha, beta, delta, *ic_scalars])
    alpha_g1, beta_g1, delta_g1, *ic = singles
    beta_g2, gamma_g2, delta_g2 = g2_fixed_base_batch(G2_GENERATOR, [beta, gamma, delta])
    vk = VerifyingKey(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic)
    progress.step("verifying key")
    return ProvingKey(vk, h, l, a, b_g1, b_g2)


SETUP_STEPS = 7
"""How many progress steps :func:`generate_parameters` reports."""
