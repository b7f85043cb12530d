"""Typed wrappers over the C kernels: canonical-layout arrays in, canonical-layout arrays out.

The extension ``cuzk_fastcpu._native`` is built at install time; when it cannot be imported,
:data:`UNAVAILABLE_REASON` says why and the backend reports itself unavailable instead of failing.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.gadgets.poseidon.batch import PoseidonTable
from cuzk_core.layout import SCALAR_LIMBS, G1Affines, G2Affines
from cuzk_core.r1cs import SparseMatrix
from cuzk_core.witness.evaluate import check_witness_arguments
from cuzk_core.witness.program import WitnessProgram

THREADS_ENV = "CUZK_FASTCPU_THREADS"
"""Worker threads for MSMs (default: the CPUs this process may run on)."""
FQ_KERNEL_ENV = "CUZK_FASTCPU_FQ_KERNEL"
"""Force an Fq multiplication kernel (``portable``, ``x86-64-adx``); default: the fastest here."""
SCALAR_BITS = FR_MODULUS.bit_length()
MAX_AUTO_WINDOW = 16
BATCH_ADD_COST = 6
"""Field multiplications per batch-affine bucket addition, the inversion aside."""
INVERSE_COST = 570
"""Field multiplications per inversion (Fermat), shared by one batch of additions."""
REDUCE_COST = 27
"""Field multiplications per bucket in the running-sum reduction (a mixed and a full addition)."""
BATCH_RANGE = (16, 1024)
RUNS_PER_THREAD = 8
"""Independent runs of witness ops per thread (taken in turn, so a starved thread takes fewer)."""
"""Fewest and most bucket additions per inversion."""

_R = FR_MODULUS
_MONT_SHIFT = 64 * SCALAR_LIMBS
_CUTS: weakref.WeakKeyDictionary[WitnessProgram, dict[int, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def fq_kernels() -> list[str]:
    """The Fq multiplication kernels this CPU can run, fastest last."""
    return _native.fq_kernels()


def fq_kernel() -> str:
    """The Fq multiplication kernel in use."""
    return _native.fq_kernel()


def use_fq_kernel(name: str) -> None:
    """Switch Fq multiplication kernels (never while an MSM runs); ValueError if not available."""
    _native.use_fq_kernel(name)


def _start() -> str:
    """Pick the Fq kernel (``CUZK_FASTCPU_FQ_KERNEL`` or the fastest): ``""``, or why not."""
    wanted = os.environ.get(FQ_KERNEL_ENV, "").strip() or fq_kernels()[-1]
    try:
        use_fq_kernel(wanted)
    except ValueError as exc:
        return f"{FQ_KERNEL_ENV}: {exc} (available: {', '.join(fq_kernels())})"
    return ""


try:
    from cuzk_fastcpu import _native
except ImportError as exc:  # the C extension was not built or does not load here
    _native = None
    UNAVAILABLE_REASON = f"the C extension cuzk_fastcpu._native does not load: {exc}"
else:
    UNAVAILABLE_REASON = _start()


def thread_count() -> int:
    """MSM threads: ``CUZK_FASTCPU_THREADS`` if set, else the CPUs this process may use."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{THREADS_ENV} must be a positive integer, got {text!r}")
        return int(text)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def bucket_count(window_bits: int, signed: bool) -> int:
    """Buckets per window: digits run to 2^(c−1) when signed, to 2^c − 1 when not."""
    return (1 << (window_bits - 1)) if signed else (1 << window_bits) - 1


