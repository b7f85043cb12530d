"""The key cache file and the converters that fill it (params.bin and in-memory keys; zkeys
are converted in test_interop_snarkjs.py beside the real snarkjs files)."""

from __future__ import annotations

from pathlib import Path

import attrs
import numpy as np
import pytest
from test_groth16 import CubeCircuit

from cuzk_core.errors import FormatError
from cuzk_core.groth16 import files, key_cache, key_convert
from cuzk_core.groth16.key_cache import (
    ALIGN,
    QUERIES,
    CacheInvalid,
    SourceStamp,
    beside,
    block_sums,
    checksum_of,
    read_header,
)
from cuzk_core.groth16.key_sources import open_cache
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import NativeCircuit
from cuzk_core.layout import G1Affines
from cuzk_core.profile import KeyStorage


@pytest.fixture(scope="module")
def key_with_holes(cpu):
    """The cube key with two h points at infinity, so the masks are exercised."""
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    pk = generate_parameters(matrices, seed=5)
    coords, infinity = pk.h.coords.copy(), pk.h.infinity.copy()
    coords[[0, 2]] = 0
    infinity[[0, 2]] = True
    return attrs.evolve(pk, h=G1Affines(coords, infinity))


def _same_key(a, b) -> None:
    for query, _ in QUERIES:
        assert getattr(a, query).equals(getattr(b, query)), query
    assert a.vk.to_bytes() == b.vk.to_bytes()
    assert a.dense_ab == b.dense_ab


def _params(tmp_path: Path, pk) -> Path:
    path = tmp_path / "params.bin"
    files.write_params(path, pk)
    return path


def test_params_conversion_round_trips_every_point(tmp_path: Path, key_with_holes):
    params = _params(tmp_path, key_with_holes)
    cache = tmp_path / "k.cuzkkey"
    key_convert.params_to_cache(params, cache)
    header = read_header(cache)
    assert header.source == SourceStamp.of(params) and header.source_kind == "params"
    assert all(s.offset % ALIGN == 0 for s in header.sections.values())
    loaded = open_cache(cache, header, params, KeyStorage.HOST, _zeros)
    _same_key(loaded, key_with_holes)
    _same_key(loaded, files.read_params(params))
    assert loaded.h.infinity[[0, 2]].all() and not loaded.h.infinity[1]


def _zeros(shape, dtype, purpose):
    return np.zeros(shape, dtype)


def test_setup_writes_the_same_cache_as_converting(tmp_path: Path, key_with_holes):
    params = _params(tmp_path, key_with_holes)
    key_convert.key_to_cache(key_with_holes, params, "params", beside(params))
    key_convert.params_to_cache(params, tmp_path / "converted.cuzkkey")
    assert beside(params).read_bytes() == (tmp_path / "converted.cuzkkey").read_bytes()


def test_mmap_storage_gives_read_only_views(tmp_path: Path, key_with_holes):
    params = _params(tmp_path, key_with_holes)
    key_convert.params_to_cache(params, beside(params))
    header = read_header(beside(params))
    loaded = open_cache(beside(params), header, params, KeyStorage.MMAP, _zeros)
    assert isinstance(loaded.b_g2.coords, np.memmap) and not loaded.b_g2.coords.flags.writeable
    _same_key(loaded, key_with_holes)


def test_checksum_sees_a_flipped_bit_and_swapped_blocks():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 2**63, size=3 * (1 << 17) + 5, dtype=np.uint64)
    reference = checksum_of(data)
    flipped = data.copy()
    flipped[12345] ^= np.uint64(1 << 40)
    swapped = np.concatenate([data[1 << 17 : 2 << 17], data[: 1 << 17], data[2 << 17 :]])
    assert checksum_of(flipped) != reference != checksum_of(swapped)
    raw = data.view(np.uint8)  # chunks starting on 1 MiB blocks add up to the whole
    head, rest = block_sums(raw[: 2 << 20], 0), block_sums(raw[2 << 20 :], 2)
    mask = (1 << 64) - 1
    total, weighted = (head[0] + rest[0]) & mask, (head[1] + rest[1]) & mask
    assert f"{total:016x}{weighted:016x}" == reference
    odd = np.arange(13, dtype=np.uint8)  # a tail shorter than a word counts, zero-padded
    assert checksum_of(odd) != checksum_of(odd[:12])


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda b: b[:-100], "truncated"),
        (lambda b: b[:30], "bad magic or truncated"),
        (lambda b: b"CUZKKEY\x00" + (9).to_bytes(4, "little") + b[12:], "format version 9"),
        (lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:], "corrupted header"),
    ],
)
def test_damaged_caches_are_refused(tmp_path: Path, key_with_holes, damage, why):
    params = _params(tmp_path, key_with_holes)
    cache = tmp_path / "k.cuzkkey"
    key_convert.params_to_cache(params, cache)
    cache.write_bytes(damage(cache.read_bytes()))
    with pytest.raises(CacheInvalid, match=why):
        for storage in (KeyStorage.HOST, KeyStorage.MMAP):
            open_cache(cache, read_header(cache), params, storage, _zeros)


