"""The hook contract: every hook a backend implements, the types crossing it, grouped by phase.

A proof talks to one backend. Each backend gets its own plugin manager holding these specs, the
core's reference fallbacks for the optional hooks (registered ``trylast``) and that backend's
plugin alone, so an implementation never checks whose turn it is and no plugin can answer for
another (see :mod:`cuzk_core.plugins`). Arrays crossing a hook use the canonical layouts of
:mod:`cuzk_core.layout`: scalars ``(n, 4)`` uint64 little-endian limbs in canonical form, G1
affine ``(n, 2, 6)``, G2 affine ``(n, 2, 2, 6)`` with an explicit infinity mask. A backend
converts at its boundary. Bases passed to an MSM may instead be a handle the same backend
returned from ``cuzk_upload``: that is how a proving key stays resident on a device across proofs;
its scalars, one from ``cuzk_gather_scalars``: so a witness on the device is not copied back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from cuzk_core import PROJECT_NAME
from cuzk_core.timing import Timer

if TYPE_CHECKING:
    import numpy as np

    from cuzk_core.bench.clock import Clock
    from cuzk_core.curve.g1 import G1Affine
    from cuzk_core.curve.g2 import G2Affine
    from cuzk_core.domain import EvaluationDomain
    from cuzk_core.gadgets.poseidon.batch import PoseidonTable
    from cuzk_core.layout import G1Affines, G2Affines
    from cuzk_core.profile import Profile
    from cuzk_core.r1cs import R1CSMatrices
    from cuzk_core.witness.program import WitnessProgram

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


# -------------------------------------------------------------------------------------------------
# the types crossing the hooks
# -------------------------------------------------------------------------------------------------


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
    """Passed to every hook: the active backend's name, its profile, and the proof's timer."""

    backend: str
    profile: Profile
    timer: Timer = attrs.field(factory=Timer)


@attrs.frozen(eq=False)
class Synthesized:
    """A synthesized circuit: its constraint matrices and the witness ``z = [1, inputs…, aux…]``
    (a host array, or the backend's handle where it kept z: ``cuzk_witness``'s ``for_prover``)."""

    matrices: R1CSMatrices
    witness: np.ndarray | Any


# -------------------------------------------------------------------------------------------------
# backend info
# -------------------------------------------------------------------------------------------------


@hookspec
def cuzk_backend_info() -> BackendInfo:
    """Describe the backend this plugin provides; the loader asks each plugin once.

    ``cuzk backends`` lists the answers; a plugin without this hook is not a backend.

    :return: the backend's name, version and whether it can run here (and why not).
    """


@hookspec(firstresult=True)
def cuzk_prepare(ctx: BackendContext) -> bool:
    """Get ready to prove: one-time work such as building kernels. Optional.

    The prover calls it before its first phase, inside its own ``prepare`` span, so one-time
    costs (a GPU backend's kernel builds, 10–20 s cold, milliseconds from its disk cache) stay
    out of the proving phases and show once. It must be cheap when already prepared. Stops at
    first non-None result.

    :param ctx: the active backend, profile and timer.
    :return: True (the reference fallback answers False: nothing to prepare).
    """


# -------------------------------------------------------------------------------------------------
# allocation: host buffers under the profile's pinning strategy, device buffers, release
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_alloc_host(ctx: BackendContext, shape: tuple[int, ...], dtype: str, purpose: str) -> Any:
    """Allocate a zeroed host buffer for a large array (proving key, witness, NTT scratch).

    A GPU backend may return page-locked memory when ``ctx.profile.memory.pinning`` is ``pool``.
    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param shape: numpy shape of the buffer.
    :param dtype: numpy dtype name, e.g. ``"uint64"``.
    :param purpose: what the buffer holds (``"params.h"``, ``"witness"``, …), for spans and logs.
    :return: a writable ``numpy.ndarray`` of that shape and dtype.
    """


@hookspec(firstresult=True)
def cuzk_pin(ctx: BackendContext, arrays: list[np.ndarray], purpose: str) -> Any:
    """Make host arrays ready for fast transfer, per ``ctx.profile.memory.pinning``.

    Runs inside the ``pin`` phase span; its cost must show there. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param arrays: the host arrays that will be copied to the device.
    :param purpose: what the arrays hold, for spans and logs.
    :return: an opaque handle for :func:`cuzk_unpin` (any non-None value when nothing was done).
    """


@hookspec(firstresult=True)
def cuzk_unpin(ctx: BackendContext, handle: Any) -> bool:
    """Undo :func:`cuzk_pin`. Runs inside the ``unpin`` phase span. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param handle: what :func:`cuzk_pin` returned.
    :return: ``True``.
    """


@hookspec(firstresult=True)
def cuzk_upload(ctx: BackendContext, points: G1Affines | G2Affines, purpose: str) -> Any:
    """Place MSM bases where the backend computes on them, per ``ctx.profile.memory.key_storage``.

    A host backend returns ``points`` unchanged. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param points: bases in the canonical layout.
    :param purpose: which query they are (``"a"``, ``"b_g1"``, ``"b_g2"``, ``"l"``, ``"h"``).
    :return: a handle accepted as ``bases`` by this backend's MSM hooks.
    """


@hookspec(firstresult=True)
def cuzk_release(ctx: BackendContext, handle: Any) -> bool:
    """Free what :func:`cuzk_upload` or :func:`cuzk_alloc_host` returned, as soon as it is dead.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param handle: the buffer or handle to free.
    :return: ``True``.
    """


# -------------------------------------------------------------------------------------------------
# synthesis: witness z, then a, b, c = A·z, B·z, C·z
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_synthesize(ctx: BackendContext, circuit: Any) -> Synthesized:
    """Run a native circuit's gadgets: its constraint matrices and the full assignment.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param circuit: an object with ``synthesize(cs)`` (see :mod:`cuzk_core.circuits`).
    :return: the matrices and the witness ``z = [1, inputs…, aux…]`` as ``(m, 4)`` scalars.
    """


@hookspec(firstresult=True)
def cuzk_witness(
    ctx: BackendContext,
    program: WitnessProgram,
    inputs: np.ndarray,
    hints: np.ndarray,
    for_prover: bool,
) -> np.ndarray | Any:
    """Run a compiled circuit's witness program: z from the proof's inputs and hints. Optional.

    The ops (see :mod:`cuzk_core.witness.program`) read only inputs and earlier ops; those of one
    level are independent. The result must equal the core's reference,
    :func:`cuzk_core.witness.evaluate.evaluate_program`, bit for bit. Stops at first non-None
    result.

    :param ctx: the active backend, profile and timer.
    :param program: the ops, the constraint matrices their SOLVE ops read and the ``lin`` rows
        their BIT ops decompose.
    :param inputs: ``(num_inputs, 4)`` scalars, ONE first.
    :param hints: ``(num_hints, 4)`` scalars: the values the circuit supplies itself.
    :param for_prover: the caller hands z only to this backend's hooks (the R1CS products, the
        scalar gathers, the MSMs) and reads the public inputs by ``np.asarray`` of its rows:
        the backend may return a handle those hooks take (kept on its device, not downloaded),
        which must slice by rows, have a length and turn into the host array by ``np.asarray``;
        it returns once z is computed (the witness span times it, and its errors are its own).
    :return: the witness ``z = [1, inputs…, aux…]`` as ``(m, 4)`` scalars (or, with
        ``for_prover``, a handle to them).
    """


@hookspec(firstresult=True)
def cuzk_evaluate_r1cs(
    ctx: BackendContext, matrices: R1CSMatrices, witness: np.ndarray, for_quotient: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[Any, Any, Any]:
    """Evaluate the constraint rows on the witness: sparse matrix–vector products mod r.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param matrices: A, B, C in CSR form (rows are constraints, columns index ``witness``).
    :param witness: ``(m, 4)`` scalars, or this backend's handle from :func:`cuzk_witness`.
    :param for_quotient: the caller hands the products only to this backend's
        ``cuzk_first_unsatisfied`` and ``cuzk_quotient_on_coset`` (the prover's check and H):
        the backend may return handles those take (kept on its device, not downloaded), which
        must slice by rows, have a length and turn into the host arrays by ``np.asarray``.
    :return: ``(a, b, c)``, each ``(num_constraints, 4)`` scalars (or, with ``for_quotient``,
        such handles).
    """


@hookspec(firstresult=True)
def cuzk_first_unsatisfied(ctx: BackendContext, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> int:
    """The witness check: the first row ``i`` with ``a[i]·b[i] ≠ c[i]``. Optional.

    Without it the core checks ``(a·b − c)`` from ``cuzk_quotient_pointwise`` on the host.
    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param a: ``(n, 4)`` scalars, A·z (as ``cuzk_evaluate_r1cs`` returned them: this backend's
        own handles when it was asked ``for_quotient``; so for b and c).
    :param b: ``(n, 4)`` scalars, B·z.
    :param c: ``(n, 4)`` scalars, C·z.
    :return: the first failing row, or ``n`` when every row holds.
    """


@hookspec(firstresult=True)
def cuzk_poseidon(ctx: BackendContext, states: np.ndarray, table: PoseidonTable) -> np.ndarray:
    """Many Poseidon permutations: each state permuted (a circuit's instance, e.g. a Merkle tree
    hashed level by level, outside its gadgets). Optional.

    The result must equal the core's reference,
    :func:`cuzk_core.gadgets.poseidon.batch.reference_permute`, bit for bit. Stops at first
    non-None result.

    :param ctx: the active backend, profile and timer.
    :param states: ``(n, t, 4)`` scalars, each below r.
    :param table: the instance: ``t``, ``half_full_rounds``, ``partial_rounds`` and ``words``,
        its constants in Montgomery form in the order the permutation reads them.
    :return: ``(n, t, 4)`` scalars, the permuted states (a new array).
    """


@hookspec(firstresult=True)
def cuzk_poseidon_layers(
    ctx: BackendContext,
    nodes: np.ndarray,
    layers: list[tuple[np.ndarray, np.ndarray]],
    table: PoseidonTable,
) -> np.ndarray:
    """Layers of 2-to-1 Poseidon hashes, each reading nodes given or hashed by earlier layers
    (a Merkle tree's levels, all at once). Optional.

    The nodes a layer reads are ``nodes`` followed by every earlier layer's results; layer j
    hashes ``poseidon_hash2(node[left[i]], node[right[i]])`` (lane 1 of the permutation of
    ``(0, left, right)``) for every i. Without the hook the core makes one ``cuzk_poseidon``
    call a layer. The result must equal
    :func:`cuzk_core.gadgets.poseidon.batch.reference_hash2_layers` bit for bit. Stops at first
    non-None result.

    :param ctx: the active backend, profile and timer.
    :param nodes: ``(n, 4)`` scalars, each below r.
    :param layers: per layer, ``(left, right)`` int64 arrays of one length, each index below the
        count of nodes before that layer (the core has checked them).
    :param table: the t = 3 instance, as for ``cuzk_poseidon``.
    :return: ``(Σ len(left), 4)`` scalars: every layer's results, layer after layer (a new array).
    """


# -------------------------------------------------------------------------------------------------
# NTT over Fr: natural order in and out; the domain carries ω (and so the root convention)
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_ntt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain) -> np.ndarray:
    """Evaluate the polynomial with coefficients ``values`` at ``ω^0 … ω^(n−1)``.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param values: ``(domain.size, 4)`` scalars, coefficients in natural order.
    :param domain: the evaluation domain (size and ω).
    :return: ``(domain.size, 4)`` evaluations in natural order (a new array).
    """


@hookspec(firstresult=True)
def cuzk_intt(ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain) -> np.ndarray:
    """Interpolate: the coefficients of the polynomial taking ``values`` at ``ω^i``.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param values: ``(domain.size, 4)`` evaluations in natural order.
    :param domain: the evaluation domain.
    :return: ``(domain.size, 4)`` coefficients in natural order (a new array).
    """


@hookspec(firstresult=True)
def cuzk_coset_ntt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
) -> np.ndarray:
    """Evaluate on the coset ``shift·⟨ω⟩``: scale coefficient i by ``shift^i``, then NTT.

    bellperson uses ``shift = 7``; snarkjs uses ``shift = ω_{2n}`` (the odd points of the 2n
    domain). Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param values: ``(domain.size, 4)`` coefficients.
    :param domain: the evaluation domain.
    :param shift: the coset shift, a nonzero element of Fr.
    :return: ``(domain.size, 4)`` evaluations on the coset.
    """


@hookspec(firstresult=True)
def cuzk_coset_intt(
    ctx: BackendContext, values: np.ndarray, domain: EvaluationDomain, shift: int
) -> np.ndarray:
    """Inverse of :func:`cuzk_coset_ntt`: iNTT, then scale coefficient i by ``shift^-i``.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param values: ``(domain.size, 4)`` evaluations on the coset.
    :param domain: the evaluation domain.
    :param shift: the coset shift used for the forward transform.
    :return: ``(domain.size, 4)`` coefficients.
    """


@hookspec(firstresult=True)
def cuzk_quotient_pointwise(
    ctx: BackendContext, a: np.ndarray, b: np.ndarray, c: np.ndarray, scale: int
) -> np.ndarray:
    """Compute ``(a·b − c)·scale`` elementwise in Fr (the quotient step of H).

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param a: ``(n, 4)`` scalars.
    :param b: ``(n, 4)`` scalars.
    :param c: ``(n, 4)`` scalars.
    :param scale: an element of Fr (``1/Z(shift)`` for bellperson, 1 for snarkjs).
    :return: ``(n, 4)`` scalars.
    """


@hookspec(firstresult=True)
def cuzk_quotient_on_coset(
    ctx: BackendContext,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    domain: EvaluationDomain,
    shift: int,
    scale: int,
    coefficients: bool,
    for_msm: bool,
) -> np.ndarray | Any:
    """H's whole computation in one call, so that a backend keeps its intermediates. Optional.

    a, b, c (each at most ``domain.size`` rows, zero-padded to it) are interpolated over the
    domain, evaluated on the coset ``shift·⟨ω⟩`` and combined as ``(a·b − c)·scale``; with
    ``coefficients`` the result is brought back by the coset iNTT. Without the hook the core
    composes ``cuzk_intt``, ``cuzk_coset_ntt``, ``cuzk_quotient_pointwise`` and
    ``cuzk_coset_intt``, which the result must equal bit for bit. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param a: ``(n, 4)`` scalars, ``n ≤ domain.size``: A·z (this backend's own handle from
        ``cuzk_evaluate_r1cs`` when it was asked ``for_quotient``; so for b and c).
    :param b: ``(n, 4)`` scalars: B·z.
    :param c: ``(n, 4)`` scalars: C·z.
    :param domain: the evaluation domain.
    :param shift: the coset's shift.
    :param scale: the factor of the pointwise step (1/Z on the coset, or 1).
    :param coefficients: bring the result back to coefficients (the coset iNTT).
    :param for_msm: the caller hands the result only to this backend's MSM hooks (the prover's
        H): the backend may return a handle they take as ``scalars`` (kept on its device, not
        downloaded), which must slice by rows and turn into the host array by ``np.asarray``.
    :return: ``(domain.size, 4)`` scalars: evaluations on the coset, or coefficients (or, with
        ``for_msm``, such a handle).
    """


# -------------------------------------------------------------------------------------------------
# MSM: Σ scalarᵢ·baseᵢ
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_gather_scalars(
    ctx: BackendContext, values: np.ndarray, indices: list[np.ndarray], label: str
) -> list[np.ndarray | Any]:
    """``values[indices[k]]`` (rows) for each k, as MSM scalars: a sparse key's A and B query
    scalars, the witness entries of the variables each matrix uses. Optional.

    Without it the core gathers on host threads (:func:`cuzk_core.gather.gather_rows`). A
    backend may instead return handles its own MSM hooks take as ``scalars``: a device backend
    gathers where it holds ``values`` (the witness it returned), or uploads them once for all
    the gathers, so the MSMs upload nothing. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param values: ``(m, 4)`` scalars, each below r, or this backend's handle from
        :func:`cuzk_witness`; not changed.
    :param indices: integer arrays, each entry below ``m`` (repeats and any order allowed).
    :param label: what is gathered (``"queries"`` or free text), for spans.
    :return: one host array ``(len(indices[k]), 4)``, or handle, per index array.
    """


@hookspec(firstresult=True)
def cuzk_msm_ahead(
    ctx: BackendContext, bases: Any, scalars: Any, window_bits: int | None, label: str, group: str
) -> bool:
    """The prover will ask for this MSM later in the proof: the backend may start the work that
    needs only its scalars (a GPU's digit sort) beside its device work in the meantime, for the
    MSM to take. A hint, not an order: an MSM never depends on it. Optional. Stops at first
    non-None result.

    :param ctx: the active backend, profile and timer.
    :param bases: what :func:`cuzk_msm_g1` or :func:`cuzk_msm_g2` will get as ``bases``.
    :param scalars: the very object that MSM will get as ``scalars``.
    :param window_bits: the window it will get, or ``None``.
    :param label: its label, for spans.
    :param group: ``"g1"`` or ``"g2"``.
    :return: whether the backend took the hint.
    """


@hookspec(firstresult=True)
def cuzk_msm_g1(
    ctx: BackendContext,
    bases: G1Affines | Any,
    scalars: np.ndarray,
    window_bits: int | None,
    label: str,
) -> G1Affines:
    """Multi-scalar multiplication in G1. Stops at first non-None result.

    :param ctx: the active backend, profile and timer (``ctx.profile.msm`` holds signed digits
        and split-0/1 settings).
    :param bases: ``n`` points, canonical layout or a handle from :func:`cuzk_upload`.
    :param scalars: ``(n, 4)`` scalars, each below r, or this backend's handle from
        :func:`cuzk_gather_scalars` or (rows of) :func:`cuzk_witness`.
    :param window_bits: the Pippenger window, or ``None`` for the backend's choice.
    :param label: which MSM this is (``"a"``, ``"b_g1"``, ``"l"``, ``"h"`` or free text), for spans.
    :return: the sum as a one-point batch (its infinity flag set when the sum is the identity);
        or, from a backend whose device work is done but whose host work is left while the
        calling thread has a :class:`~cuzk_core.host_work.HostWork` (a prover's), a
        :class:`~cuzk_core.host_work.Pending` of it queued there, so that the host work runs
        beside the thread's next device wait.
    """


@hookspec(firstresult=True)
def cuzk_msm_g2(
    ctx: BackendContext,
    bases: G2Affines | Any,
    scalars: np.ndarray,
    window_bits: int | None,
    label: str,
) -> G2Affines:
    """Multi-scalar multiplication in G2. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param bases: ``n`` points, canonical layout or a handle from :func:`cuzk_upload`.
    :param scalars: ``(n, 4)`` scalars, each below r, or this backend's handle from
        :func:`cuzk_gather_scalars` or (rows of) :func:`cuzk_witness`.
    :param window_bits: the Pippenger window, or ``None`` for the backend's choice.
    :param label: which MSM this is (``"b_g2"`` or free text), for spans.
    :return: the sum as a one-point batch, or a pending one as :func:`cuzk_msm_g1` says.
    """


# -------------------------------------------------------------------------------------------------
# fixed-base scalar multiplication (key generation); optional, see OPTIONAL_HOOKS
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_fixed_base_g1(ctx: BackendContext, base: G1Affine, scalars: np.ndarray) -> G1Affines:
    """Many multiples of one G1 point: ``scalarᵢ·base`` for every scalar (the setup's batches).

    Optional: a backend that leaves it out (or returns ``None``) gets the core's reference,
    :func:`cuzk_core.curve.g1.g1_fixed_base_batch`, which it must match bit for bit. Stops at
    first non-None result.

    :param ctx: the active backend, profile and timer.
    :param base: an affine point of the order-r subgroup, ``(x, y)`` as canonical ints, or
        ``None`` for infinity.
    :param scalars: ``(n, 4)`` scalars, each below r.
    :return: ``n`` points in the canonical layout; a scalar 0 (or a base at infinity) gives the
        point at infinity.
    """


@hookspec(firstresult=True)
def cuzk_fixed_base_g2(ctx: BackendContext, base: G2Affine, scalars: np.ndarray) -> G2Affines:
    """The same in G2: ``scalarᵢ·base`` for every scalar, matching
    :func:`cuzk_core.curve.g2.g2_fixed_base_batch`. Optional. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param base: an affine point of the order-r subgroup of the twist, ``((x0, x1), (y0, y1))``,
        or ``None`` for infinity.
    :param scalars: ``(n, 4)`` scalars, each below r.
    :return: ``n`` points in the canonical layout.
    """


# -------------------------------------------------------------------------------------------------
# key conversion (optional): a snarkjs zkey's points into the canonical layout
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_decode_snarkjs_points(
    ctx: BackendContext, raw: np.ndarray, group: str
) -> tuple[G1Affines | G2Affines, np.ndarray]:
    """snarkjs's points in bulk: each coordinate 48 bytes little-endian in Montgomery form
    (x·2^384 mod q), checked below q and on the curve, converted to canonical. Optional.

    Without it the core's numpy reference,
    :func:`cuzk_core.interop.points.reference_decode`, decodes; results must match it bit for
    bit. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :param raw: ``(n, 96)`` (G1: x, y) or ``(n, 192)`` (G2: x.c0, x.c1, y.c0, y.c1) uint8, as
        the points lie in the file; all zero is the point at infinity.
    :param group: ``"g1"`` or ``"g2"``.
    :return: the batch (a point that is not valid as zero coordinates) and ``(n,)`` uint8 status
        per point: 0 valid, 1 a coordinate not below q, 2 not on the curve.
    """


# -------------------------------------------------------------------------------------------------
# measurement (optional): device clocks and memory for the bench and the memory log
# -------------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def cuzk_bench_clock(ctx: BackendContext) -> Clock:
    """A clock that times the backend's work where it runs, e.g. with CUDA events. Optional.

    ``clock.time(work)`` calls ``work()``, waits for the device to finish, and returns the
    result and the elapsed milliseconds measured on the device. Without it the bench times with
    the host clock (the reference fallback). Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :return: an object with ``name`` (e.g. ``"cuda-events"``) and ``time(work)``, see
        :class:`cuzk_core.bench.clock.Clock`.
    """


@hookspec(firstresult=True)
def cuzk_device_memory(ctx: BackendContext) -> int:
    """Bytes of device memory in use now; called from the memory sampler's thread. Optional.

    A host-only backend leaves it out: the memory log then records host RSS only. Stops at
    first non-None result.

    :param ctx: the active backend, profile and timer.
    :return: bytes in use on the backend's device.
    """


OPTIONAL_HOOKS = frozenset(
    {
        "cuzk_prepare",
        "cuzk_msm_ahead",
        "cuzk_witness",
        "cuzk_first_unsatisfied",
        "cuzk_poseidon",
        "cuzk_poseidon_layers",
        "cuzk_quotient_on_coset",
        "cuzk_gather_scalars",
        "cuzk_fixed_base_g1",
        "cuzk_fixed_base_g2",
        "cuzk_decode_snarkjs_points",
        "cuzk_bench_clock",
        "cuzk_device_memory",
    }
)
"""Hooks a backend may leave out: :mod:`cuzk_core.fallbacks` answers for them (nothing to
prepare, the plain-Python witness evaluator and fixed-base reference, host-thread gathers, the
numpy snarkjs point decoder, the host clock) or the
caller does without (the witness check from the quotient hook, H from the NTT hooks, no device
memory)."""

HOOK_NAMES = tuple(sorted(name for name in tuple(globals()) if name.startswith("cuzk_")))
"""Every hook of the contract."""

REQUIRED_HOOKS = tuple(name for name in HOOK_NAMES if name not in OPTIONAL_HOOKS)
"""Every hook a backend must implement."""
