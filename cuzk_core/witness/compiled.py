"""Compile once, then synthesize each proof from its inputs: the native circuits' fast path.

The first synthesis of a circuit shape (its name and ``shape()`` knobs) is recorded
(:mod:`.record`); the program is checked by replaying the circuit and running it on the backend,
which must give back the recorded witness bit for bit, and is cached on disk
(``$CUZK_CACHE_DIR/compiled/<digest>/circuit.cuzkc``, :mod:`.store`) under a digest of the shape
and of the source of the constraint system, the gadget library and the circuit's module, so
editing a gadget recompiles. The program's matrices are the first rows of the proving matrices
(the input rows Groth16 appends come last, built in the same allocation by the recorder): one
copy, mapped from the cache file when there is one.
Each later proof replays the circuit without its gadgets (its inputs and hints) and asks the
backend's ``cuzk_witness`` for z. A circuit the recorder cannot follow runs its gadgets every
time (the slow path); :attr:`Compiled.problem` says why.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from cuzk_core.cache import cache_dir
from cuzk_core.circuits import bind_backend
from cuzk_core.hookspecs import Synthesized
from cuzk_core.layout import ints_to_limbs
from cuzk_core.r1cs import R1CSMatrices

from . import store
from .chains import program_sbox_heads
from .parts import program_parts
from .program import HINT, WitnessProgram
from .record import Recording, RecordingConstraintSystem
from .replay import replay, supplied_values_differ

if TYPE_CHECKING:
    from cuzk_core.backend import Backend
    from cuzk_core.groth16.sources import Assignment

_LIBRARY = ("r1cs", "gadgets", "witness")
"""The packages of cuzk_core whose source goes into every shape digest."""
_CORE = Path(__file__).resolve().parents[1]
_MEMORY: dict[str, Compiled] = {}
_MEMORY_LIMIT = 4


@attrs.define(eq=False)
class Compiled:
    """A circuit shape's compiled form: its program, or why it has none (the slow path)."""

    digest: str
    program: WitnessProgram | None
    proving_matrices: R1CSMatrices | None = None
    """The program's matrices with the input rows the prover needs (their first rows are the
    program's, in the same memory); None on the slow path."""
    problem: str | None = None
    source: str = "compiled"
    """``compiled`` (recorded now), ``disk`` (loaded from the cache) or ``memory``."""
    compile_ms: float = 0.0
    cache_bytes: int = 0


def shape(circuit: Any) -> dict[str, Any]:
    """The knobs that fix the circuit's constraints: ``circuit.shape()`` if it has one, else all
    its knobs."""
    return dict(circuit.shape()) if hasattr(circuit, "shape") else dict(circuit.knobs())


def shape_digest(circuit: Any) -> str | None:
    """SHA-256 over the circuit's name, shape knobs, module source and the gadget library's
    source; None when the circuit's source cannot be found (nothing is cached then)."""
    try:
        circuit_file = inspect.getsourcefile(type(circuit))
    except TypeError:
        circuit_file = None
    if circuit_file is None or not Path(circuit_file).is_file():
        return None
    h = hashlib.sha256(store.FORMAT.encode())
    h.update(json.dumps([circuit.name, shape(circuit)], sort_keys=True, default=str).encode())
    h.update(_source_digest(circuit_file))
    return h.hexdigest()


@functools.cache
def _source_digest(circuit_file: str) -> bytes:
    """SHA-256 over the gadget library's source files and the circuit's module, read once per
    process (the code this process runs was imported already): every proof of a daemon asks."""
    h = hashlib.sha256()
    files = sorted(p for package in _LIBRARY for p in (_CORE / package).rglob("*.py"))
    for path in [*files, Path(circuit_file)]:
        h.update(str(path.name).encode())
        h.update(path.read_bytes())
    return h.digest()


def compiled_path(digest: str) -> Path:
    """Where the compiled circuit of shape ``digest`` is cached (its folder holds the stamp of
    the file's last full check too)."""
    return cache_dir() / "compiled" / digest / "circuit.cuzkc"


