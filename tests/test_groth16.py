"""Groth16 end to end on a small circuit: setup, prove, verify, files, and tampering."""

from __future__ import annotations

import itertools
from pathlib import Path

import attrs
import numpy as np
import py_ecc_oracle
import pytest

from cuzk_backend_cpu import plugin as reference
from cuzk_core import hookimpl, host_work
from cuzk_core.backend import Backend, BackendContext
from cuzk_core.conformance.checks import subject
from cuzk_core.conformance.inputs import random_points
from cuzk_core.curve import bulk
from cuzk_core.errors import BackendUnavailable, FormatError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.groth16 import files
from cuzk_core.groth16.assembly import _DELTA_TABLES, keep_delta_tables
from cuzk_core.groth16.keys import Proof, query_density
from cuzk_core.groth16.prover import (
    UnsatisfiedWitness,
    _query_scalars,
    evaluated,
    keeps_witness,
    prove,
    with_queries,
)
from cuzk_core.groth16.qap import SNARKJS
from cuzk_core.groth16.setup import _Scaler, generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.host_work import while_device_busy
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.plugins import backend_manager, load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.r1cs import ConstraintSystem, LinearCombination
from cuzk_core.timing import Timer


class CubeCircuit:
    """x³ + x + 5 = y with y public, plus an unused variable (a hole in the A/B densities)."""

    name = "cube"

    def __init__(self, x: int, claimed: int | None = None) -> None:
        self.x = x
        self.claimed = claimed

    def knobs(self) -> dict:
        return {}

    def synthesize(self, cs: ConstraintSystem) -> None:
        x = self.x
        xv = cs.alloc("x", x)
        x2 = cs.alloc("x2", x * x % FR_MODULUS)
        cs.enforce("square", xv, xv, x2)
        x3 = cs.alloc("x3", x**3 % FR_MODULUS)
        cs.enforce("cube", x2, xv, x3)
        cs.alloc("unused", 42)
        out = (x**3 + x + 5) % FR_MODULUS if self.claimed is None else self.claimed
        y = cs.alloc_input("y", out)
        lhs = LinearCombination.from_variable(x3) + xv + LinearCombination.constant(5)
        cs.enforce("output", lhs, cs.one, y)


@pytest.fixture(scope="module")
def cube_key(cpu):
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    return generate_parameters(matrices, seed=99)


def test_proof_verifies_with_ours_and_py_ecc(cpu, cube_key):
    result = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=1)
    assert result.public_inputs == [35]
    assert verify_proof(cube_key.vk, result.proof, [35]) == (True, "")
    vk_bytes, proof_bytes = cube_key.vk.to_bytes(), result.proof.to_bytes()
    assert py_ecc_oracle.verify(vk_bytes, proof_bytes, [35])
    ok, reason = verify_proof(cube_key.vk, result.proof, [36])
    assert not ok and "pairing" in reason
    assert not py_ecc_oracle.verify(vk_bytes, proof_bytes, [36])


def test_a_snarkjs_convention_key_proves_with_the_odd_coset_quotient(cpu, cube_key):
    """Roots from 5, one h point per domain point (odd Lagrange points of the 2m domain), dense
    a / b queries: the prover's snarkjs H makes proofs both verifiers accept."""
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    key = generate_parameters(matrices, seed=99, backend=cpu, convention=SNARKJS)
    assert key.dense_ab and len(key.a) == len(key.b_g2) == matrices.num_variables
    assert len(key.h) == SNARKJS.domain(matrices.num_constraints).size
    for batch, matrix in ((key.a, matrices.a), (key.b_g2, matrices.b)):  # unused: infinity
        assert np.array_equal(batch.infinity, ~query_density(matrix, matrices.num_variables))
    result = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(key, SNARKJS), seed=1)
    assert verify_proof(key.vk, result.proof, [35]) == (True, "")
    assert py_ecc_oracle.verify(key.vk.to_bytes(), result.proof.to_bytes(), [35])
    assert key.vk.to_bytes() != cube_key.vk.to_bytes()  # same toxic waste, another domain
    with pytest.raises(FormatError, match="h has 8 points, the circuit needs 7"):
        prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(key), seed=1)  # bellperson's H


