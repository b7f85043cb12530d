"""circom and snarkjs for real: compile, set up, prove with cuzk and snarkjs, verify both ways.

Needs node and the pinned tools from package.json (``npm ci`` in the repository root); the tests
skip only when node itself is absent. Circuits are compiled once per session for bls12381
against the committed prepared powers of tau (tests/circom/make_ptau.sh made it).
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import attrs
import numpy as np
import pytest

from cuzk_core.cli import main
from cuzk_core.curve.g2 import G2_GENERATOR
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.field.fq import fq_sqrt
from cuzk_core.groth16.key_cache import QUERIES, read_header
from cuzk_core.groth16.key_convert import zkey_to_cache
from cuzk_core.groth16.key_sources import open_cache
from cuzk_core.groth16.qap import SNARKJS, with_input_rows
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.interop.fields import BN128_Q, BN128_R
from cuzk_core.interop.r1cs import read_r1cs
from cuzk_core.interop.snarkjs_json import proof_to_json, vk_to_json
from cuzk_core.interop.zkey import Zkey
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import KeyStorage

REPO = Path(__file__).resolve().parents[1]
CIRCOM = REPO / "tests" / "circom"
BIN = REPO / "node_modules" / ".bin"
PTAU = CIRCOM / "pot10_final.ptau"
INPUTS = {
    "poseidon_hash": {"a": "1", "b": "2"},
    "range_compare": {"value": "1000", "bound": "4000000000"},
    "many_public": {
        "xs": [str(i + 1) for i in range(40)],
        "ws": [str(3 * i + 2) for i in range(40)],
    },
    "all_public": {"a": "6", "b": "7"},
    "unused_input": {"a": "3", "spare": "4"},
    "empty": {},
}

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None,
    reason="node is not installed: the circom/snarkjs interop tests need node and `npm ci`",
)


def available_backends() -> list[str]:
    """Every backend that can run on this machine."""
    return sorted(name for name, info in load_plugins().backends.items() if info.available)


def run_tool(tool: str, *args: str | Path, cwd: Path | None = None, check: bool = True):
    """Run a node tool from node_modules/.bin; a failure shows its output."""
    done = subprocess.run(
        [str(BIN / tool), *map(str, args)], cwd=cwd, capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        pytest.fail(f"{tool} {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}")
    return done


def snarkjs_verifies(vk: Path, public: Path, proof: Path) -> bool:
    """`snarkjs groth16 verify`: True for OK, False for a rejected proof."""
    done = run_tool("snarkjs", "groth16", "verify", vk, public, proof, check=False)
    ok = done.returncode == 0 and "OK" in done.stdout
    assert ok or done.returncode != 0, done.stdout
    return ok


def cuzk(*args: str | Path) -> tuple[int, str, str]:
    """Run the ``cuzk`` command line in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["-q", *map(str, args)])
    return code, out.getvalue(), err.getvalue()


@attrs.frozen
class Built:
    """One compiled circuit with its snarkjs artifacts."""

    name: str
    folder: Path

    def path(self, suffix: str) -> Path:
        return self.folder / f"{self.name}{suffix}"

    r1cs = property(lambda self: self.path(".r1cs"))
    wtns = property(lambda self: self.path(".wtns"))
    zkey = property(lambda self: self.path(".zkey"))
    vk = property(lambda self: self.path("_vk.json"))
    proof = property(lambda self: self.path("_proof.json"))
    public = property(lambda self: self.path("_public.json"))


def build(name: str, folder: Path) -> Built:
    """Compile for bls12381, set up with two contributions, compute the witness, prove."""
    built = Built(name, folder)
    # circom2 (WebAssembly) sees only its working directory: run it from / with relative paths.
    source = (CIRCOM / f"{name}.circom").relative_to("/")
    library = (REPO / "node_modules").relative_to("/")
    target = folder.relative_to("/")
    run_tool(
        "circom2",
        source,
        "--r1cs",
        "--wasm",
        "--prime",
        "bls12381",
        "-l",
        library,
        "-o",
        target,
        cwd=Path("/"),
    )
    run_tool("snarkjs", "groth16", "setup", built.r1cs, PTAU, built.path("_0.zkey"))
    run_tool(
        "snarkjs",
        "zkey",
        "contribute",
        built.path("_0.zkey"),
        built.path("_1.zkey"),
        "--name=first",
        "-e=first entropy",
    )
    run_tool(
        "snarkjs",
        "zkey",
        "contribute",
        built.path("_1.zkey"),
        built.zkey,
        "--name=second",
        "-e=second entropy",
    )
    run_tool("snarkjs", "zkey", "export", "verificationkey", built.zkey, built.vk)
    inputs = built.path("_input.json")
    inputs.write_text(json.dumps(INPUTS[name]))
    wasm = folder / f"{name}_js" / f"{name}.wasm"
    run_tool("snarkjs", "wtns", "calculate", wasm, inputs, built.wtns)
    run_tool("snarkjs", "groth16", "prove", built.zkey, built.wtns, built.proof, built.public)
    return built


