"""Conformance checks: each hook of a backend against the CPU reference on small random and edge
inputs (scalars 0, 1, r−1, all-0/1 vectors, infinity, repeated and opposite points), and a
byte-identical proof for a fixed seed on a tiny circuit; and the helpers of the whole suite.

One list, :data:`CHECKS`, serves ``cuzk backends --check NAME`` and the pytest suite
(:mod:`cuzk_core.conformance.suite`) alike; the suite's larger tests use this module's checks and
comparisons too. Inputs come from :mod:`~cuzk_core.conformance.inputs`, drawn from
``check.rng(seed)``, so a seed replays a check wherever it runs. Sizes stay at 64 points or values
at most (257 fixed-base scalars) because the reference is plain Python. The reference itself is
held to the definitions in :mod:`~cuzk_core.conformance.oracles` (naive sums, one scalar
multiplication per point), not to itself.
"""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import numpy as np

from cuzk_core import fallbacks
from cuzk_core.backend import Backend
from cuzk_core.conformance.inputs import (
    GROUPS,
    POINT_KINDS,
    SCALAR_KINDS,
    SPECIAL_SCALARS,
    R,
    edge_points,
    random_points,
    random_r1cs,
    random_scalars,
    snarkjs_point_rows,
)
from cuzk_core.conformance.oracles import (
    fixed_base_by_definition,
    msm_by_definition,
    quotient_by_definition,
    r1cs_by_definition,
    transform_by_definition,
)
from cuzk_core.domain import BELLPERSON_GENERATOR, SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.fallbacks import reference_fixed_base_g1, reference_fixed_base_g2
from cuzk_core.gadgets.poseidon import PoseidonParams, poseidon_params
from cuzk_core.gadgets.poseidon.batch import PoseidonTable, poseidon_table
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.hookspecs import BackendInfo
from cuzk_core.interop.points import reference_decode
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.plugins import Plugins, load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, R1CSMatrices
from cuzk_core.timing import Timer

REFERENCE = "cpu"
"""The backend every other one is held to."""
PINNING = ("none", "register", "pool")
KEY_STORAGE = ("device", "host", "stream", "mmap")
MSM_PROFILES = {
    "signed": {},
    "split01": {"msm.split_01": True},
    "unsigned": {"msm.signed_digits": False},
}
"""Profile changes every edge-input MSM runs under: both digit encodings and the 0/1 split."""
REFERENCE_FIXED_BASE = {"g1": reference_fixed_base_g1, "g2": reference_fixed_base_g2}
NOT_IMPLEMENTED = "not implemented (optional hook)"
HOST_INPUT = 1 << 10
"""Largest MSM, NTT or vector the suite gives a backend that computes on the host: the
plain-Python reference must match it, on CI's two cores."""
DEVICE_INPUT = 1 << 16
"""Largest input the suite gives a backend on an accelerator (``BackendInfo.device``)."""


def largest_input(info: BackendInfo) -> int:
    """The largest MSM, NTT or vector the suite gives backend ``info``."""
    return DEVICE_INPUT if info.accelerated else HOST_INPUT


class CheckFailed(AssertionError):
    """A backend's answer differs from the reference's or breaks the hook contract."""


@attrs.frozen
class Subject:
    """The backend under test, by name, and the reference it must match."""

    name: str
    plugins: Plugins
    reference: Backend

    @property
    def is_reference(self) -> bool:
        """True when the backend under test is the reference: it is held to the definitions."""
        return self.name == REFERENCE

    def backend(self, **changes: Any) -> Backend:
        """The backend under test with profile ``changes`` (dotted keys: ``msm.split_01``)."""
        profile = load_profile(REFERENCE, {"backend": self.name, **changes})
        return self.plugins.backend(profile, Timer(level=0))


def subject(name: str, plugins: Plugins | None = None) -> Subject:
    """The subject for backend ``name``; BackendUnavailable when it or the reference can't run."""
    plugins = plugins if plugins is not None else load_plugins()
    plugins.backend(load_profile(REFERENCE, {"backend": name}))  # unknown, broken: fail now
    return Subject(name, plugins, plugins.backend(load_profile(REFERENCE), Timer(level=0)))


@attrs.frozen
class Check:
    """One check of one hook: ``run`` raises on a failure, or returns why it did not apply."""

    hook: str
    case: str
    run: Callable[[Subject, random.Random], str | None] = attrs.field(repr=False)

    @property
    def id(self) -> str:
        """``hook:case``, unique among the checks."""
        return f"{self.hook}:{self.case}"

    def rng(self, seed: int) -> random.Random:
        """This check's randomness under ``seed``, whichever checks ran before it."""
        return random.Random(f"{seed}:{self.id}")


@attrs.frozen
class Outcome:
    """How a check went: ``error`` (one line) when it failed, ``note`` when it did not apply."""

    check: Check
    error: str | None = None
    note: str | None = None


def run_check(check: Check, checked: Subject, seed: int) -> Outcome:
    """Run one check; any exception (a mismatch, a crash, a missing hook) is a failure."""
    try:
        note = check.run(checked, check.rng(seed))
    except Exception as exc:
        text = " ".join(str(exc).split())
        if not isinstance(exc, CheckFailed):
            text = f"{type(exc).__name__}: {text}"[:300]
        return Outcome(check, error=text)
    return Outcome(check, note=note)


# ---------------------------------------------------------------- the tiny circuit


class TinyCircuit:
    """Squarings of ``x`` with boolean bits beside them, and one public output."""

    name = "conformance-tiny"

    def __init__(self, x: int, steps: int) -> None:
        self.x, self.steps = x, steps

    def knobs(self) -> dict[str, int]:
        """The circuit's size knob."""
        return {"steps": self.steps}

    def public_inputs(self) -> list[int]:
        """The last square."""
        v = self.x
        for i in range(self.steps):
            v = (v * v + i) % R
        return [v]

    def synthesize(self, cs: ConstraintSystem) -> None:
        """``v_{i+1} = v_i² + i`` and ``bit_i·(1 − bit_i) = 0``, then ``out = v_steps``."""
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


