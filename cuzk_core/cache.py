"""Where cuzk keeps parameters it generated for the embedded circuits (``CUZK_CACHE_DIR``)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$CUZK_CACHE_DIR``, else ``$XDG_CACHE_HOME/cuzk``, else ``~/.cache/cuzk``."""
    explicit = os.environ.get("CUZK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "cuzk"
