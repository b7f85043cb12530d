"""porep-lite: the challenge checks of a storage proof, on a Poseidon Merkle tree."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from cuzk_core.errors import shown
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.gadgets.bits import to_bits_le
from cuzk_core.gadgets.merkle import verify_merkle_path
from cuzk_core.gadgets.num import AllocatedNum, enforce_equal
from cuzk_core.gadgets.poseidon import poseidon_hash2, poseidon_hash2_gadget
from cuzk_core.gadgets.poseidon.batch import hash2_pairs
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


def _hash_pairs_here(left: list[int], right: list[int]) -> list[int]:
    """The pairs hashed in this process, in plain Python."""
    return [poseidon_hash2(a, b) for a, b in zip(left, right, strict=True)]


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
        self._hash_pairs: Callable[[list[int], list[int]], list[int]] = _hash_pairs_here

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
        """Hash the tree with ``backend``'s ``cuzk_poseidon`` (a level per call) rather than
        in plain Python; the values are the same."""
        self._hash_pairs = functools.partial(hash2_pairs, backend)

    @functools.cached_property
    def _tree(self) -> tuple[list[dict[int, int]], list[int]]:
        """Per level, the nodes above challenged leaves ({position: value}), and the filler
        subtree root of each level. A level's parents and the next filler root are one batch."""
        filler = [self._filler_leaf()]
        levels = [{i: self._challenged_leaf(i) for i in self.indices}]
        for level in range(self.depth):
            below, empty = levels[-1], filler[-1]
            positions = sorted({i >> 1 for i in below})
            left = [below.get(2 * pos, empty) for pos in positions]
            right = [below.get(2 * pos + 1, empty) for pos in positions]
            more = level + 1 < self.depth
            if more:
                left.append(empty)
                right.append(empty)
            parents = self._hash_pairs(left, right)
            if more:
                filler.append(parents.pop())
            levels.append(dict(zip(positions, parents, strict=True)))
        return levels, filler

    def root(self) -> int:
        """The Merkle root."""
        levels, _ = self._tree
        return levels[-1][0]

    def path(self, index: int) -> list[int]:
        """The siblings of leaf ``index`` from the leaf level up (index must be challenged)."""
        levels, filler = self._tree
        return [levels[l].get((index >> l) ^ 1, filler[l]) for l in range(self.depth)]

    def public_inputs(self) -> list[int]:
        """[root, index_0, ..., index_{K−1}], the order ``synthesize`` allocates them in."""
        return [self.root(), *self.indices]

    def replay_values(self) -> tuple[list[int], list[int]]:
        """What ``synthesize`` allocates, without running it: the public inputs, and the hints
        (per challenge its leaf, then its D siblings). A compiled proof's replay takes these."""
        hints: list[int] = []
        for index in self.indices:
            hints.append(self.leaf(index))
            hints += self.path(index)
        return self.public_inputs(), hints

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