def compile_circuit(
    backend: Backend, circuit: Any, *, use_cache: bool = True
) -> tuple[Compiled, Synthesized | None]:
    """The circuit's compiled form, from memory, disk or a fresh recording (``use_cache=False``
    neither reads nor writes the caches). A fresh recording also gives this synthesis (the
    gadgets' matrices and witness)."""
    bind_backend(circuit, backend)
    digest = shape_digest(circuit)
    timer = backend.ctx.timer
    if use_cache and digest is not None:
        if digest in _MEMORY:
            return attrs.evolve(_MEMORY[digest], source="memory"), None
        with timer.span("load_compiled") as span:
            try:
                program, proving = store.load(compiled_path(digest), digest)
            except store.StoreRefused as exc:
                program, why = None, str(exc)
        if program is not None:
            found = Compiled(
                digest,
                program,
                proving,
                source="disk",
                compile_ms=span.ms,
                cache_bytes=compiled_path(digest).stat().st_size,
            )
            _remember(found)
            return found, None
        if not why.endswith("not compiled yet"):
            print(f"cuzk: recompiling {circuit.name}: {why}", file=sys.stderr)
    saved = use_cache and digest is not None
    compiled, synthesized = _record(backend, circuit, digest or "uncached", saved)
    if compiled.program is not None:
        witness = synthesized.witness
        del synthesized  # its matrices are views of the proving rows, which may be replaced
        if use_cache and digest is not None:
            assert compiled.proving_matrices is not None  # made with every program
            path = compiled_path(digest)
            with timer.span("save_compiled"):
                compiled.cache_bytes = store.save(
                    path, digest, compiled.program, compiled.proving_matrices
                )
                # the mapped file from now on (and its first full check, which stamps it);
                # the copy in memory goes first, so the two are never both resident
                compiled.program = compiled.proving_matrices = None
                compiled.program, compiled.proving_matrices = store.load(path, digest)
        synthesized = Synthesized(compiled.program.matrices, witness)
    if use_cache and digest is not None:
        _remember(compiled)
    return compiled, synthesized


def load_compiled(circuit: Any) -> WitnessProgram | None:
    """The circuit's program from the on-disk cache alone, or None when it is not usable."""
    digest = shape_digest(circuit)
    if digest is None:
        return None
    try:
        return store.load(compiled_path(digest), digest)[0]
    except store.StoreRefused:
        return None


def _remember(compiled: Compiled) -> None:
    while len(_MEMORY) >= _MEMORY_LIMIT:
        _MEMORY.pop(next(iter(_MEMORY)))
    _MEMORY[compiled.digest] = compiled


def _record(
    backend: Backend, circuit: Any, digest: str, saved: bool
) -> tuple[Compiled, Synthesized]:
    """Record one synthesis and check its program against it; a recording with copied calls
    whose check fails is made again without copies (which then says what is wrong, if
    anything). A program to be ``saved`` gets its parts and S-box heads, which the file
    stores, before the check: a GPU witness of the check needs them too, and they are found
    once (~3 s a million ops on a 2-core VM, twice before round 44)."""
    timer = backend.ctx.timer
    replicate = backend.ctx.profile.synthesis.replicate_gadgets
    with timer.span("compile") as span:
        while True:
            cs = RecordingConstraintSystem(replicate=replicate)
            with timer.span("record"):
                circuit.synthesize(cs)
                recording = cs.recording()
            witness = ints_to_limbs(recording.assignment)
            problem, program = recording.problem, recording.program
            if recording.copies_differ is not None:
                problem = recording.copies_differ
            elif program is not None:
                if saved:
                    with timer.span("program_parts"):
                        program = attrs.evolve(
                            program,
                            parts=program_parts(program),
                            sbox_heads=program_sbox_heads(program),
                        )
                with timer.span("check_program"):
                    problem, witness = _check_program(backend, circuit, program, recording)
            if problem is None:
                break
            if recording.replicated is None:
                witness = ints_to_limbs(recording.assignment)  # the gadgets' own: the slow path
                break
            print(
                f"cuzk: recording {circuit.name} again without copied calls: {problem}",
                file=sys.stderr,
            )
            replicate = False
        if problem is not None:
            program = None
    proving = recording.proving if program is not None else None
    compiled = Compiled(digest, program, proving, problem=problem, compile_ms=span.ms)
    return compiled, Synthesized(recording.matrices, witness)


