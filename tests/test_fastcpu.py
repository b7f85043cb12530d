"""The cuzk-fastcpu plugin against the CPU reference: every hook bit for bit, and whole proofs.

Skipped, with the reason, when the plugin is not installed (``pip install ./plugins/cuzk-fastcpu``)
or cannot run here.
"""

from __future__ import annotations

import random

import attrs
import numpy as np
import pytest

from cuzk_core.curve.g1 import G1_GENERATOR, g1_fixed_base_batch
from cuzk_core.curve.g2 import G2_GENERATOR, g2_fixed_base_batch
from cuzk_core.domain import BELLPERSON_GENERATOR, SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, R1CSMatrices, SparseMatrix
from cuzk_core.timing import Timer

cuzk_fastcpu = pytest.importorskip(
    "cuzk_fastcpu",
    reason="the cuzk-fastcpu plugin is not installed (pip install ./plugins/cuzk-fastcpu)",
)

R = FR_MODULUS
EDGE_SCALARS = {
    "zeros": lambda n: [0] * n,
    "ones": lambda n: [1] * n,
    "r-1": lambda n: [R - 1] * n,
    "bits": lambda n: [i % 2 for i in range(n)],
    "mixed": lambda n: ([0, 1, R - 1, 2, R - 2, 1 << 254] * n)[:n],
}


# Inputs are made here rather than imported from conftest: with several conftest.py files in the
# tree, ``from conftest import …`` depends on which one pytest imported last.


def random_scalars(rng: random.Random, n: int) -> list[int]:
    """``n`` uniform elements of Fr."""
    return [rng.randrange(R) for _ in range(n)]


def random_g1(rng: random.Random, n: int) -> list:
    """``n`` random G1 points (affine)."""
    return g1_fixed_base_batch(G1_GENERATOR, [rng.randrange(1, R) for _ in range(n)])


def random_g2(rng: random.Random, n: int) -> list:
    """``n`` random G2 points (affine)."""
    return g2_fixed_base_batch(G2_GENERATOR, [rng.randrange(1, R) for _ in range(n)])


@pytest.fixture(scope="module")
def fast():
    """The fastcpu backend through the façade the prover uses, under the plugin's profile."""
    plugins = load_plugins()
    info = plugins.backends.get("fastcpu")
    if info is None or not info.available:
        pytest.skip(f"the fastcpu backend cannot run here: {info.reason if info else 'not loaded'}")
    return plugins.backend(load_profile(cuzk_fastcpu.profile_path()), Timer(level=0))


def same_msm(cpu, fast, group: str, points: list, scalars: list[int], windows=(None,)) -> None:
    batch = (G1Affines if group == "g1" else G2Affines).from_points(points)
    limbs = ints_to_limbs(scalars)
    expected = getattr(cpu, f"msm_{group}")(batch, limbs, "t")
    for window_bits in windows:
        got = getattr(fast, f"msm_{group}")(batch, limbs, "t", window_bits)
        assert got.equals(expected), f"window_bits={window_bits}"


# ---------------------------------------------------------------- MSM


@pytest.mark.parametrize("n", [1, 2, 3, 64, 257])
def test_msm_g1_random_every_window(cpu, fast, rng, n):
    points, scalars = random_g1(rng, n), random_scalars(rng, n)
    same_msm(cpu, fast, "g1", points, scalars, windows=[None, *range(4, 17)])


