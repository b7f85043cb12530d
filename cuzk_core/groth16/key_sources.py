"""Where the prover gets its proving key: a key file converted once into the key cache, then
loaded from the cache under the profile's ``memory.key_storage``.

- ``host``: the sections are read into the backend's host buffers (pinned where it pins).
- ``mmap``: the backend gets read-only ``numpy.memmap`` views; the OS pages them in and out, so
  a key larger than host memory still proves.
- ``device``: mapped like ``mmap``, and the loaded key is kept for the process, so a backend
  that keys its device copies by the host batch (backends/gpu/memory.py) uploads it once for many
  proofs. Host buffers would only stage that one upload: page-locking them cost 0.36–0.45 s of
  a 0.5 s load at 2^20 on the H200, and the upload from the mapped pages overlaps the proof
  (bench/NOTES.md, round 4).
- ``stream``: like ``host``; the backend uploads the bases chunk by chunk during the MSM.

A cache beside the key (``params.bin.cuzkkey``, written by ``cuzk setup``) is used first, else
one under ``$CUZK_CACHE_DIR/keys``. A stale or corrupted cache is reported on stderr and rebuilt.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuzk_core.cache import cache_dir, path_tag
from cuzk_core.errors import CuzkError, FormatError
from cuzk_core.groth16 import files
from cuzk_core.groth16.key_cache import (
    QUERIES,
    SUFFIX,
    CacheHeader,
    CacheInvalid,
    Section,
    SourceStamp,
    beside,
    read_checked,
    read_header,
    section_map,
)
from cuzk_core.groth16.key_convert import PARAMS, ZKEY, params_to_cache, zkey_to_cache
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.qap import BELLPERSON, SNARKJS, QuotientConvention
from cuzk_core.interop.points import Decoder
from cuzk_core.interop.zkey import Zkey
from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.profile import KeyStorage

if TYPE_CHECKING:
    from cuzk_core.backend import Backend

Allocator = Callable[[tuple[int, ...], str, str], np.ndarray]
Log = Callable[[str], None]
_GIB = 1 << 30
MAPPED = (KeyStorage.MMAP, KeyStorage.DEVICE)
"""The storages that map the key cache instead of reading it into host buffers."""
_RESIDENT: dict[Path, tuple[str, ProvingKey]] = {}
"""Keys loaded under ``device`` storage in this process: cache path → (header digest, key)."""


def stderr_log(message: str) -> None:
    """Report cache events on stderr, as the CLI's other notes."""
    print(f"cuzk: {message}", file=sys.stderr)


def in_cache_dir(source: Path) -> Path:
    """The cache of a key file under ``$CUZK_CACHE_DIR/keys``, named by the key's path."""
    return cache_dir() / "keys" / f"{source.name}-{path_tag(source)}{SUFFIX}"


def host_memory_available() -> int | None:
    """MemAvailable from /proc/meminfo, or None where there is none."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_fits(
    cache: Path, header: CacheHeader, storage: KeyStorage, available: int | None
) -> None:
    """Refuse up front a key that ``storage`` would hold in host memory when ``available``
    bytes (None: unknown) cannot hold it. ``mmap`` and ``device`` map the cache instead (a GPU
    backend refuses bases that its device cannot hold before copying any)."""
    if storage in MAPPED:
        return
    if available is not None and header.key_bytes > available:
        raise CuzkError(
            f"{cache}: the key needs {header.key_bytes / _GIB:.2f} GiB of host memory under "
            f'memory.key_storage = "{storage.value}", {available / _GIB:.2f} GiB is available '
            '(key_storage = "mmap" pages it from the cache file)'
        )


def _batches(sections: dict[str, np.ndarray]) -> dict[str, Any]:
    """Each query's point batch (G1Affines or G2Affines, by query) from its two arrays."""
    return {
        query: kind(sections[f"{query}.coords"], sections[f"{query}.infinity"])
        for query, kind in QUERIES
    }


def open_cache(
    cache: Path, header: CacheHeader, vk_path: Path, storage: KeyStorage, alloc: Allocator
) -> ProvingKey:
    """The key in ``cache`` under ``storage``; every section's checksum is checked as it is read
    (:class:`CacheInvalid` if one fails), the host buffers allocated while earlier sections are
    being read. ``vk_path`` names the key in errors about its vk."""
    arrays: dict[str, np.ndarray] = {}

    def targets() -> Iterator[tuple[Section, np.ndarray | None]]:
        for name, section in header.sections.items():
            if storage in MAPPED:
                arrays[name] = section_map(cache, section)
                yield section, None
                continue
            if name == "vk" or name.endswith(".infinity"):
                arrays[name] = np.empty(section.shape, section.dtype)
            else:
                arrays[name] = alloc(section.shape, section.dtype, f"params.{name.split('.')[0]}")
            yield section, arrays[name]

    read_checked(cache, targets())
    # subgroups were checked when the cache was written; the checksum says these are those bytes
    vk = files.vk_from_bytes(vk_path, arrays.pop("vk").tobytes(), check_subgroup=False)
    return ProvingKey(vk, **_batches(arrays), dense_ab=header.dense_ab)


