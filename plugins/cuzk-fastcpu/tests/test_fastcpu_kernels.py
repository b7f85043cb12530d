"""The C kernels against plain-Python definitions (no other backend involved).

Inputs come from :mod:`cuzk_core.conformance.inputs` through ``cuzk_rng`` (``--cuzk-seed N``
replays them), expected values from :mod:`cuzk_core.conformance.oracles`.
"""

from __future__ import annotations

import random
from itertools import pairwise

import attrs
import numpy as np
import pytest
from cuzk_fastcpu import kernels

from cuzk_core.circuits import PorepLite
from cuzk_core.conformance.inputs import (
    SCALAR_KINDS,
    SPECIAL_SCALARS,
    R,
    edge_points,
    random_points,
    random_scalars,
)
from cuzk_core.conformance.oracles import (
    fixed_base_by_definition,
    msm_by_definition,
    quotient_by_definition,
    transform_by_definition,
)
from cuzk_core.domain import EvaluationDomain
from cuzk_core.gadgets.bits import to_bits_le
from cuzk_core.gadgets.num import AllocatedNum
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import ConstraintSystem, SparseMatrix
from cuzk_core.witness.record import RecordingConstraintSystem
from cuzk_core.witness.replay import replay

pytestmark = pytest.mark.skipif(
    bool(kernels.UNAVAILABLE_REASON), reason=kernels.UNAVAILABLE_REASON or "available"
)


@pytest.fixture(params=kernels.fq_kernels() if kernels._native else [])
def fq_kernel(request):
    """Each Fq multiplication kernel this CPU runs, the default restored afterwards."""
    default = kernels.fq_kernel()
    kernels.use_fq_kernel(request.param)
    yield request.param
    kernels.use_fq_kernel(default)


def test_unknown_fq_kernel_is_refused():
    with pytest.raises(ValueError, match="not available"):
        kernels.use_fq_kernel("no-such-kernel")


@pytest.mark.parametrize("window_bits", [None, 1, 2, 5, 9])
@pytest.mark.parametrize("signed", [True, False])
def test_msm_g1_matches_naive(cuzk_rng, fq_kernel, window_bits, signed):
    # special scalars on random points, then ∞, P, P, P, −P, ∞, −P, Q all under one scalar
    points = [*random_points("g1", cuzk_rng, 12), *edge_points("g1", "mixed", cuzk_rng, 8)]
    scalars = [*SCALAR_KINDS["specials"](cuzk_rng, 12), *random_scalars(cuzk_rng, 1) * 8]
    result = kernels.msm(G1Affines.from_points(points), ints_to_limbs(scalars), window_bits, signed)
    assert result.to_points() == [msm_by_definition("g1", points, scalars)]


def test_msm_g2_matches_naive(cuzk_rng, fq_kernel):
    points = random_points("g2", cuzk_rng, 5)
    scalars = random_scalars(cuzk_rng, len(points))
    result = kernels.msm(G2Affines.from_points(points), ints_to_limbs(scalars), 3, True)
    assert result.to_points() == [msm_by_definition("g2", points, scalars)]


def test_fq_kernels_agree_on_many_products(cuzk_rng):
    """Every Fq kernel gives the same MSM over 512 points (about a million multiplications)."""
    points = G1Affines.from_points(random_points("g1", cuzk_rng, 8) * 64)
    scalars = ints_to_limbs(random_scalars(cuzk_rng, len(points)))
    default = kernels.fq_kernel()
    results = []
    try:
        for name in kernels.fq_kernels():
            kernels.use_fq_kernel(name)
            results.append(kernels.msm(points, scalars, None, True).coords)
    finally:
        kernels.use_fq_kernel(default)
    assert all(np.array_equal(r, results[0]) for r in results)


def test_msm_of_nothing_or_cancelling_points_is_infinity(cuzk_rng):
    empty = kernels.msm(G1Affines.empty(0), np.zeros((0, 4), np.uint64), None, True)
    assert empty.to_points() == [None]
    both = G1Affines.from_points(edge_points("g1", "opposite", cuzk_rng, 2))
    assert kernels.msm(both, ints_to_limbs([5, 5]), 4, True).to_points() == [None]


def test_msm_checks_shapes(cuzk_rng):
    points = G1Affines.from_points(random_points("g1", cuzk_rng, 2))
    with pytest.raises(ValueError, match="expected 2 scalars"):
        kernels.msm(points, ints_to_limbs([1, 2, 3]), None, True)


