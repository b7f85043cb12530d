"""``cuzk cache list`` and ``cuzk cache clear``: what lies under ``$CUZK_CACHE_DIR``.

Six kinds of entries: key caches (``keys/*.cuzkkey``, converted from a params.bin or a zkey on
first use), the parameters generated for embedded circuits (``params/<circuit>/``), compiled
native circuits (``compiled/<digest>/``, one per circuit shape, gadget code and file format),
and three small records: verifying keys whose points passed their checks, row starts of circom
``.r1cs`` files and their digests. Caches written beside a key (by ``cuzk setup``) belong to
that folder and are not touched.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from cuzk_core.cache import CHECKED, DIGESTS, R1CS_ROWS, cache_dir
from cuzk_core.errors import CuzkError
from cuzk_core.groth16.key_cache import SUFFIX, CacheInvalid, SourceStamp, read_header

_MIB = 1 << 20


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _key_status(path: Path) -> str:
    """fresh, stale, orphaned or invalid (and why), and the key it was converted from."""
    if path.name.startswith("."):
        return "unfinished (an interrupted conversion)"
    try:
        header = read_header(path)
    except CacheInvalid as why:
        return f"invalid: {why}"
    source = Path(header.source_path)
    if not source.is_file():
        return f"orphaned: {source} is gone"
    state = "fresh" if SourceStamp.of(source) == header.source else "stale"
    return f"{state}, {header.source_kind} {source}"


def entries() -> list[tuple[Path, str]]:
    """Every cache entry and what it is; a cache that is a file is an error, not "none"."""
    root = cache_dir()
    if root.exists() and not root.is_dir():
        raise CuzkError(f"cache {root}: a file, not a folder ($CUZK_CACHE_DIR names a file?)")
    found: list[tuple[Path, str]] = []
    keys = root / "keys"
    if keys.is_dir():
        for path in sorted(keys.iterdir()):
            if path.name.endswith(SUFFIX) or path.name.endswith(".tmp"):
                found.append((path, f"key cache, {_key_status(path)}"))
    params = root / "params"
    if params.is_dir():
        for path in sorted(p for p in params.iterdir() if p.is_dir()):
            found.append((path, "parameters of an embedded circuit"))
    compiled = root / "compiled"
    if compiled.is_dir():
        for path in sorted(compiled.iterdir()):
            found.append((path, "compiled circuit (matrices and witness program)"))
    checked = root / CHECKED
    if checked.is_dir():
        found.append((checked, "markers of verifying keys whose points passed their checks"))
    rows = root / R1CS_ROWS
    if rows.is_dir():
        found.append((rows, "row starts of circom .r1cs files (each checked before use)"))
    digests = root / DIGESTS
    if digests.is_dir():
        found.append((digests, "sha256 digests of circom .r1cs files (kept while unchanged)"))
    return found


def cache_list(args: argparse.Namespace) -> int:
    """``cuzk cache list``: each entry, its size and state."""
    found = entries()
    total = 0
    for path, what in found:
        size = _size(path)
        total += size
        print(f"{size / _MIB:10.1f} MiB  {path}  ({what})")
    print(f"{len(found)} entries, {total / _MIB:.1f} MiB in {cache_dir()}")
    return 0


def cache_clear(args: argparse.Namespace) -> int:
    """``cuzk cache clear``: remove every entry (they are rebuilt when next needed)."""
    found = entries()
    total = 0
    for path, _ in found:
        total += _size(path)
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    print(f"removed {len(found)} entries, {total / _MIB:.1f} MiB from {cache_dir()}")
    return 0


def add_cache_parser(sub: argparse._SubParsersAction) -> None:
    """The ``cache`` command and its two actions."""
    cache = sub.add_parser(
        "cache", help="list or clear key caches, generated parameters and compiled circuits"
    )
    actions = cache.add_subparsers(dest="cache_command", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every cache entry, its size and state")
    listing.set_defaults(handler=cache_list)
    clear = actions.add_parser("clear", help="remove every cache entry")
    clear.set_defaults(handler=cache_clear)
