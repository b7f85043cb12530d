"""The prover's view of a backend: a typed façade over the hooks, so nothing else touches pluggy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuzk_core.curve.g1 import g1_fixed_base_batch
from cuzk_core.curve.g2 import g2_fixed_base_batch
from cuzk_core.errors import BackendUnavailable
from cuzk_core.layout import G1Affines, G2Affines, limbs_to_ints
from cuzk_core.timing import Timer

if TYPE_CHECKING:
    import pluggy

    from cuzk_core.bench.clock import Clock
    from cuzk_core.curve.g1 import G1Affine
    from cuzk_core.curve.g2 import G2Affine
    from cuzk_core.domain import EvaluationDomain
    from cuzk_core.profile import Profile
    from cuzk_core.r1cs import R1CSMatrices


@attrs.frozen
class BackendInfo:
    """What a backend says about itself; ``cuzk backends`` prints it."""

    name: str
    version: str
    available: bool
    reason: str = ""
    source: str = ""
    """Where it came from: the entry point and distribution (filled in by the plugin loader)."""
    device: str = attrs.field(default="cpu", kw_only=True)
    """Where the hooks compute: ``"cpu"`` for the host, else the accelerator (e.g. ``"cuda"``)."""

    @property
    def accelerated(self) -> bool:
        """True when the hooks compute on an accelerator rather than the host CPU."""
        return self.device != "cpu"


@attrs.frozen
class BackendContext:
    """Passed to every hook: which backend is active, under which profile, timed by which timer."""

    backend: str
    profile: Profile
    timer: Timer = attrs.field(factory=Timer)


@attrs.frozen(eq=False)
class Synthesized:
    """A synthesized circuit: its constraint matrices and the witness ``z = [1, inputs…, aux…]``."""

    matrices: R1CSMatrices
    witness: np.ndarray


def reference_fixed_base_g1(base: G1Affine, scalars: np.ndarray) -> G1Affines:
    """``scalarᵢ·base`` in G1 by the core's plain-Python fixed-base method (the oracle)."""
    return G1Affines.from_points(g1_fixed_base_batch(base, limbs_to_ints(scalars)))


def reference_fixed_base_g2(base: G2Affine, scalars: np.ndarray) -> G2Affines:
    """``scalarᵢ·base`` in G2 by the core's plain-Python fixed-base method (the oracle)."""
    return G2Affines.from_points(g2_fixed_base_batch(base, limbs_to_ints(scalars)))


def _must(result: Any, hook: str, backend: str) -> Any:
    if result is None:
        raise BackendUnavailable(f"backend {backend!r} does not implement {hook}")
    return result


class Backend:
    """One method per hook, bound to the active backend; the prover calls only these."""

    def __init__(self, pm: pluggy.PluginManager, ctx: BackendContext) -> None:
        self._hook = pm.hook
        self.ctx = ctx

    @property
    def name(self) -> str:
        """The active backend's name."""
        return self.ctx.backend

    def _call(self, hook: str, **kwargs: Any) -> Any:
        caller = getattr(self._hook, hook)
        return _must(caller(ctx=self.ctx, **kwargs), hook, self.ctx.backend)

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
        """Run a native circuit: matrices and witness."""
        return self._call("cuzk_synthesize", circuit=circuit)

    def evaluate_r1cs(
        self, matrices: R1CSMatrices, witness: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(A·z, B·z, C·z)``."""
        return self._call("cuzk_evaluate_r1cs", matrices=matrices, witness=witness)

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

    def quotient_pointwise(
        self, a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int
    ) -> np.ndarray:
        """``(a·b − c)·scale`` elementwise."""
        return self._call("cuzk_quotient_pointwise", a=a, b=b, c=c, scale=scale)

    def msm_g1(
        self, bases: Any, scalars: np.ndarray, label: str, window_bits: int | None = None
    ) -> G1Affines:
        """G1 MSM; window bits from the profile's entry for ``label`` unless given."""
        if window_bits is None:
            window_bits = self._profile_window(label)
        return self._call(
            "cuzk_msm_g1", bases=bases, scalars=scalars, window_bits=window_bits, label=label
        )

    def msm_g2(
        self, bases: Any, scalars: np.ndarray, label: str, window_bits: int | None = None
    ) -> G2Affines:
        """G2 MSM; window bits from the profile's entry for ``label`` unless given."""
        if window_bits is None:
            window_bits = self._profile_window(label)
        return self._call(
            "cuzk_msm_g2", bases=bases, scalars=scalars, window_bits=window_bits, label=label
        )

    def prepare(self) -> bool:
        """Let the backend do its one-time work (optional hook); whether it had any."""
        return bool(self._hook.cuzk_prepare(ctx=self.ctx))

    def fixed_base_g1(self, base: G1Affine, scalars: np.ndarray) -> G1Affines:
        """``scalarᵢ·base`` in G1; the core's reference when the backend leaves the hook out."""
        found = self._hook.cuzk_fixed_base_g1(ctx=self.ctx, base=base, scalars=scalars)
        return found if found is not None else reference_fixed_base_g1(base, scalars)

    def fixed_base_g2(self, base: G2Affine, scalars: np.ndarray) -> G2Affines:
        """``scalarᵢ·base`` in G2; the core's reference when the backend leaves the hook out."""
        found = self._hook.cuzk_fixed_base_g2(ctx=self.ctx, base=base, scalars=scalars)
        return found if found is not None else reference_fixed_base_g2(base, scalars)

    def _profile_window(self, label: str) -> int | None:
        windows = self.ctx.profile.msm.window_bits
        return windows.for_msm(label) if hasattr(windows, label) else None

    def device_clock(self) -> Clock | None:
        """The backend's device clock for the bench (optional hook), or None to use the host's."""
        return self._hook.cuzk_bench_clock(ctx=self.ctx)

    def device_memory(self) -> int | None:
        """Bytes of device memory in use (optional hook), or None for a host-only backend."""
        return self._hook.cuzk_device_memory(ctx=self.ctx)

    def sibling(self, name: str) -> Backend:
        """A façade for backend ``name`` sharing this one's profile and timer (e.g. B·G2 on CPU)."""
        return Backend._from_hook(self._hook, attrs.evolve(self.ctx, backend=name))

    @classmethod
    def _from_hook(cls, hook: Any, ctx: BackendContext) -> Backend:
        backend = cls.__new__(cls)
        backend._hook = hook
        backend.ctx = ctx
        return backend
