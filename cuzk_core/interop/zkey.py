"""Reading snarkjs Groth16 proving keys (.zkey) over bls12381, memory-mapped and converted in bulk.

Sections: 1 protocol (u32, 1 = Groth16); 2 header (n8q, q, n8r, r, nVars, nPublic, domainSize,
α₁, β₁, β₂, γ₂, δ₁, δ₂); 3 IC (nPublic + 1 G1); 4 the A and B coefficients ({matrix u32, constraint
u32, signal u32, value c·R² mod r}); 5 A, 6 B₁ (G1) and 7 B₂ (G2), a point for every variable;
8 C for the private variables (cuzk's ``l``); 9 H, domainSize G1 points (the odd points of the 2n
domain); 10 the contributions. C's coefficients are not stored: snarkjs evaluates C on the domain
as A ⊙ B, which a satisfying witness makes equal.
"""

from __future__ import annotations

import functools
from pathlib import Path

import attrs
import numpy as np

from cuzk_core.cache import check_marker, mark_passed
from cuzk_core.curve.g1 import g1_in_subgroup
from cuzk_core.curve.g2 import g2_in_subgroup
from cuzk_core.domain import SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_BYTES, FQ_MODULUS, FR_BYTES, FR_MODULUS
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey, degenerate
from cuzk_core.groth16.qap import SNARKJS
from cuzk_core.interop.container import Container, SectionReader
from cuzk_core.interop.fields import curve_of, describe_prime
from cuzk_core.interop.montgomery import FR
from cuzk_core.interop.points import (
    G1_BYTES,
    G2_BYTES,
    Allocator,
    Decoder,
    default_allocator,
    g1_from_snarkjs,
    g2_from_snarkjs,
)
from cuzk_core.interop.sparse import csr_from_triples
from cuzk_core.r1cs import R1CSMatrices

ZKEY_MAGIC = b"zkey"
ZKEY_MAX_VERSION = 1
GROTH16_PROTOCOL = 1
_PROTOCOLS = {1: "Groth16", 2: "PLONK", 10: "FFLONK"}
COEFFICIENT = np.dtype(
    [("matrix", "<u4"), ("constraint", "<u4"), ("signal", "<u4"), ("value", "<u8", (4,))]
)
"""One record of section 4: matrix (0 = A, 1 = B), constraint, signal, value c·R² mod r."""


@attrs.frozen
class ZkeyHeader:
    """The Groth16 header: the sizes that fix the circuit's shape."""

    num_vars: int
    num_public: int
    domain_size: int

    @property
    def num_inputs(self) -> int:
        """Variables paired with IC points: the constant 1 and the public signals."""
        return self.num_public + 1

    @property
    def domain(self) -> EvaluationDomain:
        """The evaluation domain snarkjs proves over (roots of unity from 5)."""
        return EvaluationDomain(self.domain_size.bit_length() - 1, SNARKJS_GENERATOR)


_VK_POINT_NAMES = ("alpha_1", "beta_1", "beta_2", "gamma_2", "delta_1", "delta_2")


