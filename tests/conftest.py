"""Shared fixtures: a replayable random generator and the CPU backend façade."""

from __future__ import annotations

import random

import pytest

from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer


@pytest.fixture
def rng(cuzk_rng: random.Random, cuzk_seed: int) -> random.Random:
    """This test's randomness: fresh each run, the same under ``--cuzk-seed N`` (printed, so a
    failure can be replayed)."""
    print(f"replay with --cuzk-seed {cuzk_seed}")
    return cuzk_rng


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    """Key caches and generated parameters go to a temporary folder, never ~/.cache/cuzk
    (subprocesses inherit it through the environment)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.mktemp("cuzk-cache")))
        yield


@pytest.fixture(scope="session")
def cpu():
    """The CPU reference backend through the façade the prover uses."""
    return load_plugins().backend(load_profile("cpu"), Timer(level=0))
