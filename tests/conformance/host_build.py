"""Build a C++ harness over the CUDA headers for the host and talk to it line by line, in the
device's words: Fq elements in Montgomery form, twelve 32-bit words each, as hex."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cuzk_core.field.constants import FQ_MODULUS
from cuzk_core.field.tower import fq2_inv, fq2_mul

KERNELS = Path(__file__).resolve().parents[2] / "backends" / "kernels"
R_INV = pow(1 << 384, -1, FQ_MODULUS)
RUN_TIMEOUT_S = 300
"""A harness run longer than this has hung (threads waiting at a barrier some never reach)."""


def montgomery_words(values: list[int]) -> str:
    """Fq elements as the device holds them: x·2^384 mod q, twelve 32-bit words each."""
    data = b"".join(((x << 384) % FQ_MODULUS).to_bytes(48, "little") for x in values)
    return " ".join(f"{w:x}" for w in np.frombuffer(data, dtype="<u4"))


def canonical_elements(line: str) -> list[int]:
    """A line of device words back to canonical Fq elements."""
    words = np.array([int(w, 16) for w in line.split()], dtype="<u4")
    return [
        int.from_bytes(e.tobytes(), "little") * R_INV % FQ_MODULUS for e in words.reshape(-1, 12)
    ]


def flat_affine(group: str, point) -> list[int]:
    """An affine point's coordinates in the device's order ((0, 0) for infinity)."""
    if point is None:
        return [0] * (2 if group == "g1" else 4)
    if group == "g1":
        return list(point)
    (x0, x1), (y0, y1) = point
    return [x0, x1, y0, y1]


def xyzz_affine(group: str, coords: list[int]):
    """An XYZZ point (X, Y, ZZ, ZZZ; canonical elements in the device's order) as an affine
    point of cuzk_core, None for infinity."""
    if group == "g1":
        x, y, zz, zzz = coords
        if zz == 0:
            return None
        return (x * pow(zz, -1, FQ_MODULUS) % FQ_MODULUS, y * pow(zzz, -1, FQ_MODULUS) % FQ_MODULUS)
    x, y, zz, zzz = (tuple(coords[i : i + 2]) for i in range(0, 8, 2))
    if zz == (0, 0):
        return None
    return (fq2_mul(x, fq2_inv(zz)), fq2_mul(y, fq2_inv(zzz)))


def build_harness(
    source: Path, out_dir: Path, optimize: str = "-O1", flags: tuple[str, ...] = ()
) -> Callable[[list[str]], str]:
    """Compile ``source`` against backends/kernels with g++ and ``flags`` (skip the test without
    a compiler); the result runs the program on input lines and returns its stdout."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler to build the kernel headers for the host")
    exe = out_dir / source.stem
    cmd = [compiler, "-std=c++17", optimize, "-Wno-unknown-pragmas", f"-I{KERNELS}", *flags]
    cmd.append(str(source))
    subprocess.run([*cmd, "-o", str(exe)], check=True, capture_output=True, text=True)

    def run(lines: list[str]) -> str:
        return subprocess.run(
            [str(exe)],
            input="\n".join(lines) + "\n",
            capture_output=True,
            text=True,
            check=True,
            timeout=RUN_TIMEOUT_S,
        ).stdout

    return run
