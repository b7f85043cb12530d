"""The argument parser of ``cuzk``: global options and one sub-command per task.

Start-up stays light: only the sub-command on the command line gets its arguments built, and a
command's module is imported when it runs, so ``cuzk --help`` imports no numpy, no backend and
no conformance check. The global options are accepted after the sub-command too.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

from cuzk_core import __version__

Handler = Callable[[argparse.Namespace], int]
Register = Callable[["argparse._SubParsersAction[Any]", str, str], None]
"""Adds sub-command ``name`` with its ``help`` and every argument to the sub-parsers."""

PROVE_FILES = """\
files written into --out:
  proof.bin              the proof: A, B, C compressed, bellperson's layout
  vk.bin                 the verifying key, bellperson's layout
  public.json            the public inputs as decimal strings
  timings.json           the backend, the profile and every span's time
  proof.json             with --zkey or --r1cs: the proof in snarkjs's JSON
  verification_key.json  with --zkey or --r1cs: the verifying key in snarkjs's JSON
--trace FILE and --memlog FILE are written when given. Without --params, --zkey and --r1cs,
the embedded circuit's parameters are generated once into $CUZK_CACHE_DIR/params (default
~/.cache/cuzk/params) and reused; a key without a cache beside it is converted once into
$CUZK_CACHE_DIR/keys (see `cuzk cache list`)."""
"""The epilog of ``cuzk prove --help``: every file the command writes."""

SETUP_FILES = """\
files written into --out:
  params.bin             the proving key (bellperson's Parameters layout)
  params.bin.cuzkkey     the proving key's cache, which proofs load from
  vk.bin                 the verifying key
  circuit.json           the circuit and knobs the parameters are for
  verification_key.json  with --r1cs: the verifying key in snarkjs's JSON
written instead with --r1cs and --zkey Z (development only: insecure toxic waste):
  Z                      a snarkjs Groth16 zkey that snarkjs and cuzk prove with
  Z's .vk.json twin      its verifying key in snarkjs's JSON (out.zkey → out.vk.json)"""
"""The epilog of ``cuzk setup --help``: every file the command writes."""

_CIRCUIT_KNOBS = {
    "challenges": ("--challenges", "challenged leaves (K)"),
    "depth": ("--depth", "Merkle tree depth"),
    "seed": ("--circuit-seed", "seed of the tree data and challenges"),
}
"""porep-lite's knobs: the option that sets each and what it is (defaults come from the class)."""


def _global_options() -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """Options that apply to every command, with their defaults before any command."""
    return [
        (
            ("--profile",),
            {
                "default": os.environ.get("CUZK_PROFILE"),
                "help": "profile path or name, shipped or a plugin's (`cuzk profile list`); "
                "default: $CUZK_PROFILE, else cpu",
            },
        ),
        (("-q", "--quiet"), {"action": "store_true", "default": False, "help": "no progress bar"}),
        (("--version",), {"action": "version", "version": f"cuzk {__version__}"}),
    ]


def _add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    """The global options on ``parser``; after a command, an absent one keeps the value given
    before the command (its default is SUPPRESS, so the sub-command's namespace lacks it)."""
    if not after_command:
        for flags, options in _global_options():
            parser.add_argument(*flags, **options)
        return
    group = parser.add_argument_group("global options (also accepted before the command)")
    for flags, options in _global_options():
        if "default" in options:
            options = {**options, "default": argparse.SUPPRESS}
        group.add_argument(*flags, **options)


class _CommandParser(argparse.ArgumentParser):
    """A sub-command's parser (nested ones too): it takes the global options as well, added as
    it starts parsing so that its help lists them after the command's own options."""

    _has_global_options = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if not self._has_global_options:
            _add_global_options(self, after_command=True)
            self._has_global_options = True
        return super().parse_known_args(args, namespace)


def _takes_value(option: str) -> bool:
    """Whether ``option`` (a global option, or a unique prefix of a long one) takes a value."""
    for flags, options in _global_options():
        if "action" in options:
            continue
        abbreviates = option.startswith("--") and any(f.startswith(option) for f in flags)
        if option in flags or abbreviates:
            return True
    return False


def command_in(argv: Sequence[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option or a global option's
    value (None when there is none, as in ``cuzk --help``)."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if not word.startswith("-") or word == "-":
            return word
        if "=" not in word and _takes_value(word):
            next(words, None)
    return None


def _handler(module: str, function: str) -> Handler:
    """A handler that imports ``module`` when the command runs, not when the parser is built."""

    def handle(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(module), function)(args)

    return handle


_WHOLE = re.compile(r"-?[0-9]+")
_SEED = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")


def whole_number(text: str) -> int:
    """An option's whole number: ASCII decimal digits only (``int`` also takes ``1_0``, `` 1``,
    ``+1`` and other scripts' digits, which no one means on a command line)."""
    if not _WHOLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (ASCII digits)")
    return int(text)


def _seed(text: str) -> int:
    if text.startswith("-") and _SEED.fullmatch(text[1:]):
        raise argparse.ArgumentTypeError(f"{text!r} must be a non-negative integer")
    if not _SEED.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer (ASCII digits, or 0x, 0o, 0b and their digits)"
        )
    return int(text, 0)


def _knob_defaults() -> dict[str, dict[str, Any]]:
    """Every embedded circuit's knobs and their defaults, read from the circuit's constructor."""
    from cuzk_core.circuits import CIRCUITS

    return {
        name: {
            knob: parameter.default
            for knob, parameter in inspect.signature(circuit).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }
        for name, circuit in CIRCUITS.items()
    }


def _add_circuit_options(parser: argparse.ArgumentParser) -> None:
    defaults = _knob_defaults()
    group = parser.add_argument_group("embedded circuit")
    group.add_argument(
        "--circuit",
        help=f"circuit name: {', '.join(defaults)} (default porep-lite)",
    )
    porep_lite = defaults["porep-lite"]
    for knob, (flag, what) in _CIRCUIT_KNOBS.items():
        kind = _seed if knob == "seed" else whole_number
        group.add_argument(flag, type=kind, help=f"porep-lite: {what} (default {porep_lite[knob]})")


def _prove(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import bench_commands  # --trace/--memlog (its module imports bench too)

    prove = sub.add_parser(
        name,
        help=text,
        epilog=PROVE_FILES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    prove.set_defaults(handler=_handler("cuzk_core.cli.commands", "prove"))


def _setup(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    setup = sub.add_parser(
        name,
        help=text,
        epilog=SETUP_FILES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    setup.add_argument("--out", help="parameters folder to write (or --zkey with --r1cs)")
    setup.add_argument(
        "--seed", type=_seed, help="derive the toxic waste from this seed (tests only: insecure)"
    )
    _add_circuit_options(setup)
    setup.add_argument("--r1cs", help="a circom circuit (.r1cs) instead of an embedded one")
    setup.add_argument(
        "--zkey", help="with --r1cs: write a snarkjs zkey instead (development only: insecure)"
    )
    setup.set_defaults(handler=_handler("cuzk_core.cli.commands", "setup"))


def _verify(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    verify = sub.add_parser(name, help=text)
    verify.add_argument(
        "--vk", required=True, help="verifying key (vk.bin or snarkjs verification_key.json)"
    )
    verify.add_argument("--proof", required=True, help="proof (proof.bin or snarkjs proof.json)")
    verify.add_argument("--public", required=True, help="public inputs (public.json)")
    verify.set_defaults(handler=_handler("cuzk_core.cli.commands", "verify"))


def _check(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    check = sub.add_parser(name, help=text)
    check.add_argument("--r1cs", help="circom circuit (.r1cs): with --wtns, or with a zkey --key")
    check.add_argument("--wtns", help="witness (.wtns) to check against --r1cs")
    check.add_argument(
        "--key",
        help="proving key to check in full: a snarkjs .zkey, a `cuzk setup` folder or params.bin",
    )
    check.set_defaults(handler=_handler("cuzk_core.cli.commands", "check"))


def _backends(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import backend_check

    backends = sub.add_parser(name, help=text)
    backend_check.add_check_options(backends, _seed)
    backends.set_defaults(handler=_handler("cuzk_core.cli.commands", "backends"))


def _profile(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    profile = sub.add_parser(name, help=text)
    profile_sub = profile.add_subparsers(dest="profile_command", required=True, metavar="ACTION")
    show = profile_sub.add_parser("show", help="print a profile after `extends` is resolved")
    show.add_argument("name", nargs="?", help="profile path or name (default: --profile)")
    show.set_defaults(handler=_handler("cuzk_core.cli.commands", "profile_show"))
    listing = profile_sub.add_parser(
        "list", help="list the named profiles (shipped and plugins'), where each comes from"
    )
    listing.set_defaults(handler=_handler("cuzk_core.cli.commands", "profile_list"))


def _bench(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import bench_commands, serve_commands

    actions = bench_commands.add_bench_parser(sub, _add_circuit_options, _seed)
    serve_commands.add_daemon_bench_parsers(actions, _seed)


def _trace(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import bench_commands

    bench_commands.add_trace_parser(sub)


def _cache(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import cache_commands

    cache_commands.add_cache_parser(sub)


def _serve(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import serve_commands

    serve_commands.add_serve_parser(sub, name, text)


def _client(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.cli import serve_commands

    serve_commands.add_client_parser(sub, name, text, _seed)


def _fleet(sub: argparse._SubParsersAction[Any], name: str, text: str) -> None:
    from cuzk_core.fleet import cli

    cli.add_fleet_parser(sub, name, text)


COMMANDS: dict[str, tuple[str, Register]] = {
    "prove": ("make a proof (default: the embedded circuit)", _prove),
    "setup": ("generate Groth16 parameters for a circuit", _setup),
    "verify": ("verify a proof (cuzk's or snarkjs's files)", _verify),
    "check": ("check a circom witness against its circuit, or a proving key (--key)", _check),
    "backends": ("list every backend and whether it can run here", _backends),
    "profile": ("inspect profiles", _profile),
    # bench_commands and cache_commands register these with their help; a test holds the
    # texts equal.
    "bench": ("time one phase alone, A/B profiles, compare results", _bench),
    "trace": ("inspect span traces from `cuzk prove --trace`", _trace),
    "cache": ("list or clear key caches, generated parameters and compiled circuits", _cache),
    "serve": ("run the proving daemon (gRPC)", _serve),
    "client": ("talk to a running daemon", _client),
    "fleet": ("run the daemon's API in front of proving workers on Ray", _fleet),
}
"""Every sub-command: its one-line help and the function that registers its arguments."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``cuzk`` parser. Given ``argv``, only the command it names gets its arguments (the
    others a name and a help line, enough for ``cuzk --help`` and for errors); without, all do."""
    parser = argparse.ArgumentParser(
        prog="cuzk",
        description="A Groth16 prover for BLS12-381 in which every heavy step is a plugin.",
        epilog="The global options may also follow the command: "
        "`cuzk prove --profile cpu -q` is `cuzk --profile cpu -q prove`.",
    )
    _add_global_options(parser, after_command=False)
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_CommandParser
    )
    chosen = None if argv is None else command_in(argv)
    for name, (text, register) in COMMANDS.items():
        if argv is None or name == chosen:
            register(sub, name, text)
        else:
            sub.add_parser(name, help=text)
    return parser
