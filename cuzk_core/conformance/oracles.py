"""What each computation must give, by its definition: an MSM as one scalar multiplication per
point, an NTT row as the polynomial at one point, fixed-base products one at a time, the quotient
step and R1CS products value by value.

The conformance checks hold the cpu reference to these (every other backend is held to the
reference), the bench checks a backend's answer against them at a small size, and the tests check
the core and the kernels with them. Plain Python and independent of every backend: O(n) work a
value, so keep inputs to a few thousand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cuzk_core.conformance.inputs import GROUPS
from cuzk_core.domain import EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.r1cs import R1CSMatrices

R = FR_MODULUS
TRANSFORMS = ("ntt", "intt", "coset_ntt", "coset_intt")


def msm_by_definition(group: str, points: list, scalars: list[int]) -> Any:
    """``Σ kᵢ·Pᵢ`` one scalar multiplication at a time (affine, None for infinity)."""
    ops = GROUPS[group][0]
    total = ops.infinity
    for point, k in zip(points, scalars, strict=True):
        if point is not None:
            total = ops.add(total, ops.mul(ops.add_affine(ops.infinity, point), k))
    return ops.batch_to_affine([total])[0]


def fixed_base_by_definition(group: str, base: Any, scalars: list[int]) -> list:
    """``[k·base for k in scalars]`` (affine), one scalar multiplication each."""
    ops = GROUPS[group][0]
    lifted = ops.add_affine(ops.infinity, base)
    return ops.batch_to_affine([ops.mul(lifted, k) for k in scalars])


def transform_by_definition(
    method: str,
    values: list[int],
    domain: EvaluationDomain,
    shift: int | None = None,
    rows: Iterable[int] | None = None,
) -> list[int]:
    """Rows ``rows`` (default all) of NTT ``method`` (one of :data:`TRANSFORMS`) of ``values``,
    each from its defining sum: the polynomial at ``ω^k`` (times ``shift`` on a coset), or the
    inverse's ``n⁻¹ Σ vⱼ ω^−jk`` (times ``shift^−k``)."""
    if method not in TRANSFORMS:
        raise ValueError(f"transform {method!r} is not one of {', '.join(TRANSFORMS)}")
    inverse = method.endswith("intt")
    omega = pow(domain.omega, -1, R) if inverse else domain.omega
    n_inv = pow(domain.size, -1, R)
    out = []
    for k in range(domain.size) if rows is None else rows:
        x = pow(omega, k, R)
        if method == "coset_ntt":
            assert shift is not None, "a coset transform needs its shift"
            x = x * shift % R
        total = 0
        for v in reversed(values):
            total = (total * x + v) % R
        if inverse:
            total = total * n_inv % R
        if method == "coset_intt":
            assert shift is not None, "a coset transform needs its shift"
            total = total * pow(shift, -k, R) % R
        out.append(total)
    return out


def quotient_by_definition(a: list[int], b: list[int], c: list[int], scale: int) -> list[int]:
    """``(aᵢ·bᵢ − cᵢ)·scale`` for each i."""
    return [(x * y - z) * scale % R for x, y, z in zip(a, b, c, strict=True)]


def r1cs_by_definition(matrices: R1CSMatrices, witness: list[int]) -> tuple[list[int], ...]:
    """``A·z, B·z, C·z`` row by row."""
    return tuple(m.dot(witness) for m in (matrices.a, matrices.b, matrices.c))
