"""snarkjs's JSON files for Groth16 over bls12381: proof.json and verification_key.json.

Numbers are decimal strings. A G1 point is ``[x, y, "1"]``, a G2 point
``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``; the point at infinity is ``["0", "1", "0"]``
(G2: ``[["0", "0"], ["1", "0"], ["0", "0"]]``). public.json is the list of public signals, the
same file cuzk writes for its own proofs. ``vk_alphabeta_12`` is e(α₁, β₂) as snarkjs's pairing
computes it (the optimal ate pairing cubed, exactly as :mod:`cuzk_core.pairing` does).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from cuzk_core.curve.g1 import G1Affine, g1_in_subgroup
from cuzk_core.curve.g2 import G2Affine, g2_in_subgroup
from cuzk_core.errors import FormatError, shown
from cuzk_core.field.constants import FQ_MODULUS
from cuzk_core.fileio import json_bytes, read_json, read_start, write_json_atomic
from cuzk_core.groth16.keys import (
    VERIFYING_POINTS,
    Proof,
    VerifyingKey,
    degenerate,
    infinite_vk_point,
)
from cuzk_core.pairing import pairing

PROTOCOL = "groth16"
CURVE = "bls12381"
PROOF_JSON = "proof.json"
VK_JSON = "verification_key.json"
SNARKJS_FILES = (PROOF_JSON, VK_JSON)
"""What :func:`snarkjs_files` holds."""


def g1_to_json(point: G1Affine) -> list[str]:
    """``[x, y, "1"]``, or ``["0", "1", "0"]`` for infinity."""
    if point is None:
        return ["0", "1", "0"]
    return [str(point[0]), str(point[1]), "1"]


def g2_to_json(point: G2Affine) -> list[list[str]]:
    """``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``, or the projective infinity."""
    if point is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = point
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def proof_to_json(proof: Proof) -> dict[str, Any]:
    """A proof as snarkjs writes it."""
    return {
        "pi_a": g1_to_json(proof.a),
        "pi_b": g2_to_json(proof.b),
        "pi_c": g1_to_json(proof.c),
        "protocol": PROTOCOL,
        "curve": CURVE,
    }


def vk_to_json(vk: VerifyingKey) -> dict[str, Any]:
    """A verifying key as ``snarkjs zkey export verificationkey`` writes it."""
    alphabeta = pairing(vk.alpha_g1, vk.beta_g2)
    return {
        "protocol": PROTOCOL,
        "curve": CURVE,
        "nPublic": vk.num_public,
        "vk_alpha_1": g1_to_json(vk.alpha_g1),
        "vk_beta_2": g2_to_json(vk.beta_g2),
        "vk_gamma_2": g2_to_json(vk.gamma_g2),
        "vk_delta_2": g2_to_json(vk.delta_g2),
        "vk_alphabeta_12": [[[str(c) for c in fq2] for fq2 in fq6] for fq6 in alphabeta],
        "IC": [g1_to_json(p) for p in vk.ic],
    }


def write_proof_json(path: str | Path, proof: Proof) -> None:
    """Write proof.json atomically."""
    write_json_atomic(path, proof_to_json(proof))


def write_vk_json(path: str | Path, vk: VerifyingKey) -> None:
    """Write verification_key.json atomically."""
    write_json_atomic(path, vk_to_json(vk))


def snarkjs_files(proof: Proof, vk: VerifyingKey) -> dict[str, bytes]:
    """proof.json and verification_key.json, encoded (for ``write_together``)."""
    return {PROOF_JSON: json_bytes(proof_to_json(proof)), VK_JSON: json_bytes(vk_to_json(vk))}


_SNIFF_BYTES = 64
_TEXT_CONTROLS = frozenset(b"\t\n\r")


def is_json_file(path: str | Path) -> bool:
    """Whether ``path`` holds JSON: by its .json extension, else by a start that is text and
    opens with ``{`` or ``[`` (a binary key or proof begins with either byte one time in ~100,
    so the byte alone is not enough)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        return True
    try:
        head = read_start(path, _SNIFF_BYTES)
    except FormatError:  # not a readable regular file: the binary reader says what is wrong
        return False
    return head.lstrip()[:1] in (b"{", b"[") and _is_text(head)


def _is_text(head: bytes) -> bool:
    """UTF-8 without control characters other than tab and line ends (a multi-byte character
    may be cut at the end of ``head``)."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return False
        text = head[: exc.start].decode("utf-8")
    return all(ord(ch) >= 32 or ord(ch) in _TEXT_CONTROLS for ch in text)


MAX_PROOF_JSON_BYTES = 64 << 10
"""proof.json: snarkjs writes about 1 KiB; anything over 64 KiB is not one."""
MAX_VK_JSON_BYTES = 256 << 20
"""verification_key.json: about 250 bytes per IC point, so 256 MiB is a million public inputs."""
JS_SAFE_INTEGER = 2**53 - 1
"""The largest JSON number JavaScript (so snarkjs) reads exactly."""
_ASCII_DIGITS = re.compile(r"[0-9]+")


def decimal(value: Any, bound: int, bound_name: str) -> int:
    """A number as snarkjs reads it from JSON, which must be below ``bound``; else ValueError.

    Accepted: a string of ASCII digits (leading zeros too, as snarkjs's ``BigInt`` reads them)
    and a JSON integer up to 2^53 − 1 (beyond it JavaScript rounds, so snarkjs would read another
    number). Refused: other digits (``"٦"``, ``"６"``, ``"²"``), signs, spaces, exponents,
    fractions, ``true``, and snarkjs's ``0x`` hex strings (cuzk's files are decimal).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"is {shown(value)}, a negative number")
        if value > JS_SAFE_INTEGER:
            raise ValueError(
                "is a JSON number above 2^53, which JavaScript (snarkjs) reads rounded: write it "
                "as a decimal string"
            )
        number = value
    elif isinstance(value, str) and _ASCII_DIGITS.fullmatch(value):
        digits = value.lstrip("0") or "0"
        if len(digits) > len(str(bound)):
            raise ValueError(f"is not below {bound_name}")
        number = int(digits)
    else:
        raise ValueError(f"is {shown(value)}, not a decimal integer (ASCII digits)")
    if number >= bound:
        raise ValueError(f"is not below {bound_name}")
    return number


class _JsonReader:
    """Field access into one parsed JSON file, each error naming the file and the field."""

    def __init__(self, path: Path, value: Any) -> None:
        self.path = path
        self.value = value

    def error(self, message: str) -> FormatError:
        return FormatError(f"{self.path}: {message}")

    def field(self, name: str) -> Any:
        if not isinstance(self.value, dict) or name not in self.value:
            raise self.error(f'missing "{name}"')
        return self.value[name]

    def check_header(self) -> None:
        protocol = self.field("protocol")
        if protocol != PROTOCOL:
            raise self.error(
                f"protocol {shown(protocol)}; cuzk verifies Groth16 over bls12381 only"
            )
        curve = self.field("curve")
        if curve != CURVE:
            raise self.error(f"curve {shown(curve)}; cuzk verifies Groth16 over bls12381 only")

    def number(self, value: Any, what: str) -> int:
        try:
            return decimal(value, FQ_MODULUS, "the base field modulus q")
        except ValueError as exc:
            raise self.error(f"{what} {exc}") from None

    def triple(self, value: Any, what: str, size: int) -> list[Any]:
        if not isinstance(value, list) or len(value) != 3:
            raise self.error(f"{what} must be a list of 3 coordinates (x, y, z)")
        for part in value:
            if size > 1 and (not isinstance(part, list) or len(part) != size):
                raise self.error(f"{what}: each coordinate must be a pair [c0, c1]")
        return value

    def g1(self, value: Any, what: str) -> G1Affine:
        x, y, z = (self.number(v, what) for v in self.triple(value, what, 1))
        if z == 0 and (x, y) == (0, 1):
            return None
        if z != 1:
            raise self.error(f"{what} is not affine (z must be 1, or the infinity [0, 1, 0])")
        point = (x, y)
        if not g1_in_subgroup(point):
            raise self.error(f"{what} is not a point of the G1 subgroup")
        return point

    def g2(self, value: Any, what: str) -> G2Affine:
        x, y, z = (
            (self.number(pair[0], what), self.number(pair[1], what))
            for pair in self.triple(value, what, 2)  # each a pair [c0, c1]
        )
        if z == (0, 0) and (x, y) == ((0, 0), (1, 0)):
            return None
        if z != (1, 0):
            raise self.error(f"{what} is not affine (z must be [1, 0])")
        point = (x, y)
        if not g2_in_subgroup(point):
            raise self.error(f"{what} is not a point of the G2 subgroup")
        return point


def read_proof_json(path: str | Path) -> Proof:
    """Read a snarkjs proof.json, checking every point is in its subgroup."""
    path = Path(path)
    reader = _JsonReader(path, read_json(path, MAX_PROOF_JSON_BYTES, "snarkjs proof.json"))
    reader.check_header()
    return Proof(
        reader.g1(reader.field("pi_a"), "pi_a"),
        reader.g2(reader.field("pi_b"), "pi_b"),
        reader.g1(reader.field("pi_c"), "pi_c"),
    )


def read_vk_json(path: str | Path) -> VerifyingKey:
    """Read a snarkjs verification_key.json.

    The file has no β₁ or δ₁ (verifying never needs them), so the key holds None there: such a
    key verifies but must not be written as a bellperson vk.bin.
    """
    path = Path(path)
    document = read_json(path, MAX_VK_JSON_BYTES, "snarkjs verification_key.json")
    reader = _JsonReader(path, document)
    reader.check_header()
    ic_values = reader.field("IC")
    if not isinstance(ic_values, list) or not ic_values:
        raise reader.error('"IC" must be a non-empty list of G1 points')
    n_public = reader.field("nPublic")
    if (
        not isinstance(n_public, int)
        or isinstance(n_public, bool)
        or n_public != len(ic_values) - 1
    ):
        raise reader.error(f'"nPublic" is {shown(n_public)} but "IC" holds {len(ic_values)} points')
    vk = VerifyingKey(
        alpha_g1=reader.g1(reader.field("vk_alpha_1"), "vk_alpha_1"),
        beta_g1=None,
        beta_g2=reader.g2(reader.field("vk_beta_2"), "vk_beta_2"),
        gamma_g2=reader.g2(reader.field("vk_gamma_2"), "vk_gamma_2"),
        delta_g1=None,
        delta_g2=reader.g2(reader.field("vk_delta_2"), "vk_delta_2"),
        ic=[reader.g1(p, f"IC[{i}]") for i, p in enumerate(ic_values)],
    )
    infinite = infinite_vk_point(vk, VERIFYING_POINTS)
    if infinite is not None:
        raise reader.error(f'"{_JSON_VK_POINTS[infinite]}": {degenerate(infinite)}')
    return vk


_JSON_VK_POINTS = {
    "alpha_g1": "vk_alpha_1",
    "beta_g2": "vk_beta_2",
    "gamma_g2": "vk_gamma_2",
    "delta_g2": "vk_delta_2",
}
"""The verifying key's points a verification_key.json holds, and their names there."""
