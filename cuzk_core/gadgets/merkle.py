"""Merkle path verification: recompute a root from a leaf, its siblings and its index bits."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cuzk_core.r1cs import ConstraintSystem, gadget

from .boolean import AllocatedBit
from .num import PLACEHOLDER_NUM, Num, NumLike, conditional_swap

Hasher = Callable[[ConstraintSystem, NumLike, NumLike], Num]
"""A 2-to-1 hash gadget, e.g. :func:`~cuzk_core.gadgets.poseidon.poseidon_hash2_gadget`."""


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def verify_merkle_path(
    cs: ConstraintSystem,
    leaf: NumLike,
    path_siblings: Sequence[NumLike],
    index_bits: Sequence[AllocatedBit],
    hasher: Hasher,
) -> Num:
    """The root reached from ``leaf``: at level l (namespace "level l"), bit l of the index says
    whether the current node is the right child (bit 0: it is the left one), the pair is put in
    order with one swap constraint and hashed. The caller compares the result with the root."""
    if len(path_siblings) != len(index_bits):
        raise ValueError(
            f"{len(path_siblings)} siblings but {len(index_bits)} index bits: one each per level"
        )
    current: NumLike = leaf
    for level, (sibling, bit) in enumerate(zip(path_siblings, index_bits, strict=True)):
        with cs.namespace(f"level {level}"):
            left, right = conditional_swap(cs, current, sibling, bit)
            current = hasher(cs, left, right)
    return current if isinstance(current, Num) else Num(current.lc, current.value)