@pytest.mark.parametrize("kind", sorted(EDGE_SCALARS))
@pytest.mark.parametrize("group", ["g1", "g2"])
def test_msm_edge_scalars(cpu, fast, rng, group, kind):
    points = (random_g1 if group == "g1" else random_g2)(rng, 7)
    same_msm(cpu, fast, group, points, EDGE_SCALARS[kind](7), windows=[None, 4, 9])


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_msm_edge_points(cpu, fast, rng, group):
    if group == "g1":
        p = random_g1(rng, 1)[0]
        neg = (p[0], FQ_MODULUS - p[1])
    else:
        p = random_g2(rng, 1)[0]
        neg = (p[0], tuple((FQ_MODULUS - c) % FQ_MODULUS for c in p[1]))
    points = [None, p, p, p, neg, None, neg]
    for scalars in (random_scalars(rng, 7), [5] * 7, [0, 1, 1, 1, 1, 0, 1], [R - 1] * 7):
        same_msm(cpu, fast, group, points, scalars, windows=[None, 4, 16])
    same_msm(cpu, fast, group, [None] * 4, random_scalars(rng, 4))


def test_msm_repeated_points_and_scalars(cpu, fast, rng):
    """Many additions into one bucket: the batch-affine collisions and their fallback."""
    p, q = random_g1(rng, 2)
    points = [p] * 150 + [q] * 150
    for scalars in ([1] * 300, [rng.randrange(R)] * 300, random_scalars(rng, 300)):
        same_msm(cpu, fast, "g1", points, scalars, windows=[4, 8])


def test_msm_g2_random(cpu, fast, rng):
    points, scalars = random_g2(rng, 24), random_scalars(rng, 24)
    same_msm(cpu, fast, "g2", points, scalars, windows=[None, 4, 11, 16])


def test_msm_unsigned_digits(cpu, fast, rng):
    unsigned = attrs.evolve(
        fast.ctx.profile, msm=attrs.evolve(fast.ctx.profile.msm, signed_digits=False)
    )
    fast_unsigned = load_plugins().backend(unsigned, Timer(level=0))
    points, scalars = random_g1(rng, 40), random_scalars(rng, 40)
    same_msm(cpu, fast_unsigned, "g1", points, scalars, windows=[None, 4, 13])


# ---------------------------------------------------------------- NTT and pointwise


def vectors(rng, n: int) -> dict[str, np.ndarray]:
    return {
        "random": ints_to_limbs(random_scalars(rng, n)),
        "zeros": ints_to_limbs([0] * n),
        "ones": ints_to_limbs([1] * n),
        "r-1": ints_to_limbs([R - 1] * n),
        "bits": ints_to_limbs([i % 2 for i in range(n)]),
    }


@pytest.mark.parametrize("log_n", [0, 1, 3, 10])
@pytest.mark.parametrize("generator", [BELLPERSON_GENERATOR, SNARKJS_GENERATOR])
def test_ntt_hooks(cpu, fast, rng, log_n, generator):
    domain = EvaluationDomain(log_n, generator)
    wide = EvaluationDomain(log_n + 1, generator)
    for name, values in vectors(rng, domain.size).items():
        for hook in ("ntt", "intt"):
            expected = getattr(cpu, hook)(values, domain)
            assert np.array_equal(getattr(fast, hook)(values, domain), expected), (hook, name)
        for shift in (generator, wide.omega, rng.randrange(1, R)):
            for hook in ("coset_ntt", "coset_intt"):
                expected = getattr(cpu, hook)(values, domain, shift)
                got = getattr(fast, hook)(values, domain, shift)
                assert np.array_equal(got, expected), (hook, name, shift)


def test_ntt_leaves_its_input_alone(fast, rng):
    domain = EvaluationDomain(4)
    values = ints_to_limbs(random_scalars(rng, 16))
    before = values.copy()
    fast.ntt(values, domain)
    fast.coset_intt(values, domain, 7)
    assert np.array_equal(values, before)


def test_quotient_pointwise(cpu, fast, rng):
    n = 33
    cases = vectors(rng, n)
    for a in cases.values():
        for c in (cases["random"], cases["zeros"], cases["r-1"]):
            for scale in (0, 1, R - 1, rng.randrange(R)):
                b = cases["random"]
                expected = cpu.quotient_pointwise(a, b, c, scale)
                assert np.array_equal(fast.quotient_pointwise(a, b, c, scale), expected)


# ---------------------------------------------------------------- synthesis and R1CS


