"""Elementwise and sparse Fr work on the GPU: R1CS evaluation (CSR SpMV), H's quotient step and
row gathers."""

from __future__ import annotations

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import SparseMatrix

from .driver import DeviceArray, Gpu

_R = FR_MODULUS
_MONT = (1 << 256) % _R
_SPMV = "r1cs/spmv.cu"
SPMV_LANES = 2
"""The kernel's SPMV_LANES default: threads that share a row of the R1CS products."""


def matrix_on_device(
    gpu: Gpu, matrix: SparseMatrix
) -> tuple[DeviceArray, DeviceArray, DeviceArray]:
    """(indptr, cols, coeffs) on the device, uploaded once per matrix object (and once per
    mapped file, for the views of one: a compiled circuit's program rows and proving matrices)."""
    cache = gpu.cache("matrices")
    cached = cache.get(matrix)
    if cached is None:
        cached = (
            gpu.shared_copy(matrix.indptr),
            gpu.shared_copy(matrix.cols),
            gpu.shared_copy(np.ascontiguousarray(matrix.coeffs)),
        )
        cache[matrix] = cached
    return cached


def to_montgomery(gpu: Gpu, values: DeviceArray) -> DeviceArray:
    """A Montgomery-form copy of device scalars ((n, 4) uint64)."""
    out = gpu.copy(values)
    count = out.shape[0]
    gpu.launch(gpu.kernel("ff/fr_kernels.cu", "fr_to_mont"), count, (out, np.uint64(count)))
    return out


def spmv(gpu: Gpu, matrix: SparseMatrix, z_mont: DeviceArray) -> DeviceArray:
    """M·z (canonical) for device witness ``z_mont`` in Montgomery form."""
    indptr, cols, coeffs = matrix_on_device(gpu, matrix)
    rows = matrix.num_rows
    out = gpu.empty((rows, 4), np.uint64)
    lanes = int(gpu.defines.get(_SPMV, {}).get("SPMV_LANES", SPMV_LANES))
    gpu.launch(
        gpu.kernel(_SPMV, "r1cs_spmv"),
        rows * lanes,
        (indptr, cols, coeffs, z_mont, out, np.uint64(rows)),
    )
    return out


def quotient(gpu: Gpu, a: DeviceArray, b: DeviceArray, c: DeviceArray, scale: int) -> DeviceArray:
    """(a·b − c)·scale elementwise, canonical device scalars in and out."""
    count = a.shape[0]
    scale_mont = gpu.to_device(ints_to_limbs([scale % _R * _MONT % _R]))
    out = gpu.empty((count, 4), np.uint64)
    gpu.launch(
        gpu.kernel("ff/fr_kernels.cu", "fr_quotient"),
        count,
        (a, b, c, scale_mont, out, np.uint64(count)),
    )
    return out


def gather(gpu: Gpu, values: DeviceArray, indices: DeviceArray) -> DeviceArray:
    """values[indices] for device scalars ((n, 4) uint64) and device uint32 indices."""
    count = indices.shape[0]
    out = gpu.empty((count, 4), np.uint64)
    gpu.launch(
        gpu.kernel("ff/fr_kernels.cu", "fr_gather"), count, (values, indices, out, np.uint64(count))
    )
    return out
