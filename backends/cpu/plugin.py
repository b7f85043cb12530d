"""The CPU reference backend: every hook in plain Python. It is the oracle other backends match."""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk_core import __version__, hookimpl
from cuzk_core.curve.g1 import G1_OPS, G1Affine
from cuzk_core.curve.g2 import G2_OPS, G2Affine
from cuzk_core.curve.ops import CurveOps
from cuzk_core.domain import EvaluationDomain
from cuzk_core.fallbacks import reference_fixed_base_g1, reference_fixed_base_g2
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.hookspecs import BackendContext, BackendInfo, Synthesized
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import ConstraintSystem, R1CSMatrices
from cuzk_core.witness.evaluate import evaluate_program
from cuzk_core.witness.program import WitnessProgram

from . import msm, ntt

NAME = "cpu"


@hookimpl
def cuzk_backend_info() -> BackendInfo:
    return BackendInfo(NAME, __version__, available=True, reason="plain Python, runs anywhere")


# ---------------------------------------------------------------- allocation (host memory only)


@hookimpl
def cuzk_alloc_host(ctx: BackendContext, shape: tuple[int, ...], dtype: str, purpose: str):
    return np.zeros(shape, dtype=dtype)


@hookimpl
def cuzk_pin(ctx: BackendContext, arrays: list, purpose: str) -> Any:
    # Nothing to pin: the CPU computes where the data already is.
    return "not-pinned"


@hookimpl
def cuzk_unpin(ctx: BackendContext, handle: Any) -> bool | None:
    return True


@hookimpl
def cuzk_upload(ctx: BackendContext, points: Any, purpose: str) -> Any:
    return points


@hookimpl
def cuzk_release(ctx: BackendContext, handle: Any) -> bool | None:
    return True


# ---------------------------------------------------------------- synthesis


@hookimpl
def cuzk_synthesize(ctx: BackendContext, circuit: Any) -> Synthesized | None:
    cs = ConstraintSystem()
    with ctx.timer.span("gadgets"):
        circuit.synthesize(cs)
    with ctx.timer.span("matrices"):
        matrices = cs.matrices()
    return Synthesized(matrices, ints_to_limbs(cs.assignment()))


@hookimpl
def cuzk_witness(ctx: BackendContext, program: WitnessProgram, inputs, hints):
    return evaluate_program(program, inputs, hints)


@hookimpl
def cuzk_evaluate_r1cs(
    ctx: BackendContext, matrices: R1CSMatrices, witness: np.ndarray, for_quotient: bool
):
    # Host arrays whatever the caller's use (for_quotient only allows handles).
    z = limbs_to_ints(witness)
    return tuple(ints_to_limbs(m.dot(z)) for m in (matrices.a, matrices.b, matrices.c))


# ---------------------------------------------------------------- NTT


@hookimpl
def cuzk_ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain):
    return ints_to_limbs(ntt.ntt(limbs_to_ints(values), domain.omega))


@hookimpl
def cuzk_intt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain):
    return ints_to_limbs(ntt.intt(limbs_to_ints(values), domain.omega))


@hookimpl
def cuzk_coset_ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int):
    scaled = ntt.scale_by_powers(limbs_to_ints(values), shift)
    return ints_to_limbs(ntt.ntt(scaled, domain.omega))


@hookimpl
def cuzk_coset_intt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int):
    coeffs = ntt.intt(limbs_to_ints(values), domain.omega)
    return ints_to_limbs(ntt.scale_by_powers(coeffs, pow(shift, -1, FR_MODULUS)))


@hookimpl
def cuzk_quotient_pointwise(ctx: BackendContext, a, b, c, scale: int):
    r = FR_MODULUS
    triples = zip(limbs_to_ints(a), limbs_to_ints(b), limbs_to_ints(c), strict=True)
    return ints_to_limbs([(x * y - z) * scale % r for x, y, z in triples])


# ---------------------------------------------------------------- MSM


def _msm(
    ctx: BackendContext,
    ops: CurveOps,
    batch_type: type[G1Affines] | type[G2Affines],
    bases: G1Affines | G2Affines,
    scalars: np.ndarray,
    window_bits: int | None,
) -> G1Affines | G2Affines | None:
    """Pippenger over ``ops`` when the context is ours; the sum comes back as a 1-point batch."""
    total = msm.pippenger(
        ops,
        bases.to_points(),
        limbs_to_ints(scalars),
        window_bits,
        ctx.profile.msm.signed_digits,
        ctx.timer,
    )
    return batch_type.from_points(ops.batch_to_affine([total]))


@hookimpl
def cuzk_msm_g1(ctx: BackendContext, bases: G1Affines, scalars, window_bits, label: str):
    return _msm(ctx, G1_OPS, G1Affines, bases, scalars, window_bits)


@hookimpl
def cuzk_msm_g2(ctx: BackendContext, bases: G2Affines, scalars, window_bits, label: str):
    return _msm(ctx, G2_OPS, G2Affines, bases, scalars, window_bits)


# ---------------------------------------------------------------- fixed base (key generation)


@hookimpl
def cuzk_fixed_base_g1(ctx: BackendContext, base: G1Affine, scalars: np.ndarray):
    return reference_fixed_base_g1(base, scalars)


@hookimpl
def cuzk_fixed_base_g2(ctx: BackendContext, base: G2Affine, scalars: np.ndarray):
    return reference_fixed_base_g2(base, scalars)
