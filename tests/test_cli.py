"""The `cuzk` command line end to end: real proofs, the py_ecc oracle, and every bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import py_ecc_oracle
import pytest

from cuzk_core.circuits import PorepLite
from cuzk_core.cli import main
from cuzk_core.curve.serialize import g1_to_compressed
from cuzk_core.errors import FormatError
from cuzk_core.field.constants import FQ_MODULUS, FR_MODULUS
from cuzk_core.field.fq import fq_sqrt

SMALL = ["--circuit", "porep-lite", "--challenges", "1", "--depth", "3"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("CUZK_PROFILE", raising=False)
    monkeypatch.delenv("CUZK_TIMING", raising=False)


@pytest.fixture(scope="module")
def small_params(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("params")
    assert main(["setup", *SMALL, "--out", str(folder), "--seed", "3"]) == 0
    return folder


@pytest.fixture(scope="module")
def small_proof(small_params, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out")
    args = ["--profile", "cpu", "-q", "prove", "--params", str(small_params), "--out", str(out)]
    assert main([*args, "--seed", "7"]) == 0
    return out


def run_verify(folder: Path, capsys, **paths) -> tuple[int, str, str]:
    files = {"vk": folder / "vk.bin", "proof": folder / "proof.bin"}
    files["public"] = folder / "public.json"
    files.update(paths)
    code = main(["verify", *(a for k, v in files.items() for a in (f"--{k}", str(v)))])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_setup_writes_bellperson_files_and_the_key_cache(small_params):
    names = sorted(p.name for p in small_params.iterdir())
    assert names == ["circuit.json", "params.bin", "params.bin.cuzkkey", "vk.bin"]
    spec = json.loads((small_params / "circuit.json").read_text())
    assert spec == {"circuit": "porep-lite", "challenges": 1, "depth": 3, "seed": 0}


def test_prove_outputs_verify_with_cuzk_and_py_ecc(small_proof, capsys):
    assert len((small_proof / "proof.bin").read_bytes()) == 192
    public = json.loads((small_proof / "public.json").read_text())
    assert len(public) == 2 and all(isinstance(x, str) for x in public)  # root, one index
    assert run_verify(small_proof, capsys)[:2] == (0, "valid\n")
    assert py_ecc_oracle.verify_files(small_proof)


def test_timings_json_has_every_phase(small_proof):
    timings = json.loads((small_proof / "timings.json").read_text())
    names = {s["name"] for s in timings["spans"]}
    for phase in ("synthesis", "load_params", "pin", "ntt_h", "msm_h", "msm_l", "msm_a"):
        assert phase in names
    assert {"msm_b_g1", "msm_b_g2", "assemble", "unpin"} <= names
    assert {"job", "self_check"} <= names  # the CLI's own work before and after the proof
    span = timings["spans"][0]
    assert {"name", "start", "end", "parent", "backend"} <= set(span)


def help_text(capsys, *command: str) -> str:
    """What ``cuzk COMMAND --help`` prints."""
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def files_listed(text: str, mode: str = "") -> set[str]:
    """The files a help text says its command writes with ``mode`` ("", "--zkey" or "--r1cs"):
    a row "with A or B: …" only in those modes, every other row in every mode."""
    listed = set()
    for name, what in re.findall(r"^  ([\w.]+\.\w+) {2,}(.*)$", text, re.MULTILINE):
        only = re.match(r"with (--\S+(?: or --\S+)*):", what)
        if only is not None and mode not in only.group(1).split(" or "):
            continue
        listed.add(name)
    return listed


def test_prove_and_setup_write_the_files_their_help_lists(small_params, small_proof, capsys):
    assert {p.name for p in small_proof.iterdir()} == files_listed(help_text(capsys, "prove"))
    assert {p.name for p in small_params.iterdir()} == files_listed(help_text(capsys, "setup"))


def test_prove_help_gives_each_porep_lite_knob_and_its_default(capsys):
    text = " ".join(help_text(capsys, "prove").split())
    flags = {"seed": "--circuit-seed"}
    for knob, default in PorepLite().knobs().items():
        flag = flags.get(knob, f"--{knob}")
        described = re.search(rf" {flag} [A-Z_]+ porep-lite: [^-]*?\(default ([^)]*)\)", text)
        assert described is not None and described.group(1) == str(default), flag
    assert "--circuit CIRCUIT circuit name: porep-lite (default porep-lite)" in text


def test_prove_and_setup_help_list_the_snarkjs_files(capsys):
    prove = help_text(capsys, "prove")
    assert files_listed(prove, "--zkey") == {
        "proof.bin",
        "vk.bin",  # written with --zkey too: the help once said otherwise
        "public.json",
        "timings.json",
        "proof.json",
        "verification_key.json",
    }
    assert files_listed(prove, "--r1cs") == files_listed(prove, "--zkey")
    setup = help_text(capsys, "setup")
    assert files_listed(setup, "--r1cs") == files_listed(setup) | {"verification_key.json"}


def test_a_proof_leaves_no_snarkjs_files_of_an_earlier_proof_in_its_folder(
    small_params, small_proof, tmp_path, capsys
):
    """An embedded-circuit proof into a folder where a circom proof wrote snarkjs's files:
    theirs would pair an old proof with this public.json, so they go; other files stay."""
    for name in ("proof.json", "verification_key.json", "notes.txt"):
        (tmp_path / name).write_text("{}")
    args = ["prove", "--params", str(small_params), "--out", str(tmp_path), "--seed", "7"]
    assert main([*args, "--profile", "cpu", "-q"]) == 0
    listed = files_listed(help_text(capsys, "prove"))
    assert {p.name for p in tmp_path.iterdir()} == listed | {"notes.txt"}
    assert (tmp_path / "proof.bin").read_bytes() == (small_proof / "proof.bin").read_bytes()


def test_same_seed_byte_identical_proof(small_params, small_proof, tmp_path):
    # small_proof gave its global options before the command, this one after
    args = ["prove", "--params", str(small_params), "--out", str(tmp_path), "--seed", "7"]
    assert main([*args, "--profile", "cpu", "-q"]) == 0
    assert (tmp_path / "proof.bin").read_bytes() == (small_proof / "proof.bin").read_bytes()
    assert json.loads((tmp_path / "timings.json").read_text())["profile"] == "cpu"


def test_changed_public_input_fails_both_verifiers(small_proof, tmp_path, capsys):
    public = json.loads((small_proof / "public.json").read_text())
    public[1] = str(int(public[1]) + 1)
    changed = tmp_path / "public.json"
    changed.write_text(json.dumps(public))
    code, out, _ = run_verify(small_proof, capsys, public=changed)
    assert code == 1 and out.startswith("invalid: ")
    proof = (small_proof / "proof.bin").read_bytes()
    vk = (small_proof / "vk.bin").read_bytes()
    assert not py_ecc_oracle.verify(vk, proof, [int(x) for x in public])


@pytest.mark.parametrize("bit", [8 * 20 + 3, 8 * 100 + 1, 8 * 180 + 6])
def test_flipped_proof_bit_fails_both_verifiers(small_proof, tmp_path, capsys, bit):
    data = bytearray((small_proof / "proof.bin").read_bytes())
    data[bit // 8] ^= 1 << (bit % 8)
    flipped = tmp_path / "proof.bin"
    flipped.write_bytes(bytes(data))
    code, _, err = run_verify(small_proof, capsys, proof=flipped)
    assert code in (1, 2)  # 1: valid points, wrong proof; 2: the bytes are no valid point
    if code == 2:
        assert err.startswith("cuzk: error: ") and "proof.bin" in err
    public = [int(x) for x in json.loads((small_proof / "public.json").read_text())]
    vk = (small_proof / "vk.bin").read_bytes()
    try:
        accepted = py_ecc_oracle.verify(vk, bytes(data), public)
    except (ValueError, AssertionError):
        accepted = False
    assert not accepted


def _g1_point_outside_subgroup() -> tuple[int, int]:
    x = 1
    while True:
        y = fq_sqrt((x**3 + 4) % FQ_MODULUS)
        if y is not None:
            return x, y
        x += 1


def test_a_verifying_keys_subgroups_are_checked_once_per_content(
    small_proof, tmp_path, monkeypatch, capsys
):
    """vk.bin's points pass their subgroup checks once: a marker named by its bytes' sha256
    lets a later read check the curve only, and bytes changed (a point outside the subgroup
    put in) are checked in full again and refused."""
    from cuzk_core.groth16 import files

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    subgroup_checks = []
    read = files._read_vk

    def counted(reader, check_subgroup=True):
        subgroup_checks.append(check_subgroup)
        return read(reader, check_subgroup)

    monkeypatch.setattr(files, "_read_vk", counted)
    vk = small_proof / "vk.bin"
    first, again = files.read_vk(vk), files.read_vk(vk)
    assert first.to_bytes() == again.to_bytes() and subgroup_checks == [True, False]
    assert len(list((tmp_path / "cache" / "checked").iterdir())) == 1
    data = bytearray(vk.read_bytes())
    point = _g1_point_outside_subgroup()
    data[-96:] = point[0].to_bytes(48, "big") + point[1].to_bytes(48, "big")  # the last IC point
    bad = tmp_path / "vk.bin"
    bad.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="subgroup"):
        files.read_vk(bad)
    assert subgroup_checks[-1] is True
    assert main(["cache", "list"]) == 0
    assert "markers of verifying keys" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda d: d[:100], "a proof is 192 bytes"),
        (lambda d: bytes([d[0] | 0x1F]) + b"\xff" * 47 + d[48:], "not below the field modulus"),
        (lambda d: g1_to_compressed(_g1_point_outside_subgroup()) + d[48:], "subgroup"),
    ],
)
def test_malformed_proof_points_exit_2(small_proof, tmp_path, capsys, corrupt, message):
    bad = tmp_path / "proof.bin"
    bad.write_bytes(corrupt((small_proof / "proof.bin").read_bytes()))
    code, out, err = run_verify(small_proof, capsys, proof=bad)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and str(bad) in err


def test_off_curve_proof_point_exit_2(small_proof, tmp_path, capsys):
    data = bytearray((small_proof / "proof.bin").read_bytes())
    x = 0
    while fq_sqrt((x**3 + 4) % FQ_MODULUS) is not None:
        x += 1
    data[144:192] = (x | (0x80 << 376)).to_bytes(48, "big")  # compressed flag, x with no y
    bad = tmp_path / "proof.bin"
    bad.write_bytes(bytes(data))
    code, _, err = run_verify(small_proof, capsys, proof=bad)
    assert code == 2 and "not on the curve" in err


@pytest.mark.parametrize(
    ("public", "message"),
    [
        (lambda p: [*p, "1"], "has 3 public inputs, the verifying key expects 2"),
        (lambda p: p[:1], "has 1 public inputs"),
        (lambda p: [p[0], str(FR_MODULUS)], "public input 1 is not below"),
        (lambda p: [p[0], "-3"], "not a decimal integer"),
        (lambda p: {"a": 1}, "must be a JSON list"),
    ],
)
def test_bad_public_json_exit_2(small_proof, tmp_path, capsys, public, message):
    values = json.loads((small_proof / "public.json").read_text())
    bad = tmp_path / "public.json"
    bad.write_text(json.dumps(public(values)))
    code, _, err = run_verify(small_proof, capsys, public=bad)
    assert code == 2 and message in err


def test_truncated_and_missing_params_exit_2_and_leave_no_output(small_params, tmp_path, capsys):
    broken = tmp_path / "params"
    broken.mkdir()
    for name in ("circuit.json", "vk.bin"):
        (broken / name).write_bytes((small_params / name).read_bytes())
    (broken / "params.bin").write_bytes((small_params / "params.bin").read_bytes()[:5000])
    out = tmp_path / "out"
    assert main(["-q", "prove", "--params", str(broken), "--out", str(out)]) == 2
    assert "truncated" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())
    (broken / "params.bin").unlink()
    assert main(["-q", "prove", "--params", str(broken), "--out", str(out)]) == 2
    assert "params.bin: no such file" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_params_for_another_circuit_exit_2(small_params, tmp_path, capsys):
    other = tmp_path / "params"
    other.mkdir()
    for name in ("params.bin", "vk.bin"):
        (other / name).write_bytes((small_params / name).read_bytes())
    (other / "circuit.json").write_text('{"circuit": "porep-lite", "challenges": 2, "depth": 3}')
    assert main(["-q", "prove", "--params", str(other), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cuzk: error: {other}: the parameters do not match this circuit: ")


@pytest.mark.parametrize(
    ("profile_text", "message"),
    [
        ("backend = [", "malformed TOML"),
        ("colour = 1", "unknown key 'colour'"),
        ("[msm.window_bits]\na = 0", "'msm.window_bits.a'"),
        ("[msm.window_bits]\nl = 40", "got 40"),
        ('backend = "nosuch"', "backend 'nosuch'"),
    ],
)
def test_bad_profiles_exit_2(tmp_path, capsys, profile_text, message):
    profile = tmp_path / "p.toml"
    profile.write_text(profile_text + "\n")
    out = tmp_path / "out"
    assert main(["--profile", str(profile), "-q", "prove", *SMALL, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuzk: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("profile", ["h200", "profiles/rtx5070ti.toml"])
def test_gpu_profiles_show_and_refuse_clearly_without_gpu(profile, capsys, tmp_path):
    os.chdir(Path(__file__).resolve().parents[1])
    assert main(["profile", "show", profile]) == 0
    assert 'backend = "cupy"' in capsys.readouterr().out
    code = main(["--profile", profile, "-q", "prove", *SMALL, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    if code == 0:  # a machine with a GPU and CuPy
        return
    assert code == 2 and "backend 'cupy'" in err and ("not installed" in err or "cannot" in err)


def test_unknown_circuit_knob_values_exit_2(tmp_path, capsys):
    args = ["-q", "setup", "--circuit", "porep-lite", "--depth", "0", "--out", str(tmp_path)]
    assert main(args) == 2
    assert "depth" in capsys.readouterr().err
    assert main(["-q", "setup", "--circuit", "nosuch", "--out", str(tmp_path)]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_backends_lists_cpu_with_source(capsys):
    assert main(["backends"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cpu") and "available" in out and "cuzk_backend_cpu.plugin" in out


def test_default_prove_caches_params_and_logs_phases(tmp_path):
    env = {**os.environ, "CUZK_TIMING": "1", "CUZK_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "cuzk_core", "--profile", "cpu", "prove"]
    first = subprocess.run(
        [*command, "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    assert "generating parameters" in first.stderr
    phases = [line.split()[1] for line in first.stderr.splitlines() if line.startswith("CUZK_")]
    assert phases[:2] == ["phase=prepare", "phase=synthesis"] and "phase=msm_b_g2" in phases
    assert all(line.startswith("CUZK_TIMING phase=") for line in first.stderr.splitlines()[1:])
    second = subprocess.run(
        [*command, "--out", str(tmp_path / "b")], env=env, capture_output=True, text=True
    )
    assert second.returncode == 0 and "generating" not in second.stderr
    assert py_ecc_oracle.verify_files(tmp_path / "b")


def test_errors_have_no_traceback_in_a_real_process(tmp_path):
    missing = str(tmp_path / "nope.bin")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "cuzk_core",
            "verify",
            "--vk",
            missing,
            "--proof",
            "x",
            "--public",
            "y",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == f"cuzk: error: {tmp_path / 'nope.bin'}: no such file"


def test_circuit_options_beside_a_key_either_agree_or_are_refused(small_params, tmp_path, capsys):
    """With --params the key fixes the circuit: --circuit-seed picks another instance of it,
    and a --challenges, --depth or --circuit that differs is an error (all were dropped, and a
    proof of another instance than the one asked for was written). Beside an r1cs or zkey
    every circuit option is an error."""
    where = small_params / "circuit.json"
    spec = json.loads(where.read_text())
    prove = ["--profile", "cpu", "prove", "--params", str(small_params)]
    for extra, message in (
        (["--challenges", "3"], f"--challenges 3: {where} says challenges {spec['challenges']}"),
        (["--circuit", "nope"], f"--circuit nope: {where} says circuit 'porep-lite'"),
    ):
        out = tmp_path / "refused"
        assert main([*prove, *extra, "--out", str(out)]) == 2
        assert capsys.readouterr().err.startswith(f"cuzk: error: {message}")
        assert not out.exists()
    publics = {}
    for seed in (None, 9):
        out = tmp_path / f"seed-{seed}"
        chosen = [] if seed is None else ["--circuit-seed", str(seed)]
        same = ["--challenges", str(spec["challenges"])]  # agreeing knobs are fine
        assert main([*prove, *chosen, *same, "--out", str(out)]) == 0
        publics[seed] = json.loads((out / "public.json").read_text())
        assert main(["verify", "--vk", str(out / "vk.bin"), "--proof", str(out / "proof.bin"),
                     "--public", str(out / "public.json")]) == 0  # fmt: skip
    assert publics[None] != publics[9]  # another instance: other challenges and root
    r1cs = Path(__file__).resolve().parent / "fuzz_corpus" / "r1cs" / "seed-one_private.r1cs"
    capsys.readouterr()
    code = main(["setup", "--r1cs", str(r1cs), "--depth", "3", "--out", str(tmp_path / "p")])
    assert code == 2
    assert capsys.readouterr().err == (
        "cuzk: error: --depth: the circuit comes from the --r1cs file; leave them out\n"
    )


def test_params_from_an_r1cs_without_the_r1cs_say_what_to_add(tmp_path, capsys):
    r1cs = Path(__file__).resolve().parent / "fuzz_corpus" / "r1cs" / "seed-one_private.r1cs"
    params = tmp_path / "p"
    assert main(["-q", "setup", "--r1cs", str(r1cs), "--out", str(params), "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["-q", "prove", "--params", str(params), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"cuzk: error: {params}: made by `cuzk setup --r1cs`; prove with --params {params} "
        "--r1cs FILE --wtns FILE\n"
    )
