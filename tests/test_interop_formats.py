"""circom/snarkjs readers and writers on synthetic files: layouts, Montgomery decoding, bad input.

These need no node tools; tests/test_interop_snarkjs.py runs the real snarkjs and circom.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from circomfiles import (
    container,
    g1_montgomery,
    g2_montgomery,
    le,
    r1cs_bytes,
    section_offsets,
    write,
    wtns_bytes,
)

from cuzk_core import cache as cache_module
from cuzk_core.cli import main
from cuzk_core.conformance.inputs import (
    edge_values,
    random_points,
    random_scalars,
    snarkjs_point_rows,
)
from cuzk_core.curve.g1 import G1_B, G1_GENERATOR
from cuzk_core.curve.g2 import G2_B, G2_GENERATOR
from cuzk_core.domain import SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.field.fr import fr_root_of_unity
from cuzk_core.field.tower import fq2_add, fq2_mul, fq2_sqr
from cuzk_core.groth16.files import read_vk
from cuzk_core.groth16.keys import Proof, VerifyingKey
from cuzk_core.groth16.qap import SNARKJS
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.interop import points
from cuzk_core.interop.circom import r1cs_digest
from cuzk_core.interop.container import Container
from cuzk_core.interop.fields import BN128_Q, BN128_R
from cuzk_core.interop.montgomery import FQ, FR
from cuzk_core.interop.points import g1_from_snarkjs, g2_from_snarkjs, reference_decode
from cuzk_core.interop.r1cs import read_r1cs
from cuzk_core.interop.snarkjs_json import (
    is_json_file,
    proof_to_json,
    read_proof_json,
    read_vk_json,
    write_proof_json,
    write_vk_json,
)
from cuzk_core.interop.sparse import csr_from_triples
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.interop.zkey import Zkey
from cuzk_core.layout import ints_to_limbs, limbs_to_ints

# ------------------------------------------------------------------ Montgomery arithmetic


@pytest.mark.parametrize("field", [FQ, FR], ids=["fq", "fr"])
def test_montgomery_reduction_matches_python_ints(field, rng: random.Random):
    n = field.modulus
    values = [*random_scalars(rng, 300, n), *edge_values(n)]
    limbs = ints_to_limbs(values, field.limbs)
    radix_inv = pow(field.radix, -1, n)
    assert limbs_to_ints(field.from_montgomery(limbs)) == [v * radix_inv % n for v in values]
    twice = [v * radix_inv * radix_inv % n for v in values]
    assert limbs_to_ints(field.from_montgomery(limbs, times=2)) == twice
    others = random_scalars(rng, len(values), n)
    a, b = field.to_digits(limbs), field.to_digits(ints_to_limbs(others, field.limbs))
    products = limbs_to_ints(field.from_digits(field.mul(a, b)))
    assert products == [x * y * radix_inv % n for x, y in zip(values, others, strict=True)]
    sums = limbs_to_ints(field.from_digits(field.add(a, b)))
    assert sums == [(x + y) % n for x, y in zip(values, others, strict=True)]
    differences = limbs_to_ints(field.from_digits(field.sub(a, b)))
    assert differences == [(x - y) % n for x, y in zip(values, others, strict=True)]


def test_below_modulus_edges():
    r = FR_MODULUS
    mask = FR.below_modulus(ints_to_limbs([r - 1, r, r + 1, 0, 2**256 - 1]))
    assert mask.tolist() == [True, False, False, True, False]


# ------------------------------------------------------------------ the container


def test_container_checks_magic_version_and_bounds(tmp_path: Path):
    good = container(b"zkey", [(1, b"abcd"), (2, b"")])
    parsed = Container(write(tmp_path, "ok.zkey", good), b"zkey", 1, ".zkey")
    assert parsed.reader(1, "x").u32("y") == int.from_bytes(b"abcd", "little")
    cases = {
        "magic.zkey": (container(b"wtns", []), "not a .zkey file"),
        "version.zkey": (container(b"zkey", [], version=7), "version 7 is not supported"),
        "short.zkey": (good[:30], "truncated"),
        "header.zkey": (good[:22], "truncated"),
        "tail.zkey": (good + b"x", "1 unexpected bytes"),
        "empty.zkey": (b"", "truncated"),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(FormatError, match=message) as info:
            Container(write(tmp_path, name, data), b"zkey", 1, ".zkey")
        assert str(tmp_path / name) in str(info.value)
    with pytest.raises(FormatError, match="no such file"):
        Container(tmp_path / "absent.zkey", b"zkey", 1, ".zkey")
    with pytest.raises(FormatError, match="missing section 3"):
        parsed.reader(3, "IC")
    twice = Container(
        write(tmp_path, "d.zkey", container(b"zkey", [(1, b""), (1, b"")])), b"zkey", 1, ""
    )
    with pytest.raises(FormatError, match="appears 2×"):
        twice.reader(1, "protocol")


# ------------------------------------------------------------------ .wtns


def test_wtns_reads_values_and_rejects_bad_ones(tmp_path: Path):
    values = [1, 5, FR_MODULUS - 1]
    witness = read_wtns(write(tmp_path, "w.wtns", wtns_bytes(values)))
    assert witness.shape == (3, 4) and limbs_to_ints(witness) == values
    cases = {
        "bn.wtns": (wtns_bytes(values, prime=BN128_R), "bn128 scalar field"),
        "big.wtns": (wtns_bytes([1, FR_MODULUS]), "value 1 is not below"),
        "one.wtns": (wtns_bytes([2, 3]), "wire 0 must hold the constant 1"),
        "cut.wtns": (wtns_bytes(values)[:-32], "truncated"),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(FormatError, match=message):
            read_wtns(write(tmp_path, name, data))


# ------------------------------------------------------------------ .r1cs


def test_r1cs_keeps_linear_rows_and_orders_wires(tmp_path: Path):
    # wires: 1, out, in(pub), x(prv), t; constraints: x·x = t; linear: out = t + in (A, B empty)
    constraints = [
        ([(3, 1)], [(3, 1)], [(4, 1)]),
        ([], [], [(1, 1), (4, -1), (2, -1)]),
    ]
    r1cs = read_r1cs(write(tmp_path, "c.r1cs", r1cs_bytes(constraints, 5, 1, 1, 1)))
    m = r1cs.matrices
    assert (m.num_inputs, m.num_aux, m.num_constraints) == (3, 2, 2)
    assert list(m.a.rows()) == [[(3, 1)], []]
    assert list(m.b.rows()) == [[(3, 1)], []]
    assert list(m.c.rows()) == [[(4, 1)], [(1, 1), (2, FR_MODULUS - 1), (4, FR_MODULUS - 1)]]
    z = [1, 9 + 7, 7, 3, 9]
    assert [x * y % FR_MODULUS for x, y in zip(m.a.dot(z), m.b.dot(z), strict=True)] == m.c.dot(z)


def _random_r1cs(rng: random.Random, count: int, wires: int) -> list:
    def row() -> list[tuple[int, int]]:
        chosen = rng.sample(range(wires), rng.choice([0, 1, 1, 2, 3, 5]))
        return [(w, rng.randrange(1, FR_MODULUS)) for w in sorted(chosen)]

    return [(row(), row(), row()) for _ in range(count)]


def test_r1cs_row_starts_are_remembered_and_checked_before_use(tmp_path, monkeypatch):
    """The walk over the rows runs once per file: its row starts are kept in the cache and a
    later read takes them only when array operations show they are that file's (a file
    rewritten in place, or a damaged cache entry, is walked again), with the same matrices."""
    from cuzk_core.interop import r1cs as r1cs_module

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    walks = []
    walk = r1cs_module._walk_rows
    monkeypatch.setattr(r1cs_module, "_walk_rows", lambda *a: walks.append(1) or walk(*a))
    rng = random.Random(7)

    def rows(r1cs):
        m = r1cs.matrices
        return [list(x.rows()) for x in (m.a, m.b, m.c)]

    path = write(tmp_path, "c.r1cs", r1cs_bytes(_random_r1cs(rng, 40, 9), 9, 1, 1, 1))
    first = rows(read_r1cs(path))
    assert rows(read_r1cs(path)) == first and len(walks) == 1
    other = _random_r1cs(rng, 40, 9)  # same path, same constraint count, other rows
    path.write_bytes(r1cs_bytes(other, 9, 1, 1, 1))
    assert rows(read_r1cs(path)) == [[[*row] for row in part] for part in zip(*other, strict=True)]
    assert len(walks) == 2
    (remembered,) = (tmp_path / "cache" / "r1cs-rows").iterdir()
    remembered.write_bytes(b"not an array")
    read_r1cs(path)
    assert len(walks) == 3
    np.save(remembered, np.zeros(120, dtype=np.uint32))  # well formed, wrong
    read_r1cs(path)
    assert len(walks) == 4
    read_r1cs(path)
    assert len(walks) == 4


def _with_first_count(data: bytes, count: int) -> bytes:
    """An r1cs with constraint 0's A term count replaced."""
    start, _ = section_offsets(data)[2]
    return data[:start] + struct.pack("<I", count) + data[start + 4 :]


