"""Writing outputs safely: to a temporary file beside the target, then an atomic rename."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "wb") -> Iterator[Any]:
    """Open a temp file for writing; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_current_umask())  # mkstemp makes 0600; outputs are ordinary files
        with os.fdopen(fd, mode) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_output(path) as f:
        f.write(data)


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically."""
    with atomic_output(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")
