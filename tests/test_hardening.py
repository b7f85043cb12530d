"""Bad input as a user gives it: one-line errors (exit 2), outputs checked before the work and
written all together, keys checked before they are trusted, numbers read as snarkjs reads them.

The circuits are the fuzz seeds (tests/fuzz_corpus): ``all_public`` (a·a = b, both public: no
private wire, so an empty l query) and ``one_private`` (a·a = b, a·b = c, a private), with zkeys
snarkjs made for them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import threading
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from circomfiles import (
    R_FR,
    g1_montgomery,
    g2_montgomery,
    section_offsets,
)

from cuzk_core.backend import Backend
from cuzk_core.cli import main
from cuzk_core.conformance.inputs import off_subgroup_point, random_points
from cuzk_core.curve import bulk, serialize
from cuzk_core.errors import FormatError, OutputError
from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.fileio import refuse_outputs_over_inputs, write_bytes_atomic, write_together
from cuzk_core.groth16 import files
from cuzk_core.groth16.keycheck import G1, G2, check_subgroups
from cuzk_core.interop.points import g1_from_snarkjs, g2_from_snarkjs
from cuzk_core.interop.snarkjs_json import JS_SAFE_INTEGER, decimal
from cuzk_core.layout import G1Affines, G2Affines
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "tests" / "fuzz_corpus"
SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"


def seed(parser: str, name: str) -> Path:
    return SEEDS / parser / f"seed-{name}"


def cuzk(*args: object) -> tuple[int, str, str]:
    """Run the ``cuzk`` command line in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["-q", *map(str, args)])
    return code, out.getvalue(), err.getvalue()


def fails(*args: object, message: str) -> str:
    """Run cuzk and check for the one-line error, exit 2, containing ``message``."""
    code, out, err = cuzk(*args)
    assert code == 2, (code, out, err)
    assert err.startswith("cuzk: error: ") and err.count("\n") == 1, err
    assert message in err, err
    return err


def available_backends() -> list[str]:
    return sorted(name for name, info in load_plugins().backends.items() if info.available)


def backend_named(name: str) -> Backend:
    """The cpu profile with its backend replaced by ``name``."""
    return load_plugins().backend(load_profile("cpu", {"backend": name}), Timer(level=0))


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUZK_CACHE_DIR", str(cache))
    monkeypatch.delenv("CUZK_PROFILE", raising=False)
    return cache


