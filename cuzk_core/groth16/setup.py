"""Groth16 key generation (a trusted setup in one process: fine for tests and development).

The toxic waste τ, α, β, γ, δ comes from the operating system's randomness, or from ``seed``
for reproducible test keys — a seeded key is not secure, since anyone can recompute its secrets.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.domain import EvaluationDomain
from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.field.fr import fr_inv
from cuzk_core.gather import THREADS, gather_rows
from cuzk_core.groth16.key_sources import host_memory_available
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey, query_density
from cuzk_core.groth16.qap import BELLPERSON, SNARKJS, QuotientConvention
from cuzk_core.interop.montgomery import FR
from cuzk_core.layout import G1Affines, G2Affines, limbs_to_ints
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix
from cuzk_core.timing import Timer

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

_R = FR_MODULUS


class _Scaler:
    """``values·factor mod r`` elementwise on the backend: its quotient hook's (a·b − c)·scale
    with b = 1 and c = 0 (C or the device in place of host numpy: 45 scalings of a 2^20 setup
    took 10.9 s as numpy Montgomery products on 2 cores)."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._ones = np.zeros((0, 4), dtype=np.uint64)

    def __call__(self, values: np.ndarray, factor: int) -> np.ndarray:
        n = len(values)
        if len(self._ones) < n:
            self._ones = np.zeros((n, 4), dtype=np.uint64)
            self._ones[:, 0] = 1
        ones = self._ones[:n]
        zeros = np.zeros_like(ones)
        return self._backend.quotient_pointwise(values, ones, zeros, factor % _R)

    def powers(self, base: int, count: int) -> np.ndarray:
        """``base^0 … base^(count−1)`` as limbs, doubling the filled prefix each step."""
        out = np.zeros((count, 4), dtype=np.uint64)
        if count:
            out[0, 0] = 1
        filled = 1
        while filled < count:
            more = min(filled, count - filled)
            out[filled : filled + more] = self(out[:more], pow(base, filled, _R))
            filled += more
        return out


def _fr_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b mod r`` elementwise, in chunks on every core."""
    return FR.add_limbs(a, b, threads=True)


def _column_order(matrix: SparseMatrix) -> np.ndarray:
    """The entries' order by column: a CSR matrix lists each row's entries in row order, so a
    stable sort by column alone leaves every column's entries in row order."""
    cols = matrix.cols.astype(np.int32) if matrix.num_cols < 2**31 else matrix.cols
    return np.argsort(cols, kind="stable")  # int32 sorts in ~60% of int64's time


def _transposed(matrices: R1CSMatrices, timer: Timer) -> R1CSMatrices:
    """Aᵀ, Bᵀ, Cᵀ as a constraint system whose "witness" is one weight per constraint, so that
    the backend's R1CS evaluation gives every column's weighted sum."""
    parts = (matrices.a, matrices.b, matrices.c)
    with ThreadPoolExecutor(THREADS) as pool:
        with timer.span("qap_sort"):
            orders = list(pool.map(_column_order, parts))
        transposed = []
        with timer.span("qap_gather"):
            for matrix, order in zip(parts, orders, strict=True):
                rows = np.repeat(np.arange(matrix.num_rows, dtype=np.int64), np.diff(matrix.indptr))
                counts = np.bincount(matrix.cols, minlength=matrix.num_cols)
                indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
                transposed.append(
                    SparseMatrix(
                        indptr,
                        gather_rows(rows, order, pool),
                        gather_rows(matrix.coeffs, order, pool),
                        matrix.num_rows,
                    )
                )
    a, b, c = transposed
    return R1CSMatrices(
        num_inputs=1,
        num_aux=matrices.num_constraints - 1,
        num_constraints=matrices.num_variables,
        a=a,
        b=b,
        c=c,
    )


def _reference_backend() -> Backend:
    """The cpu reference backend, for key generation without one."""
    from cuzk_core.plugins import load_plugins  # plugins import the prover's modules
    from cuzk_core.profile import load_profile

    return load_plugins().backend(load_profile("cpu"), Timer(level=0))


def _toxic_waste(seed: int | None) -> tuple[int, int, int, int, int]:
    """τ, α, β, γ, δ: nonzero elements of Fr."""

    def draw(label: str) -> int:
        if seed is None:
            return secrets.randbelow(_R - 1) + 1
        digest = hashlib.sha512(f"cuzk setup {seed} {label}".encode()).digest()
        return int.from_bytes(digest, "big") % (_R - 1) + 1

    return draw("tau"), draw("alpha"), draw("beta"), draw("gamma"), draw("delta")


_KEY_BYTES_PER_VARIABLE = 3 * 96 + 192 + 3 * 32
"""What setup holds at least for each variable: its A, B and L points in G1, its B point in
G2, and its three QAP values."""
_KEY_BYTES_PER_POINT_OF_H = 96 + 2 * 32


def _check_key_fits(num_vars: int, domain_size: int, available: int | None) -> None:
    """Refuse up front a setup whose key alone exceeds the memory available (None: unknown),
    rather than fail in an allocation (an r1cs claiming 2^32 wires asked for 32 GiB at once)."""
    need = num_vars * _KEY_BYTES_PER_VARIABLE + domain_size * _KEY_BYTES_PER_POINT_OF_H
    if available is not None and need > available:
        raise CuzkError(
            f"setup of a circuit of {num_vars} variables over a domain of {domain_size} needs "
            f"at least {need / 2**30:.2f} GiB, {available / 2**30:.2f} GiB of memory is available"
        )