@pytest.fixture(scope="session")
def circuits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    """The test circuits, built once per session."""
    if not (BIN / "snarkjs").exists() or not (BIN / "circom2").exists():
        pytest.fail("node_modules lacks snarkjs or circom2: run `npm ci` in the repository root")
    folder = tmp_path_factory.mktemp("circom")
    return {name: build(name, folder) for name in INPUTS}


@pytest.fixture(scope="session", params=available_backends())
def profile(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A profile selecting each available backend in turn."""
    path = tmp_path_factory.mktemp("profiles") / f"{request.param}.toml"
    path.write_text(f'extends = "cpu"\nbackend = "{request.param}"\n')
    return path


def tampered_wtns(built: Built, target: Path) -> Path:
    """The circuit's witness with its last wire changed: it no longer satisfies the circuit."""
    data = bytearray(built.wtns.read_bytes())
    last = int.from_bytes(data[-32:], "little")
    data[-32:] = ((last + 1) % FR_MODULUS).to_bytes(32, "little")
    target.write_bytes(bytes(data))
    return target


# ------------------------------------------------------------------ cuzk proves, snarkjs verifies


@pytest.mark.parametrize("name", list(INPUTS))
def test_cuzk_proof_of_a_zkey_verifies_with_snarkjs(circuits, profile, name, tmp_path: Path):
    built = circuits[name]
    out = tmp_path / "out"
    code, stdout, stderr = cuzk(
        "--profile", profile, "prove", "--zkey", built.zkey, "--wtns", built.wtns, "--out", out
    )
    assert code == 0, stderr
    written = {p.name for p in out.iterdir()}
    assert {"proof.json", "public.json", "proof.bin", "timings.json"} <= written
    assert json.loads((out / "public.json").read_text()) == json.loads(built.public.read_text())
    assert json.loads((out / "verification_key.json").read_text()) == json.loads(
        built.vk.read_text()
    )
    assert snarkjs_verifies(built.vk, out / "public.json", out / "proof.json")
    code, stdout, _ = cuzk(
        "verify", "--vk", built.vk, "--proof", out / "proof.json", "--public", out / "public.json"
    )
    assert (code, stdout.strip()) == (0, "valid")
    timings = json.loads((out / "timings.json").read_text())
    assert "msm_h" in json.dumps(timings) and "ntt_h" in json.dumps(timings)


@pytest.mark.parametrize("name", list(INPUTS))
def test_snarkjs_proof_verifies_with_cuzk(circuits, name):
    built = circuits[name]
    code, stdout, stderr = cuzk(
        "verify", "--vk", built.vk, "--proof", built.proof, "--public", built.public
    )
    assert (code, stdout.strip()) == (0, "valid"), stderr


def test_seed_makes_proofs_reproducible(circuits, tmp_path: Path):
    built = circuits["range_compare"]
    proofs = []
    for seed, folder in ((7, "a"), (7, "b"), (8, "c")):
        args = ["prove", "--zkey", built.zkey, "--wtns", built.wtns, "--seed", seed]
        assert cuzk(*args, "--out", tmp_path / folder)[0] == 0
        proofs.append((tmp_path / folder / "proof.json").read_text())
    assert proofs[0] == proofs[1] != proofs[2]


def test_mmap_key_storage_proves_the_same(circuits, tmp_path: Path):
    built = circuits["many_public"]
    profile = tmp_path / "mmap.toml"
    profile.write_text('extends = "cpu"\n[memory]\nkey_storage = "mmap"\n')
    out = tmp_path / "out"
    args = ["prove", "--zkey", built.zkey, "--wtns", built.wtns, "--seed", 1, "--out"]
    assert cuzk("--profile", profile, *args, out)[0] == 0
    assert cuzk(*args, tmp_path / "host")[0] == 0
    assert (out / "proof.json").read_text() == (tmp_path / "host" / "proof.json").read_text()


# ------------------------------------------------------------------ tampering fails both ways


def test_tampered_proof_or_public_input_fails_in_both_verifiers(circuits, tmp_path: Path):
    built = circuits["many_public"]
    out = tmp_path / "out"
    assert cuzk("prove", "--zkey", built.zkey, "--wtns", built.wtns, "--out", out)[0] == 0
    for proof_path, public_path in (
        (out / "proof.json", out / "public.json"),
        (built.proof, built.public),
    ):
        public = json.loads(public_path.read_text())
        public[3] = str(int(public[3]) + 1)
        bad_public = tmp_path / "bad_public.json"
        bad_public.write_text(json.dumps(public))
        proof = json.loads(proof_path.read_text())
        swapped = tmp_path / "swapped.json"
        swapped.write_text(json.dumps({**proof, "pi_a": proof["pi_c"], "pi_c": proof["pi_a"]}))
        for proof_file, public_file in ((proof_path, bad_public), (swapped, public_path)):
            assert not snarkjs_verifies(built.vk, public_file, proof_file)
            code, stdout, _ = cuzk(
                "verify", "--vk", built.vk, "--proof", proof_file, "--public", public_file
            )
            assert code == 1 and stdout.startswith("invalid: the pairing check failed")
        off_curve = tmp_path / "off_curve.json"
        pi_a = [proof["pi_a"][0], str(int(proof["pi_a"][1]) + 1), "1"]
        off_curve.write_text(json.dumps({**proof, "pi_a": pi_a}))
        assert not snarkjs_verifies(built.vk, public_path, off_curve)
        code, _, stderr = cuzk(
            "verify", "--vk", built.vk, "--proof", off_curve, "--public", public_path
        )
        assert code == 2 and "pi_a is not a point of the G1 subgroup" in stderr


# ------------------------------------------------------------------ cuzk's own params


def test_cuzk_params_for_a_circom_circuit_verify_with_snarkjs(circuits, tmp_path: Path):
    built = circuits["range_compare"]
    params, out = tmp_path / "params", tmp_path / "out"
    assert cuzk("setup", "--r1cs", built.r1cs, "--out", params, "--seed", 5)[0] == 0
    args = ["prove", "--r1cs", built.r1cs, "--wtns", built.wtns, "--params", params]
    code, _, stderr = cuzk(*args, "--out", out)
    assert code == 0, stderr
    assert snarkjs_verifies(
        params / "verification_key.json", out / "public.json", out / "proof.json"
    )
    code, stdout, _ = cuzk(
        "verify",
        "--vk",
        out / "vk.bin",
        "--proof",
        out / "proof.bin",
        "--public",
        out / "public.json",
    )
    assert (code, stdout.strip()) == (0, "valid")
    other = circuits["many_public"]
    code, _, stderr = cuzk(
        "prove",
        "--r1cs",
        other.r1cs,
        "--wtns",
        other.wtns,
        "--params",
        params,
        "--out",
        tmp_path / "never",
    )
    assert code == 2 and "made for another circuit" in stderr
    assert not (tmp_path / "never").exists()


def test_a_circuit_whose_header_counts_a_dropped_private_input_proves_every_way(
    circuits, tmp_path: Path
):
    """circom drops an unused private input from the wires but counts it in nPrvIn: the r1cs
    is read anyway (by setup, check and prove), and every key proves what snarkjs accepts."""
    built = circuits["unused_input"]
    params, zkey = tmp_path / "params", tmp_path / "dev.zkey"
    assert cuzk("check", "--r1cs", built.r1cs, "--wtns", built.wtns)[0] == 0
    assert cuzk("setup", "--r1cs", built.r1cs, "--out", params, "--seed", 3)[0] == 0
    assert cuzk("setup", "--r1cs", built.r1cs, "--zkey", zkey, "--seed", 3)[0] == 0
    for key, vk in (
        (["--r1cs", built.r1cs, "--params", params], params / "verification_key.json"),
        (["--zkey", zkey, "--r1cs", built.r1cs], tmp_path / "dev.vk.json"),
        (["--zkey", built.zkey, "--r1cs", built.r1cs], built.vk),
    ):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        code, _, stderr = cuzk("prove", *key, "--wtns", built.wtns, "--out", out)
        assert code == 0, stderr
        assert snarkjs_verifies(vk, out / "public.json", out / "proof.json")


# ------------------------------------------------------------------ cuzk's own zkeys


@pytest.mark.parametrize("name", ["poseidon_hash", "many_public", "all_public", "empty"])
def test_a_zkey_from_cuzk_setup_proves_with_snarkjs_and_with_cuzk(circuits, name, tmp_path: Path):
    built = circuits[name]
    zkey, vk = tmp_path / "dev.zkey", tmp_path / "vk.json"
    code, stdout, stderr = cuzk("setup", "--r1cs", built.r1cs, "--zkey", zkey, "--seed", 11)
    assert code == 0, stderr
    assert "WARNING" in stderr and "development key" in stderr and "--seed 11" in stderr
    assert stdout.strip() == f"wrote {zkey}, {tmp_path / 'dev.vk.json'}"
    run_tool("snarkjs", "zkey", "export", "verificationkey", zkey, vk)
    assert json.loads(vk.read_text()) == json.loads((tmp_path / "dev.vk.json").read_text())
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    run_tool("snarkjs", "groth16", "prove", zkey, built.wtns, proof, public)
    assert json.loads(public.read_text()) == json.loads(built.public.read_text())
    assert snarkjs_verifies(vk, public, proof)
    assert not snarkjs_verifies(built.vk, public, proof)  # another key's proof
    out = tmp_path / "out"
    code, _, stderr = cuzk("prove", "--zkey", zkey, "--wtns", built.wtns, "--out", out)
    assert code == 0, stderr
    assert snarkjs_verifies(vk, out / "public.json", out / "proof.json")
    code, stdout, _ = cuzk("verify", "--vk", vk, "--proof", proof, "--public", public)
    assert (code, stdout.strip()) == (0, "valid")


def test_zkey_export_is_reproducible_by_seed_and_reads_back_as_the_generated_key(
    circuits, tmp_path: Path
):
    built = circuits["range_compare"]
    paths = [tmp_path / f"{tag}.zkey" for tag in ("a", "b", "c")]
    for path, seed in zip(paths, (4, 4, 5), strict=True):
        assert cuzk("setup", "--r1cs", built.r1cs, "--zkey", path, "--seed", seed)[0] == 0
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()
    r1cs = read_r1cs(built.r1cs)
    matrices = with_input_rows(r1cs.matrices)
    generated = generate_parameters(matrices, seed=4, convention=SNARKJS)
    written = Zkey(paths[0])
    read_back = written.proving_key()
    assert all(getattr(read_back, q).equals(getattr(generated, q)) for q, _ in QUERIES)
    assert written.verifying_key().to_bytes() == generated.vk.to_bytes()
    rows = written.matrices()
    for ours, theirs in ((rows.a, matrices.a), (rows.b, matrices.b)):
        assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.cols, theirs.cols)
        assert np.array_equal(ours.coeffs, theirs.coeffs)
    snarkjs_zkey = Zkey(built.zkey)  # same shape as snarkjs's own key for the circuit
    assert written.header == snarkjs_zkey.header
    assert written.container.sections.keys() == snarkjs_zkey.container.sections.keys()
    assert written.container.sections[4][0].size == snarkjs_zkey.container.sections[4][0].size


