"""The engine's two stages over cuzk's prover: synthesis (stage 1, CPU) and proving (stage 2).

:func:`prove_prepared` is the one place that calls :func:`cuzk_core.groth16.prover.prove`, so a
change of the prover's signature is a change here only.
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.circuits import get_circuit
from cuzk_core.engine.jobs import JobError, JobInput
from cuzk_core.engine.keys import KeyKind, KeySpec, ResidentKey
from cuzk_core.errors import FormatError
from cuzk_core.groth16.prover import ProofResult, prove
from cuzk_core.groth16.sources import Assignment, LoadedKey, R1CSWitness, WitnessSource
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.progress import Progress
from cuzk_core.r1cs import R1CSMatrices


@attrs.frozen(eq=False)
class Prepared:
    """A synthesized job: the witness, and the matrices without input rows when the circuit
    made them (a zkey's own matrices come with the loaded key instead)."""

    witness: np.ndarray
    matrices: R1CSMatrices | None


def synthesize_job(backend: Backend, spec: KeySpec, job_input: JobInput) -> Prepared:
    """Stage 1: the job's witness (and matrices), from its input, without the key's points."""
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
        synthesized = backend.synthesize(circuit)
        return Prepared(synthesized.witness, synthesized.matrices)
    if job_input.witness_path is None:
        raise JobError(f"key {spec.key_id!r} is a zkey: the job needs a witness (.wtns)")
    witness = read_wtns(job_input.witness_path)
    if len(witness) != spec.num_vars:
        raise FormatError(
            f"{job_input.witness_path}: the witness has {len(witness)} values, the key "
            f"{spec.key_id!r} has {spec.num_vars} (a witness for another circuit?)"
        )
    return Prepared(witness, None)


@attrs.frozen(eq=False)
class _KeyRows:
    """A witness proven against rows the resident key holds (a zkey's A and B, input rows
    included, no C): parsed once when the key was loaded, not once a proof."""

    matrices: R1CSMatrices
    witness: np.ndarray

    def assign(self, backend: Backend) -> Assignment:
        """The key's rows and the witness (unchecked: there are no C rows)."""
        return Assignment(self.matrices, self.witness, has_c=False)


def prove_prepared(
    backend: Backend,
    prepared: Prepared,
    key: ResidentKey,
    seed: int | None,
    progress: Progress,
) -> ProofResult:
    """Stage 2: the proof of a prepared job under a resident key (the adapter over prove())."""
    source: WitnessSource
    if prepared.matrices is not None:
        source = R1CSWitness(prepared.matrices, prepared.witness)
    else:
        assert key.matrices is not None
        source = _KeyRows(key.matrices, prepared.witness)
    return prove(backend, source, LoadedKey(key.pk, key.convention), seed=seed, progress=progress)
