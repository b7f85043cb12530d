"""Key sources: a key file converted once into the cache, then loaded under each storage policy;
stale and damaged caches rebuilt, oversize keys refused; ``cuzk cache list|clear``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_groth16 import CubeCircuit
from test_key_cache import key_with_holes  # noqa: F401 (a fixture)

from cuzk_core.cli import main
from cuzk_core.errors import CuzkError, FormatError
from cuzk_core.groth16 import files
from cuzk_core.groth16.key_cache import QUERIES, beside, read_header
from cuzk_core.groth16.key_sources import ParamsFile, check_fits, in_cache_dir
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.qap import BELLPERSON
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import KeyStorage, load_profile
from cuzk_core.timing import Timer


def _backend(storage: str):
    profile = load_profile("cpu", {"memory.key_storage": storage})
    return load_plugins().backend(profile, Timer(level=0))


class Notes(list):
    """Collects what a key source reports."""

    def __call__(self, message: str) -> None:
        self.append(message)


@pytest.fixture
def params(tmp_path: Path, key_with_holes) -> Path:  # noqa: F811
    path = tmp_path / "keys" / "params.bin"
    path.parent.mkdir()
    files.write_params(path, key_with_holes)
    return path


def _equal(a, b) -> bool:
    same = all(getattr(a, q).equals(getattr(b, q)) for q, _ in QUERIES)
    return same and a.vk.to_bytes() == b.vk.to_bytes()


def test_first_load_converts_into_the_cache_dir_later_loads_do_not(params, key_with_holes):  # noqa: F811
    notes = Notes()
    source = ParamsFile(params, notes)
    assert source.convention is BELLPERSON
    first = source.load(_backend("host"))
    assert _equal(first, key_with_holes)
    assert len(notes) == 1 and "converting" in notes[0] and in_cache_dir(params).is_file()
    second = source.load(_backend("host"))
    assert len(notes) == 1 and _equal(second, key_with_holes) and second is not first
    assert not beside(params).exists()


@pytest.mark.parametrize("storage", ["host", "mmap", "device", "stream"])
def test_every_storage_policy_proves_the_same(params, cpu, storage):
    backend = _backend(storage)
    key = ParamsFile(params, Notes()).load(backend)
    assert isinstance(key.h.coords, np.memmap) == (storage in ("mmap", "device"))
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    reference = generate_parameters(matrices, seed=5)
    files.write_params(params, reference)  # the cube key without its holes: it proves
    source = ParamsFile(params, Notes())
    result = prove(backend, NativeCircuit(CubeCircuit(3)), source, seed=1)
    expected = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(reference), seed=1)
    assert result.proof == expected.proof


def test_device_storage_keeps_one_key_per_process(params, key_with_holes):  # noqa: F811
    backend = _backend("device")
    source = ParamsFile(params, Notes())
    first = source.load(backend)
    assert source.load(backend) is first  # the same batches: a GPU backend's uploads stay
    stat = params.stat()
    os.utime(params, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    notes = Notes()
    renewed = ParamsFile(params, notes).load(backend)
    assert renewed is not first and _equal(renewed, key_with_holes) and "stale" in notes[0]


def test_a_stale_cache_is_rebuilt_where_it_was(params, cpu):
    beside_cache = beside(params)
    ParamsFile(params, Notes()).load(_backend("host"))
    in_cache_dir(params).rename(beside_cache)
    matrices = NativeCircuit(CubeCircuit(4)).assign(cpu).matrices
    other = generate_parameters(matrices, seed=6)
    files.write_params(params, other)
    notes = Notes()
    loaded = ParamsFile(params, notes).load(_backend("mmap"))
    assert _equal(loaded, other)
    assert f"{beside_cache}: stale" in notes[0] and "rebuilding" in notes[0]
    assert read_header(beside_cache).source.size == params.stat().st_size


@pytest.mark.parametrize("where", ["h.coords", "header"])
def test_a_damaged_cache_is_rebuilt_never_used(params, key_with_holes, where):  # noqa: F811
    ParamsFile(params, Notes()).load(_backend("host"))
    cache = in_cache_dir(params)
    data = bytearray(cache.read_bytes())
    offset = read_header(cache).sections["h.coords"].offset if where != "header" else 60
    data[offset] ^= 0x10
    cache.write_bytes(bytes(data))
    notes = Notes()
    loaded = ParamsFile(params, notes).load(_backend("host"))
    assert _equal(loaded, key_with_holes)
    assert "corrupted" in notes[0] and "rebuilding" in notes[0]
    assert ParamsFile(params, notes).load(_backend("host")) and len(notes) == 2  # now fine


def test_a_key_too_large_for_host_memory_is_refused_up_front(params):
    ParamsFile(params, Notes()).load(_backend("host"))
    cache = in_cache_dir(params)
    header = read_header(cache)
    check_fits(cache, header, KeyStorage.HOST, header.key_bytes)
    with pytest.raises(CuzkError, match=r'under memory.key_storage = "stream", 0.00 GiB is avail'):
        check_fits(cache, header, KeyStorage.STREAM, header.key_bytes - 1)
    check_fits(cache, header, KeyStorage.MMAP, 0)  # mmap pages it: no host bound
    check_fits(cache, header, KeyStorage.DEVICE, 0)  # mapped too; the device's bound is the GPU's


def test_a_missing_key_file_is_a_format_error(tmp_path: Path):
    with pytest.raises(FormatError, match=r"absent\.bin: no such file"):
        ParamsFile(tmp_path / "absent.bin", Notes()).load(_backend("host"))


def test_cache_list_and_clear(params, capsys, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "own-cache"))
    ParamsFile(params, Notes()).load(_backend("host"))
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert f"{in_cache_dir(params)}  (key cache, fresh, params {params.resolve()})" in out
    params.write_bytes(params.read_bytes())  # a new mtime
    assert main(["cache", "list"]) == 0
    assert "(key cache, stale, params" in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out and not in_cache_dir(params).exists()
    assert main(["cache", "list"]) == 0
    assert "0 entries" in capsys.readouterr().out