class Zkey:
    """An open .zkey: the header is read and checked at once, the big sections on demand."""

    def __init__(self, path: str | Path) -> None:
        self.container = Container(path, ZKEY_MAGIC, ZKEY_MAX_VERSION, ".zkey")
        self.path = self.container.path
        self._check_protocol()
        reader = self.container.reader(2, "Groth16 header")
        self.header = self._read_sizes(reader)
        self._vk_points = (
            self._g1(reader.records(1, G1_BYTES, "alpha_1"), "alpha_1"),
            self._g1(reader.records(1, G1_BYTES, "beta_1"), "beta_1"),
            self._g2(reader.records(1, G2_BYTES, "beta_2"), "beta_2"),
            self._g2(reader.records(1, G2_BYTES, "gamma_2"), "gamma_2"),
            self._g1(reader.records(1, G1_BYTES, "delta_1"), "delta_1"),
            self._g2(reader.records(1, G2_BYTES, "delta_2"), "delta_2"),
        )
        reader.finish()
        self._check_point_sections()
        for name, point in zip(_VK_POINT_NAMES, self._vk_points, strict=True):
            if point is None:
                raise FormatError(f"{self.path}: {degenerate(name)}")

    def _check_protocol(self) -> None:
        reader = self.container.reader(1, "protocol")
        protocol = reader.u32("the protocol id")
        reader.finish()
        if protocol != GROTH16_PROTOCOL:
            name = _PROTOCOLS.get(protocol, f"unknown protocol {protocol}")
            raise FormatError(f"{self.path}: a {name} zkey; cuzk proves Groth16 over bls12381 only")

    def _read_sizes(self, reader: SectionReader) -> ZkeyHeader:
        n8q = reader.u32("n8q")
        q = reader.integer(n8q, "q")
        n8r = reader.u32("n8r")
        r = reader.integer(n8r, "r")
        if (n8q, q, n8r, r) != (FQ_BYTES, FQ_MODULUS, FR_BYTES, FR_MODULUS):
            curve = curve_of(q)
            which = f"for {curve}" if curve != "unknown" else f"over {describe_prime(q)}"
            raise FormatError(
                f"{self.path}: a zkey {which}; cuzk proves Groth16 over bls12381 only"
            )
        num_vars = reader.u32("nVars")
        num_public = reader.u32("nPublic")
        domain_size = reader.u32("domainSize")
        if num_public + 1 > num_vars:
            raise reader.error(f"nPublic {num_public} does not fit in nVars {num_vars}")
        if domain_size < SNARKJS.min_domain_size or domain_size & (domain_size - 1):
            raise reader.error(
                f"domainSize {domain_size} is not a power of two of at least 2 (snarkjs's domains)"
            )
        return ZkeyHeader(num_vars, num_public, domain_size)

    def _g1(self, raw: np.ndarray, name: str):
        point = g1_from_snarkjs(raw, f"{self.path}: {name}").to_points()[0]
        return self._in_subgroup(point, g1_in_subgroup, f"section 2 (header): {name}")

    def _g2(self, raw: np.ndarray, name: str):
        point = g2_from_snarkjs(raw, f"{self.path}: {name}").to_points()[0]
        return self._in_subgroup(point, g2_in_subgroup, f"section 2 (header): {name}")

    def _in_subgroup(self, point, in_subgroup, what: str):
        """The verifying key's points are checked exactly on every load: they are few, and a
        key whose α or β lies outside the subgroup makes proofs no verifier accepts."""
        if point is not None and not in_subgroup(point):
            raise FormatError(f"{self.path}: {what} is not in the prime-order subgroup")
        return point

    def _point_sections(self) -> tuple[tuple[int, str, int, int], ...]:
        """(section, name, points, bytes a point) of every point section, by the header."""
        h = self.header
        return (
            (3, "IC", h.num_inputs, G1_BYTES),
            (5, "A", h.num_vars, G1_BYTES),
            (6, "B1", h.num_vars, G1_BYTES),
            (7, "B2", h.num_vars, G2_BYTES),
            (8, "C", h.num_vars - h.num_inputs, G1_BYTES),
            (9, "H", h.domain_size, G1_BYTES),
        )

    def _check_point_sections(self) -> None:
        """The header's sizes are backed by the file before anything is sized by them (a 3 KB
        file claiming a domain of 2^31 had a prover allocate 16 GiB)."""
        for section_id, name, count, size in self._point_sections():
            if self.container.has(section_id):
                self._points(section_id, name, count, size)

    def _points(self, section_id: int, name: str, count: int, size: int) -> np.ndarray:
        reader = self.container.reader(section_id, name)
        if reader.remaining != count * size:
            raise reader.error(
                f"holds {reader.remaining} bytes; {count} points of {size} bytes are {count * size}"
            )
        return reader.records(count, size, f"{name} points")

    @functools.cached_property
    def _verifying_key(self) -> VerifyingKey:
        raw = self._points(3, "IC", self.header.num_inputs, G1_BYTES)
        ic = g1_from_snarkjs(raw, f"{self.path}: section 3 (IC)").to_points()
        # ~1.3 ms a point in Python: once per content of the section, not once per proof
        marker = check_marker(np.ascontiguousarray(raw).data, "zkey-ic-subgroups")
        if not marker.exists():
            for i, point in enumerate(ic):
                self._in_subgroup(point, g1_in_subgroup, f"section 3 (IC): point {i}")
            mark_passed(marker)
        return VerifyingKey(*self._vk_points, ic)

    def verifying_key(self) -> VerifyingKey:
        """α₁, β₁, β₂, γ₂, δ₁, δ₂ and the IC points, each checked to lie in its subgroup."""
        return self._verifying_key

    def matrices(self) -> R1CSMatrices:
        """The A and B rows (Groth16's input rows included) over z; C is not stored, so empty."""
        header = self.header
        reader = self.container.reader(4, "coefficients")
        count = reader.u32("the coefficient count")
        if reader.remaining != count * COEFFICIENT.itemsize:
            raise reader.error(
                f"announces {count} coefficients of {COEFFICIENT.itemsize} bytes, holds "
                f"{reader.remaining} bytes"
            )
        records = np.frombuffer(
            np.ascontiguousarray(reader.records(count, COEFFICIENT.itemsize, "coefficients")),
            COEFFICIENT,
        )
        matrix = records["matrix"]
        rows = records["constraint"].astype(np.int64)
        cols = records["signal"].astype(np.int64)
        values = records["value"].astype(np.uint64)
        checks = (
            (matrix, matrix > 1, "names matrix {}, not A (0) or B (1)"),
            (rows, rows >= header.domain_size, "names constraint {}, outside the domain"),
            (cols, cols >= header.num_vars, "names signal {}, beyond nVars"),
        )
        for field, bad, message in checks:
            index = np.nonzero(bad)[0]
            if len(index):
                raise reader.error(f"coefficient {index[0]} " + message.format(field[index[0]]))
        unreduced = np.nonzero(~FR.below_modulus(values))[0]
        if len(unreduced):
            raise reader.error(f"coefficient {unreduced[0]} is not below r")
        num_rows = int(rows.max()) + 1 if count else 0
        if SNARKJS.domain(num_rows).size != header.domain_size:
            raise reader.error(
                f"{num_rows} constraint rows do not match domainSize {header.domain_size}"
            )
        coeffs = FR.from_montgomery(values, times=2, threads=True)
        num_vars = header.num_vars
        a, b = (
            csr_from_triples(
                rows[matrix == k], cols[matrix == k], coeffs[matrix == k], num_rows, num_vars
            )
            for k in (0, 1)
        )
        empty = csr_from_triples(
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros((0, 4), np.uint64),
            num_rows,
            num_vars,
        )
        return R1CSMatrices(
            num_inputs=header.num_inputs,
            num_aux=num_vars - header.num_inputs,
            num_constraints=num_rows,
            a=a,
            b=b,
            c=empty,
        )

    def proving_key(
        self, alloc: Allocator = default_allocator, decode: Decoder | None = None
    ) -> ProvingKey:
        """The verifying key and the five bases, converted into buffers from ``alloc`` by
        ``decode`` (a backend's ``cuzk_decode_snarkjs_points``; the numpy reference if None)."""
        header = self.header
        n = header.num_vars

        def g1(section_id: int, name: str, count: int):
            raw = self._points(section_id, name, count, G1_BYTES)
            where = f"{self.path}: section {section_id} ({name})"
            return g1_from_snarkjs(raw, where, alloc, f"zkey.{name}", decode)

        a = g1(5, "A", n)
        b_g1 = g1(6, "B1", n)
        raw = self._points(7, "B2", n, G2_BYTES)
        b_g2 = g2_from_snarkjs(raw, f"{self.path}: section 7 (B2)", alloc, "zkey.B2", decode)
        l = g1(8, "C", n - header.num_inputs)
        h = g1(9, "H", header.domain_size)
        return ProvingKey(self.verifying_key(), h, l, a, b_g1, b_g2, dense_ab=True)
