"""The ``cuzk`` command line: parse, dispatch, and turn user errors into one line and exit 2."""

from __future__ import annotations

import sys

from cuzk_core.cli.parser import build_parser
from cuzk_core.errors import CuzkError


def main(argv: list[str] | None = None) -> int:
    """Run ``cuzk`` with ``argv`` (default: the process's arguments); returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser(argv).parse_args(argv)
    try:
        return args.handler(args)
    except CuzkError as exc:
        print(f"cuzk: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("cuzk: interrupted", file=sys.stderr)
        return 130
