"""The conformance kit as a pytest plugin (entry point ``pytest11``): ``pytest --cuzk-backend NAME``
in a backend author's own repository runs every check of :mod:`cuzk_core.conformance.checks`.

Without ``--cuzk-backend`` it adds nothing but its options and fixtures, so it is harmless in any
other project's test run. Heavy imports wait until the option is given.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cuzk_core.conformance.checks import Subject

SUITE = Path(__file__).with_name("suite.py")
"""The tests the kit contributes when ``--cuzk-backend`` is given."""
_SEED = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--cuzk-backend NAME`` and ``--cuzk-seed N``."""
    group = parser.getgroup("cuzk", "cuzk conformance kit")
    group.addoption(
        "--cuzk-backend",
        metavar="NAME",
        help="run the cuzk conformance checks on backend NAME, held to the cpu reference",
    )
    group.addoption(
        "--cuzk-seed", type=int, metavar="N", help="seed of the checks' random inputs (to replay)"
    )


def pytest_configure(config: pytest.Config) -> None:
    """With ``--cuzk-backend``: refuse an unknown backend at once, then collect the suite too."""
    name = config.getoption("cuzk_backend")
    if name is None:
        return
    from cuzk_core.conformance.checks import subject
    from cuzk_core.errors import CuzkError

    try:
        subject(name)
    except CuzkError as exc:
        raise pytest.UsageError(f"--cuzk-backend: {exc}") from None
    seed = config.getoption("cuzk_seed")
    config.stash[_SEED] = seed if seed is not None else random.SystemRandom().getrandbits(32)
    config.args.append(str(SUITE))


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    """Name the suite ``cuzk-conformance`` in test ids: its path lies outside the rootdir."""
    if module_path != SUITE:
        return None
    return pytest.Module.from_parent(parent, path=module_path, nodeid="cuzk-conformance")


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the backend and the seed, so a failure can be replayed with ``--cuzk-seed``."""
    name = config.getoption("cuzk_backend")
    if name is None:
        return None
    return f"cuzk conformance: backend {name} against cpu, --cuzk-seed {config.stash[_SEED]}"


@pytest.fixture(scope="session")
def cuzk_backend_name(pytestconfig: pytest.Config) -> str:
    """The backend under test (``--cuzk-backend``); tests that need one skip without it."""
    name = pytestconfig.getoption("cuzk_backend")
    if name is None:
        pytest.skip("no backend to check: pass --cuzk-backend NAME")
    return name


@pytest.fixture(scope="session")
def cuzk_seed(pytestconfig: pytest.Config, cuzk_backend_name: str) -> int:
    """The seed every check derives its inputs from."""
    return pytestconfig.stash[_SEED]


@pytest.fixture(scope="session")
def cuzk_subject(cuzk_backend_name: str) -> Subject:
    """The backend under test and the cpu reference (``subject.backend(**profile_changes)``)."""
    from cuzk_core.conformance.checks import subject

    return subject(cuzk_backend_name)
