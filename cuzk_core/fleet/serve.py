"""``cuzk fleet``: the daemon's gRPC server in front of a :class:`FleetEngine`."""

from __future__ import annotations

from typing import cast

from cuzk_core.engine import Engine, EngineConfig
from cuzk_core.fleet.head import FleetConfig, FleetEngine
from cuzk_core.service.config import ServerConfig
from cuzk_core.service.metrics import Metrics
from cuzk_core.service.server import check_listen, run_until_signalled, start_serving


def run_fleet(server_config: ServerConfig, engine_config: EngineConfig, fleet: FleetConfig) -> int:
    """Run the fleet's head until SIGTERM or SIGINT; jobs on workers finish before it exits.
    The line saying where it listens goes to stderr once it accepts calls."""
    token = check_listen(server_config)
    metrics = Metrics()
    engine = FleetEngine(engine_config, fleet, listener=metrics)
    # The servicer calls only what FleetEngine answers: submit, get, await_job, cancel,
    # verifying_key, preload, evict, status.
    server, address = start_serving(cast(Engine, engine), metrics, server_config, token)
    keys = ", ".join(sorted(engine_config.keys)) or "none"
    where = fleet.ray_address or "a local cluster"
    banner = (
        f"cuzk fleet: listening on {address} "
        f"(backend {engine_config.profile.backend}, keys {keys}, "
        f"{len(engine.workers)} worker(s) on {where})"
    )
    return run_until_signalled(server, engine, server_config, banner)
