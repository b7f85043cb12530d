"""Which block runs which witness op, when the program splits into independent parts.

``witness_levels`` waits at a grid-wide barrier after every level, and its ops read z through
L2, because any op may read what another multiprocessor wrote. Many programs are instead a set
of parts that read nothing of each other (porep-lite: one Poseidon path per challenge, 135 at
2^20). Each part can then go to one block, which runs its parts level by level waiting only for
its own warps (``__syncthreads``), with z in its multiprocessor's L1 and each warp's next op
fetched ahead (``witness_blocks``). This module lays out that schedule over the program's
parts (:mod:`cuzk_core.witness.parts` finds them; the compile stores them).
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk_core.witness.parts import program_parts
from cuzk_core.witness.program import WitnessProgram


@attrs.frozen(eq=False)
class BlockSchedule:
    """The program's ops in ``witness_blocks``' order.

    Warp ``w`` of block ``b`` runs ``order[warp_ptr[b·warps + w] : warp_ptr[b·warps + w + 1]]``
    in turn, each at its block's step ``step``; a block waits for its warps after each of its
    ``block_steps`` steps. A "warp" here is an op group of the kernel (``WITNESS_OP_LANES``
    lanes, a whole warp by default)."""

    order: np.ndarray
    """int64: positions in the program's ``level_ops`` (rows of the op table)."""
    step: np.ndarray
    """int32, beside ``order``: the step of its block at which the op runs."""
    warp_ptr: np.ndarray
    """int64 (blocks·warps + 1)."""
    block_steps: np.ndarray
    """int32 (blocks)."""
    warps: int
    """Warps per block."""
    cost: int
    """Op latencies the slowest block waits through: per step, its ops over its warps."""

    @property
    def blocks(self) -> int:
        """Blocks the schedule launches."""
        return len(self.block_steps)


def level_cost(program: WitnessProgram, warps: int) -> int:
    """Op latencies ``witness_levels`` waits through with ``warps`` warps: per level, its ops
    over the warps (each level also waits at a grid-wide barrier)."""
    return int(np.sum(-(-np.diff(program.level_ptr) // max(1, warps))))


def least_block_cost(program: WitnessProgram, max_blocks: int, warps: int) -> int:
    """A floor under any block schedule's cost, without finding the parts: a block holding a
    deepest part has a step for every level, and some block holds at least its share of the
    ops."""
    share = -(-len(program.level_ops) // max(1, max_blocks * warps))
    return max(program.num_levels, share)


def block_schedule(program: WitnessProgram, max_blocks: int, warps: int) -> BlockSchedule:
    """The program's parts on at most ``max_blocks`` blocks of ``warps`` warps: the largest
    parts first, dealt out back and forth across the blocks; within a block, an op runs at the
    rank of its level among the block's levels, and the ops of a step go round the warps."""
    count = len(program.level_ops)
    num_levels = max(1, program.num_levels)
    level = np.repeat(np.arange(program.num_levels, dtype=np.int64), np.diff(program.level_ptr))
    # Parts numbered by their roots (each op's label is its part's smallest op), in order.
    label = program_parts(program)
    roots = np.flatnonzero(label == np.arange(count))
    root_rank = np.zeros(count, dtype=np.int64)
    root_rank[roots] = np.arange(len(roots))
    part = root_rank[label]
    sizes = np.bincount(part, minlength=len(roots))
    blocks = max(1, min(max_blocks, len(sizes)))
    rank = np.empty(len(sizes), dtype=np.int64)
    rank[np.argsort(-sizes, kind="stable")] = np.arange(len(sizes))
    turn = rank % (2 * blocks)
    block = np.where(turn < blocks, turn, 2 * blocks - 1 - turn)[part]
    # Steps: a block's distinct levels, in order.
    group, op_group, widths = _distinct(block * num_levels + level, blocks * num_levels)
    group_start = np.zeros(len(group), dtype=np.int64)
    np.cumsum(widths[:-1], out=group_start[1:])
    group_block = group // num_levels
    first_group = np.searchsorted(group_block, np.arange(blocks))
    op_step = (np.arange(len(group)) - first_group[group_block])[op_group]
    block_steps = np.bincount(group_block, minlength=blocks)
    # Within a step, the ops go round the warps in level-list order. The list ascends by level,
    # so a stable order by block is the order by (block, level), and one by warp the order by
    # (warp, step): counting sorts, not sorts of pairs.
    by_group = _stable_order(block, blocks)
    within = np.empty(count, dtype=np.int64)
    within[by_group] = np.arange(count) - group_start[op_group[by_group]]
    warp = block * warps + within % warps
    order = _stable_order(warp, blocks * warps)
    warp_ptr = np.zeros(blocks * warps + 1, dtype=np.int64)
    np.cumsum(np.bincount(warp, minlength=blocks * warps), out=warp_ptr[1:])
    latencies = np.bincount(group_block, weights=-(-widths // warps), minlength=blocks)
    return BlockSchedule(
        order=order.astype(np.int64),
        step=op_step[order].astype(np.int32),
        warp_ptr=warp_ptr,
        block_steps=block_steps.astype(np.int32),
        warps=warps,
        cost=int(latencies.max()) if count else 0,
    )


COUNTED_KEYS = 4
"""Keys below this many times their number (plus a little) are counted, not sorted: a schedule's
(block, level) keys usually are (c540 d32, 4.2 M ops over 396 blocks: the schedule 0.60 →
0.28 s on this VM)."""


def _distinct(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``keys`` (each in [0, bound)) ascending, each key's index among them, and
    how many times each occurs."""
    if bound > COUNTED_KEYS * len(keys) + 1024:
        distinct, index, counts = np.unique(keys, return_inverse=True, return_counts=True)
        return distinct, index.astype(np.int64), counts
    counts = np.bincount(keys, minlength=bound)
    distinct = np.flatnonzero(counts)
    index = np.zeros(bound, dtype=np.int64)
    index[distinct] = np.arange(len(distinct))
    return distinct, index[keys], counts[distinct]


def _stable_order(keys: np.ndarray, bound: int) -> np.ndarray:
    """A stable argsort of ``keys`` in [0, bound): numpy's radix sort for 16-bit keys."""
    narrow = np.uint16 if bound <= 1 << 16 else np.uint32 if bound <= 1 << 32 else np.int64
    return np.argsort(keys.astype(narrow), kind="stable")
