"""Fixed-base scalar multiplication on the GPU (key generation): the host side of
ec/fixed_base.cu.

A key's queries are millions of multiples of one generator. The host builds the table
``table[w·H + j] = (j + 1)·2^(c·w)·G`` (``H = 2^(c−1)``) in Python once per call and uploads it
in Montgomery form; a thread per scalar adds one signed digit's entry per window and inverts
once (binary GCD, ff/inverse.cuh) to write canonical affine words. The window is c = 8: the
table is 32·128 = 4096 points (0.4 MiB in G1, 0.8 MiB in G2, well inside L2), built in ~0.05 s
(G1) or ~0.12 s (G2) of Python, for 32 mixed additions (~350 field products) a scalar. The
per-thread inversion costs ~85 products' time whatever c is, so wider windows save little on
the device and cost table-building time (c = 12: 45 056 points, ~0.5 s in G1 and ~1.3 s in G2).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from cuzk_core.curve.g1 import G1_OPS, G1Affine
from cuzk_core.curve.g2 import G2_OPS, G2Affine
from cuzk_core.curve.ops import CurveOps
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.interop.montgomery import FR
from cuzk_core.layout import (
    FQ_LIMBS,
    SCALAR_LIMBS,
    G1Affines,
    G2Affines,
    ints_to_limbs,
    limbs_to_ints,
)
from cuzk_core.timing import Timer

from .driver import Gpu

MODULE = "ec/fixed_base.cu"
WINDOW_BITS = 8
"""c: digits are signed base-2^c, so the table holds 2^(c−1) multiples a window."""

BLOCK = 128
"""Threads a block: ~160 (G1) and ~230 (G2) registers a thread, so 2–3 blocks an SM."""
HEADROOM = 64 << 20
"""Device bytes left free beside the table and a chunk's buffers (allocator rounding)."""
_SCALAR_BYTES = 8 * SCALAR_LIMBS
_MONTGOMERY_SHIFT = 64 * FQ_LIMBS
"""The device's Fq Montgomery form is x·2^384 mod q (12 words of 32 bits)."""


def window_count(c: int) -> int:
    """Windows of c bits covering a scalar below r and the last digit's carry (32 for c = 8)."""
    return -(-(FR_MODULUS.bit_length() + 1) // c)


class Group(NamedTuple):
    """What differs between G1 and G2 on the host side."""

    name: str
    ops: CurveOps
    batch: type[G1Affines] | type[G2Affines]

    @property
    def kernel(self) -> str:
        """The kernel's name in ec/fixed_base.cu."""
        return f"fixed_base_{self.name}"

    @property
    def point_words(self) -> int:
        """32-bit words an affine point takes (24 in G1, 48 in G2)."""
        return 2 * math.prod(self.batch.POINT_SHAPE)

    @property
    def scalar_bytes(self) -> int:
        """Device bytes a scalar needs: its words, its point and its infinity flag."""
        return _SCALAR_BYTES + 4 * self.point_words + 1


G1 = Group("g1", G1_OPS, G1Affines)
G2 = Group("g2", G2_OPS, G2Affines)


def table_points(group: Group, base: G1Affine | G2Affine, c: int = WINDOW_BITS) -> list:
    """The affine multiples ``(j + 1)·2^(c·w)·base``, window by window (w < window_count(c),
    j < 2^(c−1)). For a subgroup point none is infinity (r is a prime above every factor)."""
    ops, half = group.ops, 1 << (c - 1)
    points = []
    window_base = base
    for _ in range(window_count(c)):
        acc = ops.infinity
        for _ in range(half):
            acc = ops.add_affine(acc, window_base)
            points.append(acc)
        window_base = ops.batch_to_affine([ops.double(acc)])[0]  # 2^c·base_w = 2·(half·base_w)
    return ops.batch_to_affine(points)


@functools.lru_cache(maxsize=8)
def table_words(group: Group, base: G1Affine | G2Affine, c: int = WINDOW_BITS) -> np.ndarray:
    """The table as the kernel reads it: ``(entries, point_words)`` uint32, Montgomery form.

    Kept for the last few bases (a key's four G1 batches share one generator), so read-only.
    """
    canonical = group.batch.from_points(table_points(group, base, c)).coords
    values = limbs_to_ints(canonical.reshape(-1, FQ_LIMBS))
    montgomery = ints_to_limbs([(v << _MONTGOMERY_SHIFT) % FQ_MODULUS for v in values], FQ_LIMBS)
    words = montgomery.view(np.uint32).reshape(len(canonical), group.point_words)
    words.flags.writeable = False
    return words


def check_scalars(scalars: np.ndarray) -> np.ndarray:
    """``scalars`` as C-ordered ``(n, 4)`` uint64, refusing values ≥ r: the kernel's last digit
    has no room for their carry, so they would come out wrong rather than reduced."""
    shape = getattr(scalars, "shape", None)
    if not isinstance(scalars, np.ndarray) or scalars.ndim != 2 or shape[1] != SCALAR_LIMBS:
        raise ValueError(f"scalars must be an (n, 4) uint64 array, got shape {shape}")
    words = np.ascontiguousarray(scalars, dtype=np.uint64)
    high = np.nonzero(~FR.below_modulus(words))[0]
    if len(high):
        raise ValueError(f"scalar {high[0]} is not below the scalar field modulus r")
    return words


def describe(group: Group, n: int) -> str:
    """The work, as error messages name it."""
    return f"fixed-base multiplication in {group.name.upper()} ({n} scalars)"


def plan_chunk(group: Group, n: int, free: int) -> int:
    """Scalars a launch takes: all ``n``, or as many as ``free`` device bytes hold (less
    :data:`HEADROOM`); at least one."""
    return max(1, min(n, (free - HEADROOM) // group.scalar_bytes))


def multiply(
    gpu: Gpu,
    group: Group,
    base: G1Affine | G2Affine,
    scalars: np.ndarray,
    timer: Timer,
) -> G1Affines | G2Affines:
    """``scalarᵢ·base`` for every row of ``scalars`` ((n, 4) uint64, each below r).

    Copies are plain (pageable) ones: a batch of 2^20 moves ~130 MiB, milliseconds over PCIe,
    where the profile's pinning strategies are made for a prover's gigabytes.
    """
    words = check_scalars(scalars)
    n = len(words)
    out = group.batch.empty(n)
    if n == 0 or base is None:
        return out
    gpu.warm_up(timer, (MODULE,))  # key generation's own module: its build in its own span
    with gpu.step(timer, "fixed_base_table", group=group.name):
        kernel = gpu.kernel(MODULE, group.kernel)
        host_table = table_words(group, base)
        gpu.ensure_fits(host_table.nbytes + HEADROOM + group.scalar_bytes, describe(group, n))
        table = gpu.to_device(host_table)
    chunk = plan_chunk(group, n, gpu.free_bytes())
    coords = out.coords.reshape(n, group.point_words // 2)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        count = stop - start
        with gpu.step(timer, "fixed_base_kernel", group=group.name, n=count):
            scalars_on_device = gpu.to_device(words[start:stop].view(np.uint32))
            points = gpu.empty((count, group.point_words), np.uint32)
            infinity = gpu.empty((count,), np.uint8)
            args = (table, scalars_on_device, np.uint64(count), np.uint32(WINDOW_BITS))
            args += (np.uint32(window_count(WINDOW_BITS)), points, infinity)
            gpu.launch(kernel, count, args, block=BLOCK)
            coords[start:stop] = points.get().view(np.uint64)
            out.infinity[start:stop] = infinity.get() != 0
    return out
