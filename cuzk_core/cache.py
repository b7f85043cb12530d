"""Where cuzk keeps what it made once and reuses (``CUZK_CACHE_DIR``): parameters of the
embedded circuits, key caches, compiled circuits, markers of bytes that passed a check, the
row starts of circom .r1cs files and files' sha256 digests."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

from cuzk_core.errors import OutputError
from cuzk_core.fileio import write_json_atomic

CHECKED = "checked"
"""The folder of markers: one empty file per (check, sha256 of the bytes that passed it)."""
R1CS_ROWS = "r1cs-rows"
"""The folder of circom .r1cs row starts, one file per .r1cs path: tried first on its next read."""
DIGESTS = "digests"
"""The folder of files' sha256 digests, one entry per path with the file's identity then."""
_SHA256 = re.compile(r"[0-9a-f]{64}")
_RACY_NS = 2_000_000_000
"""A file changed this recently may change again within its ctime's granularity (coarse on
older kernels and network file systems): its digest is not kept."""


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


def file_identity(path: Path) -> dict[str, int]:
    """What changes whenever a file's bytes may have: any write or replacement changes its
    ctime, which no user call can set back (the compiled store's stamps rely on it too)."""
    info = path.stat()
    return {
        "size": info.st_size,
        "inode": info.st_ino,
        "device": info.st_dev,
        "mtime_ns": info.st_mtime_ns,
        "ctime_ns": info.st_ctime_ns,
    }


def settled_since(path: Path, identity: dict[str, int]) -> bool:
    """Whether what was read of ``path`` since it had ``identity`` may be remembered by that
    identity: the file was not written to meanwhile, nor within a coarse ctime tick before (a
    rewrite of the same size then could keep its ctime: git's "racy" entries)."""
    settled = time.time_ns() - identity["ctime_ns"] > _RACY_NS
    return settled and file_identity(path) == identity


def file_sha256(path: Path) -> str:
    """The sha256 of ``path``'s bytes, read again only when the file changed since its last
    digest (by :func:`file_identity`): a 2^24-constraint .r1cs is ~1.6 s of hashing."""
    entry = cache_dir() / DIGESTS / f"{path.name}-{path_tag(path)}.json"
    identity = file_identity(path)
    try:
        known = json.loads(entry.read_bytes())
        if isinstance(known, dict) and known.get("identity") == identity:
            remembered = known.get("sha256")
            if isinstance(remembered, str) and _SHA256.fullmatch(remembered):
                return remembered
    except (OSError, ValueError, RecursionError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if settled_since(path, identity):
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(entry, {"identity": identity, "sha256": digest.hexdigest()})
        except (OSError, OutputError):
            pass  # an unwritable cache costs the next digest only
    return digest.hexdigest()
