"""The witness program the GPU kernels schedule when S-box chains run as one op each.

The chains (:mod:`cuzk_core.witness.chains`) are found by the compile and stored with the
program. ``without_chain_tails`` is the program the kernels then schedule: the chains' first
ops stand for the whole chain (``op_table`` marks them ``OP_SBOX``: the kernel computes x once
from the B row and keeps x², x⁴ in registers), and the other two ops leave the level lists.

The kernels run ops in level order, and a chain's values are all written when its first op
runs (its level is below both others'), so the levels need no recomputation: levels that only
held chain tails are dropped, and the ops that read x⁵ run in the next step that has any op.
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk_core.witness.parts import program_parts
from cuzk_core.witness.program import WitnessProgram


def without_chain_tails(program: WitnessProgram, heads: np.ndarray) -> WitnessProgram:
    """``program`` with each chain's x⁴ and x⁵ ops (``heads`` + 1, + 2) out of its level lists,
    levels left empty dropped, and its parts relabelled over the ops that stay."""
    tail = np.zeros(len(program.kind), dtype=bool)
    tail[heads + 1] = True
    tail[heads + 2] = True
    kept = ~tail[program.level_ops]
    parts = program_parts(program)
    # A part's smallest op is never a tail (its chain's first op comes before it).
    position = np.cumsum(kept) - 1
    counts = np.diff(np.concatenate(([0], np.cumsum(kept)))[program.level_ptr])
    counts = counts[counts > 0]
    level_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=level_ptr[1:])
    return attrs.evolve(
        program,
        level_ptr=level_ptr,
        level_ops=program.level_ops[kept],
        parts=position[parts[kept]].astype(np.int64),
    )
