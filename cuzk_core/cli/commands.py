"""What each ``cuzk`` sub-command does; argument parsing lives in :mod:`cuzk_core.cli.parser`."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cuzk_core.backend import Backend
from cuzk_core.bench.observe import check_observation_outputs, observe
from cuzk_core.cache import cache_dir
from cuzk_core.circuits import circuit_from_spec
from cuzk_core.cli import backend_check, key_check
from cuzk_core.errors import CuzkError, OutputError
from cuzk_core.fileio import (
    check_output_file,
    check_output_folder,
    json_bytes,
    refuse_outputs_over_inputs,
    write_together,
)
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.key_cache import SUFFIX as KEY_CACHE_SUFFIX
from cuzk_core.groth16.key_sources import ParamsFile, stderr_log
from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.prover import PROVE_STEPS, KeyMismatch, UnsatisfiedWitness
from cuzk_core.groth16.prover import prove as run_prover
from cuzk_core.groth16.setup import SETUP_STEPS, generate_parameters
from cuzk_core.groth16.sources import NativeCircuit
from cuzk_core.groth16.verifier import check_own_proof, verify_proof
from cuzk_core.interop import circom
from cuzk_core.interop.snarkjs_json import (
    SNARKJS_FILES,
    VK_JSON,
    is_json_file,
    read_proof_json,
    read_vk_json,
    snarkjs_files,
    vk_to_json,
    write_vk_json,
)
from cuzk_core.plugins import BLOCK_ENV, load_plugins
from cuzk_core.profile import load_profile, named_profiles, plugin_profiles
from cuzk_core.progress import Progress
from cuzk_core.timing import TIMINGS_FILE, Timer
from cuzk_core.witness.compiled import proving_matrices

_PARAMS_FILES = [
    params_dir.PARAMS_FILE,
    params_dir.PARAMS_FILE + KEY_CACHE_SUFFIX,
    params_dir.VK_FILE,
    params_dir.CIRCUIT_FILE,
]
"""What ``cuzk setup`` writes into its folder."""


def _progress(args: argparse.Namespace, label: str, total: int) -> Progress:
    return Progress(label, total, enabled=False if args.quiet else None)


def key_log(args: argparse.Namespace) -> Callable[[str], None]:
    """Where key-cache notes (conversions, rebuilds) go: stderr, or nowhere with --quiet."""
    return (lambda message: None) if args.quiet else stderr_log


def _given_knobs(args: argparse.Namespace) -> dict[str, Any]:
    """The circuit knobs given on the command line, by knob name."""
    knobs = {"challenges": args.challenges, "depth": args.depth, "seed": args.circuit_seed}
    return {k: v for k, v in knobs.items() if v is not None}


def _given_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--circuit`` (when given) and the knobs given, by knob name."""
    return {**({"circuit": args.circuit} if args.circuit else {}), **_given_knobs(args)}


DEFAULT_CIRCUIT = "porep-lite"
"""The embedded circuit without --circuit."""
_KNOB_FLAGS = {"circuit": "--circuit", "challenges": "--challenges", "depth": "--depth",
               "seed": "--circuit-seed"}  # fmt: skip


