"""The key cache file: a proving key in the hook layout (cuzk_core/layout.py), one file per key.

Layout: a 48-byte preamble (magic ``CUZKKEY\\0``, u32 LE format version, u32 LE header length,
the header's sha256), the header (JSON: curve, counts, the source key's stamp, each section's
offset, shape, dtype and checksum), then the sections, each at a 4096-byte boundary so that
``numpy.memmap`` views of them are page-aligned: ``vk`` (bellperson VerifyingKey bytes), then per
query (h, l, a, b_g1, b_g2) its canonical ``coords`` and its ``infinity`` mask.

Freshness against the source key is a :class:`SourceStamp` (size, mtime and a digest of sampled
blocks), not a hash of the whole source: hashing runs at ~200 MB/s on this box, 2.5 s for a
2^20-constraint key per proof, the cost the cache exists to remove. Integrity of the cache itself
is a per-section checksum (:func:`block_sums`, word sums at memory speed) that catches
truncation, zeroed pages and flipped bits; it guards against accidents, not against someone who
can write the cache directory (they could write the key itself). Loading checks it as it reads
(:func:`read_checked`): each chunk is summed right after it is read, in parallel threads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import attrs
import numpy as np

from cuzk_core.fileio import atomic_output
from cuzk_core.layout import G1Affines, G2Affines

MAGIC = b"CUZKKEY\x00"
FORMAT_VERSION = 1
CURVE = "bls12381"
SUFFIX = ".cuzkkey"
ALIGN = 4096
_PREAMBLE = 48
QUERIES: tuple[tuple[str, type[G1Affines] | type[G2Affines]], ...] = (
    ("h", G1Affines),
    ("l", G1Affines),
    ("a", G1Affines),
    ("b_g1", G1Affines),
    ("b_g2", G2Affines),
)
_HEADER_ROOM = 4 * ALIGN
"""Bytes reserved for preamble and header: sections start after them."""
_SAMPLES = 16
_SAMPLE_BYTES = 64 << 10
_BLOCK_BYTES = 1 << 20


class CacheInvalid(Exception):
    """A cache file that must not be used: why (stale, truncated, corrupted), to log and rebuild."""


def beside(source: Path) -> Path:
    """Where the cache of a key file lies next to it: ``params.bin`` → ``params.bin.cuzkkey``."""
    return source.with_name(source.name + SUFFIX)


# ---------------------------------------------------------------- source stamps


@attrs.frozen
class SourceStamp:
    """Size, mtime and the sha256 of 16 sampled 64 KiB blocks (first and last included).

    Any ordinary rewrite changes mtime; a same-size, same-mtime edit outside the samples is not
    seen (the trade for ~1 MiB read per proof instead of the whole key).
    """

    size: int
    mtime_ns: int
    sampled_sha256: str

    @classmethod
    def of(cls, path: Path) -> SourceStamp:
        """The stamp of the file at ``path`` now."""
        with path.open("rb") as f:
            info = os.fstat(f.fileno())
            digest = hashlib.sha256(info.st_size.to_bytes(8, "little"))
            last = max(0, info.st_size - _SAMPLE_BYTES)
            for offset in sorted({last * k // (_SAMPLES - 1) for k in range(_SAMPLES)}):
                digest.update(os.pread(f.fileno(), _SAMPLE_BYTES, offset))
        return cls(info.st_size, info.st_mtime_ns, digest.hexdigest())

    def to_json(self) -> dict[str, Any]:
        """As stored in a cache header."""
        return attrs.asdict(self)


# ---------------------------------------------------------------- checksums

_WORDS_PER_BLOCK = _BLOCK_BYTES // 8
_WORD_MASK = (1 << 64) - 1


def block_sums(raw: np.ndarray, first_block: int = 0) -> tuple[int, int]:
    """Fletcher-style sums of contiguous bytes ``raw`` whose first byte begins 1 MiB block
    ``first_block``: Σ sᵢ and Σ (i+1)·sᵢ mod 2^64, sᵢ the wrapping sum of block i's 64-bit words
    (the tail zero-padded), so a changed word or a moved block changes them. The sums of a
    section's chunks (each starting on a block) add up, mod 2^64, to the section's."""
    full = len(raw) // 8 * 8
    words = raw[:full].view("<u8")
    sums = np.add.reduceat(words, np.arange(0, len(words), _WORDS_PER_BLOCK)) if full else words
    if full != len(raw):
        tail = np.zeros(8, np.uint8)
        tail[: len(raw) - full] = raw[full:]
        if len(words) % _WORDS_PER_BLOCK:
            sums[-1] += tail.view("<u8")[0]
        else:  # the tail starts a block of its own
            sums = np.concatenate([sums, tail.view("<u8")])
    index = np.arange(first_block + 1, first_block + 1 + len(sums), dtype=np.uint64)
    return int(np.add.reduce(sums, dtype=np.uint64)), int(np.add.reduce(sums * index))  # wrap


def _digest(total: int, weighted: int) -> str:
    return f"{total & _WORD_MASK:016x}{weighted & _WORD_MASK:016x}"


def checksum_of(data: np.ndarray) -> str:
    """The checksum of one array (32 hex digits: its :func:`block_sums`)."""
    return _digest(*block_sums(np.ascontiguousarray(data).reshape(-1).view(np.uint8)))


# ---------------------------------------------------------------- header


@attrs.frozen
class Section:
    """One array in the file."""

    name: str
    offset: int
    shape: tuple[int, ...]
    dtype: str
    checksum: str

    @property
    def nbytes(self) -> int:
        """Its size in bytes."""
        return int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize


@attrs.frozen
class CacheHeader:
    """What a cache file says about itself."""

    source: SourceStamp
    source_kind: str
    source_path: str
    """Where the key was converted from (for ``cuzk cache list``; freshness is the stamp's)."""
    dense_ab: bool
    sections: dict[str, Section]
    digest: str
    """sha256 of the header text: names this exact cache (the process-wide resident key's id)."""

    def count(self, query: str) -> int:
        """Points in query ``query``."""
        return self.sections[f"{query}.coords"].shape[0]

    @property
    def key_bytes(self) -> int:
        """Bytes of the five queries (what a storage policy must hold)."""
        return sum(s.nbytes for name, s in self.sections.items() if name != "vk")

    @property
    def file_bytes(self) -> int:
        """The size the file must have."""
        last = max(self.sections.values(), key=lambda s: s.offset)
        return last.offset + last.nbytes


def _align(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


def plan_sections(vk_bytes: int, counts: dict[str, int]) -> dict[str, Section]:
    """Offsets and shapes of every section, checksums still blank."""
    sections: dict[str, Section] = {}
    offset = _HEADER_ROOM
    entries = [("vk", (vk_bytes,), "uint8")]
    for query, batch in QUERIES:
        n = counts[query]
        entries += [
            (f"{query}.coords", (n, *batch.POINT_SHAPE), "uint64"),
            (f"{query}.infinity", (n,), "bool"),
        ]
    for name, shape, dtype in entries:
        sections[name] = Section(name, offset, shape, dtype, "0" * 32)
        offset = _align(offset + sections[name].nbytes)
    return sections


def _header_text(
    source: SourceStamp,
    source_kind: str,
    source_path: Path,
    dense_ab: bool,
    sections: dict[str, Section],
) -> bytes:
    document = {
        "curve": CURVE,
        "source": {"kind": source_kind, "path": str(source_path.resolve()), **source.to_json()},
        "dense_ab": dense_ab,
        "sections": [
            {"name": s.name, "offset": s.offset, "shape": list(s.shape), "dtype": s.dtype,
             "checksum": s.checksum}
            for s in sections.values()
        ],
    }  # fmt: skip
    return json.dumps(document, sort_keys=True).encode()


def _preamble(text: bytes) -> bytes:
    return (
        MAGIC
        + FORMAT_VERSION.to_bytes(4, "little")
        + len(text).to_bytes(4, "little")
        + hashlib.sha256(text).digest()
    )


def _parse_header(text: bytes) -> CacheHeader:
    document = json.loads(text)
    if document["curve"] != CURVE:
        raise CacheInvalid(f"a key for {document['curve']}, not {CURVE}")
    source = document["source"]
    sections = {
        s["name"]: Section(s["name"], s["offset"], tuple(s["shape"]), s["dtype"], s["checksum"])
        for s in document["sections"]
    }
    return CacheHeader(
        SourceStamp(source["size"], source["mtime_ns"], source["sampled_sha256"]),
        source["kind"],
        source["path"],
        document["dense_ab"],
        sections,
        hashlib.sha256(text).hexdigest(),
    )


def read_header(path: Path) -> CacheHeader:
    """The header of the cache at ``path``; :class:`CacheInvalid` saying why it cannot be used."""
    try:
        with path.open("rb") as f:
            preamble = f.read(_PREAMBLE)
            if len(preamble) < _PREAMBLE or preamble[:8] != MAGIC:
                raise CacheInvalid("not a cuzk key cache (bad magic or truncated)")
            version = int.from_bytes(preamble[8:12], "little")
            if version != FORMAT_VERSION:
                raise CacheInvalid(f"format version {version}, this cuzk writes {FORMAT_VERSION}")
            length = int.from_bytes(preamble[12:16], "little")
            text = f.read(length) if length <= _HEADER_ROOM - _PREAMBLE else b""
            size = os.fstat(f.fileno()).st_size
    except OSError as exc:
        raise CacheInvalid(f"cannot read: {exc.strerror}") from None
    if len(text) != length or hashlib.sha256(text).digest() != preamble[16:48]:
        raise CacheInvalid("corrupted header (its sha256 does not match)")
    try:
        header = _parse_header(text)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CacheInvalid("its header is malformed") from None
    try:
        counts = {query: header.count(query) for query, _ in QUERIES}
        expected = plan_sections(header.sections["vk"].nbytes, counts)
    except (KeyError, IndexError):
        raise CacheInvalid("its header lacks a section") from None
    layout = {n: (s.offset, s.shape, s.dtype) for n, s in header.sections.items()}
    if layout != {n: (s.offset, s.shape, s.dtype) for n, s in expected.items()}:
        raise CacheInvalid("its header describes sections out of place")
    if size != header.file_bytes:
        raise CacheInvalid(f"truncated: {size} bytes, its header describes {header.file_bytes}")
    return header


# ---------------------------------------------------------------- writing


class CacheWriter:
    """Builds a cache file in place: sections are memmap views to fill, then :meth:`finish`
    writes checksums and header; the file appears at ``path`` only when the block succeeds."""

    def __init__(
        self,
        file: BinaryIO,
        source_path: Path,
        source: SourceStamp,
        source_kind: str,
        dense_ab: bool,
        vk_bytes: bytes,
        counts: dict[str, int],
    ) -> None:
        self._source_path = source_path
        self._source = source
        self._kind = source_kind
        self._dense_ab = dense_ab
        self.sections = plan_sections(len(vk_bytes), counts)
        last = max(self.sections.values(), key=lambda s: s.offset)
        file.truncate(last.offset + last.nbytes)
        self._map = np.memmap(file, dtype=np.uint8, mode="r+")
        self.array("vk")[:] = np.frombuffer(vk_bytes, np.uint8)

    def array(self, name: str) -> np.ndarray:
        """A writable view of section ``name`` (zeros until filled)."""
        s = self.sections[name]
        view = self._map[s.offset : s.offset + s.nbytes]
        return view.view(s.dtype).reshape(s.shape)

    def batch(self, query: str) -> G1Affines | G2Affines:
        """Query ``query``'s section views as a batch, to fill in place."""
        kind = dict(QUERIES)[query]
        return kind(self.array(f"{query}.coords"), self.array(f"{query}.infinity"))

    def finish(self) -> None:
        """Checksum every section and write the header."""
        sections = {
            name: attrs.evolve(s, checksum=checksum_of(self.array(name)))
            for name, s in self.sections.items()
        }
        text = _header_text(self._source, self._kind, self._source_path, self._dense_ab, sections)
        if _PREAMBLE + len(text) > _HEADER_ROOM:
            raise ValueError(f"a cache header of {len(text)} bytes does not fit its room")
        self._map[: _PREAMBLE + len(text)] = np.frombuffer(_preamble(text) + text, np.uint8)
        self._map.flush()
        del self._map


@contextlib.contextmanager
def building(
    path: Path,
    source_path: Path,
    source: SourceStamp,
    source_kind: str,
    dense_ab: bool,
    vk_bytes: bytes,
    counts: dict[str, int],
) -> Iterator[CacheWriter]:
    """``with building(...) as writer:`` fill ``writer``'s sections; on success the finished
    cache replaces ``path`` atomically, on failure nothing is left behind."""
    with atomic_output(path, "w+b") as f:
        writer = CacheWriter(f, source_path, source, source_kind, dense_ab, vk_bytes, counts)
        yield writer
        writer.finish()


# ---------------------------------------------------------------- reading


def section_map(path: Path, section: Section) -> np.ndarray:
    """A read-only memmap view of one section."""
    if section.nbytes == 0:
        return np.zeros(section.shape, dtype=section.dtype)
    dtype, shape = section.dtype, section.shape
    return np.memmap(path, dtype=dtype, mode="r", offset=section.offset, shape=shape)


READ_CHUNK = 4 << 20
"""Bytes one reader thread reads and then checks: whole checksum blocks, few enough that they
are checked while still in the core's cache, so a load touches each byte once."""
READ_THREADS = min(8, len(os.sched_getaffinity(0)))
"""Reader threads: reads and numpy's sums release the GIL, and copying from the page cache
scales with cores until memory bandwidth runs out."""


def read_checked(path: Path, targets: Iterable[tuple[Section, np.ndarray | None]]) -> None:
    """Read each section into its array (C-contiguous, its shape and dtype; None: only through a
    per-thread scratch buffer, for a section used as a memmap) and check its checksum, in chunks
    of :data:`READ_CHUNK` spread over :data:`READ_THREADS` threads; :class:`CacheInvalid` naming
    the first section (in ``targets`` order) that fails. ``targets`` is consumed while the
    threads read, so arrays it allocates on demand are allocated beside the reads."""
    scratch = threading.local()
    fd = os.open(path, os.O_RDONLY)

    def read_chunk(section: Section, out: np.ndarray | None, start: int) -> tuple[int, int]:
        length = min(READ_CHUNK, section.nbytes - start)
        if out is None:
            if not hasattr(scratch, "buffer"):
                scratch.buffer = np.empty(READ_CHUNK, np.uint8)
            raw = scratch.buffer[:length]
        else:
            raw = out.reshape(-1).view(np.uint8)[start : start + length]
        done = 0
        while done < length:
            try:
                got = os.preadv(fd, [raw[done:]], section.offset + start + done)
            except OSError as exc:
                raise CacheInvalid(f"cannot read section {section.name}: {exc.strerror}") from None
            if not got:
                raise CacheInvalid(f"truncated inside section {section.name}")
            done += got
        return block_sums(raw, start // _BLOCK_BYTES)

    pool = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="cuzk-key-read")
    try:
        work = []
        for section, out in targets:
            if out is not None and not (out.flags.c_contiguous and out.nbytes == section.nbytes):
                raise ValueError(f"section {section.name} needs a C-contiguous array of its size")
            chunks = range(0, section.nbytes, READ_CHUNK)
            work.append((section, [pool.submit(read_chunk, section, out, c) for c in chunks]))
        for section, futures in work:
            parts = [future.result() for future in futures]
            total, weighted = sum(p[0] for p in parts), sum(p[1] for p in parts)
            if _digest(total, weighted) != section.checksum:
                raise CacheInvalid(f"corrupted: section {section.name} fails its checksum")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        os.close(fd)
