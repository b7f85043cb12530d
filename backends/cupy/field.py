"""Elementwise and sparse Fr work on the GPU: R1CS evaluation (CSR SpMV) and H's quotient step."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import SparseMatrix

from . import device

_R = FR_MODULUS
_MONT = (1 << 256) % _R
_MATRICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _matrix_on_device(matrix: SparseMatrix) -> tuple[Any, Any, Any]:
    """(indptr, cols, coeffs) on the device, uploaded once per matrix object."""
    cached = _MATRICES.get(matrix)
    if cached is None:
        cupy = device.cupy_module()
        cached = (
            cupy.asarray(matrix.indptr),
            cupy.asarray(matrix.cols),
            cupy.asarray(np.ascontiguousarray(matrix.coeffs)),
        )
        _MATRICES[matrix] = cached
    return cached


def to_montgomery(values: Any) -> Any:
    """A Montgomery-form copy of device scalars ((n, 4) uint64)."""
    out = values.copy()
    count = out.shape[0]
    device.launch(device.kernel("ff/fr_kernels.cu", "fr_to_mont"), count, (out, np.uint64(count)))
    return out


def spmv(matrix: SparseMatrix, z_mont: Any) -> Any:
    """M·z (canonical) for device witness ``z_mont`` in Montgomery form."""
    cupy = device.cupy_module()
    indptr, cols, coeffs = _matrix_on_device(matrix)
    rows = matrix.num_rows
    out = cupy.empty((rows, 4), dtype=np.uint64)
    device.launch(
        device.kernel("r1cs/spmv.cu", "r1cs_spmv"),
        rows,
        (indptr, cols, coeffs, z_mont, out, np.uint64(rows)),
    )
    return out


def quotient(a: Any, b: Any, c: Any, scale: int) -> Any:
    """(a·b − c)·scale elementwise, canonical device scalars in and out."""
    cupy = device.cupy_module()
    count = a.shape[0]
    scale_mont = cupy.asarray(ints_to_limbs([scale % _R * _MONT % _R]))
    out = cupy.empty((count, 4), dtype=np.uint64)
    device.launch(
        device.kernel("ff/fr_kernels.cu", "fr_quotient"),
        count,
        (a, b, c, scale_mont, out, np.uint64(count)),
    )
    return out
