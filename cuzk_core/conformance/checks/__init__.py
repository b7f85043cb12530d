"""Conformance checks: each hook of a backend against the CPU reference on small random and edge
inputs (scalars 0, 1, r−1, all-0/1 vectors, infinity, repeated and opposite points), and a
byte-identical proof for a fixed seed on a tiny circuit; and the helpers of the whole suite.

One list, :data:`CHECKS`, serves ``cuzk backends --check NAME`` and the pytest suite
(:mod:`cuzk_core.conformance.suite`) alike; the suite's larger tests use this package's checks
and comparisons too. Inputs come from :mod:`~cuzk_core.conformance.inputs`, drawn from
``check.rng(seed)``, so a seed replays a check wherever it runs. Sizes stay at 64 points or values
at most (257 fixed-base scalars) because the reference is plain Python. The reference itself is
held to the definitions in :mod:`~cuzk_core.conformance.oracles` (naive sums, one scalar
multiplication per point), not to itself.

A module per family of hooks holds its checks and lists them (``checks()``): :mod:`.backend`,
:mod:`.memory`, :mod:`.field`, :mod:`.poseidon`, :mod:`.msm`, :mod:`.proofs`; :mod:`.base` is
what they share (the subject, a check and its outcome, the expected answers, the comparisons),
:mod:`.circuits` the circuits they prove.
"""

from __future__ import annotations

import itertools

from cuzk_core import hookspecs

from . import backend, field, memory, msm, poseidon, proofs
from .base import (
    DEVICE_INPUT,
    HOST_INPUT,
    NOT_IMPLEMENTED,
    REFERENCE,
    Check,
    CheckFailed,
    Outcome,
    Subject,
    expected,
    expected_msm,
    largest_input,
    run_check,
    same_point,
    same_points,
    same_scalars,
    subject,
    unchanged,
)
from .circuits import GadgetCircuit, TinyCircuit, WideRowsCircuit
from .field import check_evaluate_r1cs, check_quotient, check_transform
from .msm import check_fixed_base, check_msm
from .poseidon import POSEIDON_WIDTHS, check_poseidon, poseidon_by_definition
from .proofs import PROOF_SEED, check_proof

__all__ = [
    "CHECKS",
    "DEVICE_INPUT",
    "HOST_INPUT",
    "NOT_IMPLEMENTED",
    "POSEIDON_WIDTHS",
    "PROOF_SEED",
    "REFERENCE",
    "Check",
    "CheckFailed",
    "GadgetCircuit",
    "Outcome",
    "Subject",
    "TinyCircuit",
    "WideRowsCircuit",
    "check_evaluate_r1cs",
    "check_fixed_base",
    "check_msm",
    "check_poseidon",
    "check_proof",
    "check_quotient",
    "check_transform",
    "expected",
    "expected_msm",
    "largest_input",
    "poseidon_by_definition",
    "run_check",
    "same_point",
    "same_points",
    "same_scalars",
    "subject",
    "unchanged",
]

_HOOK_ORDER = [name for name in vars(hookspecs) if name.startswith("cuzk_")]
"""The hooks as hookspecs.py defines them: the order checks are listed and reported in."""


def _place(check: Check) -> int:
    """Hooks in hookspec order, then ``isolation``, then ``proof`` (all hooks together)."""
    if check.hook in _HOOK_ORDER:
        return _HOOK_ORDER.index(check.hook)
    return len(_HOOK_ORDER) + (check.hook == "proof")


CHECKS: tuple[Check, ...] = tuple(
    sorted(
        itertools.chain.from_iterable(
            family.checks() for family in (backend, memory, field, poseidon, msm, proofs)
        ),
        key=_place,
    )
)
"""Every check, grouped by hook in hookspec order; ``proof`` (all hooks together) comes last."""
