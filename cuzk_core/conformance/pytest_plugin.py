"""The conformance suite as a pytest plugin (entry point ``pytest11``): ``pytest --cuzk-backend
NAME`` in a backend author's own repository runs every test of :mod:`cuzk_core.conformance.suite`.

It parametrizes ``cuzk_backend_name`` over the backends under test: NAME, or without the option
every installed backend (those that cannot run here skip with their reason); that is how cuzk's
own test run, whose ``testpaths`` name the suite, covers each backend. A test marked
``cuzk_cases(argnames, cases)`` is parametrized jointly: ``cases(info)`` lists the argument values
that apply to the backend described by ``info`` (a :class:`~cuzk_core.backend.BackendInfo`), so a
size beyond a host backend's budget is never generated rather than skipped. Projects that use
none of its fixtures see only its options; heavy imports wait until a test asks for a backend.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from cuzk_core.conformance.checks import Subject
    from cuzk_core.hookspecs import BackendInfo
    from cuzk_core.plugins import Plugins

SUITE = Path(__file__).with_name("suite")
"""The tests the suite contributes; ``--cuzk-backend`` adds them to the run."""
_SEED = pytest.StashKey[int]()
_SEED_DRAWN = pytest.StashKey[bool]()
_PLUGINS = pytest.StashKey["Plugins"]()
_SUBJECTS = pytest.StashKey[dict[str, "Subject"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--cuzk-backend NAME`` and ``--cuzk-seed N``."""
    group = parser.getgroup("cuzk", "cuzk conformance suite")
    group.addoption(
        "--cuzk-backend",
        metavar="NAME",
        help="run the cuzk conformance suite on backend NAME, held to the cpu reference "
        "(without it, tests that ask for a backend run on every installed one)",
    )
    group.addoption(
        "--cuzk-seed", type=int, metavar="N", help="seed of the suite's random inputs (to replay)"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers and the seed; with ``--cuzk-backend``, check NAME and add the suite."""
    config.addinivalue_line(
        "markers",
        "cuzk_cases(argnames, cases): parametrize argnames jointly with cuzk_backend_name; "
        "cases(info: BackendInfo) lists the values that apply to that backend",
    )
    config.addinivalue_line(
        "markers", "gpu: the backend under test computes on an accelerator (BackendInfo.device)"
    )
    seed = config.getoption("cuzk_seed")
    if seed is None:  # a pytest-xdist worker takes the controller's
        seed = getattr(config, "workerinput", {}).get("cuzk_seed")
    config.stash[_SEED] = seed if seed is not None else random.SystemRandom().getrandbits(32)
    name = config.getoption("cuzk_backend")
    if name is None:
        return
    from cuzk_core.conformance.checks import subject
    from cuzk_core.errors import CuzkError

    try:
        subject(name, _plugins(config))
    except CuzkError as exc:
        raise pytest.UsageError(f"--cuzk-backend: {exc}") from None
    if not _collects_suite(config):
        config.args.append(str(SUITE))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Under pytest-xdist, hand each worker the seed, so the one printed replays the run."""
    node.workerinput["cuzk_seed"] = node.config.stash[_SEED]


def _plugins(config: pytest.Config) -> Plugins:
    """The plugin manager, loaded once per run."""
    if _PLUGINS not in config.stash:
        from cuzk_core.plugins import load_plugins

        config.stash[_PLUGINS] = load_plugins()
    return config.stash[_PLUGINS]


def _backends(config: pytest.Config) -> list[BackendInfo]:
    """The backends under test: ``--cuzk-backend NAME``, or every installed one by name."""
    backends = _plugins(config).backends
    name = config.getoption("cuzk_backend")
    return [backends[name]] if name is not None else [backends[n] for n in sorted(backends)]


def _collects_suite(config: pytest.Config) -> bool:
    """True when a path given to pytest (or a testpath) is in the suite or a folder above it."""
    paths = (Path(arg.split("::")[0]).resolve() for arg in config.args)
    return any(path == SUITE or path in SUITE.parents or SUITE in path.parents for path in paths)


def _cases(marker: pytest.Mark | None, info: BackendInfo) -> list[tuple]:
    """The argument tuples a ``cuzk_cases`` marker gives backend ``info`` (one empty without)."""
    if marker is None:
        return [()]
    argnames, cases = marker.args
    if "," in argnames:
        return [tuple(case) for case in cases(info)]
    return [(case,) for case in cases(info)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``cuzk_backend_name`` over the backends under test, with each one's cases."""
    if "cuzk_backend_name" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("cuzk_cases")
    argnames = [] if marker is None else [a.strip() for a in marker.args[0].split(",")]
    params = []
    for info in _backends(metafunc.config):
        marks = [pytest.mark.gpu] if info.accelerated else []
        if not info.available:
            marks.append(pytest.mark.skip(reason=f"{info.name}: {info.reason}"))
        for case in _cases(marker, info):
            params.append(pytest.param(info.name, *case, marks=marks))
    if not params:
        names = ", ".join(info.name for info in _backends(metafunc.config)) or "none installed"
        skip = pytest.mark.skip(reason=f"no case applies to the backends under test ({names})")
        params.append(pytest.param(None, *[None] * len(argnames), marks=skip, id="no-case"))
    metafunc.parametrize(["cuzk_backend_name", *argnames], params, indirect=["cuzk_backend_name"])


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    """Name the suite's modules ``cuzk-conformance/…`` in test ids when it lies outside rootdir."""
    if module_path.parent != SUITE or SUITE.is_relative_to(parent.config.rootpath):
        return None
    nodeid = f"cuzk-conformance/{module_path.name}"
    return pytest.Module.from_parent(parent, path=module_path, nodeid=nodeid)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the backends and the seed when the suite runs, so ``--cuzk-seed`` replays a failure."""
    if config.getoption("cuzk_backend") is None and not _collects_suite(config):
        return None
    under_test = ", ".join(info.name for info in _backends(config))
    return f"cuzk conformance: {under_test} against cpu, --cuzk-seed {config.stash[_SEED]}"


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """After a failure in a run with the suite or with tests that drew from the seed (``-q``
    hides the header), repeat the seed."""
    suite_ran = config.getoption("cuzk_backend") is not None or _collects_suite(config)
    drawn = config.stash.get(_SEED_DRAWN, False)
    if (suite_ran or drawn) and terminalreporter.stats.get("failed"):
        seed = config.stash[_SEED]
        terminalreporter.write_line(f"cuzk conformance: replay with --cuzk-seed {seed}")


@pytest.fixture
def cuzk_backend_name(request: pytest.FixtureRequest) -> str:
    """The backend under test: ``--cuzk-backend NAME``, or each installed backend in turn."""
    return request.param


@pytest.fixture(scope="session")
def cuzk_seed(pytestconfig: pytest.Config) -> int:
    """The seed every random input of the suite derives from (``--cuzk-seed``, else fresh)."""
    pytestconfig.stash[_SEED_DRAWN] = True
    return pytestconfig.stash[_SEED]


@pytest.fixture
def cuzk_rng(cuzk_seed: int, request: pytest.FixtureRequest) -> random.Random:
    """This test's randomness: the same for one seed and test id, whichever tests ran before."""
    return random.Random(f"{cuzk_seed}:{request.node.name}")


@pytest.fixture
def cuzk_subject(cuzk_backend_name: str, pytestconfig: pytest.Config) -> Subject:
    """The backend under test and the cpu reference (``.backend(**profile_changes)``), made once."""
    from cuzk_core.conformance.checks import subject

    subjects = pytestconfig.stash.setdefault(_SUBJECTS, {})
    if cuzk_backend_name not in subjects:
        subjects[cuzk_backend_name] = subject(cuzk_backend_name, _plugins(pytestconfig))
    return subjects[cuzk_backend_name]
