"""Converting a proving key into the key cache, once: from params.bin, a snarkjs zkey, or memory.

Both file converters work on a memory map of the source and fill the cache's sections chunk by
chunk in numpy (flags, byte order, Montgomery form and curve checks over whole arrays, threads
across cores), so converting costs a few passes over the bytes and memory stays bounded by a
chunk, whatever the key's size.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuzk_core.curve import bulk
from cuzk_core.errors import FormatError
from cuzk_core.fileio import map_input
from cuzk_core.groth16 import files
from cuzk_core.groth16.key_cache import QUERIES, SourceStamp, building
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey
from cuzk_core.interop.points import Decoder
from cuzk_core.interop.zkey import Zkey
from cuzk_core.progress import NullProgress, Progress

PARAMS = "params"
ZKEY = "zkey"
CONVERT_STEPS = len(QUERIES)
"""Progress steps a conversion reports (one per query)."""
CHUNK_POINTS = 1 << 18
"""Points decoded per step of a params.bin conversion (~25 MB of G1, 50 MB of G2)."""
_VK_FIXED = 3 * bulk.G1_UNCOMPRESSED + 3 * bulk.G2_UNCOMPRESSED


def _params_vk(path: Path, data: np.ndarray) -> VerifyingKey:
    fixed = data[: _VK_FIXED + 4].tobytes()
    count = int.from_bytes(fixed[_VK_FIXED:], "big") if len(fixed) == _VK_FIXED + 4 else 0
    end = min(len(data), _VK_FIXED + 4 + count * bulk.G1_UNCOMPRESSED)
    return files.vk_from_bytes(path, data[:end].tobytes())


def params_to_cache(params: Path, cache: Path, progress: Progress | None = None) -> None:
    """Convert bellperson params.bin into a cache at ``cache``; a malformed file is a
    FormatError naming it, the section and the point, and leaves no cache behind."""
    progress = progress or NullProgress()
    data = map_input(params)
    stamp = SourceStamp.of(params)
    vk = _params_vk(params, data)
    vk_bytes = vk.to_bytes()
    offset = len(vk_bytes)
    layout: dict[str, tuple[int, int, int]] = {}  # query -> (data offset, count, point size)
    for query, _ in QUERIES:
        size = bulk.G2_UNCOMPRESSED if query == "b_g2" else bulk.G1_UNCOMPRESSED
        if offset + 4 > len(data):
            raise FormatError(
                f"{params}: truncated: the {query} count needs 4 bytes at offset {offset}, "
                f"only {len(data) - offset} remain"
            )
        count = int.from_bytes(data[offset : offset + 4].tobytes(), "big")
        offset += 4
        if offset + count * size > len(data):
            raise FormatError(
                f"{params}: truncated: the {query} section ({count} points) needs "
                f"{count * size} bytes at offset {offset}, only {len(data) - offset} remain"
            )
        layout[query] = (offset, count, size)
        offset += count * size
    if offset != len(data):
        raise FormatError(f"{params}: {len(data) - offset} unexpected bytes after the end")
    counts = {query: count for query, (_, count, _) in layout.items()}
    with building(cache, params, stamp, PARAMS, False, vk_bytes, counts) as writer:
        for query, (start, count, size) in layout.items():
            out = writer.batch(query)
            decode = (
                bulk.g2_batch_from_uncompressed if query == "b_g2"
                else bulk.g1_batch_from_uncompressed
            )  # fmt: skip
            for first in range(0, count, CHUNK_POINTS):
                stop = min(count, first + CHUNK_POINTS)
                raw = data[start + first * size : start + stop * size]
                try:
                    chunk = decode(raw, what=f"{query} point", first=first)
                except bulk.BulkDecodingError as exc:
                    raise FormatError(f"{params}: {exc}") from None
                out.coords[first:stop] = chunk.coords
                out.infinity[first:stop] = chunk.infinity
            progress.step(query)


def zkey_to_cache(
    zkey: Zkey, cache: Path, progress: Progress | None = None, decode: Decoder | None = None
) -> None:
    """Convert a snarkjs zkey's proving key into a cache at ``cache``: every base checked on the
    curve and out of Montgomery form by ``decode`` (a backend's ``cuzk_decode_snarkjs_points``;
    numpy when None), the verifying key's points checked in the subgroup."""
    progress = progress or NullProgress()
    header = zkey.header
    vk = zkey.verifying_key()  # its points checked in their subgroups by the reader
    n = header.num_vars
    counts = {"h": header.domain_size, "l": n - header.num_inputs, "a": n, "b_g1": n, "b_g2": n}
    purposes = {"zkey.H": "h", "zkey.C": "l", "zkey.A": "a", "zkey.B1": "b_g1", "zkey.B2": "b_g2"}
    stamp = SourceStamp.of(zkey.path)
    with building(cache, zkey.path, stamp, ZKEY, True, vk.to_bytes(), counts) as writer:

        def into_cache(shape: tuple[int, ...], dtype: str, purpose: str) -> np.ndarray:
            array = writer.array(f"{purposes[purpose]}.coords")
            if array.shape != shape or array.dtype != np.dtype(dtype):
                raise ValueError(f"{purpose}: {shape} {dtype} is not the cache's layout")
            progress.step(purposes[purpose])
            return array

        pk = zkey.proving_key(into_cache, decode)
        for query, _ in QUERIES:
            writer.array(f"{query}.infinity")[:] = getattr(pk, query).infinity


def key_to_cache(pk: ProvingKey, source: Path, kind: str, cache: Path) -> None:
    """Write an in-memory key (just written to ``source``, e.g. by ``cuzk setup``) as the cache
    of ``source``, without reading it back."""
    counts = {query: len(getattr(pk, query)) for query, _ in QUERIES}
    stamp = SourceStamp.of(source)
    with building(cache, source, stamp, kind, pk.dense_ab, pk.vk.to_bytes(), counts) as writer:
        for query, _ in QUERIES:
            out, batch = writer.batch(query), getattr(pk, query)
            out.coords[...] = batch.coords
            out.infinity[...] = batch.infinity
