"""cuzk-fastcpu: a third-party CPU backend for cuzk, with C kernels built at install time."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

__version__ = "0.1.0"

BACKEND_NAME = "fastcpu"
"""The name a profile selects with ``backend = "fastcpu"``."""


def profile_path() -> Path:
    """The shipped profile ``fastcpu.toml``, for ``cuzk --profile PATH``."""
    return Path(str(importlib.resources.files("cuzk_fastcpu.profiles") / "fastcpu.toml"))
