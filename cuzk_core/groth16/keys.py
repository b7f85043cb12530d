"""Groth16 keys and proofs, and their bellperson byte layouts.

VerifyingKey: α₁, β₁, β₂, γ₂, δ₁, δ₂ uncompressed, a u32 big-endian IC count, the IC points.
Parameters (proving key): the verifying key, then h, l, a, b_g1 (G1) and b_g2 (G2), each a u32
big-endian count followed by uncompressed points. Proof: A‖B‖C compressed, 192 bytes.
Like bellperson, the a / b_g1 / b_g2 queries hold only the variables that occur in A / B (the
others would be points at infinity); :func:`query_density` says which those are.
"""

from __future__ import annotations

import weakref

import attrs
import numpy as np

from cuzk_core.curve import bulk, serialize
from cuzk_core.curve.g1 import G1Affine
from cuzk_core.curve.g2 import G2Affine
from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.r1cs import SparseMatrix

PROOF_BYTES = 192


@attrs.frozen(eq=False)
class VerifyingKey:
    """The verifying key; ``ic[0]`` pairs with the constant 1, ``ic[i]`` with public input i."""

    alpha_g1: G1Affine
    beta_g1: G1Affine
    beta_g2: G2Affine
    gamma_g2: G2Affine
    delta_g1: G1Affine
    delta_g2: G2Affine
    ic: list[G1Affine]

    @property
    def num_public(self) -> int:
        """Public inputs the key expects, not counting the leading 1."""
        return len(self.ic) - 1

    def to_bytes(self) -> bytes:
        """bellperson's VerifyingKey layout."""
        parts = [
            serialize.g1_to_uncompressed(self.alpha_g1),
            serialize.g1_to_uncompressed(self.beta_g1),
            serialize.g2_to_uncompressed(self.beta_g2),
            serialize.g2_to_uncompressed(self.gamma_g2),
            serialize.g1_to_uncompressed(self.delta_g1),
            serialize.g2_to_uncompressed(self.delta_g2),
            len(self.ic).to_bytes(4, "big"),
        ]
        parts += [serialize.g1_to_uncompressed(p) for p in self.ic]
        return b"".join(parts)


@attrs.frozen(eq=False)
class ProvingKey:
    """The Groth16 parameters: the verifying key and the five MSM bases."""

    vk: VerifyingKey
    h: G1Affines
    l: G1Affines
    a: G1Affines
    b_g1: G1Affines
    b_g2: G2Affines
    dense_ab: bool = False
    """True when a / b_g1 / b_g2 hold a point for every variable (snarkjs zkeys, infinity where a
    variable is unused) instead of only the variables :func:`query_density` selects (bellperson);
    the bellperson byte layout of :meth:`to_bytes` does not record it."""

    def to_bytes(self) -> bytes:
        """bellperson's Parameters layout."""
        parts = [self.vk.to_bytes()]
        for batch in (self.h, self.l, self.a, self.b_g1):
            parts += [len(batch).to_bytes(4, "big"), bulk.g1_batch_to_uncompressed(batch)]
        parts += [len(self.b_g2).to_bytes(4, "big"), bulk.g2_batch_to_uncompressed(self.b_g2)]
        return b"".join(parts)


@attrs.frozen
class Proof:
    """A Groth16 proof (A ∈ G1, B ∈ G2, C ∈ G1), affine."""

    a: G1Affine
    b: G2Affine
    c: G1Affine

    def to_bytes(self) -> bytes:
        """192 bytes: A‖B‖C zcash-compressed."""
        return (
            serialize.g1_to_compressed(self.a)
            + serialize.g2_to_compressed(self.b)
            + serialize.g1_to_compressed(self.c)
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        """Decode and fully check (curve and subgroup) a 192-byte proof."""
        if len(data) != PROOF_BYTES:
            raise serialize.PointDecodingError(
                f"a proof is {PROOF_BYTES} bytes, this one is {len(data)}"
            )
        return cls(
            serialize.g1_from_compressed(data[:48]),
            serialize.g2_from_compressed(data[48:144]),
            serialize.g1_from_compressed(data[144:]),
        )


def query_density(matrix: SparseMatrix, num_vars: int) -> np.ndarray:
    """Which variables occur in a constraint matrix: the ones its a/b query holds points for."""
    used = np.zeros(num_vars, dtype=bool)
    used[matrix.cols] = True
    return used


_QUERY_INDICES: weakref.WeakKeyDictionary[SparseMatrix, tuple[int, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def query_indices(matrix: SparseMatrix, num_vars: int) -> np.ndarray:
    """The variables :func:`query_density` selects, ascending; computed once per matrix (a
    pass over every entry, which each proof of a compiled circuit would otherwise repeat)."""
    found = _QUERY_INDICES.get(matrix)
    if found is None or found[0] != num_vars:
        indices = np.flatnonzero(query_density(matrix, num_vars))
        indices.flags.writeable = False  # shared by every proof (a device may keep its copy)
        found = _QUERY_INDICES[matrix] = (num_vars, indices)
    return found[1]


VERIFYING_POINTS = ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2")
"""The points a verification pairs with (all a snarkjs verification_key.json holds besides IC)."""
NONZERO_VK_POINTS = ("alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2")
"""The verifying key's points that no setup makes the point at infinity. With γ or δ there, a
pairing factor is 1 and a proof can be forged for any public inputs."""


def infinite_vk_point(vk: VerifyingKey, names: tuple[str, ...] = NONZERO_VK_POINTS) -> str | None:
    """The first of ``names`` that is the point at infinity in ``vk``, or None."""
    return next((name for name in names if getattr(vk, name) is None), None)


def degenerate(name: str) -> str:
    """Why a verifying key with point ``name`` at infinity is refused, in a line."""
    return f"{name} is the point at infinity, which no setup makes (such a key accepts forgeries)"