class GadgetCircuit:
    """A random circuit built from every gadget: ``structure`` fixes which gadgets run on which
    operands (the shape), ``values`` the inputs and hints (the instance)."""

    name = "conformance-gadgets"

    def __init__(self, structure: int, values: int, steps: int = 12) -> None:
        self.structure, self.values, self.steps = structure, values, steps

    def knobs(self) -> dict[str, int]:
        """Structure, values and length."""
        return {"structure": self.structure, "values": self.values, "steps": self.steps}

    def shape(self) -> dict[str, int]:
        """The values do not change the constraints."""
        return {"structure": self.structure, "steps": self.steps}

    def public_inputs(self) -> list[int]:
        """Two inputs drawn from the value seed."""
        rng = random.Random(f"values {self.values}")
        return [rng.choice([0, 1, R - 1, rng.randrange(R)]) for _ in range(2)]

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Inputs and hints, then ``steps`` random gadget calls on what came before."""
        from cuzk_core.gadgets.bits import to_bits_le
        from cuzk_core.gadgets.boolean import AllocatedBit
        from cuzk_core.gadgets.merkle import verify_merkle_path
        from cuzk_core.gadgets.num import (
            AllocatedNum,
            Num,
            conditional_swap,
            enforce_equal,
            select,
        )
        from cuzk_core.gadgets.poseidon import poseidon_hash2_gadget

        shape, vals = random.Random(f"structure {self.structure}"), random.Random(f"v{self.values}")
        nums: list[AllocatedNum | Num] = [
            AllocatedNum.alloc_input(cs, f"in {i}", v) for i, v in enumerate(self.public_inputs())
        ]
        nums += [
            AllocatedNum.alloc(cs, f"hint {i}", vals.choice([0, 1, R - 1, vals.randrange(R)]))
            for i in range(3)
        ]
        bits = [AllocatedBit.alloc(cs, f"hint bit {i}", vals.randrange(2)) for i in range(2)]
        for step in range(self.steps):
            pick = shape.choice
            with cs.namespace(f"step {step}"):
                op = pick(
                    ("mul", "square", "and", "xor", "swap", "select", "bits", "hash", "path", "sum")
                )
                x, y, bit = pick(nums), pick(nums), pick(bits)
                if op == "mul":
                    nums.append(pick([n for n in nums if isinstance(n, AllocatedNum)]).mul(cs, y))
                elif op == "square":
                    nums.append(pick([n for n in nums if isinstance(n, AllocatedNum)]).square(cs))
                elif op == "and":
                    bits.append(bit.and_(cs, pick(bits)))
                elif op == "xor":
                    bits.append(bit.xor(cs, pick(bits)))
                elif op == "swap":
                    nums.extend(conditional_swap(cs, x, y, bit))
                elif op == "select":
                    nums.append(select(cs, bit, x, y))
                elif op == "bits":  # a value too wide for n_bits gets its low bits
                    bits.extend(to_bits_le(cs, x, pick((1, 2, 8, 254))))
                elif op == "hash":
                    nums.append(poseidon_hash2_gadget(cs, x, y))
                elif op == "path":
                    siblings = [
                        AllocatedNum.alloc(cs, f"sibling {i}", vals.randrange(R)) for i in range(2)
                    ]
                    nums.append(
                        verify_merkle_path(
                            cs, x, siblings, [bit, pick(bits)], poseidon_hash2_gadget
                        )
                    )
                else:
                    nums.append(Num(x.lc + y.lc + 7, (x.value + y.value + 7) % R))
        enforce_equal(cs, "last", nums[-1], nums[-1])


# ---------------------------------------------------------------- definitions


def expected(
    checked: Subject, from_reference: Callable[[Backend], Any], by_definition: Callable[[], Any]
) -> Any:
    """What a hook must return: the reference's answer, or the definition's for the reference."""
    return by_definition() if checked.is_reference else from_reference(checked.reference)


def expected_msm(
    checked: Subject, group: str, points: list, scalars: list[int]
) -> G1Affines | G2Affines:
    """The MSM a backend must return: the reference's, or the plain sum for the reference."""
    batch = GROUPS[group][2]
    return expected(
        checked,
        lambda reference: _msm(reference, group, batch.from_points(points), ints_to_limbs(scalars)),
        lambda: batch.from_points([msm_by_definition(group, points, scalars)]),
    )


# ---------------------------------------------------------------- comparisons


def _kind(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__}" + (f" {value.dtype} {shape}" if shape is not None else "")


def _hex(row: np.ndarray) -> str:
    return hex(limbs_to_ints(np.asarray(row, dtype=np.uint64).reshape(1, -1))[0])


def same_scalars(got: Any, want: np.ndarray, what: str) -> None:
    """``got`` is a uint64 array of the reference's shape and values."""
    if not isinstance(got, np.ndarray) or got.dtype != np.uint64 or got.shape != want.shape:
        raise CheckFailed(f"{what}: returned {_kind(got)}, expected uint64 {want.shape}")
    if not np.array_equal(got, want):
        row = int(np.nonzero((got != want).reshape(len(want), -1).any(axis=1))[0][0])
        raise CheckFailed(
            f"{what}: row {row} is {_hex(got[row])}, the reference gives {_hex(want[row])}"
        )


def _point(batch: G1Affines | G2Affines) -> str:
    if batch.infinity[0]:
        return "infinity" if not batch.coords.any() else "infinity with nonzero coordinates"
    return f"x = {_hex(batch.coords[0].reshape(-1, 6)[0])[:18]}…"


def same_point(got: Any, want: G1Affines | G2Affines, what: str) -> None:
    """``got`` is a one-point batch of the reference's type, equal to it in every limb."""
    if not isinstance(got, type(want)) or len(got) != 1:
        raise CheckFailed(f"{what}: returned {_kind(got)}, expected one {type(want).__name__}")
    if not got.equals(want):
        raise CheckFailed(f"{what}: {_point(got)}, the reference gives {_point(want)}")


def unchanged(arrays: list[np.ndarray], copies: list[np.ndarray], what: str) -> None:
    """The hook left its input arrays as they were."""
    if not all(np.array_equal(a, c) for a, c in zip(arrays, copies, strict=True)):
        raise CheckFailed(f"{what} modified its input")


def _short(value: int) -> str:
    return str(value) if value < 1 << 16 else f"{value:#x}"[:12] + "…"


def _changes(changes: dict[str, Any]) -> str:
    return "".join(f", {key}={value}" for key, value in changes.items())


# ---------------------------------------------------------------- backend info and memory


def _backend_info(checked: Subject, rng: random.Random) -> None:
    info = checked.plugins.backends[checked.name]
    if info.name != checked.name or not isinstance(info.version, str) or not info.version:
        raise CheckFailed(f"cuzk_backend_info says name {info.name!r}, version {info.version!r}")


def _memory(pinning: str) -> dict[str, Any]:
    return {"memory.pinning": pinning, "memory.pool_mib": 4}