def test_zkey_setup_bad_arguments_are_one_line_and_write_nothing(circuits, tmp_path: Path):
    built = circuits["range_compare"]
    zkey = tmp_path / "k.zkey"
    cases = [
        (["--zkey", zkey], "--zkey needs --r1cs"),
        (["--r1cs", built.r1cs, "--zkey", zkey, "--out", tmp_path / "p"], "give one of them"),
        (["--r1cs", built.wtns, "--zkey", zkey], "not a .r1cs file"),
        ([], "setup needs --out"),
    ]
    for args, message in cases:
        code, _, stderr = cuzk("setup", *args)
        assert code == 2 and message in stderr and stderr.count("\n") == 1, stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ witness checks


def test_check_names_the_first_failing_constraint(circuits, tmp_path: Path):
    built = circuits["range_compare"]
    code, stdout, _ = cuzk("check", "--r1cs", built.r1cs, "--wtns", built.wtns)
    assert code == 0 and stdout.startswith("satisfied")
    bad = tampered_wtns(built, tmp_path / "bad.wtns")
    code, stdout, _ = cuzk("check", "--r1cs", built.r1cs, "--wtns", bad)
    assert code == 1 and stdout.startswith("unsatisfied: constraint ")
    index = stdout.split()[2]
    out = tmp_path / "out"
    args = ["--wtns", bad, "--r1cs", built.r1cs, "--out", out]
    code, _, stderr = cuzk("prove", "--zkey", built.zkey, *args)
    assert (
        code == 2
        and stderr == f"cuzk: error: {bad}: the witness does not satisfy constraint {index}\n"
    )
    params = tmp_path / "params"
    assert cuzk("setup", "--r1cs", built.r1cs, "--out", params)[0] == 0
    code, _, stderr = cuzk("prove", "--params", params, *args)
    assert code == 2 and f"constraint {index}" in stderr
    assert not out.exists()


