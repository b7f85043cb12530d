"""The indexed-coefficient layout under test for the R1CS products (bench/gpu_witness_variants.py
--indexed-coeffs): the host's coefficient index, and on a GPU ``r1cs_spmv_indexed`` against the
CPU reference."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

from cuzk_backend_cupy.plugin import plugin as cupy_plugin
from cuzk_backend_pycuda.plugin import plugin as pycuda_plugin
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import SparseMatrix

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "gpu_witness_variants.py"
spec = importlib.util.spec_from_file_location("gpu_witness_variants", SCRIPT)
assert spec is not None and spec.loader is not None
variants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(variants)

PLUGINS = {"cupy": cupy_plugin, "pycuda": pycuda_plugin}


def _coefficients(rng: random.Random, distinct: int, count: int, zero: bool = True) -> np.ndarray:
    values = [1, FR_MODULUS - 1] + [rng.randrange(1, FR_MODULUS) for _ in range(distinct - 3)]
    values += [0] if zero else [rng.randrange(1, FR_MODULUS)]
    return ints_to_limbs([rng.choice(values) for _ in range(count)])


def test_the_index_names_each_entrys_coefficient_in_a_table_of_the_distinct_ones(monkeypatch):
    """Across chunks (values first seen in a later chunk included), ``table[index]`` is the
    coefficients back, the table's rows distinct; no entries, an empty index and table."""
    monkeypatch.setattr(variants, "_INDEX_CHUNK", 64)
    rng = random.Random(32)
    coeffs = _coefficients(rng, 300, 1000)
    coeffs[-5:] = ints_to_limbs([FR_MODULUS - 2] * 5)  # a value only the last chunk holds
    index, table = variants.coefficient_index(coeffs)
    assert index.dtype == np.uint16 and np.array_equal(table[index], coeffs)
    assert len(set(limbs_to_ints(table))) == len(table) == len(set(limbs_to_ints(coeffs)))
    index, table = variants.coefficient_index(np.zeros((0, 4), np.uint64))
    assert len(index) == 0 and len(table) == 0


def test_the_index_refuses_past_16_bits_and_a_hash_collision(monkeypatch):
    """More distinct values than a uint16 names, and two values that hash alike, are errors."""
    monkeypatch.setattr(variants, "_INDEX_CHUNK", 1 << 12)
    many = np.zeros(((1 << 16) + 1, 4), np.uint64)
    many[:, 0] = np.arange(len(many))
    with pytest.raises(ValueError, match="65537 distinct coefficients"):
        variants.coefficient_index(many)
    monkeypatch.setattr(variants, "_HASH", np.zeros(4, np.uint64))  # every value hashes to 0
    with pytest.raises(ValueError, match="share a 64-bit hash"):
        variants.coefficient_index(ints_to_limbs([1, 2]))


@pytest.mark.parametrize("name", PLUGINS)
@pytest.mark.parametrize("lanes", [1, 4])
def test_indexed_products_are_the_reference(monkeypatch, name, lanes):
    """``r1cs_spmv_indexed`` gives M·z, as ``r1cs_spmv`` and Python's integers do (empty,
    short and dense rows; one and r−1 among the coefficients)."""
    plugin = PLUGINS[name]
    info = plugin.cuzk_backend_info()
    if not info.available:
        pytest.skip(f"{name} cannot run here: {info.reason}")
    rng = random.Random(lanes)
    rows, num_vars = 301, 50
    counts = [rng.choice([0, 1, 2, 5, 40]) for _ in range(rows)]
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    cols = np.array([rng.randrange(num_vars) for _ in range(indptr[-1])], np.int64)
    coeffs = _coefficients(rng, 20, int(indptr[-1]), zero=False)
    matrix = SparseMatrix(indptr, cols, coeffs, num_vars)
    values = [1] + [rng.randrange(FR_MODULUS) for _ in range(num_vars - 1)]
    c = limbs_to_ints(coeffs)
    want = [
        sum(c[e] * values[cols[e]] for e in range(indptr[i], indptr[i + 1])) % FR_MODULUS
        for i in range(rows)
    ]
    z = ints_to_limbs(values)
    gpu = plugin.gpu
    monkeypatch.setitem(gpu.defines, "r1cs/spmv.cu", {"SPMV_LANES": lanes})
    with gpu.scope():
        z_mont = variants.field.to_montgomery(gpu, gpu.to_device(z))
        tables = variants._on_device(gpu, variants.coefficient_index(matrix.coeffs))
        got = variants._spmv_indexed(gpu, matrix, *tables, z_mont).get()
        plain = variants.field.spmv(gpu, matrix, z_mont).get()
    assert np.array_equal(got, plain) and limbs_to_ints(got) == want
