"""How long ``cuzk`` takes to start: whole processes, this tree against a baseline tree, A B A B.

Each command (``cuzk --help``, ``cuzk prove --help`` …) runs as ``python -m cuzk_core ARGS`` in a
fresh process from an empty folder, once from this checkout and once with ``--baseline DIR`` (a
source tree of another commit, e.g. ``git archive COMMIT | tar -x -C DIR``) first on PYTHONPATH;
wall seconds and the child's user+system CPU seconds, medians and ranges, go to JSON with the
machine, its load and the commit. Also recorded: which heavy packages each command imported, and
``python -X importtime -c 'import cuzk_core.cli'`` for both trees.

    git archive COMMIT | tar -x -C /tmp/cuzk-base
    python bench/cli_startup.py --baseline /tmp/cuzk-base --baseline-commit COMMIT --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cuzk_core.bench import environment
from cuzk_core.fileio import write_json_atomic

COMMANDS = (
    ["--help"],
    ["--version"],
    ["verify", "--help"],
    ["setup", "--help"],
    ["prove", "--help"],
    ["backends"],
)
HEAVY = ("numpy", "cuzk_core.conformance.checks", "cuzk_core.cli.commands", "cuzk_backend_cpu")
_MODULES = (
    "import json, sys\nfrom cuzk_core.cli import main\ntry:\n    main(sys.argv[1:])\n"
    "except SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
)


def _environment(baseline: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if baseline is not None:
        env["PYTHONPATH"] = str(baseline)
    return env


def time_once(args: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall seconds, user+system CPU seconds) of one ``python -m cuzk_core ARGS``."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "cuzk_core", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    if child.returncode != 0:
        raise SystemExit(f"cuzk {' '.join(args)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def heavy_imports(args: list[str], env: dict[str, str], cwd: str) -> list[str]:
    """Which of :data:`HEAVY` the command imported (parsing included, running too)."""
    done = subprocess.run(
        [sys.executable, "-c", _MODULES, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    modules = set(json.loads(done.stderr.splitlines()[-1]))
    return [name for name in HEAVY if name in modules]


def import_seconds(env: dict[str, str], cwd: str) -> float:
    """``python -X importtime -c 'import cuzk_core.cli'``: the package's cumulative import time."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import cuzk_core.cli"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    last = done.stderr.strip().splitlines()[-1]  # the outermost import comes last
    _, cumulative_us, name = (field.strip() for field in last.split("|"))
    assert name == "cuzk_core.cli", last
    return int(cumulative_us) / 1e6


def _summary(values: list[float]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(values), 4),
        "min_s": round(min(values), 4),
        "max_s": round(max(values), 4),
        "seconds": [round(v, 4) for v in values],
    }


def measure(args: list[str], baseline: Path | None, runs: int, cwd: str) -> dict[str, Any]:
    """One command, alternating this tree (A) and the baseline (B) when there is one."""
    variants = {"this": _environment(None)}
    if baseline is not None:
        variants["baseline"] = _environment(baseline)
    for env in variants.values():  # warm the file cache and the bytecode
        time_once(args, env, cwd)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, env in variants.items():
            samples[name].append(time_once(args, env, cwd))
    row: dict[str, Any] = {"command": ["cuzk", *args]}
    for name, env in variants.items():
        row[name] = {
            "wall": _summary([wall for wall, _ in samples[name]]),
            "cpu": _summary([cpu for _, cpu in samples[name]]),
            "imports": heavy_imports(args, env, cwd),
        }
    return row


def main() -> None:
    """Measure every command of :data:`COMMANDS` and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="source tree of the commit to compare with")
    parser.add_argument("--baseline-commit", help="the commit that tree holds, for the record")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per command and tree")
    parser.add_argument("--json", type=Path, required=True, help="where to write the results")
    args = parser.parse_args()
    trees = {"this": None, **({"baseline": args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: -m puts the cwd on sys.path
        start = environment.capture()
        rows = [measure(command, args.baseline, args.runs, cwd) for command in COMMANDS]
        imports = {
            name: _summary([import_seconds(_environment(tree), cwd) for _ in range(args.runs)])
            for name, tree in trees.items()
        }
    for row in rows:
        figures = "  ".join(
            f"{name}: cpu {row[name]['cpu']['median_s']:.3f} s, "
            f"wall {row[name]['wall']['median_s']:.3f} s"
            for name in ("this", "baseline")
            if name in row
        )
        print(f"{' '.join(row['command']):<22} {figures}")
    for name, summary in imports.items():
        print(f"import cuzk_core.cli  {name}: {summary['median_s']:.3f} s (-X importtime)")
    document = {
        "benchmark": "cli start-up",
        **start,
        "load_average_end": environment.load_average(),
        "profile": None,  # start-up only: no command here loads a profile
        "baseline": str(args.baseline) if args.baseline else None,
        "baseline_commit": args.baseline_commit,
        "runs": args.runs,
        "rows": rows,
        "import_cuzk_core_cli": imports,
    }
    write_json_atomic(args.json, document)
    print(f"written to {args.json}")


if __name__ == "__main__":
    main()