def test_setup_through_the_cpu_backend_is_the_reference_key(cube_key):
    timer = Timer(level=0)
    backend = load_plugins().backend(load_profile("cpu"), timer)
    matrices = NativeCircuit(CubeCircuit(3)).assign(backend).matrices
    key = generate_parameters(matrices, seed=99, backend=backend)
    assert key.to_bytes() == cube_key.to_bytes()
    result = prove(backend, NativeCircuit(CubeCircuit(3)), LoadedKey(key), seed=1)
    assert verify_proof(key.vk, result.proof, [35]) == (True, "")
    steps = [s.name for s in timer.spans if s.name.startswith("setup_")]
    assert steps == [f"setup_{n}" for n in ("prepare", "qap", "h", "l", "a", "b_g1", "b_g2", "vk")]


def test_same_seed_same_bytes_other_seed_other_bytes(cpu, cube_key):
    def proof_bytes(seed):
        result = prove(cpu, NativeCircuit(CubeCircuit(5)), LoadedKey(cube_key), seed=seed)
        return result.proof.to_bytes()

    assert proof_bytes(7) == proof_bytes(7)
    assert proof_bytes(7) != proof_bytes(8)


def test_unsatisfied_witness_is_caught_before_msm(cpu, cube_key):
    with pytest.raises(UnsatisfiedWitness, match="constraint 2"):
        prove(cpu, NativeCircuit(CubeCircuit(3, claimed=36)), LoadedKey(cube_key))


def test_params_round_trip_and_bellperson_layout(tmp_path: Path, cube_key):
    path = tmp_path / "params.bin"
    files.write_params(path, cube_key)
    data = path.read_bytes()
    vk_len = 96 * 3 + 192 * 3 + 4 + 96 * len(cube_key.vk.ic)
    assert data[:vk_len] == cube_key.vk.to_bytes()
    assert int.from_bytes(data[vk_len : vk_len + 4], "big") == len(cube_key.h)
    loaded = files.read_params(path)
    for name in ("h", "l", "a", "b_g1", "b_g2"):
        assert getattr(loaded, name).equals(getattr(cube_key, name)), name
    assert loaded.vk.ic == cube_key.vk.ic


def test_density_leaves_out_unused_variables(cube_key):
    # z = [1, y, x, x2, x3, unused]: A uses 1, y (input rows), x, x2, x3; B uses 1, x
    assert len(cube_key.a) == 5
    assert len(cube_key.b_g1) == len(cube_key.b_g2) == 2
    assert len(cube_key.l) == 4


def test_truncated_params_name_the_section(tmp_path: Path, cube_key):
    path = tmp_path / "params.bin"
    files.write_params(path, cube_key)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(FormatError, match=r"params.bin: truncated: the b_g2 section"):
        files.read_params(path)
    with pytest.raises(FormatError, match="no such file"):
        files.read_params(tmp_path / "missing.bin")


def test_bulk_encoding_matches_per_point_encoding(rng):
    from cuzk_core.curve import serialize

    g1 = [*random_points("g1", rng, 3), None]
    g2 = [None, *random_points("g2", rng, 2)]
    g1_bytes = bulk.g1_batch_to_uncompressed(G1Affines.from_points(g1))
    g2_bytes = bulk.g2_batch_to_uncompressed(G2Affines.from_points(g2))
    assert g1_bytes == b"".join(serialize.g1_to_uncompressed(p) for p in g1)
    assert g2_bytes == b"".join(serialize.g2_to_uncompressed(p) for p in g2)
    assert bulk.g1_batch_from_uncompressed(g1_bytes).to_points() == g1
    assert bulk.g2_batch_from_uncompressed(g2_bytes).to_points() == g2


