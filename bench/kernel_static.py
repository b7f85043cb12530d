"""Kernels read without a GPU: registers and spills (ptxas) and SASS instruction mixes
(cuobjdump) of every kernel of a CUDA file, for one or more define sets or checkouts side by
side.

The source is the one the GPU backends compile (``kernels.assemble``: every header inlined, the
defines on top), built by nvcc for the H200's architecture. A register count decides how many
warps an SM holds and a spill is local-memory traffic, so the static half of a kernel A/B costs
no device time:

    python bench/kernel_static.py --variant "" --variant "XYZZ_PAIRS=1 ADD_PAIRS=1" \\
        --match 'sum_|reduce'
    python bench/kernel_static.py --sass --cuobjdump PATH --match batch_affine_g1 --out s.json
    python bench/kernel_static.py --file ntt/ntt.cu --loops --match ntt_stages
    python bench/kernel_static.py --tree . --tree ../branch --sass --match _g2

``--tree`` builds another checkout's kernels (a branch's worktree) beside this one's. With
``--sass`` a column's cell ends in ``=`` where the kernel's SASS (its callees included) is the
first column's instruction for instruction: a change that should leave a kernel alone is
checked without a GPU.

nvcc comes from PATH (the CUDA toolkit); cuobjdump, for ``--sass``, from PATH, ``--cuobjdump``,
or PyPI's ``nvidia-cuda-cuobjdump`` wheel (``nvidia/cu13/bin/cuobjdump`` inside it).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from cuzk_backend_gpu.kernels import COMPILE_OPTIONS, assemble
from cuzk_core.fileio import write_json_atomic

_ENTRY = re.compile(r"Compiling entry function '(\w+)'")
_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$", re.M)
_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
"""A SASS instruction: its address, opcode and operands."""
CLASSES = {
    "wide_multiplies": ("IMAD.WIDE",),
    "multiplies": ("IMAD",),
    "adds": ("IADD3", "IADD"),
    "moves": ("MOV",),
    "global_loads": ("LDG",),
    "global_stores": ("STG",),
    "local_loads": ("LDL",),
    "local_stores": ("STL",),
    "calls": ("CALL",),
}
"""Opcode classes counted per kernel, by opcode prefix (a wide multiply is not also counted as
a multiply)."""


def parse_defines(text: str) -> dict[str, int]:
    """``"K=V K=V"`` as a dict; an empty string is no defines."""
    defines = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"define {item!r}: expected NAME=INTEGER")
        try:
            defines[key] = int(value, 0)
        except ValueError:
            raise SystemExit(f"define {item!r}: the value is not an integer") from None
    return defines


def parse_ptxas(log: str) -> dict[str, dict[str, int]]:
    """Per kernel (``extern "C"`` entry), its registers and spill bytes from ``ptxas -v``."""
    kernels: dict[str, dict[str, int]] = {}
    name = None
    stores = loads = 0
    for line in log.splitlines():
        if found := _ENTRY.search(line):
            name, stores, loads = found.group(1), 0, 0
        elif (found := _SPILLS.search(line)) and name:
            stores, loads = int(found.group(1)), int(found.group(2))
        elif (found := _USED.search(line)) and name:
            kernels[name] = {
                "registers": int(found.group(1)),
                "spill_stores": stores,
                "spill_loads": loads,
            }
            name = None
    return kernels


def _functions(listing: str) -> dict[str, list[tuple[int, str, str]]]:
    """Each function of a ``cuobjdump -sass`` listing (its callees, which cuobjdump lists
    inside it, included): its instructions as (address, opcode, operands), NOPs (the
    listing's padding) left out."""
    functions = {}
    starts = list(_FUNCTION.finditer(listing))
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(listing)
        functions[start.group(1)] = [
            (int(address, 16), op, operands)
            for address, op, operands in _INSTRUCTION.findall(listing, start.end(), end)
            if op != "NOP"
        ]
    return functions


def parse_sass(listing: str) -> dict[str, dict[str, Any]]:
    """Per kernel of a ``cuobjdump -sass`` listing, its instruction count and classes (the
    kernel's callees included), and a digest of its instructions (equal SASS, equal digest)."""
    kernels: dict[str, dict[str, Any]] = {}
    for name, instructions in _functions(listing).items():
        opcodes = Counter(op for _, op, _ in instructions)
        text = "\n".join(f"{op} {operands.strip()}" for _, op, operands in instructions)
        counts: dict[str, Any] = {
            "instructions": sum(opcodes.values()),
            "sass_digest": hashlib.sha256(text.encode()).hexdigest()[:16],
        }
        for cls, prefixes in CLASSES.items():
            counts[cls] = sum(
                n
                for op, n in opcodes.items()
                if op.startswith(prefixes) and not (cls == "multiplies" and "WIDE" in op)
            )
        kernels[name] = counts
    return kernels


_BRANCH_TARGET = re.compile(r"^\s+(0x[0-9a-f]+)")
PIPE_UNITS = {"IMAD.WIDE": 4, "IMAD.HI": 4, "IMAD": 2}
"""Multiply-pipe units a warp instruction costs, by opcode prefix, the first match counting
(round 47's model, bench/NOTES.md); a loop's model time is its units + MODEL_ISSUE_SHARE a
instruction."""
MODEL_ISSUE_SHARE = 0.2


def parse_loops(listing: str) -> dict[str, list[dict[str, Any]]]:
    """Per kernel of a ``cuobjdump -sass`` listing, each loop (a backward branch and the
    instructions from its target to it): instructions, multiplies by kind, multiply-pipe units
    and the model (PIPE_UNITS, MODEL_ISSUE_SHARE). Nested loops are listed each whole."""
    loops: dict[str, list[dict[str, Any]]] = {}
    for name, lines in _functions(listing).items():
        index = {address: k for k, (address, _, _) in enumerate(lines)}
        found = []
        for k, (address, op, rest) in enumerate(lines):
            target = _BRANCH_TARGET.match(rest) if op == "BRA" else None
            if target is None or int(target.group(1), 16) not in index:
                continue
            first = index[int(target.group(1), 16)]
            if first >= k:  # forward, or the branch to itself that ends a listing
                continue
            ops = [o for _, o, _ in lines[first : k + 1]]
            units = sum(
                next((u for prefix, u in PIPE_UNITS.items() if o.startswith(prefix)), 0)
                for o in ops
            )
            found.append(
                {
                    "start": f"{lines[first][0]:#x}",
                    "end": f"{address:#x}",
                    "instructions": len(ops),
                    "wide_multiplies": sum(o.startswith("IMAD.WIDE") for o in ops),
                    "high_multiplies": sum(o.startswith("IMAD.HI") for o in ops),
                    "other_multiplies": sum(
                        o.startswith("IMAD") and not o.startswith(("IMAD.WIDE", "IMAD.HI"))
                        for o in ops
                    ),
                    "local_accesses": sum(o.startswith(("LDL", "STL")) for o in ops),
                    "pipe_units": units,
                    "model": round(units + MODEL_ISSUE_SHARE * len(ops), 1),
                }
            )
        loops[name] = found
    return loops


def find_cuobjdump(given: str | None) -> str:
    """The cuobjdump to run: ``given``, else PATH's; exits with how to get one."""
    found = given or shutil.which("cuobjdump")
    if not found or not Path(found).is_file():
        raise SystemExit(
            f"cuobjdump {'not found at ' + given if given else 'not on PATH'}: pass --cuobjdump "
            "PATH (PyPI's nvidia-cuda-cuobjdump wheel holds nvidia/cu13/bin/cuobjdump)"
        )
    return found


def kernels_of(tree: Path) -> Path:
    """The kernel folder of a checkout (or the folder itself when given); exits when none."""
    for root in (tree / "backends" / "kernels", tree):
        if (root / "common.cuh").is_file():
            return root
    raise SystemExit(f"--tree {tree}: no backends/kernels/common.cuh there (not a cuzk checkout)")


def build(
    name: str,
    defines: dict[str, int],
    arch: str,
    sass_tool: str | None,
    loops: bool = False,
    root: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """Every kernel of ``name`` under ``defines`` (from ``root``, a kernel folder, or the
    installed kernels): ptxas figures, and SASS counts (and each loop's, with ``loops``) if
    asked."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise SystemExit("nvcc not on PATH: kernel_static.py needs the CUDA toolkit's compiler")
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = Path(tmp) / "kernel.cu", Path(tmp) / "kernel.cubin"
        source.write_text(assemble(name, defines, root))
        cmd = [nvcc, f"-arch={arch}", "-cubin", *COMPILE_OPTIONS, "-Xptxas", "-v"]
        done = subprocess.run(
            [*cmd, str(source), "-o", str(cubin)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["(no message)"])[0]
            where = f" from {root}" if root else ""
            raise SystemExit(f"{name}{where} with {defines or 'no defines'}: nvcc failed: {first}")
        kernels: dict[str, dict[str, Any]] = dict(parse_ptxas(done.stderr))
        if sass_tool:
            listing = subprocess.run(
                [sass_tool, "-sass", str(cubin)], capture_output=True, text=True, check=True
            ).stdout
            for kernel, counts in parse_sass(listing).items():
                kernels.setdefault(kernel, {}).update(counts)
            if loops:
                for kernel, found in parse_loops(listing).items():
                    kernels.setdefault(kernel, {})["loops"] = found
    return kernels


def _line(cmd: list[str], containing: str = "") -> str:
    """The first line of a command's output containing ``containing``, for the record; "" when
    the command fails."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return next((line for line in done.stdout.splitlines() if containing in line), "")


def table(variants: list[str], results: list[dict[str, dict[str, Any]]], match: str) -> str:
    """One line per kernel matching ``match``: registers/spill stores (and instructions, ``=``
    where the SASS is the first column's) per variant."""
    pattern = re.compile(match)
    names = sorted({k for r in results for k in r if pattern.search(k)})
    width = max([len(n) for n in names] + [6])
    head = f"{'kernel':{width}s}  " + "  ".join(f"[{v or 'none'}]" for v in variants)
    lines = [head]
    for kernel in names:
        cells = []
        first = results[0].get(kernel, {}).get("sass_digest")
        for column, result in enumerate(results):
            k = result.get(kernel)
            if k is None:
                cells.append("-")
                continue
            cell = f"{k['registers']}/{k['spill_stores']}"
            if "instructions" in k:
                cell += f" {k['instructions']}i {k['wide_multiplies']}w"
                if column > 0 and k.get("sass_digest") == first:
                    cell += " ="
            cells.append(cell)
        lines.append(f"{kernel:{width}s}  " + "  ".join(cells))
    return "\n".join(lines)


def loop_lines(variants: list[str], results: list[dict[str, dict[str, Any]]], match: str) -> str:
    """Each matching kernel's loops, a line each per variant: where, instructions, wide / high
    / other multiplies, local accesses, pipe units and the model."""
    pattern = re.compile(match)
    lines = []
    for variant, result in zip(variants, results, strict=True):
        for kernel in sorted(k for k in result if pattern.search(k)):
            for loop in result[kernel].get("loops", []):
                lines.append(
                    f"[{variant or 'none'}] {kernel} {loop['start']}-{loop['end']}: "
                    f"{loop['instructions']}i {loop['wide_multiplies']}w "
                    f"{loop['high_multiplies']}h {loop['other_multiplies']}m "
                    f"{loop['local_accesses']}l pipe {loop['pipe_units']} model {loop['model']}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Build each variant, print the table, and write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="msm/msm.cu", help="the kernel file, under kernels/")
    parser.add_argument(
        "--variant",
        action="append",
        help='a define set "K=V K=V" (repeat for an A/B; "" is the file as it is)',
    )
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        help="a checkout whose kernels to build (repeat for an A/B across branches; "
        "default: the installed kernels)",
    )
    parser.add_argument("--arch", default="sm_90", help="nvcc's -arch (sm_90: the H200)")
    parser.add_argument("--match", default="", help="only kernels whose name matches this regex")
    parser.add_argument("--sass", action="store_true", help="also count SASS instructions")
    parser.add_argument(
        "--loops", action="store_true", help="also count each loop's SASS (implies --sass)"
    )
    parser.add_argument("--cuobjdump", help="the cuobjdump to use for --sass")
    parser.add_argument("--out", type=Path, help="write every kernel's figures here as JSON")
    args = parser.parse_args(argv)
    trees: list[Path | None] = list(args.tree) if args.tree else [None]
    columns = [
        (tree, kernels_of(tree) if tree else None, v)
        for tree in trees
        for v in args.variant or [""]
    ]
    variants = [f"{tree}{' ' + v if v else ''}" if tree else v for tree, _, v in columns]
    sets = [parse_defines(v) for _, _, v in columns]
    sass_tool = find_cuobjdump(args.cuobjdump) if args.sass or args.loops else None
    results = [
        build(args.file, defines, args.arch, sass_tool, args.loops, root)
        for (_, root, _), defines in zip(columns, sets, strict=True)
    ]
    print(table(variants, results, args.match))
    if args.loops:
        print(loop_lines(variants, results, args.match))
    if args.out:
        record: dict[str, Any] = {
            "file": args.file,
            "arch": args.arch,
            "nvcc": _line(["nvcc", "--version"], "release"),
            "commit": _line(["git", "describe", "--always", "--dirty"]),
            "variants": [
                {"tree": str(tree) if tree else None, "defines": d, "kernels": r}
                for (tree, _, _), d, r in zip(columns, sets, results, strict=True)
            ],
        }
        write_json_atomic(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
