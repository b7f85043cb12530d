"""A proof talks to one backend: a plugin with no "not mine" guard, registered beside cpu (for
real, through an entry point) and wrong in every answer, never changes a cpu result and is never
even asked."""

from __future__ import annotations

import sys

import pytest
import throwaway_plugins
from test_groth16 import CubeCircuit

from cuzk_core.conformance.checks import CHECKS, run_check, subject
from cuzk_core.groth16.prover import prove
from cuzk_core.groth16.setup import generate_parameters
from cuzk_core.groth16.sources import LoadedKey, NativeCircuit
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer


@pytest.fixture
def saboteur(tmp_path, monkeypatch):
    """The throwaway distributions installed, and the saboteur's call log."""
    folder = tmp_path / "site"
    throwaway_plugins.install_all(folder)
    monkeypatch.syspath_prepend(str(folder))
    plugins = load_plugins()
    assert "saboteur" in plugins.backends
    yield plugins, sys.modules[f"{throwaway_plugins.PREFIX}saboteur"].CALLS
    throwaway_plugins.forget()


def _proof_bytes(plugins, circuit, key) -> bytes:
    backend = plugins.backend(load_profile("cpu"), Timer(level=0))
    return prove(backend, NativeCircuit(circuit), LoadedKey(key), seed=5).proof.to_bytes()


def test_an_unguarded_plugin_never_changes_a_cpu_result(cpu, saboteur):
    plugins, calls = saboteur
    matrices = NativeCircuit(CubeCircuit(4)).assign(cpu).matrices
    key = generate_parameters(matrices, seed=8)
    alone = _proof_bytes(load_plugins(), CubeCircuit(4), key)
    assert _proof_bytes(plugins, CubeCircuit(4), key) == alone
    assert calls == []


def test_the_saboteur_answers_only_for_itself(saboteur):
    plugins, calls = saboteur
    sabotaged = plugins.backend(load_profile("cpu", {"backend": "saboteur"}), Timer(level=0))
    sabotaged.release("anything")
    assert calls == [("cuzk_release", "saboteur")]


def test_the_isolation_check_passes_for_cpu_beside_the_saboteur(saboteur):
    plugins, calls = saboteur
    isolation = next(c for c in CHECKS if c.hook == "isolation")
    outcome = run_check(isolation, subject("cpu", plugins), seed=1)
    assert outcome.error is None and outcome.note is None, outcome
    assert calls == []
