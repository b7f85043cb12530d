"""Optional measurement hooks: a backend implements them only if it has something better to offer.

Unlike :mod:`cuzk_core.hookspecs` no backend has to implement these; when none answers, the bench
times with the host clock and the memory sampler records host RSS only. Both are ``firstresult``
and follow the same selection rule as every other hook: return ``None`` unless ``ctx.backend``
is your own name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

from cuzk_core import PROJECT_NAME

if TYPE_CHECKING:
    from cuzk_core.backend import BackendContext
    from cuzk_core.bench.clock import Clock

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


@hookspec(firstresult=True)
def cuzk_bench_clock(ctx: BackendContext) -> Clock:
    """A clock that times the backend's work where it runs, e.g. with CUDA events.

    ``clock.time(work)`` calls ``work()``, waits for the device to finish, and returns the
    result and the elapsed milliseconds measured on the device. Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :return: an object with ``name`` (e.g. ``"cuda-events"``) and ``time(work)``, see
        :class:`cuzk_core.bench.clock.Clock`.
    """


@hookspec(firstresult=True)
def cuzk_device_memory(ctx: BackendContext) -> int:
    """Bytes of device memory in use now; called from the memory sampler's thread.

    Stops at first non-None result.

    :param ctx: the active backend, profile and timer.
    :return: bytes in use on the backend's device (a host-only backend does not implement this).
    """
