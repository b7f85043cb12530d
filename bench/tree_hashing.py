"""porep-lite's Merkle tree hashed on a backend: its ``cuzk_poseidon_layers`` (every level in one
call) against the core's fallback (one ``cuzk_poseidon`` call a level), alternating, as JSON.

Each run builds a fresh tree (a new seed) and takes the wall time of the whole hashing, host
work included, since the host round trips a level are what the layers hook removes; both ways
must give the same nodes.

    python bench/tree_hashing.py --profile h200 --challenges 135 --depth 32 --out X.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from cuzk_core.bench.environment import capture
from cuzk_core.circuits import PorepLite
from cuzk_core.gadgets.poseidon.batch import hash2_layers_by_permutations, poseidon_table
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="h200")
    parser.add_argument("--challenges", type=int, default=135)
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    backend = load_plugins().backend(load_profile(args.profile))
    table = poseidon_table()
    ways = {
        "layers hook": lambda nodes, layers: backend.poseidon_layers(nodes, layers, table),
        "a cuzk_poseidon call a level": lambda nodes, layers: hash2_layers_by_permutations(
            nodes, layers, table, backend.poseidon
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for run in range(args.runs + 1):
        nodes, layers = PorepLite(args.challenges, args.depth, seed=run).tree_layers()
        results = []
        for name, way in ways.items():
            start = time.perf_counter()
            results.append(way(nodes, layers))
            if run:  # the first run builds kernels and tables
                times[name].append(1000 * (time.perf_counter() - start))
        if not np.array_equal(*results):
            print(f"run {run}: the two ways hash different trees", file=sys.stderr)
            return 1
    hashes = sum(len(left) for left, _ in layers)
    print(f"porep-lite c{args.challenges} d{args.depth}: {hashes} hashes in {args.depth} levels")
    rows = {}
    for name, values in times.items():
        rows[name] = {"median_ms": statistics.median(values), "runs_ms": values}
        print(f"{name:32} {statistics.median(values):8.2f} ms  (min {min(values):.2f})")
    if args.out:
        record = {
            "benchmark": "tree-hashing",
            "backend": backend.name,
            "profile": args.profile,
            "circuit": {"challenges": args.challenges, "depth": args.depth, "hashes": hashes},
            "environment": capture(),
            "ways": rows,
        }
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
