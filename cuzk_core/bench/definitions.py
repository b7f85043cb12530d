"""What ``cuzk bench`` times: one MSM, one NTT, synthesis alone, or a whole proof.

Each definition makes its inputs (untimed), checks the backend's answer once against a
reference at a small size (untimed), then times one run per :meth:`Benchmark.run` call. A run's
figures are the spans its timer recorded (see :func:`cuzk_core.bench.runner.span_figures`); a
definition overrides its main figure with the clock's reading, which on a GPU backend comes from
CUDA events rather than the host.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.bench.clock import Clock
from cuzk_core.bench.errors import BenchCheckFailed
from cuzk_core.conformance.inputs import DISTINCT_BASES, random_bases, random_scalar_limbs
from cuzk_core.conformance.oracles import msm_by_definition, transform_by_definition
from cuzk_core.domain import EvaluationDomain
from cuzk_core.gadgets.poseidon.batch import poseidon_table, reference_permute
from cuzk_core.groth16.prover import keeps_products, keeps_witness, prove
from cuzk_core.groth16.sources import KeySource, LoadedKey, NativeCircuit
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import R1CSMatrices
from cuzk_core.witness.compiled import compile_circuit, load_compiled, synthesize_native

CHECK_SIZE = 16
"""Inputs checked against the reference: enough to cover every window, cheap in plain Python."""


class Benchmark(Protocol):
    """One benchmark definition; the runner calls these in order, per profile."""

    name: ClassVar[str]

    def params(self) -> dict[str, Any]:
        """What was timed (sizes, circuit, seed), recorded in the results."""
        ...

    def prepare(self, backend: Backend) -> Any:
        """Make the inputs and place them on the backend (untimed); returns the run state."""
        ...

    def check(self, backend: Backend, state: Any) -> dict[str, Any]:
        """Check the backend's answer once against a reference; raise BenchCheckFailed if wrong."""
        ...

    def run(self, backend: Backend, state: Any, clock: Clock) -> dict[str, float]:
        """One timed run; returns figures that override the span times (e.g. device time)."""
        ...

    def release(self, backend: Backend, state: Any) -> None:
        """Free what :meth:`prepare` placed on the backend."""
        ...


# ---------------------------------------------------------------- MSM


@attrs.frozen
class _MsmState:
    bases: G1Affines | G2Affines
    scalars: np.ndarray
    handle: Any


@attrs.frozen
class MsmBench:
    """One MSM of ``size`` points in G1 or G2, with the profile's window bits for MSM ``msm``."""

    name: ClassVar[str] = "msm"
    curve: str
    size: int
    msm: str
    seed: int = 1

    @property
    def figure(self) -> str:
        """The main figure's name: ``msm_g1`` or ``msm_g2``."""
        return f"msm_{self.curve}"

    def params(self) -> dict[str, Any]:
        """Curve, size, which profile window applies, seed, and how many bases are distinct."""
        return {
            "curve": self.curve,
            "size": self.size,
            "msm": self.msm,
            "seed": self.seed,
            "distinct_bases": min(self.size, DISTINCT_BASES),
        }

    def _call(self, backend: Backend) -> Callable[..., G1Affines | G2Affines]:
        return backend.msm_g1 if self.curve == "g1" else backend.msm_g2

    def prepare(self, backend: Backend) -> _MsmState:
        """Seeded bases and scalars; bases uploaded as the prover would."""
        bases = random_bases(self.curve, self.size, self.seed)
        scalars = random_scalar_limbs(self.size, self.seed)
        return _MsmState(bases, scalars, backend.upload(bases, self.msm))

    def check(self, backend: Backend, state: _MsmState) -> dict[str, Any]:
        """The first points' MSM against a double-and-add sum."""
        n = min(self.size, CHECK_SIZE)
        bases = type(state.bases)(state.bases.coords[:n], state.bases.infinity[:n])
        scalars = state.scalars[:n]
        got = self._call(backend)(bases, scalars, self.msm)
        want = type(bases).from_points(
            [msm_by_definition(self.curve, bases.to_points(), limbs_to_ints(scalars))]
        )
        same = np.array_equal(got.infinity, want.infinity) and np.array_equal(
            got.coords, want.coords
        )
        if not same:
            raise BenchCheckFailed(
                f"backend {backend.name!r}: {self.figure} of {n} points disagrees with the "
                "double-and-add reference"
            )
        return {"reference": "double-and-add sum", "size": n}

    def run(self, backend: Backend, state: _MsmState, clock: Clock) -> dict[str, float]:
        """One MSM over the uploaded bases."""
        call = self._call(backend)
        with backend.ctx.timer.span(self.figure, backend=backend.name):
            _, ms = clock.time(lambda: call(state.handle, state.scalars, self.msm))
        return {self.figure: ms}

    def release(self, backend: Backend, state: _MsmState) -> None:
        """Free the uploaded bases."""
        backend.release(state.handle)


# ---------------------------------------------------------------- NTT


