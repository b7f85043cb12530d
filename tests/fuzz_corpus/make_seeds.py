"""Write the valid seed files the fuzz tests mutate (run once; the outputs are committed).

    python tests/fuzz_corpus/make_seeds.py      # needs `npm ci` (snarkjs) for the zkeys

Two hand-made circuits: ``all_public`` (a·a = b, both public: no private wires, the empty-batch
case) and ``one_private`` (a·a = b, a·b = c with a private). For each, snarkjs makes a zkey with
one contribution, its verification_key.json and a proof; cuzk makes its own parameters folder and
a proof. Each file lands in the folder named after the parser that reads it, as ``seed-*``.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from circomfiles import r1cs_bytes, wtns_bytes  # noqa: E402

from cuzk_core.cli import main  # noqa: E402

LABELS = struct.pack("<3Q", 0, 1, 2)
SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"
PTAU = REPO / "tests" / "circom" / "pot10_final.ptau"
CIRCUITS = {
    # wires 1, b (output), a (public input); with a label section as circom writes one
    "all_public": (
        r1cs_bytes([([(2, 1)], [(2, 1)], [(1, 1)])], 3, 1, 1, 0, extra=[(3, LABELS)]),
        [1, 9, 3],
    ),
    # wires 1, b (output), a (private input), c (internal)
    "one_private": (
        r1cs_bytes([([(2, 1)], [(2, 1)], [(1, 1)]), ([(2, 1)], [(1, 1)], [(3, 1)])], 4, 1, 0, 1),
        [1, 9, 3, 27],
    ),
}


def snarkjs(*args: object) -> None:
    subprocess.run([str(SNARKJS), *map(str, args)], check=True, capture_output=True)


def cuzk(*args: object) -> None:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(["-q", *map(str, args)]) == 0


def seed(parser: str, name: str, source: Path) -> None:
    folder = HERE / parser
    folder.mkdir(exist_ok=True)
    shutil.copyfile(source, folder / f"seed-{name}")


def main_() -> None:
    work = Path(tempfile.mkdtemp())
    for name, (r1cs, witness) in CIRCUITS.items():
        r1cs_path, wtns_path = work / f"{name}.r1cs", work / f"{name}.wtns"
        r1cs_path.write_bytes(r1cs)
        wtns_path.write_bytes(wtns_bytes(witness))
        zkey0, zkey = work / f"{name}_0.zkey", work / f"{name}.zkey"
        snarkjs("groth16", "setup", r1cs_path, PTAU, zkey0)
        snarkjs("zkey", "contribute", zkey0, zkey, "--name=seed", "-e=fuzz seed entropy")
        snarkjs("zkey", "export", "verificationkey", zkey, work / f"{name}_vk.json")
        proof, public = work / f"{name}_proof.json", work / f"{name}_public.json"
        snarkjs("groth16", "prove", zkey, wtns_path, proof, public)
        params, out = work / f"{name}_params", work / f"{name}_out"
        cuzk("setup", "--r1cs", r1cs_path, "--out", params, "--seed", 1)
        cuzk("prove", "--r1cs", r1cs_path, "--wtns", wtns_path, "--params", params, "--out", out)
        seed("r1cs", f"{name}.r1cs", r1cs_path)
        seed("wtns", f"{name}.wtns", wtns_path)
        seed("zkey", f"{name}.zkey", zkey)
        seed("vk_json", f"{name}-snarkjs.json", work / f"{name}_vk.json")
        seed("vk_json", f"{name}-cuzk.json", params / "verification_key.json")
        seed("proof_json", f"{name}-snarkjs.json", proof)
        seed("proof_json", f"{name}-cuzk.json", out / "proof.json")
        seed("public_json", f"{name}.json", public)
        seed("params_bin", f"{name}.bin", params / "params.bin")
        seed("vk_bin", f"{name}.bin", params / "vk.bin")
        seed("proof_bin", f"{name}.bin", out / "proof.bin")
        seed("circuit_json", f"{name}.json", params / "circuit.json")
    porep = work / "porep.json"
    porep.write_text(json.dumps({"circuit": "porep-lite", "challenges": 1, "depth": 3, "seed": 0}))
    seed("circuit_json", "porep-lite.json", porep)
    shutil.rmtree(work)


if __name__ == "__main__":
    main_()
