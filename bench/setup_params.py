"""Make a porep-lite parameters folder of about 2^N constraints with ``cuzk setup``, timed.

porep-lite has 242·D + 2 constraints a challenge at depth D, and Groth16 adds an input row per
public input (the constant 1, the root, one leaf index a challenge), so 2^N rows take
K = ⌊(2^N − 2) / (242·D + 3)⌋ challenges: 135 at depth 32 for 2^20 (1 045 847 rows, a domain
of exactly 2^20). The script prints the ``cuzk`` command and runs it with ``CUZK_TIMING=2``, so
every setup step's span (``setup_prepare`` for kernel builds, ``setup_qap``, ``setup_h`` …
``setup_vk``, and a GPU backend's ``fixed_base_table`` / ``fixed_base_kernel`` below them) shows
where the time goes, then the wall time of the whole command (synthesis and writing params.bin
included).

    python bench/setup_params.py --log-size 20 --profile profiles/h200.toml --out params/porep-2e20
    python bench/setup_params.py --log-size 12 --depth 8 --profile cpu --out /tmp/p12

``cuzk --profile ... prove --params OUT`` proves with the folder afterwards.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time

from cuzk_core.circuits.porep_lite import MAX_DEPTH

ROWS_PER_LEVEL = 242
"""porep-lite's constraints a challenge and tree level (a swap and a 240-constraint hash, plus
one for the index bit); the challenge adds 2 more (packing the index, the root check)."""


def challenges_for(log_size: int, depth: int) -> int:
    """The most challenges whose constraint and input rows fit a domain of 2^log_size."""
    return ((1 << log_size) - 2) // (ROWS_PER_LEVEL * depth + 3)


def rows(challenges: int, depth: int) -> int:
    """Constraint rows of porep-lite with Groth16's input rows."""
    return challenges * (ROWS_PER_LEVEL * depth + 2) + challenges + 2


def main(argv: list[str] | None = None) -> int:
    """Work out the circuit knobs, then run and time ``cuzk setup``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-size", type=int, default=20, help="N: about 2^N constraints")
    parser.add_argument("--depth", type=int, default=32, help=f"Merkle depth D (1..{MAX_DEPTH})")
    parser.add_argument("--profile", default="profiles/h200.toml", help="cuzk profile")
    parser.add_argument("--out", required=True, help="parameters folder to write")
    parser.add_argument(
        "--seed", type=int, default=1, help="toxic-waste seed (reproducible, insecure)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the command, run nothing")
    args = parser.parse_args(argv)
    if not 1 <= args.depth <= MAX_DEPTH:
        parser.error(f"--depth must be 1..{MAX_DEPTH}")
    challenges = challenges_for(args.log_size, args.depth)
    if challenges < 1:
        parser.error(f"one challenge at depth {args.depth} does not fit 2^{args.log_size} rows")
    command = [
        *(sys.executable, "-m", "cuzk_core", "--quiet", "--profile", args.profile, "setup"),
        *("--out", args.out, "--seed", str(args.seed)),
        *("--challenges", str(challenges), "--depth", str(args.depth)),
    ]
    size = rows(challenges, args.depth)
    print(
        f"porep-lite: {challenges} challenges at depth {args.depth}: {size} rows "
        f"({size / (1 << args.log_size):.1%} of 2^{args.log_size})"
    )
    print("$ CUZK_TIMING=2 " + shlex.join(command), flush=True)
    if args.dry_run:
        return 0
    start = time.perf_counter()
    done = subprocess.run(command, env={**os.environ, "CUZK_TIMING": "2"}, check=False)
    print(f"cuzk setup: exit {done.returncode} after {time.perf_counter() - start:.1f} s")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
