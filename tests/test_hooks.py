"""The hook contract: documented, implemented by every backend, and selected by name."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from cuzk_core import hookspecs
from cuzk_core.errors import BackendUnavailable
from cuzk_core.plugins import REQUIRED_HOOKS, load_plugins
from cuzk_core.profile import load_profile

HOOK_NAMES = sorted(name for name in dir(hookspecs) if name.startswith("cuzk_"))
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"


def test_there_are_hooks_for_every_phase_group():
    assert {"cuzk_msm_g1", "cuzk_msm_g2", "cuzk_ntt", "cuzk_synthesize", "cuzk_pin"} <= set(
        HOOK_NAMES
    )


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_hookspec_is_documented_in_code_and_guide(name):
    spec = getattr(hookspecs, name)
    doc = inspect.getdoc(spec) or ""
    assert ":return:" in doc, f"{name} docstring lacks :return:"
    for param in inspect.signature(spec).parameters:
        assert f":param {param}:" in doc, f"{name} docstring lacks :param {param}:"
    assert f"`{name}(" in GUIDE.read_text(), f"{name} is missing from docs/hooks.md"


def test_every_registered_backend_implements_every_required_hook():
    plugins = load_plugins()
    assert "cpu" in plugins.backends
    assert set(REQUIRED_HOOKS) == set(HOOK_NAMES) - hookspecs.OPTIONAL_HOOKS
    for plugin_name in plugins.backends:
        plugin = plugins.plugin(plugin_name)
        missing = [h for h in REQUIRED_HOOKS if not hasattr(plugin, h)]
        assert not missing, f"backend plugin {plugin_name} lacks {missing}"


def test_the_built_in_backends_implement_the_optional_hooks_they_need():
    plugins = load_plugins()
    fixed_base = {"cuzk_fixed_base_g1", "cuzk_fixed_base_g2"}
    assert fixed_base < hookspecs.OPTIONAL_HOOKS
    for name in ("cpu", "cupy", "pycuda"):
        plugin = plugins.plugin(name)
        assert all(hasattr(plugin, hook) for hook in fixed_base), name
    for name in ("cupy", "pycuda"):  # the cpu backend has nothing to prepare
        assert hasattr(plugins.plugin(name), "cuzk_prepare"), name


def test_backend_info_names_source_and_version():
    info = load_plugins().backends["cpu"]
    assert info.available
    assert info.version
    assert "cuzk_backend_cpu" in info.source


def test_unknown_backend_is_a_clear_error(tmp_path):
    profile_path = tmp_path / "x.toml"
    profile_path.write_text('backend = "nosuch"\n')
    with pytest.raises(BackendUnavailable, match=r"'nosuch'.*not installed.*cpu"):
        load_plugins().backend(load_profile(profile_path))


def test_blocked_plugin_is_not_loaded(monkeypatch):
    monkeypatch.setenv("CUZK_BLOCK_PLUGINS", "cpu")
    assert "cpu" not in load_plugins().backends
