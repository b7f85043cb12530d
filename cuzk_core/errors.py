"""Errors a user can fix: the CLI prints them as one line and exits with status 2."""


class CuzkError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""

    exit_code = 2


class ProfileError(CuzkError):
    """A profile file is unreadable, malformed, or names an unknown key, type or value."""


class BackendUnavailable(CuzkError):
    """The selected backend is not installed or cannot run on this machine."""


class FormatError(CuzkError):
    """A params, key, proof or public-input file is missing, truncated or malformed."""