def test_bulk_decoding_rejects_off_curve_and_bad_flags(rng):
    points = G1Affines.from_points(random_points("g1", rng, 2))
    good = bytearray(bulk.g1_batch_to_uncompressed(points))
    off_curve = bytearray(good)
    off_curve[-1] ^= 1
    with pytest.raises(bulk.BulkDecodingError, match="G1 point 1: not on the curve"):
        bulk.g1_batch_from_uncompressed(bytes(off_curve))
    compressed_flag = bytearray(good)
    compressed_flag[0] |= 0x80
    with pytest.raises(bulk.BulkDecodingError, match="G1 point 0: bad flag bits"):
        bulk.g1_batch_from_uncompressed(bytes(compressed_flag))


def test_bulk_decoding_names_the_bad_point_past_the_first_chunk(rng):
    from cuzk_core.field.constants import FQ_MODULUS as Q
    from cuzk_core.interop.points import CHUNK_POINTS

    points = [*random_points("g1", rng, 7), None]
    batch = G1Affines.from_points(points * (CHUNK_POINTS // 8 + 2))
    assert bulk.g1_batch_from_uncompressed(bulk.g1_batch_to_uncompressed(batch)).equals(batch)
    # A curve point with a small x: written as x + q, it satisfies the equation mod q and only
    # the range check can catch it.
    x = next(x for x in range(1, 100) if pow(x**3 + 4, (Q - 1) // 2, Q) == 1)
    y = pow(x**3 + 4, (Q + 1) // 4, Q)
    bad = CHUNK_POINTS + 11
    raised = G1Affines.from_points([*batch.to_points()[:bad], (x + Q, y)])
    with pytest.raises(bulk.BulkDecodingError, match=f"G1 point {bad}: not on the curve"):
        bulk.g1_batch_from_uncompressed(bulk.g1_batch_to_uncompressed(raised))
    assert bulk.g1_batch_from_uncompressed(
        bulk.g1_batch_to_uncompressed(G1Affines.from_points([(x, y)]))
    ).to_points() == [(x, y)]
    g2 = G2Affines.from_points([None, *random_points("g2", rng, 2)] * 3)
    encoded = bytearray(bulk.g2_batch_to_uncompressed(g2))
    encoded[4 * 192 + 100] ^= 1
    with pytest.raises(bulk.BulkDecodingError, match="G2 point 4: not on the curve"):
        bulk.g2_batch_from_uncompressed(bytes(encoded))


def test_proof_bytes_are_192_and_round_trip(cpu, cube_key):
    proof = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=3).proof
    data = proof.to_bytes()
    assert len(data) == 192
    assert Proof.from_bytes(data) == proof
    assert np.frombuffer(data[:1], np.uint8)[0] & 0x80  # compressed flag set


@pytest.mark.parametrize("delta_tables", [False, True])
def test_host_work_in_the_backends_waits_gives_the_same_proof(cube_key, delta_tables):
    """The blinding terms run where an accelerated backend waits for its device (its MSMs call
    while_device_busy), in whatever steps its device allows, or on demand in assemble; each
    MSM leaves its own host part queued there, as the GPU backends do (a pending sum): the
    same proof bytes every way, with and without a resident key's δ tables."""
    pk = attrs.evolve(cube_key, vk=attrs.evolve(cube_key.vk))  # its own vk: tables go with it
    if delta_tables:
        keep_delta_tables(pk.vk)
    patterns = {"never": [False], "always": [True], "one step": [True, False], "alternate": None}
    proofs, steps = {}, {}
    for name, answers in patterns.items():
        backend = load_plugins().backend(load_profile("cpu"), Timer(level=0))
        backend.accelerated = True
        count = itertools.count()
        ran = steps[name] = []
        left: list = []  # MSM sums whose host part has not run

        def busy(answers=answers, count=count, ran=ran) -> bool:
            i = next(count)
            answer = answers[min(i, len(answers) - 1)] if answers else i % 2 == 0
            ran.append(answer)
            return answer

        def waiting(msm_pending, busy=busy, left=left):
            def msm_with_a_wait(*args):
                while_device_busy(busy)
                total = msm_pending(*args).result()
                work = host_work.current()
                assert work is not None  # the prover's

                def host_part():
                    left.remove(total)  # runs once, before the sum is used
                    yield
                    return total

                left.append(total)
                return work.submit_steps(host_part)

            return msm_with_a_wait

        backend.msm_g1_pending = waiting(backend.msm_g1_pending, left=left)
        backend.msm_g2_pending = waiting(backend.msm_g2_pending, left=left)
        result = prove(backend, NativeCircuit(CubeCircuit(3)), LoadedKey(pk), seed=4)
        proofs[name] = result.proof.to_bytes()
        assert left == []  # every MSM's host part ran, in the waits or on demand
    assert len(set(proofs.values())) == 1
    assert True in steps["always"] and True in steps["alternate"]  # steps ran in the waits
    assert not any(steps["never"])


def test_delta_tables_of_a_resident_key_give_the_same_proof(cpu, cube_key):
    """The blinding terms from a resident key's fixed-base δ tables: the same proof bytes
    (with the r, s of several seeds) as the plain scalar multiplications."""
    pk = attrs.evolve(cube_key, vk=attrs.evolve(cube_key.vk))  # its own vk: tables go with it
    plain = [
        prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(pk), seed=seed).proof.to_bytes()
        for seed in (1, 2, 3)
    ]
    keep_delta_tables(pk.vk)
    assert pk.vk in _DELTA_TABLES
    with_tables = [
        prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(pk), seed=seed).proof.to_bytes()
        for seed in (1, 2, 3)
    ]
    assert with_tables == plain


def test_query_scalars_gathered_in_advance_give_the_same_proof(cpu, cube_key):
    """The daemon's synthesis stage gathers the A and B query scalars (with_queries); the
    prover takes those instead of gathering again, with the same proof bytes."""
    assignment = evaluated(cpu, NativeCircuit(CubeCircuit(3)).assign(cpu))
    prepared = with_queries(cpu, assignment)
    a, b = prepared.queries
    assert not cube_key.dense_ab and len(a) < len(assignment.witness)  # the unused variable
    taken = _query_scalars(cpu, cube_key, prepared)
    assert taken[0] is a and taken[1] is b  # taken as they are, not gathered again
    gathered = _query_scalars(cpu, cube_key, assignment)
    assert np.array_equal(gathered[0], a) and np.array_equal(gathered[1], b)

    class Given:
        def assign(self, backend):
            return prepared

    with_given = prove(cpu, Given(), LoadedKey(cube_key), seed=5).proof.to_bytes()
    plain = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=5).proof.to_bytes()
    assert with_given == plain


def test_a_failing_phase_still_releases_the_uploads_and_unpins(cpu, cube_key, monkeypatch):
    released, unpinned = [], []
    monkeypatch.setattr(cpu, "release", lambda handle: released.append(handle))
    monkeypatch.setattr(cpu, "unpin", lambda handle: unpinned.append(handle))

    def msm_fails(*args, **kwargs):
        raise RuntimeError("device lost (test)")

    monkeypatch.setattr(cpu, "msm_g1_pending", msm_fails)
    with pytest.raises(RuntimeError, match="device lost"):
        prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=1)
    assert len(released) == 5 and len(unpinned) == 1  # h, a, b_g1, l, b_g2 and the pinning


