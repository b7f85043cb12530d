"""Synthetic circom and snarkjs files for tests: containers, .r1cs, .wtns and Montgomery points
(a plain module: conftest.py names collide)."""

from __future__ import annotations

import struct
from pathlib import Path

from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS

R_FQ = 1 << 384
R_FR = 1 << 256


def container(magic: bytes, sections: list[tuple[int, bytes]], version: int = 1) -> bytes:
    """A binary container as circom and snarkjs write it."""
    out = magic + struct.pack("<II", version, len(sections))
    for section_id, data in sections:
        out += struct.pack("<IQ", section_id, len(data)) + data
    return out


def section_offsets(data: bytes) -> dict[int, tuple[int, int]]:
    """Each section id of a container → (offset of its data, size): for patching files."""
    (count,) = struct.unpack_from("<I", data, 8)
    offset, found = 12, {}
    for _ in range(count):
        section_id, size = struct.unpack_from("<IQ", data, offset)
        found[section_id] = (offset + 12, size)
        offset += 12 + size
    return found


def le(value: int, size: int = 32) -> bytes:
    return value.to_bytes(size, "little")


def wtns_bytes(values: list[int], prime: int = FR_MODULUS) -> bytes:
    header = struct.pack("<I", 32) + le(prime) + struct.pack("<I", len(values))
    return container(b"wtns", [(1, header), (2, b"".join(le(v) for v in values))], version=2)


def lc(terms: list[tuple[int, int]]) -> bytes:
    return struct.pack("<I", len(terms)) + b"".join(
        struct.pack("<I", w) + le(v % FR_MODULUS) for w, v in terms
    )


def r1cs_bytes(constraints, wires, outputs, pub, prv, prime=FR_MODULUS, extra=()) -> bytes:
    header = struct.pack("<I", 32) + le(prime)
    header += struct.pack("<IIIIQI", wires, outputs, pub, prv, wires, len(constraints))
    body = b"".join(lc(a) + lc(b) + lc(c) for a, b, c in constraints)
    return container(b"r1cs", [(2, body), (1, header), *extra])


def g1_montgomery(point) -> bytes:
    return b"" if point is None else b"".join(le(c * R_FQ % FQ_MODULUS, 48) for c in point)


def g2_montgomery(point) -> bytes:
    (x0, x1), (y0, y1) = point
    return b"".join(le(c * R_FQ % FQ_MODULUS, 48) for c in (x0, x1, y0, y1))


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path
