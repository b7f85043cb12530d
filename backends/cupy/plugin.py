"""The CuPy backend's hook implementations: every heavy step on an NVIDIA GPU.

CuPy is imported on first use, never at import time: on a machine without CuPy or a GPU the
plugin still loads and ``cuzk_backend_info`` says why it cannot run. Every hook returns None
unless ``ctx.backend`` is ``"cupy"``; CUDA failures become one-line :class:`GpuError`s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cuzk_core import __version__, hookimpl
from cuzk_core.backend import BackendContext, BackendInfo, Synthesized
from cuzk_core.curve.g1 import g1_to_affine
from cuzk_core.curve.g2 import g2_to_affine
from cuzk_core.domain import EvaluationDomain
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem, R1CSMatrices

from . import device, field, memory, msm, ntt
from .device import NAME, GpuError

_SCALAR_BYTES = 32


def _ours(ctx: BackendContext) -> bool:
    return ctx.backend == NAME


def _ready(ctx: BackendContext) -> None:
    """Fail clearly when the GPU cannot be used; compile the kernels once (its own span)."""
    available, reason = device.availability()
    if not available:
        raise GpuError(f"cupy backend cannot run here: {reason}")
    device.warm_up(ctx.timer)


@hookimpl
def cuzk_backend_info() -> BackendInfo:
    available, reason = device.availability()
    return BackendInfo(NAME, __version__, available=available, reason=reason)


# ---------------------------------------------------------------- allocation


@hookimpl
def cuzk_alloc_host(ctx: BackendContext, shape: tuple[int, ...], dtype: str, purpose: str):
    if not _ours(ctx):
        return None
    with device.gpu_errors(f"allocating host buffer {purpose!r}"):
        return memory.alloc_host(ctx.profile, shape, dtype)


@hookimpl
def cuzk_pin(ctx: BackendContext, arrays: list, purpose: str) -> Any:
    if not _ours(ctx):
        return None
    _ready(ctx)
    with device.gpu_errors(f"pinning {purpose!r}"):
        return memory.pin(ctx.profile, arrays)


@hookimpl
def cuzk_unpin(ctx: BackendContext, handle: Any) -> bool | None:
    if not _ours(ctx):
        return None
    with device.gpu_errors("unpinning"):
        memory.unpin(handle)
    return True


@hookimpl
def cuzk_upload(ctx: BackendContext, points: Any, purpose: str) -> Any:
    if not _ours(ctx):
        return None
    _ready(ctx)
    with device.gpu_errors(f"uploading bases {purpose!r}"):
        return memory.upload(ctx.profile, points)


@hookimpl
def cuzk_release(ctx: BackendContext, handle: Any) -> bool | None:
    if not _ours(ctx):
        return None
    memory.release(handle)
    return True


# ---------------------------------------------------------------- synthesis


@hookimpl
def cuzk_synthesize(ctx: BackendContext, circuit: Any) -> Synthesized | None:
    if not _ours(ctx):
        return None
    cs = ConstraintSystem()
    with ctx.timer.span("gadgets"):
        circuit.synthesize(cs)
    with ctx.timer.span("matrices"):
        matrices = cs.matrices()
    return Synthesized(matrices, ints_to_limbs(cs.assignment()))


@hookimpl
def cuzk_evaluate_r1cs(ctx: BackendContext, matrices: R1CSMatrices, witness: np.ndarray):
    if not _ours(ctx):
        return None
    _ready(ctx)
    rows = matrices.num_constraints
    with device.gpu_errors("evaluating the R1CS"):
        nnz = matrices.a.nnz + matrices.b.nnz + matrices.c.nnz
        device.ensure_fits(nnz * 48 + (len(witness) * 2 + 3 * rows) * _SCALAR_BYTES, "R1CS")
        z_mont = field.to_montgomery(memory.to_device(ctx.profile, witness))
        return tuple(
            memory.to_host(ctx.profile, field.spmv(m, z_mont))
            for m in (matrices.a, matrices.b, matrices.c)
        )


# ---------------------------------------------------------------- NTT


def _check_domain(values: np.ndarray, domain: EvaluationDomain) -> None:
    if values.shape != (domain.size, 4):
        raise ValueError(f"NTT input is shaped {values.shape}, the domain needs ({domain.size}, 4)")


def _ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, run) -> np.ndarray:
    _check_domain(values, domain)
    if domain.size == 1:
        return np.array(values, dtype=np.uint64)
    _ready(ctx)
    with device.gpu_errors(f"an NTT of size 2^{domain.log_size}"):
        device.ensure_fits(domain.size * 4 * _SCALAR_BYTES, f"an NTT of size 2^{domain.log_size}")
        on_device = memory.to_device(ctx.profile, values)
        return memory.to_host(ctx.profile, run(on_device))


@hookimpl
def cuzk_ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain):
    if not _ours(ctx):
        return None
    return _ntt(ctx, values, domain, lambda v: ntt.forward(v, domain.log_size, domain.omega))


@hookimpl
def cuzk_intt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain):
    if not _ours(ctx):
        return None
    return _ntt(ctx, values, domain, lambda v: ntt.inverse(v, domain.log_size, domain.omega))


@hookimpl
def cuzk_coset_ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int):
    if not _ours(ctx):
        return None
    return _ntt(ctx, values, domain, lambda v: ntt.forward(v, domain.log_size, domain.omega, shift))


@hookimpl
def cuzk_coset_intt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int):
    if not _ours(ctx):
        return None
    return _ntt(ctx, values, domain, lambda v: ntt.inverse(v, domain.log_size, domain.omega, shift))


@hookimpl
def cuzk_quotient_pointwise(ctx: BackendContext, a, b, c, scale: int):
    if not _ours(ctx):
        return None
    _ready(ctx)
    with device.gpu_errors("the quotient step"):
        device.ensure_fits(4 * len(a) * _SCALAR_BYTES, "the quotient step")
        up = [memory.to_device(ctx.profile, x) for x in (a, b, c)]
        return memory.to_host(ctx.profile, field.quotient(*up, scale))


# ---------------------------------------------------------------- MSM


def _slicer(ctx: BackendContext, bases: Any, group: str) -> tuple[msm.BaseSlicer, bool]:
    """Device slices of ``bases`` (a handle from cuzk_upload, or a canonical batch)."""
    if isinstance(bases, memory.DeviceBases):
        if bases.group != group or bases.coords is None:
            raise ValueError(f"bases handle is {bases.group} (released: {bases.coords is None})")

        def resident(start: int, stop: int) -> tuple[Any, Any]:
            skip = None if bases.skip is None else bases.skip[start:stop]
            return bases.coords[start:stop], skip

        return resident, False
    points = bases.points if isinstance(bases, memory.HostBases) else bases
    if memory.group_of(points) != group:
        raise ValueError(f"bases are {memory.group_of(points)}, this MSM is {group}")

    def streamed(start: int, stop: int) -> tuple[Any, Any]:
        up = memory.upload_points(ctx.profile, points[start:stop], resident=False)
        return up.coords, up.skip

    return streamed, True


def _msm(ctx, bases, scalars: np.ndarray, window_bits, label: str, group: str):
    count = bases.count if isinstance(bases, memory.DeviceBases | memory.HostBases) else len(bases)
    if count != len(scalars):
        raise ValueError(f"MSM {label!r}: {count} bases but {len(scalars)} scalars")
    _ready(ctx)
    settings = ctx.profile.msm
    with device.gpu_errors(f"MSM {label!r} in {group.upper()} ({count} points)"):
        slicer, streamed = _slicer(ctx, bases, group)
        device.ensure_fits(len(scalars) * _SCALAR_BYTES, f"the scalars of MSM {label!r}")
        on_device = memory.to_device(ctx.profile, np.ascontiguousarray(scalars, dtype=np.uint64))
        return msm.msm(
            msm.GROUPS[group],
            slicer,
            streamed,
            on_device.view(np.uint32),
            window_bits,
            settings.signed_digits,
            settings.split_01,
            ctx.timer,
        )


@hookimpl
def cuzk_msm_g1(ctx: BackendContext, bases: Any, scalars, window_bits, label: str):
    if not _ours(ctx):
        return None
    total = _msm(ctx, bases, scalars, window_bits, label, "g1")
    return G1Affines.from_points([g1_to_affine(total)])


@hookimpl
def cuzk_msm_g2(ctx: BackendContext, bases: Any, scalars, window_bits, label: str):
    if not _ours(ctx):
        return None
    total = _msm(ctx, bases, scalars, window_bits, label, "g2")
    return G2Affines.from_points([g2_to_affine(total)])


# ---------------------------------------------------------------- measurement (optional hooks)


class CudaEventClock:
    """Times work on the GPU with CUDA events around it, waiting for the device to finish."""

    name = "cuda-events"

    def time(self, work: Callable[[], Any]) -> tuple[Any, float]:
        """Run ``work``; its result and the elapsed device milliseconds."""
        cupy = device.cupy_module()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        result = work()
        stop.record()
        stop.synchronize()
        return result, cupy.cuda.get_elapsed_time(start, stop)


@hookimpl
def cuzk_bench_clock(ctx: BackendContext) -> CudaEventClock | None:
    if not _ours(ctx) or not device.availability()[0]:
        return None
    return CudaEventClock()


@hookimpl
def cuzk_device_memory(ctx: BackendContext) -> int | None:
    if not _ours(ctx) or not device.availability()[0]:
        return None
    return device.total_bytes() - device.free_bytes()
