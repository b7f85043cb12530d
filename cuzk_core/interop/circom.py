"""The circom and snarkjs use-cases: prove a snarkjs zkey, or make and use cuzk's own parameters
for a circom circuit, and check a witness against its circuit.

``zkey_job`` proves with a snarkjs proving key (snarkjs's H convention, roots from 5);
``setup_r1cs`` and ``params_job`` make and use cuzk parameters for a circom circuit (bellperson's
convention); ``setup_zkey`` makes a development zkey that snarkjs and cuzk both prove with.
Either proof is one ``snarkjs groth16 verify`` accepts once written as proof.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.cache import file_sha256
from cuzk_core.errors import FormatError
from cuzk_core.groth16 import params_dir
from cuzk_core.groth16.key_sources import Log, ParamsFile, ZkeyFile, stderr_log
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey
from cuzk_core.groth16.qap import SNARKJS, with_input_rows
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import Assignment, KeySource, R1CSWitness, WitnessSource
from cuzk_core.interop.r1cs import CircomR1CS, read_r1cs
from cuzk_core.interop.wtns import read_wtns
from cuzk_core.interop.zkey import Zkey
from cuzk_core.interop.zkey_writer import write_zkey
from cuzk_core.progress import Progress

CIRCOM_CIRCUIT = "circom-r1cs"
"""The circuit name ``setup --r1cs`` records in circuit.json."""


@attrs.frozen
class CircomJob:
    """What a circom proof needs: the witness source, the key, and the verifying key it checks
    against; ``label`` names the circuit and ``key_name`` the key (a file or folder) in messages."""

    source: WitnessSource
    key: KeySource
    vk: VerifyingKey
    label: str
    key_name: str


@attrs.frozen(eq=False)
class ZkeyWitness:
    """A witness proven against a zkey's own rows: A and B with the input rows, no C."""

    zkey: Zkey
    witness: np.ndarray

    def assign(self, backend: Backend) -> Assignment:
        """The zkey's coefficient rows and the witness (unchecked: there are no C rows)."""
        return Assignment(self.zkey.matrices(), self.witness, has_c=False)


def r1cs_digest(path: Path) -> str:
    """sha256 of a circuit file, so parameters can tell which circuit they were made for."""
    return file_sha256(path)


def circuit_record(r1cs: CircomR1CS) -> dict[str, Any]:
    """What circuit.json says about a circom circuit, so prove can tell it was this one."""
    return {
        "circuit": CIRCOM_CIRCUIT,
        "r1cs_sha256": r1cs_digest(r1cs.path),
        "wires": r1cs.num_wires,
        "public": r1cs.num_public,
        "constraints": r1cs.num_constraints,
    }


def zkey_job(
    zkey_path: str, wtns_path: str, r1cs_path: str | None = None, log: Log = stderr_log
) -> CircomJob:
    """Prove a witness with a snarkjs zkey; with the circuit's .r1cs the witness is checked too.
    ``log`` takes the key cache's notes (the first proof converts the zkey into it)."""
    zkey = Zkey(zkey_path)
    header = zkey.header
    witness = read_wtns(wtns_path, header.num_vars, f"the zkey {zkey_path}")
    source: WitnessSource = ZkeyWitness(zkey, witness)
    if r1cs_path is not None:
        r1cs = read_r1cs(r1cs_path)
        if (r1cs.num_wires, r1cs.num_public) != (header.num_vars, header.num_public):
            raise FormatError(
                f"{r1cs_path}: {r1cs.num_wires} wires and {r1cs.num_public} public signals, but "
                f"{zkey_path} has {header.num_vars} and {header.num_public}: not the same circuit"
            )
        source = R1CSWitness(r1cs.matrices, witness)
    return CircomJob(
        source, ZkeyFile(zkey, log), zkey.verifying_key(), str(zkey_path), str(zkey_path)
    )


def params_job(folder: Path, r1cs_path: str, wtns_path: str, log: Log = stderr_log) -> CircomJob:
    """Prove a circom witness with parameters ``cuzk setup --r1cs`` made for the same circuit."""
    spec = params_dir.read_circuit_spec(folder)
    r1cs = read_r1cs(r1cs_path)
    if spec.get("circuit") != CIRCOM_CIRCUIT or spec.get("r1cs_sha256") != r1cs_digest(r1cs.path):
        raise FormatError(
            f"{folder / params_dir.CIRCUIT_FILE}: these parameters were made for another circuit "
            f"than {r1cs_path} (run `cuzk setup --r1cs {r1cs_path} --out DIR`)"
        )
    witness = read_wtns(wtns_path, r1cs.num_wires, f"the circuit {r1cs_path}")
    vk = params_dir.read_vk(folder)
    source = R1CSWitness(r1cs.matrices, witness)
    key = ParamsFile(folder / params_dir.PARAMS_FILE, log)
    return CircomJob(source, key, vk, str(r1cs_path), str(folder))


def setup_r1cs(
    r1cs_path: str, backend: Backend, seed: int | None, progress: Progress
) -> tuple[ProvingKey, dict[str, Any]]:
    """cuzk parameters for a circom circuit, and the circuit.json record that names it."""
    r1cs = read_r1cs(r1cs_path)
    matrices = with_input_rows(r1cs.matrices)
    pk = generate_parameters(matrices, seed=seed, progress=progress, backend=backend)
    return pk, circuit_record(r1cs)


def setup_zkey(
    r1cs_path: str, zkey_path: str | Path, backend: Backend, seed: int | None, progress: Progress
) -> VerifyingKey:
    """Generate a snarkjs-convention key for a circom circuit and write it as a zkey; its
    verifying key. The toxic waste comes from ``seed`` or the OS and lived in this process:
    development keys only."""
    r1cs = read_r1cs(r1cs_path)
    matrices = with_input_rows(r1cs.matrices)
    pk = generate_parameters(
        matrices, seed=seed, progress=progress, backend=backend, convention=SNARKJS
    )
    write_zkey(zkey_path, pk, matrices)
    return pk.vk


def check_witness(r1cs_path: str, wtns_path: str, backend: Backend) -> tuple[int, int | None]:
    """The circuit's constraint count, and the first constraint the witness breaks (or None)."""
    r1cs = read_r1cs(r1cs_path)
    witness = read_wtns(wtns_path, r1cs.num_wires, f"the circuit {r1cs_path}")
    a, b, c = backend.evaluate_r1cs(r1cs.matrices, witness)
    return r1cs.num_constraints, backend.first_unsatisfied(a, b, c)
