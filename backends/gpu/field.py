"""Elementwise and sparse Fr work on the GPU: R1CS evaluation (CSR SpMV), H's quotient step and
row gathers."""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import attrs
import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

from . import scan
from .driver import MAPPED_FILES, DeviceArray, Gpu
from .mapped import mapping_of

_R = FR_MODULUS
_MONT = (1 << 256) % _R
_SPMV = "r1cs/spmv.cu"
SPMV_LANES = 4
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


def upload_bytes(gpu: Gpu, matrices: Iterable[SparseMatrix]) -> int:
    """Device bytes :func:`matrix_on_device` would add for ``matrices``: nothing for those on
    the device already, and a compiled file's arrays as one upload of the whole file, once (so
    a circuit whose file the witness program brought takes no more)."""
    uploaded, mapped = gpu.cache("matrices"), gpu.cache(MAPPED_FILES)
    loose, files = 0, {}
    for matrix in matrices:
        if uploaded.get(matrix) is not None:
            continue
        for array in (matrix.indptr, matrix.cols, matrix.coeffs):
            found = mapping_of(array) if array.nbytes and array.flags.c_contiguous else None
            if found is None:
                loose += array.nbytes
            elif mapped.get(found[0]) is None:
                files[id(found[0])] = len(found[0])
    return loose + sum(files.values())


def products_table_bytes(gpu: Gpu, matrices: R1CSMatrices) -> int:
    """Device bytes :func:`r1cs_products`' tables still need: A's, B's and C's
    :func:`upload_bytes` and, until it is made, the row plan (an id's first and order, 4 bytes
    each, for 3 ids a row)."""
    plan = 0 if matrices in gpu.cache("row_plans") else 24 * matrices.num_constraints
    return upload_bytes(gpu, (matrices.a, matrices.b, matrices.c)) + plan


def _three_on_device(
    gpu: Gpu, matrices: R1CSMatrices
) -> tuple[tuple[DeviceArray, DeviceArray, DeviceArray], ...]:
    """A's, B's and C's :func:`matrix_on_device` (r1cs/spmv.cu's kernels over all three take
    their nine arrays in this order)."""
    return tuple(matrix_on_device(gpu, m) for m in (matrices.a, matrices.b, matrices.c))


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
    gpu.launch(
        gpu.kernel(_SPMV, "r1cs_spmv"),
        rows * _lanes(gpu),
        (indptr, cols, coeffs, z_mont, out, np.uint64(rows)),
    )
    return out


def _lanes(gpu: Gpu) -> int:
    return int(gpu.defines.get(_SPMV, {}).get("SPMV_LANES", SPMV_LANES))


@attrs.frozen
class RowPlan:
    """How :func:`r1cs_products` sums the rows of A, B and C (ids: A's rows, then B's, then
    C's): ``order``, the ids summed (uint32 on the device), by length so that a warp's rows are
    alike; ``first``, each id's first (the least id whose row holds the same entries) when some
    row repeats another and is copied from it, else None."""

    order: DeviceArray
    first: DeviceArray | None


def row_plan(gpu: Gpu, matrices: R1CSMatrices) -> RowPlan | None:
    """The products' :class:`RowPlan`, made once per matrices object: the repeats found by
    r1cs/spmv.cu's kernels (an R1CS repeats its linear combinations: 65% of porep-lite's
    entries), then their order. None when the three matrices have 2^32 rows or more; also, not
    kept, when the search's table (12 bytes a slot, 2–4 slots an id; the order's arrays take
    less) would take over half the free memory now."""
    cache = gpu.cache("row_plans")
    if matrices in cache:
        return cache[matrices]
    rows = matrices.num_constraints
    total = 3 * rows
    slots = 1 << (2 * total).bit_length()  # a load under one half
    if 2 * (slots * 12 + total * 12) > gpu.free_bytes():
        return None  # asked again by the next proof, when memory may allow it
    plan = None
    if 0 < total < 1 << 32:
        first = _first_rows(gpu, matrices, slots)
        order = order_by_length(gpu, matrices, first)
        plan = RowPlan(order, first if len(order) < total else None)
    cache[matrices] = plan
    return plan


