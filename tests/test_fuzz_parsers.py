"""Property-based fuzzing of every file parser but the profile's: any input gives a value or a
one-line CuzkError naming the file, within a time and memory bound.

Inputs are the valid seeds in tests/fuzz_corpus/<parser>/seed-* (tests/fuzz_corpus/make_seeds.py
made them) mutated by Hypothesis: byte flips, interesting integers written over length and count
fields, cuts, insertions and splices; JSON files also get structural edits (numbers of thousands
of digits, non-ASCII digits, hex, floats, nesting thousands deep, wrong types, missing keys).
Inputs that once crashed a parser live beside the seeds as ``crash-*`` and are replayed by
:func:`test_corpus_input`. CI runs :data:`EXAMPLES` inputs per parser; ``CUZK_FUZZ_EXAMPLES=N``
runs N per parser for a longer local campaign.
"""

from __future__ import annotations

import json
import os
import re
import resource
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuzk_core import fileio
from cuzk_core.circuits import circuit_from_spec
from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.groth16 import files, params_dir
from cuzk_core.interop.r1cs import read_r1cs
from cuzk_core.interop.snarkjs_json import read_proof_json, read_vk_json
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.interop.zkey import Zkey

CORPUS = Path(__file__).parent / "fuzz_corpus"
EXAMPLES = int(os.environ.get("CUZK_FUZZ_EXAMPLES", "60"))
SECONDS_PER_INPUT = 5.0
MEMORY_PER_INPUT = 256 << 20
"""How far one input may raise the process's peak resident memory (tracemalloc would be exact,
but tracing every int of the curve arithmetic makes parsing ten times slower)."""


# ------------------------------------------------------------------ the parsers


def _zkey(path: Path) -> Any:
    zkey = Zkey(path)
    return zkey.verifying_key(), zkey.matrices(), zkey.proving_key()


def _public(path: Path) -> Any:
    values = files.read_public(path)
    return files.read_public(path, expected=len(values))


def _circuit(path: Path) -> Any:
    spec = params_dir.read_circuit_spec(path.parent)
    if spec["circuit"] == "porep-lite":
        return circuit_from_spec(spec, path)
    return spec


PARSERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "zkey": ("key.zkey", _zkey),
    "wtns": ("witness.wtns", read_wtns),
    "r1cs": ("circuit.r1cs", read_r1cs),
    "params_bin": ("params.bin", files.read_params),
    "vk_bin": ("vk.bin", files.read_vk),
    "proof_bin": ("proof.bin", files.read_proof),
    "proof_json": ("proof.json", read_proof_json),
    "vk_json": ("verification_key.json", read_vk_json),
    "public_json": ("public.json", _public),
    "circuit_json": (params_dir.CIRCUIT_FILE, _circuit),
}
JSON_PARSERS = {"proof_json", "vk_json", "public_json", "circuit_json"}


def seeds(parser: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted((CORPUS / parser).glob("seed-*"))]


def parse_within_bounds(parser: str, data: bytes, folder: Path) -> None:
    """Parse ``data`` as ``parser``'s file: a value or a one-line CuzkError naming the file,
    in bounded time and memory."""
    name, parse = PARSERS[parser]
    path = folder / name
    path.write_bytes(data)
    peak_before = _peak_rss()
    start = time.perf_counter()
    try:
        parse(path)
    except CuzkError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 1000, message
        assert str(path) in message, message
    elapsed = time.perf_counter() - start
    growth = _peak_rss() - peak_before
    assert elapsed < SECONDS_PER_INPUT, f"{parser}: {elapsed:.1f} s for one input"
    assert growth < MEMORY_PER_INPUT, f"{parser}: peak memory grew {growth >> 20} MiB"


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


# ------------------------------------------------------------------ byte mutations

_INTERESTING = [0, 1, 2, 3, 4, 6, 8, 12, 32, 48, 96, 192, 255, 256, 2**16, 2**31 - 1, 2**31]
_INTERESTING += [2**32 - 2, 2**32 - 1, 2**63, 2**64 - 1]


