"""Where cuzk keeps what it made once and reuses (``CUZK_CACHE_DIR``): parameters of the
embedded circuits, key caches, compiled circuits, markers of bytes that passed a check, and the
row starts of circom .r1cs files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

CHECKED = "checked"
"""The folder of markers: one empty file per (check, sha256 of the bytes that passed it)."""
R1CS_ROWS = "r1cs-rows"
"""The folder of circom .r1cs row starts, one file per .r1cs path: tried first on its next read."""


def cache_dir() -> Path:
    """``$CUZK_CACHE_DIR``, else ``$XDG_CACHE_HOME/cuzk``, else ``~/.cache/cuzk``."""
    explicit = os.environ.get("CUZK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "cuzk"


def path_tag(path: Path) -> str:
    """A short name for a file's cache entries, by its resolved path."""
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def check_marker(data: bytes | memoryview, check: str) -> Path:
    """Where the marker of ``data`` having passed ``check`` lives (its sha256 names it: bytes
    equal to ones that passed need not be checked again, whichever file holds them)."""
    return cache_dir() / CHECKED / f"{hashlib.sha256(data).hexdigest()}.{check}"


def mark_passed(marker: Path) -> None:
    """Leave ``marker`` (from :func:`check_marker`); a cache that cannot be written costs only
    the next check."""
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