def test_r1cs_bad_input(tmp_path: Path):
    one = [([(1, 1)], [(1, 1)], [(1, 1)])]
    cases = {
        "bn.r1cs": (r1cs_bytes(one, 2, 1, 0, 0, prime=BN128_R), "bn128 scalar field"),
        "wire.r1cs": (r1cs_bytes([([(9, 1)], [], [])], 2, 1, 0, 0), "names wire 9"),
        "cut.r1cs": (r1cs_bytes(one, 2, 1, 0, 0)[:-10], "truncated"),
        "count.r1cs": (r1cs_bytes(one, 2, 3, 0, 0), "cannot hold"),
        "gates.r1cs": (r1cs_bytes(one, 2, 1, 0, 0, extra=[(4, b"")]), "uses custom gates"),
        "overrun.r1cs": (  # the row whose count overruns is named, not the one after it
            _with_first_count(r1cs_bytes(one, 2, 1, 0, 0), 0xFFFFFFFF),
            r"truncated in constraint 0 \(A\): its 4294967295 terms run past",
        ),
    }
    for name, (data, message) in cases.items():
        with pytest.raises(FormatError, match=message):
            read_r1cs(write(tmp_path, name, data))


def test_csr_adds_repeated_entries_and_drops_zeros():
    rows = np.array([1, 0, 1, 1], dtype=np.int64)
    cols = np.array([2, 1, 2, 0], dtype=np.int64)
    coeffs = ints_to_limbs([5, 0, FR_MODULUS - 2, 4])
    matrix = csr_from_triples(rows, cols, coeffs, 3, 3)
    assert list(matrix.rows()) == [[], [(0, 4), (2, 3)], []]


