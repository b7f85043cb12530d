"""Files in and out, safely: inputs are bounded regular files, outputs appear whole or not at all.

Reading: only regular files are read (a FIFO or a device such as /dev/zero is refused, and the
open never blocks), small formats are refused up front when larger than any valid file, and JSON
problems (bad UTF-8, syntax, absurd numbers, nesting deeper than any valid file) are one-line
:class:`FormatError`\\ s.
Writing: each file goes to a temporary file beside its target, then an atomic rename; a set of
files (a proof's, a parameters folder's) is written with :func:`write_together`. Outputs are
checked before the work that produces them (:func:`check_output_folder`,
:func:`check_output_file`): cuzk creates the folder named by ``--out`` but never a missing folder
above an output.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_core.errors import FormatError, OutputError

MAX_JSON_DIGITS = 1000
"""Longest JSON number literal read; the largest value in any file cuzk reads has 116 digits."""
MAX_JSON_DEPTH = 64
"""Deepest JSON nesting read (cuzk's and snarkjs's files nest 4 deep); checked before parsing,
so the parser's recursion never depends on the interpreter's recursion limit."""
# An unterminated string runs to the end (json.loads then says where it starts): without the
# \Z the search retried from every quote to the end, quadratic (a 200 KB file took 78 s).
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)', re.S)
_OPENERS, _CLOSERS = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


# ---------------------------------------------------------------- reading


@contextlib.contextmanager
def _open_regular(path: Path) -> Iterator[tuple[int, int]]:
    """``(fd, size)`` of a regular file, opened without blocking; a FormatError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FormatError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FormatError(f"{path}: is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise FormatError(f"{path}: is {kind}; cuzk reads only regular files")
        yield fd, info.st_size
    finally:
        os.close(fd)


def read_input(path: str | Path, max_bytes: int, what: str) -> bytes:
    """The bytes of the regular file ``path``, refused up front when it is over ``max_bytes``."""
    path = Path(path)
    with _open_regular(path) as (fd, size):
        if size > max_bytes:
            raise FormatError(
                f"{path}: {size} bytes, more than any valid {what} ({max_bytes} bytes at most)"
            )
        chunks, left = [], max_bytes + 1  # read past the limit to notice a file that grew
        try:
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        except OSError as exc:
            raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise FormatError(f"{path}: more than any valid {what} ({max_bytes} bytes at most)")
    return data


def read_start(path: str | Path, size: int) -> bytes:
    """The first ``size`` bytes (or fewer) of the regular file ``path``."""
    path = Path(path)
    with _open_regular(path) as (fd, _):
        try:
            return os.read(fd, size)
        except OSError as exc:
            raise FormatError(f"{path}: cannot read: {exc.strerror}") from None


def map_input(path: str | Path) -> np.ndarray:
    """A regular file as a read-only uint8 array backed by the page cache (large binary files)."""
    path = Path(path)
    with _open_regular(path) as (fd, size):
        if size == 0:
            return np.zeros(0, dtype=np.uint8)
        try:
            return np.frombuffer(mmap.mmap(fd, size, access=mmap.ACCESS_READ), np.uint8)
        except (OSError, ValueError) as exc:
            raise FormatError(f"{path}: cannot map: {exc}") from None


class _LongNumber(ValueError):
    """A JSON number literal longer than :data:`MAX_JSON_DIGITS`."""


def _json_int(text: str) -> int:
    if len(text) > MAX_JSON_DIGITS:
        raise _LongNumber(len(text))
    return int(text)


def json_depth(data: bytes) -> int:
    """How deep ``[`` and ``{`` nest in JSON text, strings left out."""
    bare = np.frombuffer(_JSON_STRING.sub(b"", data), np.uint8)
    brackets = bare[np.isin(bare, _OPENERS) | np.isin(bare, _CLOSERS)]
    steps = np.where(np.isin(brackets, _OPENERS), 1, -1)
    return int(np.cumsum(steps).max(initial=0))


def read_json(path: str | Path, max_bytes: int, what: str) -> Any:
    """Parse a UTF-8 JSON file of at most ``max_bytes``; every problem is a one-line FormatError."""
    path = Path(path)
    data = read_input(path, max_bytes, what)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"{path}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}), not a {what}"
        ) from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise FormatError(
            f"{path}: JSON nested more than {MAX_JSON_DEPTH} deep, too deep to be a {what}"
        )
    try:
        return json.loads(text, parse_int=_json_int)
    except _LongNumber as exc:
        raise FormatError(
            f"{path}: a JSON number of {exc.args[0]} characters, longer than any a {what} "
            f"holds ({MAX_JSON_DIGITS} at most)"
        ) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"{path}: not a JSON file: {exc}") from None


# ---------------------------------------------------------------- checking outputs beforehand