def generate_parameters(
    matrices: R1CSMatrices,
    seed: int | None = None,
    progress: Progress | None = None,
    backend: Backend | None = None,
    convention: QuotientConvention = BELLPERSON,
) -> ProvingKey:
    """Groth16 parameters for ``matrices`` (which must already hold the input rows), for a
    prover that computes H by ``convention``.

    BELLPERSON (params.bin): roots from 7, h holds τ^i·Z(τ)/δ for the m − 1 coefficients of H,
    and a / b_g1 / b_g2 only the variables that occur in A / B. SNARKJS (zkeys): roots from 5,
    h holds L_{2i+1}(τ)/δ, the Lagrange values at the m odd points of the 2m domain (where
    Z = x^m − 1 is the constant −2, so the prover's A·B − C there needs no division), and
    a / b_g1 / b_g2 a point for every variable (infinity where unused).

    Everything per constraint or variable is array work on ``backend`` (the cpu reference
    without one): the Lagrange values at τ are an inverse NTT of τ's powers, the QAP
    polynomials at τ the transposed matrices times them (the backend's R1CS evaluation), the
    scalars the backend's elementwise products (its quotient hook), and the five query
    batches (h, l, a, b_g1, b_g2) the backend's fixed-base hooks (the core's reference when it
    has none). Whatever the backend, the key is the same, bit for bit. Each step runs in a
    ``setup_*`` span of the backend's timer, so ``CUZK_TIMING=2`` shows where the time goes.
    """
    progress = progress or NullProgress()
    timer = backend.ctx.timer if backend is not None else Timer(level=0)
    backend_name = backend.name if backend is not None else None

    @contextlib.contextmanager
    def step(span: str, name: str) -> Iterator[None]:
        with timer.span(f"setup_{span}", backend=backend_name):
            yield
        progress.step(name)

    if backend is None:
        backend = _reference_backend()
    else:
        with timer.span("setup_prepare", backend=backend_name):  # kernel builds, not key work
            backend.prepare()

    def g1_batch(scalars: np.ndarray) -> G1Affines:
        return backend.fixed_base_g1(G1_GENERATOR, np.ascontiguousarray(scalars))

    def g2_batch(scalars: np.ndarray) -> G2Affines:
        return backend.fixed_base_g2(G2_GENERATOR, np.ascontiguousarray(scalars))

    tau, alpha, beta, gamma, delta = _toxic_waste(seed)
    num_inputs = matrices.num_inputs
    num_vars = num_inputs + matrices.num_aux
    domain = convention.domain(matrices.num_constraints)
    m = domain.size
    _check_key_fits(num_vars, m, host_memory_available())
    while pow(tau, m, _R) == 1:  # τ must not lie in the domain (probability ~ m/r)
        tau = tau * 7 % _R

    with step("qap", "QAP at τ"):
        # L_j(τ) = (1/m) Σ_k τ^k ω^(−jk): the inverse NTT of τ's powers
        scale = _Scaler(backend)
        with timer.span("qap_lagrange"):
            lagrange = backend.intt(scale.powers(tau, m), domain)
        transposed = _transposed(matrices, timer)
        with timer.span("qap_evaluate"):
            u, v, w = backend.evaluate_r1cs(transposed, lagrange[: matrices.num_constraints])
        del transposed  # as large as the matrices: gone before the query batches
        with timer.span("qap_scalars"):
            gamma_inv, delta_inv = fr_inv(gamma), fr_inv(delta)
            combined = _fr_add(_fr_add(scale(u, beta), scale(v, alpha)), w)
            ic_scalars = limbs_to_ints(scale(combined[:num_inputs], gamma_inv))
            l_scalars = scale(combined[num_inputs:], delta_inv)
            if convention is SNARKJS:
                doubled = EvaluationDomain(domain.log_size + 1, domain.generator)
                odd_lagrange = backend.intt(scale.powers(tau, 2 * m), doubled)[1::2]
                h_scalars = scale(odd_lagrange, delta_inv)
                a_scalars, b_scalars = u, v
            else:
                z_tau = (pow(tau, m, _R) - 1) % _R
                h_scalars = scale(scale.powers(tau, m - 1), z_tau * delta_inv)
                a_scalars = u[query_density(matrices.a, num_vars)]
                b_scalars = v[query_density(matrices.b, num_vars)]

    with step("h", "h"):
        h = g1_batch(h_scalars)
    with step("l", "l"):
        l = g1_batch(l_scalars)
    with step("a", "a"):
        a = g1_batch(a_scalars)
    with step("b_g1", "b_g1"):
        b_g1 = g1_batch(b_scalars)
    with step("b_g2", "b_g2"):
        b_g2 = g2_batch(b_scalars)

    with step("vk", "verifying key"):  # a few points: the reference's tuples are what vk holds
        singles = g1_fixed_base_batch(G1_GENERATOR, [alpha, beta, delta, *ic_scalars])
        alpha_g1, beta_g1, delta_g1, *ic = singles
        beta_g2, gamma_g2, delta_g2 = g2_fixed_base_batch(G2_GENERATOR, [beta, gamma, delta])
        vk = VerifyingKey(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic)
    return ProvingKey(vk, h, l, a, b_g1, b_g2, dense_ab=convention is SNARKJS)


SETUP_STEPS = 7
"""How many progress steps :func:`generate_parameters` reports."""
