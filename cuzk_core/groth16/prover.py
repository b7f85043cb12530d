"""The Groth16 prover: it orchestrates the backend's hooks and owns every phase span.

It never knows which backend runs: it calls the :class:`~cuzk_core.backend.Backend` façade.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.domain import EvaluationDomain
from cuzk_core.errors import CuzkError, FormatError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.assembly import ProofAssembly
from cuzk_core.groth16.keys import Proof, ProvingKey, query_indices
from cuzk_core.groth16.qap import QuotientConvention
from cuzk_core.groth16.sources import Assignment, KeySource, WitnessSource
from cuzk_core.host_work import Deferred, HostWork, Pending, Runner
from cuzk_core.layout import G1Affines, G2Affines, limbs_to_ints
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.r1cs import R1CSMatrices
from cuzk_core.timing import Span

_R = FR_MODULUS
PROVE_STEPS = 11
"""How many progress steps :func:`prove` reports."""


class UnsatisfiedWitness(CuzkError):
    """The witness does not satisfy the constraints (found before any MSM work)."""


@attrs.frozen
class ProofResult:
    """A proof, the public inputs it is for (without the leading 1), and its constraint count
    (the circuit's rows, Groth16's input rows not counted)."""

    proof: Proof
    public_inputs: list[int]
    num_constraints: int


def proof_randomness(seed: int | None) -> tuple[int, int]:
    """The blinding scalars r, s: fresh, or derived from ``seed`` for byte-identical proofs."""
    if seed is None:
        return secrets.randbelow(_R), secrets.randbelow(_R)
    digest = hashlib.sha512(f"cuzk proof randomness {seed}".encode()).digest()
    return int.from_bytes(digest[:32], "big") % _R, int.from_bytes(digest[32:], "big") % _R


def _sparse_queries(
    backend: Backend, matrices: R1CSMatrices, witness: np.ndarray | Any, which: str
) -> list[Any]:
    """The witness entries of the variables each of ``which``'s matrices (``"ab"``, ``"b"``)
    uses (a bellperson key's queries leave the others out), gathered by ``backend``: host
    arrays, or its own handles when it gathers on its device."""
    num_vars = matrices.num_inputs + matrices.num_aux
    indices = [query_indices(getattr(matrices, name), num_vars) for name in which]
    return backend.gather_scalars(witness, indices, "queries")


def with_queries(backend: Backend, assignment: Assignment) -> Assignment:
    """``assignment`` with the A and B query scalars a sparse key takes, gathered now on the
    host (the daemon's synthesis stage: in its proving stage the gathers' threads waited for
    the GIL behind the next job's synthesis, ~28 ms of msm_a a job on the H200); unchanged
    when ``backend`` gathers them itself, on its device in the proving stage."""
    if assignment.queries is not None or backend.implements("cuzk_gather_scalars"):
        return assignment
    a, b = _sparse_queries(backend, assignment.matrices, assignment.witness, "ab")
    return attrs.evolve(assignment, queries=(a, b))


def _query_scalars(
    backend: Backend, pk: ProvingKey, assignment: Assignment, which: str = "ab"
) -> list[Any]:
    """The MSM scalars of the A and/or B queries (``which``): the whole witness for a dense
    key, else the variables each matrix uses (gathered in advance, or now by ``backend``)."""
    witness = assignment.witness
    if pk.dense_ab:
        return [witness for _ in which]
    if assignment.queries is not None:
        return [assignment.queries["ab".index(name)] for name in which]
    return _sparse_queries(backend, assignment.matrices, witness, which)


def _query_lengths(pk: ProvingKey, matrices: R1CSMatrices) -> tuple[int, int]:
    """How many entries :func:`_query_scalars` will return for the A and B queries."""
    num_vars = matrices.num_inputs + matrices.num_aux
    if pk.dense_ab:
        return num_vars, num_vars
    return len(query_indices(matrices.a, num_vars)), len(query_indices(matrices.b, num_vars))


class KeyMismatch(FormatError):
    """The proving key was made for another circuit (its point counts differ)."""


def _check_key_matches(
    pk: ProvingKey,
    matrices: R1CSMatrices,
    domain: EvaluationDomain,
    convention: QuotientConvention,
) -> None:
    a_count, b_count = _query_lengths(pk, matrices)
    expected = {
        "ic": (len(pk.vk.ic), matrices.num_inputs),
        "h": (len(pk.h), convention.h_points(domain)),
        "l": (len(pk.l), matrices.num_aux),
        "a": (len(pk.a), a_count),
        "b_g1": (len(pk.b_g1), b_count),
        "b_g2": (len(pk.b_g2), b_count),
    }
    for name, (have, need) in expected.items():
        if have != need:
            raise KeyMismatch(
                f"the parameters do not match this circuit: {name} has {have} points, "
                f"the circuit needs {need}"
            )


def keeps_products(backend: Backend) -> bool:
    """Whether ``backend`` may keep A·z, B·z, C·z where it made them (its ``for_quotient``):
    when it implements both readers, its own witness check and H. (Should its H decline a call,
    the core's composition turns the handles into host arrays by ``np.asarray``.)"""
    return all(
        backend.implements(hook) for hook in ("cuzk_first_unsatisfied", "cuzk_quotient_on_coset")
    )


def keeps_witness(backend: Backend) -> bool:
    """Whether ``backend`` may keep a native circuit's witness where it made it (its witness
    hook's ``for_prover``): when every reader of it in a proof is that backend's own hook (the
    R1CS products, the scalar gathers, the G1 and G2 MSMs; B·G2 on this backend too), the
    public inputs read by ``np.asarray``."""
    hooks = (
        "cuzk_witness",
        "cuzk_evaluate_r1cs",
        "cuzk_gather_scalars",
        "cuzk_msm_g1",
        "cuzk_msm_g2",
    )
    return backend.b_g2 is backend and all(backend.implements(hook) for hook in hooks)


def evaluated(backend: Backend, assignment: Assignment) -> Assignment:
    """``assignment`` with its products A·z, B·z, C·z, the witness checked on every row first
    (:class:`UnsatisfiedWitness` names the first failing one); without C rows, c = a ⊙ b."""
    if assignment.products is not None:
        return assignment
    matrices = assignment.matrices
    kept = assignment.has_c and keeps_products(backend)
    a, b, c = backend.evaluate_r1cs(matrices, assignment.witness, for_quotient=kept)
    if assignment.has_c:
        failing = backend.first_unsatisfied(a, b, c)
        if failing is not None:
            name = matrices.row_name(failing)
            named = f" '{name}'" if name is not None else ""
            raise UnsatisfiedWitness(f"the witness does not satisfy constraint {failing}{named}")
    else:
        c = backend.quotient_pointwise(a, b, np.zeros_like(a), scale=1)
    return attrs.evolve(assignment, products=(a, b, c))


def prove(
    backend: Backend,
    source: WitnessSource,
    key: KeySource,
    *,
    seed: int | None = None,
    progress: Progress | None = None,
) -> ProofResult:
    """Prove ``source`` with ``key`` on ``backend``; every phase runs in its span.

    The prover does the Groth16 bookkeeping: the source's rows come with the input rows, the
    key says how H is computed (the convention it was made for), and when the rows carry C the
    witness is checked before any MSM. B·G2 runs on ``backend.b_g2``, beside the G1 MSMs when
    that is another (CPU) backend.
    """
    progress = progress or NullProgress()
    convention = key.convention

    def phase(name: str, on: Backend = backend) -> contextlib.AbstractContextManager[Span]:
        return phase_span(backend, name, on.name)

    with phase("prepare"):  # one-time backend work (kernel builds) kept out of the phases below
        backend.prepare()
        if backend.b_g2 is not backend:
            backend.b_g2.prepare()
    with phase("synthesis"):
        assignment = evaluated(backend, source.assign(backend))
        matrices, witness = assignment.matrices, assignment.witness
        assert assignment.products is not None
        a, b, c = assignment.products
    progress.step("synthesis")
    num_inputs = matrices.num_inputs
    domain = convention.domain(matrices.num_constraints)

    with phase("load_params"):
        pk = key.load(backend)
        _check_key_matches(pk, matrices, domain, convention)
    progress.step("load_params")

    b_g2_backend = backend.b_g2
    queries = {"h": pk.h, "a": pk.a, "b_g1": pk.b_g1, "l": pk.l}  # uploaded in the MSMs' order
    bases: dict[str, Any] = {}
    pinned = None
    try:  # a failing step releases what the steps before it uploaded and pinned
        with phase("pin"):
            pinned = backend.pin([q.coords for q in queries.values()], "params")
            for name, points in queries.items():
                bases[name] = backend.upload(points, name)
            bases["b_g2"] = b_g2_backend.upload(pk.b_g2, "b_g2")
        progress.step("pin")

        # The blinding terms are host work on this thread (cuzk_core.host_work): an accelerated
        # backend runs them while its device computes, a CPU backend's phases use the host, so
        # there they wait until asked for (in assemble). The A and B query scalars go to a host
        # thread beside an accelerator (numpy, mostly without the GIL), unless the backend
        # gathers them itself: then the first MSM that takes them asks for them on this thread.
        with contextlib.ExitStack() as threads:
            pool = threads.enter_context(ThreadPoolExecutor(max_workers=1))
            gathers_itself = backend.implements("cuzk_gather_scalars")
            gatherer: Runner = (
                threads.enter_context(ThreadPoolExecutor(max_workers=1))
                if backend.accelerated and not gathers_itself
                else Deferred()
            )
            query_scalars = gatherer.submit(_query_scalars, backend, pk, assignment)
            b_g2_scalars = query_scalars
            if gathers_itself and b_g2_backend is not backend:  # its handles serve it alone
                b_g2_scalars = pool.submit(_query_scalars, b_g2_backend, pk, assignment, "b")
            host = threads.enter_context(HostWork().beside_device())
            assembly = ProofAssembly(pk.vk, *proof_randomness(seed), host)
            with phase("ntt_h"):  # H may stay on the device: held here until msm_h takes it
                held = {"h": convention.compute(backend, a, b, c, domain, for_msm=True)}
            progress.step("ntt_h")

            # B·G2 on a CPU backend runs beside the device's G1 work; its span shows the overlap.
            def msm_b_g2() -> Pending[G2Affines]:
                with phase("msm_b_g2", b_g2_backend):
                    scalars = b_g2_scalars.result()[-1]
                    return b_g2_backend.msm_g2_pending(bases["b_g2"], scalars, "b_g2")

            b_g2_future = pool.submit(msm_b_g2) if b_g2_backend is not backend else None
            # The sums may come back pending: the backend's host work for each (the GPU's
            # windows' combination) then runs beside the next MSM's device work. So Σl goes
            # last: the last MSM's host work has no device work left beside it, and Σl's is
            # G1's (~1 ms at 2^20, B·G2's ~3) with no blinding term after it (r·B₁ runs beside
            # A and Σl, s·A beside Σl). B·G2 goes right before B·G1: the two take the same
            # scalars, and a backend that keeps a sort for later MSMs over them
            # (msm.share_sorts) gives B·G1 B·G2's sort and width, which ties in G1 where the
            # groups' size rules differ (bench/NOTES.md, round 35). Both go before A and Σl,
            # whose sorts a backend may run ahead beside B·G2's (msm.sorts_ahead): a GPU's
            # G2 pass leaves room for a sort, its G1 passes little (round 36).
            l_scalars = witness[num_inputs:]  # one object: the hint names what the MSM gets
            g1_msms = (
                ("h", lambda: held.pop("h"), None),
                ("b_g1", lambda: query_scalars.result()[1], assembly.sum_b_g1),
                ("a", lambda: query_scalars.result()[0], assembly.sum_a),
                ("l", lambda: l_scalars, None),
            )
            results: dict[str, Pending[G1Affines]] = {}
            b_g2_sum: Pending[G2Affines] | None = None
            later = LaterMsms(backend, bases, query_scalars, l_scalars, b_g2_future is None)
            for name, scalars, then in g1_msms:
                if name == "b_g1":
                    later.name_a_and_l()
                if name == "b_g1" and b_g2_future is None:
                    b_g2_sum = msm_b_g2()
                    progress.step("msm_b_g2")
                with phase(f"msm_{name}"):
                    if name == "h":
                        later.name_b()
                    results[name] = backend.msm_g1_pending(bases[name], scalars(), name)
                if then is not None:
                    then(results[name])
                progress.step(f"msm_{name}")
            if b_g2_future is not None:  # B·G2 on the host: the rest of the host work beside it
                host.run_while(lambda: not b_g2_future.done())
                b_g2_sum = b_g2_future.result()
                progress.step("msm_b_g2")
            assert b_g2_sum is not None

            with phase("assemble"):
                proof = assembly.proof(results["h"], results["l"], b_g2_sum)
            progress.step("assemble")
    except BaseException:
        with contextlib.suppress(Exception):  # the phase's own error is the one to report
            _release(backend, bases, pinned)
        raise

    with phase("unpin"):
        _release(backend, bases, pinned)
    progress.step("unpin")
    circuit_rows = matrices.num_constraints - num_inputs
    return ProofResult(proof, limbs_to_ints(np.asarray(witness[1:num_inputs])), circuit_rows)


@attrs.define
class LaterMsms:
    """The proof's later MSMs named to a backend that can start their scalar work ahead
    (``cuzk_msm_ahead``) when the profile asks (``msm.sorts_ahead``): B's beside H's device
    work, A's and Σl's beside B's."""

    backend: Backend
    bases: dict[str, Any]
    query_scalars: Any
    """The A and B query scalars' future (their gather runs on this thread when first asked)."""
    l_scalars: Any
    b_g2_here: bool
    """Whether B·G2 runs on ``backend`` (then B's MSM after H is B·G2's, else B·G1's)."""

    def _wanted(self) -> bool:  # else the A/B gather stays where the first MSM asks for it
        msm = self.backend.ctx.profile.msm
        return msm.sorts_ahead and self.backend.implements("cuzk_msm_ahead")

    def name_b(self) -> None:
        """Before H's MSM: B's."""
        if self._wanted():
            b_scalars = self.query_scalars.result()[1]
            name, group = ("b_g2", "g2") if self.b_g2_here else ("b_g1", "g1")
            self.backend.msm_ahead(self.bases[name], b_scalars, name, group)

    def name_a_and_l(self) -> None:
        """Before B's MSMs: A's and Σl's."""
        if self._wanted():
            self.backend.msm_ahead(self.bases["a"], self.query_scalars.result()[0], "a", "g1")
            self.backend.msm_ahead(self.bases["l"], self.l_scalars, "l", "g1")


def _release(backend: Backend, bases: dict, pinned: object) -> None:
    """Free the proof's uploads (each by the backend that made it) and undo its pinning (None:
    nothing was pinned)."""
    for name, handle in bases.items():
        (backend.b_g2 if name == "b_g2" else backend).release(handle)
    if pinned is not None:
        backend.unpin(pinned)


def phase_span(
    backend: Backend, name: str, backend_name: str | None = None
) -> contextlib.AbstractContextManager[Span]:
    """Phase ``name``'s span on ``backend``'s timer (named for ``backend_name``, else the
    backend), with the profile's test-only ``debug.sleep_ms`` slowdown inside when it names the
    phase."""
    span = backend.ctx.timer.span(name, backend=backend_name or backend.name)
    planted = dict(backend.ctx.profile.debug.sleep_ms).get(name)
    return span if planted is None else _planted_delay(span, planted)


@contextlib.contextmanager
def _planted_delay(span: contextlib.AbstractContextManager[Span], ms: int) -> Iterator[Span]:
    """Sleep ``ms`` inside ``span``."""
    with span as record:
        time.sleep(ms / 1000)
        yield record
