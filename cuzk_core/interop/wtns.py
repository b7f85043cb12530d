"""Reading circom witness files (.wtns, version 2): the full assignment, wire 0 holding 1.

Section 1: field element size n8 (u32, 32 for bls12381), the prime r (n8 bytes LE), the number of
values (u32). Section 2: the values, n8 bytes LE each, in plain (non-Montgomery) form.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FR_BYTES, FR_MODULUS
from cuzk_core.interop.container import Container
from cuzk_core.interop.fields import describe_prime
from cuzk_core.interop.montgomery import FR

WTNS_MAGIC = b"wtns"
WTNS_MAX_VERSION = 2


def read_wtns(path: str | Path, num_wires: int | None = None, against: str = "") -> np.ndarray:
    """The witness as ``(n, 4)`` canonical scalars; checks field, length, range and wire 0 = 1,
    and with ``num_wires`` that it has one value per wire of ``against`` (before reading the
    values: a huge file for another circuit costs nothing)."""
    container = Container(path, WTNS_MAGIC, WTNS_MAX_VERSION, ".wtns")
    header = container.reader(1, "header")
    n8 = header.u32("the field size")
    if n8 != FR_BYTES:
        raise header.error(
            f"field elements of {n8} bytes: not a witness for bls12381 (cuzk proves over "
            f"bls12381, whose elements are {FR_BYTES} bytes)"
        )
    prime = header.integer(n8, "the prime")
    if prime != FR_MODULUS:
        raise header.error(
            f"a witness over {describe_prime(prime)}; cuzk proves over the bls12381 scalar field"
        )
    count = header.u32("the witness length")
    header.finish()
    if num_wires is not None and count != num_wires:
        raise FormatError(
            f"{path}: the witness has {count} values, {against} has {num_wires} "
            "(a witness for another circuit?)"
        )
    values = container.reader(2, "values")
    if values.remaining != count * n8:
        raise values.error(
            f"holds {values.remaining} bytes, the header announces {count} values of {n8} bytes"
        )
    raw = values.records(count, n8, "witness values")
    witness = np.ascontiguousarray(raw).view("<u8").astype(np.uint64)
    bad = np.nonzero(~FR.below_modulus(witness))[0]
    if len(bad):
        raise values.error(f"value {bad[0]} is not below the scalar field modulus r")
    if count == 0 or witness[0].tolist() != [1, 0, 0, 0]:
        raise values.error("wire 0 must hold the constant 1")
    return witness
