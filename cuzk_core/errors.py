"""Errors a user can fix: the CLI prints them as one line and exits with status 2."""

from __future__ import annotations

_SHOWN_CHARS = 40


class CuzkError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""

    exit_code = 2


class ProfileError(CuzkError):
    """A profile file is unreadable, malformed, or names an unknown key, type or value."""


class BackendUnavailable(CuzkError):
    """The selected backend is not installed or cannot run on this machine."""


class FormatError(CuzkError):
    """A params, key, proof or public-input file is missing, truncated or malformed."""


class OutputError(CuzkError):
    """An output cannot be written: its folder is missing or unwritable, or a folder stands
    where a file goes."""


def shown(value: object) -> str:
    """``repr(value)`` cut to a few dozen characters, so a value from a file keeps errors short."""
    text = repr(value)
    if len(text) <= _SHOWN_CHARS:
        return text
    return f"{text[: _SHOWN_CHARS - 12]}… ({len(text)} characters)"
