"""Broken third-party plugins, installed for real: ``cuzk backends`` lists everything else and
names each broken plugin with its reason, selecting one is a one-line error (exit 2), start-up
never crashes, and CUZK_BLOCK_PLUGINS keeps named plugins from being imported at all."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import throwaway_plugins
from throwaway_plugins import BROKEN

from cuzk_core.cli import main
from cuzk_core.plugins import load_plugins


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path holding the throwaway distributions."""
    folder = tmp_path / "site"
    throwaway_plugins.install_all(folder)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    throwaway_plugins.forget()


def _profile(tmp_path, backend: str) -> str:
    path = tmp_path / f"{backend}.toml"
    path.write_text(f'backend = "{backend}"\n')
    return str(path)


def test_backends_lists_the_rest_and_names_each_broken_plugin(site, capsys):
    assert main(["backends"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, reason in BROKEN.items():
        line = next(line for line in lines if line.startswith(f"{name} "))
        assert "broken: " in line and reason in line, line
    for backend in ("cpu", "buggy"):
        assert any(line.split()[:3:2] == [backend, "available"] for line in lines), backend


def test_a_squatter_does_not_displace_the_backend_it_claims(site):
    plugins = load_plugins()
    assert "cuzk_backend_cpu" in plugins.backends["cpu"].source
    assert plugins.plugin("cpu").__name__ == "cuzk_backend_cpu.plugin"  # its hooks are not cpu's
    assert "buggy" in plugins.backends


@pytest.mark.parametrize("name", ["importfails", "badsig", "typo", "partial"])
def test_selecting_a_broken_backend_is_one_line(site, tmp_path, capsys, name):
    profile = _profile(tmp_path, name)
    assert main(["--profile", profile, "prove", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"backend '{name}' is broken: " in err and BROKEN[name] in err


def test_start_up_survives_broken_plugins(site, tmp_path):
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}

    def cuzk(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "cuzk_core", *args]
        return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)

    listing = cuzk("backends")
    assert listing.returncode == 0 and listing.stderr == ""
    assert "buggy" in listing.stdout and listing.stdout.count("broken: ") == len(BROKEN)
    chosen = cuzk("--profile", _profile(tmp_path, "badsig"), "prove")
    assert chosen.returncode == 2
    assert chosen.stderr.startswith("cuzk: error: backend 'badsig' is broken: ")
    assert chosen.stderr.count("\n") == 1


def test_block_env_keeps_named_plugins_out(site, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CUZK_BLOCK_PLUGINS", "importfails, badsig")
    plugins = load_plugins()
    assert {b.name for b in plugins.broken} == set(BROKEN) - {"importfails", "badsig"}
    assert plugins.blocked == ["badsig", "importfails"]
    assert f"{throwaway_plugins.PREFIX}badsig" not in sys.modules  # never imported
    assert main(["backends"]) == 0
    assert "badsig     -          blocked by CUZK_BLOCK_PLUGINS" in capsys.readouterr().out
    assert main(["--profile", _profile(tmp_path, "badsig"), "prove"]) == 2
    assert "backend 'badsig' is blocked by CUZK_BLOCK_PLUGINS" in capsys.readouterr().err


def test_an_unknown_backend_mentions_the_broken_plugins(site, tmp_path, capsys):
    assert main(["--profile", _profile(tmp_path, "nosuch"), "prove"]) == 2
    err = capsys.readouterr().err
    assert "backend 'nosuch' (profile nosuch) is not installed" in err
    assert "broken plugins: aaa_cpu, badsig, importfails, partial, typo, see `cuzk backends`" in err
