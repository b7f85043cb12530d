"""snarkjs's JSON files for Groth16 over bls12381: proof.json and verification_key.json.

Numbers are decimal strings. A G1 point is ``[x, y, "1"]``, a G2 point
``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``; the point at infinity is ``["0", "1", "0"]``
(G2: ``[["0", "0"], ["1", "0"], ["0", "0"]]``). public.json is the list of public signals, the
same file cuzk writes for its own proofs. ``vk_alphabeta_12`` is e(α₁, β₂) as snarkjs's pairing
computes it (the optimal ate pairing cubed, exactly as :mod:`cuzk_core.pairing` does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cuzk_core.curve.g1 import G1Affine, g1_in_subgroup
from cuzk_core.curve.g2 import G2Affine, g2_in_subgroup
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_MODULUS
from cuzk_core.fileio import write_json_atomic
from cuzk_core.groth16.keys import Proof, VerifyingKey
from cuzk_core.pairing import pairing

PROTOCOL = "groth16"
CURVE = "bls12381"


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
        with path.open("rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
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


def load_json(path: str | Path) -> Any:
    """Parse a JSON file; a missing or malformed file is a FormatError naming it."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FormatError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(f"{path}: not a JSON file: {exc}") from None


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
            raise self.error(f"protocol {protocol!r}; cuzk verifies Groth16 over bls12381 only")
        curve = self.field("curve")
        if curve != CURVE:
            raise self.error(f"curve {curve!r}; cuzk verifies Groth16 over bls12381 only")

    def number(self, value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.error(f"{what} is {value!r}, not a decimal integer")
        text = str(value)
        if not text.isdigit():
            raise self.error(f"{what} is {value!r}, not a decimal integer")
        number = int(text)
        if number >= FQ_MODULUS:
            raise self.error(f"{what} is not below the base field modulus q")
        return number

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
    reader = _JsonReader(path, load_json(path))
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
    reader = _JsonReader(path, load_json(path))
    reader.check_header()
    ic_values = reader.field("IC")
    if not isinstance(ic_values, list) or not ic_values:
        raise reader.error('"IC" must be a non-empty list of G1 points')
    n_public = reader.field("nPublic")
    if n_public != len(ic_values) - 1:
        raise reader.error(f'"nPublic" is {n_public!r} but "IC" holds {len(ic_values)} points')
    return VerifyingKey(
        alpha_g1=reader.g1(reader.field("vk_alpha_1"), "vk_alpha_1"),
        beta_g1=None,
        beta_g2=reader.g2(reader.field("vk_beta_2"), "vk_beta_2"),
        gamma_g2=reader.g2(reader.field("vk_gamma_2"), "vk_gamma_2"),
        delta_g1=None,
        delta_g2=reader.g2(reader.field("vk_delta_2"), "vk_delta_2"),
        ic=[reader.g1(p, f"IC[{i}]") for i, p in enumerate(ic_values)],
    )
