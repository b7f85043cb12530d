"""Profiles: TOML files choosing the backend and every tuning knob; one optimization, one line.

A profile may ``extends = "other.toml"`` (a path relative to the file, or a shipped profile's
name); tables merge key by key, the extending file winning. Unknown keys, wrong types and
impossible values are :class:`ProfileError` naming the file, the key and what is allowed.
"""

from __future__ import annotations

import enum
import hashlib
import importlib.resources
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.errors import ProfileError
from cuzk_core.timing import PHASES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_PROFILE = "cpu"
MSM_NAMES = ("a", "b_g1", "b_g2", "l", "h")
WINDOW_BITS_RANGE = (1, 24)


class Pinning(enum.Enum):
    """How big host buffers are made DMA-able: not at all, cudaHostRegister, or a staging pool."""

    NONE = "none"
    REGISTER = "register"
    POOL = "pool"


class KeyStorage(enum.Enum):
    """Where the proving key lives between and during proofs."""

    DEVICE = "device"
    HOST = "host"
    STREAM = "stream"
    MMAP = "mmap"


B_G2_ON_DEVICE = "device"
"""``msm.b_g2_on`` for B·G2 on the profile's own backend; any other value names a CPU backend."""


@attrs.frozen
class WindowBits:
    """Pippenger window bits per MSM; ``None`` lets the backend choose ("auto")."""

    a: int | None = None
    b_g1: int | None = None
    b_g2: int | None = None
    l: int | None = None
    h: int | None = None

    def for_msm(self, msm: str) -> int | None:
        """The window bits of MSM ``msm`` (one of ``MSM_NAMES``), ``None`` for auto."""
        return getattr(self, msm)


@attrs.frozen
class MsmSettings:
    """MSM knobs."""

    window_bits: WindowBits = WindowBits()
    signed_digits: bool = True
    split_01: bool = False
    b_g2_on: str = B_G2_ON_DEVICE


@attrs.frozen
class MemorySettings:
    """Allocation knobs: pinning, proving-key storage, staging pool, synthesis pre-sizing."""

    pinning: Pinning = Pinning.NONE
    key_storage: KeyStorage = KeyStorage.HOST
    pool_mib: int = 256
    presize_synthesis: bool = False
    device_budget_kib: int | None = None
    """Device memory (KiB) a streamed key may take (``stream``/``mmap``: each MSM uploads its
    bases in chunks, two in flight, that fit in it); None: what the device has free. KiB, so
    that tests can force many chunks on a small key."""


@attrs.frozen
class DebugSettings:
    """Test-only knobs: ``sleep_ms`` plants a slowdown in named phases, for testing the bench."""

    sleep_ms: tuple[tuple[str, int], ...] = ()
    """``(phase, milliseconds)`` pairs; empty in every real profile."""


@attrs.frozen
class Profile:
    """A resolved profile: what ``cuzk profile show`` prints and what every phase reads."""

    name: str
    backend: str = "cpu"
    description: str = ""
    msm: MsmSettings = MsmSettings()
    memory: MemorySettings = MemorySettings()
    debug: DebugSettings = DebugSettings()
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The resolved settings as plain TOML-able values (``extends`` already applied)."""
        settings: dict[str, Any] = {
            "backend": self.backend,
            "description": self.description,
            "msm": {
                "window_bits": {
                    m: ("auto" if b is None else b)
                    for m, b in attrs.asdict(self.msm.window_bits).items()
                },
                "signed_digits": self.msm.signed_digits,
                "split_01": self.msm.split_01,
                "b_g2_on": self.msm.b_g2_on,
            },
            "memory": {
                "pinning": self.memory.pinning.value,
                "key_storage": self.memory.key_storage.value,
                "pool_mib": self.memory.pool_mib,
                "presize_synthesis": self.memory.presize_synthesis,
            },
        }
        if self.memory.device_budget_kib is not None:  # only when set, as debug below
            settings["memory"]["device_budget_kib"] = self.memory.device_budget_kib
        if self.debug.sleep_ms:  # only when set, so real profiles keep their digests
            settings["debug"] = {"sleep_ms": dict(self.debug.sleep_ms)}
        return settings

    def digest(self) -> str:
        """A short hash of the resolved settings, to tell results of different profiles apart."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The resolved profile as TOML text, with where it came from as comments."""
        lines = [f"# profile {self.name} (digest {self.digest()})"]
        lines += [f"# from {s}" for s in self.sources]
        lines += _toml_lines(self.to_dict(), ())
        return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def _toml_lines(table: dict[str, Any], path: tuple[str, ...]) -> list[str]:
    lines = []
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    if path and scalars:
        lines.append("")
        lines.append(f"[{'.'.join(path)}]")
    lines += [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
    for key, sub in tables.items():
        lines += _toml_lines(sub, (*path, key))
    return lines


# ---------------------------------------------------------------- loading and validation

_SCHEMA: dict[str, Any] = {
    "extends": str,
    "backend": str,
    "description": str,
    "msm": {
        "window_bits": {m: "window" for m in MSM_NAMES},
        "signed_digits": bool,
        "split_01": bool,
        "b_g2_on": str,
    },
    "memory": {
        "pinning": Pinning,
        "key_storage": KeyStorage,
        "pool_mib": "positive",
        "presize_synthesis": bool,
        "device_budget_kib": "positive",
    },
    "debug": {"sleep_ms": {phase: "positive" for phase in PHASES}},
}


def shipped_profiles() -> dict[str, Path]:
    """The profiles that ship with cuzk, by name."""
    folder = importlib.resources.files("cuzk_profiles")
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


def resolve_profile_path(ref: str | Path, relative_to: Path | None = None) -> Path:
    """A profile path from a path (relative to ``relative_to`` if given) or a shipped name."""
    candidates = [Path(ref)]
    if relative_to is not None and not Path(ref).is_absolute():
        candidates.insert(0, relative_to / ref)
    for path in candidates:
        if path.is_file():
            return path
    shipped = shipped_profiles()
    name = Path(str(ref)).name.removesuffix(".toml")
    if name in shipped:
        return shipped[name]
    raise ProfileError(
        f"profile {str(ref)!r} not found: not a file, and not a shipped profile "
        f"(shipped: {', '.join(sorted(shipped))})"
    )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: malformed TOML: {exc}") from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc.strerror}") from None


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _check(table: dict[str, Any], schema: dict[str, Any], path: Path | str, prefix: str) -> None:
    """Validate ``table`` against ``schema``, raising a ProfileError that names file and key."""
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if key not in schema:
            allowed = ", ".join(f"{prefix}{k}" for k in schema)
            raise ProfileError(f"{path}: unknown key {dotted!r} (allowed: {allowed})")
        kind = schema[key]
        if isinstance(kind, dict):
            if not isinstance(value, dict):
                raise ProfileError(f"{path}: {dotted!r} must be a table, got {value!r}")
            _check(value, kind, path, dotted + ".")
        else:
            _check_value(value, kind, path, dotted)