@pytest.mark.parametrize("log_n", [0, 1, 2, 5])
@pytest.mark.parametrize("generator", [5, 7])
def test_ntt_matches_dft(cuzk_rng, log_n, generator):
    domain = EvaluationDomain(log_n, generator)
    values = random_scalars(cuzk_rng, domain.size)
    out = kernels.ntt(ints_to_limbs(values), domain.omega)
    assert limbs_to_ints(out) == transform_by_definition("ntt", values, domain)


def test_scale_by_powers_and_quotient(cuzk_rng):
    values = [*random_scalars(cuzk_rng, 9), *SPECIAL_SCALARS]
    base, first = cuzk_rng.randrange(R), cuzk_rng.randrange(R)
    scaled = kernels.scale_by_powers(ints_to_limbs(values), base, first)
    assert limbs_to_ints(scaled) == [v * first * pow(base, i, R) % R for i, v in enumerate(values)]
    a, b, c = (random_scalars(cuzk_rng, len(values)) for _ in range(3))
    scale = cuzk_rng.randrange(R)
    out = kernels.quotient(ints_to_limbs(a), ints_to_limbs(b), ints_to_limbs(c), scale)
    assert limbs_to_ints(out) == quotient_by_definition(a, b, c, scale)


def test_spmv(cuzk_rng):
    rows = [[(0, 1), (3, R - 1)], [], [(1, cuzk_rng.randrange(1, R)), (2, 2), (4, 7)]]
    matrix = SparseMatrix.from_rows(rows, 5)
    z = random_scalars(cuzk_rng, 5)
    assert limbs_to_ints(kernels.spmv(matrix, ints_to_limbs(z))) == matrix.dot(z)
    with pytest.raises(ValueError, match="4 entries, the matrix 5 columns"):
        kernels.spmv(matrix, ints_to_limbs(z[:4]))


@pytest.mark.parametrize("length", [1, 2, 3, 61, 300])
def test_spmv_rows_of_largest_terms_reduce_exactly(cuzk_rng, length):
    """Lazy reduction: unreduced 512-bit products summed, one reduction per row, at the extremes
    (every coefficient and value r − 1) and at random."""
    rows = [
        [(k, R - 1) for k in range(length)],
        [(k, cuzk_rng.randrange(1, R)) for k in range(length)],
        [(length - 1, R - 1)],
    ]
    matrix = SparseMatrix.from_rows(rows, length)
    for z in ([R - 1] * length, random_scalars(cuzk_rng, length), [0] * length):
        want = matrix.dot(z)
        assert limbs_to_ints(kernels.spmv(matrix, ints_to_limbs(z))) == want
        zm = ints_to_limbs([v * 2**256 % R for v in z])
        out = np.full((3, 4), 7, dtype=np.uint64)
        kernels.spmv_rows(matrix, zm, np.array([0, 2]), out)
        assert limbs_to_ints(out[[0, 2]]) == [want[0], want[2]] and out[1].tolist() == [7] * 4


def test_spmv_rows_refuses_rows_outside_the_matrix(cuzk_rng):
    matrix = SparseMatrix.from_rows([[(0, 1)], [(1, 2)]], 2)
    out = np.zeros((2, 4), dtype=np.uint64)
    with pytest.raises(ValueError, match="malformed CSR rows"):
        kernels.spmv_rows(matrix, np.zeros((2, 4), np.uint64), np.array([2]), out)


def test_fingerprint_sees_any_one_word(cuzk_rng):
    z = ints_to_limbs(random_scalars(cuzk_rng, 9))
    base = kernels.fingerprint(z)
    for row, limb in [(0, 0), (4, 2), (8, 3)]:
        changed = z.copy()
        changed[row, limb] ^= 1 << cuzk_rng.randrange(64)
        assert kernels.fingerprint(changed) != base
    assert kernels.fingerprint(z.copy()) == base


def test_thread_count(monkeypatch):
    monkeypatch.setenv(kernels.THREADS_ENV, "3")
    assert kernels.thread_count() == 3
    monkeypatch.setenv(kernels.THREADS_ENV, "zero")
    with pytest.raises(ValueError, match="positive integer"):
        kernels.thread_count()
    monkeypatch.delenv(kernels.THREADS_ENV)
    assert kernels.thread_count() >= 1


