"""Checks of whole proofs and of the compiled path: a compiled circuit's witness on the backend,
proofs byte-identical to the reference's (gadget and compiled paths), and two proofs at
once on one backend.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import ConstraintSystem

from .base import NOT_IMPLEMENTED, Check, CheckFailed, Subject, profile_changes, same_scalars
from .circuits import COMPILED_CIRCUITS, TinyCircuit, porep_lite
from .field import same_matrices


def _witness(case: str, checked: Subject, rng: random.Random) -> str | None:
    """Compiled on one instance by the reference, the program gives every other instance of the
    shape the witness its gadgets give, bit for bit, on the backend under test."""
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.replay import replay

    backend = checked.backend()
    instance = COMPILED_CIRCUITS[case](rng)
    compiled, _ = compile_circuit(checked.reference, instance(0), use_cache=False)
    if compiled.program is None:
        raise CheckFailed(f"{case}: not compiled: {compiled.problem}")
    for values in (1, 2):
        circuit = instance(values)
        inputs, hints = replay(circuit, compiled.program)
        if not backend.implements("cuzk_witness"):
            return NOT_IMPLEMENTED
        cs = ConstraintSystem()
        circuit.synthesize(cs)
        same_matrices(compiled.program.matrices, cs.matrices(), f"{case} values={values}")
        want = ints_to_limbs(cs.assignment())
        for for_prover in (False, True):  # a host array, or (if it keeps z) its handle
            got = np.asarray(backend.witness(compiled.program, inputs, hints, for_prover))
            same_scalars(got, want, f"{case} witness, values={values}, for_prover={for_prover}")
    return None


@attrs.frozen(eq=False)
class _CompiledSource:
    """A witness source through a compiled program kept in memory (no disk cache)."""

    compiled: Any
    circuit: Any

    def assign(self, backend: Backend) -> Any:
        from cuzk_core.groth16.sources import Assignment
        from cuzk_core.witness.replay import replay

        program = self.compiled.program
        inputs, hints = replay(self.circuit, program)
        return Assignment(self.compiled.proving_matrices, backend.witness(program, inputs, hints))


def _compiled_proof(checked: Subject, rng: random.Random) -> None:
    """A proof through the compiled path has the gadget path's bytes."""
    from cuzk_core.witness.compiled import compile_circuit

    circuit = porep_lite(1, 1)(rng.randrange(1 << 32))
    reference = checked.reference
    gadgets = NativeCircuit(circuit, compiled=False)
    key = LoadedKey(generate_parameters(gadgets.assign(reference).matrices, seed=11))
    want = prove(reference, gadgets, key, seed=PROOF_SEED)
    compiled, _ = compile_circuit(reference, circuit, use_cache=False)
    if compiled.program is None:
        raise CheckFailed(f"porep-lite not compiled: {compiled.problem}")
    got = prove(checked.backend(), _CompiledSource(compiled, circuit), key, seed=PROOF_SEED)
    if got.proof.to_bytes() != want.proof.to_bytes():
        raise CheckFailed("compiled-path proof bytes differ from the gadget path's")


def _concurrent_proofs(checked: Subject, rng: random.Random) -> None:
    """Two threads prove at once on the backend, as the daemon's synthesis and prover stages
    use it: every proof has the reference's bytes."""
    circuits = [porep_lite(1, 2)(rng.randrange(1 << 32)) for _ in range(2)]
    reference = checked.reference
    key = LoadedKey(
        generate_parameters(NativeCircuit(circuits[0]).assign(reference).matrices, seed=11)
    )
    want = [prove(reference, NativeCircuit(c), key, seed=PROOF_SEED).proof for c in circuits]
    got: list[list[bytes]] = [[], []]
    failures: list[BaseException] = []

    def work(k: int) -> None:
        try:
            backend = checked.backend()
            for _ in range(2):
                proof = prove(backend, NativeCircuit(circuits[k]), key, seed=PROOF_SEED).proof
                got[k].append(proof.to_bytes())
        except BaseException as exc:  # re-raised in the checking thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    for k in range(2):
        if got[k] != [want[k].to_bytes()] * 2:
            raise CheckFailed(f"thread {k}: a proof made beside another differs from the reference")


# ---------------------------------------------------------------- whole proofs

PROOF_SEED = 3


def check_proof(
    checked: Subject, circuit: Any, key: ProvingKey, want: bytes, changes: dict[str, Any]
) -> None:
    """The proof under profile ``changes`` (seed :data:`PROOF_SEED`) is ``want`` and verifies."""
    backend = checked.backend(**changes)
    got = prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=PROOF_SEED)
    if got.proof.to_bytes() != want:
        raise CheckFailed(f"proof bytes differ from the reference's{profile_changes(changes)}")
    ok, why = verify_proof(key.vk, got.proof, got.public_inputs)
    if not ok:
        raise CheckFailed(f"the proof does not verify{profile_changes(changes)}: {why}")


def _proof(checked: Subject, rng: random.Random) -> None:
    circuit = TinyCircuit(5, steps=6)
    reference = checked.reference
    key = generate_parameters(NativeCircuit(circuit).assign(reference).matrices, seed=11)
    want = prove(reference, NativeCircuit(circuit), LoadedKey(key), seed=PROOF_SEED)
    check_proof(checked, circuit, key, want.proof.to_bytes(), {})


def checks() -> Iterator[Check]:
    """The compiled witness of each circuit, then the whole proofs."""
    for case in COMPILED_CIRCUITS:
        yield Check("cuzk_witness", case, functools.partial(_witness, case))
    yield Check("proof", f"tiny-circuit-seed-{PROOF_SEED}", _proof)
    yield Check("proof", f"compiled-porep-lite-seed-{PROOF_SEED}", _compiled_proof)
    yield Check("proof", f"two-threads-at-once-seed-{PROOF_SEED}", _concurrent_proofs)
