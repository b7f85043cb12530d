"""The Groth16 verifier: e(A, B) = e(α, β) · e(IC(x), γ) · e(C, δ), as one multi-pairing."""

from __future__ import annotations

from cuzk_core.curve.g1 import (
    g1_add,
    g1_from_affine,
    g1_in_subgroup,
    g1_multi_mul,
    g1_neg,
    g1_to_affine,
)
from cuzk_core.curve.g2 import g2_in_subgroup
from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16.keys import (
    VERIFYING_POINTS,
    Proof,
    VerifyingKey,
    degenerate,
    infinite_vk_point,
)
from cuzk_core.pairing import pairing_product_is_one


def public_input_point(vk: VerifyingKey, public_inputs: list[int]):
    """IC(x) = ic[0] + Σ xᵢ·ic[i+1], affine."""
    if len(public_inputs) != len(vk.ic) - 1:
        raise ValueError(f"{len(public_inputs)} public inputs for {len(vk.ic) - 1} IC points")
    return g1_to_affine(g1_add(g1_from_affine(vk.ic[0]), g1_multi_mul(vk.ic[1:], public_inputs)))


def _neg_affine(point):
    return None if point is None else g1_to_affine(g1_neg(g1_from_affine(point)))


def verify_proof(vk: VerifyingKey, proof: Proof, public_inputs: list[int]) -> tuple[bool, str]:
    """Check a proof whose points are already known valid; returns (ok, reason when not)."""
    infinite = infinite_vk_point(vk, VERIFYING_POINTS)
    if infinite is not None:  # the readers refuse such keys; this guards the library's callers
        return False, f"the verifying key's {degenerate(infinite)}"
    if len(public_inputs) != vk.num_public:
        return False, f"{len(public_inputs)} public inputs given, the key expects {vk.num_public}"
    if any(not 0 <= x < FR_MODULUS for x in public_inputs):
        return False, "a public input is not below the scalar field modulus r"
    pairs = [
        (proof.a, proof.b),
        (_neg_affine(vk.alpha_g1), vk.beta_g2),
        (_neg_affine(public_input_point(vk, public_inputs)), vk.gamma_g2),
        (_neg_affine(proof.c), vk.delta_g2),
    ]
    if pairing_product_is_one(pairs):
        return True, ""
    return False, "the pairing check failed: the proof does not match the key and public inputs"


class ProofRejected(CuzkError):
    """A proof just made does not verify against its key's verifying key: nothing is written."""


def check_own_proof(vk: VerifyingKey, proof: Proof, public_inputs: list[int], key: str) -> None:
    """Verify a proof before it is written (a pairing check: about 0.1 s and an O(inputs) sum).

    A corrupt key (a query point outside its subgroup, altered coefficients) or a witness that
    could not be checked (a zkey without its r1cs) would otherwise give a proof every verifier
    rejects; ``key`` names the key in the error.
    """
    in_subgroups = (
        (proof.a is None or g1_in_subgroup(proof.a))
        and (proof.b is None or g2_in_subgroup(proof.b))
        and (proof.c is None or g1_in_subgroup(proof.c))
    )
    if in_subgroups:
        ok, reason = verify_proof(vk, proof, public_inputs)
    else:
        ok, reason = False, "a proof point lies outside its prime-order subgroup"
    if not ok:
        raise ProofRejected(
            f"{key}: the proof made with this key does not verify against its own verifying key "
            f"({reason}); no proof was written. The key is corrupt (`cuzk check --key {key}` "
            "finds the bad point) or the witness does not satisfy the circuit"
        )
