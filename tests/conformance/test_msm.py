"""MSM hooks (G1 and G2) against the CPU reference: random inputs, edge scalars and points,
every window size, signed and unsigned digits, split 0/1 scalars."""

from __future__ import annotations

import pytest
from conformance_support import (
    CPU_LIMIT,
    GPU_BACKENDS,
    REFERENCE,
    random_points,
    random_scalars,
    require_size,
)

from cuzk_core.curve.g1 import g1_add, g1_from_affine, g1_mul, g1_to_affine
from cuzk_core.curve.g2 import g2_add, g2_from_affine, g2_mul, g2_to_affine
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs

R = FR_MODULUS
BATCH = {"g1": G1Affines, "g2": G2Affines}
NAIVE_LIMIT = 256
SIZES = [1, 2, 3, 255, 256, CPU_LIMIT + 1, 1 << 14, 1 << 16]


def _naive(group: str, points: list, scalars: list[int]):
    """Σ kᵢ·Pᵢ one scalar multiplication at a time (the oracle for the reference itself)."""
    lift, mul, add, to_affine = (
        (g1_from_affine, g1_mul, g1_add, g1_to_affine)
        if group == "g1"
        else (g2_from_affine, g2_mul, g2_add, g2_to_affine)
    )
    total = lift(None)
    for point, k in zip(points, scalars, strict=True):
        total = add(total, mul(lift(point), k))
    return to_affine(total)


def _run(backend, group: str, points: list, scalars: list[int], window_bits=None):
    bases = BATCH[group].from_points(points)
    limbs = ints_to_limbs(scalars).reshape(-1, 4)
    call = backend.msm_g1 if group == "g1" else backend.msm_g2
    return call(bases, limbs, "conformance", window_bits).to_points()[0]


def _expected(reference, backend_name: str, group: str, points: list, scalars: list[int]):
    if backend_name != REFERENCE:
        return _run(reference, group, points, scalars)
    if len(points) > NAIVE_LIMIT:
        pytest.skip("the reference is checked against the naive sum up to 256 points")
    return _naive(group, points, scalars)


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("n", SIZES)
def test_random(backend_name, make_backend, reference, rng, group, n):
    require_size(backend_name, n)
    if group == "g2" and n > 1 << 14:
        pytest.skip("G2 against the reference stops at 2^14 (see test_large_invariants)")
    points = random_points(group, rng, n)
    scalars = random_scalars(rng, n)
    got = _run(make_backend(), group, points, scalars)
    assert got == _expected(reference, backend_name, group, points, scalars)


def _edge_scalars(rng, n: int) -> dict[str, list[int]]:
    specials = [0, 1, 2, R - 1, R - 2, (R - 1) // 2, 1 << 254, (1 << 128) - 1]
    return {
        "zeros": [0] * n,
        "ones": [1] * n,
        "bits": [rng.randrange(2) for _ in range(n)],
        "specials": [specials[i % len(specials)] for i in range(n)],
        "r-1": [R - 1] * n,
        "mixed": [rng.choice([0, 1, R - 1, rng.randrange(R)]) for _ in range(n)],
    }


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("kind", ["zeros", "ones", "bits", "specials", "r-1", "mixed"])
@pytest.mark.parametrize(
    "changes",
    [{}, {"msm.split_01": True}, {"msm.signed_digits": False}],
    ids=["signed", "split01", "unsigned"],
)
def test_edge_scalars(backend_name, make_backend, reference, rng, group, kind, changes):
    n = 40
    points = random_points(group, rng, n)
    scalars = _edge_scalars(rng, n)[kind]
    got = _run(make_backend(**changes), group, points, scalars)
    assert got == _expected(reference, backend_name, group, points, scalars)


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("kind", ["infinity", "repeated", "opposite", "all-infinity"])
@pytest.mark.parametrize("split", [False, True], ids=["pippenger", "split01"])
def test_edge_points(backend_name, make_backend, reference, rng, group, kind, split):
    n = 48
    distinct = random_points(group, rng, 4)
    if kind == "infinity":
        points = [None if i % 3 == 0 else distinct[i % 4] for i in range(n)]
    elif kind == "repeated":
        points = [distinct[0]] * n
    elif kind == "opposite":
        base = _run(reference, group, [distinct[0]], [R - 1])
        points = [distinct[0] if i % 2 else base for i in range(n)]
    else:
        points = [None] * n
    scalars = [rng.choice([0, 1, 2, R - 1, rng.randrange(R)]) for _ in range(n)]
    got = _run(make_backend(**{"msm.split_01": split}), group, points, scalars)
    assert got == _expected(reference, backend_name, group, points, scalars)


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("window_bits", range(4, 21))
def test_window_bits(backend_name, make_backend, reference, rng, group, window_bits):
    if backend_name not in GPU_BACKENDS and window_bits > 10:
        pytest.skip("wide windows on a CPU backend take minutes (2^(c−1) buckets per window)")
    n = 255
    points = random_points(group, rng, n)
    scalars = [*random_scalars(rng, n - 3), 0, 1, R - 1]
    got = _run(make_backend(), group, points, scalars, window_bits)
    assert got == _expected(reference, backend_name, group, points, scalars)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_large_invariants(backend_name, make_backend, rng, group):
    """At 2^16 (beyond the reference's reach for G2): every setting agrees, and MSM is linear."""
    require_size(backend_name, 1 << 16)
    if backend_name not in GPU_BACKENDS:
        pytest.skip("GPU-only size")
    n = 1 << 16
    points = random_points(group, rng, n)
    a = [rng.choice([0, 1, rng.randrange(R)]) for _ in range(n)]
    b = random_scalars(rng, n)
    backend = make_backend()
    base = _run(backend, group, points, a)
    for changes, bits in (({"msm.split_01": True}, None), ({"msm.signed_digits": False}, 13)):
        assert _run(make_backend(**changes), group, points, a, bits) == base
    sum_ab = _run(backend, group, points, [(x + y) % R for x, y in zip(a, b, strict=True)])
    b_only = _run(backend, group, points, b)
    add, lift, to_affine = (
        (g1_add, g1_from_affine, g1_to_affine)
        if group == "g1"
        else (g2_add, g2_from_affine, g2_to_affine)
    )
    assert to_affine(add(lift(base), lift(b_only))) == sum_ab