def test_a_failing_upload_releases_the_uploads_before_it_and_unpins(cpu, cube_key, monkeypatch):
    released, unpinned, uploaded = [], [], []
    upload = cpu.upload

    def third_fails(points, purpose):
        if len(uploaded) == 2:
            raise RuntimeError("out of device memory (test)")
        uploaded.append(upload(points, purpose))
        return uploaded[-1]

    monkeypatch.setattr(cpu, "upload", third_fails)
    monkeypatch.setattr(cpu, "release", lambda handle: released.append(handle))
    monkeypatch.setattr(cpu, "unpin", lambda handle: unpinned.append(handle))
    with pytest.raises(RuntimeError, match="out of device memory"):
        prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=1)
    assert len(released) == 2 and all(r is u for r, u in zip(released, uploaded, strict=True))
    assert len(unpinned) == 1


@pytest.mark.parametrize("name", ["cpu", "fastcpu", "cupy", "pycuda"])
def test_setup_scalings_on_a_backend_are_field_products(name):
    """The QAP's scalings and powers through the backend's quotient hook: values·factor mod r
    on 0, 1, r − 1 and random values, factors 0, 1, r − 1 and a reduced multiple of r."""
    try:
        backend = subject(name).backend()
    except BackendUnavailable as exc:
        pytest.skip(str(exc))
    r = FR_MODULUS
    scale = _Scaler(backend)
    values = [0, 1, r - 1, 2, *(pow(7, k, r) for k in range(1, 12))]
    for factor in (0, 1, r - 1, 5 * r + 3, pow(3, 100, r)):
        got = limbs_to_ints(scale(ints_to_limbs(values), factor))
        assert got == [v * factor % r for v in values]
    for count in (0, 1, 2, 3, 5, 8, 13):
        assert limbs_to_ints(scale.powers(11, count)) == [pow(11, k, r) for k in range(count)]


