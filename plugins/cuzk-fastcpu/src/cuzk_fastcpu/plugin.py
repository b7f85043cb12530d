"""The fastcpu backend's hook implementations (entry point ``fastcpu`` in group ``cuzk``).

Results equal the reference CPU
backend's bit for bit: MSM sums, NTTs and products mod r are unique, so any correct algorithm
gives the same canonical limbs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk_core import hookimpl
from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.gadgets.poseidon.batch import PoseidonTable
from cuzk_core.hookspecs import BackendContext, BackendInfo, Synthesized
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, R1CSMatrices
from cuzk_core.witness.program import WitnessProgram

from . import BACKEND_NAME, __version__, kernels, solved_rows

_R = FR_MODULUS


@hookimpl
def cuzk_backend_info() -> BackendInfo:
    """fastcpu's name and version, and whether its C extension loads here."""
    if kernels.UNAVAILABLE_REASON:
        return BackendInfo(BACKEND_NAME, __version__, False, kernels.UNAVAILABLE_REASON)
    try:
        threads = kernels.thread_count()
    except ValueError as exc:
        return BackendInfo(BACKEND_NAME, __version__, False, str(exc))
    reason = f"C kernels (Fq: {kernels.fq_kernel()}), batch-affine Pippenger, {threads} thread(s)"
    return BackendInfo(BACKEND_NAME, __version__, True, reason)


# ---------------------------------------------------------------- allocation (host memory only)


@hookimpl
def cuzk_alloc_host(
    ctx: BackendContext, shape: tuple[int, ...], dtype: str, purpose: str
) -> np.ndarray | None:
    """A zeroed numpy array: the CPU computes where the data is."""
    return np.zeros(shape, dtype=dtype)


@hookimpl
def cuzk_pin(ctx: BackendContext, arrays: list[np.ndarray], purpose: str) -> Any:
    """Nothing to pin on a CPU backend."""
    return "not-pinned"


@hookimpl
def cuzk_unpin(ctx: BackendContext, handle: Any) -> bool | None:
    """Nothing was pinned."""
    return True


@hookimpl
def cuzk_upload(ctx: BackendContext, points: G1Affines | G2Affines, purpose: str) -> Any:
    """Bases stay where they are: the MSM hooks take the canonical batch itself."""
    return points


@hookimpl
def cuzk_release(ctx: BackendContext, handle: Any) -> bool | None:
    """Host arrays are freed by the garbage collector."""
    return True


# ---------------------------------------------------------------- synthesis


@hookimpl
def cuzk_synthesize(ctx: BackendContext, circuit: Any) -> Synthesized | None:
    """Run the circuit's gadgets into cuzk's constraint system (they are Python)."""
    cs = ConstraintSystem()
    with ctx.timer.span("gadgets"):
        circuit.synthesize(cs)
    with ctx.timer.span("matrices"):
        matrices = cs.matrices()
    return Synthesized(matrices, ints_to_limbs(cs.assignment()))


@hookimpl
def cuzk_witness(
    ctx: BackendContext, program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray
) -> np.ndarray:
    """A compiled circuit's witness in C, level by level across threads; the solved rows' A·z
    and B·z are kept for the ``evaluate_r1cs`` of this witness (:mod:`.solved_rows`)."""
    return solved_rows.witness(program, inputs, hints)


