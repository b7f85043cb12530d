"""``cuzk-serve.toml``: where the daemon listens, its limits, its keys, and the engine's knobs.

Every key is optional; command-line options override the file. Relative paths are taken from the
file's folder. A wrong key, type or value is one line naming the file, the key and what is
allowed (exit status 2)::

    listen = "unix:///run/cuzk/cuzk.sock"   # or "127.0.0.1:9820" (needs token_file)
    token_file = "/etc/cuzk/token"           # bearer token clients must send
    state_dir = "/var/lib/cuzk"              # job store and spool
    max_request_mib = 64                     # largest request (a witness upload) accepted
    max_concurrent_rpcs = 256                # beyond this, calls get RESOURCE_EXHAUSTED
    rpc_threads = 256                        # threads serving calls; waiting calls (Prove,
                                             # AwaitProof) hold one each and take all but 8

    [engine]
    pipeline = true          # synthesis of the next job beside the current job's backend phases
    max_batch_size = 8       # same-key jobs run back to back under one key lease
    max_batch_wait_ms = 0    # how long a short batch waits for more of its key
    max_queued = 1000        # jobs waiting to start (queued or batched); then RESOURCE_EXHAUSTED
    max_attempts = 3         # a job the daemon died in this often fails instead of re-running
    result_ttl_s = 86400     # unfetched results are kept this long
    fetched_ttl_s = 600      # fetched results this long
    trace = "trace.jsonl"    # every job's spans on one clock, for `cuzk trace show`
    warm_up_proofs = 2       # throwaway proofs of each preloaded embedded-circuit key at start
                             # (`cuzk serve`; a fleet's workers preload when the head asks)
    check_workers = 2        # processes verifying zkey jobs' proofs beside the prover (0: on
                             # the prover's thread)

    [residency]
    budget_mib = 4096        # hot keys' memory
    preload = ["porep"]      # made hot at start (a key that does not fit stops the start)

    [keys.porep]
    params = "keys/porep"    # a `cuzk setup` folder; or: zkey = "circuit_final.zkey"

    [inputs]
    roots = ["/data/witnesses"]  # witness paths clients may name; uploads need none
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.cache import cache_dir
from cuzk_core.engine import EngineConfig, KeyKind, check_key
from cuzk_core.errors import CuzkError
from cuzk_core.profile import Profile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MIB = 1 << 20


class ConfigError(CuzkError):
    """The daemon's configuration is unreadable or names a bad key, type or value."""


MAX_REQUEST_MIB = 2047
"""The largest max_request_mib: gRPC's message lengths are 32-bit signed byte counts."""
RESERVED_RPC_THREADS = 8
"""Threads no waiting call (Prove, AwaitProof) may hold, so that cancel, status and the other
calls are answered at once while every other thread waits for a job."""


@attrs.frozen
class ServerConfig:
    """How the daemon is reached and what it accepts."""

    listen: str
    token_file: Path | None
    max_request_bytes: int
    max_concurrent_rpcs: int
    rpc_threads: int


