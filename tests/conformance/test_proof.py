"""Whole proofs: the same circuit, parameters and seed give byte-identical proof.bin on every
backend (under several profiles), and the proof verifies."""

from __future__ import annotations

import functools

import pytest
from conformance_support import REFERENCE, backend_for

from cuzk_core.circuits import PorepLite
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.verifier import verify_proof

PROFILES = {
    "defaults": {},
    "h200-like": {
        "msm.split_01": True,
        "memory.pinning": "pool",
        "memory.key_storage": "device",
        "memory.pool_mib": 8,
    },
    "unsigned-registered-stream": {
        "msm.signed_digits": False,
        "memory.pinning": "register",
        "memory.key_storage": "stream",
        "msm.window_bits.h": 5,
    },
    "b_g2-on-cpu": {"msm.b_g2_on": "cpu"},
}


def _synthesizer(backend, circuit):
    def run():
        synthesized = backend.synthesize(circuit)
        return with_input_rows(synthesized.matrices), synthesized.witness

    return run


@functools.cache
def _circuit_and_key():
    circuit = PorepLite(challenges=1, depth=2, seed=5)
    matrices, _ = _synthesizer(backend_for(REFERENCE), circuit)()
    return circuit, generate_parameters(matrices, seed=11)


@functools.cache
def _reference_proof() -> bytes:
    circuit, key = _circuit_and_key()
    reference = backend_for(REFERENCE)
    return prove(reference, _synthesizer(reference, circuit), lambda: key, seed=3).proof.to_bytes()


@pytest.mark.parametrize("profile", list(PROFILES))
def test_same_proof_bytes(backend_name, profile):
    if backend_name == REFERENCE:
        pytest.skip("the reference's own proofs are covered by tests/test_groth16.py")
    circuit, key = _circuit_and_key()
    backend = backend_for(backend_name, **PROFILES[profile])
    result = prove(backend, _synthesizer(backend, circuit), lambda: key, seed=3)
    assert result.proof.to_bytes() == _reference_proof()
    ok, why = verify_proof(key.vk, result.proof, result.public_inputs)
    assert ok, why
