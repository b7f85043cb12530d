"""``cuzk fleet``: ``cuzk serve``'s options, plus where the workers run and how many.

:mod:`cuzk_core.cli.parser` registers it through :func:`add_fleet_parser`; Ray is imported only
when the command runs.
"""

from __future__ import annotations

import argparse

from cuzk_core.cli.parser import whole_number
from cuzk_core.errors import CuzkError


def _workers(text: str) -> int | None:
    if text == "auto":
        return None
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer or auto")
    return int(text)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be ≥ 0")
    return value


def add_fleet_parser(sub: argparse._SubParsersAction, name: str, text: str) -> None:
    """Register ``fleet``: the options of ``serve`` and the fleet's own."""
    from cuzk_core.cli import serve_commands

    serve_commands.add_serve_parser(sub, name, text)
    fleet = sub.choices[name]
    fleet.add_argument(
        "--ray", metavar="ADDRESS", help="join this Ray cluster (default: start a local one)"
    )
    fleet.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N|auto",
        help="proving workers (default auto: one per GPU, or per --cpus-per-worker CPUs)",
    )
    fleet.add_argument(
        "--cpus-per-worker",
        type=_share,
        default=1.0,
        help="CPUs Ray reserves per worker (CPU backends: also fastcpu's threads; default 1)",
    )
    fleet.add_argument(
        "--gpus-per-worker", type=_share, default=0.0, help="GPUs per worker (default 0)"
    )
    fleet.add_argument(
        "--local-cpus",
        type=whole_number,
        help="CPUs of the local cluster (without --ray; default: all)",
    )
    fleet.set_defaults(handler=fleet_command)


def fleet_command(args: argparse.Namespace) -> int:
    """``cuzk fleet``: run the head until SIGTERM/SIGINT."""
    from cuzk_core.cli.serve_commands import _need_serve_extra

    _need_serve_extra()
    try:
        import ray  # noqa: F401
    except ImportError:
        raise CuzkError("this command needs the fleet extra: pip install 'cuzk[fleet]'") from None

    from cuzk_core.cli.serve_commands import serve_configs
    from cuzk_core.fleet.head import FleetConfig
    from cuzk_core.fleet.serve import run_fleet

    if args.ray is not None and args.local_cpus is not None:
        raise CuzkError("--local-cpus is for a local cluster; it cannot size the one --ray joins")
    if args.local_cpus is not None and args.local_cpus < 1:
        raise CuzkError(f"--local-cpus {args.local_cpus}: at least one")
    server, engine = serve_configs(args)
    fleet = FleetConfig(
        ray_address=args.ray,
        workers=args.workers,
        cpus_per_worker=args.cpus_per_worker,
        gpus_per_worker=args.gpus_per_worker,
        local_cpus=args.local_cpus,
    )
    return run_fleet(server, engine, fleet)