def _check_value(value: Any, kind: Any, path: Path | str, dotted: str) -> None:
    if kind is bool or kind is str:
        if not isinstance(value, kind):
            name = "true or false" if kind is bool else "a string"
            raise ProfileError(f"{path}: {dotted!r} must be {name}, got {value!r}")
    elif kind == "positive":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ProfileError(f"{path}: {dotted!r} must be a positive integer, got {value!r}")
    elif kind == "window":
        low, high = WINDOW_BITS_RANGE
        ok_int = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        if not ok_int and value != "auto":
            raise ProfileError(
                f'{path}: {dotted!r} must be "auto" or an integer from {low} to {high}, '
                f"got {value!r}"
            )
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        allowed = [m.value for m in kind]
        if value not in allowed:
            choices = ", ".join(json.dumps(a) for a in allowed)
            raise ProfileError(f"{path}: {dotted!r} must be one of {choices}, got {value!r}")


def _load_raw(path: Path, seen: tuple[Path, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The merged table of ``path`` and its ``extends`` chain, and the files it came from."""
    resolved = path.resolve()
    if resolved in seen:
        chain = " -> ".join(str(p) for p in (*seen, resolved))
        raise ProfileError(f"{path}: 'extends' forms a cycle: {chain}")
    table = _read_toml(path)
    _check(table, _SCHEMA, path, "")
    parent = table.pop("extends", None)
    if parent is None:
        return table, (str(path),)
    try:
        parent_path = resolve_profile_path(parent, relative_to=path.parent)
    except ProfileError as exc:
        raise ProfileError(f"{path}: 'extends': {exc}") from None
    base, sources = _load_raw(parent_path, (*seen, resolved))
    return _merge(base, table), (*sources, str(path))


def _nest_changes(changes: Mapping[str, Any], label: str) -> dict[str, Any]:
    """``{"msm.split_01": True}`` → ``{"msm": {"split_01": True}}``, validated like a file."""
    table: dict[str, Any] = {}
    for dotted, value in changes.items():
        *parents, leaf = dotted.split(".")
        node = table
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ProfileError(f"{label}: {dotted!r} conflicts with another change")
        node[leaf] = value
    if "extends" in table:
        raise ProfileError(f"{label}: 'extends' cannot be changed, name another base profile")
    _check(table, _SCHEMA, label, "")
    return table


def load_profile(
    ref: str | Path | None = None, changes: Mapping[str, Any] | None = None
) -> Profile:
    """Load, merge and validate a profile given by path or shipped name (default: ``cpu``).

    ``changes`` maps dotted keys (``"memory.pinning"``) to values applied on top, for A/B runs
    of one knob; they are validated like the file's own keys.
    """
    path = resolve_profile_path(ref if ref is not None else DEFAULT_PROFILE)
    raw, sources = _load_raw(path, ())
    if changes:
        raw = _merge(raw, _nest_changes(changes, "--change"))
        sources = (*sources, *(f"--change {k}={_toml_value(v)}" for k, v in changes.items()))
    msm = raw.get("msm", {})
    memory = raw.get("memory", {})
    windows = {m: (None if b == "auto" else b) for m, b in msm.get("window_bits", {}).items()}
    storage = KeyStorage(memory.get("key_storage", KeyStorage.HOST.value))
    if "device_budget_kib" in memory and storage not in (KeyStorage.STREAM, KeyStorage.MMAP):
        raise ProfileError(
            f'{path}: \'memory.device_budget_kib\' applies to key_storage "stream" or "mmap" '
            f"(the key is streamed in chunks), not {json.dumps(storage.value)}"
        )
    return Profile(
        name=path.stem,
        backend=raw.get("backend", "cpu"),
        description=raw.get("description", ""),
        msm=MsmSettings(
            window_bits=WindowBits(**windows),
            signed_digits=msm.get("signed_digits", True),
            split_01=msm.get("split_01", False),
            b_g2_on=msm.get("b_g2_on", B_G2_ON_DEVICE),
        ),
        memory=MemorySettings(
            pinning=Pinning(memory.get("pinning", Pinning.NONE.value)),
            key_storage=storage,
            pool_mib=memory.get("pool_mib", 256),
            presize_synthesis=memory.get("presize_synthesis", False),
            device_budget_kib=memory.get("device_budget_kib"),
        ),
        debug=DebugSettings(tuple(raw.get("debug", {}).get("sleep_ms", {}).items())),
        sources=sources,
    )