@attrs.frozen
class NttBench:
    """One forward NTT (or coset NTT) of ``size`` scalars; ``size`` is a power of two."""

    name: ClassVar[str] = "ntt"
    size: int
    coset: bool = False
    seed: int = 1

    @property
    def figure(self) -> str:
        """The main figure's name: ``ntt`` or ``coset_ntt``."""
        return "coset_ntt" if self.coset else "ntt"

    def params(self) -> dict[str, Any]:
        """Size, coset or not, seed."""
        return {"size": self.size, "coset": self.coset, "seed": self.seed}

    def _transform(self, backend: Backend, values: np.ndarray, domain: EvaluationDomain):
        if self.coset:
            return backend.coset_ntt(values, domain, domain.generator)
        return backend.ntt(values, domain)

    def prepare(self, backend: Backend) -> tuple[np.ndarray, EvaluationDomain]:
        """Seeded coefficients and the domain."""
        domain = EvaluationDomain(self.size.bit_length() - 1)
        return random_scalar_limbs(self.size, self.seed), domain

    def check(self, backend: Backend, state: tuple[np.ndarray, EvaluationDomain]) -> dict[str, Any]:
        """A small transform against Horner evaluation at every (coset) point."""
        n = min(self.size, CHECK_SIZE)
        domain = EvaluationDomain(n.bit_length() - 1)
        coefficients = state[0][:n]
        method, shift = ("coset_ntt", domain.generator) if self.coset else ("ntt", None)
        want = ints_to_limbs(
            transform_by_definition(method, limbs_to_ints(coefficients), domain, shift)
        )
        if not np.array_equal(self._transform(backend, coefficients, domain), want):
            raise BenchCheckFailed(
                f"backend {backend.name!r}: {self.figure} of size {n} disagrees with "
                "Horner evaluation"
            )
        return {"reference": "Horner evaluation", "size": n}

    def run(
        self, backend: Backend, state: tuple[np.ndarray, EvaluationDomain], clock: Clock
    ) -> dict[str, float]:
        """One transform."""
        values, domain = state
        with backend.ctx.timer.span(self.figure, backend=backend.name):
            _, ms = clock.time(lambda: self._transform(backend, values, domain))
        return {self.figure: ms}

    def release(self, backend: Backend, state: Any) -> None:
        """Nothing was placed on the backend."""


# ---------------------------------------------------------------- Poseidon


@attrs.frozen
class PoseidonBench:
    """``size`` Poseidon permutations at width 3 (the 2-to-1 hash's) in one ``cuzk_poseidon``
    call: one level of a Merkle tree."""

    name: ClassVar[str] = "poseidon"
    size: int
    seed: int = 1

    def params(self) -> dict[str, Any]:
        """How many states, their width, seed."""
        return {"size": self.size, "t": 3, "seed": self.seed}

    def prepare(self, backend: Backend) -> np.ndarray:
        """Seeded states."""
        return random_scalar_limbs(3 * self.size, self.seed).reshape(self.size, 3, 4)

    def check(self, backend: Backend, state: np.ndarray) -> dict[str, Any]:
        """The first states against the plain-Python permutation."""
        states = state[:CHECK_SIZE]
        want = reference_permute(states, poseidon_table())
        if not np.array_equal(backend.poseidon(states, poseidon_table()), want):
            raise BenchCheckFailed(
                f"backend {backend.name!r}: Poseidon of {len(states)} states disagrees with "
                "the plain-Python permutation"
            )
        return {"reference": "plain-Python permutation", "size": len(states)}

    def run(self, backend: Backend, state: np.ndarray, clock: Clock) -> dict[str, float]:
        """One call: every state permuted."""
        with backend.ctx.timer.span("poseidon", backend=backend.name):
            _, ms = clock.time(lambda: backend.poseidon(state, poseidon_table()))
        return {"poseidon": ms}

    def release(self, backend: Backend, state: Any) -> None:
        """Nothing was placed on the backend."""


# ---------------------------------------------------------------- synthesis and whole proofs


