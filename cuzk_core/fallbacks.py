"""The core's answers for the optional hooks, registered ``trylast`` in every backend's manager.

A backend that leaves an optional hook out (or returns None from it) gets these: nothing to
prepare, the plain-Python witness evaluator, Poseidon permutation and fixed-base reference
(which any implementation must match bit for bit), row gathers on host threads, the numpy
snarkjs point decoder, and the host clock. ``cuzk_device_memory`` has none: a host-only backend
has no device.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from cuzk_core import hookimpl
from cuzk_core.bench.clock import Clock, HostClock
from cuzk_core.curve.g1 import G1Affine, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2Affine, g2_fixed_base_batch
from cuzk_core.gadgets.poseidon.batch import PoseidonTable, reference_permute
from cuzk_core.gather import THREADS, gather_rows
from cuzk_core.hookspecs import BackendContext
from cuzk_core.interop.points import reference_decode
from cuzk_core.layout import G1Affines, G2Affines, limbs_to_ints
from cuzk_core.witness.evaluate import evaluate_program
from cuzk_core.witness.program import WitnessProgram

NAME = "cuzk-fallbacks"
"""The name the fallbacks are registered under in each backend's manager."""
BACKEND_SLOT = "backend"
"""The name each backend's own plugin is registered under in its manager."""


def reference_fixed_base_g1(base: G1Affine, scalars: np.ndarray) -> G1Affines:
    """``scalarᵢ·base`` in G1 by the core's plain-Python fixed-base method (the oracle)."""
    return G1Affines.from_points(g1_fixed_base_batch(base, limbs_to_ints(scalars)))


def reference_fixed_base_g2(base: G2Affine, scalars: np.ndarray) -> G2Affines:
    """``scalarᵢ·base`` in G2 by the core's plain-Python fixed-base method (the oracle)."""
    return G2Affines.from_points(g2_fixed_base_batch(base, limbs_to_ints(scalars)))


@hookimpl(trylast=True)
def cuzk_prepare(ctx: BackendContext) -> bool:
    """Nothing to prepare."""
    return False


@hookimpl(trylast=True)
def cuzk_witness(
    ctx: BackendContext, program: WitnessProgram, inputs: np.ndarray, hints: np.ndarray
) -> np.ndarray:
    """The reference evaluator, op by op in plain Python."""
    return evaluate_program(program, inputs, hints)


@hookimpl(trylast=True)
def cuzk_poseidon(ctx: BackendContext, states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """The reference permutation, state by state in plain Python."""
    return reference_permute(states, table)


@hookimpl(trylast=True)
def cuzk_gather_scalars(
    ctx: BackendContext, values: np.ndarray, indices: list[np.ndarray], label: str
) -> list[np.ndarray]:
    """``values[rows]`` for each index array, on host threads (a backend's handle of them
    downloaded first, should its own gathers have declined)."""
    values = np.asarray(values)
    with ThreadPoolExecutor(THREADS) as pool:  # one pool for all (threads start on demand)
        return [gather_rows(values, rows, pool) for rows in indices]


@hookimpl(trylast=True)
def cuzk_msm_ahead(
    ctx: BackendContext, bases: Any, scalars: Any, window_bits: int | None, label: str, group: str
) -> bool:
    """Nothing to start ahead: the MSM does all its work when asked."""
    return False


@hookimpl(trylast=True)
def cuzk_fixed_base_g1(ctx: BackendContext, base: G1Affine, scalars: np.ndarray) -> G1Affines:
    """The reference fixed-base multiples in G1."""
    return reference_fixed_base_g1(base, scalars)


@hookimpl(trylast=True)
def cuzk_fixed_base_g2(ctx: BackendContext, base: G2Affine, scalars: np.ndarray) -> G2Affines:
    """The reference fixed-base multiples in G2."""
    return reference_fixed_base_g2(base, scalars)


@hookimpl(trylast=True)
def cuzk_decode_snarkjs_points(
    ctx: BackendContext, raw: np.ndarray, group: str
) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """snarkjs points decoded in numpy on every core."""
    return reference_decode(raw, group)


@hookimpl(trylast=True)
def cuzk_bench_clock(ctx: BackendContext) -> Clock:
    """The host's ``perf_counter``."""
    return HostClock()
