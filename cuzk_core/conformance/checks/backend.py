"""Checks of a backend as a plugin: its info, its preparation, its optional measurement hooks,
and that its hooks are asked for its own work alone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from cuzk_core import fallbacks
from cuzk_core.conformance.inputs import (
    random_points,
    random_scalars,
)
from cuzk_core.domain import EvaluationDomain
from cuzk_core.layout import G1Affines, ints_to_limbs

from .base import NOT_IMPLEMENTED, REFERENCE, Check, CheckFailed, Subject, same_scalars


def _backend_info(checked: Subject, rng: random.Random) -> None:
    info = checked.plugins.backends[checked.name]
    if info.name != checked.name or not isinstance(info.version, str) or not info.version:
        raise CheckFailed(f"cuzk_backend_info says name {info.name!r}, version {info.version!r}")


# ---------------------------------------------------------------- optional measurement hooks


def _bench_clock(checked: Subject, rng: random.Random) -> str | None:
    backend = checked.backend()
    if not backend.implements("cuzk_bench_clock"):
        return NOT_IMPLEMENTED
    clock = backend.clock()
    domain = EvaluationDomain(6)
    values = ints_to_limbs(random_scalars(rng, domain.size))
    result, ms = clock.time(lambda: backend.ntt(values, domain))
    same_scalars(result, checked.reference.ntt(values, domain), "the timed work's result")
    if not isinstance(clock.name, str) or not clock.name:
        raise CheckFailed(f"the clock's name is {clock.name!r}")
    if not isinstance(ms, (int, float)) or not ms >= 0:
        raise CheckFailed(f"the clock measured {ms!r} ms")
    return None


def _prepare(checked: Subject, rng: random.Random) -> str | None:
    """Preparing twice answers the same and leaves the backend able to prove (an NTT after)."""
    backend = checked.backend()
    if not backend.implements("cuzk_prepare"):
        return NOT_IMPLEMENTED
    answers = [backend.prepare() for _ in range(2)]
    if answers != [True, True]:
        raise CheckFailed(f"returned {answers!r}, expected True both times")
    domain = EvaluationDomain(4)
    values = ints_to_limbs(random_scalars(rng, domain.size))
    same_scalars(backend.ntt(values, domain), checked.reference.ntt(values, domain), "an NTT")
    return None


def _device_memory(checked: Subject, rng: random.Random) -> str | None:
    used = checked.backend().device_memory()
    if used is None:
        return NOT_IMPLEMENTED
    if not isinstance(used, (int, np.integer)) or used < 0:
        raise CheckFailed(f"returned {used!r}, expected a byte count")
    return None


# ---------------------------------------------------------------- isolation


def _isolation(checked: Subject, rng: random.Random) -> str | None:
    """Work for this backend reaches its plugin alone (and the core's fallbacks), and work for
    the reference never reaches it: no plugin is asked, or answers, for another backend."""
    names = sorted({checked.name, REFERENCE})
    calls: list[tuple[str, str, list[object]]] = []

    def watch(manager: str) -> Callable[..., None]:
        def before(hook: str, impls: list[Any], kwargs: dict[str, Any]) -> None:
            ctx = kwargs.get("ctx")
            asked_for = ctx.backend if ctx is not None else manager
            calls.append((manager, asked_for, [impl.plugin for impl in impls]))

        return before

    undo = [
        checked.plugins.manager(n).add_hookcall_monitoring(watch(n), lambda *_: None) for n in names
    ]
    try:
        domain = EvaluationDomain(4)
        values = ints_to_limbs(random_scalars(rng, domain.size))
        points = G1Affines.from_points(random_points("g1", rng, 3))
        scalars = ints_to_limbs(random_scalars(rng, 3))
        for backend in (checked.backend(), checked.reference):
            backend.ntt(values, domain)
            backend.msm_g1(backend.upload(points, "a"), scalars, "a")
            backend.prepare()
    finally:
        for stop in undo:
            stop()
    for manager, asked_for, plugins in calls:
        if asked_for != manager:
            raise CheckFailed(f"a hook for backend {asked_for!r} went to {manager!r}'s plugin")
        allowed = (checked.plugins.plugin(manager), fallbacks)
        strays = [p for p in plugins if not any(p is a for a in allowed)]
        if strays:
            raise CheckFailed(f"a hook for backend {manager!r} reached another plugin: {strays[0]}")
    return None


def checks() -> Iterator[Check]:
    """The backend's info, preparation, measurement hooks and isolation."""
    yield Check("cuzk_backend_info", "name-and-version", _backend_info)
    yield Check("cuzk_prepare", "twice-then-ntt", _prepare)
    yield Check("cuzk_bench_clock", "optional", _bench_clock)
    yield Check("cuzk_device_memory", "optional", _device_memory)
    yield Check("isolation", "hooks-reach-one-backend", _isolation)
