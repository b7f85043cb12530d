"""What each ``cuzk`` sub-command does; argument parsing lives in :mod:`cuzk_core.cli.parser`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cuzk_core.backend import Backend
from cuzk_core.bench.observe import observe
from cuzk_core.cache import cache_dir
from cuzk_core.circuits import get_circuit
from cuzk_core.cli import backend_check, circom
from cuzk_core.errors import CuzkError
from cuzk_core.fileio import write_json_atomic
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.key_sources import ParamsFile, stderr_log
from cuzk_core.groth16.prover import PROVE_STEPS
from cuzk_core.groth16.prover import prove as run_prover
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.groth16.setup import SETUP_STEPS, generate_parameters
from cuzk_core.groth16.verifier import verify_proof
from cuzk_core.interop.snarkjs_json import is_json_file, read_proof_json, read_vk_json
from cuzk_core.plugins import BLOCK_ENV, load_plugins
from cuzk_core.profile import load_profile, shipped_profiles
from cuzk_core.progress import Progress
from cuzk_core.timing import Timer


def _progress(args: argparse.Namespace, label: str, total: int) -> Progress:
    return Progress(label, total, enabled=False if args.quiet else None)


def key_log(args: argparse.Namespace):
    """Where key-cache notes (conversions, rebuilds) go: stderr, or nowhere with --quiet."""
    return (lambda message: None) if args.quiet else stderr_log


def circuit_spec(args: argparse.Namespace) -> dict[str, Any]:
    """The embedded circuit's name and the knobs given on the command line."""
    knobs = {"challenges": args.challenges, "depth": args.depth, "seed": args.circuit_seed}
    return {"circuit": args.circuit, **{k: v for k, v in knobs.items() if v is not None}}


def build_circuit(spec: dict[str, Any]):
    """The circuit a spec names, or a one-line error naming the bad knob."""
    knobs = {k: v for k, v in spec.items() if k != "circuit"}
    try:
        return get_circuit(spec["circuit"], **knobs)
    except (KeyError, TypeError, ValueError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        raise CuzkError(f"circuit {spec['circuit']!r}: {message}") from None


def _backend(args: argparse.Namespace, timer: Timer) -> Backend:
    profile = load_profile(args.profile)
    return load_plugins().backend(profile, timer)


def synthesizer(backend: Backend, circuit):
    """A callable giving the circuit's matrices (input rows included) and witness, for prove()."""

    def synthesize():
        synthesized = backend.synthesize(circuit)
        return with_input_rows(synthesized.matrices), synthesized.witness

    return synthesize


def _make_params(backend: Backend, circuit, seed: int | None, progress: Progress):
    matrices, _ = synthesizer(backend, circuit)()
    progress.step("synthesis")
    return generate_parameters(matrices, seed=seed, progress=progress, backend=backend)


def setup(args: argparse.Namespace) -> int:
    """``cuzk setup``: parameters for a circuit into a folder."""
    if args.r1cs is not None:
        return circom.setup(args)
    timer = Timer()
    backend = _backend(args, timer)
    spec = circuit_spec(args)
    circuit = build_circuit(spec)
    progress = _progress(args, "setup", SETUP_STEPS + 1)
    pk = _make_params(backend, circuit, args.seed, progress)
    progress.close()
    params_dir.write_params_dir(Path(args.out), pk, {"circuit": circuit.name, **circuit.knobs()})
    out = f"{args.out}/{params_dir.PARAMS_FILE}"
    print(f"wrote {out}, its key cache {out}.cuzkkey and {args.out}/{params_dir.VK_FILE}")
    return 0


def cached_params(circuit, args: argparse.Namespace) -> Path:
    """The cache folder for ``circuit``'s parameters, generating them once if missing."""
    spec = {"circuit": circuit.name, **circuit.knobs()}
    key = "-".join([circuit.name, *(f"{k}{v}" for k, v in sorted(circuit.knobs().items()))])
    folder = cache_dir() / "params" / key
    if not (folder / params_dir.PARAMS_FILE).is_file():
        if not args.quiet:
            print(f"cuzk: generating parameters for {key} once, into {folder}", file=sys.stderr)
        progress = _progress(args, "setup", SETUP_STEPS + 1)
        setup_backend = _backend(args, Timer(level=0))  # setup is not part of the proof's timings
        pk = _make_params(setup_backend, circuit, None, progress)
        progress.close()
        params_dir.publish_params_dir(folder, pk, spec)
    return folder


def prove(args: argparse.Namespace) -> int:
    """``cuzk prove``: a proof, its verifying key, public inputs and timings into ``--out``."""
    if args.zkey is not None or args.r1cs is not None or args.wtns is not None:
        return circom.prove(args)
    timer = Timer()
    backend = _backend(args, timer)
    if args.params is not None:
        folder = Path(args.params)
        spec = params_dir.read_circuit_spec(folder)
        circuit = build_circuit(spec)
    else:
        circuit = build_circuit(circuit_spec(args))
        folder = cached_params(circuit, args)
    params_file = folder / params_dir.PARAMS_FILE

    progress = _progress(args, "prove", PROVE_STEPS)
    with observe(backend, args.trace, args.memlog, args.memlog_interval) as observed:
        result = run_prover(
            backend,
            synthesizer(backend, circuit),
            lambda: ParamsFile(params_file, key_log(args)).load(backend),
            seed=args.seed,
            progress=progress,
        )
    progress.close()
    vk = files.read_vk(folder / params_dir.VK_FILE)

    out = Path(args.out)
    files.write_proof(out / "proof.bin", result.proof)
    files.write_vk(out / "vk.bin", vk)
    files.write_public(out / "public.json", result.public_inputs)
    timings = {
        "backend": backend.name,
        "profile": backend.ctx.profile.name,
        **timer.to_json(),
        **observed,
    }
    write_json_atomic(out / "timings.json", timings)
    total_ms = sum(timer.phase_totals().values())
    print(f"proof written to {out}/proof.bin ({total_ms / 1000:.2f} s in {backend.name})")
    return 0


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


def backends(args: argparse.Namespace) -> int:
    """``cuzk backends``: every backend, its version, source, and whether it can run here."""
    if args.check is not None:
        return backend_check.run(args)
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
    sys.stdout.write(load_profile(args.name or args.profile).to_toml())
    return 0


def profile_list(args: argparse.Namespace) -> int:
    """``cuzk profile list``: the shipped profiles."""
    for name, path in sorted(shipped_profiles().items()):
        print(f"{name:<12} {path}")
    return 0
