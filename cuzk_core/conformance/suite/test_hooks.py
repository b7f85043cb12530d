"""Every conformance check, one test each: what ``cuzk backends --check NAME`` runs."""

from __future__ import annotations

import pytest

from cuzk_core.conformance.checks import CHECKS, Check, Subject


@pytest.mark.parametrize("check", CHECKS, ids=[check.id for check in CHECKS])
def test_hook(check: Check, cuzk_subject: Subject, cuzk_seed: int) -> None:
    """One check of one hook against the cpu reference; an unimplemented optional hook skips."""
    note = check.run(cuzk_subject, check.rng(cuzk_seed))
    if note is not None:
        pytest.skip(f"{check.hook}: {note}")