def _alloc_host(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    for shape in ((1, 4), (257, 4), (3, 2, 6)):
        buffer = backend.alloc_host(shape, "uint64", "conformance")
        if not isinstance(buffer, np.ndarray) or buffer.shape != shape or buffer.dtype != np.uint64:
            raise CheckFailed(f"alloc_host({shape}, 'uint64') returned {_kind(buffer)}")
        if buffer.any():
            raise CheckFailed(f"alloc_host({shape}) is not zeroed")
        buffer[...] = 7
        if not (buffer == 7).all():
            raise CheckFailed(f"alloc_host({shape}) does not keep what is written to it")
        backend.release(buffer)


def _host_arrays(
    checked: Subject, group: str, rng: random.Random
) -> tuple[G1Affines | G2Affines, np.ndarray, G1Affines | G2Affines]:
    """16 random bases and scalars as host arrays, and the MSM they must give."""
    points, scalars = random_points(group, rng, 16), random_scalars(rng, 16)
    bases = GROUPS[group][2].from_points(points)
    return bases, ints_to_limbs(scalars), expected_msm(checked, group, points, scalars)


def _pin(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    points, scalars = G1Affines.from_points(random_points("g1", rng, 16)), random_scalars(rng, 16)
    buffer = backend.alloc_host((64,), "uint64", "conformance")
    buffer[:] = 7
    arrays = [points.coords, ints_to_limbs(scalars), buffer]
    copies = [a.copy() for a in arrays]
    handle = backend.pin(arrays, "params")
    if handle is None:
        raise CheckFailed("pin returned None, not a handle")
    unchanged(arrays, copies, "pin")
    backend.unpin(handle)
    unchanged(arrays, copies, "unpin")
    backend.release(buffer)


def _unpin(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    bases, scalars, want = _host_arrays(checked, "g1", rng)
    backend.unpin(backend.pin([bases.coords, scalars], "params"))
    same_point(backend.msm_g1(bases, scalars, "a"), want, "G1 MSM on arrays pinned and unpinned")


STREAM_BUDGET_KIB = 1
"""A device budget that streams the 16 test bases in chunks of 5 G1 / 2 G2 points (GPU)."""


def _upload(
    storage: str,
    pinning: str,
    checked: Subject,
    rng: random.Random,
    budget_kib: int | None = None,
) -> None:
    changes = {"memory.key_storage": storage, **_memory(pinning), "memory.pool_mib": 1}
    if budget_kib is not None:
        changes["memory.device_budget_kib"] = budget_kib
    backend = checked.backend(**changes)
    for group, purpose in (("g1", "a"), ("g2", "b_g2")):
        bases, scalars, want = _host_arrays(checked, group, rng)
        pinned = backend.pin([bases.coords, scalars], "params")
        handle = backend.upload(bases, purpose)
        for window_bits in (None, 4):
            got = _msm(backend, group, handle, scalars, window_bits)
            same_point(got, want, f"{group} MSM on uploaded bases, window_bits={window_bits}")
        backend.release(handle)
        backend.unpin(pinned)


def _window_tables(bits: int, pinning: str, checked: Subject, rng: random.Random) -> None:
    """Resident bases with window tables (``msm.table_bits.*``): MSMs over them give the
    reference's sums for every scalar kind and edge point, with signed and unsigned digits and
    the 0/1 split; the same batch then gives them again without tables."""
    memory = {"memory.key_storage": "device", **_memory(pinning)}
    variants: tuple[dict[str, Any], ...] = (
        {},
        {"msm.signed_digits": False},
        {"msm.split_01": True},
    )
    for group, purpose in (("g1", "a"), ("g2", "b_g2")):
        n = 48 if group == "g1" else 24
        kinds = ("random", "zeros", "ones", "r-1", "bits", "mixed")
        cases = [(random_points(group, rng, n), SCALAR_KINDS[kind](rng, n)) for kind in kinds]
        cases.append((edge_points(group, "mixed", rng, n), SCALAR_KINDS["mixed"](rng, n)))
        for points, scalars in cases:
            bases = GROUPS[group][2].from_points(points)
            limbs = ints_to_limbs(scalars)
            want = expected_msm(checked, group, points, scalars)
            for variant in ({f"msm.table_bits.{purpose}": bits, **v} for v in variants):
                backend = checked.backend(**memory, **variant)
                got = _msm(backend, group, backend.upload(bases, purpose), limbs)
                same_point(got, want, f"{n} {group} points, {_changes(variant)[2:]}")
            plain = checked.backend(**memory)
            got = _msm(plain, group, plain.upload(bases, purpose), limbs)
            same_point(got, want, f"{n} {group} points, after a table of {bits} bits")


def _release(checked: Subject, rng: random.Random) -> None:
    for storage in KEY_STORAGE:
        backend = checked.backend(**{"memory.key_storage": storage})
        bases, scalars, want = _host_arrays(checked, "g1", rng)
        backend.release(backend.upload(bases, "a"))
        handle = backend.upload(bases, "a")
        same_point(backend.msm_g1(handle, scalars, "a"), want, f"upload after a release, {storage}")
        backend.release(handle)
        backend.release(backend.alloc_host((8, 4), "uint64", "conformance"))


# ---------------------------------------------------------------- synthesis


def _same_matrices(got: R1CSMatrices, want: R1CSMatrices, what: str) -> None:
    for size in ("num_inputs", "num_aux", "num_constraints"):
        if getattr(got, size) != getattr(want, size):
            raise CheckFailed(f"{what}: {size} is {getattr(got, size)}, not {getattr(want, size)}")
    for name in ("a", "b", "c"):
        mine, theirs = getattr(got, name), getattr(want, name)
        for part in ("indptr", "cols", "coeffs"):
            if not np.array_equal(getattr(mine, part), getattr(theirs, part)):
                raise CheckFailed(f"{what}: matrix {name.upper()} differs in {part}")


def _synthesize(checked: Subject, rng: random.Random) -> None:
    backend = checked.backend()
    for x in (0, 1, R - 1, rng.randrange(R)):
        circuit = TinyCircuit(x, steps=5)
        got, want = backend.synthesize(circuit), checked.reference.synthesize(circuit)
        _same_matrices(got.matrices, want.matrices, f"x={_short(x)}")
        same_scalars(got.witness, want.witness, f"witness for x={_short(x)}")
        z = limbs_to_ints(got.witness)
        a, b, c = r1cs_by_definition(got.matrices, z)
        for row, (ai, bi, ci) in enumerate(zip(a, b, c, strict=True)):
            if ai * bi % R != ci:
                raise CheckFailed(f"x={_short(x)}: the witness breaks constraint {row}")


def check_evaluate_r1cs(checked: Subject, matrices: R1CSMatrices, witness: list[int]) -> None:
    """``A·z, B·z, C·z`` are the reference's (the definition's for the reference itself)."""
    z = ints_to_limbs(witness)
    copy = z.copy()
    got = checked.backend().evaluate_r1cs(matrices, z)
    want = expected(
        checked,
        lambda reference: reference.evaluate_r1cs(matrices, z),
        lambda: tuple(ints_to_limbs(v) for v in r1cs_by_definition(matrices, witness)),
    )
    if not isinstance(got, tuple) or len(got) != 3:
        raise CheckFailed(f"returned {_kind(got)}, expected a tuple (a, b, c)")
    size = f"{matrices.num_constraints}×{matrices.a.num_cols}"
    for name, mine, theirs in zip("abc", got, want, strict=True):
        same_scalars(mine, theirs, f"{size}, {name}")
    unchanged([z], [copy], "evaluate_r1cs")


def _evaluate_r1cs(kind: str, checked: Subject, rng: random.Random) -> None:
    for rows, cols in ((1, 2), (16, 9), (64, 40)):
        witness = [1, *SCALAR_KINDS[kind](rng, cols - 1)]
        check_evaluate_r1cs(checked, random_r1cs(rng, rows, cols), witness)


# ---------------------------------------------------------------- NTT and the quotient step

NTT_HOOKS = ("cuzk_ntt", "cuzk_intt", "cuzk_coset_ntt", "cuzk_coset_intt")
NTT_KINDS = ("random", "zeros", "ones", "r-1", "one-hot")


def check_transform(
    checked: Subject,
    method: str,
    values: list[int],
    domain: EvaluationDomain,
    shift: int | None = None,
    rows: list[int] | None = None,
) -> None:
    """NTT ``method`` is the reference's (the definition's at ``rows`` for the reference itself)."""
    limbs = ints_to_limbs(values)
    copy = limbs.copy()
    args = (limbs, domain) if shift is None else (limbs, domain, shift)
    got = getattr(checked.backend(), method)(*args)
    what = f"{method} n={domain.size}, generator {domain.generator}"
    what += f", shift {_short(shift)}" if shift is not None else ""
    if checked.is_reference:
        rows = list(range(domain.size)) if rows is None else rows
        want = ints_to_limbs(transform_by_definition(method, values, domain, shift, rows))
        same_scalars(got[rows] if isinstance(got, np.ndarray) else got, want, what)
    else:
        same_scalars(got, getattr(checked.reference, method)(*args), what)
    if np.shares_memory(got, limbs):
        raise CheckFailed(f"{what}: returned a view of its input, not a new array")
    unchanged([limbs], [copy], method)


def _ntt(hook: str, kind: str, checked: Subject, rng: random.Random) -> None:
    method = hook.removeprefix("cuzk_")
    for log_n in (0, 1, 2, 3, 6):
        for generator in (BELLPERSON_GENERATOR, SNARKJS_GENERATOR):
            domain = EvaluationDomain(log_n, generator)
            values = SCALAR_KINDS[kind](rng, domain.size)
            shifts: tuple[int | None, ...] = (None,)
            if "coset" in hook:  # bellperson's 7, snarkjs's ω_2n, anything else
                omega_2n = EvaluationDomain(log_n + 1, generator).omega
                shifts = (7, omega_2n, rng.randrange(1, R))
            for shift in shifts:
                check_transform(checked, method, values, domain, shift)


def check_quotient(checked: Subject, a: list[int], b: list[int], c: list[int], scale: int) -> None:
    """``(a·b − c)·scale`` is the reference's (the definition's for the reference itself)."""
    a_limbs, b_limbs, c_limbs = limbs = [ints_to_limbs(v) for v in (a, b, c)]
    copies = [v.copy() for v in limbs]
    got = checked.backend().quotient_pointwise(a_limbs, b_limbs, c_limbs, scale)
    want = expected(
        checked,
        lambda reference: reference.quotient_pointwise(a_limbs, b_limbs, c_limbs, scale),
        lambda: ints_to_limbs(quotient_by_definition(a, b, c, scale)),
    )
    same_scalars(got, want, f"n={len(a)}, scale {_short(scale)}")
    unchanged(limbs, copies, "quotient_pointwise")


def _quotient(kind: str, checked: Subject, rng: random.Random) -> None:
    for n in (1, 3, 64):
        a, b = SCALAR_KINDS[kind](rng, n), random_scalars(rng, n)
        c = SCALAR_KINDS["mixed"](rng, n)
        for scale in (0, 1, R - 1, rng.randrange(R)):
            check_quotient(checked, a, b, c, scale)


def _check_msm_scalars(
    checked: Subject, backend: Backend, got: Any, want: np.ndarray, what: str
) -> None:
    """``got`` holds the scalars ``want``: as a host array, or as a handle whose host copy
    (``np.asarray``) and MSMs (G1 over all and over its last rows, G2 over all) agree."""
    if isinstance(got, np.ndarray):
        same_scalars(got, want, what)
        return
    same_scalars(np.asarray(got), want, f"{what}, its host copy")
    rng = random.Random(len(want))
    for group, rows in (
        ("g1", slice(None)),
        ("g1", slice(len(want) // 2, None)),
        ("g2", slice(None)),
    ):
        taken = want[rows]
        if not len(taken):
            continue
        points = random_points(group, rng, len(taken))
        expect = expected_msm(checked, group, points, limbs_to_ints(taken))
        bases = GROUPS[group][2].from_points(points)
        same_point(_msm(backend, group, bases, got[rows]), expect, f"{what}: an MSM over it")


def _quotient_on_coset(coefficients: bool, checked: Subject, rng: random.Random) -> str | None:
    """H in one call equals the reference's composition of the transforms, for short and full
    rows, both root conventions and their cosets; asked for an MSM's scalars, the result (a
    host array or the backend's handle) holds the same values."""
    backend = checked.backend()
    if not backend.implements("cuzk_quotient_on_coset"):
        return NOT_IMPLEMENTED
    for log_n in (1, 2, 6):
        for generator in (BELLPERSON_GENERATOR, SNARKJS_GENERATOR):
            domain = EvaluationDomain(log_n, generator)
            omega_2n = EvaluationDomain(log_n + 1, generator).omega
            for rows in sorted({1, domain.size - 1, domain.size}):
                a, b, c = (
                    ints_to_limbs(SCALAR_KINDS[kind](rng, rows))
                    for kind in ("mixed", "random", "r-1")
                )
                copies = [v.copy() for v in (a, b, c)]
                for shift in (generator, omega_2n):
                    scale = rng.choice([1, rng.randrange(R)])
                    got = backend.quotient_on_coset(a, b, c, domain, shift, scale, coefficients)
                    want = checked.reference.quotient_on_coset(
                        a, b, c, domain, shift, scale, coefficients
                    )
                    what = f"2^{log_n} (generator {generator}), {rows} rows, shift {_short(shift)}"
                    same_scalars(got, want, what)
                    handle = backend.quotient_on_coset(
                        a, b, c, domain, shift, scale, coefficients, for_msm=True
                    )
                    _check_msm_scalars(checked, backend, handle, want, f"{what}, for an MSM")
                unchanged([a, b, c], copies, "quotient_on_coset")
    return None


FIRST_UNSATISFIED_CASES: dict[str, Callable[[random.Random, int], list[int]]] = {
    "all-hold": lambda rng, n: [],
    "first-row": lambda rng, n: [0],
    "last-row": lambda rng, n: [n - 1],
    "one-random-row": lambda rng, n: [rng.randrange(n)],
    "many-rows": lambda rng, n: rng.sample(range(n), max(1, n // 3)),
}
"""Which rows of a satisfied ``(a, b, c)`` a witness-check case breaks."""


def _first_unsatisfied(case: str, checked: Subject, rng: random.Random) -> str | None:
    """The backend's witness check names the first row with a·b ≠ c, or none."""
    backend = checked.backend()
    if not backend.implements("cuzk_first_unsatisfied"):
        return NOT_IMPLEMENTED
    for n in (1, 3, 64, 1000):
        a, b = SCALAR_KINDS["mixed"](rng, n), random_scalars(rng, n)
        c = [x * y % R for x, y in zip(a, b, strict=True)]
        broken = FIRST_UNSATISFIED_CASES[case](rng, n)
        for row in broken:
            c[row] = (c[row] + rng.randrange(1, R)) % R
        limbs = [ints_to_limbs(v) for v in (a, b, c)]
        copies = [v.copy() for v in limbs]
        got = backend.first_unsatisfied(*limbs)
        want = min(broken) if broken else None
        if got != want:
            raise CheckFailed(f"n={n}, rows {sorted(broken)[:4]} broken: got {got}, want {want}")
        unchanged(limbs, copies, "first_unsatisfied")
    return None


# ---------------------------------------------------------------- MSM


def _msm(
    backend: Backend, group: str, bases: Any, scalars: np.ndarray, window_bits: int | None = None
) -> G1Affines | G2Affines:
    call = backend.msm_g1 if group == "g1" else backend.msm_g2
    return call(bases, scalars, "conformance", window_bits)


def check_msm(
    checked: Subject,
    group: str,
    points: list,
    scalars: list[int],
    profiles: tuple[dict[str, Any], ...] = ({},),
    windows: tuple[int | None, ...] = (None,),
    want: G1Affines | G2Affines | None = None,
) -> None:
    """The MSM is ``want`` (by default :func:`expected_msm`) under each profile and window."""
    bases = GROUPS[group][2].from_points(points)
    limbs = ints_to_limbs(scalars)
    inputs = [bases.coords, bases.infinity, limbs]
    copies = [a.copy() for a in inputs]
    if want is None:
        want = expected_msm(checked, group, points, scalars)
    for changes in profiles:
        backend = checked.backend(**changes)
        for window_bits in windows:
            what = f"{len(points)} points, window_bits={window_bits}{_changes(changes)}"
            same_point(_msm(backend, group, bases, limbs, window_bits), want, what)
    unchanged(inputs, copies, f"msm_{group}")


def _msm_random(group: str, n: int, checked: Subject, rng: random.Random) -> None:
    points, scalars = random_points(group, rng, n), random_scalars(rng, n)
    check_msm(checked, group, points, scalars, windows=(None, 4, 9))


def _msm_scalars(
    group: str, kind: str, changes: dict[str, Any], checked: Subject, rng: random.Random
) -> None:
    n = 64 if group == "g1" else 32
    points = random_points(group, rng, n)
    check_msm(checked, group, points, SCALAR_KINDS[kind](rng, n), (changes,), (None, 4))


def _msm_points(
    group: str, kind: str, changes: dict[str, Any], checked: Subject, rng: random.Random
) -> None:
    n = 64 if group == "g1" else 32
    points = edge_points(group, kind, rng, n)
    for scalars in (SCALAR_KINDS["mixed"](rng, n), [1] * n):
        check_msm(checked, group, points, scalars, (changes,), (None, 4))


def _index_patterns(rng: random.Random, n: int) -> list[np.ndarray]:
    """None, the first, the last, all, a sorted subset, random ones repeating, and one
    read-only array given twice (a key's query indices: a device may keep its copy)."""
    shared = np.array(sorted(rng.sample(range(n), max(1, n // 2))), dtype=np.int64)
    shared.flags.writeable = False
    patterns = [np.zeros(0, np.int64), np.array([0]), np.array([n - 1]), np.arange(n)]
    patterns.append(np.array(sorted(rng.sample(range(n), max(1, n // 3))), dtype=np.int64))
    patterns.append(np.array([rng.randrange(n) for _ in range(2 * n)], dtype=np.int64))
    return [*patterns, shared, shared]


def _gather_scalars(checked: Subject, rng: random.Random) -> str | None:
    """Rows of host scalars, of R1CS products and of a witness the backend returned (which a
    device backend gathers where it holds them), for every index pattern: numpy's take. A
    handle (not a host array) is checked through its host copy and the MSMs that take it."""
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.replay import replay

    backend = checked.backend()
    if not backend.implements("cuzk_gather_scalars"):
        return NOT_IMPLEMENTED
    sources = {"host scalars": ints_to_limbs(SCALAR_KINDS["mixed"](rng, 37))}
    witness = [1, *random_scalars(rng, 39)]
    sources["products"] = backend.evaluate_r1cs(random_r1cs(rng, 41, 40), ints_to_limbs(witness))[0]
    circuit = COMPILED_CIRCUITS["porep-lite-2x3"](rng)
    compiled, _ = compile_circuit(checked.reference, circuit(0), use_cache=False)
    assert compiled.program is not None, compiled.problem
    sources["witness"] = backend.witness(compiled.program, *replay(circuit(1), compiled.program))
    sources["rows of the witness"] = sources["witness"][3:]  # a view, as the L query takes
    for name, values in sources.items():
        copy = values.copy()
        patterns = _index_patterns(rng, len(values))
        gathered = backend.gather_scalars(values, patterns, "conformance")
        if len(gathered) != len(patterns):
            raise CheckFailed(f"{name}: {len(gathered)} results for {len(patterns)} index arrays")
        for rows, got in zip(patterns, gathered, strict=True):
            want = np.take(values, rows, axis=0)
            what = f"{len(rows)} rows of {len(values)} {name}"
            if len(got) != len(rows):
                raise CheckFailed(f"{what}: {len(got)} scalars")
            _check_msm_scalars(checked, backend, got, want, what)
        unchanged([values], [copy], "gather_scalars")
    return None


# ---------------------------------------------------------------- fixed base (optional hooks)


def same_points(got: Any, want: G1Affines | G2Affines, what: str) -> None:
    """``got`` is a batch of the reference's type and length, equal to it in every limb."""
    if not isinstance(got, type(want)) or len(got) != len(want):
        raise CheckFailed(f"{what}: returned {_kind(got)}, expected {len(want)} points")
    if not got.equals(want):
        differs = (got.coords != want.coords).reshape(len(want), -1).any(axis=1)
        row = int(np.nonzero(differs | (got.infinity != want.infinity))[0][0])
        raise CheckFailed(
            f"{what}: point {row} is {_point(got[row : row + 1])}, the reference "
            f"gives {_point(want[row : row + 1])}"
        )


def check_fixed_base(checked: Subject, group: str, base: Any, scalars: list[int]) -> str | None:
    """The backend's fixed-base hook gives the reference's points (the definition's for the
    reference itself); :data:`NOT_IMPLEMENTED` when the backend leaves the hook out."""
    backend = checked.backend()
    limbs = ints_to_limbs(scalars)
    copy = limbs.copy()
    hook = f"cuzk_fixed_base_{group}"
    if not backend.implements(hook):
        return NOT_IMPLEMENTED
    got = getattr(backend, f"fixed_base_{group}")(base, limbs)
    want = expected(
        checked,
        lambda reference: REFERENCE_FIXED_BASE[group](base, limbs),
        lambda: GROUPS[group][2].from_points(fixed_base_by_definition(group, base, scalars)),
    )
    where = (
        "infinity" if base is None else f"x = {_short(base[0] if group == 'g1' else base[0][0])}"
    )
    same_points(got, want, f"{len(scalars)} scalars, base {where}")
    unchanged([limbs], [copy], f"fixed_base_{group}")
    return None


def _fixed_base_random(group: str, checked: Subject, rng: random.Random) -> str | None:
    generator = GROUPS[group][1]
    for n in (1, 3, 257):
        if check_fixed_base(checked, group, generator, random_scalars(rng, n)) is not None:
            return NOT_IMPLEMENTED
    return None


def _fixed_base_edges(group: str, checked: Subject, rng: random.Random) -> str | None:
    """0, 1, r−1 and the other special scalars, repeated, on G and on another point; no
    scalars; and the base at infinity."""
    edges = [*SPECIAL_SCALARS, *SPECIAL_SCALARS[::-1], rng.randrange(R), 0, 0]
    other = random_points(group, rng, 1)[0]
    for base, scalars in ((GROUPS[group][1], edges), (other, edges), (other, []), (None, edges)):
        if check_fixed_base(checked, group, base, scalars) is not None:
            return NOT_IMPLEMENTED
    return None


def _decode_snarkjs_points(group: str, checked: Subject, rng: random.Random) -> str | None:
    """A zkey's points, random and every edge (infinity, off the subgroup, coordinates at and
    above q, off the curve), and none at all: the reference's batch and status, point by point."""
    backend = checked.backend()
    if not backend.implements("cuzk_decode_snarkjs_points"):
        return NOT_IMPLEMENTED
    for n in (0, 3, 64):
        rows = snarkjs_point_rows(group, rng, n)
        for raw in (rows, rows[:0]) if n == 0 else (rows,):
            copy = raw.copy()
            got = backend.decode_snarkjs_points(raw, group)
            want, want_status = reference_decode(raw, group)
            if not isinstance(got, tuple) or len(got) != 2:
                raise CheckFailed(f"returned {_kind(got)}, expected (batch, status)")
            same_points(got[0], want, f"{len(raw)} {group} points")
            status = np.asarray(got[1])
            if status.shape != want_status.shape or not np.array_equal(status, want_status):
                raise CheckFailed(
                    f"{len(raw)} points: status {status}, the reference {want_status}"
                )
            unchanged([raw], [copy], "decode_snarkjs_points")
    return None


POSEIDON_WIDTHS = {3: 57, 5: 60}
"""Widths the Poseidon check permutes at, with their R_P: the 2-to-1 hash's, and a wider one."""


def poseidon_by_definition(state: list[int], params: PoseidonParams) -> list[int]:
    """The permutation as the paper writes it: per round, add the constants, apply x^5 to
    every lane (full rounds) or lane 0 (partial), multiply by the MDS matrix."""
    p = params.modulus
    for r, constants in enumerate(params.round_constants):
        state = [(x + c) % p for x, c in zip(state, constants, strict=True)]
        full = params.is_full_round(r)
        state = [pow(x, 5, p) if full or i == 0 else x for i, x in enumerate(state)]
        state = [sum(m * x for m, x in zip(row, state, strict=True)) % p for row in params.mds]
    return state


def check_poseidon(checked: Subject, table: PoseidonTable, values: list[int]) -> None:
    """The backend permutes ``values`` (t per state) as the reference does (as the definition
    does, for the reference itself) and leaves its input alone."""
    backend, t = checked.backend(), table.t
    states = ints_to_limbs(values).reshape(-1, t, 4)
    copy = states.copy()
    got = backend.poseidon(states, table)
    want = expected(
        checked,
        lambda reference: reference.poseidon(states, table),
        lambda: ints_to_limbs(
            [
                x
                for k in range(0, len(values), t)
                for x in poseidon_by_definition(values[k : k + t], table.params)
            ]
        ).reshape(-1, t, 4),
    )
    if not isinstance(got, np.ndarray) or got.shape != want.shape:
        raise CheckFailed(f"t = {t}: returned {_kind(got)}, expected uint64 {want.shape}")
    same_scalars(got.reshape(-1, 4), want.reshape(-1, 4), f"{len(states)} states, t = {t}")
    unchanged([states], [copy], "poseidon")


def _poseidon(case: str, checked: Subject, rng: random.Random) -> str | None:
    """Random states (and none at all), or every lane 0, 1, r−1 and the other special values,
    at each width of :data:`POSEIDON_WIDTHS`."""
    if not checked.backend().implements("cuzk_poseidon"):
        return NOT_IMPLEMENTED
    for t, r_p in POSEIDON_WIDTHS.items():
        table = poseidon_table(poseidon_params(t, 8, r_p))
        if case == "random":
            batches = [random_scalars(rng, t * 67), []]
        else:
            specials = [*SPECIAL_SCALARS, rng.randrange(R)]
            rotated = [
                specials[(i + lane) % len(specials)]
                for i in range(len(specials))
                for lane in range(t)
            ]
            batches = [rotated, [v for v in specials for _ in range(t)]]  # then repeated lanes
        for values in batches:
            check_poseidon(checked, table, values)
    return None


def _poseidon_layers(checked: Subject, rng: random.Random) -> str | None:
    """Layers of 2-to-1 hashes over given nodes and earlier layers (special values, repeats, a
    node with itself, an empty layer; on a device one layer of several blocks), against
    poseidon_hash2 by definition (for the reference) or the reference's layers."""
    backend = checked.backend()
    if not backend.implements("cuzk_poseidon_layers"):
        return NOT_IMPLEMENTED
    info = checked.plugins.backends[checked.name]
    given = [*SPECIAL_SCALARS, *random_scalars(rng, 4)]
    sizes = [7, 0, 5, 300 if info.accelerated else 9, 1]
    layers, known = [], len(given)
    for n in sizes:
        left, right = (np.array([rng.randrange(known) for _ in range(n)]) for _ in "lr")
        layers.append((left, right))
        known += n
    layers[0] = (np.append(layers[0][0][:-1], 2), np.append(layers[0][1][:-1], 2))
    nodes = ints_to_limbs(given)
    inputs = [nodes, *(side for layer in layers for side in layer)]
    copies = [array.copy() for array in inputs]
    table = poseidon_table()

    def by_definition() -> np.ndarray:
        values = list(given)
        for left, right in layers:
            values += [
                poseidon_by_definition([0, values[a], values[b]], table.params)[1]
                for a, b in zip(left.tolist(), right.tolist(), strict=True)
            ]
        return ints_to_limbs(values[len(given) :])

    got = backend.poseidon_layers(nodes, layers, table)
    want = expected(checked, lambda ref: ref.poseidon_layers(nodes, layers, table), by_definition)
    same_scalars(got, want, f"{len(sizes)} layers of {sum(sizes)} hashes")
    unchanged(inputs, copies, "poseidon_layers")
    return None


# ---------------------------------------------------------------- optional measurement hooks


def _bench_clock(checked: Subject, rng: random.Random) -> str | None:
    backend = checked.backend()
    if not backend.implements("cuzk_bench_clock"):
        return NOT_IMPLEMENTED
    clock = backend.clock()
    domain = EvaluationDomain(6)
    values = ints_to_limbs(random_scalars(rng, domain.size))
    result, ms = clock.time(lambda: backend.ntt(values, domain))
    same_scalars(result, checked.reference.ntt(values, domain), "the timed work's result")
    if not isinstance(clock.name, str) or not clock.name:
        raise CheckFailed(f"the clock's name is {clock.name!r}")
    if not isinstance(ms, (int, float)) or not ms >= 0:
        raise CheckFailed(f"the clock measured {ms!r} ms")
    return None


def _prepare(checked: Subject, rng: random.Random) -> str | None:
    """Preparing twice answers the same and leaves the backend able to prove (an NTT after)."""
    backend = checked.backend()
    if not backend.implements("cuzk_prepare"):
        return NOT_IMPLEMENTED
    answers = [backend.prepare() for _ in range(2)]
    if answers != [True, True]:
        raise CheckFailed(f"returned {answers!r}, expected True both times")
    domain = EvaluationDomain(4)
    values = ints_to_limbs(random_scalars(rng, domain.size))
    same_scalars(backend.ntt(values, domain), checked.reference.ntt(values, domain), "an NTT")
    return None


def _device_memory(checked: Subject, rng: random.Random) -> str | None:
    used = checked.backend().device_memory()
    if used is None:
        return NOT_IMPLEMENTED
    if not isinstance(used, (int, np.integer)) or used < 0:
        raise CheckFailed(f"returned {used!r}, expected a byte count")
    return None


# ---------------------------------------------------------------- isolation


def _isolation(checked: Subject, rng: random.Random) -> str | None:
    """Work for this backend reaches its plugin alone (and the core's fallbacks), and work for
    the reference never reaches it: no plugin is asked, or answers, for another backend."""
    names = sorted({checked.name, REFERENCE})
    calls: list[tuple[str, str, list[object]]] = []

    def watch(manager: str) -> Callable[..., None]:
        def before(hook: str, impls: list[Any], kwargs: dict[str, Any]) -> None:
            ctx = kwargs.get("ctx")
            asked_for = ctx.backend if ctx is not None else manager
            calls.append((manager, asked_for, [impl.plugin for impl in impls]))

        return before

    undo = [
        checked.plugins.manager(n).add_hookcall_monitoring(watch(n), lambda *_: None) for n in names
    ]
    try:
        domain = EvaluationDomain(4)
        values = ints_to_limbs(random_scalars(rng, domain.size))
        points = G1Affines.from_points(random_points("g1", rng, 3))
        scalars = ints_to_limbs(random_scalars(rng, 3))
        for backend in (checked.backend(), checked.reference):
            backend.ntt(values, domain)
            backend.msm_g1(backend.upload(points, "a"), scalars, "a")
            backend.prepare()
    finally:
        for stop in undo:
            stop()
    for manager, asked_for, plugins in calls:
        if asked_for != manager:
            raise CheckFailed(f"a hook for backend {asked_for!r} went to {manager!r}'s plugin")
        allowed = (checked.plugins.plugin(manager), fallbacks)
        strays = [p for p in plugins if not any(p is a for a in allowed)]
        if strays:
            raise CheckFailed(f"a hook for backend {manager!r} reached another plugin: {strays[0]}")
    return None


# ---------------------------------------------------------------- compiled circuits


def _porep_lite(challenges: int, depth: int) -> Callable[[int], Any]:
    from cuzk_core.circuits import PorepLite

    return lambda seed: PorepLite(challenges=challenges, depth=depth, seed=seed)


COMPILED_CIRCUITS: dict[str, Callable[[random.Random], Callable[[int], Any]]] = {
    "porep-lite-1x1": lambda rng: _porep_lite(1, 1),
    "porep-lite-2x3": lambda rng: _porep_lite(2, 3),
    "porep-lite-5x1-copied": lambda rng: _porep_lite(5, 1),  # 3 of its 5 paths are copies
    "tiny-all-hints": lambda rng: lambda seed: TinyCircuit(seed * 7919 % R, steps=4),
    "random-gadgets": lambda rng: functools.partial(GadgetCircuit, rng.randrange(1 << 30)),
}
"""Circuits the compiled path is checked on, by case: each maps a value seed to an instance of
one shape (the random gadget circuits draw their structure from the check's rng)."""


def _witness(case: str, checked: Subject, rng: random.Random) -> str | None:
    """Compiled on one instance by the reference, the program gives every other instance of the
    shape the witness its gadgets give, bit for bit, on the backend under test."""
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.replay import replay

    backend = checked.backend()
    instance = COMPILED_CIRCUITS[case](rng)
    compiled, _ = compile_circuit(checked.reference, instance(0), use_cache=False)
    if compiled.program is None:
        raise CheckFailed(f"{case}: not compiled: {compiled.problem}")
    for values in (1, 2):
        circuit = instance(values)
        inputs, hints = replay(circuit, compiled.program)
        if not backend.implements("cuzk_witness"):
            return NOT_IMPLEMENTED
        got = backend.witness(compiled.program, inputs, hints)
        cs = ConstraintSystem()
        circuit.synthesize(cs)
        _same_matrices(compiled.program.matrices, cs.matrices(), f"{case} values={values}")
        same_scalars(got, ints_to_limbs(cs.assignment()), f"{case} witness, values={values}")
    return None


@attrs.frozen(eq=False)
class _CompiledSource:
    """A witness source through a compiled program kept in memory (no disk cache)."""

    compiled: Any
    circuit: Any

    def assign(self, backend: Backend) -> Any:
        from cuzk_core.groth16.sources import Assignment
        from cuzk_core.witness.replay import replay

        program = self.compiled.program
        inputs, hints = replay(self.circuit, program)
        return Assignment(self.compiled.proving_matrices, backend.witness(program, inputs, hints))


def _compiled_proof(checked: Subject, rng: random.Random) -> None:
    """A proof through the compiled path has the gadget path's bytes."""
    from cuzk_core.witness.compiled import compile_circuit

    circuit = _porep_lite(1, 1)(rng.randrange(1 << 32))
    reference = checked.reference
    gadgets = NativeCircuit(circuit, compiled=False)
    key = LoadedKey(generate_parameters(gadgets.assign(reference).matrices, seed=11))
    want = prove(reference, gadgets, key, seed=PROOF_SEED)
    compiled, _ = compile_circuit(reference, circuit, use_cache=False)
    if compiled.program is None:
        raise CheckFailed(f"porep-lite not compiled: {compiled.problem}")
    got = prove(checked.backend(), _CompiledSource(compiled, circuit), key, seed=PROOF_SEED)
    if got.proof.to_bytes() != want.proof.to_bytes():
        raise CheckFailed("compiled-path proof bytes differ from the gadget path's")


def _concurrent_proofs(checked: Subject, rng: random.Random) -> None:
    """Two threads prove at once on the backend, as the daemon's synthesis and prover stages
    use it: every proof has the reference's bytes."""
    circuits = [_porep_lite(1, 2)(rng.randrange(1 << 32)) for _ in range(2)]
    reference = checked.reference
    key = LoadedKey(
        generate_parameters(NativeCircuit(circuits[0]).assign(reference).matrices, seed=11)
    )
    want = [prove(reference, NativeCircuit(c), key, seed=PROOF_SEED).proof for c in circuits]
    got: list[list[bytes]] = [[], []]
    failures: list[BaseException] = []

    def work(k: int) -> None:
        try:
            backend = checked.backend()
            for _ in range(2):
                proof = prove(backend, NativeCircuit(circuits[k]), key, seed=PROOF_SEED).proof
                got[k].append(proof.to_bytes())
        except BaseException as exc:  # re-raised in the checking thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    for k in range(2):
        if got[k] != [want[k].to_bytes()] * 2:
            raise CheckFailed(f"thread {k}: a proof made beside another differs from the reference")


# ---------------------------------------------------------------- whole proofs

PROOF_SEED = 3


def check_proof(
    checked: Subject, circuit: Any, key: ProvingKey, want: bytes, changes: dict[str, Any]
) -> None:
    """The proof under profile ``changes`` (seed :data:`PROOF_SEED`) is ``want`` and verifies."""
    backend = checked.backend(**changes)
    got = prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=PROOF_SEED)
    if got.proof.to_bytes() != want:
        raise CheckFailed(f"proof bytes differ from the reference's{_changes(changes)}")
    ok, why = verify_proof(key.vk, got.proof, got.public_inputs)
    if not ok:
        raise CheckFailed(f"the proof does not verify{_changes(changes)}: {why}")


def _proof(checked: Subject, rng: random.Random) -> None:
    circuit = TinyCircuit(5, steps=6)
    reference = checked.reference
    key = generate_parameters(NativeCircuit(circuit).assign(reference).matrices, seed=11)
    want = prove(reference, NativeCircuit(circuit), LoadedKey(key), seed=PROOF_SEED)
    check_proof(checked, circuit, key, want.proof.to_bytes(), {})


# ---------------------------------------------------------------- the list


def _build() -> Iterator[Check]:
    partial = functools.partial
    yield Check("cuzk_backend_info", "name-and-version", _backend_info)
    yield Check("cuzk_prepare", "twice-then-ntt", _prepare)
    for hook, run in (("cuzk_alloc_host", _alloc_host), ("cuzk_pin", _pin), ("cuzk_unpin", _unpin)):
        for pinning in PINNING:
            yield Check(hook, f"pinning={pinning}", partial(run, pinning))
    for storage in KEY_STORAGE:
        for pinning in PINNING:
            run = partial(_upload, storage, pinning)
            yield Check("cuzk_upload", f"key_storage={storage},pinning={pinning}", run)
    for storage in ("stream", "mmap"):  # many chunks, each uploaded while the previous is summed
        for pinning in PINNING:
            run = partial(_upload, storage, pinning, budget_kib=STREAM_BUDGET_KIB)
            case = f"key_storage={storage},pinning={pinning},device_budget_kib={STREAM_BUDGET_KIB}"
            yield Check("cuzk_upload", case, run)
    for bits, pinning in ((16, "none"), (16, "pool"), (20, "pool")):
        run = partial(_window_tables, bits, pinning)
        yield Check("cuzk_upload", f"key_storage=device,table_bits={bits},pinning={pinning}", run)
    yield Check("cuzk_release", "every-key-storage", _release)
    yield Check("cuzk_synthesize", "tiny-circuit", _synthesize)
    for case in COMPILED_CIRCUITS:
        yield Check("cuzk_witness", case, partial(_witness, case))
    for kind in ("random", "ones", "r-1", "bits", "mixed"):
        yield Check("cuzk_evaluate_r1cs", f"witness={kind}", partial(_evaluate_r1cs, kind))
    for hook in NTT_HOOKS:
        for kind in NTT_KINDS:
            yield Check(hook, kind, partial(_ntt, hook, kind))
    for kind in ("random", "zeros", "ones", "r-1", "mixed"):
        yield Check("cuzk_quotient_pointwise", kind, partial(_quotient, kind))
    for case in FIRST_UNSATISFIED_CASES:
        yield Check("cuzk_first_unsatisfied", case, partial(_first_unsatisfied, case))
    for case in ("random", "edges"):
        yield Check("cuzk_poseidon", case, partial(_poseidon, case))
    yield Check("cuzk_poseidon_layers", "tree", _poseidon_layers)
    for coefficients in (True, False):
        case = "coefficients" if coefficients else "evaluations"
        yield Check("cuzk_quotient_on_coset", case, partial(_quotient_on_coset, coefficients))
    for group in GROUPS:
        hook = f"cuzk_msm_{group}"
        for n in (1, 2, 3, 64):
            yield Check(hook, f"random-{n}", partial(_msm_random, group, n))
        for encoding, changes in MSM_PROFILES.items():
            for kind in [k for k in SCALAR_KINDS if k != "random"]:
                run = partial(_msm_scalars, group, kind, changes)
                yield Check(hook, f"scalars={kind},{encoding}", run)
            for kind in POINT_KINDS:
                run = partial(_msm_points, group, kind, changes)
                yield Check(hook, f"points={kind},{encoding}", run)
    for group in GROUPS:
        hook = f"cuzk_fixed_base_{group}"
        yield Check(hook, "random-1-3-257", partial(_fixed_base_random, group))
        yield Check(hook, "edges", partial(_fixed_base_edges, group))
    for group in GROUPS:
        decode = partial(_decode_snarkjs_points, group)
        yield Check("cuzk_decode_snarkjs_points", f"{group}-random-and-edges", decode)
    yield Check("cuzk_gather_scalars", "host-returned-and-witness", _gather_scalars)
    yield Check("cuzk_bench_clock", "optional", _bench_clock)
    yield Check("cuzk_device_memory", "optional", _device_memory)
    yield Check("isolation", "hooks-reach-one-backend", _isolation)
    yield Check("proof", f"tiny-circuit-seed-{PROOF_SEED}", _proof)
    yield Check("proof", f"compiled-porep-lite-seed-{PROOF_SEED}", _compiled_proof)
    yield Check("proof", f"two-threads-at-once-seed-{PROOF_SEED}", _concurrent_proofs)


CHECKS: tuple[Check, ...] = tuple(_build())
"""Every check, grouped by hook in hookspec order; ``proof`` (all hooks together) comes last."""
