"""Writing snarkjs Groth16 proving keys (.zkey) over bls12381 from a key cuzk generated.

The layout is the one :mod:`cuzk_core.interop.zkey` reads, in the section order of snarkjs's own
``groth16 setup`` (1, 2, 4, 3, 9, 8, 5, 6, 7, 10). Section 10 is a fresh key's: a 64-byte hash
and zero contributions. snarkjs hashes its circuit from the powers-of-tau points; with no
ceremony behind the key, this one is a blake2b-512 of sections 2–9 as written, so ``snarkjs zkey
verify`` (which needs the ptau) does not apply, while ``groth16 prove`` and ``zkey export
verificationkey`` read the file as any other.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

from cuzk_core.field.constants import FQ_BYTES, FQ_MODULUS, FR_BYTES, FR_MODULUS
from cuzk_core.fileio import atomic_output
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.qap import SNARKJS
from cuzk_core.interop.montgomery import FR, in_chunks
from cuzk_core.interop.points import g1_to_snarkjs, g2_to_snarkjs
from cuzk_core.interop.zkey import COEFFICIENT, GROTH16_PROTOCOL, ZKEY_MAGIC
from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.r1cs import R1CSMatrices, SparseMatrix

_SECTION_ORDER = (1, 2, 4, 3, 9, 8, 5, 6, 7, 10)
_HASHED = (2, 3, 4, 5, 6, 7, 8, 9)


def _g1(points: list) -> bytes:
    return g1_to_snarkjs(G1Affines.from_points(points)).tobytes()


def _g2(points: list) -> bytes:
    return g2_to_snarkjs(G2Affines.from_points(points)).tobytes()


def _entries(matrix: SparseMatrix, which: int) -> np.ndarray:
    """One coefficient record per nonzero of ``matrix`` (A: 0, B: 1), values as c·R² mod r."""
    records = np.zeros(len(matrix.cols), dtype=COEFFICIENT)
    records["matrix"] = which
    records["constraint"] = np.repeat(np.arange(matrix.num_rows), np.diff(matrix.indptr))
    records["signal"] = matrix.cols
    if len(records):
        r_squared_times_r = FR.constant(FR.radix**2 % FR_MODULUS, 1)  # R³ mod r, every lane
        coeffs = matrix.coeffs
        records["value"] = in_chunks(  # c·R³·R⁻¹ = c·R²; chunked: 2^21 values 1.3–1.7 → 0.5 s here
            lambda start, stop: FR.from_digits(
                FR.mul(FR.to_digits(coeffs[start:stop]), r_squared_times_r)
            ),
            coeffs,
            threads=True,
        )
    return records


def coefficients_section(matrices: R1CSMatrices) -> bytes:
    """Section 4: the A and B entries (input rows included) ordered by constraint, A before B,
    as snarkjs writes them; C is not stored (the prover takes it as A ⊙ B on the domain)."""
    records = np.concatenate([_entries(matrices.a, 0), _entries(matrices.b, 1)])
    records = records[np.lexsort((records["matrix"], records["constraint"]))]
    return struct.pack("<I", len(records)) + records.tobytes()


def header_section(pk: ProvingKey, num_vars: int, domain_size: int) -> bytes:
    """Section 2: the field sizes and primes, nVars, nPublic, domainSize, α₁ β₁ β₂ γ₂ δ₁ δ₂."""
    vk = pk.vk
    return b"".join(
        [
            struct.pack("<I", FQ_BYTES),
            FQ_MODULUS.to_bytes(FQ_BYTES, "little"),
            struct.pack("<I", FR_BYTES),
            FR_MODULUS.to_bytes(FR_BYTES, "little"),
            struct.pack("<III", num_vars, vk.num_public, domain_size),
            _g1([vk.alpha_g1, vk.beta_g1]),
            _g2([vk.beta_g2, vk.gamma_g2]),
            _g1([vk.delta_g1]),
            _g2([vk.delta_g2]),
        ]
    )


def check_exportable(pk: ProvingKey, matrices: R1CSMatrices) -> int:
    """The domain size, after checking ``pk`` has the snarkjs shape for ``matrices`` (dense a,
    b_g1, b_g2; one h point per domain point): a key made with the SNARKJS convention."""
    num_vars = matrices.num_variables
    domain_size = SNARKJS.domain(matrices.num_constraints).size
    shapes = {
        "a": (len(pk.a), num_vars),
        "b_g1": (len(pk.b_g1), num_vars),
        "b_g2": (len(pk.b_g2), num_vars),
        "l": (len(pk.l), matrices.num_aux),
        "h": (len(pk.h), domain_size),
        "ic": (len(pk.vk.ic), matrices.num_inputs),
    }
    wrong = [f"{q} has {n} points, a zkey needs {w}" for q, (n, w) in shapes.items() if n != w]
    if not pk.dense_ab or wrong:
        raise ValueError(
            "the key was not made with the snarkjs convention: " + "; ".join(wrong or ["not dense"])
        )
    return domain_size


def write_zkey(path: str | Path, pk: ProvingKey, matrices: R1CSMatrices) -> None:
    """Write ``pk`` (made by ``generate_parameters(..., convention=SNARKJS)`` for ``matrices``,
    which hold the input rows) as a snarkjs zkey at ``path``, atomically."""
    domain_size = check_exportable(pk, matrices)
    sections = {
        1: struct.pack("<I", GROTH16_PROTOCOL),
        2: header_section(pk, matrices.num_variables, domain_size),
        3: _g1(pk.vk.ic),
        4: coefficients_section(matrices),
        5: g1_to_snarkjs(pk.a).tobytes(),
        6: g1_to_snarkjs(pk.b_g1).tobytes(),
        7: g2_to_snarkjs(pk.b_g2).tobytes(),
        8: g1_to_snarkjs(pk.l).tobytes(),
        9: g1_to_snarkjs(pk.h).tobytes(),
    }
    digest = hashlib.blake2b(digest_size=64)
    for section_id in _HASHED:
        digest.update(sections[section_id])
    sections[10] = digest.digest() + struct.pack("<I", 0)  # no contributions
    with atomic_output(path) as f:
        f.write(ZKEY_MAGIC + struct.pack("<II", 1, len(sections)))
        for section_id in _SECTION_ORDER:
            data = sections[section_id]
            f.write(struct.pack("<IQ", section_id, len(data)))
            f.write(data)
