"""porep-lite: the challenge checks of a storage proof, on a Poseidon Merkle tree."""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, ClassVar

import attrs
import numpy as np

from cuzk_core.errors import shown
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.gadgets.bits import to_bits_le
from cuzk_core.gadgets.merkle import verify_merkle_path
from cuzk_core.gadgets.num import AllocatedNum, enforce_equal
from cuzk_core.gadgets.poseidon import poseidon_hash2_gadget
from cuzk_core.gadgets.poseidon.batch import Layers, poseidon_table, reference_hash2_layers
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import ConstraintSystem

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

MAX_DEPTH = 32
MAX_CHALLENGES = 1 << 20
"""More challenges than any prover here could synthesize (2^28 constraints at depth 1)."""


def _derive(tag: bytes, seed: int, index: int) -> int:
    """A deterministic pseudo-random 512-bit integer for (tag, seed, index)."""
    data = b"cuzk porep-lite " + tag + seed.to_bytes(32, "little") + index.to_bytes(8, "little")
    return int.from_bytes(hashlib.blake2b(data).digest(), "little")


def _check_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` when it is an int in low..high, else ValueError."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(
            f"porep-lite knob {name} must be an integer {low}..{high}, got {shown(value)}"
        )
    return value


class PorepLite:
    """K Merkle inclusion checks against one public root, shaped like a storage proof's challenges.

    Public inputs, in order: the root, then the K challenged leaf indices. Private: each challenged
    leaf and its D siblings. Per challenge (namespace "challenge k"): the index is split into D bits
    (tied to the public input by a packing constraint), the Poseidon path is recomputed, and the
    result is enforced equal to the root: 242·D + 2 constraints per challenge (D + 1 for the
    bits, 241 per level: a swap and a 240-constraint hash, 1 for the root).

    The tree is sparse so that any depth up to 32 builds in K·D hashes: a challenged leaf is
    derived from (seed, index), every other leaf is one filler value derived from the seed, and a
    subtree without a challenged leaf hashes to a precomputed filler root. The constraint system is
    the same as for a dense tree; only the witness values of the untouched subtrees differ. Leaves
    and indices come from BLAKE2b over the seed, so a knob set always yields the same instance.
    """

    name: ClassVar[str] = "porep-lite"

    def __init__(self, challenges: int = 2, depth: int = 8, seed: int = 0) -> None:
        """Validate the knobs (1 ≤ challenges ≤ 2^20, 1 ≤ depth ≤ 32, 0 ≤ seed < 2^256) and derive
        the challenged indices."""
        self.challenges = _check_int("challenges", challenges, 1, MAX_CHALLENGES)
        self.depth = _check_int("depth", depth, 1, MAX_DEPTH)
        self.seed = _check_int("seed", seed, 0, (1 << 256) - 1)
        self.indices = tuple(_derive(b"index", seed, k) % (1 << depth) for k in range(challenges))
        self._backend: Backend | None = None

    def knobs(self) -> dict[str, int]:
        """The knob values, for caching keys and display."""
        return {"challenges": self.challenges, "depth": self.depth, "seed": self.seed}

    def shape(self) -> dict[str, int]:
        """The knobs that fix the constraints (the seed only changes the witness)."""
        return {"challenges": self.challenges, "depth": self.depth}

    def leaf(self, index: int) -> int:
        """The value of leaf ``index``: derived from (seed, index) when challenged, else the
        filler."""
        if index in self._challenged:
            return self._challenged_leaf(index)
        return self._filler_leaf()

    @functools.cached_property
    def _challenged(self) -> frozenset[int]:
        """The challenged indices as a set: ``leaf`` runs once per challenge (a tuple's lookup
        made that quadratic: ~50 ms of a 2^24 replay)."""
        return frozenset(self.indices)

    def _challenged_leaf(self, index: int) -> int:
        return _derive(b"leaf", self.seed, index) % FR_MODULUS

    def _filler_leaf(self) -> int:
        return _derive(b"filler", self.seed, 0) % FR_MODULUS

    def use_backend(self, backend: Backend) -> None:
        """Hash the tree with ``backend``'s ``cuzk_poseidon_layers`` (all levels in one call)
        rather than in plain Python; the values are the same."""
        self._backend = backend

    def tree_layers(self) -> tuple[np.ndarray, Layers]:
        """What hashing the tree takes: the leaf level's nodes (the filler leaf, then the
        challenged leaves by position) and a layer a level (its parents and the next filler
        root), as ``cuzk_poseidon_layers`` reads them."""
        positions = self._shape.positions[0]
        leaves = [self._filler_leaf(), *(self._challenged_leaf(int(i)) for i in positions)]
        return ints_to_limbs(leaves), self._shape.layers

    @functools.cached_property
    def _shape(self) -> _TreeShape:
        return _tree_shape(np.asarray(self.indices, dtype=np.int64), self.depth)

    @functools.cached_property
    def _tree(self) -> _Tree:
        """Every node above a challenged leaf, and each level's filler subtree root."""
        nodes, layers = self.tree_layers()
        if self._backend is None:
            hashed = reference_hash2_layers(nodes, layers, poseidon_table())
        else:
            hashed = self._backend.poseidon_layers(nodes, layers, poseidon_table())
        return _Tree(self._shape, np.concatenate([nodes, hashed]))

    def root(self) -> int:
        """The Merkle root."""
        tree = self._tree
        return limbs_to_ints(tree.values[tree.shape.ids[-1][:1]])[0]

    def path(self, index: int) -> list[int]:
        """The siblings of leaf ``index`` from the leaf level up (index must be challenged)."""
        tree = self._tree
        return limbs_to_ints(tree.values[tree.shape.sibling_ids(np.array([index]))[0]])

    def public_inputs(self) -> list[int]:
        """[root, index_0, ..., index_{K−1}], the order ``synthesize`` allocates them in."""
        return [self.root(), *self.indices]

    def replay_values(self) -> tuple[list[int], np.ndarray]:
        """What ``synthesize`` allocates, without running it: the public inputs, and the hints
        (per challenge its leaf, then its D siblings) as scalars. A compiled proof's replay
        takes these."""
        tree = self._tree
        hints = np.empty((self.challenges, self.depth + 1, 4), dtype=np.uint64)
        hints[:, 0] = ints_to_limbs([self.leaf(index) for index in self.indices])
        hints[:, 1:] = tree.values[tree.shape.sibling_ids(np.asarray(self.indices, dtype=np.int64))]
        return self.public_inputs(), hints.reshape(-1, 4)

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Allocate the inputs and witness and enforce every challenge's path to the root."""
        root = AllocatedNum.alloc_input(cs, "root", self.root())
        indices = [
            AllocatedNum.alloc_input(cs, f"challenge {k} index", index)
            for k, index in enumerate(self.indices)
        ]
        for k, (index_num, index) in enumerate(zip(indices, self.indices, strict=True)):
            with cs.namespace(f"challenge {k}"):
                bits = to_bits_le(cs, index_num, self.depth)
                leaf = AllocatedNum.alloc(cs, "leaf", self.leaf(index))
                siblings = [
                    AllocatedNum.alloc(cs, f"sibling {l}", value)
                    for l, value in enumerate(self.path(index))
                ]
                computed = verify_merkle_path(cs, leaf, siblings, bits, poseidon_hash2_gadget)
                enforce_equal(cs, "root", computed, root)


@attrs.frozen(eq=False)
class _TreeShape:
    """Where a sparse tree's nodes sit, from the challenged indices alone (no hashing).

    Node ids count the leaf level's nodes (the filler leaf, then the challenged leaves by
    position) and then each hashing layer's results, as ``cuzk_poseidon_layers`` returns
    them."""

    positions: list[np.ndarray]
    """Per level (0 = leaves, D = the root), the sorted positions of nodes above a challenge."""
    ids: list[np.ndarray]
    """Per level, the node id of each of ``positions``."""
    filler_ids: list[int]
    """Per level below the root, the node id of its filler subtree root."""
    layers: Layers
    """Per level above the leaves, the ``(left, right)`` node ids it hashes."""

    def sibling_ids(self, indices: np.ndarray) -> np.ndarray:
        """``(len(indices), D)`` node ids: each leaf's siblings from the leaf level up."""
        out = np.empty((len(indices), len(self.filler_ids)), dtype=np.int64)
        for level, filler in enumerate(self.filler_ids):
            out[:, level] = _ids_at(
                self.positions[level], self.ids[level], (indices >> level) ^ 1, filler
            )
        return out


@attrs.frozen(eq=False)
class _Tree:
    shape: _TreeShape
    values: np.ndarray
    """``(nodes, 4)`` scalars by node id."""


def _ids_at(positions: np.ndarray, ids: np.ndarray, wanted: np.ndarray, filler: int) -> np.ndarray:
    """The node id at each ``wanted`` position of a level: its own where the level holds one,
    else the level's filler root."""
    at = np.minimum(np.searchsorted(positions, wanted), len(positions) - 1)
    return np.where(positions[at] == wanted, ids[at], filler)


def _tree_shape(indices: np.ndarray, depth: int) -> _TreeShape:
    """The layers that hash a sparse tree over the challenged ``indices`` (see ``_TreeShape``):
    O(challenges) array operations a level."""
    positions = [np.unique(indices)]
    ids = [np.arange(1, len(positions[0]) + 1, dtype=np.int64)]
    filler_ids = [0]
    layers: Layers = []
    known = len(positions[0]) + 1
    for level in range(depth):
        below, filler = positions[-1], filler_ids[-1]
        parents = np.unique(below >> 1)
        left = _ids_at(below, ids[-1], 2 * parents, filler)
        right = _ids_at(below, ids[-1], 2 * parents + 1, filler)
        positions.append(parents)
        ids.append(np.arange(known, known + len(parents), dtype=np.int64))
        known += len(parents)
        if level + 1 < depth:  # the next level's filler root, in the same layer
            left, right = np.append(left, filler), np.append(right, filler)
            filler_ids.append(known)
            known += 1
        layers.append((left, right))
    return _TreeShape(positions, ids, filler_ids, layers)