@pytest.mark.parametrize("seed", range(6))
def test_csr_from_triples_matches_a_sum_by_definition(seed):
    """In order or not, with repeats (some summing to zero) or none, and columns too many for
    one int64 key (the two-key sort): every (row, column)'s sum mod r, zeros dropped."""
    rng = random.Random(seed)
    num_rows, num_cols = rng.randrange(1, 9), rng.choice([5, 1 << 62])
    count = rng.randrange(0, 40)
    triples = [
        (rng.randrange(num_rows), rng.randrange(min(num_cols, 6)), rng.randrange(FR_MODULUS))
        for _ in range(count)
    ]
    if seed % 2:
        triples.sort()  # the order readers give: no sort needed
    if seed % 3 == 0 and triples:
        row, col, value = triples[0]
        triples.append((row, col, FR_MODULUS - value))  # a repeat summing to zero
    expected: dict[tuple[int, int], int] = {}
    for row, col, value in triples:
        expected[row, col] = (expected.get((row, col), 0) + value) % FR_MODULUS
    matrix = csr_from_triples(
        np.array([t[0] for t in triples], dtype=np.int64),
        np.array([t[1] for t in triples], dtype=np.int64),
        ints_to_limbs([t[2] for t in triples]).reshape(-1, 4),
        num_rows,
        num_cols,
    )
    got = {(r, c): v for r, row in enumerate(matrix.rows()) for c, v in row}
    assert got == {k: v for k, v in expected.items() if v}


# ------------------------------------------------------------------ .zkey headers


