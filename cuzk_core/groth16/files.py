"""Reading and writing Groth16 files: params.bin, vk.bin, proof.bin and public.json.

Every reader raises :class:`~cuzk_core.errors.FormatError` naming the file and what is wrong;
every writer goes through a temporary file so no partial output is left behind.
"""

from __future__ import annotations

import functools
from pathlib import Path

from cuzk_core.cache import check_marker, mark_passed
from cuzk_core.curve import bulk, serialize
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.fileio import (
    json_bytes,
    map_input,
    read_input,
    read_json,
    write_bytes_atomic,
)
from cuzk_core.groth16.keys import (
    PROOF_BYTES,
    Proof,
    ProvingKey,
    VerifyingKey,
    degenerate,
    infinite_vk_point,
)
from cuzk_core.interop.snarkjs_json import decimal

_G1 = bulk.G1_UNCOMPRESSED
_G2 = bulk.G2_UNCOMPRESSED
VK_FIXED_BYTES = 3 * _G1 + 3 * _G2 + 4
"""vk.bin before its IC points: α₁, β₁, β₂, γ₂, δ₁, δ₂ and the IC count."""
PUBLIC_JSON_BYTES_PER_INPUT = 1 << 10
"""public.json: a value below r is 78 digits; 1 KiB each leaves room for any layout."""
PROOF_FILES = ("proof.bin", "vk.bin", "public.json")
"""What :func:`proof_files` holds: cuzk's files for one proof."""


class _Reader:
    """A cursor over a file's bytes whose errors name the file and the field being read."""

    def __init__(self, path: Path, data: bytes | None = None) -> None:
        """Read ``path``, or take ``data`` as (the start of) its bytes."""
        self.path = path
        self.data = map_input(path).data if data is None else memoryview(data)
        self.offset = 0

    def take(self, size: int, what: str) -> memoryview:
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

    def point(self, decode, size: int, what: str, data: memoryview | None = None):
        try:
            return decode(bytes(self.take(size, what) if data is None else data))
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
    block = reader.take(n * _G1, f"the ic section ({n} points)")  # size first, then decoding
    ic = [reader.point(g1, _G1, f"ic[{i}]", block[i * _G1 : (i + 1) * _G1]) for i in range(n)]
    if not ic:
        raise FormatError(f"{reader.path}: the verifying key has no IC points")
    vk = VerifyingKey(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic)
    infinite = infinite_vk_point(vk)
    if infinite is not None:
        raise FormatError(f"{reader.path}: {degenerate(infinite)}")
    return vk


def vk_from_bytes(path: Path, data: bytes, check_subgroup: bool = True) -> VerifyingKey:
    """Decode and check the verifying key at the start of ``data`` (bytes of ``path``); the
    bytes it took are ``len(vk.to_bytes())``. ``check_subgroup=False`` checks the curve only,
    for a key whose points were checked when it was written (~20 ms a point in Python)."""
    return _read_vk(_Reader(path, data), check_subgroup)


def read_vk(path: str | Path) -> VerifyingKey:
    """Read a bellperson VerifyingKey file, checking every point (curve and subgroup). The
    subgroup checks (~1.3 ms a point in Python: 2.6 s for a 2^24 porep-lite key's IC) run once
    per content: bytes that passed them before are checked on the curve only."""
    reader = _Reader(Path(path))
    if bytes(reader.data[:4]) in _OTHER_KINDS:
        kind, instead = _OTHER_KINDS[bytes(reader.data[:4])]
        raise FormatError(f"{reader.path}: {kind}, not a verifying key; {instead}")
    if len(reader.data) > VK_FIXED_BYTES:  # its size from the IC count, before hashing it all
        count = int.from_bytes(reader.data[VK_FIXED_BYTES - 4 : VK_FIXED_BYTES], "big")
        if len(reader.data) != VK_FIXED_BYTES + count * _G1:
            raise FormatError(
                f"{reader.path}: {len(reader.data)} bytes, but its IC count ({count}) makes a "
                f"verifying key of {VK_FIXED_BYTES + count * _G1}"
            )
    marker = check_marker(reader.data, "vk-subgroups")
    checked = marker.exists()
    vk = _read_vk(reader, check_subgroup=not checked)
    reader.finish()
    if not checked:
        mark_passed(marker)
    return vk


_OTHER_KINDS = {
    b"zkey": (
        "a snarkjs zkey",
        "`snarkjs zkey export verificationkey` writes its verification_key.json",
    ),
    b"wtns": ("a circom witness", "pass the key's vk.bin or verification_key.json"),
    b"r1cs": ("a circom r1cs", "pass the key's vk.bin or verification_key.json"),
}
"""Files with a magic that a wrong --vk most often is, and what to give instead."""


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
    data = read_input(path, PROOF_BYTES, "proof.bin")
    try:
        return Proof.from_bytes(data)
    except serialize.PointDecodingError as exc:
        raise FormatError(f"{path}: {exc}") from None


def read_public(path: str | Path, expected: int | None = None) -> list[int]:
    """Read public.json (decimal strings, no leading 1, as snarkjs reads them); each below r.

    With ``expected`` (the key's count) a file over 1 KiB per value is refused unread.
    """
    path = Path(path)
    limit = PUBLIC_JSON_BYTES_PER_INPUT * (1 + (expected if expected is not None else 1 << 16))
    values = read_json(path, limit, "public.json")
    if not isinstance(values, list):
        raise FormatError(f"{path}: must be a JSON list of decimal strings")
    if expected is not None and len(values) != expected:
        raise FormatError(
            f"{path}: has {len(values)} public inputs, the verifying key expects {expected}"
        )
    out = []
    for i, value in enumerate(values):
        try:
            out.append(decimal(value, FR_MODULUS, "the scalar field modulus r"))
        except ValueError as exc:
            raise FormatError(f"{path}: public input {i} {exc}") from None
    return out


def public_json(values: list[int]) -> list[str]:
    """public.json's content: the public inputs as decimal strings."""
    return [str(v) for v in values]


def proof_files(proof: Proof, public_inputs: list[int], vk: VerifyingKey) -> dict[str, bytes]:
    """proof.bin, vk.bin and public.json, encoded: one proof's files for ``write_together``."""
    return {
        "proof.bin": proof.to_bytes(),
        "vk.bin": vk.to_bytes(),
        "public.json": json_bytes(public_json(public_inputs)),
    }


def write_params(path: str | Path, pk: ProvingKey) -> None:
    """Write params.bin."""
    write_bytes_atomic(path, pk.to_bytes())
