"""The reference witness evaluator: the program run op by op with plain Python ints.

It is the oracle every backend's ``cuzk_witness`` matches bit for bit, and what a backend that
leaves the hook out gets.
"""

from __future__ import annotations

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints

from .program import BIT, HINT, WitnessProgram

_R = FR_MODULUS


def check_witness_arguments(program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray) -> None:
    """ValueError unless ``inputs`` and ``hints`` are the ``(n, 4)`` scalars ``program`` takes."""
    for label, array, want in (
        ("inputs", inputs, program.num_inputs),
        ("hints", hints, program.num_hints),
    ):
        if array.shape != (want, 4) or array.dtype != np.uint64:
            raise ValueError(
                f"{label} must be uint64 shaped ({want}, 4), got {array.dtype} {array.shape}"
            )


def evaluate_program(program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray) -> np.ndarray:
    """The witness ``z = [1, inputs…, aux…]`` as ``(m, 4)`` scalars."""
    check_witness_arguments(program, inputs, hints)
    n_in = program.num_inputs
    z = limbs_to_ints(inputs) + [0] * program.num_aux
    hint_values = limbs_to_ints(hints)
    m = program.matrices
    rows = {
        name: (matrix.indptr.tolist(), matrix.cols.tolist(), limbs_to_ints(matrix.coeffs))
        for name, matrix in (("a", m.a), ("b", m.b), ("c", m.c), ("lin", program.lin))
    }

    def dot(name: str, row: int) -> int:
        indptr, cols, coeffs = rows[name]
        start, end = indptr[row], indptr[row + 1]
        return sum(map(int.__mul__, coeffs[start:end], map(z.__getitem__, cols[start:end]))) % _R

    inverses = limbs_to_ints(program.inverses)
    for j, (kind, arg, extra) in enumerate(
        zip(program.kind.tolist(), program.arg.tolist(), program.extra.tolist(), strict=True)
    ):
        if kind == HINT:
            value = hint_values[arg]
        elif kind == BIT:
            value = (dot("lin", arg) >> extra) & 1
        else:  # SOLVE: z_j is still 0, so C·z leaves its own term out
            value = (dot("a", arg) * dot("b", arg) - dot("c", arg)) * inverses[extra] % _R
        z[n_in + j] = value
    return ints_to_limbs(z)
