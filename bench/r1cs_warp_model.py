"""A model of the R1CS products' cost by warps, for porep-lite's proving matrices, no GPU needed.

A warp of 32 / SPMV_LANES rows takes as long as its longest row (⌈length / lanes⌉ steps, plus
one for the warp itself), so the cost of a launch is that sum over its warps. Printed relative
to every row summed in each matrix's order: main's form in round 38 (A's rows that are B's
copied from B·z), every repeat skipped in place, the distinct rows packed in id order and
packed by length (r1cs_spmv_rows). Round 39 matched two of them on an H100 (0.59 against 0.59
measured; 0.56 against 0.58).

    python bench/r1cs_warp_model.py --challenges 34 --depth 32 --lanes 1,2,4
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from cuzk_core.circuits.porep_lite import PorepLite
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.r1cs import R1CSMatrices
from cuzk_core.witness.compiled import compile_circuit


def first_rows(matrices: R1CSMatrices) -> tuple[np.ndarray, np.ndarray]:
    """Each id's first (the least id of A's, then B's, then C's rows with the same entries)
    and each id's length."""
    rows = matrices.num_constraints
    seen: dict[tuple[bytes, bytes], int] = {}
    first = np.empty(3 * rows, np.int64)
    for k, m in enumerate((matrices.a, matrices.b, matrices.c)):
        for r in range(rows):
            begin, end = m.indptr[r], m.indptr[r + 1]
            key = (m.cols[begin:end].tobytes(), m.coeffs[begin:end].tobytes())
            first[k * rows + r] = seen.setdefault(key, k * rows + r)
    lengths = np.concatenate([np.diff(m.indptr) for m in (matrices.a, matrices.b, matrices.c)])
    return first, lengths


def warp_cost(lengths: np.ndarray, lanes: int) -> float:
    """Σ over warps of (the longest row's ⌈length / lanes⌉ + 1); a length of 0 is a row skipped."""
    per_warp = 32 // lanes
    padded = np.concatenate([lengths, np.zeros(-len(lengths) % per_warp, np.int64)])
    return float((np.ceil(padded.reshape(-1, per_warp) / lanes).max(axis=1) + 1).sum())


def launches(lengths: np.ndarray, rows: int, lanes: int) -> float:
    """The cost of one launch per matrix, each in its own row order."""
    return sum(warp_cost(lengths[k * rows : (k + 1) * rows], lanes) for k in range(3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--challenges", type=int, default=34)
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--lanes", default="1,2,4", help="SPMV_LANES values, comma-separated")
    args = parser.parse_args()
    backend = load_plugins().backend(load_profile("cpu"))
    compiled, _ = compile_circuit(backend, PorepLite(challenges=args.challenges, depth=args.depth))
    matrices = compiled.proving_matrices
    rows = matrices.num_constraints
    first, lengths = first_rows(matrices)
    ids = np.arange(3 * rows)
    distinct = first == ids
    a_is_b = first[:rows] == first[rows : 2 * rows]
    forms = {
        "every row": lengths,
        "A's rows that are B's skipped": np.where(
            np.concatenate([a_is_b, np.zeros(2 * rows, bool)]), 0, lengths
        ),
        "every repeat skipped in place": np.where(distinct, lengths, 0),
    }
    print(f"rows {rows}, entries {lengths.sum()}, in distinct rows {lengths[distinct].sum()}")
    for lanes in (int(x) for x in args.lanes.split(",")):
        every = launches(lengths, rows, lanes)
        costs = {name: launches(ls, rows, lanes) / every for name, ls in forms.items()}
        costs["distinct, packed in id order"] = warp_cost(lengths[distinct], lanes) / every
        costs["distinct, packed by length"] = warp_cost(np.sort(lengths[distinct]), lanes) / every
        print(f"lanes {lanes}: " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