@st.composite
def mutated_bytes(draw: st.DrawFn, originals: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(originals)))
    for _ in range(draw(st.integers(1, 4))):
        size = len(data)
        op = draw(st.sampled_from(["flip", "byte", "int", "cut", "insert", "splice", "drop"]))
        if op in ("flip", "byte") and size:
            i = draw(st.integers(0, size - 1))
            data[i] = (
                data[i] ^ (1 << draw(st.integers(0, 7)))
                if op == "flip"
                else draw(st.integers(0, 255))
            )
        elif op == "int" and size >= 8:
            width = draw(st.sampled_from([4, 8]))
            order = draw(st.sampled_from(["little", "big"]))
            i = draw(st.integers(0, (size - width) // 4)) * 4
            value = draw(
                st.sampled_from(_INTERESTING) | st.integers(0, 2**32) | st.just(size - i)
            ) % (1 << (8 * width))
            data[i : i + width] = value.to_bytes(width, order)
        elif op == "cut":
            del data[draw(st.integers(0, size)) :]
        elif op == "insert":
            i = draw(st.integers(0, size))
            data[i:i] = draw(st.binary(max_size=64))
        elif op == "splice" and size:
            i, j = sorted(draw(st.lists(st.integers(0, size), min_size=2, max_size=2)))
            k = draw(st.integers(0, size))
            data[k:k] = data[i:j]
        elif op == "drop" and size:
            i, j = sorted(draw(st.lists(st.integers(0, size), min_size=2, max_size=2)))
            del data[i:j]
    return bytes(data)


# ------------------------------------------------------------------ JSON mutations


class Raw(str):
    """A JSON literal written as is (numbers Python's json module would refuse to write)."""


def dump(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


_TEXT_NUMBERS = [
    "6",
    "06",
    "0" * 5000 + "6",
    "9" * 5000,
    "²",
    "٦",
    "６",
    "0x6",
    " 6",
    "+6",
    "6e0",
    "-6",
    "",
    "6.0",
    str(FQ_MODULUS),
    str(FQ_MODULUS - 1),
    str(FR_MODULUS),
    str(FR_MODULUS - 1),
    "1",
    "0",
    "１",
]
_RAW_NUMBERS = ["1" + "0" * 5000, "-0", "1e400", "1.5", "NaN", "Infinity", "9007199254740993"]
_leaves = (
    st.sampled_from(_TEXT_NUMBERS)
    | st.sampled_from(_RAW_NUMBERS).map(Raw)
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([None, True, False, "groth16", "bls12381", "porep-lite", "circom-r1cs"])
    | st.integers(1, 3000).map(lambda depth: Raw("[" * depth + "]" * depth))
    | st.text(max_size=8)
)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def mutated_json(draw: st.DrawFn, originals: list[bytes]) -> bytes:
    document = json.loads(draw(st.sampled_from(originals)))
    for _ in range(draw(st.integers(1, 3))):
        document = _edit(draw, document)
    text = dump(document).encode()
    if draw(st.integers(0, 4)) == 0:  # sometimes break the text itself too
        text = draw(mutated_bytes([text]))
    return text


def _edit(draw: st.DrawFn, node: Any) -> Any:
    """Replace, drop or wrap one randomly chosen node of a JSON document."""
    children = (
        list(node.items())
        if isinstance(node, dict)
        else list(enumerate(node))
        if (isinstance(node, list))
        else []
    )
    if not children or draw(st.integers(0, 3)) == 0:
        action = draw(st.sampled_from(["replace", "wrap", "drop"]))
        if action == "wrap":
            return [node]
        if action == "drop" and isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node)))
            return {k: v for k, v in node.items() if k != key}
        return draw(_values)
    key, child = draw(st.sampled_from(children))
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[key] = _edit(draw, child)
    return copy


# ------------------------------------------------------------------ the tests

_FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=SECONDS_PER_INPUT),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def scratch() -> Any:
    with tempfile.TemporaryDirectory(prefix="cuzk-fuzz-") as folder:
        yield Path(folder)


def test_every_parser_has_seeds_and_they_parse(scratch: Path):
    for parser in PARSERS:
        found = seeds(parser)
        assert found, f"no seeds for {parser}: run tests/fuzz_corpus/make_seeds.py"
        for data in found:
            name, parse = PARSERS[parser]
            (scratch / name).write_bytes(data)
            assert parse(scratch / name) is not None


@pytest.mark.parametrize("parser", sorted(PARSERS))
def test_fuzz(parser: str, scratch: Path):
    strategy = mutated_json if parser in JSON_PARSERS else mutated_bytes

    @_FUZZ
    @given(data=strategy(seeds(parser)))
    def run(data: bytes) -> None:
        parse_within_bounds(parser, data, scratch)

    run()


CRASHES = sorted(CORPUS.glob("*/crash-*"))


@pytest.mark.parametrize("path", CRASHES, ids=[f"{p.parent.name}/{p.name}" for p in CRASHES])
def test_corpus_input(path: Path, scratch: Path):
    """An input that once crashed a parser now gives a value or a one-line CuzkError."""
    parse_within_bounds(path.parent.name, path.read_bytes(), scratch)


def test_corpus_names_are_portable():
    for path in CORPUS.rglob("*"):
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+", path.name), path


def test_json_depth_reads_an_unterminated_string_in_one_pass(tmp_path: Path):
    """A string that never ends runs to the end of the text: the depth before it counts, and
    the scan is one pass (retrying from each of 32 k quotes to the end took 8 s, quadratic)."""
    data = b'[{"a": [' + b'"' + b'\\"' * 32_768
    assert fileio.json_depth(data) == 3
    assert fileio.json_depth(b'["]", {"x": "\\\\"}]') == 2  # brackets inside strings skipped
    path = tmp_path / "vk.json"
    path.write_bytes(data)
    with pytest.raises(CuzkError, match="Unterminated string"):
        read_vk_json(path)
