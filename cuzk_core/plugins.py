"""The plugin manager: every backend, built-in or third-party, comes in through entry points."""

from __future__ import annotations

import importlib.metadata
import os

import attrs
import pluggy

from cuzk_core import PROJECT_NAME, hookspecs
from cuzk_core.backend import Backend, BackendContext, BackendInfo
from cuzk_core.bench import hookspecs as measurement_hookspecs
from cuzk_core.errors import BackendUnavailable
from cuzk_core.profile import Profile
from cuzk_core.timing import Timer

BLOCK_ENV = "CUZK_BLOCK_PLUGINS"
"""Comma-separated entry-point names that are not loaded (e.g. a plugin that breaks start-up)."""


@attrs.frozen
class BrokenPlugin:
    """An entry point that could not be loaded, and why."""

    name: str
    source: str
    reason: str


@attrs.define
class Plugins:
    """The loaded plugin manager, the backends it offers and the plugins that failed to load."""

    pm: pluggy.PluginManager
    backends: dict[str, BackendInfo]
    broken: list[BrokenPlugin]

    def backend(self, profile: Profile, timer: Timer | None = None) -> Backend:
        """The façade for ``profile.backend``; a clear error when it is unknown or cannot run."""
        name = profile.backend
        info = self.backends.get(name)
        if info is None:
            broken = next((b for b in self.broken if b.name == name), None)
            if broken is not None:
                raise BackendUnavailable(f"backend {name!r} failed to load: {broken.reason}")
            installed = ", ".join(sorted(self.backends)) or "none"
            raise BackendUnavailable(
                f"backend {name!r} (profile {profile.name}) is not installed "
                f"(installed backends: {installed})"
            )
        if not info.available:
            raise BackendUnavailable(f"backend {name!r} cannot run here: {info.reason}")
        return Backend(self.pm, BackendContext(name, profile, timer or Timer()))


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return sorted(importlib.metadata.entry_points(group=PROJECT_NAME), key=lambda e: e.name)


def _source(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = entry_point.dist
    where = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown"
    return f"entry point {entry_point.name} = {entry_point.value} ({where})"


def load_plugins() -> Plugins:
    """Load every entry point in group ``cuzk``, keeping going past broken ones."""
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    pm.add_hookspecs(measurement_hookspecs)  # optional: device clocks and memory for the bench
    blocked = {n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()}
    backends: dict[str, BackendInfo] = {}
    broken: list[BrokenPlugin] = []
    for entry_point in _entry_points():
        if entry_point.name in blocked:
            continue
        source = _source(entry_point)
        module = None
        try:
            module = entry_point.load()
            pm.register(module, name=entry_point.name)
            pm.check_pending()  # a misspelt hook is an error, not silence
            info = getattr(module, "cuzk_backend_info", lambda: None)()
        except Exception as exc:  # a third-party plugin must not take the CLI down
            if module is not None and pm.is_registered(module):
                pm.unregister(module)
            broken.append(BrokenPlugin(entry_point.name, source, f"{type(exc).__name__}: {exc}"))
            continue
        if info is None:
            continue
        if info.name in backends:
            pm.unregister(module)
            reason = f"backend name {info.name!r} is already taken by {backends[info.name].source}"
            broken.append(BrokenPlugin(entry_point.name, source, reason))
            continue
        backends[info.name] = attrs.evolve(info, source=source)
    return Plugins(pm, backends, broken)