# ------------------------------------------------------------------ bad input


def fake_bn128_zkey(path: Path) -> Path:
    """A Groth16 zkey header for bn128: enough for cuzk to say what it is."""
    header = struct.pack("<I", 32) + BN128_Q.to_bytes(32, "little")
    header += struct.pack("<I", 32) + BN128_R.to_bytes(32, "little")
    sections = [(1, struct.pack("<I", 1)), (2, header)]
    data = b"zkey" + struct.pack("<II", 1, len(sections))
    for section_id, body in sections:
        data += struct.pack("<IQ", section_id, len(body)) + body
    path.write_bytes(data)
    return path


def test_bad_inputs_are_one_line_exit_2_and_write_nothing(circuits, tmp_path: Path):
    built, other = circuits["range_compare"], circuits["poseidon_hash"]
    zkey = built.zkey.read_bytes()
    truncated = tmp_path / "truncated.zkey"
    truncated.write_bytes(zkey[: len(zkey) // 2])
    corrupt = tmp_path / "corrupt.zkey"
    corrupt.write_bytes(b"zkez" + zkey[4:])
    short_wtns = tmp_path / "short.wtns"
    short_wtns.write_bytes(built.wtns.read_bytes()[:-40])
    plonk = tmp_path / "plonk.zkey"
    run_tool("snarkjs", "plonk", "setup", built.r1cs, PTAU, plonk)
    cases = [
        (truncated, built.wtns, "truncated"),
        (corrupt, built.wtns, "not a .zkey file"),
        (plonk, built.wtns, "a PLONK zkey; cuzk proves Groth16 over bls12381 only"),
        (fake_bn128_zkey(tmp_path / "bn.zkey"), built.wtns, "a zkey for bn128"),
        (built.zkey, other.wtns, "the witness has 520 values"),
        (built.zkey, short_wtns, "truncated"),
        (built.zkey, tmp_path / "absent.wtns", "no such file"),
    ]
    for zkey_path, wtns_path, message in cases:
        out = tmp_path / "out"
        code, _, stderr = cuzk("prove", "--zkey", zkey_path, "--wtns", wtns_path, "--out", out)
        assert code == 2, (message, stderr)
        assert stderr.count("\n") == 1 and stderr.startswith("cuzk: error: ")
        assert message in stderr and ("wtns" in stderr or str(zkey_path) in stderr)
        assert not out.exists()


def test_console_script_prints_no_traceback(circuits, tmp_path: Path):
    cuzk_script = shutil.which("cuzk")
    if cuzk_script is None:
        pytest.skip("the cuzk console script is not on PATH")
    built = circuits["range_compare"]
    done = subprocess.run(
        [cuzk_script, "prove", "--zkey", built.wtns, "--wtns", built.wtns, "--out", tmp_path],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == f"cuzk: error: {built.wtns}: not a .zkey file (magic b'wtns', expected b'zkey')\n"
    )


# ------------------------------------------------------------------ formats, checked by snarkjs


def test_snarkjs_writes_fq2_as_c0_then_c1(circuits):
    """γ₂ is the G2 generator in every snarkjs key: its JSON shows the coordinate order."""
    vk = json.loads(circuits["range_compare"].vk.read_text())
    (x0, x1), (y0, y1) = G2_GENERATOR
    assert vk["vk_gamma_2"] == [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


@pytest.mark.parametrize("name", list(INPUTS))
def test_zkey_reader_matches_snarkjs_export(circuits, name):
    built = circuits[name]
    zkey = Zkey(built.zkey)
    assert vk_to_json(zkey.verifying_key()) == json.loads(built.vk.read_text())
    pk = zkey.proving_key()
    header = zkey.header
    assert len(pk.a) == len(pk.b_g2) == header.num_vars and len(pk.h) == header.domain_size
    assert pk.dense_ab


def test_a_zkey_converts_into_the_key_cache_once(circuits, tmp_path: Path):
    zkey = Zkey(circuits["many_public"].zkey)
    cache = tmp_path / "k.cuzkkey"
    zkey_to_cache(zkey, cache)
    header = read_header(cache)
    assert header.source_kind == "zkey" and header.dense_ab
    for storage in (KeyStorage.HOST, KeyStorage.MMAP):
        loaded = open_cache(cache, header, zkey.path, storage, lambda s, d, p: np.zeros(s, d))
        direct = zkey.proving_key()
        assert all(getattr(loaded, q).equals(getattr(direct, q)) for q, _ in QUERIES)
        assert loaded.vk.to_bytes() == direct.vk.to_bytes() and loaded.dense_ab


def test_a_zkey_whose_vk_point_is_outside_the_subgroup_is_refused(circuits, tmp_path: Path):
    built = circuits["many_public"]
    zkey = Zkey(built.zkey)
    x = 5  # a point of E(Fq) outside the order-r subgroup (the cofactor is not 1)
    while (y := fq_sqrt((x**3 + 4) % FQ_MODULUS)) is None:
        x += 1
    mont = [(c << 384) % FQ_MODULUS for c in (x, y)]
    header = zkey.container.sections[2][0]
    data = bytearray(built.zkey.read_bytes())
    alpha = header.offset + 4 + 48 + 4 + 32 + 12  # after n8q, q, n8r, r, nVars, nPublic, domain
    data[alpha : alpha + 96] = b"".join(c.to_bytes(48, "little") for c in mont)
    bad = tmp_path / "bad.zkey"
    bad.write_bytes(bytes(data))
    message = r"bad\.zkey: section 2 \(header\): alpha_1 is not in the prime-order subgroup"
    with pytest.raises(FormatError, match=message):
        zkey_to_cache(Zkey(bad), tmp_path / "k.cuzkkey")
    assert not (tmp_path / "k.cuzkkey").exists()
    code, _, stderr = cuzk("prove", "--zkey", bad, "--wtns", built.wtns, "--out", tmp_path / "o")
    assert code == 2 and "alpha_1 is not in the prime-order subgroup" in stderr


def test_the_daemon_proves_a_zkey_by_upload_and_by_path_under_its_roots(circuits, tmp_path):
    """``cuzk serve`` with a zkey key: the witness uploaded, then named by a path under the
    input roots; cuzk and snarkjs verify the proofs; a path outside the roots is refused."""
    pytest.importorskip("grpc")
    from test_service import Daemon

    from cuzk_core.groth16 import files
    from cuzk_core.service.client import ServiceError
    from cuzk_core.service.proto import cuzk_pb2 as pb

    built = circuits["poseidon_hash"]
    daemon = Daemon(tmp_path, built.zkey, config=f"[inputs]\nroots = ['{built.folder}']\n")
    try:
        daemon.start()
        for how, option in (("upload", "--wtns"), ("path", "--wtns-path")):
            out = tmp_path / how
            code, _, err = cuzk("client", "prove", "--addr", daemon.address, "--key", "k",
                                option, built.wtns, "--out", out)  # fmt: skip
            assert code == 0, err
            code, stdout, _ = cuzk("verify", "--vk", out / "vk.bin", "--proof", out / "proof.bin",
                                   "--public", out / "public.json")  # fmt: skip
            assert (code, stdout) == (0, "valid\n")
            proof_json = out / "proof.json"
            proof_json.write_text(json.dumps(proof_to_json(files.read_proof(out / "proof.bin"))))
            assert snarkjs_verifies(built.vk, out / "public.json", proof_json)
        with daemon.client() as client, pytest.raises(ServiceError, match="outside the input"):
            client.submit(pb.SubmitProofRequest(key_id="k", witness_path="/etc/hostname"))
    finally:
        daemon.stop()