def zkey_header(q: int = FQ_MODULUS, r: int = FR_MODULUS) -> bytes:
    n8q = 48 if q == FQ_MODULUS else 32
    return struct.pack("<I", n8q) + le(q, n8q) + struct.pack("<I", 32) + le(r)


def test_zkey_names_other_protocols_and_curves(tmp_path: Path):
    cases = {
        "plonk.zkey": ([(1, struct.pack("<I", 2))], "a PLONK zkey"),
        "fflonk.zkey": ([(1, struct.pack("<I", 10))], "a FFLONK zkey"),
        "bn.zkey": ([(1, struct.pack("<I", 1)), (2, zkey_header(BN128_Q, BN128_R))], "for bn128"),
        "none.zkey": ([(2, b"")], "missing section 1"),
    }
    for name, (sections, message) in cases.items():
        with pytest.raises(FormatError, match=message) as info:
            Zkey(write(tmp_path, name, container(b"zkey", sections)))
        assert "Groth16" in str(info.value) or "missing" in message


def test_zkey_header_sizes_are_checked(tmp_path: Path):
    sizes = struct.pack("<III", 4, 1, 6)  # domainSize 6 is not a power of two
    sections = [(1, struct.pack("<I", 1)), (2, zkey_header() + sizes)]
    with pytest.raises(FormatError, match="not a power of two"):
        Zkey(write(tmp_path, "d.zkey", container(b"zkey", sections)))
    sections = [(1, struct.pack("<I", 1)), (2, zkey_header() + struct.pack("<III", 4, 1, 8))]
    with pytest.raises(FormatError, match=r"alpha_1 .*needs 96 bytes"):
        Zkey(write(tmp_path, "cut.zkey", container(b"zkey", sections)))


# ------------------------------------------------------------------ points


def test_points_decode_from_montgomery_in_bulk(rng: random.Random):
    g1 = random_points("g1", rng, 5)
    raw = np.frombuffer(b"".join(g1_montgomery(p) for p in g1) + bytes(96), np.uint8)
    batch = g1_from_snarkjs(raw.reshape(-1, 96), "test")
    assert batch.to_points() == [*g1, None]
    g2 = random_points("g2", rng, 5)
    raw = np.frombuffer(b"".join(g2_montgomery(p) for p in g2), np.uint8)
    assert g2_from_snarkjs(raw.reshape(-1, 192), "test").to_points() == g2


def test_points_reject_off_curve_and_out_of_range():
    x, y = G1_GENERATOR
    off = np.frombuffer(g1_montgomery((x, y)) + g1_montgomery((x, y + 1)), np.uint8)
    with pytest.raises(FormatError, match="point 1 is not on the curve"):
        g1_from_snarkjs(off.reshape(-1, 96), "here")
    big = np.frombuffer(le(FQ_MODULUS, 48) + bytes(48), np.uint8)
    with pytest.raises(FormatError, match="point 0 has a coordinate not below q"):
        g1_from_snarkjs(big.reshape(-1, 96), "here")
    (x0, x1), y2 = G2_GENERATOR
    bad = np.frombuffer(g2_montgomery(((x1, x0), y2)), np.uint8)
    with pytest.raises(FormatError, match="point 0 is not on the curve"):
        g2_from_snarkjs(bad.reshape(-1, 192), "here")


def _decode_by_definition(row: np.ndarray, group: str) -> tuple[int, list[int]]:
    """One zkey point by Python ints: its status and canonical coordinates (zeros unless valid)."""
    words = [int.from_bytes(row[k : k + 48].tobytes(), "little") for k in range(0, len(row), 48)]
    if not any(words):
        return 0, words
    if any(w >= FQ_MODULUS for w in words):
        return 1, [0] * len(words)
    inverse = pow(1 << 384, -1, FQ_MODULUS)
    values = [w * inverse % FQ_MODULUS for w in words]
    if group == "g1":
        x, y = values
        on_curve = (y * y - x**3 - G1_B) % FQ_MODULUS == 0
    else:
        x2, y2 = tuple(values[:2]), tuple(values[2:])
        on_curve = fq2_sqr(y2) == fq2_add(fq2_mul(fq2_sqr(x2), x2), G2_B)
    return (0, values) if on_curve else (2, [0] * len(words))


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_reference_decoder_matches_python_ints_on_edges(group, rng: random.Random):
    """The numpy decoder (every backend's oracle for cuzk_decode_snarkjs_points) against the
    definition: status and canonical coordinates of random points and every edge."""
    rows = snarkjs_point_rows(group, rng, 5)
    batch, status = reference_decode(rows, group)
    flat = batch.coords.reshape(len(rows), -1)
    for i, row in enumerate(rows):
        want_status, want = _decode_by_definition(row, group)
        assert status[i] == want_status, f"point {i}"
        assert limbs_to_ints(flat[i].reshape(-1, 6)) == want, f"point {i}"
        assert batch.infinity[i] == (not row.any())
    assert set(status) == {0, 1, 2}