@hookimpl
def cuzk_evaluate_r1cs(
    ctx: BackendContext, matrices: R1CSMatrices, witness: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A·z, B·z, C·z by sparse products in C; A·z and B·z of the rows this backend's witness
    hook solved for ``witness`` are not computed again."""
    reused = solved_rows.evaluate(matrices, witness)
    if reused is not None:
        return reused
    return tuple(kernels.spmv(m, witness) for m in (matrices.a, matrices.b, matrices.c))


# ---------------------------------------------------------------- NTT


def _check_size(values: np.ndarray, domain: EvaluationDomain) -> None:
    if len(values) != domain.size:
        raise ValueError(f"{len(values)} values for a domain of size {domain.size}")


@hookimpl
def cuzk_ntt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain
) -> np.ndarray | None:
    """Forward NTT in C."""
    _check_size(values, domain)
    return kernels.ntt(values, domain.omega)


@hookimpl
def cuzk_intt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain
) -> np.ndarray | None:
    """Inverse NTT: the forward one with ω⁻¹, then a scaling by 1/n."""
    _check_size(values, domain)
    out = kernels.ntt(values, pow(domain.omega, -1, _R))
    return kernels.scale_by_powers(out, 1, pow(domain.size, -1, _R))


@hookimpl
def cuzk_coset_ntt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
) -> np.ndarray | None:
    """Scale coefficient i by shiftⁱ, then NTT."""
    _check_size(values, domain)
    scaled = kernels.scale_by_powers(kernels.as_scalars(values).copy(), shift)
    return kernels.ntt(scaled, domain.omega)


@hookimpl
def cuzk_coset_intt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
) -> np.ndarray | None:
    """Inverse NTT, then scale coefficient i by shift⁻ⁱ (with the 1/n folded in)."""
    _check_size(values, domain)
    out = kernels.ntt(values, pow(domain.omega, -1, _R))
    return kernels.scale_by_powers(out, pow(shift, -1, _R), pow(domain.size, -1, _R))


@hookimpl
def cuzk_quotient_pointwise(
    ctx: BackendContext, a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int
) -> np.ndarray | None:
    """(a·b − c)·scale elementwise in C."""
    return kernels.quotient(a, b, c, scale)


@hookimpl
def cuzk_first_unsatisfied(
    ctx: BackendContext, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> int | None:
    """The witness check in C: stops at the first failing row, allocates nothing."""
    return kernels.first_unsatisfied(a, b, c)


@hookimpl
def cuzk_poseidon(ctx: BackendContext, states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """The permutations in C, a block of states per thread at a time."""
    return kernels.poseidon(states, table)


# ---------------------------------------------------------------- fixed base (key generation)


@hookimpl
def cuzk_fixed_base_g1(ctx: BackendContext, base: Any, scalars: np.ndarray) -> G1Affines:
    """``scalarᵢ·base`` in G1: a table of 8-bit window multiples, one inversion per 256 points."""
    return kernels.fixed_base(G1Affines, base, scalars)


@hookimpl
def cuzk_fixed_base_g2(ctx: BackendContext, base: Any, scalars: np.ndarray) -> G2Affines:
    """The same over Fq2."""
    return kernels.fixed_base(G2Affines, base, scalars)


@hookimpl
def cuzk_decode_snarkjs_points(
    ctx: BackendContext, raw: np.ndarray, group: str
) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """A zkey's points checked and out of Montgomery form in C on every thread (numpy took
    ~5 µs a G1 point and ~16 µs a G2 point a core)."""
    return kernels.decode_snarkjs(raw, group)


# ---------------------------------------------------------------- MSM


def _msm(ctx: BackendContext, bases: Any, scalars: np.ndarray, window_bits: int | None, label: str):
    signed = ctx.profile.msm.signed_digits
    with ctx.timer.span("pippenger", msm=label, points=len(bases), window_bits=window_bits):
        return kernels.msm(bases, scalars, window_bits, signed)


@hookimpl
def cuzk_msm_g1(
    ctx: BackendContext, bases: G1Affines, scalars: np.ndarray, window_bits: int | None, label: str
) -> G1Affines | None:
    """G1 MSM: batch-affine Pippenger in C, windows spread over threads."""
    return _msm(ctx, bases, scalars, window_bits, label)


@hookimpl
def cuzk_msm_g2(
    ctx: BackendContext, bases: G2Affines, scalars: np.ndarray, window_bits: int | None, label: str
) -> G2Affines | None:
    """G2 MSM: the same algorithm over Fq2."""
    return _msm(ctx, bases, scalars, window_bits, label)