@attrs.frozen
class SynthBench:
    """The prover's synthesis phase alone: the witness (through the compiled program, or the
    circuit's gadgets with ``gadgets``), A·z, B·z, C·z and the check; no parameters.

    The check compiles the circuit (unless the cache has it) and records the compile cost, the
    load cost from the on-disk cache and its size beside the figures; a circuit the recorder
    cannot follow is timed on the slow path with the reason in the check.
    """

    name: ClassVar[str] = "synth"
    make_circuit: Callable[[], Any]
    spec: dict[str, Any]
    gadgets: bool = False

    def params(self) -> dict[str, Any]:
        """The circuit's name and knobs, and which path."""
        return {**self.spec, "path": "gadgets" if self.gadgets else "compiled"}

    def prepare(self, backend: Backend) -> Any:
        """The circuit object the check compiles (each run builds its own)."""
        return self.make_circuit()

    def check(self, backend: Backend, state: Any) -> dict[str, Any]:
        """Compile the circuit (or load it from the cache: compile cost is measured with an empty
        ``CUZK_CACHE_DIR``), load it back from disk, and check one witness satisfies every row."""
        compiled, _ = compile_circuit(backend, state)
        info: dict[str, Any] = {}
        if compiled.program is None:
            info["path"] = f"gadgets (slow path: {compiled.problem})"
        else:
            start = time.perf_counter()
            loaded = load_compiled(state)
            load_ms = (time.perf_counter() - start) * 1000
            fresh = compiled.source == "compiled"
            info.update(
                path="gadgets (asked for)" if self.gadgets else "compiled",
                compile_ms=round(compiled.compile_ms, 1) if fresh else None,
                **(_compile_steps(backend) if fresh else {}),
                load_ms=round(load_ms, 1) if loaded is not None else None,
                cache_bytes=compiled.cache_bytes,
                **compiled.program.counts(),
            )
        matrices, failing = self._synthesis(backend, state)
        if failing is not None:
            raise BenchCheckFailed(
                f"the witness does not satisfy constraint {failing} ({matrices.row_name(failing)})"
            )
        return {
            "reference": "witness satisfies every constraint",
            "constraints": matrices.num_constraints,
            "variables": matrices.num_inputs + matrices.num_aux,
            **info,
        }

    def _synthesis(self, backend: Backend, circuit: Any) -> tuple[R1CSMatrices, int | None]:
        timer = backend.ctx.timer
        if self.gadgets:
            synthesized = backend.synthesize(circuit)
        else:
            # the witness as the prover asks for it (left on the device where it can be)
            _, synthesized = synthesize_native(backend, circuit, for_prover=keeps_witness(backend))
        with timer.span("evaluate_r1cs"):  # as the prover asks for them
            a, b, c = backend.evaluate_r1cs(
                synthesized.matrices, synthesized.witness, for_quotient=keeps_products(backend)
            )
            if not isinstance(c, np.ndarray):
                # Handles kept on a device may still be computing: read one row of the last, so
                # the products' time lands here and not in the check's span.
                np.asarray(c[:1])
        with timer.span("check"):
            failing = backend.first_unsatisfied(a, b, c)
        return synthesized.matrices, failing

    def run(self, backend: Backend, state: Any, clock: Clock) -> dict[str, float]:
        """One synthesis phase, timed by its span (host work), of a fresh circuit object: its
        instance (porep-lite's tree) is computed again, as every proof computes it."""
        circuit = self.make_circuit()
        with backend.ctx.timer.span("synthesis", backend=backend.name):
            self._synthesis(backend, circuit)
        return {}

    def release(self, backend: Backend, state: Any) -> None:
        """Nothing was placed on the backend."""


_COMPILE_STEPS = {
    "record": "record",
    "program_parts": "parts",
    "check_program": "check",
    "save_compiled": "save",
}
"""The compile's spans (cuzk_core/witness/compiled.py) → their check-info names."""


def _compile_steps(backend: Backend) -> dict[str, float]:
    """``compile_<step>_ms`` of the compile just made on ``backend`` (its last span of each
    step): where a fresh compile's time went."""
    steps = {}
    for span in backend.ctx.timer.spans:
        if span.name in _COMPILE_STEPS and span.end is not None:
            steps[f"compile_{_COMPILE_STEPS[span.name]}_ms"] = round(span.ms, 1)
    return steps


@attrs.frozen
class ProveBench:
    """A whole proof, phase by phase, plus its ``total`` wall time."""

    name: ClassVar[str] = "prove"
    make_circuit: Callable[[], Any]
    key: KeySource
    spec: dict[str, Any]
    seed: int = 1

    def params(self) -> dict[str, Any]:
        """The circuit's name and knobs, and the proof-randomness seed."""
        return {**self.spec, "seed": self.seed}

    def prepare(self, backend: Backend) -> Any:
        """The circuit object the check proves (each run builds its own); each proof loads the
        key itself, as ``cuzk prove`` does."""
        return self.make_circuit()

    def check(self, backend: Backend, state: Any) -> dict[str, Any]:
        """One proof, verified with the key's verifying key."""
        pk = self.key.load(backend)
        loaded = LoadedKey(pk, self.key.convention)
        result = prove(backend, NativeCircuit(state), loaded, seed=self.seed)
        ok, reason = verify_proof(pk.vk, result.proof, result.public_inputs)
        if not ok:
            raise BenchCheckFailed(f"backend {backend.name!r}: the proof does not verify: {reason}")
        return {"reference": "proof verifies", "public_inputs": len(result.public_inputs)}

    def run(self, backend: Backend, state: Any, clock: Clock) -> dict[str, float]:
        """One proof of a fresh circuit object (its instance computed again, as every proof
        does); phases come from the prover's spans, ``total`` from the host clock."""
        start = time.perf_counter()
        prove(backend, NativeCircuit(self.make_circuit()), self.key, seed=self.seed)
        return {"total": (time.perf_counter() - start) * 1000.0}

    def release(self, backend: Backend, state: Any) -> None:
        """Nothing was placed on the backend."""
