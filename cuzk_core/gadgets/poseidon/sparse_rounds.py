"""The partial rounds rewritten with sparse linear layers, so the gadget's hot loop stays small.

In a partial round only lane 0 meets the S-box, so the dense part of the linear layer can be moved
backwards across it (the Poseidon paper, appendix B). Going from the last partial round to the
first, the round's matrix A (M, times whatever was moved out of the round after it) is split as
A = S·B with B = [[1, 0], [0, Â]] (Â the lower-right block of A) and the sparse
S = [[A₀₀, ŵᵀ], [v̂, I]], where v̂ = A[1:, 0] and ŵᵀ = A[0, 1:]·Â⁻¹. B touches neither lane 0 nor
the S-box, so it moves into the previous round: the round's constants become B·c and the previous
round's matrix B·M. What is left before the first partial round joins the last full round's MDS.

The S-box inputs, and so every witness value, are those of the reference permutation; only the
linear layers change. Applying S costs a linear combination of t terms for lane 0 and one added
term per other lane, instead of t² full-size terms: the gadget's lane-0 combination grows by one
variable per partial round, so this is what keeps synthesis linear in practice.
"""

from __future__ import annotations

import functools

import attrs

from .linalg import Matrix, identity, inverse, mat_mul, mat_vec
from .params import PoseidonParams


@attrs.frozen
class SparseRounds:
    """The rewritten schedule: per-round constants, full-round matrices and sparse layers."""

    round_constants: tuple[tuple[int, ...], ...]
    """Added at the start of each round (partial rounds: B·c, full rounds: unchanged)."""
    full_mds: tuple[tuple[tuple[int, ...], ...], ...]
    """The dense matrix of each full round in order (M, except B₀·M for the last one before the
    partial rounds)."""
    sparse: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]
    """(A₀₀, ŵ, v̂) per partial round: lane 0 ← A₀₀·x₀ + ŵ·x[1:], lane j ← v̂ⱼ·x₀ + xⱼ."""


@functools.cache
def sparse_rounds(params: PoseidonParams) -> SparseRounds:
    """Derive (once per parameter set) the sparse-layer schedule of ``params``."""
    p, t, half = params.modulus, params.t, params.r_f // 2
    mds = [list(row) for row in params.mds]
    constants = [list(c) for c in params.round_constants]
    moved = identity(t)  # B of the round after the one being rewritten
    sparse = []
    for r in reversed(range(half, half + params.r_p)):
        a = mat_mul(moved, mds, p)
        block = [row[1:] for row in a[1:]]
        w = mat_vec([list(col) for col in zip(*inverse(block, p), strict=True)], a[0][1:], p)
        sparse.append((a[0][0], tuple(w), tuple(row[0] for row in a[1:])))
        moved = [[1] + [0] * (t - 1)] + [[0, *row] for row in block]
        constants[r] = mat_vec(moved, constants[r], p)
    sparse.reverse()
    full_rounds = [r for r in range(len(constants)) if params.is_full_round(r)]
    full_mds = [mat_mul(moved, mds, p) if r == half - 1 else mds for r in full_rounds]
    return SparseRounds(
        round_constants=tuple(tuple(c) for c in constants),
        full_mds=tuple(_frozen(m) for m in full_mds),
        sparse=tuple(sparse),
    )


def _frozen(m: Matrix) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(row) for row in m)
