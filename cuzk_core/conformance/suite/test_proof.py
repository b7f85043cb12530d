"""Whole proofs of a real circuit (PoRep-lite: Poseidon Merkle paths) under several profiles: the
same key and seed give the reference's proof bytes, and the proof verifies."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from cuzk_core.backend import Backend
from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.checks import (
    PROOF_SEED,
    REFERENCE,
    Subject,
    check_proof,
)
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit

PROFILES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "h200-like": {
        "msm.split_01": True,
        "msm.share_sorts": True,
        "msm.sorts_ahead": True,
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
    "pool-stream-tiny-budget": {  # every MSM in many chunks, each uploaded during the last
        "msm.split_01": True,
        "memory.pinning": "pool",
        "memory.key_storage": "stream",
        "memory.pool_mib": 1,
        "memory.device_budget_kib": 4,
    },
    "b_g2-on-cpu": {"msm.b_g2_on": "cpu"},
}


@functools.cache
def _reference_proof(reference: Backend) -> tuple[PorepLite, ProvingKey, bytes]:
    """The circuit, its key and the reference's proof bytes, made once."""
    circuit = PorepLite(challenges=1, depth=2, seed=5)
    key = generate_parameters(NativeCircuit(circuit).assign(reference).matrices, seed=11)
    proof = prove(reference, NativeCircuit(circuit), LoadedKey(key), seed=PROOF_SEED)
    return circuit, key, proof.proof.to_bytes()


@pytest.mark.cuzk_cases("profile", lambda backend: [] if backend.name == REFERENCE else PROFILES)
def test_same_proof_bytes(cuzk_subject: Subject, profile: str) -> None:
    """Byte-identical to the reference's proof (whose own proofs cuzk's prover tests check)."""
    check_proof(cuzk_subject, *_reference_proof(cuzk_subject.reference), PROFILES[profile])