@pytest.fixture(scope="module")
def params(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cuzk's own parameters for the one_private circuit."""
    folder = tmp_path_factory.mktemp("params") / "one_private"
    r1cs = seed("r1cs", "one_private.r1cs")
    assert cuzk("setup", "--r1cs", r1cs, "--out", folder, "--seed", 1)[0] == 0
    return folder


@pytest.fixture(scope="module")
def proof(params: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A proof folder (vk.bin, proof.bin, proof.json, verification_key.json, public.json)."""
    out = tmp_path_factory.mktemp("proof") / "out"
    circuit = [
        "--r1cs",
        seed("r1cs", "one_private.r1cs"),
        "--wtns",
        seed("wtns", "one_private.wtns"),
    ]
    assert cuzk("prove", *circuit, "--params", params, "--out", out, "--seed", 2)[0] == 0
    return out


def verify_args(folder: Path, /, **replaced: Path) -> list[object]:
    """``cuzk verify`` of the proof in ``folder``, with some of its files replaced."""
    paths = {"vk": folder / "vk.bin", "proof": folder / "proof.bin"}
    paths["public"] = folder / "public.json"
    paths.update(replaced)
    return ["verify", *(a for k, v in paths.items() for a in (f"--{k}", v))]


def prove_params_args(params: Path, out: Path) -> list[object]:
    return [
        "prove",
        *("--r1cs", seed("r1cs", "one_private.r1cs"), "--wtns", seed("wtns", "one_private.wtns")),
        *("--params", params, "--out", out),
    ]


# ------------------------------------------------------------------ tracebacks → one line


def copy_params(params: Path, target: Path) -> Path:
    shutil.copytree(params, target)
    return target


def test_non_utf8_circuit_json_is_one_line(params: Path, tmp_path: Path):
    broken = copy_params(params, tmp_path / "params")
    text = (broken / "circuit.json").read_bytes()
    (broken / "circuit.json").write_bytes(text.replace(b"circom-r1cs", b"circom-r1cs\xff"))
    fails(*prove_params_args(broken, tmp_path / "out"), message="not UTF-8 text (byte ")
    assert not (tmp_path / "out").exists()


HUGE = "1" + "0" * 5000


JSON_FILES = {"public": "public.json", "proof": "proof.json", "vk": "verification_key.json"}


@pytest.mark.parametrize(
    ("target", "edit", "message"),
    [
        ("public", lambda d: f"[{HUGE}]", "more than any valid public.json (2048 bytes at most)"),
        ("public", lambda d: json.dumps(["9" * 5000]), "more than any valid public.json"),
        ("proof", lambda d: _replace_first_coordinate(d, "pi_a", HUGE), "a JSON number of 5001"),
        (
            "proof",
            lambda d: _replace_first_coordinate(d, "pi_a", '"' + "9" * 5000 + '"'),
            "pi_a is not below the base field modulus q",
        ),
        ("vk", lambda d: _replace_first_coordinate(d, "vk_alpha_1", HUGE), "a JSON number of 5001"),
        ("vk", lambda d: json.dumps({**d, "nPublic": "1" * 5000}), '"nPublic" is'),
    ],
)
def test_integers_beyond_4300_digits_are_one_line(
    proof: Path, tmp_path: Path, target, edit, message
):
    name = JSON_FILES[target]
    bad = tmp_path / name
    bad.write_text(edit(json.loads((proof / name).read_text())))
    fails(*verify_args(proof, **{target: bad}), message=message)


def _replace_first_coordinate(document: dict, key: str, literal: str) -> str:
    """The document as JSON text with the first coordinate of ``key`` written as ``literal``."""
    marker = "__coordinate__"
    point = document[key]
    edited = {**document, key: [marker, *point[1:]]}
    return json.dumps(edited).replace(f'"{marker}"', literal)


def test_public_json_numbers_beyond_4300_digits_without_a_size_bound(tmp_path: Path):
    public = tmp_path / "public.json"
    public.write_text(f"[{HUGE}]")
    with pytest.raises(FormatError, match="a JSON number of 5001 characters"):
        files.read_public(public)
    public.write_text(json.dumps(["0" * 5000 + "9", "9" * 5000]))
    with pytest.raises(FormatError, match="public input 1 is not below the scalar field modulus r"):
        files.read_public(public)


def test_circuit_json_number_beyond_4300_digits(params: Path, tmp_path: Path):
    broken = copy_params(params, tmp_path / "params")
    (broken / "circuit.json").write_text(f'{{"circuit": "porep-lite", "challenges": {HUGE}}}')
    fails("prove", "--params", broken, "--out", tmp_path / "out", message="5001 characters")


@pytest.mark.parametrize("digit", ["²", "٦", "６", "¹"])
def test_unicode_digits_are_refused(proof: Path, tmp_path: Path, digit: str):
    public = json.loads((proof / "public.json").read_text())
    bad = tmp_path / "public.json"
    bad.write_text(json.dumps([digit] * len(public)))
    fails(*verify_args(proof, public=bad), message="not a decimal integer (ASCII digits)")
    document = json.loads((proof / "proof.json").read_text())
    bad_proof = tmp_path / "proof.json"
    bad_proof.write_text(_replace_first_coordinate(document, "pi_a", json.dumps(digit)))
    fails(*verify_args(proof, proof=bad_proof), message="pi_a is")


@pytest.mark.parametrize("target", ["public", "proof", "vk", "circuit"])
def test_json_nested_2000_deep(proof: Path, params: Path, tmp_path: Path, target: str):
    deep = "[" * 2000 + "]" * 2000
    if target == "circuit":
        broken = copy_params(params, tmp_path / "params")
        (broken / "circuit.json").write_text(f'{{"circuit": "porep-lite", "depth": {deep}}}')
        out = tmp_path / "out"
        fails("prove", "--params", broken, "--out", out, message="nested more than 64 deep")
        return
    bad = tmp_path / JSON_FILES[target]
    bad.write_text(deep)
    if target == "public":  # 4000 bytes: the size bound refuses it first; without the bound
        fails(*verify_args(proof, public=bad), message="more than any valid public.json")
        with pytest.raises(FormatError, match="JSON nested more than 64 deep"):
            files.read_public(bad)
        return
    fails(*verify_args(proof, **{target: bad}), message="JSON nested more than 64 deep")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("target", ["proof", "vk", "public"])
def test_devices_are_refused_unread(proof: Path, device: str, target: str):
    fails(*verify_args(proof, **{target: Path(device)}), message="is a character device")


def test_files_larger_than_any_valid_one_are_refused_with_sizes(proof: Path, tmp_path: Path):
    long_bin = tmp_path / "proof.bin"
    long_bin.write_bytes((proof / "proof.bin").read_bytes() + b"\0")
    fails(*verify_args(proof, proof=long_bin), message="193 bytes, more than any valid proof.bin")
    padded = tmp_path / "proof.json"
    padded.write_text((proof / "proof.json").read_text() + " " * (64 << 10))
    fails(
        *verify_args(proof, proof=padded), message="bytes, more than any valid snarkjs proof.json"
    )
    public = tmp_path / "public.json"
    public.write_text(json.dumps(["1"]) + " " * 4096)  # the key has 1 public input: 2 KiB at most
    fails(*verify_args(proof, public=public), message="more than any valid public.json (2048 bytes")


def run_with_timeout(*args: object, seconds: float = 30) -> tuple[int, str, str]:
    """cuzk in a thread: a hang fails the test instead of blocking the suite."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(cuzk(*args)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert result, f"cuzk {args} still running after {seconds} s"
    return result[0]


@pytest.mark.parametrize("target", ["proof", "vk", "public", "zkey", "wtns"])
def test_a_fifo_without_writer_is_refused_not_waited_on(proof: Path, tmp_path: Path, target):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    if target in ("zkey", "wtns"):
        paths = {"zkey": seed("zkey", "one_private.zkey"), "wtns": seed("wtns", "one_private.wtns")}
        paths[target] = fifo
        args = ["prove", "--zkey", paths["zkey"], "--wtns", paths["wtns"], "--out", tmp_path / "o"]
    else:
        args = verify_args(proof, **{target: fifo})
    code, _, err = run_with_timeout(*args)
    assert code == 2 and "is a FIFO; cuzk reads only regular files" in err, err


# ------------------------------------------------------------------ outputs checked first


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path: Path, private_cache: Path):
    out = tmp_path / "taken"
    out.write_text("not a folder")
    fails("prove", "--out", out, message=f"--out {out}: is a file, not a folder")
    assert not private_cache.exists()  # the embedded circuit's key was never generated
    fails("setup", "--out", out, message="is a file, not a folder")


def test_memlog_directory_is_refused_before_any_work(tmp_path: Path, private_cache: Path):
    fails("prove", "--out", tmp_path / "o", "--memlog", tmp_path, message="is a folder")
    assert not private_cache.exists() and not (tmp_path / "o").exists()


def test_bench_outputs_are_checked_before_the_runs(tmp_path: Path):
    fails("bench", "msm", "--size", "8", "--memlog", tmp_path, message="--memlog")
    fails("bench", "msm", "--size", "8", "--json", tmp_path / "no" / "r.json", message="--json")


def test_unwritable_out_folder_is_refused_before_any_work(private_cache: Path):
    fails("prove", "--out", "/proc/cuzk-out", message="--out /proc/cuzk-out: cannot write in /proc")
    fails("prove", "--out", "/proc/self", message="cannot write in /proc/self")
    assert not private_cache.exists()


def test_no_output_creates_folders_above_it(tmp_path: Path, private_cache: Path):
    """--out DIR creates DIR, never a missing folder above it; so do --trace and --memlog."""
    missing = tmp_path / "missing"
    fails("prove", "--out", missing / "out", message=f"folder {missing} does not exist")
    fails(
        "prove", "--out", tmp_path / "o", "--trace", missing / "t.jsonl", message="does not exist"
    )
    fails("prove", "--out", tmp_path / "o", "--memlog", missing / "m.csv", message="does not exist")
    fails("setup", "--out", missing / "params", message="does not exist")
    assert not missing.exists() and not private_cache.exists()


# ------------------------------------------------------------------ all files or none


def test_a_folder_in_place_of_an_output_leaves_no_proof_behind(params: Path, tmp_path: Path):
    out = tmp_path / "out"
    (out / "verification_key.json").mkdir(parents=True)
    zkey_args = [
        "--zkey",
        seed("zkey", "one_private.zkey"),
        "--wtns",
        seed("wtns", "one_private.wtns"),
    ]
    fails("prove", *zkey_args, "--out", out, message="verification_key.json is a folder")
    assert [p.name for p in out.iterdir()] == ["verification_key.json"]
    (out / "verification_key.json").rmdir()
    (out / "vk.bin").mkdir()
    fails(*prove_params_args(params, out), message="vk.bin is a folder")
    assert [p.name for p in out.iterdir()] == ["vk.bin"]


def test_write_together_writes_nothing_when_a_target_is_a_folder(tmp_path: Path):
    (tmp_path / "a").write_bytes(b"old a")
    (tmp_path / "c").mkdir()
    with pytest.raises(OutputError, match="is a folder"):
        write_together(tmp_path, {"a": b"new a", "b": b"new b", "c": b"new c"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "c"]
    assert (tmp_path / "a").read_bytes() == b"old a"


def test_write_together_removes_what_it_is_told_or_puts_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    for name in ("a", "stale", "other"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    write_together(tmp_path, {"a": b"new a"}, remove=["stale", "missing"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "other"]
    (tmp_path / "stale").write_bytes(b"old stale")
    real_unlink = os.unlink

    def failing_unlink(path, *args, **kwargs):
        if Path(path).name == "second":
            raise OSError(13, "Permission denied")
        real_unlink(path, *args, **kwargs)

    (tmp_path / "second").write_bytes(b"old second")
    monkeypatch.setattr(os, "unlink", failing_unlink)
    with pytest.raises(OutputError, match="Permission denied"):
        write_together(tmp_path, {"a": b"newer a"}, remove=["stale", "second"])
    monkeypatch.setattr(os, "unlink", real_unlink)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "other", "second", "stale"]
    assert (tmp_path / "stale").read_bytes() == b"old stale"
    assert (tmp_path / "a").read_bytes() == b"new a"


def test_write_together_undoes_a_failed_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A rename failing half-way (an I/O error) puts the previous files back and removes the
    rest: the folder holds the old set, not a mix."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "a").write_bytes(b"old a")
    (folder / "b").write_bytes(b"old b")
    real_replace, calls = os.replace, []

    def failing_replace(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # a and b renamed already, c fails
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OutputError, match="Input/output error"):
        write_together(folder, {"a": b"new a", "b": b"new b", "c": b"new c"})
    monkeypatch.setattr(os, "replace", real_replace)
    assert sorted(p.name for p in folder.iterdir()) == ["a", "b"]
    assert (folder / "a").read_bytes() == b"old a" and (folder / "b").read_bytes() == b"old b"
    fresh = tmp_path / "fresh"
    monkeypatch.setattr(os, "replace", failing_replace)
    calls.clear()
    with pytest.raises(OutputError):
        write_together(fresh, {"a": b"1", "b": b"2", "c": b"3"})
    assert not fresh.exists()  # the folder it created is gone again


# ------------------------------------------------------------------ the all-public circuit


@pytest.mark.parametrize("backend", available_backends())
def test_all_public_circuit_sets_up_and_proves_through_params(tmp_path: Path, backend: str):
    profile = tmp_path / "p.toml"
    profile.write_text(f'extends = "cpu"\nbackend = "{backend}"\n')
    r1cs, wtns = seed("r1cs", "all_public.r1cs"), seed("wtns", "all_public.wtns")
    params, out = tmp_path / "params", tmp_path / "out"
    assert cuzk("--profile", profile, "setup", "--r1cs", r1cs, "--out", params)[0] == 0
    code, _, err = cuzk(
        "--profile",
        profile,
        "prove",
        "--r1cs",
        r1cs,
        "--wtns",
        wtns,
        "--params",
        params,
        "--out",
        out,
    )
    assert code == 0, err
    assert json.loads((out / "public.json").read_text()) == ["9", "3"]
    assert cuzk(*verify_args(out))[1] == "valid\n"
    if SNARKJS.exists() and shutil.which("node"):
        done = subprocess.run(
            [
                SNARKJS,
                "groth16",
                "verify",
                params / "verification_key.json",
                out / "public.json",
                out / "proof.json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0 and "OK" in done.stdout, done.stdout


@pytest.mark.parametrize("backend", available_backends())
def test_empty_point_batches_everywhere(backend: str):
    empty_g1, empty_g2 = G1Affines.empty(0), G2Affines.empty(0)
    assert len(bulk.g1_batch_from_uncompressed(b"")) == 0
    assert len(bulk.g2_batch_from_uncompressed(b"")) == 0
    assert bulk.g1_batch_to_uncompressed(empty_g1) == b"" == bulk.g2_batch_to_uncompressed(empty_g2)
    assert G1Affines.from_points([]).to_points() == [] == G2Affines.from_points([]).to_points()
    assert len(g1_from_snarkjs(np.zeros((0, 96), np.uint8), "x")) == 0
    assert len(g2_from_snarkjs(np.zeros((0, 192), np.uint8), "x")) == 0
    subject = backend_named(backend)
    none = np.zeros((0, 4), np.uint64)
    assert subject.msm_g1(empty_g1, none, "empty").to_points() == [None]
    assert subject.msm_g2(empty_g2, none, "empty").to_points() == [None]
    handle = subject.upload(empty_g1, "empty")
    assert subject.msm_g1(handle, none, "empty").to_points() == [None]
    subject.release(handle)


# ------------------------------------------------------------------ keys checked before trusted


def patched(source: Path, target: Path, section: int, offset: int, data: bytes) -> Path:
    """A copy of a zkey with ``data`` written at ``offset`` inside section ``section``."""
    raw = bytearray(source.read_bytes())
    start, size = section_offsets(bytes(raw))[section]
    assert offset + len(data) <= size
    raw[start + offset : start + offset + len(data)] = data
    target.write_bytes(bytes(raw))
    return target


_HEADER_POINTS = 4 + 48 + 4 + 32 + 12  # n8q, q, n8r, r, nVars, nPublic, domainSize


@pytest.mark.parametrize(
    ("name", "offset", "point"),
    [
        ("alpha_1", _HEADER_POINTS, lambda rng: g1_montgomery(off_subgroup_point("g1", rng))),
        (
            "beta_2",
            _HEADER_POINTS + 2 * 96,
            lambda rng: g2_montgomery(off_subgroup_point("g2", rng)),
        ),
    ],
)
def test_zkey_vk_point_outside_the_subgroup_is_refused_on_load(
    tmp_path: Path, rng, name, offset, point
):
    bad = patched(seed("zkey", "one_private.zkey"), tmp_path / "bad.zkey", 2, offset, point(rng))
    args = ["--zkey", bad, "--wtns", seed("wtns", "one_private.wtns"), "--out", tmp_path / "out"]
    fails("prove", *args, message=f"section 2 (header): {name} is not in the prime-order subgroup")
    fails("check", "--key", bad, message=f"{name} is not in the prime-order subgroup")
    assert not (tmp_path / "out").exists()


def test_zkey_query_point_outside_the_subgroup(tmp_path: Path, rng):
    """Section 5 (A), point 2 (the private signal a): the proof would be invalid, so prove
    refuses to write it, and the full check names the point."""
    source = seed("zkey", "one_private.zkey")
    point = g1_montgomery(off_subgroup_point("g1", rng))
    bad = patched(source, tmp_path / "bad.zkey", 5, 2 * 96, point)
    out = tmp_path / "out"
    args = ["--zkey", bad, "--wtns", seed("wtns", "one_private.wtns"), "--out", out]
    fails("prove", *args, message="does not verify against its own verifying key")
    assert not out.exists()
    fails("check", "--key", bad, message="section 5 (A) point 2 is not in the prime-order subgroup")
    code, stdout, _ = cuzk("check", "--key", source)
    assert code == 0 and stdout.startswith("key ok: ")


def test_zkey_with_altered_coefficients(tmp_path: Path):
    source = seed("zkey", "one_private.zkey")
    two = ((2 * R_FR * R_FR) % FR_MODULUS).to_bytes(32, "little")  # stored as c·R² mod r
    bad = patched(source, tmp_path / "bad.zkey", 4, 4 + 12, two)  # record 0: row 0 of A
    out = tmp_path / "out"
    args = ["--zkey", bad, "--wtns", seed("wtns", "one_private.wtns"), "--out", out]
    fails("prove", *args, message="does not verify against its own verifying key")
    assert not out.exists()
    r1cs = seed("r1cs", "one_private.r1cs")
    fails("check", "--key", bad, "--r1cs", r1cs, message="section 4 (coefficients): row 0 of A")
    code, stdout, _ = cuzk("check", "--key", source, "--r1cs", r1cs)
    assert code == 0 and "coefficients match the circuit" in stdout


def test_unsatisfied_witness_with_a_bare_zkey_writes_no_proof(tmp_path: Path):
    wtns = bytearray(seed("wtns", "one_private.wtns").read_bytes())
    wtns[-32:] = (28).to_bytes(32, "little")  # c = 28, not a·b = 27
    bad = tmp_path / "bad.wtns"
    bad.write_bytes(bytes(wtns))
    out = tmp_path / "out"
    args = ["prove", "--zkey", seed("zkey", "one_private.zkey"), "--wtns", bad, "--out", out]
    fails(*args, message="or the witness does not satisfy the circuit")
    assert not out.exists()


def test_params_folder_whose_vk_belongs_to_another_key(params: Path, tmp_path: Path):
    other = tmp_path / "other"
    assert (
        cuzk("setup", "--r1cs", seed("r1cs", "one_private.r1cs"), "--out", other, "--seed", 9)[0]
        == 0
    )
    mixed = copy_params(params, tmp_path / "mixed")
    shutil.copyfile(other / "vk.bin", mixed / "vk.bin")
    fails(*prove_params_args(mixed, tmp_path / "out"), message="vk.bin: not the verifying key of")
    fails("check", "--key", mixed, message="not the verifying key of")
    assert not (tmp_path / "out").exists()


def test_params_query_point_outside_the_subgroup(params: Path, tmp_path: Path, rng):
    broken = copy_params(params, tmp_path / "params")
    data = bytearray((broken / "params.bin").read_bytes())
    offset = 6 * 96 + 3 * 96 + 4  # the verifying key: 3 G1, 3 G2, the count, then the IC
    offset += 96 * int.from_bytes(data[offset - 4 : offset], "big")
    for _ in ("h", "l", "a", "b_g1"):
        count = int.from_bytes(data[offset : offset + 4], "big")
        offset += 4 + 96 * count
    assert int.from_bytes(data[offset : offset + 4], "big") >= 2
    start = offset + 4 + 192  # b_g2 point 1
    data[start : start + 192] = serialize.g2_to_uncompressed(off_subgroup_point("g2", rng))
    (broken / "params.bin").write_bytes(bytes(data))
    fails("check", "--key", broken, message="b_g2 point 1 is not in the prime-order subgroup of G2")
    fails(*prove_params_args(broken, tmp_path / "out"), message="does not verify")
    code, stdout, _ = cuzk("check", "--key", params)
    assert code == 0 and stdout.startswith("key ok")
    code, stdout, _ = cuzk("check", "--key", params / "params.bin")
    assert code == 0 and stdout.startswith("key ok")


@pytest.mark.parametrize(
    ("group", "points", "name"),
    [
        (G1, lambda rng, n: G1Affines.from_points(random_points("g1", rng, n)), "g1"),
        (G2, lambda rng, n: G2Affines.from_points(random_points("g2", rng, n)), "g2"),
    ],
)
@pytest.mark.parametrize("backend", available_backends())
def test_subgroup_search_names_the_first_bad_point(rng, group, points, name, backend):
    """Each backend's MSM sums points outside the subgroup like any others, so the search finds
    the bad one; the cpu reference is the oracle for the rest."""
    subject = backend_named(backend)
    good = points(rng, 24)
    bad = [off_subgroup_point(name, rng) for _ in range(2)]
    batch = type(good).from_points([*good.to_points()[:20], None, bad[0], None, bad[1]])
    sections = [("first", good), ("second", batch)]
    with pytest.raises(
        FormatError, match=rf"k: second point 21 is not in the prime-order subgroup of {group.name}"
    ):
        check_subgroups(subject, group, sections, Path("k"))
    assert check_subgroups(subject, group, [("first", good), ("none", good[:0])], Path("k")) == 24


def test_check_needs_a_key_or_a_witness(tmp_path: Path):
    fails("check", message="needs --r1cs and --wtns (a witness), or --key")
    fails("check", "--key", tmp_path / "k", "--wtns", tmp_path / "w", message="--key checks a key")
    fails("check", "--key", tmp_path / "absent", message="no such file")


# ------------------------------------------------------------------ numbers as snarkjs reads them


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("6", 6),
        ("06", 6),
        ("0" * 5000 + "6", 6),
        ("0", 0),
        (6, 6),
        (JS_SAFE_INTEGER, JS_SAFE_INTEGER),
        (str(FR_MODULUS - 1), FR_MODULUS - 1),
    ],
)
def test_decimal_accepts_what_snarkjs_reads_the_same(value, expected):
    assert decimal(value, FR_MODULUS, "r") == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("٦", "not a decimal integer"),
        ("６", "not a decimal integer"),
        ("²", "not a decimal integer"),
        (" 6", "not a decimal integer"),
        ("6 ", "not a decimal integer"),
        ("+6", "not a decimal integer"),
        ("-6", "not a decimal integer"),
        ("0x6", "not a decimal integer"),
        ("6e0", "not a decimal integer"),
        ("", "not a decimal integer"),
        (6.0, "not a decimal integer"),
        (True, "not a decimal integer"),
        (None, "not a decimal integer"),
        (-1, "negative"),
        (JS_SAFE_INTEGER + 1, r"JavaScript \(snarkjs\) reads rounded"),
        (str(FR_MODULUS), "not below r"),
        ("9" * 5000, "not below r"),
    ],
)
def test_decimal_refuses_everything_else(value, message):
    with pytest.raises(ValueError, match=message):
        decimal(value, FR_MODULUS, "r")


SNARKJS_VERIFY_EACH = """
const snarkjs = require(process.argv[2]);
const fs = require("fs");
const read = (path) => JSON.parse(fs.readFileSync(path, "utf8"));  // as `snarkjs groth16 verify`
(async () => {
  const [vk, proof] = [read(process.argv[3]), read(process.argv[4])];
  const verdicts = [];
  for (const path of process.argv.slice(5)) {
    try { verdicts.push(await snarkjs.groth16.verify(vk, read(path), proof)); }
    catch (error) { verdicts.push(false); }
  }
  console.log(JSON.stringify(verdicts));
  process.exit(0);
})();
"""


@pytest.mark.skipif(
    shutil.which("node") is None or not SNARKJS.exists(), reason="needs node and `npm ci`"
)
def test_public_input_spellings_agree_with_snarkjs(proof: Path, tmp_path: Path):
    """The real snarkjs is the oracle: what it reads as the proof's public input, cuzk accepts;
    what it rejects, cuzk rejects. The one difference: snarkjs also reads 0x hex strings (and
    integral JSON floats), cuzk's files are decimal, so cuzk refuses those."""
    (value,) = json.loads((proof / "public.json").read_text())
    number = int(value)
    spellings = {  # JSON text → accepted by both (True), by neither (False), by snarkjs only
        json.dumps(value): True,
        json.dumps("000" + value): True,
        str(number): True,
        json.dumps(value.translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))): False,
        json.dumps(value.translate(str.maketrans("0123456789", "０１２３４５６７８９"))): False,
        json.dumps(" " + value): False,
        json.dumps("+" + value): False,
        json.dumps(hex(number)): None,
    }
    paths = []
    for index, spelling in enumerate(spellings):
        paths.append(tmp_path / f"public{index}.json")
        paths[-1].write_text(f"[{spelling}]")
    script = tmp_path / "verify_each.cjs"
    script.write_text(SNARKJS_VERIFY_EACH)
    library = REPO / "node_modules" / "snarkjs" / "build" / "main.cjs"
    done = subprocess.run(
        ["node", script, library, proof / "verification_key.json", proof / "proof.json", *paths],
        capture_output=True,
        text=True,
        check=True,
    )
    verdicts = json.loads(done.stdout.strip().splitlines()[-1])
    for (spelling, both), path, snarkjs_ok in zip(spellings.items(), paths, verdicts, strict=True):
        code, stdout, _ = cuzk(*verify_args(proof, public=path))
        cuzk_ok = code == 0 and stdout == "valid\n"
        if both is None:
            assert snarkjs_ok and not cuzk_ok, spelling
        else:
            assert snarkjs_ok == cuzk_ok == both, (spelling, snarkjs_ok, cuzk_ok)


