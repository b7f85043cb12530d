"""The argument parser of ``cuzk``: global options and one sub-command per task."""

from __future__ import annotations

import argparse
import os

from cuzk_core import __version__
from cuzk_core.cli import backend_check, bench_commands, cache_commands, commands


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a non-negative integer")
    return value


def _add_circuit_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("embedded circuit")
    group.add_argument("--circuit", default="porep-lite", help="circuit name (default porep-lite)")
    group.add_argument("--challenges", type=int, help="porep-lite: challenged leaves (K)")
    group.add_argument("--depth", type=int, help="porep-lite: Merkle tree depth")
    group.add_argument(
        "--circuit-seed", type=_seed, help="porep-lite: seed of the tree data and challenges"
    )


def build_parser() -> argparse.ArgumentParser:
    """The full ``cuzk`` parser."""
    parser = argparse.ArgumentParser(
        prog="cuzk",
        description="A Groth16 prover for BLS12-381 in which every heavy step is a plugin.",
    )
    parser.add_argument("--version", action="version", version=f"cuzk {__version__}")
    parser.add_argument(
        "--profile",
        default=os.environ.get("CUZK_PROFILE"),
        help="profile path or shipped profile name (default: $CUZK_PROFILE, else cpu)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    prove = sub.add_parser("prove", help="make a proof (default: the embedded circuit)")
    prove.add_argument("--params", help="parameters folder from `cuzk setup` (default: cached)")
    prove.add_argument("--out", default="out", help="output folder (default: out)")
    prove.add_argument("--seed", type=_seed, help="derive the proof randomness from this seed")
    _add_circuit_options(prove)
    circom = prove.add_argument_group("circom / snarkjs circuit")
    circom.add_argument("--zkey", help="snarkjs Groth16 proving key (.zkey) to prove with")
    circom.add_argument("--wtns", help="witness from `snarkjs wtns calculate` (.wtns)")
    circom.add_argument(
        "--r1cs", help="circom circuit (.r1cs): with --params, or with --zkey to check the witness"
    )
    bench_commands.add_observation_options(prove)
    prove.set_defaults(handler=commands.prove)

    setup = sub.add_parser("setup", help="generate Groth16 parameters for a circuit")
    setup.add_argument("--out", required=True, help="parameters folder to write")
    setup.add_argument(
        "--seed", type=_seed, help="derive the toxic waste from this seed (tests only: insecure)"
    )
    _add_circuit_options(setup)
    setup.add_argument("--r1cs", help="a circom circuit (.r1cs) instead of an embedded one")
    setup.set_defaults(handler=commands.setup)

    verify = sub.add_parser("verify", help="verify a proof (cuzk's or snarkjs's files)")
    verify.add_argument(
        "--vk", required=True, help="verifying key (vk.bin or snarkjs verification_key.json)"
    )
    verify.add_argument("--proof", required=True, help="proof (proof.bin or snarkjs proof.json)")
    verify.add_argument("--public", required=True, help="public inputs (public.json)")
    verify.set_defaults(handler=commands.verify)

    check = sub.add_parser("check", help="check that a circom witness satisfies its circuit")
    check.add_argument("--r1cs", required=True, help="circom circuit (.r1cs)")
    check.add_argument("--wtns", required=True, help="witness (.wtns)")
    check.set_defaults(handler=commands.check)

    backends = sub.add_parser("backends", help="list every backend and whether it can run here")
    backend_check.add_check_options(backends, _seed)
    backends.set_defaults(handler=commands.backends)

    profile = sub.add_parser("profile", help="inspect profiles")
    profile_sub = profile.add_subparsers(dest="profile_command", required=True, metavar="ACTION")
    show = profile_sub.add_parser("show", help="print a profile after `extends` is resolved")
    show.add_argument("name", nargs="?", help="profile path or name (default: --profile)")
    show.set_defaults(handler=commands.profile_show)
    listing = profile_sub.add_parser("list", help="list the shipped profiles")
    listing.set_defaults(handler=commands.profile_list)

    bench_commands.add_bench_parser(sub, _add_circuit_options, _seed)
    bench_commands.add_trace_parser(sub)
    cache_commands.add_cache_parser(sub)
    return parser
