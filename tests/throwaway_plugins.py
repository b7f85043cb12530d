"""Throwaway plugin distributions, installed for real into a folder that goes on ``sys.path``.

Each gets a ``<dist>-0.1.dist-info`` with ``METADATA`` and ``entry_points.txt`` beside its module,
which is all ``importlib.metadata`` needs to find its entry points, as for a pip-installed package.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path

from cuzk_core import hookspecs
from cuzk_core.plugins import REQUIRED_HOOKS

PREFIX = "cuzkt_"
"""Every throwaway module's name starts with this, so a test can forget them afterwards."""

_HEADER = """
import attrs

from cuzk_backend_cpu import plugin as reference
from cuzk_core import hookimpl
from cuzk_core.hookspecs import BackendInfo

NAME = {name!r}


def _cpu(ctx):
    return attrs.evolve(ctx, backend="cpu")


@hookimpl
def cuzk_backend_info():
    return BackendInfo(NAME, "0.1", True, "the cpu reference under another name")
"""

_WRONG_SIGNATURE = """
@hookimpl
def cuzk_ntt(ctx, values, domain, inverse):
    return None
"""

_MISSPELT = """
@hookimpl
def cuzk_nnt(ctx, values, domain):
    return None
"""

_ZERO_SCALE_BUG = """
@hookimpl
def cuzk_quotient_pointwise(ctx, a, b, c, scale):
    if ctx.backend != NAME:
        return None
    return reference.cuzk_quotient_pointwise(_cpu(ctx), a, b, c, scale or 1)
"""

_PARTIAL = """
from cuzk_core import hookimpl
from cuzk_core.hookspecs import BackendInfo


@hookimpl
def cuzk_backend_info():
    return BackendInfo("partial", "0.1", True, "only an NTT")


@hookimpl
def cuzk_ntt(ctx, values, domain):
    return None
"""

_SABOTEUR = """
import numpy as np

from cuzk_core import hookimpl
from cuzk_core.hookspecs import BackendInfo

CALLS = []  # each hook call that reached this plugin: (hook, the backend it was asked for)


@hookimpl
def cuzk_backend_info():
    return BackendInfo("saboteur", "0.1", True, "answers every hook, wrongly, with no guard")
"""


def saboteur() -> str:
    """Source of a complete backend with no "not mine" guard whose every answer is wrong (zeros,
    or the input itself): under a broadcast manager it would answer the cpu backend's hooks."""
    parts = [_SABOTEUR]
    for hook in REQUIRED_HOOKS:
        if hook == "cuzk_backend_info":
            continue
        params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
        parts.append(
            f"\n@hookimpl(tryfirst=True)\ndef {hook}({', '.join(params)}):\n"
            f"    CALLS.append(({hook!r}, ctx.backend))\n"
            f"    return (np.zeros((1, 4), np.uint64),) * 3 if {hook!r} == 'cuzk_evaluate_r1cs' "
            f"else np.zeros((1, 4), np.uint64)\n"
        )
    return "".join(parts)


BROKEN = {
    "importfails": "ModuleNotFoundError: No module named 'cuzk_no_such_dependency'",
    "badsig": "Argument(s) {'inverse'} are declared in the hookimpl but can not be found",
    "typo": "unknown hook 'cuzk_nnt'",
    "partial": "backend 'partial' does not implement cuzk_alloc_host, cuzk_coset_intt",
    "aaa_cpu": "backend name 'cpu' is already taken by entry point cpu = cuzk_backend_cpu.plugin",
}
"""Each broken entry point installed by :func:`install_all`, and words from its reason."""


def delegating_backend(name: str) -> str:
    """Source of a complete backend ``name`` that answers every hook with the cpu reference."""
    parts = [_HEADER.format(name=name)]
    for hook in REQUIRED_HOOKS:
        if hook == "cuzk_backend_info":
            continue
        params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
        args = ", ".join(["_cpu(ctx)", *params[1:]])
        parts.append(
            f"\n@hookimpl\ndef {hook}({', '.join(params)}):\n"
            f"    return reference.{hook}({args}) if ctx.backend == NAME else None\n"
        )
    return "".join(parts)


def install(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """Install distribution ``dist`` into ``site``: its modules and ``cuzk`` entry points."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    listed = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[cuzk]\n{listed}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))


def install_all(site: Path) -> None:
    """The broken plugins of :data:`BROKEN`; ``buggy``: loads fine, wrong when scale is 0; and
    ``saboteur``: complete, unguarded, every answer wrong."""
    plugins = {
        "importfails": "import cuzk_no_such_dependency\n",
        "badsig": delegating_backend("badsig") + _WRONG_SIGNATURE,
        "typo": delegating_backend("typo") + _MISSPELT,
        "partial": _PARTIAL,
        "aaa_cpu": delegating_backend("cpu"),
        "buggy": delegating_backend("buggy") + _ZERO_SCALE_BUG,
        "saboteur": saboteur(),
    }
    for name, source in plugins.items():
        install(site, f"cuzk-{name}", {name: PREFIX + name}, {PREFIX + name: source})


def forget() -> None:
    """Drop the throwaway modules from ``sys.modules`` so the next test imports its own."""
    for name in [m for m in sys.modules if m.startswith(PREFIX)]:
        del sys.modules[name]
