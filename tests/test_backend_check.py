"""``cuzk backends --check NAME`` and the pytest kit (``pytest --cuzk-backend NAME``): every hook
has checks, a conforming backend passes, a backend with one edge-case bug fails that hook alone,
and an unknown, broken or blocked backend exits 2."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
import throwaway_plugins

from cuzk_core import hookspecs
from cuzk_core.cli import main
from cuzk_core.conformance.checks import CHECKS
from cuzk_core.plugins import REQUIRED_HOOKS, load_plugins

OPTIONAL_HOOKS = {"cuzk_bench_clock", "cuzk_device_memory", *hookspecs.OPTIONAL_HOOKS}
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path holding the throwaway distributions (``buggy`` among them)."""
    folder = tmp_path / "site"
    throwaway_plugins.install_all(folder)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    throwaway_plugins.forget()


@pytest.fixture(scope="module")
def fastcpu() -> str:
    """The third-party fastcpu backend's name, or a skip when it cannot run here."""
    info = load_plugins().backends.get("fastcpu")
    if info is None or not info.available:
        pytest.skip(f"fastcpu cannot run here: {info.reason if info else 'not installed'}")
    return "fastcpu"


def _hook_lines(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line.startswith("  cuzk_")}


def test_every_hook_has_checks_with_unique_ids():
    assert {c.hook for c in CHECKS} == {*REQUIRED_HOOKS, *OPTIONAL_HOOKS, "isolation", "proof"}
    assert len({c.id for c in CHECKS}) == len(CHECKS)


def test_check_passes_a_conforming_backend(fastcpu, capsys):
    assert main(["backends", "--check", fastcpu, "--seed", "7"]) == 0
    out = capsys.readouterr().out
    lines = _hook_lines(out)
    assert set(lines) == {*REQUIRED_HOOKS, *OPTIONAL_HOOKS}
    assert all(line.split()[1] == "pass" for name, line in lines.items() if name in REQUIRED_HOOKS)
    assert out.splitlines()[0] == f"checking backend {fastcpu} against cpu (seed 7)"
    assert out.splitlines()[-1] == f"{fastcpu}: every hook conforms ({len(CHECKS)} checks)"


def test_check_fails_only_the_hook_with_the_bug(site, capsys):
    assert main(["backends", "--check", "buggy", "--seed", "7"]) == 1
    out = capsys.readouterr().out
    failing = [name for name, line in _hook_lines(out).items() if line.split()[1] == "FAIL"]
    assert failing == ["cuzk_quotient_pointwise"]
    assert "FAIL  5 of 5 checks" in out and "scale 0: row 0 is" in out
    assert out.splitlines()[-1].endswith("replay with `cuzk backends --check buggy --seed 7`")


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("nosuch", "(profile cpu) is not installed"),
        ("badsig", "is broken"),
        ("partial", "is broken"),
    ],
)
def test_check_of_an_unusable_backend_exits_2(site, capsys, name, words):
    assert main(["backends", "--check", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"backend '{name}' {words}" in captured.err


def _pytest(cwd, *args: str, site=None) -> subprocess.CompletedProcess:
    """pytest in ``cwd`` (a folder outside the repository, unless it is the repository)."""
    kits = importlib.metadata.entry_points(group="pytest11")
    if not any(kit.value.startswith("cuzk_core.") for kit in kits):
        pytest.skip("the kit's pytest11 entry point is not installed (pip install -e .)")
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)


def _collected(result: subprocess.CompletedProcess, prefix: str) -> list[str]:
    """The test ids ``--collect-only -q`` printed, each without ``prefix``."""
    return [line.removeprefix(prefix) for line in result.stdout.splitlines() if "::" in line]


def test_kit_collects_the_repository_suite_from_outside_it(fastcpu, tmp_path):
    args = ("--cuzk-backend", fastcpu, "--collect-only")
    outside = _pytest(tmp_path, *args)
    inside = _pytest(REPO, *args, "cuzk_core/conformance/suite")
    assert outside.returncode == inside.returncode == 0, outside.stdout[-2000:]
    tests = _collected(outside, "cuzk-conformance/")
    assert tests == _collected(inside, "cuzk_core/conformance/suite/")
    assert sum(t.startswith("test_hooks.py::") for t in tests) == len(CHECKS) < len(tests)


def test_kit_runs_every_check_from_outside_the_repository(fastcpu, tmp_path):
    result = _pytest(tmp_path, "--cuzk-backend", fastcpu, "--cuzk-seed", "7", "-k", "test_hook")
    assert result.returncode == 0, result.stdout[-2000:]
    fastcpu_plugin = pytest.importorskip("cuzk_fastcpu.plugin")
    left_out = sum(c.hook in OPTIONAL_HOOKS and not hasattr(fastcpu_plugin, c.hook) for c in CHECKS)
    assert f"{len(CHECKS) - left_out} passed, {left_out} skipped" in result.stdout


def test_kit_fails_the_hook_with_the_bug(site, tmp_path):
    selected = "test_hook and (quotient or ntt)"
    result = _pytest(
        tmp_path, "--cuzk-backend", "buggy", "-k", selected, "--cuzk-seed", "9", site=site
    )
    assert result.returncode == 1
    assert "5 failed, 20 passed" in result.stdout
    assert "cuzk conformance: replay with --cuzk-seed 9" in result.stdout
    failed = "FAILED cuzk-conformance/test_hooks.py::test_hook[buggy-cuzk_quotient_pointwise:zeros]"
    assert failed in result.stdout


def test_kit_refuses_an_unknown_backend(tmp_path):
    result = _pytest(tmp_path, "--cuzk-backend", "nosuch")
    assert result.returncode == 4
    assert "--cuzk-backend: backend 'nosuch'" in result.stderr
