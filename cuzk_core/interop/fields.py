"""Recognizing the prime a circom or snarkjs file declares, so errors can name its curve."""

from __future__ import annotations

from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS

BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583
BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617

_KNOWN = {
    FQ_MODULUS: "the bls12381 base field q",
    FR_MODULUS: "the bls12381 scalar field r",
    BN128_Q: "the bn128 base field q",
    BN128_R: "the bn128 scalar field r",
}


def describe_prime(prime: int) -> str:
    """A name for ``prime`` when it is one snarkjs knows, else its value."""
    return _KNOWN.get(prime, f"the prime {prime}")


def curve_of(prime: int) -> str:
    """The curve a field prime belongs to (``"bn128"``, ``"bls12381"``), or ``"unknown"``."""
    name = _KNOWN.get(prime, "")
    return name.split()[1] if name else "unknown"
