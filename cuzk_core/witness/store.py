"""A compiled circuit on disk: one ``.npz`` of plain arrays, coefficients deduplicated, with a
header naming the shape digest it was compiled for and a CRC-32 of every array.

A file whose digest is not the one asked for (stale) or whose arrays fail their checksums,
shapes or bounds (corrupted) is refused with the reason, never used; writes are atomic.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from cuzk_core.fileio import atomic_output
from cuzk_core.r1cs import ConstraintNames, R1CSMatrices, SparseMatrix

from .program import WitnessProgram

FORMAT = "cuzk-compiled-circuit/1"
_MATRICES = ("a", "b", "c", "lin")
_PROGRAM = ("kind", "arg", "extra", "inverses", "level_ptr", "level_ops")


class StoreRefused(Exception):
    """The file cannot be used: missing, stale or corrupted (the message says which)."""


def _dedup(coeffs: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One table of distinct coefficients and, per matrix, each entry's uint32 index into it."""
    joined = np.ascontiguousarray(np.concatenate(coeffs)) if coeffs else np.zeros((0, 4), np.uint64)
    keys = joined.view(np.dtype((np.void, 32))).ravel()
    distinct, inverse = np.unique(keys, return_inverse=True)
    index = inverse.astype(np.uint32).ravel()
    splits = np.cumsum([len(c) for c in coeffs])[:-1]
    table = np.frombuffer(distinct.tobytes(), dtype=np.uint64).reshape(-1, 4)
    return table, np.split(index, splits)


def _names_arrays(names: ConstraintNames) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    bare, bare_index = np.unique(np.asarray(names.names, dtype=object), return_inverse=True)
    prefix, prefix_index = np.unique(
        np.asarray(names.mark_prefix, dtype=object), return_inverse=True
    )
    arrays: dict[str, np.ndarray] = {
        "name_index": bare_index.astype(np.uint32).ravel(),
        "mark_at": np.asarray(names.mark_at, dtype=np.int64),
        "mark_prefix_index": prefix_index.astype(np.uint32).ravel(),
    }
    return arrays, {"names": [str(s) for s in bare], "prefixes": [str(s) for s in prefix]}


def save(path: Path, digest: str, program: WitnessProgram) -> int:
    """Write ``program`` (with its matrices and row names) for shape ``digest``; its size in
    bytes."""
    m = program.matrices
    sources = {"a": m.a, "b": m.b, "c": m.c, "lin": program.lin}
    table, indices = _dedup([sources[k].coeffs for k in _MATRICES])
    arrays: dict[str, np.ndarray] = {"coeff_table": table}
    for key, index in zip(_MATRICES, indices, strict=True):
        arrays[f"{key}_indptr"] = sources[key].indptr
        arrays[f"{key}_cols"] = sources[key].cols.astype(np.int32)  # columns < 2^31: half the bytes
        arrays[f"{key}_coeff"] = index
    for key in _PROGRAM:
        arrays[key] = getattr(program, key)
    tables: dict[str, list[str]] = {"names": [], "prefixes": []}
    if m.names is not None:
        name_arrays, tables = _names_arrays(m.names)
        arrays.update(name_arrays)
    header = {
        "format": FORMAT,
        "digest": digest,
        "num_inputs": m.num_inputs,
        "num_aux": m.num_aux,
        "num_constraints": m.num_constraints,
        "num_hints": program.num_hints,
        "tables": tables,
        "crc32": {k: zlib.crc32(np.ascontiguousarray(v).data) for k, v in arrays.items()},
    }
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with atomic_output(path) as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]  # numpy's stub reads ** as allow_pickle
    return path.stat().st_size


def load(path: Path, digest: str) -> WitnessProgram:
    """The program stored in ``path`` for shape ``digest``; StoreRefused says why not."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        header = json.loads(arrays.pop("header").tobytes())
    except FileNotFoundError:
        raise StoreRefused(f"{path}: not compiled yet") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise StoreRefused(f"{path}: unreadable ({exc})") from None
    if header.get("format") != FORMAT or header.get("digest") != digest:
        raise StoreRefused(f"{path}: stale (compiled for another shape or gadget code)")
    sums = header.get("crc32", {})
    if set(sums) != set(arrays) or any(
        zlib.crc32(np.ascontiguousarray(v).data) != sums[k] for k, v in arrays.items()
    ):
        raise StoreRefused(f"{path}: corrupted (an array fails its checksum)")
    try:
        return _rebuild(header, arrays)
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise StoreRefused(f"{path}: corrupted ({exc})") from None


def _rebuild(header: dict, arrays: dict[str, np.ndarray]) -> WitnessProgram:
    n_in, n_aux = header["num_inputs"], header["num_aux"]
    table = arrays["coeff_table"]
    built = {}
    for key in _MATRICES:
        index, indptr, cols = (arrays[f"{key}_{part}"] for part in ("coeff", "indptr", "cols"))
        if len(index) and int(index.max()) >= len(table):
            raise ValueError(f"matrix {key} indexes past the coefficient table")
        if np.any(np.diff(indptr) < 0) or (
            len(cols) and (cols.min() < 0 or cols.max() >= n_in + n_aux)
        ):
            raise ValueError(f"matrix {key} is not a CSR matrix over {n_in + n_aux} columns")
        built[key] = SparseMatrix(
            indptr=arrays[f"{key}_indptr"],
            cols=cols.astype(np.int64),
            coeffs=table[index],
            num_cols=n_in + n_aux,
        )
    names = None
    if "name_index" in arrays:
        bare, prefixes = header["tables"]["names"], header["tables"]["prefixes"]
        names = ConstraintNames(
            [bare[i] for i in arrays["name_index"].tolist()],
            arrays["mark_at"].tolist(),
            [prefixes[i] for i in arrays["mark_prefix_index"].tolist()],
        )
    matrices = R1CSMatrices(
        num_inputs=n_in,
        num_aux=n_aux,
        num_constraints=header["num_constraints"],
        a=built["a"],
        b=built["b"],
        c=built["c"],
        names=names,
    )
    program = WitnessProgram(
        matrices=matrices,
        lin=built["lin"],
        num_hints=header["num_hints"],
        **{key: arrays[key] for key in _PROGRAM},
    )
    _check_bounds(program)
    return program


def _check_bounds(p: WitnessProgram) -> None:
    """ValueError unless every op points at a row, slot, inverse or bit that exists."""
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
