"""The engine's two stages over cuzk's prover: synthesis (stage 1, CPU) and proving (stage 2).

:func:`prove_prepared` is the one place that calls :func:`cuzk_core.groth16.prover.prove`, so a
change of the prover's signature is a change here only.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.circuits import get_circuit
from cuzk_core.engine.jobs import JobError, JobInput
from cuzk_core.engine.keys import KeyKind, KeySpec, ResidentKey
from cuzk_core.groth16.prover import ProofResult, evaluated, prove, with_queries
from cuzk_core.groth16.sources import Assignment, LoadedKey, NativeCircuit
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.progress import Progress


@attrs.frozen(eq=False)
class Prepared:
    """Stage 1's output: the whole assignment when the job's circuit makes its rows (an
    embedded circuit), else the witness alone (a zkey, whose rows the resident key holds). An
    embedded circuit's witness may be the backend's handle (``keeps_witness``)."""

    witness: np.ndarray | Any
    assignment: Assignment | None


@attrs.frozen(eq=False)
class _Assigned:
    """A witness source whose assignment is made already (by stage 1, or from the key)."""

    assignment: Assignment

    def assign(self, backend: Backend) -> Assignment:
        """The assignment itself."""
        return self.assignment


def synthesize_job(backend: Backend, spec: KeySpec, job_input: JobInput) -> Prepared:
    """Stage 1: the job's witness (with its rows, their products, checked, and the A and B
    query scalars, for an embedded circuit), from its input, without the key's points."""
    if spec.kind is KeyKind.PARAMS:
        if job_input.witness_path is not None:
            raise JobError(f"key {spec.key_id!r} proves an embedded circuit: send no witness")
        assert spec.circuit is not None
        knobs = {k: v for k, v in spec.circuit.items() if k != "circuit"}
        if job_input.circuit_seed is not None:
            knobs["seed"] = job_input.circuit_seed
        try:
            circuit = get_circuit(spec.circuit["circuit"], **knobs)
        except (KeyError, TypeError, ValueError) as exc:
            message = exc.args[0] if exc.args else str(exc)
            raise JobError(f"circuit {spec.circuit['circuit']!r}: {message}") from None
        # A·z, B·z, C·z, the witness check and the host's query gathers here too: stage 2 is
        # the pipeline's longer stage (a backend that gathers on its device does it there).
        assignment = with_queries(
            backend, evaluated(backend, NativeCircuit(circuit).assign(backend))
        )
        return Prepared(assignment.witness, assignment)
    if job_input.witness_path is None:
        raise JobError(f"key {spec.key_id!r} is a zkey: the job needs a witness (.wtns)")
    witness = read_wtns(job_input.witness_path, spec.num_vars, f"the key {spec.key_id!r}")
    return Prepared(witness, None)


def prove_prepared(
    backend: Backend,
    prepared: Prepared,
    key: ResidentKey,
    seed: int | None,
    progress: Progress,
) -> ProofResult:
    """Stage 2: the proof of a prepared job under a resident key (the adapter over prove())."""
    assignment = prepared.assignment
    if assignment is None:  # a zkey's A and B rows, input rows included; no C rows
        assert key.matrices is not None
        assignment = Assignment(key.matrices, prepared.witness, has_c=False)
    source = _Assigned(assignment)
    return prove(backend, source, LoadedKey(key.pk, key.convention), seed=seed, progress=progress)
