"""The prover's view of a backend: a typed façade over one backend's hooks, so nothing else
touches pluggy. Each façade wraps that backend's own manager (see :mod:`cuzk_core.plugins`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cuzk_core.circuits import bind_backend
from cuzk_core.errors import BackendUnavailable
from cuzk_core.fallbacks import BACKEND_SLOT
from cuzk_core.gadgets.poseidon.batch import Layers, check_layers, hash2_layers_by_permutations
from cuzk_core.hookspecs import BackendContext, Synthesized
from cuzk_core.host_work import Pending, Ready
from cuzk_core.layout import G1Affines, G2Affines

if TYPE_CHECKING:
    import pluggy

    from cuzk_core.bench.clock import Clock
    from cuzk_core.curve.g1 import G1Affine
    from cuzk_core.curve.g2 import G2Affine
    from cuzk_core.domain import EvaluationDomain
    from cuzk_core.gadgets.poseidon.batch import PoseidonTable
    from cuzk_core.r1cs import R1CSMatrices
    from cuzk_core.witness.program import WitnessProgram


class Backend:
    """One method per hook, bound to the active backend; the prover calls only these.

    ``b_g2`` is the façade that runs the B·G2 MSM: this one, or the CPU backend the profile's
    ``msm.b_g2_on`` names (sharing this one's profile and timer), run beside the G1 MSMs.
    ``accelerated``: its hooks compute on an accelerator, so the host is free beside them.
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        ctx: BackendContext,
        b_g2: Backend | None = None,
        *,
        accelerated: bool = False,
    ) -> None:
        self._hook = pm.hook
        self.ctx = ctx
        self.b_g2 = self if b_g2 is None else b_g2
        self.accelerated = accelerated

    @property
    def name(self) -> str:
        """The active backend's name."""
        return self.ctx.backend

    def _call(self, hook: str, **kwargs: Any) -> Any:
        result = getattr(self._hook, hook)(ctx=self.ctx, **kwargs)
        if result is None:
            raise BackendUnavailable(f"backend {self.ctx.backend!r} does not implement {hook}")
        return result

    def alloc_host(self, shape: tuple[int, ...], dtype: str, purpose: str) -> np.ndarray:
        """A zeroed host buffer under the profile's pinning strategy."""
        return self._call("cuzk_alloc_host", shape=shape, dtype=dtype, purpose=purpose)

    def pin(self, arrays: list[np.ndarray], purpose: str) -> Any:
        """Prepare host arrays for transfer; returns a handle for :meth:`unpin`."""
        return self._call("cuzk_pin", arrays=arrays, purpose=purpose)

    def unpin(self, handle: Any) -> None:
        """Undo :meth:`pin`."""
        self._call("cuzk_unpin", handle=handle)

    def upload(self, points: G1Affines | G2Affines, purpose: str) -> Any:
        """Place MSM bases where the backend computes on them."""
        return self._call("cuzk_upload", points=points, purpose=purpose)

    def release(self, handle: Any) -> None:
        """Free a buffer or handle as soon as it is dead."""
        self._call("cuzk_release", handle=handle)

    def synthesize(self, circuit: Any) -> Synthesized:
        """Run a native circuit: matrices and witness (its instance computed on this backend,
        when the circuit takes one)."""
        bind_backend(circuit, self)
        return self._call("cuzk_synthesize", circuit=circuit)

    def witness(
        self,
        program: WitnessProgram,
        inputs: np.ndarray,
        hints: np.ndarray,
        for_prover: bool = False,
    ) -> np.ndarray | Any:
        """A compiled circuit's witness z (the core's reference when the backend leaves the hook
        out); with ``for_prover``, possibly a handle only this backend's hooks take (see the
        hook)."""
        return self._call(
            "cuzk_witness", program=program, inputs=inputs, hints=hints, for_prover=for_prover
        )

    def first_unsatisfied(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int | None:
        """The first row with a·b ≠ c, or None: the backend's check, else (a·b − c) by its
        quotient hook and the first nonzero row found by numpy."""
        first = self._hook.cuzk_first_unsatisfied(ctx=self.ctx, a=a, b=b, c=c)
        if first is None:
            residue = self.quotient_pointwise(a, b, c, scale=1)
            failing = np.flatnonzero(np.any(residue != 0, axis=1))
            first = int(failing[0]) if len(failing) else len(a)
        return None if first == len(a) else int(first)

    def poseidon(self, states: np.ndarray, table: PoseidonTable) -> np.ndarray:
        """Each ``(t, 4)`` state of ``states`` permuted (the core's reference when the backend
        leaves the hook out)."""
        return self._call("cuzk_poseidon", states=states, table=table)

    def poseidon_layers(
        self, nodes: np.ndarray, layers: Layers, table: PoseidonTable
    ) -> np.ndarray:
        """Layers of 2-to-1 hashes over ``nodes`` and earlier layers' results (see the hook):
        the backend's ``cuzk_poseidon_layers``, else one :meth:`poseidon` call a layer.
        ValueError names a bad layer."""
        layers = check_layers(nodes, layers, table)
        hook = self._hook.cuzk_poseidon_layers
        done = hook(ctx=self.ctx, nodes=nodes, layers=layers, table=table)
        if done is None:
            done = hash2_layers_by_permutations(nodes, layers, table, self.poseidon)
        return done

    def evaluate_r1cs(
        self, matrices: R1CSMatrices, witness: np.ndarray, for_quotient: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[Any, Any, Any]:
        """``(A·z, B·z, C·z)``; with ``for_quotient``, possibly handles that only this backend's
        witness check (``first_unsatisfied``) and H (``quotient_on_coset``) take (see the hook)."""
        return self._call(
            "cuzk_evaluate_r1cs", matrices=matrices, witness=witness, for_quotient=for_quotient
        )

    def ntt(self, values: np.ndarray, domain: EvaluationDomain) -> np.ndarray:
        """Forward NTT, natural order."""
        return self._call("cuzk_ntt", values=values, domain=domain)

    def intt(self, values: np.ndarray, domain: EvaluationDomain) -> np.ndarray:
        """Inverse NTT, natural order."""
        return self._call("cuzk_intt", values=values, domain=domain)

    def coset_ntt(self, values: np.ndarray, domain: EvaluationDomain, shift: int) -> np.ndarray:
        """NTT on the coset ``shift·⟨ω⟩``."""
        return self._call("cuzk_coset_ntt", values=values, domain=domain, shift=shift)

    def coset_intt(self, values: np.ndarray, domain: EvaluationDomain, shift: int) -> np.ndarray:
        """Inverse of :meth:`coset_ntt`."""
        return self._call("cuzk_coset_intt", values=values, domain=domain, shift=shift)

    def quotient_on_coset(
        self,
        a: np.ndarray,
        b: np.ndarray,
        c: np.ndarray,
        domain: EvaluationDomain,
        shift: int,
        scale: int,
        coefficients: bool,
        for_msm: bool = False,
    ) -> np.ndarray | Any:
        """``(a·b − c)·scale`` on the coset ``shift·⟨ω⟩`` of a, b, c's interpolations (brought
        back to coefficients with ``coefficients``): the backend's hook, else its transforms. With
        ``for_msm`` the result may be a handle only this backend's MSMs take (see the hook)."""
        found = self._hook.cuzk_quotient_on_coset(
            ctx=self.ctx,
            a=a,
            b=b,
            c=c,
            domain=domain,
            shift=shift,
            scale=scale,
            coefficients=coefficients,
            for_msm=for_msm,
        )
        if found is not None:
            return found

        def on_coset(values: np.ndarray) -> np.ndarray:
            padded = np.zeros((domain.size, 4), dtype=np.uint64)
            padded[: len(values)] = values
            return self.coset_ntt(self.intt(padded, domain), domain, shift)

        quotient = self.quotient_pointwise(on_coset(a), on_coset(b), on_coset(c), scale=scale)
        return self.coset_intt(quotient, domain, shift) if coefficients else quotient

    def quotient_pointwise(
        self, a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int
    ) -> np.ndarray:
        """``(a·b − c)·scale`` elementwise."""
        return self._call("cuzk_quotient_pointwise", a=a, b=b, c=c, scale=scale)

    def gather_scalars(self, values: np.ndarray, indices: list[np.ndarray], label: str) -> list:
        """``values[rows]`` for each index array: host arrays, or handles this backend's MSMs
        take as scalars (gathered on its device)."""
        return self._call("cuzk_gather_scalars", values=values, indices=indices, label=label)

    def msm_ahead(self, bases: Any, scalars: Any, label: str, group: str) -> bool:
        """Tell the backend an MSM over ``scalars`` (the same object) will come later, with the
        profile's window for ``label``: it may start the MSM's scalar work beside its device
        work meanwhile. Whether it took the hint."""
        window_bits = self._profile_window(label)
        return self._call(  # type: ignore[no-any-return]
            "cuzk_msm_ahead",
            bases=bases,
            scalars=scalars,
            window_bits=window_bits,
            label=label,
            group=group,
        )

    def msm_g1(
        self, bases: Any, scalars: np.ndarray | Any, label: str, window_bits: int | None = None
    ) -> G1Affines:
        """G1 MSM; window bits from the profile's entry for ``label`` unless given."""
        return self.msm_g1_pending(bases, scalars, label, window_bits).result()

    def msm_g2(
        self, bases: Any, scalars: np.ndarray | Any, label: str, window_bits: int | None = None
    ) -> G2Affines:
        """G2 MSM; window bits from the profile's entry for ``label`` unless given."""
        return self.msm_g2_pending(bases, scalars, label, window_bits).result()

    def msm_g1_pending(
        self, bases: Any, scalars: np.ndarray | Any, label: str, window_bits: int | None = None
    ) -> Pending[G1Affines]:
        """:meth:`msm_g1` whose host work may still be queued in the calling thread's
        :class:`~cuzk_core.host_work.HostWork` (see the hook)."""
        return self._msm_pending("cuzk_msm_g1", bases, scalars, label, window_bits)

    def msm_g2_pending(
        self, bases: Any, scalars: np.ndarray | Any, label: str, window_bits: int | None = None
    ) -> Pending[G2Affines]:
        """:meth:`msm_g2` whose host work may still be queued (see :meth:`msm_g1_pending`)."""
        return self._msm_pending("cuzk_msm_g2", bases, scalars, label, window_bits)

    def _msm_pending(
        self, hook: str, bases: Any, scalars: Any, label: str, window_bits: int | None
    ) -> Pending[Any]:
        if window_bits is None:
            window_bits = self._profile_window(label)
        total = self._call(hook, bases=bases, scalars=scalars, window_bits=window_bits, label=label)
        return Ready(total) if isinstance(total, G1Affines | G2Affines) else total

    def prepare(self) -> bool:
        """Let the backend do its one-time work; whether it had any."""
        return bool(self._call("cuzk_prepare"))

    def fixed_base_g1(self, base: G1Affine, scalars: np.ndarray) -> G1Affines:
        """``scalarᵢ·base`` in G1 (the core's reference when the backend leaves the hook out)."""
        return self._call("cuzk_fixed_base_g1", base=base, scalars=scalars)

    def fixed_base_g2(self, base: G2Affine, scalars: np.ndarray) -> G2Affines:
        """``scalarᵢ·base`` in G2 (the core's reference when the backend leaves the hook out)."""
        return self._call("cuzk_fixed_base_g2", base=base, scalars=scalars)

    def decode_snarkjs_points(
        self, raw: np.ndarray, group: str
    ) -> tuple[G1Affines | G2Affines, np.ndarray]:
        """snarkjs points (``(n, 96|192)`` bytes) → a canonical batch and a status per point."""
        return self._call("cuzk_decode_snarkjs_points", raw=raw, group=group)

    def implements(self, hook: str) -> bool:
        """Whether the backend itself implements ``hook`` (not the core's fallback for it)."""
        impls = getattr(self._hook, hook).get_hookimpls()
        return any(impl.plugin_name == BACKEND_SLOT for impl in impls)

    def _profile_window(self, label: str) -> int | None:
        windows = self.ctx.profile.msm.window_bits
        return windows.for_msm(label) if hasattr(windows, label) else None

    def clock(self) -> Clock:
        """The clock the bench times this backend with: its device clock, else the host's."""
        return self._call("cuzk_bench_clock")

    def device_memory(self) -> int | None:
        """Bytes of device memory in use, or None for a host-only backend."""
        return self._hook.cuzk_device_memory(ctx=self.ctx)
