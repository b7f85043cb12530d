"""The witness program: how every aux variable follows from the inputs, as plain arrays.

Op ``j`` computes aux ``j`` (column ``num_inputs + j`` of z) in one of three ways:

- ``HINT``: the circuit's own value, hint slot ``arg[j]`` (the private inputs a replay captures);
- ``SOLVE``: constraint row ``r = arg[j]`` names aux j in its C side only, so
  ``z_j = (A_r·z · B_r·z − C_r·z|_{z_j=0}) · inverses[extra[j]]`` (1 / its C coefficient);
- ``BIT``: bit ``extra[j]`` of the canonical value of ``L_k·z``, ``k = arg[j]`` (a row of ``lin``).

Every op reads only inputs and earlier aux, so allocation order is a valid evaluation order;
``level_ops`` lists the non-hint ops grouped by level (``level_ptr``): the ops of one level read
only ops of earlier levels, so a backend may run a level's ops at once.
"""

from __future__ import annotations

import attrs
import numpy as np

from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

HINT, SOLVE, BIT = 0, 1, 2
"""The op kinds."""


@attrs.frozen(eq=False)
class WitnessProgram:
    """A circuit's witness computation: ops over the matrices' rows and the ``lin`` rows."""

    matrices: R1CSMatrices
    """A, B, C without the input rows Groth16 appends (what SOLVE ops read)."""
    kind: np.ndarray
    """uint8 (num_aux): HINT, SOLVE or BIT per aux variable."""
    arg: np.ndarray
    """int64 (num_aux): hint slot, constraint row or ``lin`` row."""
    extra: np.ndarray
    """int64 (num_aux): index into ``inverses`` (SOLVE), bit position (BIT), else 0."""
    inverses: np.ndarray
    """uint64 (k, 4): the distinct inverses of the C coefficients SOLVE ops divide by."""
    lin: SparseMatrix
    """The linear combinations BIT ops decompose, one row each, over the columns of z."""
    num_hints: int
    level_ptr: np.ndarray
    """int64 (levels + 1): level ``l`` is ``level_ops[level_ptr[l]:level_ptr[l+1]]``."""
    level_ops: np.ndarray
    """int64: the aux index of every non-hint op, by level, ascending within a level."""

    @property
    def num_inputs(self) -> int:
        """Public inputs, ONE included."""
        return self.matrices.num_inputs

    @property
    def num_aux(self) -> int:
        """Aux variables (ops)."""
        return self.matrices.num_aux

    @property
    def num_levels(self) -> int:
        """Levels of non-hint ops."""
        return len(self.level_ptr) - 1

    def counts(self) -> dict[str, int]:
        """How many ops of each kind, and the levels: what ``cuzk bench synth`` reports."""
        kinds = np.bincount(self.kind, minlength=3)
        return {
            "hints": int(kinds[HINT]),
            "solved": int(kinds[SOLVE]),
            "bits": int(kinds[BIT]),
            "levels": self.num_levels,
        }


def levels_of(
    program_kind: np.ndarray, deps_ptr: np.ndarray, deps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Group ops into levels: an op's level is one more than the deepest aux it reads (inputs and
    hints are level 0). ``deps[deps_ptr[j]:deps_ptr[j+1]]`` are the aux indices op j reads, all
    below j. Returns ``(level_ptr, level_ops)``."""
    n = len(program_kind)
    level = [0] * n
    ptr = deps_ptr.tolist()
    flat = deps.tolist()
    for j in np.flatnonzero(program_kind != HINT).tolist():
        start, end = ptr[j], ptr[j + 1]
        level[j] = 1 + max(map(level.__getitem__, flat[start:end]), default=0)
    levels = np.asarray(level, dtype=np.int64)
    ops = np.flatnonzero(program_kind != HINT)
    order = ops[np.argsort(levels[ops], kind="stable")]
    counts = np.bincount(levels[ops], minlength=1)[1:] if len(ops) else np.zeros(0, np.int64)
    level_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=level_ptr[1:])
    return level_ptr, order.astype(np.int64)
