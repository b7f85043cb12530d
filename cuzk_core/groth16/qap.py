"""From R1CS to QAP: the input rows Groth16 adds, Lagrange evaluation at τ, and the H quotient."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuzk_core.domain import BELLPERSON_GENERATOR, SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.field.fr import fr_inv, fr_root_of_unity
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

_R = FR_MODULUS


def _append_rows(matrix: SparseMatrix, rows: list[list[tuple[int, int]]]) -> SparseMatrix:
    counts = np.array([len(r) for r in rows], dtype=np.int64)
    offsets = matrix.indptr[-1] + np.cumsum(counts)
    cols = np.array([c for r in rows for c, _ in r], dtype=np.int64)
    coeffs = ints_to_limbs([v for r in rows for _, v in r]).reshape(-1, 4)
    return SparseMatrix(
        indptr=np.concatenate([matrix.indptr, offsets]).astype(np.int64, copy=False),
        cols=np.concatenate([matrix.cols, cols]).astype(np.int64, copy=False),
        coeffs=np.concatenate([matrix.coeffs.reshape(-1, 4), coeffs]).astype(np.uint64, copy=False),
        num_cols=matrix.num_cols,
    )


def with_input_rows(matrices: R1CSMatrices) -> R1CSMatrices:
    """Append one row ``z_i · 0 = 0`` per input (the constant 1 included).

    bellperson and snarkjs both do this: it makes the input polynomials linearly independent,
    which the soundness of the public-input part of the verification equation needs.
    """
    n = matrices.num_inputs
    return attrs.evolve(
        matrices,
        num_constraints=matrices.num_constraints + n,
        a=_append_rows(matrices.a, [[(i, 1)] for i in range(n)]),
        b=_append_rows(matrices.b, [[] for _ in range(n)]),
        c=_append_rows(matrices.c, [[] for _ in range(n)]),
    )


def compute_h(
    backend: Backend,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    domain: EvaluationDomain,
    for_msm: bool = False,
) -> Any:
    """The coefficients of H = (A·B − C)/Z, bellperson's way: cosets of generator 7.

    Returns ``m − 1`` coefficients (H has degree at most m − 2); with ``for_msm``, possibly as
    a handle only the backend's MSMs take (see ``cuzk_quotient_on_coset``).
    """
    m = domain.size
    shift = domain.generator
    scale = fr_inv(pow(shift, m, _R) - 1)  # 1/Z, constant on the coset
    h = backend.quotient_on_coset(a, b, c, domain, shift, scale, True, for_msm)
    if limbs_to_ints(np.asarray(h[m - 1 :]))[0] != 0:
        raise ArithmeticError(
            "A·B − C is not divisible by Z: the witness does not satisfy the circuit"
        )
    return h[: m - 1]


def compute_h_odd_coset(
    backend: Backend,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    domain: EvaluationDomain,
    for_msm: bool = False,
) -> Any:
    """snarkjs's H scalars: A·B − C evaluated at the odd points ω_{2m}·ω^i of the 2m domain.

    There Z(x) = x^m − 1 is the constant −2, so no division happens here: snarkjs folds 1/Z into
    its H points. Returns ``m`` evaluations (not coefficients); with ``for_msm`` possibly as a
    handle, as :func:`compute_h`.
    """
    shift = fr_root_of_unity(domain.log_size + 1, domain.generator)
    return backend.quotient_on_coset(a, b, c, domain, shift, 1, False, for_msm)


@attrs.frozen
class QuotientConvention:
    """How the prover computes H, and so which points a key's h query holds: one per key format."""

    name: str
    generator: int
    """The domain's roots of unity come from this non-residue."""
    h_offset: int
    """The h query holds ``m + h_offset`` points for a domain of size ``m``."""
    compute: Callable[..., Any]
    """``(backend, a, b, c, domain, for_msm=False) → h scalars`` (a handle, maybe, for_msm)."""
    min_domain_size: int = 1
    """The smallest domain the format has (snarkjs's is 2: its power of two is at least 1)."""

    def domain(self, num_rows: int) -> EvaluationDomain:
        """The smallest domain covering ``num_rows`` constraint rows (input rows included)."""
        return EvaluationDomain.covering(max(num_rows, self.min_domain_size), self.generator)

    def h_points(self, domain: EvaluationDomain) -> int:
        """How many h points (and scalars) a key for ``domain`` has."""
        return domain.size + self.h_offset


BELLPERSON = QuotientConvention("bellperson", BELLPERSON_GENERATOR, -1, compute_h)
"""Roots from 7; H = (A·B − C)/Z via the coset of 7, as m − 1 coefficients."""
SNARKJS = QuotientConvention("snarkjs", SNARKJS_GENERATOR, 0, compute_h_odd_coset, 2)
"""Roots from 5; H as m evaluations at the odd points of the 2m domain."""
