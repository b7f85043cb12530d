"""The conformance suite's backends: every installed backend, held to the CPU reference.

``backend_name`` is parametrized over every backend the plugin loader finds; one that cannot run
here is skipped with its own reason. Sizes above ``CPU_LIMIT`` run only on GPU backends (the
plain-Python reference would make CI slow), and the CPU reference is itself checked against
naive oracles at small sizes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
from conformance_support import GPU_BACKENDS, REFERENCE, backend_for, plugins

from cuzk_core.backend import Backend


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``backend_name`` over every installed backend, skipping those that can't run."""
    if "backend_name" not in metafunc.fixturenames:
        return
    params = []
    for name, info in sorted(plugins().backends.items()):
        marks = [] if info.available else [pytest.mark.skip(reason=f"{name}: {info.reason}")]
        if name in GPU_BACKENDS:
            marks.append(pytest.mark.gpu)
        params.append(pytest.param(name, id=name, marks=marks))
    metafunc.parametrize("backend_name", params)


@pytest.fixture
def make_backend(backend_name: str) -> Callable[..., Backend]:
    """``make_backend(**changes)``: the backend under test with profile changes."""
    return functools.partial(backend_for, backend_name)


@pytest.fixture(scope="session")
def reference() -> Backend:
    """The CPU reference backend."""
    return backend_for(REFERENCE)
