"""Elementwise and sparse Fr work on the GPU: R1CS evaluation (CSR SpMV), H's quotient step and
row gathers."""

from __future__ import annotations

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

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
    out: DeviceArray | None = None,
    first: tuple[DeviceArray, int] | None = None,
) -> DeviceArray:
    """M·z (canonical) for device witness ``z_mont`` in Montgomery form, into ``out`` (else a
    new array). With ``first`` = (first rows, id of row 0) from :func:`distinct_rows`, the rows
    whose first is another are left for :func:`r1cs_products`' copy."""
    indptr, cols, coeffs = matrix_on_device(gpu, matrix)
    rows = matrix.num_rows
    out = gpu.empty((rows, 4), np.uint64) if out is None else out
    assert len(out) == rows
    lanes = int(gpu.defines.get(_SPMV, {}).get("SPMV_LANES", SPMV_LANES))
    firsts, first_id = first if first is not None else (NULL, 0)
    gpu.launch(
        gpu.kernel(_SPMV, "r1cs_spmv"),
        rows * lanes,
        (indptr, cols, coeffs, z_mont, out, np.uint64(rows), firsts, np.uint64(first_id)),
    )
    return out


def distinct_rows(gpu: Gpu, matrices: R1CSMatrices) -> DeviceArray | None:
    """Each row's first (uint32 on the device, over the ids of A's rows, then B's, then C's):
    the least id whose row holds the same entries, found by r1cs/spmv.cu's kernels once per
    matrices object (an R1CS repeats its linear combinations: 65% of porep-lite's entries).
    None when no row repeats or the three matrices have 2^32 rows or more; also, not kept, when
    the search's table (12 bytes a slot, 2–4 slots a row) would take over half the free memory
    now."""
    cache = gpu.cache("distinct_rows")
    if matrices in cache:
        return cache[matrices]
    rows = matrices.num_constraints
    total = 3 * rows
    slots = 1 << (2 * total).bit_length()  # a load under one half
    if 2 * (slots * 12 + total * 12) > gpu.free_bytes():
        return None  # asked again by the next proof, when memory may allow it
    first = None
    if 0 < total < 1 << 32:
        keys = gpu.clear(gpu.empty((slots,), np.uint64))
        least = gpu.clear(gpu.empty((slots,), np.uint32))
        hashes = gpu.empty((total,), np.uint64)
        mask = np.uint64(slots - 1)
        parts = [matrix_on_device(gpu, m) for m in (matrices.a, matrices.b, matrices.c)]
        insert = gpu.kernel(_SPMV, "r1cs_rows_insert")
        for k, part in enumerate(parts):
            args = (*part, np.uint64(rows), np.uint32(k * rows), hashes, keys, least, mask)
            gpu.launch(insert, rows, args)
        first = gpu.empty((total,), np.uint32)
        repeats = gpu.clear(gpu.empty((1,), np.uint32))
        args = (*parts[0], *parts[1], *parts[2], np.uint64(rows), hashes, keys, least, mask)
        gpu.launch(gpu.kernel(_SPMV, "r1cs_rows_first"), total, (*args, first, repeats))
        if not repeats.get()[0]:
            first = None
    cache[matrices] = first
    return first


def r1cs_products(
    gpu: Gpu, matrices: R1CSMatrices, z_mont: DeviceArray
) -> tuple[DeviceArray, DeviceArray, DeviceArray]:
    """A·z, B·z, C·z (canonical) for device witness ``z_mont`` in Montgomery form, each row that
    repeats another (:func:`distinct_rows`) copied from its first's product instead of summed
    again: views of one array then."""
    products = (matrices.a, matrices.b, matrices.c)
    first = distinct_rows(gpu, matrices)
    if first is None:
        a_z, b_z, c_z = (spmv(gpu, m, z_mont) for m in products)
        return a_z, b_z, c_z
    rows = matrices.num_constraints
    out = gpu.empty((3 * rows, 4), np.uint64)
    views = [out[k * rows : (k + 1) * rows] for k in range(3)]
    for k, m in enumerate(products):
        spmv(gpu, m, z_mont, views[k], (first, k * rows))
    gpu.launch(gpu.kernel(_SPMV, "r1cs_copy_repeats"), 3 * rows, (out, first, np.uint64(3 * rows)))
    return views[0], views[1], views[2]


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
