"""The plugin manager: every backend, built-in or third-party, comes in through entry points.

Each backend gets a pluggy manager of its own, holding the contract (:mod:`cuzk_core.hookspecs`),
the core's fallbacks for optional hooks (registered ``trylast``) and that backend's plugin alone:
a hook call reaches the chosen backend and nothing else, so no implementation carries a
"not mine" guard and no plugin can answer for another.
"""

from __future__ import annotations

import importlib.metadata
import os

import attrs
import pluggy

from cuzk_core import PROJECT_NAME, fallbacks, hookspecs
from cuzk_core.backend import Backend
from cuzk_core.errors import BackendUnavailable
from cuzk_core.fallbacks import BACKEND_SLOT
from cuzk_core.hookspecs import REQUIRED_HOOKS, BackendContext, BackendInfo
from cuzk_core.profile import B_G2_ON_DEVICE, Profile
from cuzk_core.timing import Timer

BLOCK_ENV = "CUZK_BLOCK_PLUGINS"
"""Comma-separated entry-point names that are not loaded (e.g. a plugin that breaks start-up)."""


@attrs.frozen
class BrokenPlugin:
    """An entry point that could not be loaded, and why (one line)."""

    name: str
    source: str
    reason: str


def backend_manager(plugin: object) -> pluggy.PluginManager:
    """A manager holding the contract, the fallbacks and ``plugin`` alone.

    Registering checks every implementation's signature, and ``check_pending`` makes a
    misspelt hook name an error instead of silence.
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    pm.register(fallbacks, name=fallbacks.NAME)
    pm.register(plugin, name=BACKEND_SLOT)
    pm.check_pending()
    return pm


def _backend_info(pm: pluggy.PluginManager, plugin: object) -> BackendInfo:
    """What a registered plugin says about its backend, once its required hooks are all there."""
    hook = getattr(plugin, "cuzk_backend_info", None)
    if hook is None:
        raise TypeError("not a backend: it has no cuzk_backend_info hook")
    info = hook()
    if not isinstance(info, BackendInfo):
        raise TypeError(f"cuzk_backend_info returned {info!r}, not a BackendInfo")
    implemented = {caller.name for caller in pm.get_hookcallers(plugin) or ()}
    missing = [name for name in REQUIRED_HOOKS if name not in implemented]
    if missing:
        raise TypeError(f"backend {info.name!r} does not implement {', '.join(missing)}")
    return info


@attrs.define
class Plugins:
    """The backends on offer (each with its own manager), and the plugins left out and why."""

    backends: dict[str, BackendInfo] = attrs.field(factory=dict)
    broken: list[BrokenPlugin] = attrs.field(factory=list)
    blocked: list[str] = attrs.field(factory=list)
    """Entry-point names skipped because ``CUZK_BLOCK_PLUGINS`` names them."""
    _managers: dict[str, pluggy.PluginManager] = attrs.field(factory=dict, alias="_managers")

    def add(self, plugin: object, source: str = "registered in-process") -> BackendInfo:
        """Offer ``plugin`` as a backend (an embedding program's own, or a test's); errors as
        at start-up: a wrong signature, a misspelt or missing hook, or a name already taken."""
        pm = backend_manager(plugin)
        return self._offer(pm, _backend_info(pm, plugin), source)

    def _offer(self, pm: pluggy.PluginManager, info: BackendInfo, source: str) -> BackendInfo:
        taken = self.backends.get(info.name)
        if taken is not None:
            raise TypeError(f"backend name {info.name!r} is already taken by {taken.source}")
        self.backends[info.name] = attrs.evolve(info, source=source)
        self._managers[info.name] = pm
        return self.backends[info.name]

    def plugin(self, name: str) -> object:
        """The plugin object behind backend ``name`` (its module, for an entry point)."""
        return self._managers[name].get_plugin(BACKEND_SLOT)

    def manager(self, name: str) -> pluggy.PluginManager:
        """Backend ``name``'s own manager (for tools that watch hook calls, like conformance)."""
        return self._managers[name]

    def backend(self, profile: Profile, timer: Timer | None = None) -> Backend:
        """The façade for ``profile.backend``, its B·G2 placement resolved; a one-line error
        when either backend is unknown or cannot run here."""
        timer = timer or Timer()
        main = self._facade(profile.backend, profile, timer)
        placement = profile.msm.b_g2_on
        if placement == B_G2_ON_DEVICE:
            return main
        b_g2 = self._facade(placement, profile, timer, role="msm.b_g2_on")
        if self.backends[placement].accelerated:
            raise BackendUnavailable(
                f"profile {profile.name}: msm.b_g2_on = {placement!r} computes on "
                f'{self.backends[placement].device}; it must be "{B_G2_ON_DEVICE}" or a CPU backend'
            )
        return Backend(
            self._managers[profile.backend], main.ctx, b_g2=b_g2, accelerated=main.accelerated
        )

    def _facade(self, name: str, profile: Profile, timer: Timer, role: str = "backend") -> Backend:
        info = self.backends.get(name)
        if info is None:
            broken = next((b for b in self.broken if b.name == name), None)
            if broken is not None:
                raise BackendUnavailable(f"backend {name!r} is broken: {broken.reason}")
            if name in self.blocked:
                raise BackendUnavailable(f"backend {name!r} is blocked by {BLOCK_ENV}")
            installed = ", ".join(sorted(self.backends)) or "none"
            unusable = ", ".join(sorted(b.name for b in self.broken))
            where = f"profile {profile.name}" if role == "backend" else f"{role} of {profile.name}"
            raise BackendUnavailable(
                f"backend {name!r} ({where}) is not installed "
                f"(installed backends: {installed}"
                + (f"; broken plugins: {unusable}, see `cuzk backends`)" if unusable else ")")
            )
        if not info.available:
            raise BackendUnavailable(f"backend {name!r} cannot run here: {info.reason}")
        return Backend(
            self._managers[name],
            BackendContext(name, profile, timer),
            accelerated=info.accelerated,
        )


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


def load_plugins() -> Plugins:
    """Load every entry point in group ``cuzk``, keeping going past broken ones.

    When two plugins claim one backend name, the one whose entry point has that name keeps it
    (then the first by entry-point name), so a newcomer cannot displace an installed backend.
    """
    blocked = {n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()}
    plugins = Plugins()
    claims: list[tuple[str, str, pluggy.PluginManager, BackendInfo]] = []
    for entry_point in _entry_points():
        if entry_point.name in blocked:
            plugins.blocked.append(entry_point.name)
            continue
        source = _source(entry_point)
        try:
            plugin = entry_point.load()
            pm = backend_manager(plugin)
            info = _backend_info(pm, plugin)
        except Exception as exc:  # a third-party plugin must not take the CLI down
            plugins.broken.append(BrokenPlugin(entry_point.name, source, _one_line(exc)))
            continue
        claims.append((entry_point.name, source, pm, info))
    for entry_name, source, pm, info in sorted(claims, key=lambda c: c[0] != c[3].name):
        try:
            plugins._offer(pm, info, source)
        except TypeError as exc:
            plugins.broken.append(BrokenPlugin(entry_name, source, str(exc)))
    return plugins