class ChainCircuit:
    """``steps`` squarings plus boolean bits: a small circuit with dense 0/1 witness values."""

    name = "chain"

    def __init__(self, x: int, steps: int) -> None:
        self.x, self.steps = x, steps

    def knobs(self) -> dict:
        return {"steps": self.steps}

    def public_inputs(self) -> list[int]:
        return [self._final()]

    def _final(self) -> int:
        v = self.x
        for i in range(self.steps):
            v = (v * v + i) % R
        return v

    def synthesize(self, cs: ConstraintSystem) -> None:
        v = self.x
        var = cs.alloc("x", v)
        for i in range(self.steps):
            bit = cs.alloc(f"bit{i}", i % 2)
            cs.enforce(f"boolean{i}", bit, 1 - bit, LinearCombination())
            v = (v * v + i) % R
            nxt = cs.alloc(f"v{i}", v)
            cs.enforce(f"square{i}", var, var, nxt - i)
            var = nxt
        out = cs.alloc_input("out", v)
        cs.enforce("output", var, cs.one, out)


def test_synthesize_and_evaluate(cpu, fast):
    circuit = ChainCircuit(3, 20)
    ours, theirs = fast.synthesize(circuit), cpu.synthesize(circuit)
    assert np.array_equal(ours.witness, theirs.witness)
    for name in ("a", "b", "c"):
        mine, ref = getattr(ours.matrices, name), getattr(theirs.matrices, name)
        assert np.array_equal(mine.indptr, ref.indptr) and np.array_equal(mine.cols, ref.cols)
        assert np.array_equal(mine.coeffs, ref.coeffs)
    for got, expected in zip(
        fast.evaluate_r1cs(theirs.matrices, theirs.witness),
        cpu.evaluate_r1cs(theirs.matrices, theirs.witness),
        strict=True,
    ):
        assert np.array_equal(got, expected)


def test_evaluate_random_matrices(cpu, fast, rng):
    def matrix():
        rows = [
            [
                (c, rng.choice([1, R - 1, rng.randrange(1, R)]))
                for c in sorted(rng.sample(range(9), rng.randrange(0, 5)))
            ]
            for _ in range(12)
        ]
        return SparseMatrix.from_rows(rows, 9)

    matrices = R1CSMatrices(3, 6, 12, matrix(), matrix(), matrix())
    for witness in vectors(rng, 9).values():
        for got, expected in zip(
            fast.evaluate_r1cs(matrices, witness), cpu.evaluate_r1cs(matrices, witness), strict=True
        ):
            assert np.array_equal(got, expected)


def test_host_hooks(fast):
    buffer = fast.alloc_host((4, 4), "uint64", "witness")
    assert buffer.shape == (4, 4) and buffer.dtype == np.uint64 and not buffer.any()
    fast.unpin(fast.pin([buffer], "params"))
    points = G1Affines.empty(2)
    assert fast.upload(points, "a") is points
    fast.release(points)


# ---------------------------------------------------------------- whole proofs


def test_proofs_are_byte_identical(cpu, fast):
    circuit = ChainCircuit(5, 40)

    def synthesizer(backend):
        def run():
            synthesized = backend.synthesize(circuit)
            return with_input_rows(synthesized.matrices), synthesized.witness

        return run

    key = generate_parameters(synthesizer(cpu)()[0], seed=11)
    proofs = {}
    for name, backend in (("cpu", cpu), ("fastcpu", fast)):
        for seed in (1, 2):
            proofs[name, seed] = prove(backend, synthesizer(backend), lambda: key, seed=seed)
    for seed in (1, 2):
        assert proofs["fastcpu", seed].proof.to_bytes() == proofs["cpu", seed].proof.to_bytes()
    assert proofs["fastcpu", 1].proof.to_bytes() != proofs["fastcpu", 2].proof.to_bytes()
    result = proofs["fastcpu", 1]
    assert verify_proof(key.vk, result.proof, result.public_inputs) == (True, "")