def _probe_writable(folder: Path, label: str) -> None:
    """Create and remove a temporary file in ``folder``: the one sure test of writability."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".cuzk-probe-", dir=folder)
    except OSError as exc:
        raise OutputError(f"{label}: cannot write in {folder}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)


def _existing_parent(path: Path, label: str) -> Path:
    parent = path.parent
    if not parent.is_dir():
        state = "is not a folder" if parent.exists() else "does not exist"
        raise OutputError(
            f"{label}: folder {parent} {state} (cuzk creates no folders above an output)"
        )
    return parent


def check_output_folder(folder: str | Path, names: Iterable[str], option: str = "--out") -> None:
    """Before any work: ``folder`` is a writable folder (or can be made in an existing one) and
    none of ``names`` in it is a folder."""
    folder = Path(folder)
    label = f"{option} {folder}"
    if not folder.exists():
        _probe_writable(_existing_parent(folder, label), label)
        return
    if not folder.is_dir():
        raise OutputError(f"{label}: is a file, not a folder")
    for name in names:
        if (folder / name).is_dir():
            raise OutputError(f"{label}: {folder / name} is a folder; cuzk writes a file there")
    _probe_writable(folder, label)


def check_output_file(path: str | Path | None, option: str) -> None:
    """Before any work: ``path`` (when given) is not a folder and its folder exists and is
    writable."""
    if path is None:
        return
    path = Path(path)
    label = f"{option} {path}"
    if path.is_dir():
        raise OutputError(f"{label}: is a folder; give a file name")
    _probe_writable(_existing_parent(path, label), label)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


def refuse_outputs_over_inputs(
    outputs: Iterable[tuple[str, str | Path | None]], inputs: Iterable[str | Path | None]
) -> None:
    """Before any work: no output (``(option, path)``) is a file the command reads, one of
    ``inputs`` or a file in an input folder (a proving key's folder), by its identity, so a
    link or another spelling of the path is caught too."""
    read: set[tuple[int, int]] = set()
    for given in inputs:
        if given is None:
            continue
        path = Path(given)
        try:
            members = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
        except OSError:  # an unreadable folder: its own read says so, in one line
            continue
        read.update(i for i in map(_identity, members) if i is not None)
    for option, given in outputs:
        if given is not None and _identity(Path(given)) in read:
            raise OutputError(f"{option} {given}: is an input of this command; give another file")


# ---------------------------------------------------------------- writing


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _temp_beside(path: Path) -> tuple[int, str]:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~_current_umask())  # mkstemp makes 0600; outputs are ordinary files
    return fd, tmp


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "wb") -> Iterator[Any]:
    """Open a temp file for writing; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temp_beside(path)
    except OSError as exc:  # a cache folder that is a file, a read-only place
        raise OutputError(f"{path}: cannot write there: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        try:
            os.replace(tmp, path)
        except OSError as exc:  # a folder where the file goes
            raise OutputError(f"{path}: cannot write there: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_output(path) as f:
        f.write(data)


def json_bytes(value: Any) -> bytes:
    """``value`` as indented JSON and a final newline, the way every cuzk JSON file is written."""
    return (json.dumps(value, indent=2) + "\n").encode()


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically."""
    write_bytes_atomic(path, json_bytes(value))


def write_together(
    folder: str | Path, contents: Mapping[str, bytes], remove: Iterable[str] = ()
) -> None:
    """Write the files ``contents`` names into ``folder`` and remove those ``remove`` names
    (files of an earlier output that this one has no counterpart for): all of it, or none.

    Every file goes to a temporary file first; only when all are written are they renamed into
    place. If anything fails, the temporaries are removed, files already renamed or removed get
    their previous versions back (or are removed), and a folder this call created is removed
    again.
    """
    folder = Path(folder)
    created = not folder.exists()
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder}: cannot create the folder: {exc.strerror}") from None
    temps: dict[Path, str] = {}
    backups: dict[Path, Path | None] = {}  # each renamed target: its previous file's backup
    try:
        for name, data in contents.items():
            target = folder / name
            if target.is_dir():
                raise OutputError(f"{target}: is a folder; cuzk writes a file there")
            fd, tmp = _temp_beside(target)
            temps[target] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        for target, tmp in temps.items():
            backup = _backup(target)
            try:
                os.replace(tmp, target)
            except BaseException:
                if backup is not None:
                    os.unlink(backup)
                raise
            backups[target] = backup
        for name in remove:
            target = folder / name
            if target.is_file():
                backups[target] = _backup(target)
                os.unlink(target)
    except BaseException as exc:
        _undo(temps, backups)
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        if isinstance(exc, OSError):
            raise OutputError(f"{folder}: cannot write: {exc.strerror or exc}") from None
        raise
    finally:
        for backup in backups.values():
            if backup is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(backup)


def _backup(target: Path) -> Path | None:
    """A hard link to the file ``target`` holds now (None when there is none, or no links)."""
    if not target.is_file():
        return None
    backup = target.with_name(f".{target.name}.{secrets.token_hex(6)}.old")
    try:
        os.link(target, backup)
    except OSError:
        return None
    return backup


def _undo(temps: Mapping[Path, str], renamed: Mapping[Path, Path | None]) -> None:
    """Put back what :func:`write_together` replaced and remove what it wrote."""
    for target, backup in renamed.items():
        with contextlib.suppress(OSError):
            if backup is not None:
                os.replace(backup, target)
            else:
                os.unlink(target)
    for tmp in temps.values():
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
