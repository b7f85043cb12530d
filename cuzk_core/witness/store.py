"""A compiled circuit on disk: one uncompressed file of plain arrays, mapped instead of read.

Layout: 8 magic bytes, the length and the CRC-32 of a JSON header (little-endian uint64s), the
header (format,
shape digest, counts, row-name tables, and each array's dtype, shape, offset and CRC-32 per
64 MiB chunk), then every array at a 64-byte aligned offset. The matrices are stored as the
prover uses them, input rows included; :func:`load` maps the file read-only and returns the
program and the proving matrices as views of it, the program's rows being the first rows of the
proving matrices (one copy, and a backend can tell they are the same rows). Only the header is
parsed; the arrays are paged in as they are read.

A file whose digest is not the one asked for (stale) or whose header, size, bounds or checksums
are wrong (corrupted) is refused with the reason, never used. Checksumming every byte costs more
than the rest of a load (about 2 GB/s a core), so the full check (checksums and bounds) runs once
per change of the file: a stamp beside it records the file's inode, size, mtime and ctime when it
last passed, and every write to or replacement of the file changes its ctime. A file changed in the
last two seconds is not stamped (a ctime tick can be that coarse). Writes are atomic.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import numpy as np

from cuzk_core.cache import file_identity, settled_since
from cuzk_core.fileio import atomic_output, write_json_atomic
from cuzk_core.r1cs import ConstraintNames, R1CSMatrices, SparseMatrix

from .chains import program_sbox_heads
from .parts import program_parts
from .program import WitnessProgram

FORMAT = "cuzk-compiled-circuit/3"
_MAGIC = b"CUZKCC2\0"
_PREFIX = len(_MAGIC) + 16
"""The magic, the header's length and its CRC-32."""
_ALIGN = 64
_CHUNK = 64 << 20
"""Bytes per checksummed chunk: the chunks of a full check run on threads."""
_MATRICES = ("a", "b", "c", "lin")
_PROGRAM = ("kind", "arg", "extra", "inverses", "level_ptr", "level_ops")
_MAX_HEADER = 1 << 30


class StoreRefused(Exception):
    """The file cannot be used: missing, stale or corrupted (the message says which)."""


class _Indexed(Sequence):
    """``table[index[i]]``: a row-name column without a Python list as long as the rows."""

    def __init__(self, table: list[str], index: np.ndarray) -> None:
        self._table, self._index = table, index

    def __len__(self) -> int:
        return len(self._index)

    def __getitem__(self, i):  # type: ignore[override]  # ints only: what ConstraintNames asks
        return self._table[int(self._index[i])]


def stamp_path(path: Path) -> Path:
    """Where the stamp of ``path``'s last full check lives."""
    return path.with_name(path.name + ".verified")


def _bytes(array: np.ndarray) -> memoryview:
    """A C-contiguous array's bytes, without a copy (empty arrays too)."""
    return memoryview(array.reshape(-1).view(np.uint8))  # type: ignore[arg-type]


def _checksums(arrays: dict[str, np.ndarray]) -> dict[str, list[int]]:
    """Each array's CRC-32 per _CHUNK bytes ([0] when empty), the chunks on threads (zlib
    releases the GIL): a 2^24 circuit's file is ~20 GB, ~10 s at ~2 GB/s on one core."""
    views = {key: _bytes(array) for key, array in arrays.items()}
    jobs = [(key, k) for key, data in views.items() for k in range(0, len(data), _CHUNK) or [0]]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        sums = pool.map(lambda job: zlib.crc32(views[job[0]][job[1] : job[1] + _CHUNK]), jobs)
        found: dict[str, list[int]] = {key: [] for key in arrays}
        for (key, _), crc in zip(jobs, sums, strict=True):
            found[key].append(crc)
    return found


