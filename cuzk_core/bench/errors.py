"""Errors of ``cuzk bench`` and ``cuzk trace``: one line each, no traceback."""

from __future__ import annotations

from cuzk_core.errors import CuzkError


class BenchError(CuzkError):
    """Bad bench input: a size, a threshold, a change, a phase name or a results file."""


class BenchCheckFailed(CuzkError):
    """The backend's answer disagrees with the reference: timing a wrong answer is moot."""

    exit_code = 1