def circuit_spec(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded circuit's name and the knobs given on the command line."""
    return {"circuit": args.circuit or DEFAULT_CIRCUIT, **_given_knobs(args)}


def params_spec(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The circuit a parameters folder records, at the instance ``--circuit-seed`` names; any
    other circuit option must agree with the folder (they used to be dropped silently)."""
    spec = params_dir.read_circuit_spec(folder)
    if spec["circuit"] == circom.CIRCOM_CIRCUIT:
        raise CuzkError(
            f"{folder}: made by `cuzk setup --r1cs`; prove with --params {folder} --r1cs FILE "
            "--wtns FILE"
        )
    for knob, value in _given_options(args).items():
        if knob != "seed" and spec.get(knob) != value:
            where = folder / params_dir.CIRCUIT_FILE
            raise CuzkError(
                f"{_KNOB_FLAGS[knob]} {value}: {where} says {knob} {spec.get(knob)!r}; the key "
                "fixes the circuit (--circuit-seed alone picks another instance of it)"
            )
    return {**spec, **({"seed": args.circuit_seed} if args.circuit_seed is not None else {})}


def refuse_circuit_options(args: argparse.Namespace, source: str) -> None:
    """Circuit options beside a circuit that comes from a file (an r1cs, a zkey) are errors."""
    given = [_KNOB_FLAGS[k] for k in _given_options(args)]
    if given:
        raise CuzkError(f"{', '.join(given)}: the circuit comes from {source}; leave them out")


def build_circuit(spec: dict[str, Any], where: Path | None = None):
    """The circuit a spec names, or a one-line error naming the bad knob (and ``where``)."""
    return circuit_from_spec(spec, where)


def _backend(args: argparse.Namespace, timer: Timer) -> Backend:
    profile = load_profile(args.profile)
    return load_plugins().backend(profile, timer)


def _make_params(backend: Backend, circuit, seed: int | None, progress: Progress) -> ProvingKey:
    matrices = proving_matrices(backend, circuit)  # no witness: setup needs only the rows
    progress.step("synthesis")
    return generate_parameters(matrices, seed=seed, progress=progress, backend=backend)


def zkey_vk_path(zkey: Path) -> Path:
    """Where ``setup --zkey`` writes the verifying key: ``out.zkey`` → ``out.vk.json``."""
    return zkey.with_suffix(".vk.json")


def _setup_zkey(args: argparse.Namespace, backend: Backend) -> int:
    """``cuzk setup --r1cs C --zkey Z``: a development zkey and its snarkjs verifying key."""
    if args.r1cs is None:
        raise CuzkError("--zkey needs --r1cs (the circom circuit to make the zkey for)")
    if args.out is not None:
        raise CuzkError("--zkey writes a zkey, --out a parameters folder: give one of them")
    zkey = Path(args.zkey)
    check_output_file(zkey, "--zkey")
    check_output_file(zkey_vk_path(zkey), "--zkey")
    progress = _progress(args, "setup", SETUP_STEPS)
    vk = circom.setup_zkey(args.r1cs, zkey, backend, args.seed, progress)
    progress.close()
    write_vk_json(zkey_vk_path(zkey), vk)
    print(f"wrote {zkey}, {zkey_vk_path(zkey)}")
    origin = f"--seed {args.seed}" if args.seed is not None else "the OS"
    print(  # even with --quiet: this is about the key, not progress
        f"cuzk: WARNING: {zkey} is a development key: its toxic waste (from {origin}) was made "
        "in this process, not by a ceremony, so anyone who knows it can forge proofs. Never use "
        "it in production; `snarkjs zkey verify` will not accept it (there is no powers of tau).",
        file=sys.stderr,
    )
    return 0


def setup(args: argparse.Namespace) -> int:
    """``cuzk setup``: parameters for a circuit into a folder, or a development zkey."""
    if args.r1cs is not None:
        refuse_circuit_options(args, "the --r1cs file")
    if args.zkey is not None:
        return _setup_zkey(args, _backend(args, Timer()))
    if args.out is None:
        raise CuzkError("setup needs --out (a parameters folder), or --r1cs with --zkey")
    folder = Path(args.out)
    check_output_folder(folder, [*_PARAMS_FILES, VK_JSON])
    outputs = [("--out", folder / name) for name in [*_PARAMS_FILES, VK_JSON]]
    refuse_outputs_over_inputs(outputs, [args.r1cs])
    backend = _backend(args, Timer())
    if args.r1cs is not None:
        progress = _progress(args, "setup", SETUP_STEPS)
        pk, record = circom.setup_r1cs(args.r1cs, backend, args.seed, progress)
        progress.close()
        params_dir.write_params_dir(folder, pk, record, {VK_JSON: json_bytes(vk_to_json(pk.vk))})
        _print_written(folder, [*_PARAMS_FILES, VK_JSON])
        return 0
    circuit = build_circuit(circuit_spec(args))
    progress = _progress(args, "setup", SETUP_STEPS + 1)
    pk = _make_params(backend, circuit, args.seed, progress)
    progress.close()
    params_dir.write_params_dir(folder, pk, {"circuit": circuit.name, **circuit.knobs()})
    _print_written(folder, _PARAMS_FILES)
    return 0


def cached_params(circuit, args: argparse.Namespace) -> Path:
    """The cache folder for ``circuit``'s parameters, generating them once if missing."""
    spec = {"circuit": circuit.name, **circuit.knobs()}
    key = "-".join([circuit.name, *(f"{k}{v}" for k, v in sorted(circuit.knobs().items()))])
    folder = cache_dir() / "params" / key
    if folder.exists() and not folder.is_dir():  # before the setup's minutes, not after
        raise OutputError(
            f"{folder}: a file where the cache keeps this circuit's parameters folder; remove "
            "it (or run `cuzk cache clear`)"
        )
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{folder.parent}: cannot write there: {exc.strerror}") from None
    if not (folder / params_dir.PARAMS_FILE).is_file():
        if not args.quiet:
            print(f"cuzk: generating parameters for {key} once, into {folder}", file=sys.stderr)
        progress = _progress(args, "setup", SETUP_STEPS + 1)
        setup_backend = _backend(args, Timer(level=0))  # setup is not part of the proof's timings
        pk = _make_params(setup_backend, circuit, None, progress)
        progress.close()
        params_dir.publish_params_dir(folder, pk, spec)
    return folder


def _circuit_label(circuit) -> str:
    knobs = ", ".join(f"{k}={v}" for k, v in sorted(circuit.knobs().items()))
    return f"{circuit.name} ({knobs})" if knobs else circuit.name


def _native_job(args: argparse.Namespace) -> circom.CircomJob:
    """The embedded circuit with its parameters (given, or made once into the cache)."""
    if args.params is not None:
        folder = Path(args.params)
        circuit = build_circuit(params_spec(args, folder), folder / params_dir.CIRCUIT_FILE)
    else:
        circuit = build_circuit(circuit_spec(args))
        folder = cached_params(circuit, args)
    vk = params_dir.read_vk(folder)
    key = ParamsFile(folder / params_dir.PARAMS_FILE, key_log(args))
    return circom.CircomJob(NativeCircuit(circuit), key, vk, _circuit_label(circuit), str(folder))


def _circom_job(args: argparse.Namespace) -> circom.CircomJob:
    """A circom witness with a snarkjs zkey, or with parameters from ``setup --r1cs``."""
    refuse_circuit_options(args, "the --zkey or --r1cs file")
    if args.wtns is None:
        raise CuzkError("--zkey and --r1cs need --wtns (the witness from `snarkjs wtns calculate`)")
    if args.zkey is not None:
        if args.params is not None:
            raise CuzkError("--zkey is a proving key already: leave out --params")
        return circom.zkey_job(args.zkey, args.wtns, args.r1cs, key_log(args))
    if args.r1cs is None or args.params is None:
        raise CuzkError("--wtns needs --zkey, or --r1cs with --params (from `cuzk setup --r1cs`)")
    return circom.params_job(Path(args.params), args.r1cs, args.wtns, key_log(args))


def prove(args: argparse.Namespace) -> int:
    """``cuzk prove``: a proof, its verifying key, public inputs and timings into ``--out``."""
    out = Path(args.out)
    is_circom = args.zkey is not None or args.r1cs is not None or args.wtns is not None
    names = [*files.PROOF_FILES, *(SNARKJS_FILES if is_circom else ()), TIMINGS_FILE]
    check_output_folder(out, names)  # outputs, backend and profile fail before any work
    check_observation_outputs(args.trace, args.memlog, [out / name for name in names])
    outputs = [("--out", out / name) for name in names]
    outputs += [("--trace", args.trace), ("--memlog", args.memlog)]
    refuse_outputs_over_inputs(outputs, [args.params, args.zkey, args.wtns, args.r1cs])
    timer = Timer()
    backend = _backend(args, timer)
    # Spans around the proof too, so timings.json accounts for a fresh process's whole run.
    with timer.span("job"):  # the circuit or witness, the key's files
        job = _circom_job(args) if is_circom else _native_job(args)
    progress = _progress(args, "prove", PROVE_STEPS)
    with (
        _naming_witness(args.wtns),
        observe(backend, args.trace, args.memlog, args.memlog_interval) as observed,
    ):
        try:
            result = run_prover(backend, job.source, job.key, seed=args.seed, progress=progress)
        except KeyMismatch as exc:  # name the key: which file was made for another circuit
            raise KeyMismatch(f"{job.key_name}: {exc}") from None
    progress.close()
    with timer.span("self_check"):
        check_own_proof(job.vk, result.proof, result.public_inputs, job.key_name)

    timings = {
        "backend": backend.name,
        "profile": backend.ctx.profile.name,
        **timer.to_json(),
        **observed,
    }
    contents = files.proof_files(result.proof, result.public_inputs, job.vk)
    if is_circom:  # snarkjs's own files, so `snarkjs groth16 verify` takes the proof as it is
        contents.update(snarkjs_files(result.proof, job.vk))
    contents[TIMINGS_FILE] = json_bytes(timings)
    # snarkjs's files of an earlier circom proof in --out would pair with this proof's public.json
    write_together(out, contents, remove=() if is_circom else SNARKJS_FILES)
    written = list(contents)
    b_g2 = f", B·G2 on {backend.b_g2.name}" if backend.b_g2 is not backend else ""
    print(
        f"proved {job.label}: {result.num_constraints} constraints on {backend.name}{b_g2} "
        f"in {timer.wall_ms() / 1000:.2f} s"
    )
    extras = [p for p in (args.trace, args.memlog) if p is not None]
    _print_written(out, written, extras)
    return 0


@contextlib.contextmanager
def _naming_witness(path: str | None) -> Iterator[None]:
    """Prefix an unsatisfied-witness error with the witness file it came from."""
    try:
        yield
    except UnsatisfiedWitness as exc:
        if path is None:
            raise
        raise UnsatisfiedWitness(f"{path}: {exc}") from None


def _print_written(folder: Path, names: list[str], extras: list[str] | None = None) -> None:
    paths = [str(folder / name) for name in names] + [str(p) for p in extras or ()]
    print("wrote " + ", ".join(paths))


def verify(args: argparse.Namespace) -> int:
    """``cuzk verify``: exit 0 and ``valid``, or exit 1 and the reason."""
    vk = read_vk_json(args.vk) if is_json_file(args.vk) else files.read_vk(args.vk)
    proof = (
        read_proof_json(args.proof) if is_json_file(args.proof) else files.read_proof(args.proof)
    )
    public = files.read_public(args.public, expected=vk.num_public)
    ok, reason = verify_proof(vk, proof, public)
    if ok:
        print("valid")
        return 0
    print(f"invalid: {reason}")
    return 1


def check(args: argparse.Namespace) -> int:
    """``cuzk check``: a witness against its circuit, or with ``--key`` a proving key."""
    if args.key is not None:
        if args.wtns is not None:
            raise CuzkError("--key checks a key; check a witness with --r1cs and --wtns alone")
        return key_check.run(args, _backend(args, Timer(level=0)))
    if args.r1cs is None or args.wtns is None:
        raise CuzkError("cuzk check needs --r1cs and --wtns (a witness), or --key (a proving key)")
    backend = _backend(args, Timer())
    count, failing = circom.check_witness(args.r1cs, args.wtns, backend)
    if failing is None:
        print(f"satisfied: all {count} constraints hold")
        return 0
    print(f"unsatisfied: constraint {failing} does not hold (A·B ≠ C)")
    return 1


def backends(args: argparse.Namespace) -> int:
    """``cuzk backends``: every backend, its version, source, and whether it can run here."""
    if args.check is not None:
        return backend_check.run(args)
    if args.seed is not None:
        raise CuzkError("--seed seeds the inputs of --check BACKEND; give --check too")
    plugins = load_plugins()
    for info in sorted(plugins.backends.values(), key=lambda i: i.name):
        if info.available:
            status = f"available ({info.reason})" if info.reason else "available"
        else:
            status = f"unavailable: {info.reason}"
        print(f"{info.name:<10} {info.version:<10} {status}")
        print(f"{'':<10} from {info.source}")
    for broken in plugins.broken:
        print(f"{broken.name:<10} {'?':<10} broken: {broken.reason}")
        print(f"{'':<10} from {broken.source}")
    for name in plugins.blocked:
        print(f"{name:<10} {'-':<10} blocked by {BLOCK_ENV}")
    return 0


def profile_show(args: argparse.Namespace) -> int:
    """``cuzk profile show``: the resolved profile as TOML."""
    name = args.profile if args.name is None else args.name  # '' is refused by load_profile
    sys.stdout.write(load_profile(name).to_toml())
    return 0


def profile_list(args: argparse.Namespace) -> int:
    """``cuzk profile list``: every named profile, where it comes from and its path."""
    named = named_profiles()
    width = max(len(p.name) for p in named)
    origin_width = max(len(p.origin) for p in named)
    for profile in named:
        hidden = f"  (hidden: the {profile.shadowed_by} one wins)" if profile.shadowed_by else ""
        print(f"{profile.name:<{width}}  {profile.origin:<{origin_width}}  {profile.path}{hidden}")
    for broken in plugin_profiles()[1]:
        print(f"{'?':<{width}}  {broken.origin}  broken: {broken.reason}")
    return 0
