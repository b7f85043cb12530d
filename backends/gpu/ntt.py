"""Fr NTTs on the GPU, natural order in and out: the host side of ntt/ntt.cu.

A transform is DIT butterflies in passes of up to 2^SHARED_LOG elements through shared memory;
the first pass gathers in bit-reversed order (applying a coset's powers of the shift), the last
scales by 1/n (and the inverse shift's powers) for inverse transforms. Values stay canonical;
twiddles (ω^k·R, k < n/2) and scale factors carry one Montgomery R, which each Montgomery
product removes (see the kernel's header). Twiddles and the small tables of geometric
sequences are built once per (ω, size) and kept on the device.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import ints_to_limbs

from .driver import NULL, DeviceArray, Gpu

MODULE = "ntt/ntt.cu"
SHARED_LOG = 10
"""log2 of the elements one block transforms in shared memory (32 KiB, under the 48 KiB default)."""
RUN_LOG = 2
"""log2 of the consecutive elements a later pass reads per run (coalescing). Four (128 bytes, a
cache line) leave eight stages to a later pass, so 2^26 takes three passes instead of four:
18.5 against 22.8 ms on the H200, 2^24 4.37 against 4.47 (bench/NOTES.md)."""
_R = FR_MODULUS
_MONT = (1 << 256) % _R
NO_SCALE, CONSTANT, GEOMETRIC = 0, 1, 2


def _geometric_halves(
    gpu: Gpu, base: int, log_count: int, hi_factor: int, hi_mont: int, lo_mont: int
) -> tuple[DeviceArray, DeviceArray, int]:
    """Device tables with hi[h]·lo[l] (Montgomery product) = hi_factor·base^(h·2^b + l)·R^e.

    ``hi`` holds ``hi_factor·base^(h·2^b)·R^hi_mont``, ``lo`` holds ``base^l·R^lo_mont``, so
    the product carries ``R^(hi_mont + lo_mont − 1)``. Returns (hi, lo, b).
    """
    lo_bits = (log_count + 1) // 2
    hi_count = 1 << (log_count - lo_bits)
    lo_scale, hi_scale = pow(_MONT, lo_mont, _R), hi_factor * pow(_MONT, hi_mont, _R) % _R
    lo, value = [], lo_scale
    for _ in range(1 << lo_bits):
        lo.append(value)
        value = value * base % _R
    step = pow(base, 1 << lo_bits, _R)
    hi, value = [], hi_scale
    for _ in range(hi_count):
        hi.append(value)
        value = value * step % _R
    return gpu.to_device(ints_to_limbs(hi)), gpu.to_device(ints_to_limbs(lo)), lo_bits


@functools.lru_cache(maxsize=8)
def twiddles(gpu: Gpu, omega: int, log_n: int) -> DeviceArray:
    """ω^k·R for k < n/2, on the device (kept for the last few (device, ω, size))."""
    count = 1 << (log_n - 1)
    hi, lo, lo_bits = _geometric_halves(gpu, omega, log_n - 1, 1, 1, 1)
    table = gpu.empty((count, 4), np.uint64)
    gpu.launch(
        gpu.kernel(MODULE, "ntt_fill_table"),
        count,
        (hi, lo, np.uint32(lo_bits), table, np.uint64(count)),
    )
    return table


@functools.lru_cache(maxsize=8)
def coset_entry(gpu: Gpu, shift: int, log_n: int) -> tuple[DeviceArray, DeviceArray, int]:
    """Tables for the gather: factor(i) = shift^i·R, so x·factor·R^-1 = x·shift^i."""
    return _geometric_halves(gpu, shift, log_n, 1, 1, 1)


@functools.lru_cache(maxsize=8)
def coset_exit(gpu: Gpu, shift_inv: int, log_n: int) -> tuple[DeviceArray, DeviceArray, int]:
    """Tables for the exit: factor(i) = shift^-i/n·R."""
    return _geometric_halves(gpu, shift_inv, log_n, pow(1 << log_n, -1, _R), 1, 1)


def passes(log_n: int) -> list[tuple[int, int, int]]:
    """(first stage, stages, run bits) of each butterfly pass.

    A later pass takes up to SHARED_LOG − RUN_LOG stages; when fewer are left, its runs grow so
    that a block still holds 2^SHARED_LOG elements (a last pass of two stages in runs of four
    would leave a block of 16 elements and most of its threads idle).
    """
    plan = []
    stage = 0
    while stage < log_n:
        if stage == 0:
            count, run = min(SHARED_LOG, log_n), 0
        else:
            count = min(SHARED_LOG - RUN_LOG, log_n - stage)
            run = min(stage, SHARED_LOG - count)
        plan.append((stage, count, run))
        stage += count
    return plan


def transform(
    gpu: Gpu,
    values: DeviceArray,
    log_n: int,
    omega: int,
    entry: tuple[int, tuple | None],
    exit_: tuple[int, Any],
) -> DeviceArray:
    """The NTT of device ``values`` ((n, 4) uint64 canonical) into a new device array.

    ``entry`` is (mode, tables or None) applied by the first pass as it gathers, ``exit_`` the
    same for the last pass as it stores; see ScaleMode in the kernel. ``log_n`` ≥ 1.
    """
    n = 1 << log_n
    out = gpu.empty((n, 4), np.uint64)
    table = twiddles(gpu, omega, log_n)
    stages = gpu.kernel(MODULE, "ntt_stages")
    plan = passes(log_n)
    for number, (first, count, run) in enumerate(plan):
        size = 1 << (count + run)
        entry_mode, entry_tables = entry if number == 0 else (NO_SCALE, None)
        exit_mode, exit_tables = exit_ if number == len(plan) - 1 else (NO_SCALE, None)
        block = max(32, min(size // 4, 256))  # a thread per four elements (radix 4)
        gpu.launch(
            stages,
            n // size * block,
            (
                values if number == 0 else NULL,
                out,
                table,
                np.uint32(log_n),
                np.uint32(first),
                np.uint32(count),
                np.uint32(run),
                *_scale_args(entry_mode, entry_tables, out),
                *_scale_args(exit_mode, exit_tables, out),
            ),
            block=block,
            shared_bytes=32 * size,
        )
    return out


def _scale_args(mode: int, tables: tuple | None, placeholder: DeviceArray) -> tuple:
    """Kernel arguments (mode, hi, lo, lo_bits) of a scaling step; unused tables point anywhere."""
    hi, lo, lo_bits = tables if tables is not None else (placeholder, placeholder, 0)
    return (np.int32(mode), hi, lo, np.uint32(lo_bits))


def forward(
    gpu: Gpu, values: DeviceArray, log_n: int, omega: int, shift: int | None = None
) -> DeviceArray:
    """Evaluations at shift·ω^i (shift None: plain NTT), natural order."""
    if shift is None:
        entry: tuple[int, tuple | None] = (NO_SCALE, None)
    else:
        entry = (GEOMETRIC, coset_entry(gpu, shift % _R, log_n))
    return transform(gpu, values, log_n, omega, entry, (NO_SCALE, None))


def inverse(
    gpu: Gpu, values: DeviceArray, log_n: int, omega: int, shift: int | None = None
) -> DeviceArray:
    """Coefficients from evaluations at shift·ω^i (shift None: plain inverse NTT)."""
    omega_inv = pow(omega, -1, _R)
    if shift is None:
        n_inv = gpu.to_device(ints_to_limbs([pow(1 << log_n, -1, _R) * _MONT % _R]))
        exit_ = (CONSTANT, (n_inv, n_inv, 0))
    else:
        exit_ = (GEOMETRIC, coset_exit(gpu, pow(shift, -1, _R), log_n))
    return transform(gpu, values, log_n, omega_inv, (NO_SCALE, None), exit_)
