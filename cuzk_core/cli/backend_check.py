"""``cuzk backends --check NAME``: the conformance checks from the command line, a line per hook."""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from cuzk_core.errors import CuzkError
from cuzk_core.profile import BACKEND_NAME, BACKEND_NAME_ALLOWED

if TYPE_CHECKING:  # the checks import the whole prover: only `cuzk backends` loads them
    from cuzk_core.conformance.checks import Outcome


def add_check_options(parser: argparse.ArgumentParser, seed: Callable[[str], int]) -> None:
    """``--check NAME`` and ``--seed N`` on the ``backends`` sub-command."""
    from cuzk_core.conformance.checks import REFERENCE

    parser.add_argument(
        "--check",
        metavar="NAME",
        help=f"check backend NAME hook by hook against the {REFERENCE} reference "
        "(exit 0: all pass, 1: a hook fails, 2: NAME unknown or unavailable)",
    )
    parser.add_argument(
        "--seed", type=seed, help="with --check: seed of the random inputs (default: fresh)"
    )


def _report(hook: str, outcomes: list[Outcome]) -> bool:
    """Print one hook's line (and its failures); True when every check passed."""
    failed = [o for o in outcomes if o.error is not None]
    count = f"{len(outcomes)} check{'s' if len(outcomes) > 1 else ''}"
    if failed:
        print(f"  {hook:<26} FAIL  {len(failed)} of {count}", flush=True)
        for outcome in failed:
            print(f"      {outcome.check.case}: {outcome.error}", flush=True)
        return False
    notes = [o.note for o in outcomes if o.note]
    status = "skip" if len(notes) == len(outcomes) else "pass"
    print(f"  {hook:<26} {status}  {'; '.join(sorted(set(notes))) or count}", flush=True)
    return True


def run(args: argparse.Namespace) -> int:
    """Run every check on backend ``args.check``: 0 when all pass, 1 when a hook fails."""
    from cuzk_core.conformance.checks import CHECKS, REFERENCE, run_check, subject

    if not BACKEND_NAME.fullmatch(args.check):  # else the profile's override named --change
        raise CuzkError(f"--check {args.check!r}: not {BACKEND_NAME_ALLOWED}")
    checked = subject(args.check)  # BackendUnavailable: one line and exit 2
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    against = "the definitions" if checked.is_reference else REFERENCE
    print(f"checking backend {args.check} against {against} (seed {seed})", flush=True)
    failing = [
        hook
        for hook in dict.fromkeys(check.hook for check in CHECKS)
        if not _report(hook, [run_check(c, checked, seed) for c in CHECKS if c.hook == hook])
    ]
    if failing:
        print(
            f"{args.check}: {len(failing)} hook(s) failed ({', '.join(failing)}); "
            f"replay with `cuzk backends --check {args.check} --seed {seed}`"
        )
        return 1
    print(f"{args.check}: every hook conforms ({len(CHECKS)} checks)")
    return 0