def _check_program(
    backend: Backend, circuit: Any, program: WitnessProgram, recording: Recording
) -> tuple[str | None, np.ndarray]:
    """(None when a replay plus the program reproduce the recorded witness, else why not; the
    program's witness). Where calls were copied the recording holds zeros, so there the program
    must satisfy every constraint instead."""
    recorded = ints_to_limbs(recording.assignment)
    supplied_wrong = supplied_values_differ(circuit)
    if supplied_wrong is not None:
        return f"circuit {getattr(circuit, 'name', circuit)!r}: {supplied_wrong}", recorded
    inputs, hints = replay(circuit, program)
    witness = backend.witness(program, inputs, hints)
    differs = np.any(witness != recorded, axis=1)
    if recording.replicated is not None:
        differs &= ~recording.replicated
    differs = np.flatnonzero(differs)
    if not len(differs):
        if recording.replicated is not None:
            a, b, c = backend.evaluate_r1cs(program.matrices, witness)
            failing = backend.first_unsatisfied(a, b, c)
            if failing is not None:
                return f"the program's witness fails constraint {failing}", witness
        return None, witness
    column = int(differs[0])
    if column < program.num_inputs:
        return (
            f"public input {column} differs when the circuit is replayed without its gadgets",
            witness,
        )
    j = column - program.num_inputs
    if program.kind[j] == HINT:
        return (
            f"{recording.hint_names[program.arg[j]]!r} differs when the circuit is replayed "
            "without its gadgets: the circuit computes it in Python from a gadget's result "
            "(a callback)",
            witness,
        )
    return f"the recorded program computes aux {j} differently from the gadgets", witness


def synthesize_native(
    backend: Backend, circuit: Any, *, use_cache: bool = True, for_prover: bool = False
) -> tuple[Compiled, Synthesized]:
    """One synthesis of ``circuit``: through its compiled program when it has one (replay, then
    the backend's witness hook, ``for_prover`` passed on), else by running its gadgets on the
    backend."""
    compiled, synthesized = compile_circuit(backend, circuit, use_cache=use_cache)
    if synthesized is not None:
        if compiled.program is not None:
            synthesized = Synthesized(compiled.program.matrices, synthesized.witness)
        return compiled, synthesized
    if compiled.program is None:
        return compiled, backend.synthesize(circuit)
    timer = backend.ctx.timer
    with timer.span("replay"):
        inputs, hints = replay(circuit, compiled.program)
    with timer.span("witness"):
        witness = backend.witness(compiled.program, inputs, hints, for_prover=for_prover)
    return compiled, Synthesized(compiled.program.matrices, witness)


def proving_matrices(backend: Backend, circuit: Any) -> R1CSMatrices:
    """A native circuit's matrices with the input rows, as setup needs them: from its compiled
    program when one is cached (no witness is computed), else from compiling it now (or, on the
    slow path, from running its gadgets)."""
    from cuzk_core.groth16.qap import with_input_rows

    compiled, synthesized = compile_circuit(backend, circuit)
    if compiled.proving_matrices is not None:
        return compiled.proving_matrices
    if synthesized is None:
        synthesized = backend.synthesize(circuit)
    return with_input_rows(synthesized.matrices)


def compiled_assignment(backend: Backend, circuit: Any) -> Assignment:
    """The prover's assignment for a native circuit: input rows included (built once per
    process for a compiled circuit); its witness may be the backend's handle
    (:func:`cuzk_core.groth16.prover.keeps_witness`)."""
    from cuzk_core.groth16.prover import keeps_witness
    from cuzk_core.groth16.qap import with_input_rows
    from cuzk_core.groth16.sources import Assignment

    compiled, synthesized = synthesize_native(backend, circuit, for_prover=keeps_witness(backend))
    if compiled.proving_matrices is not None:
        return Assignment(compiled.proving_matrices, synthesized.witness)
    return Assignment(with_input_rows(synthesized.matrices), synthesized.witness)
