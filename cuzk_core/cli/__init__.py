"""The ``cuzk`` command line: parse, dispatch, and turn user errors into one line and exit 2."""

from __future__ import annotations

import sys

from cuzk_core.cli.parser import build_parser
from cuzk_core.errors import CuzkError

_PATH_OPTIONS = {
    "out": "--out",
    "params": "--params",
    "zkey": "--zkey",
    "wtns": "--wtns",
    "r1cs": "--r1cs",
    "vk": "--vk",
    "proof": "--proof",
    "public": "--public",
    "trace": "--trace",
    "memlog": "--memlog",
    "json": "--json",
    "config": "--config",
    "state_dir": "--state-dir",
    "token_file": "--token-file",
}
"""Options that name a file or folder, by their argparse dest."""


def main(argv: list[str] | None = None) -> int:
    """Run ``cuzk`` with ``argv`` (default: the process's arguments); returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser(argv).parse_args(argv)
    try:
        for dest, option in _PATH_OPTIONS.items():
            if getattr(args, dest, None) == "":  # Path("") is ".": the current folder, unasked
                raise CuzkError(f"{option} '': an empty path; give a file or folder")
        if getattr(args, "profile", None) is not None:
            from cuzk_core.profile import load_profile

            load_profile(args.profile)  # a bad profile is refused by every command, used or not
        return args.handler(args)
    except CuzkError as exc:
        print(f"cuzk: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("cuzk: interrupted", file=sys.stderr)
        return 130
