"""The CUDA field and curve headers, built for the host with g++, against cuzk_core's arithmetic.

The kernels' carry-chain primitives have a host emulation (backends/kernels/common.cuh), so the
very instruction sequences the GPU runs are checked here without a GPU.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from host_build import build_harness

from cuzk_core.conformance.inputs import edge_values, random_points, random_scalars
from cuzk_core.curve.g1 import g1_add_affine, g1_double, g1_from_affine
from cuzk_core.curve.g1 import g1_to_affine as g1_affine
from cuzk_core.curve.g2 import g2_add_affine, g2_double, g2_from_affine
from cuzk_core.curve.g2 import g2_to_affine as g2_affine
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.field.tower import fq2_inv, fq2_mul, fq2_neg, fq2_sqr, fq2_sub

HARNESS = Path(__file__).with_name("kernel_arith_host.cpp")
Q, R = FQ_MODULUS, FR_MODULUS
WORDS = {"fr": 8, "fq": 12}
"""32-bit limbs of each field's elements in the kernels (mont_t's N)."""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """The compiled host harness, fed one operation per line."""
    program = build_harness(HARNESS, tmp_path_factory.mktemp("arith"))

    def run(lines: list[str]) -> list[list[int]]:
        return [[int(w, 16) for w in row.split()] for row in program(lines).splitlines()]

    return run


@pytest.mark.parametrize(("name", "p"), [("fr", R), ("fq", Q)])
def test_prime_field(harness, name, p):
    rng = random.Random(p)
    edges = list(edge_values(p))
    values = edges + random_scalars(rng, 40, p)
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(rng.choice(values), rng.choice(values)) for _ in range(200)]
    rows = harness([f"{name} {a:x} {b:x}" for a, b in pairs])
    for (a, b), row in zip(pairs, rows, strict=True):
        product = a * b % p  # by the inlined product (CIOS) and the curve one (Karatsuba)
        assert row == [product, (a + b) % p, (a - b) % p, -a % p, a * a % p, product], (a, b)


def with_limbs(limbs: int, p: int, n_words: int) -> int:
    """The canonical value whose Montgomery form (the harness's ``parse``) has these limbs."""
    return limbs * pow(1 << (32 * n_words), -1, p) % p


def carry_values(rng: random.Random, p: int, n_words: int) -> list[int]:
    """Canonical values whose Montgomery forms' 32-bit limbs are each 0, 1, 2^32 − 1 or random
    (the top limb dropped where that is not below p), or are 2^(32k) − 1: where carries run
    longest in the kernels, which see the Montgomery form."""
    limbs = (0, 1, 0xFFFFFFFF)
    low_words = (1 << (32 * (n_words - 1))) - 1
    values = []
    for _ in range(300):
        value = sum(
            (rng.choice(limbs) if rng.random() < 0.8 else rng.getrandbits(32)) << (32 * k)
            for k in range(n_words)
        )
        values.append(value if value < p else value & low_words)
    values += [(1 << (32 * k)) - 1 for k in range(1, n_words + 1) if (1 << (32 * k)) - 1 < p]
    return [with_limbs(v, p, n_words) for v in values]


@pytest.mark.parametrize(("name", "p"), [("fr", R), ("fq", Q)])
def test_square_carries(harness, name, p):
    """Squares (their own product and reduction) where the carries run longest."""
    values = carry_values(random.Random(p + 2), p, WORDS[name])
    rows = harness([f"{name} {a:x} 1" for a in values])
    for a, row in zip(values, rows, strict=True):
        assert row[4] == a * a % p, a


CARRY_PAST_THE_MIDDLE = {
    "fr": [
        (
            0xFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFF0000000000000000,
            0x10000000000000000FFFFFFFFFFFFFFFF0000000000000000,
        ),
        (
            0x10000000000000000FFFFFFFF00000000FFFFFFFF00000001,
            0xFFFFFFFFFFFFFFFFFFFFFFFF0000000000000000FFFFFFFF00000000,
        ),
    ],
    "fq": [
        (
            0xFFFFFFFFFFFFFFFFFFFFFFFF0000000000000000FFFFFFFF000000000000000000000000FFFFFFFF00000000,
            0x1000000010000000100000000000000010000000000000001FFFFFFFFFFFFFFFF000000000000000181071CAE,
        ),
        (
            0x100000001FFFFFFFF00000001FFFFFFFFFFFFFFFF06BA184CBE553EDF00000000FFFFFFFF0000000000000000,
            0x100000000FFFFFFFFFFFFFFFF000000005226E7240000000000000000FFFFFFFF0000000100000000,
        ),
    ],
}
"""Montgomery forms' limbs whose Karatsuba middle term, added at word N/2, carries out of word
3N/2 (found by a search over carry_values' patterns): the only inputs that need
karatsuba_call's last carry adds."""


@pytest.mark.parametrize(("name", "p"), [("fr", R), ("fq", Q)])
def test_karatsuba_product_carries(harness, name, p):
    """The curve formulas' product (karatsuba_call: its half sums carry when both halves are
    large) where the carries run longest, each value against another."""
    rng = random.Random(p + 3)
    n_words = WORDS[name]
    values = carry_values(rng, p, n_words)
    pairs = [(a, rng.choice(values)) for a in values]
    pairs += [
        (with_limbs(a, p, n_words), with_limbs(b, p, n_words))
        for a, b in CARRY_PAST_THE_MIDDLE[name]
    ]
    rows = harness([f"{name} {a:x} {b:x}" for a, b in pairs])
    for (a, b), row in zip(pairs, rows, strict=True):
        assert row[5] == a * b % p, (a, b)


@pytest.mark.parametrize(("name", "p"), [("fr", R), ("fq", Q)])
def test_lazy_reduction_stays_below_2p(harness, name, p):
    """The NTT's lazy operations: on x, y in [0, 2p) and a canonical c, x ± y and c·x·R^-1 come
    back in [0, 2p) and congruent mod p, and reduced() gives x mod p."""
    rng = random.Random(p + 1)
    n_words = WORDS[name]
    r_inv = pow(1 << (32 * n_words), -1, p)
    lazy = [0, 1, p - 1, p, p + 1, 2 * p - 1] + [rng.randrange(2 * p) for _ in range(60)]
    canonical = list(edge_values(p)) + random_scalars(rng, 20, p)
    cases = [(x, y, rng.choice(canonical)) for x in lazy[:6] for y in lazy[:6]]
    cases += [(rng.choice(lazy), rng.choice(lazy), c) for c in canonical for _ in range(4)]
    rows = harness([f"{name}lazy {x:x} {y:x} {c:x}" for x, y, c in cases])
    for (x, y, c), (added, subtracted, product, reduced) in zip(cases, rows, strict=True):
        assert added < 2 * p and added % p == (x + y) % p, (x, y)
        assert subtracted < 2 * p and subtracted % p == (x - y) % p, (x, y)
        assert product < 2 * p and product % p == c * x * r_inv % p, (c, x)
        assert reduced == x % p, x


@pytest.mark.parametrize(("name", "p"), [("fr", R), ("fq", Q)])
def test_field_inverse(harness, name, p):
    """The binary-GCD inversion against Python's pow: canonical values through Montgomery form,
    and raw words X (the GCD's own input) at the edges that take it longest: 0, small values,
    p − small, powers of two and p − 2^k, 2^k − 1, random values of every length."""
    rng = random.Random(p + 2)
    n_words = WORDS[name]
    r2 = pow(1 << (32 * n_words), 2, p)
    values = list(edge_values(p)) + random_scalars(rng, 60, p)
    rows = harness([f"inv {name} {x:x}" for x in values])
    for x, row in zip(values, rows, strict=True):
        assert row == [pow(x, -1, p) if x else 0], x
    raw = list(range(6)) + [p - k for k in range(1, 6)]
    raw += [v for k in range(32 * n_words) for v in ((1 << k) % p, p - (1 << k) % p)]
    raw += [((1 << k) - 1) % p for k in range(1, p.bit_length() + 1)]
    raw += [rng.randrange(1 << rng.randrange(1, p.bit_length())) for _ in range(200)]
    rows = harness([f"invraw {name} {x:x}" for x in raw])
    for x, row in zip(raw, rows, strict=True):
        assert row == [r2 * pow(x, -1, p) % p if x else 0], x
    (wrong,) = harness([f"invcheck {name} 20000 {p % 1000}"])
    assert wrong == [0]


def test_fq2_inverse(harness):
    rng = random.Random(3)
    elems = [(0, 0), (1, 0), (0, 1), (Q - 1, Q - 1), (1, Q - 1)]
    elems += zip(random_scalars(rng, 30, Q), random_scalars(rng, 30, Q), strict=True)
    rows = harness([f"fq2inv {a:x} {b:x}" for a, b in elems])
    for (a, b), row in zip(elems, rows, strict=True):
        assert row == (list(fq2_inv((a, b))) if (a, b) != (0, 0) else [0, 0]), (a, b)


def test_fq2(harness):
    rng = random.Random(2)
    elems = [(0, 0), (1, 0), (0, 1), (Q - 1, Q - 1)]
    elems += zip(random_scalars(rng, 30, Q), random_scalars(rng, 30, Q), strict=True)
    pairs = [(rng.choice(elems), rng.choice(elems)) for _ in range(150)]
    rows = harness([f"fq2 {a[0]:x} {a[1]:x} {b[0]:x} {b[1]:x}" for a, b in pairs])
    for (a, b), row in zip(pairs, rows, strict=True):
        assert row == [*fq2_mul(a, b), *fq2_sqr(a), *fq2_sub(a, b)]


def _xyzz_to_affine_g1(x, y, zz, zzz):
    if zz == 0:
        return None
    return (x * pow(zz, -1, Q) % Q, y * pow(zzz, -1, Q) % Q)


def _xyzz_to_affine_g2(row):
    x, y, zz, zzz = (tuple(row[i : i + 2]) for i in range(0, 8, 2))
    if zz == (0, 0):
        return None
    return (fq2_mul(x, fq2_inv(zz)), fq2_mul(y, fq2_inv(zzz)))


def _curve_cases(group, rng):
    """Point lists with signs covering infinity, equal points, opposite points and plain sums."""
    pts = random_points(group, rng, 4)
    p, q = pts[0], pts[1]
    return [
        [(p, 0)],
        [(None, 0), (p, 1)],
        [(p, 0), (p, 0)],
        [(p, 0), (p, 1)],
        [(p, 0), (p, 1), (q, 0)],
        [(p, 0), (q, 0), (p, 0), (q, 1), (None, 1)],
        [(pt, rng.randrange(2)) for pt in pts * 3],
        [(None, 0)],
    ]


def test_g1(harness):
    rng = random.Random(11)
    cases = _curve_cases("g1", rng)
    lines = []
    for case in cases:
        words = [f"g1 {len(case)}"]
        for pt, neg in case:
            x, y = pt if pt is not None else (0, 0)
            words.append(f"{x:x} {y:x} {neg}")
        lines.append(" ".join(words))
    for case, row in zip(cases, harness(lines), strict=True):
        total = g1_from_affine(None)
        for pt, neg in case:
            if pt is not None and neg:
                pt = (pt[0], -pt[1] % Q)
            total = g1_add_affine(total, pt)
        expect = g1_affine(total)
        assert _xyzz_to_affine_g1(*row[0:4]) == expect
        assert _xyzz_to_affine_g1(*row[4:8]) == expect
        assert _xyzz_to_affine_g1(*row[8:12]) == g1_affine(g1_double(total))


def test_g2(harness):
    rng = random.Random(12)
    cases = _curve_cases("g2", rng)
    lines = []
    for case in cases:
        words = [f"g2 {len(case)}"]
        for pt, neg in case:
            (x0, x1), (y0, y1) = pt if pt is not None else ((0, 0), (0, 0))
            words.append(f"{x0:x} {x1:x} {y0:x} {y1:x} {neg}")
        lines.append(" ".join(words))
    for case, row in zip(cases, harness(lines), strict=True):
        total = g2_from_affine(None)
        for pt, neg in case:
            if pt is not None and neg:
                pt = (pt[0], fq2_neg(pt[1]))
            total = g2_add_affine(total, pt)
        expect = g2_affine(total)
        assert _xyzz_to_affine_g2(row[0:8]) == expect
        assert _xyzz_to_affine_g2(row[8:16]) == expect
        assert _xyzz_to_affine_g2(row[16:24]) == g2_affine(g2_double(total))