def test_decoders_run_in_chunks_and_name_the_first_bad_point(monkeypatch, rng: random.Random):
    """A backend's decoder gets bounded chunks; the error names the point's index in the file."""
    monkeypatch.setattr(points, "DECODE_CHUNK", 4)
    good = snarkjs_point_rows("g1", rng, 9)[:9]
    seen: list[int] = []

    def decode(raw: np.ndarray, group: str):
        seen.append(len(raw))
        return reference_decode(raw, group)

    batch = g1_from_snarkjs(good, "here", decode=decode)
    assert seen == [4, 4, 1] and batch.equals(reference_decode(good, "g1")[0])
    bad = good.copy()
    bad[6, 48] ^= 1
    with pytest.raises(FormatError, match="here: point 6 is not on the curve"):
        g1_from_snarkjs(bad, "here", decode=decode)


# ------------------------------------------------------------------ JSON


def test_proof_json_round_trip_and_checks(tmp_path: Path, rng: random.Random):
    proof = Proof(random_points("g1", rng, 1)[0], random_points("g2", rng, 1)[0], G1_GENERATOR)
    path = tmp_path / "proof.json"
    write_proof_json(path, proof)
    assert read_proof_json(path) == proof and is_json_file(path)
    document = proof_to_json(proof)
    assert document["pi_b"][2] == ["1", "0"] and document["curve"] == "bls12381"
    bad = {
        "curve": ({**document, "curve": "bn128"}, "curve 'bn128'"),
        "protocol": ({**document, "protocol": "plonk"}, "protocol 'plonk'"),
        "coordinate": ({**document, "pi_a": ["1", "x", "1"]}, "not a decimal integer"),
        "curve point": ({**document, "pi_c": ["1", "1", "1"]}, "pi_c is not a point"),
        "projective": ({**document, "pi_a": [*document["pi_a"][:2], "2"]}, "not affine"),
        "missing": ({k: v for k, v in document.items() if k != "pi_b"}, 'missing "pi_b"'),
    }
    for name, (content, message) in bad.items():
        target = tmp_path / f"{name}.json"
        target.write_text(json.dumps(content))
        with pytest.raises(FormatError, match=message):
            read_proof_json(target)
    binary = tmp_path / "proof.bin"
    binary.write_bytes(proof.to_bytes())
    assert not is_json_file(binary)
    for first in (b"{", b"[", b" {"):  # a binary file may begin with either byte
        binary.write_bytes(first + proof.to_bytes())
        assert not is_json_file(binary), first
    spaced = tmp_path / "proof"
    spaced.write_text("\n  " + json.dumps(proof_to_json(proof), ensure_ascii=False))
    assert is_json_file(spaced)


# ------------------------------------------------------------------ snarkjs's H


def test_snarkjs_h_is_the_quotient_at_the_odd_points(cpu, rng: random.Random):
    """h_i = A(x)·B(x) − C(x) at x = ω_{2m}·ω^i, where A, B, C interpolate a, b, c on the domain."""
    domain = EvaluationDomain(2, SNARKJS_GENERATOR)
    m, r = domain.size, FR_MODULUS
    a, b = random_scalars(rng, m), random_scalars(rng, m)
    c = [x * y % r for x, y in zip(a, b, strict=True)]
    h = limbs_to_ints(SNARKJS.compute(cpu, *(ints_to_limbs(v) for v in (a, b, c)), domain))
    points = [pow(domain.omega, j, r) for j in range(m)]

    def interpolate(values, x):
        total = 0
        for j, xj in enumerate(points):
            term = values[j]
            for k, xk in enumerate(points):
                if k != j:
                    term = term * (x - xk) * pow(xj - xk, -1, r) % r
            total += term
        return total % r

    shift = fr_root_of_unity(domain.log_size + 1, SNARKJS_GENERATOR)
    odd = [shift * p % r for p in points]
    expected = [(interpolate(a, x) * interpolate(b, x) - interpolate(c, x)) % r for x in odd]
    assert h == expected and SNARKJS.h_points(domain) == m


