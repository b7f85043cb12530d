"""The fastcpu plugin as cuzk sees it: entry point, backend info, hook selection, profile."""

from __future__ import annotations

import attrs
import pytest
from cuzk_fastcpu import BACKEND_NAME, kernels, plugin, profile_path

from cuzk_core import fallbacks
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile


def test_entry_point_registers_the_backend():
    plugins = load_plugins()
    info = plugins.backends[BACKEND_NAME]
    assert info.available == (not kernels.UNAVAILABLE_REASON)
    assert "cuzk-fastcpu" in info.source


def test_shipped_profile_selects_fastcpu():
    profile = load_profile(profile_path())
    assert profile.backend == BACKEND_NAME
    if kernels.UNAVAILABLE_REASON:
        pytest.skip(kernels.UNAVAILABLE_REASON)
    assert load_plugins().backend(profile).name == BACKEND_NAME


def test_it_is_asked_only_for_itself():
    """No guard in its hooks: cuzk gives each backend a manager of its own, and fastcpu is in
    none but its own (beside the core's fallbacks)."""
    plugins = load_plugins()
    assert plugin not in plugins.manager("cpu").get_plugins()
    assert plugins.manager(BACKEND_NAME).get_plugins() == {plugin, fallbacks}


def test_missing_extension_reports_unavailable(monkeypatch):
    monkeypatch.setattr(kernels, "UNAVAILABLE_REASON", "no _native here")
    info = plugin.cuzk_backend_info()
    assert (info.name, info.available, info.reason) == (BACKEND_NAME, False, "no _native here")


def test_bad_thread_setting_reports_unavailable(monkeypatch):
    if kernels.UNAVAILABLE_REASON:
        pytest.skip(kernels.UNAVAILABLE_REASON)
    monkeypatch.setenv(kernels.THREADS_ENV, "-1")
    info = plugin.cuzk_backend_info()
    assert not info.available and kernels.THREADS_ENV in info.reason


def test_bad_fq_kernel_setting_reports_unavailable(monkeypatch):
    if kernels.UNAVAILABLE_REASON:
        pytest.skip(kernels.UNAVAILABLE_REASON)
    default = kernels.fq_kernel()
    monkeypatch.setenv(kernels.FQ_KERNEL_ENV, "no-such-kernel")
    try:
        reason = kernels._start()
    finally:
        kernels.use_fq_kernel(default)
    assert kernels.FQ_KERNEL_ENV in reason and "portable" in reason


def test_host_hooks():
    if kernels.UNAVAILABLE_REASON:
        pytest.skip(kernels.UNAVAILABLE_REASON)
    profile = attrs.evolve(load_profile("cpu"), backend=BACKEND_NAME)
    backend = load_plugins().backend(profile)
    buffer = backend.alloc_host((3, 4), "uint64", "witness")
    assert buffer.shape == (3, 4) and not buffer.any()
    backend.unpin(backend.pin([buffer], "witness"))
    assert backend.upload(buffer, "a") is buffer
    backend.release(buffer)