@pytest.mark.parametrize("section", ["h.coords", "b_g2.infinity", "vk"])
def test_a_flipped_bit_in_any_section_is_refused(tmp_path: Path, key_with_holes, section):
    params = _params(tmp_path, key_with_holes)
    cache = tmp_path / "k.cuzkkey"
    key_convert.params_to_cache(params, cache)
    where = read_header(cache).sections[section]
    data = bytearray(cache.read_bytes())
    data[where.offset + where.nbytes - 1] ^= 2
    cache.write_bytes(bytes(data))
    for storage in (KeyStorage.HOST, KeyStorage.MMAP):
        with pytest.raises(CacheInvalid, match=f"section {section} fails its checksum"):
            open_cache(cache, read_header(cache), params, storage, _zeros)


def test_malformed_params_name_the_file_section_and_point(tmp_path: Path, key_with_holes):
    params = _params(tmp_path, key_with_holes)
    data = bytearray(params.read_bytes())
    vk_len = len(key_with_holes.vk.to_bytes())
    point = vk_len + 4 + 3 * 96  # h point 3: y + 1 puts it off the curve
    data[point + 95] ^= 1
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    cases = [
        (bad, "bad.bin: h point 3: not on the curve"),
        (_write(tmp_path / "short.bin", params.read_bytes()[:-7]), "truncated: the b_g2 section"),
        (_write(tmp_path / "long.bin", params.read_bytes() + b"xy"), "2 unexpected bytes"),
        (_write(tmp_path / "vk.bin", params.read_bytes()[:500]), "truncated"),
        (tmp_path / "absent.bin", "absent.bin: no such file"),
    ]
    for path, message in cases:
        cache = tmp_path / f"{path.name}.cuzkkey"
        with pytest.raises(FormatError, match=message):
            key_convert.params_to_cache(path, cache)
        assert not cache.exists()
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_errors_count_points_across_chunks(tmp_path: Path, key_with_holes, monkeypatch):
    monkeypatch.setattr(key_convert, "CHUNK_POINTS", 2)
    params = _params(tmp_path, key_with_holes)
    data = bytearray(params.read_bytes())
    h_start = len(key_with_holes.vk.to_bytes()) + 4
    data[h_start + 5 * 96] |= 0x80  # h point 5 claims to be compressed
    params.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="h point 5: bad flag bits"):
        key_convert.params_to_cache(params, tmp_path / "k.cuzkkey")


@pytest.fixture
def multi_chunk_cache(tmp_path: Path, monkeypatch) -> Path:
    """A cache of random bytes whose h and b_g2 sections span several 1 MiB read chunks (the
    last one partial), read by as many threads as this machine gives."""
    monkeypatch.setattr(key_cache, "READ_CHUNK", 1 << 20)
    source = _write(tmp_path / "source.bin", b"not read here")
    counts = {"h": 40_000, "l": 3, "a": 0, "b_g1": 3, "b_g2": 20_001}
    rng = np.random.default_rng(7)
    path = tmp_path / "big.cuzkkey"
    with key_cache.building(
        path, source, SourceStamp.of(source), "params", False, b"vk", counts
    ) as w:
        for name in w.sections:
            raw = w.array(name).reshape(-1).view(np.uint8)
            raw[:] = rng.integers(0, 256, len(raw), dtype=np.uint8)
    return path


def _read_all(path: Path, into_arrays: bool) -> dict[str, np.ndarray]:
    header = read_header(path)
    arrays = {n: np.empty(s.shape, s.dtype) for n, s in header.sections.items()}
    targets = [(s, arrays[n] if into_arrays else None) for n, s in header.sections.items()]
    key_cache.read_checked(path, targets)
    return arrays


def test_parallel_chunked_read_gives_every_byte(multi_chunk_cache: Path):
    header = read_header(multi_chunk_cache)
    assert header.sections["h.coords"].nbytes > 3 * key_cache.READ_CHUNK
    arrays = _read_all(multi_chunk_cache, into_arrays=True)
    for name, section in header.sections.items():
        assert np.array_equal(arrays[name], key_cache.section_map(multi_chunk_cache, section))
    _read_all(multi_chunk_cache, into_arrays=False)  # checked through scratch buffers


@pytest.mark.parametrize(
    "damage", ["flip a bit in the third chunk", "swap the first two chunks", "zero the last page"]
)
def test_damage_in_any_chunk_is_refused(multi_chunk_cache: Path, damage: str):
    section = read_header(multi_chunk_cache).sections["h.coords"]
    data = bytearray(multi_chunk_cache.read_bytes())
    chunk, start, end = 1 << 20, section.offset, section.offset + section.nbytes
    if damage.startswith("flip"):
        data[start + 2 * chunk + 12345] ^= 0x10
    elif damage.startswith("swap"):
        first, second = data[start : start + chunk], data[start + chunk : start + 2 * chunk]
        data[start : start + 2 * chunk] = second + first
    else:
        data[end - 4096 : end] = bytes(4096)
    multi_chunk_cache.write_bytes(bytes(data))
    for into_arrays in (True, False):
        with pytest.raises(CacheInvalid, match=r"section h\.coords fails its checksum"):
            _read_all(multi_chunk_cache, into_arrays)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
