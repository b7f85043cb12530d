"""Reading and writing Groth16 files: params.bin, vk.bin, proof.bin and public.json.

Every reader raises :class:`~cuzk_core.errors.FormatError` naming the file and what is wrong;
every writer goes through a temporary file so no partial output is left behind.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from cuzk_core.curve import bulk, serialize
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.fileio import write_bytes_atomic, write_json_atomic
from cuzk_core.groth16.keys import Proof, ProvingKey, VerifyingKey

_G1 = bulk.G1_UNCOMPRESSED
_G2 = bulk.G2_UNCOMPRESSED


class _Reader:
    """A cursor over a file's bytes whose errors name the file and the field being read."""

    def __init__(self, path: Path, data: bytes | None = None) -> None:
        """Read ``path``, or take ``data`` as (the start of) its bytes."""
        self.path = path
        try:
            self.data = path.read_bytes() if data is None else data
        except FileNotFoundError:
            raise FormatError(f"{path}: no such file") from None
        except OSError as exc:
            raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
        self.offset = 0

    def take(self, size: int, what: str) -> bytes:
        end = self.offset + size
        if end > len(self.data):
            left = len(self.data) - self.offset
            raise FormatError(
                f"{self.path}: truncated: {what} needs {size} bytes at offset {self.offset}, "
                f"only {left} remain"
            )
        chunk = self.data[self.offset : end]
        self.offset = end
        return chunk

    def count(self, what: str) -> int:
        return int.from_bytes(self.take(4, f"the {what} count"), "big")

    def point(self, decode, size: int, what: str):
        try:
            return decode(self.take(size, what))
        except serialize.PointDecodingError as exc:
            raise FormatError(f"{self.path}: {what}: {exc}") from None

    def batch(self, decode, size: int, what: str):
        n = self.count(what)
        data = self.take(n * size, f"the {what} section ({n} points)")
        try:
            return decode(data, what=f"{what} point")
        except bulk.BulkDecodingError as exc:
            raise FormatError(f"{self.path}: {exc}") from None

    def finish(self) -> None:
        extra = len(self.data) - self.offset
        if extra:
            raise FormatError(f"{self.path}: {extra} unexpected bytes after the end")


def _read_vk(reader: _Reader, check_subgroup: bool = True) -> VerifyingKey:
    g1 = functools.partial(serialize.g1_from_uncompressed, check_subgroup=check_subgroup)
    g2 = functools.partial(serialize.g2_from_uncompressed, check_subgroup=check_subgroup)
    alpha_g1 = reader.point(g1, _G1, "alpha_g1")
    beta_g1 = reader.point(g1, _G1, "beta_g1")
    beta_g2 = reader.point(g2, _G2, "beta_g2")
    gamma_g2 = reader.point(g2, _G2, "gamma_g2")
    delta_g1 = reader.point(g1, _G1, "delta_g1")
    delta_g2 = reader.point(g2, _G2, "delta_g2")
    n = reader.count("ic")
    ic = [reader.point(g1, _G1, f"ic[{i}]") for i in range(n)]
    if not ic:
        raise FormatError(f"{reader.path}: the verifying key has no IC points")
    return VerifyingKey(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic)


def vk_from_bytes(path: Path, data: bytes, check_subgroup: bool = True) -> VerifyingKey:
    """Decode and check the verifying key at the start of ``data`` (bytes of ``path``); the
    bytes it took are ``len(vk.to_bytes())``. ``check_subgroup=False`` checks the curve only,
    for a key whose points were checked when it was written (~20 ms a point in Python)."""
    return _read_vk(_Reader(path, data), check_subgroup)


def read_vk(path: str | Path) -> VerifyingKey:
    """Read a bellperson VerifyingKey file, checking every point (curve and subgroup)."""
    reader = _Reader(Path(path))
    vk = _read_vk(reader)
    reader.finish()
    return vk


def read_params(path: str | Path) -> ProvingKey:
    """Read bellperson Parameters: the vk checked fully, query points checked on the curve."""
    reader = _Reader(Path(path))
    vk = _read_vk(reader)
    g1_batch = bulk.g1_batch_from_uncompressed
    h = reader.batch(g1_batch, _G1, "h")
    l = reader.batch(g1_batch, _G1, "l")
    a = reader.batch(g1_batch, _G1, "a")
    b_g1 = reader.batch(g1_batch, _G1, "b_g1")
    b_g2 = reader.batch(bulk.g2_batch_from_uncompressed, _G2, "b_g2")
    reader.finish()
    return ProvingKey(vk, h, l, a, b_g1, b_g2)


def read_proof(path: str | Path) -> Proof:
    """Read a 192-byte proof, checking its points are on the curve and in the subgroup."""
    reader = _Reader(Path(path))
    try:
        return Proof.from_bytes(reader.data)
    except serialize.PointDecodingError as exc:
        raise FormatError(f"{path}: {exc}") from None


def read_public(path: str | Path, expected: int | None = None) -> list[int]:
    """Read public.json (decimal strings, no leading 1); each must be below r."""
    path = Path(path)
    try:
        values = json.loads(path.read_text())
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"{path}: not a JSON file: {exc}") from None
    if not isinstance(values, list):
        raise FormatError(f"{path}: must be a JSON list of decimal strings")
    if expected is not None and len(values) != expected:
        raise FormatError(
            f"{path}: has {len(values)} public inputs, the verifying key expects {expected}"
        )
    out = []
    for i, value in enumerate(values):
        text = str(value)
        if isinstance(value, bool) or not text.isdigit():
            raise FormatError(f"{path}: public input {i} is {value!r}, not a decimal integer")
        number = int(text)
        if number >= FR_MODULUS:
            raise FormatError(f"{path}: public input {i} is not below the scalar field modulus r")
        out.append(number)
    return out


def write_public(path: str | Path, values: list[int]) -> None:
    """Write public.json: the public inputs as decimal strings."""
    write_json_atomic(path, [str(v) for v in values])


def write_proof(path: str | Path, proof: Proof) -> None:
    """Write proof.bin (192 bytes)."""
    write_bytes_atomic(path, proof.to_bytes())


def write_vk(path: str | Path, vk: VerifyingKey) -> None:
    """Write vk.bin."""
    write_bytes_atomic(path, vk.to_bytes())


def write_params(path: str | Path, pk: ProvingKey) -> None:
    """Write params.bin."""
    write_bytes_atomic(path, pk.to_bytes())