def _try_cache(cache: Path, stamp: SourceStamp, kind: str) -> CacheHeader:
    header = read_header(cache)
    if header.source_kind != kind:
        raise CacheInvalid(f"converted from a {header.source_kind}, not a {kind}")
    if header.source != stamp:
        raise CacheInvalid("stale: the key file changed since it was converted")
    return header


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK)


def load_cached(
    source: Path,
    kind: str,
    convert: Callable[[Path], None],
    storage: KeyStorage,
    alloc: Allocator,
    log: Log = stderr_log,
) -> ProvingKey:
    """The key of ``source`` from its cache, converting it (``convert(cache_path)``) when there
    is no usable cache; a stale or corrupted one is logged and rebuilt where it was."""
    try:
        stamp = SourceStamp.of(source)
    except FileNotFoundError:
        raise FormatError(f"{source}: no such file") from None
    except OSError as exc:
        raise FormatError(f"{source}: cannot read: {exc.strerror}") from None
    rebuild_at = None
    for cache in (beside(source), in_cache_dir(source)):
        if not cache.is_file():
            continue
        try:
            header = _try_cache(cache, stamp, kind)
            return _load(cache, header, source, storage, alloc)
        except CacheInvalid as why:
            log(f"{cache}: {why}; rebuilding it")
            rebuild_at = rebuild_at or (cache if _writable(cache.parent) else None)
    target = rebuild_at or in_cache_dir(source)
    log(f"converting {source} into the key cache {target} (once)")
    convert(target)
    try:
        return _load(target, _try_cache(target, stamp, kind), source, storage, alloc)
    except CacheInvalid as why:  # written a moment ago: the disk or another writer is at fault
        raise CuzkError(f"{target}: the key cache just written is unusable: {why}") from None


def _load(
    cache: Path, header: CacheHeader, source: Path, storage: KeyStorage, alloc: Allocator
) -> ProvingKey:
    check_fits(cache, header, storage, host_memory_available())
    if storage is not KeyStorage.DEVICE:
        return open_cache(cache, header, source, storage, alloc)
    resident = _RESIDENT.get(cache)
    if resident is not None and resident[0] == header.digest:
        return resident[1]
    pk = open_cache(cache, header, source, storage, alloc)
    _RESIDENT[cache] = (header.digest, pk)
    return pk


def _alloc(backend: Backend) -> Allocator:
    """The backend's host buffers, each in a ``key_alloc`` span (page-locking is the cost of a
    GPU backend's, ``CUZK_TIMING=2`` shows it)."""

    def alloc(shape: tuple[int, ...], dtype: str, purpose: str) -> np.ndarray:
        with backend.ctx.timer.span("key_alloc", purpose=purpose):
            return backend.alloc_host(shape, dtype, purpose)

    return alloc


def _decoder(backend: Backend) -> Decoder:
    """The backend's snarkjs point decoder (on its device where it has one), a span a call."""

    def decode(raw: np.ndarray, group: str) -> tuple[G1Affines | G2Affines, np.ndarray]:
        with backend.ctx.timer.span("decode_points", group=group, n=len(raw)):
            return backend.decode_snarkjs_points(raw, group)

    return decode


@attrs.frozen
class ParamsFile:
    """A bellperson params.bin (bellperson's H convention)."""

    path: Path = attrs.field(converter=Path)
    log: Log = stderr_log
    convention: QuotientConvention = attrs.field(default=BELLPERSON, init=False)

    def load(self, backend: Backend) -> ProvingKey:
        """The key from its cache, converted from params.bin on first use."""
        storage = backend.ctx.profile.memory.key_storage
        convert = lambda cache: params_to_cache(self.path, cache)  # noqa: E731
        return load_cached(self.path, PARAMS, convert, storage, _alloc(backend), self.log)


@attrs.frozen
class ZkeyFile:
    """A snarkjs Groth16 zkey over bls12381 (snarkjs's H convention)."""

    zkey: Zkey
    log: Log = stderr_log
    convention: QuotientConvention = attrs.field(default=SNARKJS, init=False)

    def load(self, backend: Backend) -> ProvingKey:
        """The key from its cache, converted from the zkey on first use."""
        storage = backend.ctx.profile.memory.key_storage
        convert = lambda cache: zkey_to_cache(self.zkey, cache, decode=_decoder(backend))  # noqa: E731
        return load_cached(self.zkey.path, ZKEY, convert, storage, _alloc(backend), self.log)
