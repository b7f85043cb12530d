"""Elementwise and sparse Fr work on the GPU: R1CS evaluation (CSR SpMV), H's quotient step and
row gathers."""

from __future__ import annotations

import weakref

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import SparseMatrix

from .driver import NULL, DeviceArray, Gpu

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


def spmv(
    gpu: Gpu,
    matrix: SparseMatrix,
    z_mont: DeviceArray,
    same_as: tuple[DeviceArray, DeviceArray] | None = None,
) -> DeviceArray:
    """M·z (canonical) for device witness ``z_mont`` in Montgomery form. With ``same_as`` =
    (mask, product), the rows the uint8 mask marks are copied from that other product instead
    of summed (:func:`rows_equal`)."""
    indptr, cols, coeffs = matrix_on_device(gpu, matrix)
    rows = matrix.num_rows
    out = gpu.empty((rows, 4), np.uint64)
    lanes = int(gpu.defines.get(_SPMV, {}).get("SPMV_LANES", SPMV_LANES))
    same, other = same_as if same_as is not None else (NULL, NULL)
    assert same_as is None or len(same_as[0]) == len(same_as[1]) == rows
    gpu.launch(
        gpu.kernel(_SPMV, "r1cs_spmv"),
        rows * lanes,
        (indptr, cols, coeffs, z_mont, out, np.uint64(rows), same, other),
    )
    return out


def rows_equal(gpu: Gpu, a: SparseMatrix, b: SparseMatrix) -> DeviceArray | None:
    """A uint8 mask on the device marking the rows that ``a`` and ``b`` hold entry for entry
    (an R1CS's x·x constraints put one linear combination in both A and B), or None when there
    is none; found by a kernel once per pair of matrix objects."""
    pairs = gpu.cache("rows_equal").setdefault(a, weakref.WeakKeyDictionary())
    if b not in pairs:
        rows = a.num_rows
        same = None
        if rows and rows == b.num_rows:
            same = gpu.empty((rows,), np.uint8)
            gpu.launch(
                gpu.kernel(_SPMV, "r1cs_rows_equal"),
                rows,
                (*matrix_on_device(gpu, a), *matrix_on_device(gpu, b), same, np.uint64(rows)),
            )
            if not same.get().any():
                same = None
        pairs[b] = same
    return pairs[b]


def r1cs_products(
    gpu: Gpu, a: SparseMatrix, b: SparseMatrix, c: SparseMatrix, z_mont: DeviceArray
) -> tuple[DeviceArray, DeviceArray, DeviceArray]:
    """A·z, B·z, C·z (canonical) for device witness ``z_mont`` in Montgomery form; A's rows
    that are B's are copied from B·z (a third of porep-lite's entries: bench/NOTES.md, round
    38)."""
    b_z = spmv(gpu, b, z_mont)
    same = rows_equal(gpu, a, b)
    a_z = spmv(gpu, a, z_mont, None if same is None else (same, b_z))
    return a_z, b_z, spmv(gpu, c, z_mont)


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