def _interned(strings: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Each string's index into the table of the distinct ones (in first-seen order): one
    dict lookup a string, where ``np.unique`` over objects sorted millions of them."""
    table = {s: i for i, s in enumerate(dict.fromkeys(strings))}
    return np.fromiter(map(table.__getitem__, strings), np.uint32, len(strings)), list(table)


def _names_arrays(names: ConstraintNames) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    bare_index, bare = _interned(names.names)
    prefix_index, prefix = _interned(names.mark_prefix)
    arrays: dict[str, np.ndarray] = {
        "name_index": bare_index,
        "mark_at": np.asarray(names.mark_at, dtype=np.int64),
        "mark_prefix_index": prefix_index,
    }
    return arrays, {"names": bare, "prefixes": prefix}


def save(path: Path, digest: str, program: WitnessProgram, proving: R1CSMatrices) -> int:
    """Write ``program`` and ``proving`` (its matrices with the prover's rows appended) for
    shape ``digest``; the file's size in bytes."""
    sources = {"a": proving.a, "b": proving.b, "c": proving.c, "lin": program.lin}
    arrays: dict[str, np.ndarray] = {}
    for key in _MATRICES:
        arrays[f"{key}_indptr"] = sources[key].indptr
        arrays[f"{key}_cols"] = sources[key].cols
        arrays[f"{key}_coeffs"] = sources[key].coeffs
    for key in _PROGRAM:
        arrays[key] = getattr(program, key)
    arrays["parts"] = program_parts(program)
    arrays["sbox_heads"] = program_sbox_heads(program)
    tables: dict[str, list[str]] = {"names": [], "prefixes": []}
    if program.matrices.names is not None:
        name_arrays, tables = _names_arrays(program.matrices.names)
        arrays.update(name_arrays)
    arrays = {key: np.ascontiguousarray(array) for key, array in arrays.items()}
    checksums = _checksums(arrays)
    layout, offset = {}, 0
    for key, array in arrays.items():
        layout[key] = {
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "offset": offset,
            "crc32": checksums[key],
        }
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    m = program.matrices
    header = {
        "format": FORMAT,
        "digest": digest,
        "num_inputs": m.num_inputs,
        "num_aux": m.num_aux,
        "num_constraints": m.num_constraints,
        "proving_constraints": proving.num_constraints,
        "num_hints": program.num_hints,
        "tables": tables,
        "arrays": layout,
        "data_bytes": offset,
    }
    text = json.dumps(header).encode()
    start = -(-(_PREFIX + len(text)) // _ALIGN) * _ALIGN
    with atomic_output(path) as f:
        f.write(_MAGIC + struct.pack("<QQ", len(text), zlib.crc32(text)) + text)
        f.write(b"\0" * (start - f.tell()))
        for key, array in arrays.items():
            f.write(b"\0" * (start + layout[key]["offset"] - f.tell()))
            f.write(_bytes(array))
        f.write(b"\0" * (start + offset - f.tell()))
    stamp_path(path).unlink(missing_ok=True)
    return path.stat().st_size


def load(path: Path, digest: str) -> tuple[WitnessProgram, R1CSMatrices]:
    """The program stored in ``path`` for shape ``digest`` and its proving matrices, as views
    of the mapped file; StoreRefused says why not."""
    try:
        identity = file_identity(path)
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        raise StoreRefused(f"{path}: not compiled yet") from None
    except OSError as exc:
        raise StoreRefused(f"{path}: unreadable ({exc})") from None
    buffer = memoryview(data)
    header, start = _header(path, buffer)
    if header.get("format") != FORMAT or header.get("digest") != digest:
        raise StoreRefused(f"{path}: stale (compiled for another shape or gadget code)")
    try:
        if size != start + header["data_bytes"]:
            raise ValueError(f"{size} bytes, the header describes {start + header['data_bytes']}")
        arrays = {
            key: _view(buffer, start + spec["offset"], spec, size)
            for key, spec in header["arrays"].items()
        }
        checked = _stamped(path, digest)
        if not checked:
            _check_sums(header["arrays"], arrays)
        program, proving = _rebuild(header, arrays)
        if not checked:
            _check_bounds(program, proving)
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise StoreRefused(f"{path}: corrupted ({exc})") from None
    if not checked and settled_since(path, identity):
        write_json_atomic(stamp_path(path), {"digest": digest, **identity})
    return program, proving


def _header(path: Path, buffer: memoryview) -> tuple[dict[str, Any], int]:
    """The JSON header and where the arrays start."""
    if len(buffer) < _PREFIX or bytes(buffer[: len(_MAGIC)]) != _MAGIC:
        raise StoreRefused(f"{path}: unreadable (not a {FORMAT} file)")
    length, crc = struct.unpack("<QQ", buffer[len(_MAGIC) : _PREFIX])
    end = _PREFIX + length
    if length > _MAX_HEADER or end > len(buffer):
        raise StoreRefused(f"{path}: corrupted (header past the end of the file)")
    text = bytes(buffer[_PREFIX:end])
    if zlib.crc32(text) != crc:
        raise StoreRefused(f"{path}: corrupted (the header fails its checksum)")
    try:
        header = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreRefused(f"{path}: corrupted (header: {exc})") from None
    if not isinstance(header, dict):
        raise StoreRefused(f"{path}: corrupted (header is not an object)")
    return header, -(-end // _ALIGN) * _ALIGN


def _view(buffer: memoryview, offset: int, spec: dict[str, Any], size: int) -> np.ndarray:
    dtype, shape = np.dtype(spec["dtype"]), tuple(int(n) for n in spec["shape"])
    count = int(np.prod(shape, dtype=np.int64))
    if offset % _ALIGN or offset + count * dtype.itemsize > size or min(shape, default=0) < 0:
        raise ValueError("an array lies outside the file")
    return np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).reshape(shape)


def _stamped(path: Path, digest: str) -> bool:
    """Whether ``path`` passed a full check and has not changed since."""
    try:
        stamp = json.loads(stamp_path(path).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp == {"digest": digest, **file_identity(path)}


def _check_sums(layout: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    """ValueError unless every chunk of every array has its CRC-32."""
    for key, got in _checksums(arrays).items():
        want = layout[key]["crc32"]
        if len(want) != len(got):
            raise ValueError(f"array {key}: {len(want)} checksums for {len(got)} chunks")
        if got != want:
            raise ValueError(f"array {key} fails its checksum")


def _rebuild(
    header: dict[str, Any], arrays: dict[str, np.ndarray]
) -> tuple[WitnessProgram, R1CSMatrices]:
    n_in, n_aux, rows = header["num_inputs"], header["num_aux"], header["num_constraints"]
    built = {
        key: SparseMatrix(
            indptr=arrays[f"{key}_indptr"],
            cols=arrays[f"{key}_cols"],
            coeffs=arrays[f"{key}_coeffs"],
            num_cols=n_in + n_aux,
        )
        for key in _MATRICES
    }
    names = None
    if "name_index" in arrays:
        tables = header["tables"]
        names = ConstraintNames(
            _Indexed(list(tables["names"]), arrays["name_index"]),
            cast("Sequence[int]", arrays["mark_at"]),  # read by bisect: any sequence
            _Indexed(list(tables["prefixes"]), arrays["mark_prefix_index"]),
        )
    proving = R1CSMatrices(
        num_inputs=n_in,
        num_aux=n_aux,
        num_constraints=header["proving_constraints"],
        a=built["a"],
        b=built["b"],
        c=built["c"],
        names=names,
    )
    if not 0 <= rows <= proving.num_constraints:
        raise ValueError(f"{rows} program rows of {proving.num_constraints}")
    matrices = R1CSMatrices(
        num_inputs=n_in,
        num_aux=n_aux,
        num_constraints=rows,
        a=built["a"].first_rows(rows),
        b=built["b"].first_rows(rows),
        c=built["c"].first_rows(rows),
        names=names,
    )
    program = WitnessProgram(
        matrices=matrices,
        lin=built["lin"],
        num_hints=header["num_hints"],
        parts=arrays["parts"],
        sbox_heads=arrays["sbox_heads"],
        **{key: arrays[key] for key in _PROGRAM},
    )
    return program, proving


def _check_bounds(p: WitnessProgram, proving: R1CSMatrices) -> None:
    """ValueError unless the matrices are CSR over z's columns and every op points at a row,
    slot, inverse or bit that exists."""
    width = p.num_inputs + p.num_aux
    for key, m in (("a", proving.a), ("b", proving.b), ("c", proving.c), ("lin", p.lin)):
        if np.any(np.diff(m.indptr) < 0) or (
            m.nnz and (int(m.cols.min()) < 0 or int(m.cols.max()) >= width)
        ):
            raise ValueError(f"matrix {key} is not a CSR matrix over {width} columns")
    names = p.matrices.names
    if names is not None:
        if len(names.names) != p.matrices.num_constraints or len(names.mark_at) != len(
            names.mark_prefix
        ):
            raise ValueError("row names of another length than the rows")
        for column, table in ((names.names, "names"), (names.mark_prefix, "prefixes")):
            index = column._index  # type: ignore[attr-defined]  # an _Indexed from _rebuild
            if len(index) and int(index.max()) >= len(column._table):  # type: ignore[attr-defined]
                raise ValueError(f"a row name points past the {table} table")
    n = p.num_aux
    if not (len(p.kind) == len(p.arg) == len(p.extra) == n):
        raise ValueError("op arrays of different lengths")
    limits = {0: p.num_hints, 1: p.matrices.num_constraints, 2: p.lin.num_rows}
    for kind, limit in limits.items():
        args = p.arg[p.kind == kind]
        if len(args) and (args.min() < 0 or args.max() >= limit):
            raise ValueError(f"op kind {kind} points past its {limit} targets")
    if int(p.kind.max(initial=0)) > 2:
        raise ValueError("unknown op kind")
    solved = p.extra[p.kind == 1]
    if len(solved) and (solved.min() < 0 or solved.max() >= len(p.inverses)):
        raise ValueError("an op names a missing inverse")
    bits = p.extra[p.kind == 2]
    if len(bits) and (bits.min() < 0 or bits.max() > 254):
        raise ValueError("a bit position past 254")
    if (
        p.level_ptr[0] != 0
        or p.level_ptr[-1] != len(p.level_ops)
        or np.any(np.diff(p.level_ptr) < 0)
    ):
        raise ValueError("malformed levels")
    if len(p.level_ops) != int(np.count_nonzero(p.kind)) or (
        len(p.level_ops) and (p.level_ops.min() < 0 or p.level_ops.max() >= n)
    ):
        raise ValueError("levels do not list every computed op")
    parts = p.parts
    if parts is None or (
        parts.shape != p.level_ops.shape
        or (len(parts) and (parts.min() < 0 or parts.max() >= len(parts)))
        or np.any(parts[parts] != parts)
    ):
        raise ValueError("parts that are not labels of the ops by their parts' roots")
    heads = p.sbox_heads
    if heads is None or (
        heads.ndim != 1
        or (len(heads) and (heads[0] < 0 or heads[-1] + 2 >= n or np.any(np.diff(heads) < 3)))
        or np.any(p.kind[heads] != 1)
        or np.any(p.kind[heads + 1] != 1)
        or np.any(p.kind[heads + 2] != 1)
    ):
        raise ValueError("S-box heads that are not ascending runs of three SOLVE ops")
