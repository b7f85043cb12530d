"""The ``cuzk`` command line: parse, dispatch, and turn user errors into one line and exit 2."""

from __future__ import annotations

import sys

from cuzk_core.cli.parser import build_parser
from cuzk_core.errors import CuzkError

_PATH_OPTIONS = (
    "out", "params", "zkey", "wtns", "r1cs", "vk", "proof", "public", "trace", "memlog", "json",
    "config", "state_dir", "token_file",
)  # fmt: skip
"""Options that name a file or folder, by their argparse dest (``--state-dir``: ``state_dir``)."""


def main(argv: list[str] | None = None) -> int:
    """Run ``cuzk`` with ``argv`` (default: the process's arguments); returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser(argv).parse_args(argv)
    try:
        for dest in _PATH_OPTIONS:
            if getattr(args, dest, None) == "":  # Path("") is ".": the current folder, unasked
                option = "--" + dest.replace("_", "-")
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
