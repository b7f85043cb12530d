"""The cupy backend on a machine without a usable GPU, and how it reports CUDA failures."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk_backend_cupy import device, plugin
from cuzk_core.backend import BackendContext
from cuzk_core.domain import EvaluationDomain
from cuzk_core.errors import CuzkError
from cuzk_core.profile import load_profile


def test_plugin_loads_and_says_why_it_cannot_run():
    info = plugin.cuzk_backend_info()
    assert info.name == "cupy"
    available, reason = device.availability()
    assert info.available is available and info.reason == reason and reason
    if not available:
        assert "CuPy" in reason


class _FakeCudaError(RuntimeError):
    """Stands in for cupy_backends' CUDARuntimeError (same module prefix)."""


_FakeCudaError.__module__ = "cupy_backends.cuda.api.runtime"


def test_cuda_failures_become_one_line_errors():
    with pytest.raises(device.GpuError) as caught, device.gpu_errors("an MSM"):
        raise _FakeCudaError("cudaErrorMemoryAllocation: out of memory\nmore detail")
    message = str(caught.value)
    assert isinstance(caught.value, CuzkError) and caught.value.exit_code == 2
    assert message.startswith("cupy backend: an MSM failed") and "\n" not in message
    with pytest.raises(ValueError), device.gpu_errors("an MSM"):
        raise ValueError("not a CUDA failure: passes through unchanged")


def test_hooks_refuse_clearly_without_a_gpu(monkeypatch):
    monkeypatch.setattr(device, "availability", lambda: (False, "no CUDA device (test)"))
    ctx = BackendContext("cupy", load_profile("h200"))
    values = np.zeros((4, 4), dtype=np.uint64)
    with pytest.raises(device.GpuError, match="cannot run here: no CUDA device"):
        plugin.cuzk_ntt(ctx, values, EvaluationDomain(2))
    assert plugin.cuzk_ntt(BackendContext("cpu", load_profile("cpu")), values, None) is None
