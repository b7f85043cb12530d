"""``cuzk check --key KEY [--r1cs CIRCUIT]``: a proving key checked in full before it is trusted."""

from __future__ import annotations

import argparse

from cuzk_core.backend import Backend
from cuzk_core.groth16.keycheck import G1, G2, SOUNDNESS_BITS, check_key
from cuzk_core.progress import Progress


def run(args: argparse.Namespace, backend: Backend) -> int:
    """Exit 0 and a summary when every point lies in its subgroup (and, with --r1cs, the zkey's
    coefficients are the circuit's) on ``backend``; otherwise the one-line error names the
    section and index."""
    progress = Progress("check key", G1.rounds + G2.rounds, enabled=False if args.quiet else None)
    report = check_key(args.key, backend, args.r1cs, progress)
    progress.close()
    coefficients = ", coefficients match the circuit" if report.coefficients_checked else ""
    print(
        f"key ok: {report.g1_points} G1 and {report.g2_points} G2 query points in their "
        f"subgroups (a bad point passes with probability < 2^-{SOUNDNESS_BITS}), verifying key "
        f"checked point by point{coefficients}"
    )
    return 0