class _KeptRows:
    """A product a backend kept where it made it: rows slice and have a length, but turning it
    into a host array (what the core must never do with one) fails the test."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, rows: slice) -> _KeptRows:
        return type(self)(self.rows[rows])

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("the core read a product the backend kept")


def _products_keeping_backend(calls: list[bool], kept: type[_KeptRows] = _KeptRows):
    """The cpu reference, plus a check and an H that take back the products it hands out as
    ``kept`` handles whenever the prover allows (``for_quotient``, recorded in ``calls``)."""

    def host(values):
        return values.rows if isinstance(values, _KeptRows) else values

    class KeepsProducts:
        @hookimpl
        def cuzk_evaluate_r1cs(self, ctx, matrices, witness, for_quotient):
            calls.append(for_quotient)
            products = reference.cuzk_evaluate_r1cs(ctx, matrices, witness, for_quotient)
            return tuple(kept(p) for p in products) if for_quotient else products

        @hookimpl
        def cuzk_first_unsatisfied(self, ctx, a, b, c):
            residue = reference.cuzk_quotient_pointwise(ctx, host(a), host(b), host(c), 1)
            failing = np.flatnonzero(np.any(residue != 0, axis=1))
            return int(failing[0]) if len(failing) else len(a)

        @hookimpl
        def cuzk_quotient_on_coset(self, ctx, a, b, c, domain, shift, scale, coefficients, for_msm):
            def on_coset(values):
                padded = np.zeros((domain.size, 4), dtype=np.uint64)
                padded[: len(values)] = host(values)
                return reference.cuzk_coset_ntt(
                    ctx, reference.cuzk_intt(ctx, padded, domain), domain, shift
                )

            quotient = reference.cuzk_quotient_pointwise(
                ctx, on_coset(a), on_coset(b), on_coset(c), scale
            )
            if coefficients:
                return reference.cuzk_coset_intt(ctx, quotient, domain, shift)
            return quotient

    for name in dir(reference):
        if name.startswith("cuzk_") and not hasattr(KeepsProducts, name):
            setattr(KeepsProducts, name, staticmethod(getattr(reference, name)))
    pm = backend_manager(KeepsProducts())
    return Backend(pm, BackendContext("cpu", load_profile("cpu"), Timer(level=0)))


class _KeptWitness:
    """A witness a backend kept where it made it: rows slice and have a length; only the rows
    below ``readable`` (the public inputs) may turn into a host array."""

    def __init__(self, rows: np.ndarray, readable: int, start: int = 0) -> None:
        self.rows, self.readable, self.start = rows, readable, start

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, rows: slice) -> _KeptWitness:
        start = self.start + range(len(self.rows))[rows].start
        return type(self)(self.rows[rows], self.readable, start)

    def __array__(self, dtype=None, copy=None):
        if self.start + len(self.rows) > self.readable:
            raise AssertionError("the core read more of a kept witness than its public inputs")
        return self.rows


def _witness_keeping_backend(calls: list[bool]):
    """The cpu reference, plus a witness hook that keeps z as a :class:`_KeptWitness` whenever
    the prover allows (``for_prover``, recorded in ``calls``), and the products, gathers and
    MSMs that take it back."""

    def host(values):
        return values.rows if isinstance(values, _KeptWitness) else values

    class KeepsWitness:
        @hookimpl
        def cuzk_witness(self, ctx, program, inputs, hints, for_prover):
            calls.append(for_prover)
            z = reference.cuzk_witness(ctx, program, inputs, hints)
            return _KeptWitness(z, program.num_inputs) if for_prover else z

        @hookimpl
        def cuzk_evaluate_r1cs(self, ctx, matrices, witness, for_quotient):
            return reference.cuzk_evaluate_r1cs(ctx, matrices, host(witness), for_quotient)

        @hookimpl
        def cuzk_gather_scalars(self, ctx, values, indices, label):
            return [host(values)[rows] for rows in indices]

        @hookimpl
        def cuzk_msm_g1(self, ctx, bases, scalars, window_bits, label):
            return reference.cuzk_msm_g1(ctx, bases, host(scalars), window_bits, label)

        @hookimpl
        def cuzk_msm_g2(self, ctx, bases, scalars, window_bits, label):
            return reference.cuzk_msm_g2(ctx, bases, host(scalars), window_bits, label)

    for name in dir(reference):
        if name.startswith("cuzk_") and not hasattr(KeepsWitness, name):
            setattr(KeepsWitness, name, staticmethod(getattr(reference, name)))
    pm = backend_manager(KeepsWitness())
    return Backend(pm, BackendContext("cpu", load_profile("cpu"), Timer(level=0)))


def test_a_witness_a_backend_keeps_reaches_only_its_own_hooks(cpu, cube_key):
    """A backend with its own products, gathers and MSMs is asked to keep a compiled circuit's
    witness (``for_prover``): the core reads only its public inputs, and the proof is the cpu
    backend's, bit for bit; an unsatisfied witness is still named. The cpu backend (the core
    gathers for it) and one whose B·G2 runs elsewhere are not asked."""
    calls: list[bool] = []
    keeping = _witness_keeping_backend(calls)
    assert keeps_witness(keeping) and not keeps_witness(cpu)
    for _ in range(2):  # the first proof of a shape may take the compile's own witness
        kept = prove(keeping, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=5)
    plain = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=5)
    assert calls and all(calls)
    assert kept.proof.to_bytes() == plain.proof.to_bytes()
    assert kept.public_inputs == plain.public_inputs == [35]
    with pytest.raises(UnsatisfiedWitness, match="constraint 2"):
        prove(keeping, NativeCircuit(CubeCircuit(3, claimed=36)), LoadedKey(cube_key))
    elsewhere = _witness_keeping_backend(calls)
    elsewhere.b_g2 = cpu
    assert not keeps_witness(elsewhere)


def test_products_a_backend_keeps_reach_only_its_check_and_h(cpu, cube_key):
    """A backend with its own witness check and H is asked to keep A·z, B·z, C·z
    (``for_quotient``): its handles go to those two hooks alone, and the proof is the cpu
    backend's, bit for bit; an unsatisfied witness is still named; setup asks for host
    arrays."""
    calls: list[bool] = []
    keeping = _products_keeping_backend(calls)
    kept = prove(keeping, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=5)
    plain = prove(cpu, NativeCircuit(CubeCircuit(3)), LoadedKey(cube_key), seed=5)
    assert calls == [True]
    assert kept.proof.to_bytes() == plain.proof.to_bytes()
    with pytest.raises(UnsatisfiedWitness, match="constraint 2"):
        prove(keeping, NativeCircuit(CubeCircuit(3, claimed=36)), LoadedKey(cube_key))
    calls.clear()
    matrices = NativeCircuit(CubeCircuit(3)).assign(cpu).matrices
    generate_parameters(matrices, seed=99, backend=keeping)
    assert calls == [False]