def batch_size(window_bits: int, signed: bool) -> int:
    """Additions per inversion: a quarter of the buckets, so few points wait for a busy bucket."""
    low, high = BATCH_RANGE
    return min(high, max(low, bucket_count(window_bits, signed) // 4))


def auto_window_bits(n: int, signed: bool) -> int:
    """The window minimizing batch additions (with their inversions) plus bucket reduction."""

    def cost(c: int) -> float:
        windows = -(-(SCALAR_BITS + (1 if signed else 0)) // c)
        per_add = BATCH_ADD_COST + INVERSE_COST / batch_size(c, signed)
        return windows * (n * per_add + bucket_count(c, signed) * REDUCE_COST)

    return min(range(2, MAX_AUTO_WINDOW + 1), key=cost)


def _fr_mont(value: int) -> bytes:
    """``value`` in Montgomery form (times 2^256 mod r), as the C kernels take constants."""
    return (((value % _R) << _MONT_SHIFT) % _R).to_bytes(8 * SCALAR_LIMBS, "little")


def as_scalars(values: np.ndarray, rows: int | None = None) -> np.ndarray:
    """``values`` as a C-contiguous ``(n, 4)`` uint64 array (``n == rows`` when given)."""
    array = np.ascontiguousarray(values, dtype=np.uint64)
    if array.ndim != 2 or array.shape[1] != SCALAR_LIMBS:
        raise ValueError(f"scalars must be shaped (n, {SCALAR_LIMBS}), got {array.shape}")
    if rows is not None and array.shape[0] != rows:
        raise ValueError(f"expected {rows} scalars, got {array.shape[0]}")
    return array


def msm(
    bases: G1Affines | G2Affines, scalars: np.ndarray, window_bits: int | None, signed: bool
) -> G1Affines | G2Affines:
    """Σ scalarsᵢ·basesᵢ in the group of ``bases``, as a one-point batch of the same type."""
    n = len(bases)
    scalars = as_scalars(scalars, n)
    coords = np.ascontiguousarray(bases.coords, dtype=np.uint64)
    infinity = np.ascontiguousarray(bases.infinity, dtype=np.bool_)
    kernel = _native.msm_g1 if isinstance(bases, G1Affines) else _native.msm_g2
    c = window_bits or auto_window_bits(n, signed)
    out = np.zeros((1, *coords.shape[1:]), dtype=np.uint64)
    batch = batch_size(c, signed)
    at_infinity = kernel(coords, infinity, scalars, c, int(signed), batch, thread_count(), out)
    return type(bases)(out, np.array([at_infinity], dtype=bool))


def fixed_base(batch: type[G1Affines] | type[G2Affines], base, scalars: np.ndarray):
    """``scalarsᵢ·base`` for every scalar, as a ``batch`` (G1Affines or G2Affines); ``base`` is
    an affine tuple of the group, or None (every result at infinity)."""
    scalars = as_scalars(scalars)
    n = len(scalars)
    if base is None or n == 0:
        return batch.empty(n)
    base_coords = np.ascontiguousarray(batch.from_points([base]).coords)
    out = np.zeros((n, *batch.POINT_SHAPE), dtype=np.uint64)
    infinity = np.zeros(n, dtype=np.bool_)
    kernel = _native.fixed_base_g1 if batch is G1Affines else _native.fixed_base_g2
    kernel(base_coords, scalars, thread_count(), out, infinity)
    return batch(out, infinity)


def decode_snarkjs(raw: np.ndarray, group: str) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """A zkey's points (``(n, 96|192)`` uint8, Montgomery form) checked and made canonical on
    every thread: (batch, status), status 0 valid, 1 a coordinate not below q, 2 off the curve."""
    batch = G1Affines if group == "g1" else G2Affines
    n = len(raw)
    out = np.empty((n, *batch.POINT_SHAPE), dtype=np.uint64)
    infinity = np.empty(n, dtype=np.bool_)
    status = np.empty(n, dtype=np.uint8)
    kernel = _native.snarkjs_g1 if group == "g1" else _native.snarkjs_g2
    kernel(np.ascontiguousarray(raw, dtype=np.uint8), out, infinity, status, thread_count())
    return batch(out, infinity), status


def ntt(values: np.ndarray, omega: int) -> np.ndarray:
    """Evaluate at the powers of ``omega`` (natural order in and out), in a new array."""
    out = as_scalars(values).copy()
    _native.fr_ntt(out, _fr_mont(omega))
    return out


def scale_by_powers(values: np.ndarray, base: int, first: int = 1) -> np.ndarray:
    """Multiply element i by ``first · base^i`` in place; returns ``values``."""
    _native.fr_scale_powers(values, _fr_mont(base), _fr_mont(first))
    return values


def quotient(a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int) -> np.ndarray:
    """``(a·b − c)·scale`` elementwise."""
    a = as_scalars(a)
    b, c = as_scalars(b, len(a)), as_scalars(c, len(a))
    out = np.empty_like(a)
    _native.fr_quotient(a, b, c, _fr_mont(scale), out)
    return out


def first_unsatisfied(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int:
    """The first row with ``a·b ≠ c``, or ``len(a)``."""
    a = as_scalars(a)
    return int(_native.fr_first_unsatisfied(a, as_scalars(b, len(a)), as_scalars(c, len(a))))


def poseidon(states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """Every ``(t, 4)`` state permuted, in a new array, blocks of states spread over threads."""
    out = np.array(states, dtype=np.uint64, order="C")
    if out.ndim != 3 or out.shape[1:] != (table.t, SCALAR_LIMBS):
        raise ValueError(f"states of shape {out.shape}, expected (n, {table.t}, {SCALAR_LIMBS})")
    words = np.ascontiguousarray(table.words, dtype=np.uint64)
    half, partial = table.half_full_rounds, table.partial_rounds
    _native.fr_poseidon(out, words, table.t, half, partial, thread_count())
    return out


def _csr(matrix: SparseMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.ascontiguousarray(matrix.indptr, dtype=np.int64),
        np.ascontiguousarray(matrix.cols, dtype=np.int64),
        as_scalars(matrix.coeffs),
    )


def spmv(matrix: SparseMatrix, z: np.ndarray) -> np.ndarray:
    """The matrix-vector product ``matrix · z`` mod r, rows spread over threads."""
    z = as_scalars(z)
    if len(z) != matrix.num_cols:
        raise ValueError(f"vector has {len(z)} entries, the matrix {matrix.num_cols} columns")
    out = np.empty((matrix.num_rows, SCALAR_LIMBS), dtype=np.uint64)
    _native.fr_spmv(*_csr(matrix), z, out, thread_count())
    return out


def witness(program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray) -> np.ndarray:
    """A compiled circuit's witness z, its levels spread over threads."""
    return _run_witness(program, inputs, hints, 0)[0]


def witness_rows(
    program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray, rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(z, zm, a, b)``: the witness, z in Montgomery form, and ``(rows, 4)`` arrays holding
    A·z and B·z at every row the program solves (zeros elsewhere); ``rows`` ≥ its constraints."""
    if rows < program.matrices.num_constraints:
        raise ValueError(f"{rows} rows for a program of {program.matrices.num_constraints}")
    return _run_witness(program, inputs, hints, rows)


def _run_witness(
    program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray, rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    check_witness_arguments(program, inputs, hints)
    z = np.zeros((program.num_inputs + program.num_aux, SCALAR_LIMBS), dtype=np.uint64)
    z[: program.num_inputs] = inputs
    zm = np.empty_like(z)
    a, b = (np.zeros((rows, SCALAR_LIMBS), dtype=np.uint64) for _ in range(2))
    m = program.matrices
    threads = thread_count()
    _native.fr_witness(
        z,
        zm,
        a,
        b,
        program.num_inputs,
        as_scalars(hints),
        np.ascontiguousarray(program.kind, dtype=np.uint8),
        np.ascontiguousarray(program.arg, dtype=np.int64),
        np.ascontiguousarray(program.extra, dtype=np.int64),
        as_scalars(program.inverses),
        *_csr(m.a),
        *_csr(m.b),
        *_csr(m.c),
        *_csr(program.lin),
        np.ascontiguousarray(program.level_ptr, dtype=np.int64),
        np.ascontiguousarray(program.level_ops, dtype=np.int64),
        threads,
        _cuts(program, threads),
    )
    return z, zm, a, b


def _cuts(program: WitnessProgram, threads: int) -> np.ndarray:
    """Where the program splits into runs of ops none of which reads another's, ``RUNS_PER_THREAD``
    per thread (the C code finds them on first use, into this array): kept per program and
    thread count."""
    kept = _CUTS.setdefault(program, {})
    if threads not in kept:
        kept[threads] = np.full(threads * RUNS_PER_THREAD + 1, -1, dtype=np.int64)
    return kept[threads]


def spmv_rows(matrix: SparseMatrix, zm: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[r] = matrix_r · z`` for every row ``r`` in ``rows``, ``zm`` being z in Montgomery
    form (as :func:`witness_rows` gives it); other rows of ``out`` are left as they are."""
    zm = as_scalars(zm)
    if (
        len(zm) != matrix.num_cols
        or out.shape != (matrix.num_rows, SCALAR_LIMBS)
        or (out.dtype != np.uint64)
    ):
        raise ValueError("vector or output does not fit the matrix")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    _native.fr_spmv_rows(*_csr(matrix), zm, rows, out, thread_count())


def fingerprint(array: np.ndarray) -> int:
    """A 64-bit fingerprint of a C-contiguous array's bytes: changing any word changes it."""
    return _native.fingerprint(np.ascontiguousarray(array))
