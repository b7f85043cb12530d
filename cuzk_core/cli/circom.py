"""The circom and snarkjs sides of ``cuzk prove``, ``cuzk setup`` and ``cuzk check``.

``prove --zkey --wtns`` proves a snarkjs proving key (snarkjs's H convention, roots from 5);
``setup --r1cs`` and ``prove --r1cs --wtns --params`` make and use cuzk's own parameters for a
circom circuit (bellperson's convention). Both write snarkjs's proof.json beside cuzk's files, so
``snarkjs groth16 verify`` accepts either proof.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.errors import CuzkError, FormatError
from cuzk_core.fileio import write_json_atomic
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.key_sources import ParamsFile, ZkeyFile, stderr_log
from cuzk_core.groth16.keys import VerifyingKey
from cuzk_core.groth16.prover import (
    PROVE_STEPS,
    ProofResult,
    UnsatisfiedWitness,
    first_unsatisfied,
)
from cuzk_core.groth16.prover import prove as run_prover
from cuzk_core.groth16.qap import BELLPERSON, SNARKJS, with_input_rows
from cuzk_core.groth16.setup import SETUP_STEPS, generate_parameters
from cuzk_core.interop.r1cs import CircomR1CS, read_r1cs
from cuzk_core.interop.snarkjs_json import proof_to_json, vk_to_json, write_vk_json
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.interop.zkey import Zkey
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.progress import Progress
from cuzk_core.timing import Timer

CIRCOM_CIRCUIT = "circom-r1cs"
"""The circuit name ``setup --r1cs`` records in circuit.json."""
SNARKJS_VK_FILE = "verification_key.json"


def _backend(args: argparse.Namespace, timer: Timer) -> Backend:
    return load_plugins().backend(load_profile(args.profile), timer)


def _key_log(args: argparse.Namespace):
    """Where key-cache notes go: stderr, or nowhere with --quiet."""
    return (lambda message: None) if args.quiet else stderr_log


def _progress(args: argparse.Namespace, label: str, total: int) -> Progress:
    return Progress(label, total, enabled=False if args.quiet else None)


def _witness_for(path: str, num_wires: int, against: str) -> np.ndarray:
    witness = read_wtns(path)
    if len(witness) != num_wires:
        raise FormatError(
            f"{path}: the witness has {len(witness)} values, {against} has {num_wires} "
            "(a witness for another circuit?)"
        )
    return witness


@contextlib.contextmanager
def _naming_witness(path: str) -> Iterator[None]:
    """Prefix an unsatisfied-witness error with the witness file."""
    try:
        yield
    except UnsatisfiedWitness as exc:
        raise UnsatisfiedWitness(f"{path}: {exc}") from None


def _r1cs_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _circuit_record(r1cs: CircomR1CS) -> dict[str, Any]:
    """What circuit.json says about a circom circuit, so prove can tell it was this one."""
    return {
        "circuit": CIRCOM_CIRCUIT,
        "r1cs_sha256": _r1cs_digest(r1cs.path),
        "wires": r1cs.num_wires,
        "public": r1cs.num_public,
        "constraints": r1cs.num_constraints,
    }


def _write_outputs(
    args: argparse.Namespace, backend: Backend, result: ProofResult, vk: VerifyingKey
) -> Path:
    """proof.bin, proof.json, public.json, verification_key.json and timings.json into --out.

    Everything is computed before the first file is written, and each file is written atomically.
    """
    out = Path(args.out)
    timer = backend.ctx.timer
    timings = {"backend": backend.name, "profile": backend.ctx.profile.name, **timer.to_json()}
    documents = {
        "proof.json": proof_to_json(result.proof),
        SNARKJS_VK_FILE: vk_to_json(vk),
        "timings.json": timings,
    }
    files.write_proof(out / "proof.bin", result.proof)
    files.write_public(out / "public.json", result.public_inputs)
    for name, document in documents.items():
        write_json_atomic(out / name, document)
    total_ms = sum(timer.phase_totals().values())
    print(f"proof written to {out}/proof.json ({total_ms / 1000:.2f} s in {backend.name})")
    return out


def prove(args: argparse.Namespace) -> int:
    """``cuzk prove --zkey --wtns`` or ``cuzk prove --r1cs --wtns --params``."""
    if args.wtns is None:
        raise CuzkError("--zkey and --r1cs need --wtns (the witness from `snarkjs wtns calculate`)")
    if args.zkey is not None:
        if args.params is not None:
            raise CuzkError("--zkey is a proving key already: leave out --params")
        return _prove_zkey(args)
    if args.r1cs is None or args.params is None:
        raise CuzkError("--wtns needs --zkey, or --r1cs with --params (from `cuzk setup --r1cs`)")
    return _prove_params(args)


def _prove_zkey(args: argparse.Namespace) -> int:
    zkey = Zkey(args.zkey)
    header = zkey.header
    r1cs = read_r1cs(args.r1cs) if args.r1cs is not None else None
    if r1cs is not None and (r1cs.num_wires, r1cs.num_public) != (
        header.num_vars,
        header.num_public,
    ):
        raise FormatError(
            f"{args.r1cs}: {r1cs.num_wires} wires and {r1cs.num_public} public signals, but "
            f"{args.zkey} has {header.num_vars} and {header.num_public}: not the same circuit"
        )
    witness = _witness_for(args.wtns, header.num_vars, f"the zkey {args.zkey}")
    vk = zkey.verifying_key()
    timer = Timer()
    backend = _backend(args, timer)

    def synthesize():
        if r1cs is not None:
            return with_input_rows(r1cs.matrices), witness
        return zkey.matrices(), witness

    with (
        _naming_witness(args.wtns),
        contextlib.closing(_progress(args, "prove", PROVE_STEPS)) as progress,
    ):
        result = run_prover(
            backend,
            synthesize,
            lambda: ZkeyFile(zkey, _key_log(args)).load(backend),
            seed=args.seed,
            progress=progress,
            convention=SNARKJS,
            has_c=r1cs is not None,
        )
    _write_outputs(args, backend, result, vk)
    return 0


def _prove_params(args: argparse.Namespace) -> int:
    folder = Path(args.params)
    spec = params_dir.read_circuit_spec(folder)
    r1cs = read_r1cs(args.r1cs)
    if spec.get("circuit") != CIRCOM_CIRCUIT or spec.get("r1cs_sha256") != _r1cs_digest(r1cs.path):
        raise FormatError(
            f"{folder / params_dir.CIRCUIT_FILE}: these parameters were made for another circuit "
            f"than {args.r1cs} (run `cuzk setup --r1cs {args.r1cs} --out DIR`)"
        )
    witness = _witness_for(args.wtns, r1cs.num_wires, f"the circuit {args.r1cs}")
    vk = files.read_vk(folder / params_dir.VK_FILE)
    timer = Timer()
    backend = _backend(args, timer)
    with (
        _naming_witness(args.wtns),
        contextlib.closing(_progress(args, "prove", PROVE_STEPS)) as progress,
    ):
        result = run_prover(
            backend,
            lambda: (with_input_rows(r1cs.matrices), witness),
            lambda: ParamsFile(folder / params_dir.PARAMS_FILE, _key_log(args)).load(backend),
            seed=args.seed,
            progress=progress,
            convention=BELLPERSON,
        )
    out = _write_outputs(args, backend, result, vk)
    files.write_vk(out / params_dir.VK_FILE, vk)
    return 0


def setup(args: argparse.Namespace) -> int:
    """``cuzk setup --r1cs``: cuzk parameters for a circom circuit, plus verification_key.json."""
    r1cs = read_r1cs(args.r1cs)
    backend = _backend(args, Timer())
    progress = _progress(args, "setup", SETUP_STEPS)
    matrices = with_input_rows(r1cs.matrices)
    pk = generate_parameters(matrices, seed=args.seed, progress=progress, backend=backend)
    progress.close()
    folder = Path(args.out)
    params_dir.write_params_dir(folder, pk, _circuit_record(r1cs))
    write_vk_json(folder / SNARKJS_VK_FILE, pk.vk)
    print(f"wrote {folder}/{params_dir.PARAMS_FILE}, {params_dir.VK_FILE} and {SNARKJS_VK_FILE}")
    return 0


def check(args: argparse.Namespace) -> int:
    """``cuzk check``: exit 0 when the witness satisfies the circuit, else 1 and the constraint."""
    r1cs = read_r1cs(args.r1cs)
    witness = _witness_for(args.wtns, r1cs.num_wires, f"the circuit {args.r1cs}")
    backend = _backend(args, Timer())
    a, b, c = backend.evaluate_r1cs(r1cs.matrices, witness)
    failing = first_unsatisfied(a, b, c)
    if failing is None:
        print(f"satisfied: all {r1cs.num_constraints} constraints hold")
        return 0
    print(f"unsatisfied: constraint {failing} does not hold (A·B ≠ C)")
    return 1
