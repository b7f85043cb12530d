"""Poseidon over BLS12-381 Fr (x^5, t = 3, R_F = 8, R_P = 57): parameters, native and in-circuit."""

from .gadget import poseidon_hash2_gadget, poseidon_permutation_gadget
from .params import PoseidonParams, poseidon_params
from .permutation import poseidon_hash2, poseidon_permutation

__all__ = [
    "PoseidonParams",
    "poseidon_hash2",
    "poseidon_hash2_gadget",
    "poseidon_params",
    "poseidon_permutation",
    "poseidon_permutation_gadget",
]