def test_auto_window_grows_with_n():
    windows = [kernels.auto_window_bits(1 << k, True) for k in range(0, 21, 4)]
    assert windows == sorted(windows)
    assert windows[0] >= 2 and windows[-1] <= kernels.MAX_AUTO_WINDOW


@pytest.mark.parametrize(("group", "batch"), [("g1", G1Affines), ("g2", G2Affines)])
def test_fixed_base_matches_scalar_multiplication(cuzk_rng, group, batch):
    base = random_points(group, cuzk_rng, 1)[0]
    # the special scalars (0, 1, r − 1, 2^254, …) and random ones, across more than one
    # 512-point chunk (so both threads and the chunk boundary take part)
    scalars = [*SPECIAL_SCALARS, *random_scalars(cuzk_rng, 560), 0]
    got = kernels.fixed_base(batch, base, ints_to_limbs(scalars))
    expected = fixed_base_by_definition(group, base, scalars)
    assert got.to_points() == expected
    assert got.infinity.tolist() == [k == 0 for k in scalars]
    assert kernels.fixed_base(batch, None, ints_to_limbs([3, 4])).infinity.all()
    assert len(kernels.fixed_base(batch, base, np.zeros((0, 4), np.uint64))) == 0


class _WideCircuit:
    """Levels of 5000 independent products (wide enough to split), then a few narrow ones."""

    name = "test-wide"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def synthesize(self, cs) -> None:
        values = random.Random(self.seed)
        xs = [AllocatedNum.alloc(cs, f"x{i}", values.randrange(R)) for i in range(5000)]
        squares = [x.square(cs) for x in xs]
        products = [a.mul(cs, b) for a, b in pairwise(squares)]
        for k in range(3):
            to_bits_le(cs, products[k], 254)


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("make", [_WideCircuit, lambda seed: PorepLite(4, 5, seed=seed)])
def test_threaded_witness_and_spmv_match_the_gadgets(make, threads, monkeypatch):
    """Wide and narrow levels, on more threads than cores too."""
    monkeypatch.setenv(kernels.THREADS_ENV, threads)
    recording_cs = RecordingConstraintSystem()
    make(1).synthesize(recording_cs)
    program = recording_cs.recording().program
    circuit = make(2)
    cs = ConstraintSystem()
    circuit.synthesize(cs)
    want = ints_to_limbs(cs.assignment())
    got = kernels.witness(program, *replay(circuit, program))
    assert np.array_equal(got, want)
    z = limbs_to_ints(want)
    for matrix in (program.matrices.a, program.matrices.b):
        assert limbs_to_ints(kernels.spmv(matrix, want)) == matrix.dot(z)


@pytest.mark.parametrize(("make", "split"), [(_WideCircuit, False), (PorepLite, True)])
def test_independent_runs_of_ops_go_to_threads_and_give_the_same_witness(make, split, monkeypatch):
    """porep-lite's challenges are independent chains: its ops split into runs on two threads;
    the wide circuit's products read squares from its start, so its only clean cuts are its
    ends (one run holds every op)."""
    recording_cs = RecordingConstraintSystem()
    circuit = make(1) if make is _WideCircuit else PorepLite(9, 5, seed=1)
    circuit.synthesize(recording_cs)
    program = recording_cs.recording().program
    inputs, hints = replay(circuit, program)
    monkeypatch.setenv(kernels.THREADS_ENV, "1")
    want = kernels.witness(program, inputs, hints)
    monkeypatch.setenv(kernels.THREADS_ENV, "2")
    assert np.array_equal(kernels.witness(program, inputs, hints), want)
    cuts = kernels._CUTS[program][2]
    assert cuts[0] == 0 and cuts[-1] == program.num_aux and np.all(np.diff(cuts) >= 0)
    runs = np.diff(cuts)
    assert (np.count_nonzero(runs) > 8) == split
    assert np.array_equal(kernels.witness(program, inputs, hints), want)  # with the kept cuts


def test_a_malformed_witness_program_is_refused():

    cs = RecordingConstraintSystem()
    circuit = PorepLite(challenges=1, depth=2)
    circuit.synthesize(cs)
    program = cs.recording().program
    inputs, hints = replay(circuit, program)
    arg = program.arg.copy()
    arg[-1] = 10**9
    with pytest.raises(ValueError, match="malformed witness program"):
        kernels.witness(attrs.evolve(program, arg=arg), inputs, hints)
