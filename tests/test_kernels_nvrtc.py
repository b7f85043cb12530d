"""Every kernel file compiled by NVRTC, the compiler CuPy builds the kernels with, on a machine
without a GPU: NVRTC runs on the CPU. nvcc (PyCUDA's compiler) and the g++ harnesses see the
standard headers and NVRTC does not, so a source both accept can still fail every CuPy kernel
build (round 33: a uint16_t only <cstdint> declared). The library comes from PyPI's
nvidia-cuda-nvrtc wheel (the test extra, on Linux) or the system; without it these skip."""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
from pathlib import Path

import pytest

from cuzk_backend_gpu.kernels import COMPILE_OPTIONS, assemble, kernel_files
from cuzk_backend_gpu.witness import LANE_CHOICES

ARCH = "--gpu-architecture=compute_90"  # PTX for the H100/H200: the front end is what differs


def _nvrtc() -> ctypes.CDLL | None:
    """libnvrtc from the nvidia-cuda-nvrtc wheel, else the system's; None when neither loads."""
    spec = importlib.util.find_spec("nvidia")
    roots = list(spec.submodule_search_locations or []) if spec else []
    candidates = [
        str(lib) for root in roots for lib in sorted(Path(root).glob("cu*/lib/libnvrtc.so*"))
    ]
    candidates.append(ctypes.util.find_library("nvrtc") or "")
    for path in filter(None, candidates):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


NVRTC = _nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="no libnvrtc (pip install nvidia-cuda-nvrtc)")


def _compile(source: str, options: list[str]) -> tuple[int, str]:
    """NVRTC's result code and log for ``source`` built with ``options``."""
    assert NVRTC is not None
    program = ctypes.c_void_p()
    rc = NVRTC.nvrtcCreateProgram(
        ctypes.byref(program), source.encode(), b"kernel.cu", 0, None, None
    )
    assert rc == 0, f"nvrtcCreateProgram: {rc}"
    try:
        argv = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
        result = NVRTC.nvrtcCompileProgram(program, len(options), argv)
        size = ctypes.c_size_t()
        NVRTC.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetProgramLog(program, log)
        return result, log.value.decode(errors="replace")
    finally:
        NVRTC.nvrtcDestroyProgram(ctypes.byref(program))


KERNEL_FILES = kernel_files()
# The define sets the backends build besides each file's defaults: the witness's op lanes.
BUILDS = [(name, {}) for name in KERNEL_FILES] + [
    ("r1cs/witness.cu", {"WITNESS_OP_LANES": lanes}) for lanes in LANE_CHOICES if lanes != 32
]


@pytest.mark.parametrize(("name", "defines"), BUILDS, ids=lambda v: str(v) if v else "defaults")
def test_every_kernel_file_compiles_under_nvrtc(name: str, defines: dict[str, int]) -> None:
    result, log = _compile(assemble(name, defines), [*COMPILE_OPTIONS, ARCH])
    assert result == 0, f"{name} {defines}: NVRTC failed:\n{log[:2000]}"


def test_a_source_only_the_standard_headers_make_valid_is_refused() -> None:
    # What the test above guards against: NVRTC declares no fixed-width types of its own.
    result, log = _compile("__global__ void k(uint16_t* o) { *o = 1; }", [ARCH])
    assert result != 0 and "uint16_t" in log