# ------------------------------------------------------------------ sizes that files claim


def test_a_setup_whose_key_cannot_fit_is_refused_before_any_allocation(tmp_path: Path):
    """An r1cs without a wire-label section claiming 2^32 − 1 wires: setup refuses the 2.3 TiB
    key in one line instead of failing in an allocation of 32 GiB (or being killed)."""
    data = bytearray(seed("r1cs", "one_private.r1cs").read_bytes())
    header, _ = section_offsets(bytes(data))[1]
    wires = header + 4 + 32  # past n8 and the prime
    data[wires : wires + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    big = tmp_path / "big.r1cs"
    big.write_bytes(bytes(data))
    code, _, err = run_with_timeout("setup", "--r1cs", big, "--out", tmp_path / "p", "--seed", 1)
    assert code == 2 and not (tmp_path / "p").exists(), err
    assert err.startswith("cuzk: error: setup of a circuit of 4294967295 variables over a domain")
    assert "GiB of memory is available" in err and err.count("\n") == 1


def test_bench_and_trace_readers_take_only_regular_files(tmp_path: Path):
    """`bench compare` and `trace show` read their inputs as every other reader does: a FIFO
    or /dev/zero is refused at once (they hung, or read until memory ran out)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (("bench", "compare", "/dev/zero", "/dev/zero"), ("trace", "show", fifo)):
        code, _, err = run_with_timeout(*args)
        assert code == 2 and err.count("\n") == 1, err
        assert "cuzk reads only regular files" in err, err


@pytest.mark.parametrize("interval", ["inf", "nan", "1e10", "0"])
def test_a_memlog_interval_out_of_range_is_refused_before_any_work(tmp_path, interval):
    out, memlog = tmp_path / "o", tmp_path / "m.csv"
    code, _, err = cuzk(
        "--profile", "cpu", "prove", "--challenges", "1", "--depth", "1", "--out", out,
        "--memlog", memlog, "--memlog-interval", interval,
    )  # fmt: skip
    assert code == 2 and "must be more than 0 and at most 86400" in err, err
    assert not out.exists() and not memlog.exists()


def test_a_cache_folder_that_is_a_file_is_a_one_line_error(tmp_path: Path, monkeypatch):
    a_file = tmp_path / "cache"
    a_file.write_text("")
    monkeypatch.setenv("CUZK_CACHE_DIR", str(a_file))
    zkey, wtns = tmp_path / "k.zkey", seed("wtns", "one_private.wtns")
    zkey.write_bytes(seed("zkey", "one_private.zkey").read_bytes())  # a key no test cached
    code, _, err = cuzk("--profile", "cpu", "prove", "--zkey", zkey, "--wtns", wtns, "--out",
                        tmp_path / "o")  # fmt: skip
    last = err.splitlines()[-1]  # after any note of the caches
    assert code == 2 and "Traceback" not in err, err
    assert last.startswith(f"cuzk: error: {a_file}/") and "cannot write there" in last, err
    assert not (tmp_path / "o").exists()
    with pytest.raises(OutputError, match="cannot write there: Not a directory"):
        write_bytes_atomic(a_file / "sub" / "x", b"")


def test_trace_and_memlog_may_not_overwrite_each_other_or_the_proof(tmp_path: Path):
    out = tmp_path / "o"
    out.mkdir()  # an earlier proof's folder
    for args, message in (
        (["--trace", tmp_path / "t", "--memlog", tmp_path / "t"], "is the --trace file too"),
        (["--trace", out / "proof.bin"], "is the command's own output too"),
        (["--memlog", out / "vk.bin"], "is the command's own output too"),
    ):
        code, _, err = cuzk("--profile", "cpu", "prove", "--challenges", "1", "--depth", "1",
                            "--out", out, *args)  # fmt: skip
        assert code == 2 and message in err and err.count("\n") == 1, err
        assert not list(out.iterdir()) and not (tmp_path / "t").exists()


def test_no_output_overwrites_a_file_the_command_reads(tmp_path: Path):
    """--trace, --memlog, --json and --out are refused before any work when they name an
    input (the proving key's files, the witness, a result being compared), however spelled."""
    params, out = tmp_path / "p", tmp_path / "o"
    knobs = ["--challenges", "1", "--depth", "1"]
    assert cuzk("--profile", "cpu", "-q", "setup", *knobs, "--out", params)[0] == 0
    key_bytes = (params / "params.bin").read_bytes()
    (tmp_path / "link.bin").symlink_to(params / "params.bin")
    zkey, wtns = tmp_path / "k.zkey", tmp_path / "w.wtns"
    zkey.write_bytes(seed("zkey", "one_private.zkey").read_bytes())
    wtns.write_bytes(seed("wtns", "one_private.wtns").read_bytes())
    for args, option in (
        (["--params", params, "--out", out, "--trace", params / "params.bin"], "--trace"),
        (["--params", params, "--out", out, "--memlog", tmp_path / "link.bin"], "--memlog"),
        (["--params", params, "--out", params], "--out"),
        (["--zkey", zkey, "--wtns", wtns, "--out", out, "--memlog", wtns], "--memlog"),
    ):
        code, _, err = cuzk("--profile", "cpu", "-q", "prove", *args)
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith(f"cuzk: error: {option} ") and "is an input of this command" in err
    assert (params / "params.bin").read_bytes() == key_bytes and not out.exists()
    result = tmp_path / "r.json"
    assert cuzk("bench", "ntt", "--size", "16", "--runs", "2", "--json", result)[0] == 0
    before = result.read_bytes()
    code, _, err = cuzk("bench", "compare", result, result, "--json", result)
    assert code == 2 and "--json" in err and "is an input of this command" in err, err
    assert result.read_bytes() == before


def test_messages_name_the_thing_at_fault(tmp_path: Path):
    code, _, err = cuzk("backends", "--check", "")
    assert (code, err) == (
        2,
        'cuzk: error: --check \'\': not a backend name (letters, digits, "_", "-", ".")\n',
    )
    params = tmp_path / "p"
    assert (
        cuzk("--profile", "cpu", "setup", "--challenges", "1", "--depth", "1", "--out", params)[0]
        == 0
    )
    with (params / "params.bin").open("r+b") as f:
        f.truncate(500)  # shorter than its own verifying key: params.bin is at fault, not vk.bin
    code, _, err = cuzk("--profile", "cpu", "prove", "--params", params, "--out", tmp_path / "o")
    assert code == 2 and err.startswith(f"cuzk: error: {params / 'params.bin'}: truncated"), err


def test_a_zkeys_ic_subgroups_are_checked_once_per_content(monkeypatch: pytest.MonkeyPatch):
    """The IC section's points pass their subgroup checks once (a marker named by the
    section's sha256); another Zkey over the same bytes checks them no more."""
    from cuzk_core.interop import zkey as zkey_module

    checked = []
    real = zkey_module.g1_in_subgroup
    monkeypatch.setattr(zkey_module, "g1_in_subgroup", lambda p: checked.append(p) or real(p))
    path = seed("zkey", "one_private.zkey")
    first = zkey_module.Zkey(path).verifying_key()
    header_points = 3  # α₁, β₁, δ₁ are checked on every load, as before
    assert len(checked) == header_points + len(first.ic)
    checked.clear()
    again = zkey_module.Zkey(path).verifying_key()
    assert len(checked) == header_points and again.to_bytes() == first.to_bytes()


def test_more_bad_input_is_one_line_and_exit_2(tmp_path: Path, monkeypatch):
    """What a probe of the command line found: each now one line, exit 2, no traceback."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    trace = tmp_path / "t.jsonl"
    bad_backend = '{"name": "job", "start": 0, "end": 0.5, "backend": 5}\n'
    huge_start = '{"name": "job", "start": 1' + "0" * 400 + "}\n"
    vk = tmp_path / "vk.bin"
    vk.write_bytes(bytes(files.VK_FIXED_BYTES - 4) + (7).to_bytes(4, "big") + bytes(96))
    a_file = tmp_path / "cache" / "params" / "porep-lite-challenges1-depth1-seed0"
    a_file.parent.mkdir(parents=True)
    a_file.write_text("")
    cases = [
        (["trace", "show", deep], "nested too deep"),
        (["bench", "compare", deep, deep], "nested too deep"),
        (["trace", "show", trace, "--width", "99999999999"], "10 to 1000 columns"),
        (["bench", "ntt", "--size", "16", "--runs", "99999999999999999999"], "1 to 10000"),
        (["bench", "compare", deep, deep, "--min-delta-ms", "nan"], "--min-delta-ms nan"),
        (["prove", "--out", ""], "--out '': an empty path"),
        (
            ["--profile", tmp_path / "x.toml", "verify", "--vk", vk, "--proof", vk, "--public", vk],
            "not found",
        ),
        (["verify", "--vk", vk, "--proof", vk, "--public", vk], "its IC count (7) makes"),
        (["prove", "--challenges", "1", "--depth", "1", "--out", tmp_path / "o"], "a file where"),
    ]
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    for spans in (bad_backend, huge_start):
        trace.write_text(spans)
        code, _, err = cuzk("trace", "show", trace)
        assert code == 2 and "not a cuzk span" in err and err.count("\n") == 1, err
    trace.write_text('{"name": "job", "start": 0, "end": 0.5}\n')
    for args, message in cases:
        code, _, err = cuzk(*args)
        assert code == 2 and "Traceback" not in err, (args, err)
        assert message in err.splitlines()[-1], (args, err)
    for args, message in (
        (["profile", "show", ""], "profile '' not found"),
        (["backends", "--seed", "5"], "give --check too"),
    ):
        fails(*args, message=message)
    monkeypatch.setenv("CUZK_CACHE_DIR", str(vk))  # a file
    fails("cache", "list", message="a file, not a folder")
    for number in ("1_0", "+1", " 1", "٣"):  # int() takes each; an option takes ASCII digits
        with pytest.raises(SystemExit) as usage:
            cuzk("prove", "--challenges", number, "--out", tmp_path / "o")
        assert usage.value.code == 2
    assert not (tmp_path / "o").exists()


def test_outputs_are_checked_against_inputs_that_cannot_be_listed(tmp_path: Path, monkeypatch):
    """A folder input that cannot be listed is left to its own read (one line there), not a
    traceback here; a file input is still compared."""
    folder, witness = tmp_path / "key", tmp_path / "w.wtns"
    folder.mkdir()
    witness.write_bytes(b"wtns")

    def unreadable(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", unreadable)
    refuse_outputs_over_inputs([("--trace", folder / "t.jsonl")], [folder])
    with pytest.raises(OutputError, match=r"--memlog .*is an input of this command"):
        refuse_outputs_over_inputs([("--memlog", witness)], [folder, witness])
