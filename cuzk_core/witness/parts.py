"""A witness program's independent parts: ops that no chain of reads joins can run apart.

Many programs are a set of parts that read nothing of each other (porep-lite: one Poseidon path
per challenge). A backend can then run each part on its own (the GPU's ``witness_blocks``: a
part per block, no grid-wide barrier). The parts are a property of the program alone, found
once by the compile and stored with it (``WitnessProgram.parts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from .program import BIT, HINT, SOLVE, WitnessProgram


def program_parts(program: WitnessProgram) -> np.ndarray:
    """Per op of ``level_ops``, the smallest op position of its part: the stored parts, or
    found now for a program made without the store (~1 s a million ops)."""
    if program.parts is not None:
        return program.parts
    return independent_parts(len(program.level_ops), joining_pairs(program))


CHUNK_ENTRIES = 1 << 22
"""Row entries gathered at once: bounds the pairs held (a 2^24 program reads ~26 aux an op;
all at once would be ~7 GB of pairs)."""


def joining_pairs(
    program: WitnessProgram, chunk_entries: int = CHUNK_ENTRIES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Pairs of non-hint ops that are in one part, as positions in ``program.level_ops``,
    about ``chunk_entries`` at a time: each op and every computed op its rows read (a ``lin``
    row that several BIT ops decompose is read once, by the first of them, and the others are
    paired with that one)."""
    kind, arg, n_in = program.kind, program.arg, program.num_inputs
    position = np.full(len(kind), -1, dtype=np.int64)
    position[program.level_ops] = np.arange(len(program.level_ops), dtype=np.int64)
    solved = np.flatnonzero(kind == SOLVE)
    bits = np.flatnonzero(kind == BIT)
    rows, first, which = np.unique(arg[bits], return_index=True, return_inverse=True)
    others = bits != bits[first][which]
    yield position[bits[others]], position[bits[first][which][others]]
    m = program.matrices
    readers = ((m.a, solved, arg[solved]), (m.b, solved, arg[solved]), (m.c, solved, arg[solved]))
    for matrix, ops, op_rows in (*readers, (program.lin, bits[first], rows)):
        ends = np.cumsum(matrix.indptr[op_rows + 1] - matrix.indptr[op_rows])
        if not len(ends) or not ends[-1]:
            continue
        starts = np.searchsorted(ends, np.arange(0, ends[-1], chunk_entries))
        for lo, hi in zip(starts, [*starts[1:], len(ops)], strict=True):
            owner, cols = matrix.row_entries(op_rows[lo:hi])
            reader, read = ops[lo:hi][owner], cols - n_in
            keep = read >= 0
            reader, read = reader[keep], read[keep]
            keep = (read != reader) & (kind[read] != HINT)  # a SOLVE's own aux is 0 as it runs
            yield position[reader[keep]], position[read[keep]]


def independent_parts(count: int, pairs: Iterable[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per op, the smallest op of its part: ops joined by a chain of pairs share one.

    Label propagation with pointer jumping, a batch of pairs at a time: each round joins every
    two parts a pair still crosses (their roots hook to the smaller), then points every op at
    its part's root. Parts only ever merge, so a pair inside a part stays inside: a round looks
    only at the pairs that crossed before it, and a batch done stays done. (Pointing only a
    batch's own ops at their roots measured slower: 11.3 s against 6.9 for 100 M pairs over
    16.7 M ops in 2,165 chains, this VM.)"""
    label = np.arange(count, dtype=np.int64)
    for reader, read in pairs:
        while True:
            root_reader, root_read = label[reader], label[read]
            crossing = root_reader != root_read
            if not crossing.any():
                break
            reader, read = reader[crossing], read[crossing]
            root_reader, root_read = root_reader[crossing], root_read[crossing]
            low = np.minimum(root_reader, root_read)
            np.minimum.at(label, root_reader, low)
            np.minimum.at(label, root_read, low)
            while True:  # labels only point down, so this ends at the roots
                jumped = label[label]
                if np.array_equal(jumped, label):
                    break
                label = jumped
    return label
