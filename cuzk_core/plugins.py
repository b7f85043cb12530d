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

REQUIRED_HOOKS = tuple(
    sorted(
        name
        for name in vars(hookspecs)
        if name.startswith("cuzk_") and name not in hookspecs.OPTIONAL_HOOKS
    )
)
"""Every hook a backend must implement (the measurement hooks and ``OPTIONAL_HOOKS`` are not)."""


@attrs.frozen
class BrokenPlugin:
    """An entry point that could not be loaded, and why (one line)."""

    name: str
    source: str
    reason: str


@attrs.define
class Plugins:
    """The loaded plugin manager, the backends it offers, and the plugins left out and why."""

    pm: pluggy.PluginManager
    backends: dict[str, BackendInfo]
    broken: list[BrokenPlugin]
    blocked: list[str] = attrs.field(factory=list)
    """Entry-point names skipped because ``CUZK_BLOCK_PLUGINS`` names them."""

    def backend(self, profile: Profile, timer: Timer | None = None) -> Backend:
        """The façade for ``profile.backend``; a clear error when it is unknown or cannot run."""
        name = profile.backend
        info = self.backends.get(name)
        if info is None:
            broken = next((b for b in self.broken if b.name == name), None)
            if broken is not None:
                raise BackendUnavailable(f"backend {name!r} is broken: {broken.reason}")
            if name in self.blocked:
                raise BackendUnavailable(f"backend {name!r} is blocked by {BLOCK_ENV}")
            installed = ", ".join(sorted(self.backends)) or "none"
            unusable = ", ".join(sorted(b.name for b in self.broken))
            raise BackendUnavailable(
                f"backend {name!r} (profile {profile.name}) is not installed "
                f"(installed backends: {installed}"
                + (f"; broken plugins: {unusable}, see `cuzk backends`)" if unusable else ")")
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


def _one_line(exc: Exception) -> str:
    """An exception as one line: pluggy's validation messages span several."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {'; '.join(lines)}"


def _backend_info(pm: pluggy.PluginManager, module: object) -> BackendInfo | None:
    """What a registered plugin says about its backend (None for a plugin that is not one)."""
    hook = getattr(module, "cuzk_backend_info", None)
    if hook is None:
        return None
    info = hook()
    if not isinstance(info, BackendInfo):
        raise TypeError(f"cuzk_backend_info returned {info!r}, not a BackendInfo")
    implemented = {caller.name for caller in pm.get_hookcallers(module) or ()}
    missing = [name for name in REQUIRED_HOOKS if name not in implemented]
    if missing:
        raise TypeError(f"backend {info.name!r} does not implement {', '.join(missing)}")
    return info


def _load(
    pm: pluggy.PluginManager, entry_point: importlib.metadata.EntryPoint
) -> BackendInfo | None:
    """Import, register and check one entry point; on an error, raise and leave ``pm`` as it was."""
    module = entry_point.load()
    try:
        pm.register(module, name=entry_point.name)  # a hook with a wrong signature raises here
        pm.check_pending()  # a misspelt hook name is an error, not silence
        return _backend_info(pm, module)
    except Exception:
        if pm.get_plugin(entry_point.name) is module:
            pm.unregister(name=entry_point.name)
        raise


def load_plugins() -> Plugins:
    """Load every entry point in group ``cuzk``, keeping going past broken ones.

    When two plugins claim one backend name, the one whose entry point has that name keeps it
    (then the first by entry-point name), so a newcomer cannot displace an installed backend.
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    pm.add_hookspecs(measurement_hookspecs)  # optional: device clocks and memory for the bench
    blocked = {n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()}
    plugins = Plugins(pm, {}, [])
    claims: list[tuple[importlib.metadata.EntryPoint, str, BackendInfo]] = []
    for entry_point in _entry_points():
        if entry_point.name in blocked:
            plugins.blocked.append(entry_point.name)
            continue
        source = _source(entry_point)
        try:
            info = _load(pm, entry_point)
        except Exception as exc:  # a third-party plugin must not take the CLI down
            plugins.broken.append(BrokenPlugin(entry_point.name, source, _one_line(exc)))
            continue
        if info is not None:
            claims.append((entry_point, source, info))
    for entry_point, source, info in sorted(claims, key=lambda c: c[0].name != c[2].name):
        taken = plugins.backends.get(info.name)
        if taken is None:
            plugins.backends[info.name] = attrs.evolve(info, source=source)
            continue
        pm.unregister(name=entry_point.name)
        reason = f"backend name {info.name!r} is already taken by {taken.source}"
        plugins.broken.append(BrokenPlugin(entry_point.name, source, reason))
    return plugins