def order_by_length(gpu: Gpu, matrices: R1CSMatrices, first: DeviceArray) -> DeviceArray:
    """The ids that are their own ``first`` (uint32 on the device), their rows shortest first
    (rows of 65535 entries or more as one length), ids ascending within a length: compacted,
    then a stable radix sort of one bit a pass over the lengths' bits."""
    rows = matrices.num_constraints
    total = len(first)
    flags = gpu.empty((total,), np.uint32)
    gpu.launch(gpu.kernel(_SPMV, "r1cs_summed_flags"), total, (first, np.uint64(total), flags))
    ids = scan.flatnonzero(gpu, flags)
    del flags
    count = np.uint64(len(ids))
    indptrs = [indptr for indptr, _, _ in _three_on_device(gpu, matrices)]
    keys = gpu.empty((len(ids),), np.uint32)
    lengths = gpu.kernel(_SPMV, "r1cs_row_lengths")
    gpu.launch(lengths, len(ids), (ids, count, *indptrs, np.uint64(rows), keys))
    longest = gpu.empty((1,), np.uint32)
    scan.maximum_into(gpu, keys, longest)
    zeros, ids_out, keys_out = (gpu.empty((len(ids),), np.uint32) for _ in range(3))
    bit_clear = gpu.kernel(_SPMV, "r1cs_key_bit_clear")
    split = gpu.kernel(_SPMV, "r1cs_split_by_bit")
    for bit in map(np.uint32, range(int(longest.get()[0]).bit_length())):
        gpu.launch(bit_clear, len(ids), (keys, count, bit, zeros))
        scan.inclusive_sum(gpu, zeros, zeros)
        gpu.launch(split, len(ids), (ids, keys, zeros, count, bit, ids_out, keys_out))
        ids, ids_out, keys, keys_out = ids_out, ids, keys_out, keys
    return ids


def _first_rows(gpu: Gpu, matrices: R1CSMatrices, slots: int) -> DeviceArray:
    """Each id's first (uint32 on the device), by a table of ``slots`` row hashes."""
    rows = matrices.num_constraints
    total = 3 * rows
    keys = gpu.clear(gpu.empty((slots,), np.uint64))
    least = gpu.clear(gpu.empty((slots,), np.uint32))
    hashes = gpu.empty((total,), np.uint64)
    mask = np.uint64(slots - 1)
    parts = _three_on_device(gpu, matrices)
    insert = gpu.kernel(_SPMV, "r1cs_rows_insert")
    for k, part in enumerate(parts):
        gpu.launch(
            insert, rows, (*part, np.uint64(rows), np.uint32(k * rows), hashes, keys, least, mask)
        )
    first = gpu.empty((total,), np.uint32)
    args = (*itertools.chain.from_iterable(parts), np.uint64(rows), hashes, keys, least, mask)
    gpu.launch(gpu.kernel(_SPMV, "r1cs_rows_first"), total, (*args, first))
    return first


def r1cs_products(
    gpu: Gpu, matrices: R1CSMatrices, z_mont: DeviceArray
) -> tuple[DeviceArray, DeviceArray, DeviceArray]:
    """A·z, B·z, C·z (canonical) for device witness ``z_mont`` in Montgomery form: by the
    :func:`row_plan`, each distinct row summed once (views of one array then), each repeat
    copied from its first's product."""
    plan = row_plan(gpu, matrices)
    if plan is None:
        a_z, b_z, c_z = (spmv(gpu, m, z_mont) for m in (matrices.a, matrices.b, matrices.c))
        return a_z, b_z, c_z
    rows = matrices.num_constraints
    out = gpu.empty((3 * rows, 4), np.uint64)
    count = len(plan.order)
    parts = itertools.chain.from_iterable(_three_on_device(gpu, matrices))
    args = (*parts, z_mont, out, plan.order, np.uint64(count))
    gpu.launch(gpu.kernel(_SPMV, "r1cs_spmv_rows"), count * _lanes(gpu), (*args, np.uint64(rows)))
    if plan.first is not None:
        copy = gpu.kernel(_SPMV, "r1cs_copy_repeats")
        gpu.launch(copy, 3 * rows, (out, plan.first, np.uint64(3 * rows)))
    return out[:rows], out[rows : 2 * rows], out[2 * rows :]


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
