"""The hook implementations of a GPU backend, written once: each backend is one adapter and
a :class:`GpuPlugin` built on it, registered through its entry point.

The library is imported on first use, never at import time: on a machine without it or a GPU
the plugin still loads and ``cuzk_backend_info`` says why it cannot run. CUDA failures become
one-line :class:`GpuError`s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

from cuzk_core import __version__, hookimpl, host_work
from cuzk_core.curve.g1 import G1Affine, g1_to_affine
from cuzk_core.curve.g2 import G2Affine, g2_to_affine
from cuzk_core.domain import EvaluationDomain
from cuzk_core.gadgets.poseidon.batch import PoseidonTable
from cuzk_core.hookspecs import BackendContext, BackendInfo, Synthesized
from cuzk_core.host_work import Pending, Steps, drained
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs
from cuzk_core.profile import Pinning
from cuzk_core.r1cs import ConstraintSystem, R1CSMatrices
from cuzk_core.witness.evaluate import check_witness_arguments
from cuzk_core.witness.program import WitnessProgram

from . import field, fixed_base, msm, msm_sort, ntt, poseidon, snarkjs_points
from .adapter import Adapter
from .driver import DeviceArray, EventClock, Gpu
from .memory import DeviceBases, DeviceScalars, HostBases, Memory, group_of, key_budget
from .witness import first_unsatisfied, from_montgomery, program_on_device, run_program

T = TypeVar("T")
_SCALAR_BYTES = 32
HOST_WORK_MIN_SIZE = 1 << 18
"""Domains from which the quotient's transforms run the thread's queued host work beside them
(~0.5 ms of device work on the H200)."""


def _check_domain(values: np.ndarray, domain: EvaluationDomain) -> None:
    if values.shape != (domain.size, 4):
        raise ValueError(f"NTT input is shaped {values.shape}, the domain needs ({domain.size}, 4)")


class GpuPlugin:
    """Every hook of one GPU backend over its adapter (an instance is the registered plugin)."""

    def __init__(self, adapter: Adapter) -> None:
        self.gpu = Gpu(adapter)
        self.memory = Memory(self.gpu)
        self.sorts = msm_sort.SortShare()

    @contextlib.contextmanager
    def _device(self, ctx: BackendContext, what: str, ready: bool = True) -> Iterator[None]:
        """The device current for the body and its CUDA failures as GpuErrors; with ``ready``,
        refuse clearly when the GPU cannot be used and compile the kernels once (own span)."""
        if ready:
            self.gpu.require()
        with self.gpu.scope(), self.gpu.errors(what):
            if ready:
                self.gpu.warm_up(ctx.timer)
            yield

    @hookimpl
    def cuzk_backend_info(self) -> BackendInfo:
        """This backend's name and version, and whether it can run here (on what, or why not)."""
        available, reason = self.gpu.availability()
        name = self.gpu.name
        return BackendInfo(name, __version__, available=available, reason=reason, device="cuda")

    @hookimpl
    def cuzk_prepare(self, ctx: BackendContext) -> bool | None:
        """Build (or load from the disk cache) every kernel the prover uses, once per process;
        the ``compile_kernels`` span inside says what each module took."""
        with self._device(ctx, "preparing"):
            return True

    # ------------------------------------------------------------ allocation

    @hookimpl
    def cuzk_alloc_host(
        self, ctx: BackendContext, shape: tuple[int, ...], dtype: str, purpose: str
    ) -> np.ndarray | None:
        """A zeroed host buffer, page-locked under ``pool`` pinning."""
        with self._device(ctx, f"allocating host buffer {purpose!r}", ready=False):
            return self.memory.alloc_host(ctx.profile, shape, dtype)

    @hookimpl
    def cuzk_pin(self, ctx: BackendContext, arrays: list, purpose: str) -> Any:
        """Page-lock or stage per the profile's pinning."""
        with self._device(ctx, f"pinning {purpose!r}"):
            return self.memory.pin(ctx.profile, arrays)

    @hookimpl
    def cuzk_unpin(self, ctx: BackendContext, handle: Any) -> bool | None:
        """Undo ``cuzk_pin``."""
        with self._device(ctx, "unpinning", ready=False):
            self.memory.unpin(handle)
        return True

    @hookimpl
    def cuzk_upload(self, ctx: BackendContext, points: Any, purpose: str) -> Any:
        """Place MSM bases per the profile's key storage."""
        with self._device(ctx, f"uploading bases {purpose!r}"):
            return self.memory.upload(ctx.profile, points, purpose, ctx.timer)

    @hookimpl
    def cuzk_release(self, ctx: BackendContext, handle: Any) -> bool | None:
        """Free a per-proof upload now."""
        with self._device(ctx, "releasing bases", ready=False):
            self.memory.release(handle)
        return True

    # ------------------------------------------------------------ synthesis

    @hookimpl
    def cuzk_synthesize(self, ctx: BackendContext, circuit: Any) -> Synthesized | None:
        """Run the circuit's gadgets on the host."""
        cs = ConstraintSystem()
        with ctx.timer.span("gadgets"):
            circuit.synthesize(cs)
        with ctx.timer.span("matrices"):
            matrices = cs.matrices()
        return Synthesized(matrices, ints_to_limbs(cs.assignment()))

    @hookimpl
    def cuzk_witness(
        self,
        ctx: BackendContext,
        program: WitnessProgram,
        inputs: np.ndarray,
        hints: np.ndarray,
        for_prover: bool,
    ) -> np.ndarray | DeviceScalars | None:
        """Run the compiled program on the device (its tables resident after the first proof);
        z stays there in both forms for the R1CS products, the scalars' gathers and the MSMs:
        as the returned handle (``for_prover``: nothing downloaded), else as the mirrors of a
        host copy."""
        check_witness_arguments(program, inputs, hints)
        with self._device(ctx, "computing the witness"):
            with self.gpu.step(ctx.timer, "witness_tables"):  # the first proof's upload
                loaded = program_on_device(self.gpu, program)
            on_device = [self.memory.to_device(ctx.profile, x) for x in (inputs, hints)]
            # The run that times both kernels (a close call's second): in a span.
            choosing = loaded.times_next_run
            with ctx.timer.span("witness_choice") if choosing else contextlib.nullcontext() as span:
                z_mont = run_program(self.gpu, program, *on_device)
                if span is not None:
                    timings = {f"{k}_ms": round(v, 3) for k, v in loaded.timings.items()}
                    span.attrs.update(chosen=loaded.schedule, **timings)
            z = from_montgomery(self.gpu, z_mont)
            if for_prover:  # done when it returns: its time in its span, its faults its own
                self.gpu.synchronize()
                return DeviceScalars(z, z_mont)
            return self.memory.mirrors.keep(
                self.memory.returned(ctx.profile, z), z_mont, "montgomery"
            )

    @hookimpl
    def cuzk_evaluate_r1cs(
        self,
        ctx: BackendContext,
        matrices: R1CSMatrices,
        witness: np.ndarray | DeviceScalars,
        for_quotient: bool,
    ) -> tuple[np.ndarray, ...] | tuple[DeviceScalars, ...] | None:
        """A·z, B·z, C·z by sparse products on the device; left there as handles when only this
        backend's check and H read them (``for_quotient``), else downloaded."""
        rows = matrices.num_constraints
        with self._device(ctx, "evaluating the R1CS"):
            if isinstance(witness, DeviceScalars):  # a kept witness: at most its Montgomery copy
                made = 0 if witness.montgomery is not None else len(witness)
            else:  # an upload and its Montgomery copy (fewer where a mirror exists)
                made = 2 * len(witness)
            needed = field.products_table_bytes(self.gpu, matrices)
            needed += (made + 3 * rows) * _SCALAR_BYTES
            self.gpu.ensure_fits(needed, "R1CS")
            with self.gpu.step(ctx.timer, "r1cs_tables"):  # the first proof's upload
                for matrix in (matrices.a, matrices.b, matrices.c):
                    field.matrix_on_device(self.gpu, matrix)
                field.row_plan(self.gpu, matrices)
            if isinstance(witness, DeviceScalars):
                z_mont = witness.montgomery
                if z_mont is None:
                    z_mont = field.to_montgomery(self.gpu, witness.array)
            else:
                z_mont = self.memory.mirrors.find(witness, "montgomery")
                if z_mont is None:
                    on_device = self.memory.to_device(ctx.profile, witness)
                    z_mont = field.to_montgomery(self.gpu, on_device)
            products = field.r1cs_products(self.gpu, matrices, z_mont)
            if for_quotient:
                return tuple(DeviceScalars(p) for p in products)
            return tuple(self.memory.returned(ctx.profile, p) for p in products)

    @hookimpl
    def cuzk_first_unsatisfied(
        self,
        ctx: BackendContext,
        a: np.ndarray | DeviceScalars,
        b: np.ndarray | DeviceScalars,
        c: np.ndarray | DeviceScalars,
    ) -> int | None:
        """The first row with a·b ≠ c, by one pass on the device."""
        with self._device(ctx, "checking the witness"):
            uploads = sum(not isinstance(x, DeviceScalars) for x in (a, b, c))
            self.gpu.ensure_fits(uploads * len(a) * _SCALAR_BYTES, "the witness check")
            up = [self.memory.readable(ctx.profile, x) for x in (a, b, c)]
            return first_unsatisfied(self.gpu, *up)

    @hookimpl
    def cuzk_poseidon(
        self, ctx: BackendContext, states: np.ndarray, table: PoseidonTable
    ) -> np.ndarray | None:
        """The permutations on the device, one state per thread."""
        with self._device(ctx, "hashing with Poseidon"):
            return poseidon.permute(self.gpu, states, table)

    @hookimpl
    def cuzk_poseidon_layers(
        self,
        ctx: BackendContext,
        nodes: np.ndarray,
        layers: list[tuple[np.ndarray, np.ndarray]],
        table: PoseidonTable,
    ) -> np.ndarray | None:
        """A tree's layers of hashes, each node staying on the device between them."""
        with self._device(ctx, "hashing layers with Poseidon"):
            return poseidon.hash2_layers(self.gpu, nodes, layers, table)

    # ------------------------------------------------------------ NTT

    def _ntt(
        self,
        ctx: BackendContext,
        values: np.ndarray,
        domain: EvaluationDomain,
        transform: Callable[..., DeviceArray],
        shift: int | None = None,
    ) -> np.ndarray | None:
        """``transform`` (ntt.forward or ntt.inverse) of host ``values``; None if not ours."""
        _check_domain(values, domain)
        if domain.size == 1:
            return np.array(values, dtype=np.uint64)
        what = f"an NTT of size 2^{domain.log_size}"
        with self._device(ctx, what):
            self.gpu.ensure_fits(domain.size * 4 * _SCALAR_BYTES, what)
            on_device = self.memory.to_device(ctx.profile, values)
            out = transform(self.gpu, on_device, domain.log_size, domain.omega, shift)
            return self.memory.returned(ctx.profile, out)

    @hookimpl
    def cuzk_ntt(
        self, ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain
    ) -> np.ndarray | None:
        """Forward NTT, natural order."""
        return self._ntt(ctx, values, domain, ntt.forward)

    @hookimpl
    def cuzk_intt(
        self, ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain
    ) -> np.ndarray | None:
        """Inverse NTT, natural order."""
        return self._ntt(ctx, values, domain, ntt.inverse)

    @hookimpl
    def cuzk_coset_ntt(
        self, ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
    ) -> np.ndarray | None:
        """NTT on the coset ``shift·⟨ω⟩``."""
        return self._ntt(ctx, values, domain, ntt.forward, shift)

    @hookimpl
    def cuzk_coset_intt(
        self, ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
    ) -> np.ndarray | None:
        """Inverse of ``cuzk_coset_ntt``."""
        return self._ntt(ctx, values, domain, ntt.inverse, shift)

    @hookimpl
    def cuzk_quotient_pointwise(
        self, ctx: BackendContext, a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int
    ) -> np.ndarray | None:
        """``(a·b − c)·scale`` elementwise on the device."""
        with self._device(ctx, "the quotient step"):
            self.gpu.ensure_fits(4 * len(a) * _SCALAR_BYTES, "the quotient step")
            up = [self.memory.to_device(ctx.profile, x) for x in (a, b, c)]
            return self.memory.returned(ctx.profile, field.quotient(self.gpu, *up, scale))

    @hookimpl
    def cuzk_quotient_on_coset(
        self,
        ctx: BackendContext,
        a: np.ndarray | DeviceScalars,
        b: np.ndarray | DeviceScalars,
        c: np.ndarray | DeviceScalars,
        domain: EvaluationDomain,
        shift: int,
        scale: int,
        coefficients: bool,
        for_msm: bool,
    ) -> np.ndarray | DeviceScalars | None:
        """H's transforms and quotient step on the device, one download at the end (none when
        only this backend's MSMs take the result: then it stays there as a handle)."""
        if domain.size == 1:
            return None  # nothing to transform: the core's composition is exact and cheap
        size, log_n, omega = domain.size, domain.log_size, domain.omega
        what = f"H over a domain of 2^{log_n}"
        with self._device(ctx, what):
            self.gpu.ensure_fits(5 * size * _SCALAR_BYTES, what)
            evaluations = []
            for values in (a, b, c):
                if len(values) > size:
                    raise ValueError(f"{len(values)} rows do not fit a domain of {size}")
                padded = self.gpu.zeros((size, 4), np.uint64)
                self.gpu.copy_into(padded[: len(values)], self.memory.readable(ctx.profile, values))
                coefficients_of = ntt.inverse(self.gpu, padded, log_n, omega)
                evaluations.append(ntt.forward(self.gpu, coefficients_of, log_n, omega, shift))
            out = field.quotient(self.gpu, *evaluations, scale)
            if coefficients:
                out = ntt.inverse(self.gpu, out, log_n, omega, shift)
            if size >= HOST_WORK_MIN_SIZE:  # the transforms queued: the proof's Python meanwhile
                self.gpu.overlap_host_work()
            return DeviceScalars(out) if for_msm else self.memory.returned(ctx.profile, out)

    # ------------------------------------------------------------ MSM

    def _slicer(self, ctx: BackendContext, bases: Any, group: str) -> tuple[msm.BaseSlicer, bool]:
        """Device chunks of ``bases``: views of a handle from cuzk_upload (whose own upload may
        still be in flight), or, for a canonical batch or host handle (``stream``/``mmap``), an
        upload per chunk, started when the MSM asks for the chunk and waited for (in a
        ``wait_bases`` span) only when its sums need it."""
        if isinstance(bases, DeviceBases):
            coords, skip = bases.coords, bases.skip
            if bases.group != group or coords is None:
                raise ValueError(f"bases handle is {bases.group} (released: {coords is None})")
            wait = self._waiter(ctx, bases)

            def resident(start: int, stop: int) -> msm.BaseChunk:
                chunk_skip = None if skip is None else skip[start:stop]
                return msm.BaseChunk(coords[start:stop], chunk_skip, wait)

            return resident, False
        points = bases.points if isinstance(bases, HostBases) else bases
        if group_of(points) != group:
            raise ValueError(f"bases are {group_of(points)}, this MSM is {group}")

        def streamed(start: int, stop: int) -> msm.BaseChunk:
            up = self.memory.upload_points(ctx.profile, points[start:stop], resident=False)
            return msm.BaseChunk(up.coords, up.skip, self._waiter(ctx, up))

        return streamed, True

    def _waiter(self, ctx: BackendContext, bases: DeviceBases) -> Callable[[], None]:
        """What an MSM calls before reading ``bases``: wait for their overlapped upload."""

        def wait() -> None:
            if bases.ready is not None:
                with ctx.timer.span("wait_bases"):
                    self.memory.wait_ready(bases)

        return wait

    @hookimpl
    def cuzk_gather_scalars(
        self,
        ctx: BackendContext,
        values: np.ndarray | DeviceScalars,
        indices: list[np.ndarray],
        label: str,
    ) -> list[DeviceScalars] | None:
        """The rows on the device: from a witness this backend kept there (its handle, or the
        mirror of its host copy), else from one upload of ``values`` for all the gathers; they
        stay there for the MSMs."""
        with self._device(ctx, f"gathering the scalars of {label!r}"):
            gathered = sum(len(rows) for rows in indices)
            source = self.memory.resident(values)
            uploaded = len(values) if source is None else 0
            self.gpu.ensure_fits((uploaded + gathered) * _SCALAR_BYTES, f"the gathers of {label!r}")
            with ctx.timer.span("gather_scalars", n=gathered):
                if source is None:
                    words = np.ascontiguousarray(values, dtype=np.uint64)
                    source = self.memory.to_device(ctx.profile, words)
                index_arrays = [
                    self.memory.index_array(ctx.profile, rows, len(values)) for rows in indices
                ]
                return [DeviceScalars(field.gather(self.gpu, source, i)) for i in index_arrays]

    def _scalars_on_device(self, ctx: BackendContext, scalars: Any, label: str) -> DeviceArray:
        """An MSM's scalars on the device: a gathered handle's, a returned array's mirror (or
        its rows'), else an upload."""
        found = self.memory.resident(scalars)
        if found is not None:
            return found
        words = np.ascontiguousarray(scalars, dtype=np.uint64)
        self.gpu.ensure_fits(len(words) * _SCALAR_BYTES, f"the scalars of MSM {label!r}")
        with ctx.timer.span("upload_scalars", n=len(words)):
            return self.memory.to_device(ctx.profile, words)

    def _msm(
        self,
        ctx: BackendContext,
        bases: Any,
        scalars: Any,
        window_bits: int | None,
        label: str,
        group: str,
    ) -> Steps[Any]:
        """The MSM's device work, done (its sums downloaded) before this returns; the host's
        part (the windows' combination) as steps that return the Jacobian sum."""
        count = bases.count if isinstance(bases, DeviceBases | HostBases) else len(bases)
        if count != len(scalars):
            raise ValueError(f"MSM {label!r}: {count} bases but {len(scalars)} scalars")
        settings = ctx.profile.msm
        with self._device(ctx, f"MSM {label!r} in {group.upper()} ({count} points)"):
            slicer, streamed = self._slicer(ctx, bases, group)
            table = bases.window_table() if isinstance(bases, DeviceBases) else None
            on_device = self._scalars_on_device(ctx, scalars, label)
            passes = msm.device_sums(
                self.gpu,
                msm.GROUPS[group],
                slicer,
                streamed,
                on_device.view(np.uint32),
                window_bits,
                settings.signed_digits,
                settings.split_01,
                ctx.timer,
                key_budget(ctx.profile),
                table,
                # Without page-locked memory the copies are synchronous: pieces would hide none.
                settings.upload_pieces if ctx.profile.memory.pinning is not Pinning.NONE else 1,
                settings.batch_lanes_g1 if group == "g1" else settings.batch_lanes_g2,
                self.sorts if settings.share_sorts or settings.sorts_ahead else None,
                scalars if isinstance(scalars, DeviceScalars) else None,
            )
        return msm.host_sum(msm.GROUPS[group], passes, ctx.timer)

    @hookimpl
    def cuzk_msm_ahead(
        self,
        ctx: BackendContext,
        bases: Any,
        scalars: Any,
        window_bits: int | None,
        label: str,
        group: str,
    ) -> bool | None:
        """With ``msm.sorts_ahead``, queue the MSM's counting sort in the sort share, to run on
        its host thread from the next pass's bucket sums on: for a handle's scalars over
        resident bases without points at infinity, planned as one pass that fits, over their
        window table if they have one (``msm.sort_ahead_key``)."""
        settings = ctx.profile.msm
        if not settings.sorts_ahead or not isinstance(scalars, DeviceScalars):
            return None
        whole = isinstance(bases, DeviceBases) and bases.skip is None
        if not whole or bases.group != group or bases.count != len(scalars):
            return None
        with self._device(ctx, f"MSM {label!r} ahead"):
            signed, split_01 = settings.signed_digits, settings.split_01
            lanes = settings.batch_lanes_g1 if group == "g1" else settings.batch_lanes_g2
            ops, reserved = msm.GROUPS[group], self.sorts.reserved()
            args = (len(scalars), window_bits, signed, split_01, lanes, reserved)
            planned = msm.sort_ahead_key(self.gpu, ops, *args, bases.window_table())
            if planned is None:
                return None
            key, nbytes = planned
            words = self._scalars_on_device(ctx, scalars, label).view(np.uint32)
            ready = self.gpu.mark()  # the scalars' gather, on this thread's stream

        def sort() -> msm_sort.SortedDigits | None:
            with self.gpu.scope():
                try:
                    self.gpu.wait_for(ready)
                    skip = msm.split_ones(self.gpu, words, None)[1] if split_01 else None
                    args = (key.c, signed, key.table_windows)
                    sorted_ = msm_sort.counting_sort(self.gpu, words, skip, *args)
                    self.gpu.synchronize()
                except Exception as exc:
                    if self.gpu.out_of_memory(exc):
                        return None  # no room beside the pass: the MSM sorts for itself
                    raise
                return sorted_

        self.sorts.queue(scalars, key, sort, nbytes)
        return True

    @hookimpl
    def cuzk_msm_g1(
        self, ctx: BackendContext, bases: Any, scalars: Any, window_bits: Any, label: str
    ) -> G1Affines | Pending[G1Affines] | None:
        """G1 MSM by Pippenger on the device; the host's part left pending in a prover."""
        steps = self._msm(ctx, bases, scalars, window_bits, label, "g1")
        return _finished(steps, lambda total: G1Affines.from_points([g1_to_affine(total)]))

    @hookimpl
    def cuzk_msm_g2(
        self, ctx: BackendContext, bases: Any, scalars: Any, window_bits: Any, label: str
    ) -> G2Affines | Pending[G2Affines] | None:
        """G2 MSM by Pippenger on the device; the host's part left pending in a prover."""
        steps = self._msm(ctx, bases, scalars, window_bits, label, "g2")
        return _finished(steps, lambda total: G2Affines.from_points([g2_to_affine(total)]))

    # ------------------------------------------------------------ key conversion

    @hookimpl
    def cuzk_decode_snarkjs_points(
        self, ctx: BackendContext, raw: np.ndarray, group: str
    ) -> tuple[G1Affines | G2Affines, np.ndarray] | None:
        """A zkey's points checked and out of Montgomery form on the device."""
        with self._device(ctx, f"decoding {len(raw)} snarkjs {group.upper()} points"):
            return snarkjs_points.decode(self.gpu, raw, group, ctx.timer)

    # ------------------------------------------------------------ fixed base (key generation)

    def _fixed_base(
        self, ctx: BackendContext, group: fixed_base.Group, base: Any, scalars: np.ndarray
    ) -> Any:
        with self._device(ctx, fixed_base.describe(group, len(scalars))):
            return fixed_base.multiply(self.gpu, group, base, scalars, ctx.timer)

    @hookimpl
    def cuzk_fixed_base_g1(
        self, ctx: BackendContext, base: G1Affine, scalars: np.ndarray
    ) -> G1Affines | None:
        """``scalarᵢ·base`` in G1, a thread per scalar."""
        return self._fixed_base(ctx, fixed_base.G1, base, scalars)

    @hookimpl
    def cuzk_fixed_base_g2(
        self, ctx: BackendContext, base: G2Affine, scalars: np.ndarray
    ) -> G2Affines | None:
        """``scalarᵢ·base`` in G2, a thread per scalar."""
        return self._fixed_base(ctx, fixed_base.G2, base, scalars)

    # ------------------------------------------------------------ measurement (optional hooks)

    @hookimpl
    def cuzk_bench_clock(self, ctx: BackendContext) -> EventClock | None:
        """CUDA events around the timed work."""
        if not self.gpu.availability()[0]:
            return None
        return EventClock(self.gpu)

    @hookimpl
    def cuzk_device_memory(self, ctx: BackendContext) -> int | None:
        """Device bytes in use now (called from the memory sampler's thread)."""
        if not self.gpu.availability()[0]:
            return None
        with self.gpu.scope():
            free, total = self.gpu.adapter.memory()
        return total - free


def _finished(steps: Steps[Any], batch: Callable[[Any], T]) -> T | Pending[T]:
    """``batch`` of what ``steps`` return: queued on the calling thread's host work when it has
    one (a prover's, which runs it beside the next device wait: the device would idle while it
    ran here, 13.6 ms of a 2^20 proof in round 17), else computed now."""

    def done() -> Steps[T]:
        return batch((yield from steps))

    work = host_work.current()
    return drained(done()) if work is None else work.submit_steps(done)