# ------------------------------------------------------------------ command-line usage


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--wtns", "w.wtns"], "--wtns needs --zkey, or --r1cs with --params"),
        (["--zkey", "k.zkey"], "--zkey and --r1cs need --wtns"),
        (["--zkey", "k.zkey", "--wtns", "w", "--params", "p"], "leave out --params"),
        (["--r1cs", "c.r1cs", "--wtns", "w.wtns"], "--r1cs with --params"),
    ],
)
def test_prove_option_combinations(args, message, capsys):
    assert main(["-q", "prove", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuzk: error: ") and message in err and err.count("\n") == 1


# ------------------------------------------------------------------ degenerate keys


def test_a_verifying_key_with_a_point_at_infinity_is_refused(tmp_path: Path, capsys):
    """γ or δ at infinity makes a pairing factor 1: (α, β, ∞) then "verifies" for any public
    inputs (snarkjs says invalid). Every reader refuses such a key, and so does the verifier."""
    g1, g2 = G1_GENERATOR, G2_GENERATOR
    vk = VerifyingKey(g1, g1, g2, None, g1, g2, [g1, g1])
    (tmp_path / "vk.bin").write_bytes(vk.to_bytes())
    write_vk_json(tmp_path / "vk.json", vk)
    forged = Proof(a=g1, b=g2, c=None)
    (tmp_path / "proof.bin").write_bytes(forged.to_bytes())
    (tmp_path / "public.json").write_text('["123456789"]')
    with pytest.raises(FormatError, match="gamma_g2 is the point at infinity"):
        read_vk(tmp_path / "vk.bin")
    with pytest.raises(FormatError, match='"vk_gamma_2": gamma_g2 is the point at infinity'):
        read_vk_json(tmp_path / "vk.json")
    assert verify_proof(vk, forged, [123456789]) == (
        False,
        "the verifying key's gamma_g2 is the point at infinity, which no setup makes (such a "
        "key accepts forgeries)",
    )
    for name in ("vk.bin", "vk.json"):
        args = ["--vk", str(tmp_path / name), "--proof", str(tmp_path / "proof.bin")]
        assert main(["verify", *args, "--public", str(tmp_path / "public.json")]) == 2
        err = capsys.readouterr().err
        assert "gamma_g2 is the point at infinity" in err and err.count("\n") == 1
    corpus = Path(__file__).resolve().parent / "fuzz_corpus" / "zkey" / "seed-one_private.zkey"
    data = bytearray(corpus.read_bytes())
    start, _ = section_offsets(bytes(data))[2]
    delta_2 = start + 100 + 2 * 96 + 2 * 192 + 96  # sizes, α₁, β₁, β₂, γ₂, δ₁
    data[delta_2 : delta_2 + 192] = bytes(192)  # snarkjs writes infinity as zeros
    with pytest.raises(FormatError, match="delta_2 is the point at infinity"):
        Zkey(write(tmp_path, "deg.zkey", bytes(data)))


def test_a_zkey_header_that_its_sections_do_not_back_is_refused_at_open(tmp_path: Path):
    """domainSize and nVars size allocations (H, the matrices, the bases): a file claiming a
    domain of 2^31 with one H point is refused before anything is sized by it."""
    corpus = Path(__file__).resolve().parent / "fuzz_corpus" / "zkey" / "seed-one_private.zkey"
    good = corpus.read_bytes()
    start, _ = section_offsets(good)[2]
    for offset, value, message in (
        (96, 1 << 31, r"section 9 \(H\): holds \d+ bytes; 2147483648 points"),
        (88, 1 << 20, r"section 5 \(A\): holds \d+ bytes; 1048576 points"),
    ):
        data = bytearray(good)
        struct.pack_into("<I", data, start + offset, value)
        with pytest.raises(FormatError, match=message):
            Zkey(write(tmp_path, "big.zkey", bytes(data)))


def test_r1cs_wire_count_must_match_its_label_section(tmp_path: Path):
    """circom writes a label per wire (section 3); nWires beyond it would size setup's arrays
    (2^32 − 1 wires: 32 GiB for a 220-byte file)."""
    square = [([(2, 1)], [(2, 1)], [(1, 1)])]
    labels = [(3, bytes(8 * 3))]
    assert read_r1cs(write(tmp_path, "ok.r1cs", r1cs_bytes(square, 3, 1, 0, 1, extra=labels)))
    huge = r1cs_bytes(square, 0xFFFFFFFF, 1, 0, 1, extra=labels)
    with pytest.raises(FormatError, match=r"section 3 \(wire labels\): holds 24 bytes; nWires"):
        read_r1cs(write(tmp_path, "huge.r1cs", huge))


def test_small_format_slips_are_named(tmp_path: Path, capsys):
    """A zkey given as --vk, nPublic as a float, trailing bytes in a zkey's protocol section."""
    corpus = Path(__file__).resolve().parent / "fuzz_corpus"
    zkey = corpus / "zkey" / "seed-one_private.zkey"
    with pytest.raises(FormatError, match="a snarkjs zkey, not a verifying key; `snarkjs zkey"):
        read_vk(zkey)
    vk = json.loads((corpus / "vk_json" / "seed-one_private-snarkjs.json").read_text())
    vk["nPublic"] = float(vk["nPublic"])
    (tmp_path / "vk.json").write_text(json.dumps(vk))
    with pytest.raises(FormatError, match='"nPublic" is'):
        read_vk_json(tmp_path / "vk.json")
    data = zkey.read_bytes()
    start, size = section_offsets(data)[1]
    assert size == 4
    longer = data[: start - 8] + struct.pack("<Q", 8) + data[start : start + 4] + bytes(4)
    longer += data[start + 4 :]
    with pytest.raises(FormatError, match=r"section 1 \(protocol\): 4 unexpected bytes at the end"):
        Zkey(write(tmp_path, "long.zkey", longer))


def test_r1cs_digest_is_read_again_only_when_the_file_changed(tmp_path: Path, monkeypatch):
    """The sha256 of a .r1cs is remembered with the file's identity; a rewrite of the same size
    with its mtime set back still changes the ctime, so it is hashed again."""
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    reads = []
    real_sha256 = hashlib.sha256

    def counted(*data):  # the file's digest starts empty; path tags hash the path at once
        if not data:
            reads.append(1)
        return real_sha256(*data)

    monkeypatch.setattr(cache_module.hashlib, "sha256", counted)
    monkeypatch.setattr(cache_module, "_RACY_NS", 0)  # files written just now count as settled
    path = write(tmp_path, "c.r1cs", b"first version")
    assert r1cs_digest(path) == real_sha256(b"first version").hexdigest()
    assert r1cs_digest(path) == real_sha256(b"first version").hexdigest() and len(reads) == 1
    stat = path.stat()
    time.sleep(0.01)
    path.write_bytes(b"other version")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert r1cs_digest(path) == real_sha256(b"other version").hexdigest() and len(reads) == 2
    (entry,) = (tmp_path / "cache" / "digests").iterdir()
    entry.write_text("{not json")
    assert r1cs_digest(path) == real_sha256(b"other version").hexdigest() and len(reads) == 3
    assert r1cs_digest(path) == real_sha256(b"other version").hexdigest() and len(reads) == 3
    known = json.loads(entry.read_text())
    entry.write_text(json.dumps({**known, "sha256": None}))  # right file, no digest
    assert r1cs_digest(path) == real_sha256(b"other version").hexdigest() and len(reads) == 4
    # a file changed within a ctime tick of its digest could change again unseen: not kept
    monkeypatch.setattr(cache_module, "_RACY_NS", 10**15)
    fresh = write(tmp_path, "d.r1cs", b"just written")
    assert r1cs_digest(fresh) == r1cs_digest(fresh) and len(reads) == 6