_TOP = {
    "listen": str,
    "token_file": str,
    "state_dir": str,
    "max_request_mib": "positive",
    "max_concurrent_rpcs": "whole",
    "rpc_threads": "whole",
    "engine": dict,
    "residency": dict,
    "keys": dict,
    "inputs": dict,
}
_ENGINE = {
    "pipeline": bool,
    "max_batch_size": "whole",
    "max_batch_wait_ms": "nonnegative",
    "max_queued": "whole",
    "max_attempts": "whole",
    "result_ttl_s": "positive",
    "fetched_ttl_s": "positive",
    "trace": str,
    "warm_up_proofs": "count",
    "check_workers": "count",
}
_YEAR_S = 365 * 86400
_BOUNDS: dict[str, tuple[float | None, float | None, str]] = {
    "max_request_mib": (None, MAX_REQUEST_MIB, "gRPC's message limit"),
    "engine.max_batch_wait_ms": (None, 3_600_000, "an hour"),
    "engine.result_ttl_s": (None, 10 * _YEAR_S, "ten years"),
    "engine.fetched_ttl_s": (None, 10 * _YEAR_S, "ten years"),
    "engine.check_workers": (None, 256, "processes verifying proofs"),
    "residency.budget_mib": (None, 1 << 30, "a PiB"),
    "max_concurrent_rpcs": (None, (1 << 31) - 1, "gRPC's 32-bit limit"),
    "rpc_threads": (
        RESERVED_RPC_THREADS,
        1 << 16,
        f"{RESERVED_RPC_THREADS} serve calls that do not wait",
    ),
    "engine.max_batch_size": (None, 1 << 20, "jobs under one key lease"),
    "engine.max_queued": (None, 1 << 30, "jobs waiting"),
    "engine.max_attempts": (None, 1000, "runs of one job"),
    "engine.warm_up_proofs": (None, 1000, "proofs at start"),
}
"""Numbers with a bound beyond their sign, by dotted key: (above, at most, why)."""
_RESIDENCY = {"budget_mib": "positive", "preload": "strings"}
_KEY = {"params": str, "zkey": str}
_INPUTS = {"roots": "strings"}


def _kind_problem(kind: Any, value: Any) -> str | None:
    """What ``value`` lacks to be of schema ``kind`` (None: nothing)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "positive":
        ok = number and math.isfinite(value) and value > 0
        return None if ok else "a number > 0"
    if kind == "nonnegative":
        ok = number and math.isfinite(value) and value >= 0
        return None if ok else "a number ≥ 0"
    if kind in ("whole", "count"):
        least = 1 if kind == "whole" else 0
        ok = number and isinstance(value, int) and value >= least
        return None if ok else f"a whole number ≥ {least}"
    if kind == "strings":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return None if ok else "a list of strings"
    return None if isinstance(value, kind) else f"a {kind.__name__}"


def _check(table: dict[str, Any], schema: dict[str, Any], where: str, prefix: str) -> None:
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if key not in schema:
            allowed = ", ".join(sorted(schema))
            raise ConfigError(f"{where}: unknown key {dotted!r} (allowed: {allowed})")
        wanted = _kind_problem(schema[key], value)
        if wanted is not None:
            raise ConfigError(f"{where}: {dotted} must be {wanted}, got {value!r}")
        if dotted == "max_request_mib" and value * MIB < 1024:  # fractions are KiB: not 0 bytes
            raise ConfigError(f"{where}: {dotted} must be at least 1/1024 (1 KiB), got {value!r}")
        above, at_most, why = _BOUNDS.get(dotted, (None, None, ""))
        if above is not None and value <= above:
            raise ConfigError(
                f"{where}: {dotted} must be more than {above:g} ({why}), got {value!r}"
            )
        if at_most is not None and value > at_most:
            raise ConfigError(
                f"{where}: {dotted} must be at most {at_most:g} ({why}), got {value!r}"
            )


def read_config(path: Path | None) -> tuple[dict[str, Any], Path]:
    """The checked TOML table of ``path`` (empty without one) and the folder paths are from."""
    if path is None:
        return {}, Path.cwd()
    try:
        table = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    where = str(path)
    _check(table, _TOP, where, "")
    _check(table.get("engine", {}), _ENGINE, where, "engine.")
    _check(table.get("residency", {}), _RESIDENCY, where, "residency.")
    _check(table.get("inputs", {}), _INPUTS, where, "inputs.")
    for key_id, entry in table.get("keys", {}).items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: keys.{key_id} must be a table with params or zkey")
        _check(entry, _KEY, where, f"keys.{key_id}.")
        if len(entry) != 1:
            raise ConfigError(f"{where}: keys.{key_id} needs exactly one of params, zkey")
    return table, path.parent


def default_state_dir() -> Path:
    """``$CUZK_STATE_DIR``, else the cache folder's ``serve``."""
    explicit = os.environ.get("CUZK_STATE_DIR")
    return (Path(explicit).expanduser() if explicit else cache_dir() / "serve").absolute()


