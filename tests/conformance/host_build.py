"""Build a C++ harness over the CUDA headers for the host and talk to it line by line."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[2] / "backends" / "kernels"


def build_harness(source: Path, out_dir: Path, optimize: str = "-O1") -> Callable[[list[str]], str]:
    """Compile ``source`` against backends/kernels with g++ (skip the test without a compiler);
    the result runs the program on input lines and returns its stdout."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the kernel headers for the host")
    exe = out_dir / source.stem
    cmd = [compiler, "-std=c++17", optimize, "-Wno-unknown-pragmas", f"-I{KERNELS}", str(source)]
    subprocess.run([*cmd, "-o", str(exe)], check=True, capture_output=True, text=True)

    def run(lines: list[str]) -> str:
        return subprocess.run(
            [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
        ).stdout

    return run
