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
    parts: np.ndarray | None = None
    """int64 beside ``level_ops``: each op's part (:mod:`.parts`), when stored with the program."""
    sbox_heads: np.ndarray | None = None
    """int64: the first aux of every S-box chain (:mod:`.chains`), when stored with the program."""

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
    below j. Returns ``(level_ptr, level_ops)``.

    Kahn's layering in array operations, one step a level rather than one an op: an op joins the
    level after the one where the last non-hint op it reads was placed."""
    n = len(program_kind)
    computed = program_kind != HINT
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(deps_ptr))
    edge = computed[owner] & computed[deps]  # hints sit at level 0: they wait for nothing
    owner, dep = owner[edge], deps[edge]
    waiting = np.bincount(owner, minlength=n)  # per op, how many computed ops it still waits for
    order = np.argsort(dep, kind="stable")
    readers, reader_ptr = owner[order], np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dep, minlength=n), out=reader_ptr[1:])
    level = np.flatnonzero(computed & (waiting == 0))
    levels = []
    while len(level):
        levels.append(level)
        starts, ends = reader_ptr[level], reader_ptr[level + 1]
        counts = ends - starts
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        told, times = np.unique(readers[np.repeat(starts, counts) + offsets], return_counts=True)
        waiting[told] -= times
        level = told[waiting[told] == 0]
    sizes = np.array([len(ops) for ops in levels], dtype=np.int64)
    level_ptr = np.zeros(len(levels) + 1, dtype=np.int64)
    np.cumsum(sizes, out=level_ptr[1:])
    level_ops = np.concatenate(levels) if levels else np.zeros(0, dtype=np.int64)
    return level_ptr, level_ops.astype(np.int64)