def build_configs(
    table: dict[str, Any],
    base: Path,
    profile: Profile,
    *,
    listen: str | None = None,
    token_file: str | None = None,
    state_dir: str | None = None,
    extra_keys: dict[str, Path] | None = None,
) -> tuple[ServerConfig, EngineConfig]:
    """The server's and the engine's configuration; every key is checked (a missing or
    corrupt one is a one-line error) and the engine's state folder created."""

    def path_of(text: str) -> Path:
        return (base / Path(text).expanduser()).absolute()

    # Absolute: the job store records spool paths, which a restart from elsewhere must find.
    state = Path(state_dir).expanduser().absolute() if state_dir else None
    if state is None:
        state = path_of(table["state_dir"]) if "state_dir" in table else default_state_dir()
    try:
        state.mkdir(mode=0o700, parents=True, exist_ok=True)  # witnesses are private
    except OSError as exc:
        raise ConfigError(f"state dir {state}: cannot make it a folder ({exc.strerror})") from None
    engine_table = table.get("engine", {})
    residency = table.get("residency", {})

    specs = {}
    for key_id, entry in table.get("keys", {}).items():
        kind = KeyKind.PARAMS if "params" in entry else KeyKind.ZKEY
        specs[key_id] = check_key(key_id, kind, path_of(entry[kind.value]))
    for key_id, folder in (extra_keys or {}).items():
        kind = KeyKind.PARAMS if folder.is_dir() else KeyKind.ZKEY
        specs[key_id] = check_key(key_id, kind, folder.absolute())
    preload = tuple(residency.get("preload", ()))
    for key_id in preload:
        if key_id not in specs:
            known = ", ".join(sorted(specs)) or "none"
            raise ConfigError(f"residency.preload names {key_id!r}, not a configured key ({known})")

    trace = engine_table.get("trace")
    if trace is not None and not path_of(trace).parent.is_dir():
        folder = path_of(trace).parent
        raise ConfigError(f"engine.trace {trace!r}: the folder {folder} does not exist")
    if trace is not None and path_of(trace).is_dir():
        raise ConfigError(f"engine.trace {trace!r}: a folder, not a file the spans can go to")
    engine = EngineConfig(
        state_dir=state,
        profile=profile,
        keys=specs,
        budget_bytes=int(residency.get("budget_mib", 4096) * MIB),
        preload=preload,
        pipeline=engine_table.get("pipeline", True),
        max_batch_size=int(engine_table.get("max_batch_size", 8)),
        max_batch_wait_ms=float(engine_table.get("max_batch_wait_ms", 0)),
        max_queued=int(engine_table.get("max_queued", 1000)),
        max_attempts=int(engine_table.get("max_attempts", 3)),
        result_ttl_s=float(engine_table.get("result_ttl_s", 86400)),
        fetched_ttl_s=float(engine_table.get("fetched_ttl_s", 600)),
        input_roots=tuple(path_of(r) for r in table.get("inputs", {}).get("roots", ())),
        warm_up_proofs=engine_table.get("warm_up_proofs", 2),
        check_workers=engine_table.get("check_workers", 2),
        trace_path=None if trace is None else path_of(trace),
    )
    token = Path(token_file).absolute() if token_file else None
    if token is None and "token_file" in table:
        token = path_of(table["token_file"])
    server = ServerConfig(
        listen=listen or table.get("listen") or f"unix://{state / 'cuzk.sock'}",
        token_file=token,
        max_request_bytes=int(table.get("max_request_mib", 64) * MIB),
        max_concurrent_rpcs=int(table.get("max_concurrent_rpcs", 256)),
        rpc_threads=int(table.get("rpc_threads", 256)),
    )
    return server, engine
