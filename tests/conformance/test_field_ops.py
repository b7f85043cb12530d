"""The quotient step and R1CS evaluation (sparse matrix–vector products) against the reference."""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import REFERENCE, random_scalars, require_size

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

R = FR_MODULUS
SIZES = [1, 2, 3, 255, 256, 1025, 1 << 16]
EDGES = [0, 1, 2, R - 1, R - 2]


def _limbs(values: list[int]) -> np.ndarray:
    return ints_to_limbs(values).reshape(-1, 4)


@pytest.mark.parametrize("n", SIZES)
def test_quotient(backend_name, make_backend, reference, rng, n):
    require_size(backend_name, n)
    a, b, c = (random_scalars(rng, n) for _ in range(3))
    for i, edge in enumerate(EDGES[:n]):
        a[i], b[-1 - i], c[i] = edge, edge, EDGES[-1 - i]
    scale = rng.randrange(R)
    got = make_backend().quotient_pointwise(_limbs(a), _limbs(b), _limbs(c), scale)
    if backend_name == REFERENCE:
        expected = [(x * y - z) * scale % R for x, y, z in zip(a, b, c, strict=True)]
        assert limbs_to_ints(got) == expected
    else:
        want = reference.quotient_pointwise(_limbs(a), _limbs(b), _limbs(c), scale)
        assert np.array_equal(got, want)


def _random_matrix(rng, rows: int, cols: int) -> SparseMatrix:
    entries = []
    for r in range(rows):
        width = rng.choice([0, 1, 2, 3, 8]) if r % 7 else 0
        picks = rng.sample(range(cols), min(width, cols))
        entries.append([(col, rng.choice([*EDGES[1:], rng.randrange(1, R)])) for col in picks])
    return SparseMatrix.from_rows(entries, cols)


@pytest.mark.parametrize("rows", SIZES)
def test_evaluate_r1cs(backend_name, make_backend, reference, rng, rows):
    require_size(backend_name, rows)
    cols = max(2, rows // 2)
    matrices = R1CSMatrices(
        num_inputs=1,
        num_aux=cols - 1,
        num_constraints=rows,
        a=_random_matrix(rng, rows, cols),
        b=_random_matrix(rng, rows, cols),
        c=_random_matrix(rng, rows, cols),
    )
    witness = [1] + [rng.choice([*EDGES, rng.randrange(R)]) for _ in range(cols - 1)]
    got = make_backend().evaluate_r1cs(matrices, _limbs(witness))
    if backend_name == REFERENCE:
        for matrix, out in zip((matrices.a, matrices.b, matrices.c), got, strict=True):
            assert limbs_to_ints(out) == matrix.dot(witness)
    else:
        want = reference.evaluate_r1cs(matrices, _limbs(witness))
        for mine, theirs in zip(got, want, strict=True):
            assert np.array_equal(mine, theirs)
