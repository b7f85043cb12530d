"""Profiles: TOML files choosing the backend and every tuning knob; one optimization, one line.

The attrs classes below are the schema: each knob's type, default, allowed values and doc live
on its field, and loading, validation, ``to_dict``, ``to_toml`` and ``cuzk profile show`` are
derived from them. A profile may ``extends = "other"`` (a path relative to the file, a shipped
profile's name or a plugin profile's name); tables merge key by key, the extending file winning.
Unknown keys, wrong types and impossible values are :class:`ProfileError` naming the file, the
key and what is allowed. Plugins ship named profiles through the ``cuzk.profiles`` entry-point
group, each entry point naming a package that holds ``*.toml`` files.
"""

from __future__ import annotations

import enum
import hashlib
import importlib.metadata
import importlib.resources
import json
import re
import sys
import typing
from collections.abc import Iterator, Mapping
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
WINDOW_BITS_RANGE = (1, 24)
B_G2_ON_DEVICE = "device"
"""``msm.b_g2_on`` for B·G2 on the profile's own backend; any other value names a CPU backend."""
PROFILE_ENTRY_POINTS = "cuzk.profiles"
"""Entry-point group naming the packages in which plugins ship ``*.toml`` profiles."""
MAX_EXTENDS_DEPTH = 32
"""The most files one ``extends`` chain may hold (a longer one is a mistake, not a design)."""
MAX_PROFILE_BYTES = 1 << 20
MAX_POOL_MIB = 1 << 20
MAX_DEVICE_BUDGET_KIB = 1 << 40
TABLE_BITS_RANGE = (16, 24)
"""Window bits of a resident key's window tables: below 16 the tables' memory (⌈256/c⌉× the
bases) buys little, above 24 the one set of buckets outgrows its reduction."""
TABLE_WINDOWS_RANGE = (2, 16)
"""Windows a window table may hold: the base and at least one multiple, at most the kernels'
(16, a 16-bit table's every window)."""
MAX_SLEEP_MS = 3_600_000
"""One hour: the longest planted slowdown (a test-only knob; real profiles plant none)."""

BACKEND_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
BACKEND_NAME_ALLOWED = 'a backend name (letters, digits, "_", "-", ".")'
_KNOB = "cuzk.knob"


@attrs.frozen
class Knob:
    """What a profile may say about one field: its doc, and what values are allowed."""

    doc: str
    low: int | None = None
    high: int | None = None
    """Inclusive bounds of an integer knob (or of each value of a keyed table)."""
    auto: bool = False
    """``"auto"`` is allowed and stands for ``None``: the backend chooses."""
    pattern: re.Pattern[str] | None = None
    allowed: str = ""
    """What a string matching ``pattern`` looks like, for the error message."""
    keys: tuple[str, ...] = ()
    """The keys of a table of integers (a ``tuple[tuple[str, int], ...]`` field)."""
    only_when_set: bool = False
    """Left out of ``to_dict`` at its default, so adding the knob changes no profile's digest."""


def knob(doc: str, **allowed: Any) -> dict[str, Knob]:
    """The attrs field metadata making a field a profile key: its doc and :class:`Knob` rules."""
    return {_KNOB: Knob(doc, **allowed)}


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


def _window(msm: str) -> Any:
    low, high = WINDOW_BITS_RANGE
    doc = f"Pippenger window bits of the {msm} MSM"
    return attrs.field(default=None, metadata=knob(doc, low=low, high=high, auto=True))


class _PerMsm:
    """A table of one value per MSM (fields named as ``MSM_NAMES``)."""

    __slots__ = ()

    def for_msm(self, msm: str) -> int | None:
        """The value of MSM ``msm`` (one of ``MSM_NAMES``); ``None`` as the class says."""
        value: int | None = getattr(self, msm)
        return value


@attrs.frozen
class WindowBits(_PerMsm):
    """Pippenger window bits per MSM; ``None`` ("auto") lets the backend choose."""

    a: int | None = _window("A")
    b_g1: int | None = _window("B (G1)")
    b_g2: int | None = _window("B (G2)")
    l: int | None = _window("L")
    h: int | None = _window("H")


MSM_NAMES = tuple(field.name for field in attrs.fields(WindowBits))


def _table_bits(msm: str) -> Any:
    low, high = TABLE_BITS_RANGE
    doc = f'window bits of the {msm} bases\' window tables (key_storage = "device")'
    return attrs.field(default=None, metadata=knob(doc, low=low, high=high, only_when_set=True))


@attrs.frozen
class TableBits(_PerMsm):
    """Window tables per MSM for a resident key; ``None`` (left out): no table. With c bits the
    batch keeps 2^(c·w)·P for all :meth:`windows` w (that many times its device memory), and
    its MSMs use c-bit windows."""

    a: int | None = _table_bits("A")
    b_g1: int | None = _table_bits("B (G1)")
    b_g2: int | None = _table_bits("B (G2)")
    l: int | None = _table_bits("L")
    h: int | None = _table_bits("H")

    def any(self) -> bool:
        """Whether any MSM has a table."""
        return any(self.for_msm(name) is not None for name in MSM_NAMES)

    @staticmethod
    def windows(bits: int) -> int:
        """Windows (so multiples of each base, the base included) a table of ``bits`` holds:
        ⌈256/bits⌉, enough for signed digits of a 255-bit scalar."""
        return -(-256 // bits)


def _table_windows(msm: str) -> Any:
    low, high = TABLE_WINDOWS_RANGE
    doc = f"windows the {msm} bases' window table holds (msm.table_bits set); left out: all"
    return attrs.field(default=None, metadata=knob(doc, low=low, high=high, only_when_set=True))


@attrs.frozen
class TableWindows(_PerMsm):
    """Windows per MSM's window table, fewer than all to spend less device memory: a table of k
    windows keeps 2^(c·j)·P for j < k (k times the batch's memory), and its MSMs sum a set of
    buckets for each k windows, combined on the host; ``None`` (left out): every window."""

    a: int | None = _table_windows("A")
    b_g1: int | None = _table_windows("B (G1)")
    b_g2: int | None = _table_windows("B (G2)")
    l: int | None = _table_windows("L")
    h: int | None = _table_windows("H")


_BATCH_LANES_DOC = (
    "most bucket runs each thread of the {group} MSMs' batch-affine first pass carries (one"
    " inversion a step for all); fewer where runs would fall under 16 entries, and the XYZZ pass"
    " below the group's floor (G1 96 lanes, G2 32); 0: the XYZZ first pass"
)


@attrs.frozen
class MsmSettings:
    """MSM knobs."""

    window_bits: WindowBits = WindowBits()
    signed_digits: bool = attrs.field(
        default=True, metadata=knob("signed window digits: half the buckets per window")
    )
    split_01: bool = attrs.field(
        default=False,
        metadata=knob("sum the bases of scalars 0 and 1 apart from the Pippenger of the others"),
    )
    table_bits: TableBits = TableBits()
    table_windows: TableWindows = TableWindows()
    upload_pieces: int = attrs.field(
        default=2,
        metadata=knob(
            "pieces a streamed key's bases upload in (each at least 2^22 points), each piece's"
            " upload beside the previous piece's sums; 1: one upload before the sums",
            low=1,
            high=16,
        ),
    )
    batch_lanes_g1: int = attrs.field(
        default=0, metadata=knob(_BATCH_LANES_DOC.format(group="G1"), low=0, high=4096)
    )
    batch_lanes_g2: int = attrs.field(
        default=0, metadata=knob(_BATCH_LANES_DOC.format(group="G2"), low=0, high=4096)
    )
    share_sorts: bool = attrs.field(
        default=False,
        metadata=knob(
            "keep an MSM's sorted digits for the next MSMs over the same scalars (a proof's B·G1"
            " and B·G2), which skip their sort"
        ),
    )
    sorts_ahead: bool = attrs.field(
        default=False,
        metadata=knob(
            "sort the digits of a proof's later MSMs beside the device work before them (kept"
            " as msm.share_sorts keeps a sort, for the MSMs over those scalars)"
        ),
    )
    b_g2_on: str = attrs.field(
        default=B_G2_ON_DEVICE,
        metadata=knob(
            "where B·G2 runs: on the device, or on a CPU backend beside the G1 MSMs",
            pattern=BACKEND_NAME,
            allowed=f'"{B_G2_ON_DEVICE}" or {BACKEND_NAME_ALLOWED}, e.g. "fastcpu"',
        ),
    )

    def table_of(self, msm: str) -> tuple[int, int] | None:
        """MSM ``msm``'s window table as (bits, windows it holds), None without one."""
        bits = self.table_bits.for_msm(msm)
        if bits is None:
            return None
        windows = self.table_windows.for_msm(msm)
        return bits, TableBits.windows(bits) if windows is None else windows


@attrs.frozen
class MemorySettings:
    """Allocation knobs: pinning, proving-key storage, staging pool."""

    pinning: Pinning = attrs.field(
        default=Pinning.NONE, metadata=knob("how host buffers are made DMA-able")
    )
    key_storage: KeyStorage = attrs.field(
        default=KeyStorage.HOST, metadata=knob("where the proving key lives during proofs")
    )
    pool_mib: int = attrs.field(
        default=256,
        metadata=knob(
            'MiB of page-locked staging under pinning = "pool"', low=1, high=MAX_POOL_MIB
        ),
    )
    device_budget_kib: int | None = attrs.field(
        default=None,
        metadata=knob(
            'KiB of device memory a streamed key may take (key_storage = "stream" or "mmap")',
            low=1,
            high=MAX_DEVICE_BUDGET_KIB,
            only_when_set=True,
        ),
    )
    """None: what the device has free. KiB, so that tests can force many chunks on a small key."""


@attrs.frozen
class SynthesisSettings:
    """Compiling a native circuit (the first synthesis of its shape)."""

    replicate_gadgets: bool = attrs.field(
        default=True,
        metadata=knob(
            "record a repeated top-level gadget call twice, then copy it (same matrices)"
        ),
    )


@attrs.frozen
class DebugSettings:
    """Test-only knobs: ``sleep_ms`` plants a slowdown in named phases, for testing the bench."""

    sleep_ms: tuple[tuple[str, int], ...] = attrs.field(
        default=(),
        metadata=knob(
            "milliseconds slept inside each named phase (test-only)",
            low=1,
            high=MAX_SLEEP_MS,
            keys=PHASES,
            only_when_set=True,
        ),
    )
    """``(phase, milliseconds)`` pairs; empty in every real profile."""


@attrs.frozen
class Profile:
    """A resolved profile: what ``cuzk profile show`` prints and what every phase reads."""

    name: str
    backend: str = attrs.field(
        default="cpu",
        metadata=knob(
            "the backend that runs every hook (`cuzk backends` lists them)",
            pattern=BACKEND_NAME,
            allowed=BACKEND_NAME_ALLOWED,
        ),
    )
    description: str = attrs.field(
        default="", metadata=knob("one line saying what the profile is for")
    )
    msm: MsmSettings = MsmSettings()
    memory: MemorySettings = MemorySettings()
    synthesis: SynthesisSettings = SynthesisSettings()
    debug: DebugSettings = DebugSettings()
    sources: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The resolved settings as plain TOML-able values (``extends`` already applied)."""
        return _to_dict(self)

    def digest(self) -> str:
        """A short hash of the resolved settings, to tell results of different profiles apart."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The resolved profile as TOML text: where it came from and each key's doc as comments."""
        lines = [f"# profile {self.name} (digest {self.digest()})"]
        lines += [f"# from {s}" for s in self.sources]
        lines += _toml_lines(self, ())
        return "\n".join(lines) + "\n"


for _cls in (
    WindowBits,
    TableBits,
    TableWindows,
    MsmSettings,
    MemorySettings,
    SynthesisSettings,
    DebugSettings,
    Profile,
):
    attrs.resolve_types(_cls)


# ---------------------------------------------------------------- the schema, read off the classes


def _rules_of(field: attrs.Attribute) -> Knob:
    """The :class:`Knob` of a key that is not a sub-table."""
    rules: Knob = field.metadata[_KNOB]
    return rules


def _table(field: attrs.Attribute) -> type | None:
    """The settings class of a sub-table field (``msm``, ``memory``…), else None."""
    kind = field.type
    return kind if isinstance(kind, type) and attrs.has(kind) else None


def _keys(cls: type) -> Iterator[attrs.Attribute]:
    """The fields of ``cls`` that are profile keys: knobs and sub-tables."""
    for field in attrs.fields(cls):
        if _KNOB in field.metadata or _table(field) is not None:
            yield field


def _is_keyed_table(field: attrs.Attribute) -> bool:
    return typing.get_origin(field.type) is tuple and bool(_rules_of(field).keys)


def _plain_type(field: attrs.Attribute) -> Any:
    """``int`` for ``int | None``; the field's type otherwise."""
    args = [a for a in typing.get_args(field.type) if a is not type(None)]
    return args[0] if typing.get_origin(field.type) is not tuple and len(args) == 1 else field.type


def schema_keys(cls: type = Profile, prefix: str = "") -> Iterator[tuple[str, Knob]]:
    """Every dotted profile key below ``cls`` with its :class:`Knob` (for docs and tests)."""
    for field in _keys(cls):
        sub = _table(field)
        if sub is not None:
            yield from schema_keys(sub, f"{prefix}{field.name}.")
        else:
            yield f"{prefix}{field.name}", _rules_of(field)


# ---------------------------------------------------------------- validation


def _shown(value: Any) -> str:
    """``repr(value)``, cut short when long (a 4,000-digit integer stays one readable line)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text)} characters)"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_rule(rules: Knob) -> str:
    """What an integer knob allows, in words: the text of its error and of ``profile show``."""
    if rules.auto:
        return f'"auto" or an integer from {rules.low} to {rules.high}'
    if rules.low == 1:
        return "a positive integer" + (f" up to {rules.high}" if rules.high is not None else "")
    return f"an integer from {rules.low} to {rules.high}"


def _check_table(table: Any, cls: type, where: Path | str, prefix: str) -> None:
    """Validate a (partial) table against ``cls``'s keys, raising a ProfileError naming the key."""
    fields = {f.name: f for f in _keys(cls)}
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        field = fields.get(key)
        if field is None:
            allowed = ", ".join(f"{prefix}{k}" for k in _top_keys(cls, prefix))
            raise ProfileError(f"{where}: unknown key {dotted!r} (allowed: {allowed})")
        sub = _table(field)
        if (sub is not None or _is_keyed_table(field)) and not isinstance(value, dict):
            raise ProfileError(f"{where}: {dotted!r} must be a table, got {_shown(value)}")
        if sub is not None:
            _check_table(value, sub, where, dotted + ".")
        elif _is_keyed_table(field):
            _check_keyed(value, _rules_of(field), where, dotted)
        else:
            _check_value(value, _plain_type(field), _rules_of(field), where, dotted)


def _top_keys(cls: type, prefix: str) -> list[str]:
    keys = [f.name for f in _keys(cls)]
    return ["extends", *keys] if cls is Profile and not prefix else keys


def _check_keyed(table: dict[str, Any], rules: Knob, where: Path | str, dotted: str) -> None:
    for key, value in table.items():
        if key not in rules.keys:
            allowed = ", ".join(f"{dotted}.{k}" for k in rules.keys)
            raise ProfileError(f"{where}: unknown key '{dotted}.{key}' (allowed: {allowed})")
        _check_value(value, int, rules, where, f"{dotted}.{key}")


def _check_value(value: Any, kind: Any, rules: Knob, where: Path | str, dotted: str) -> None:
    got = f"got {_shown(value)}"
    if kind is bool and not isinstance(value, bool):
        raise ProfileError(f"{where}: {dotted!r} must be true or false, {got}")
    if kind is str:
        if not isinstance(value, str):
            raise ProfileError(f"{where}: {dotted!r} must be a string, {got}")
        if rules.pattern is not None and not rules.pattern.fullmatch(value):
            raise ProfileError(f"{where}: {dotted!r} must be {rules.allowed}, {got}")
    if kind is int:
        in_range = _is_int(value) and (rules.low is None or value >= rules.low)
        in_range = in_range and (rules.high is None or value <= rules.high)
        if not in_range and not (rules.auto and value == "auto"):
            raise ProfileError(f"{where}: {dotted!r} must be {_int_rule(rules)}, {got}")
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        allowed = [member.value for member in kind]
        if value not in allowed:
            choices = ", ".join(json.dumps(a) for a in allowed)
            raise ProfileError(f"{where}: {dotted!r} must be one of {choices}, {got}")


# ---------------------------------------------------------------- building and rendering


def _build(cls: type, table: dict[str, Any], **extra: Any) -> Any:
    """An instance of ``cls`` from a validated table: defaults for what it leaves out."""
    values = dict(extra)
    for field in _keys(cls):
        if field.name not in table:
            continue
        raw = table[field.name]
        sub = _table(field)
        if sub is not None:
            values[field.name] = _build(sub, raw)
        elif _is_keyed_table(field):
            values[field.name] = tuple(raw.items())
        elif _rules_of(field).auto and raw == "auto":
            values[field.name] = None
        elif isinstance(_plain_type(field), type) and issubclass(_plain_type(field), enum.Enum):
            values[field.name] = _plain_type(field)(raw)
        else:
            values[field.name] = raw
    return cls(**values)


def _toml_of(field: attrs.Attribute, value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if value is None and _rules_of(field).auto:
        return "auto"
    if _is_keyed_table(field):
        return dict(value)
    return value


def _to_dict(settings: Any) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for field in _keys(type(settings)):
        value = getattr(settings, field.name)
        if _table(field) is not None:
            sub = _to_dict(value)
            if sub:
                table[field.name] = sub
        elif not (_rules_of(field).only_when_set and value == field.default):
            table[field.name] = _toml_of(field, value)
    return table


def _allowed_text(field: attrs.Attribute) -> str:
    rules = _rules_of(field)
    kind = _plain_type(field)
    if rules.pattern is not None:
        return rules.allowed
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return "one of " + ", ".join(json.dumps(m.value) for m in kind)
    if kind is bool:
        return "true or false"
    if _is_keyed_table(field) or kind is int:
        return _int_rule(rules)
    return "a string"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def _toml_lines(settings: Any, path: tuple[str, ...]) -> list[str]:
    """One table's keys, each after a comment with its doc and allowed values, then sub-tables."""
    lines: list[str] = []
    tables: list[tuple[attrs.Attribute, Any]] = []
    for field in _keys(type(settings)):
        value = getattr(settings, field.name)
        if _table(field) is not None or _is_keyed_table(field):
            tables.append((field, value))
        elif not (_rules_of(field).only_when_set and value == field.default):
            lines.append(f"# {_rules_of(field).doc}; {_allowed_text(field)}")
            lines.append(f"{field.name} = {_toml_value(_toml_of(field, value))}")
    if path and lines:
        lines[:0] = ["", f"[{'.'.join(path)}]"]
    for field, value in tables:
        if _table(field) is not None:
            lines += _toml_lines(value, (*path, field.name))
        elif value != field.default or not _rules_of(field).only_when_set:
            lines += ["", f"# {_rules_of(field).doc}; each {_allowed_text(field)}"]
            lines.append(f"[{'.'.join((*path, field.name))}]")
            lines += [f"{key} = {_toml_value(v)}" for key, v in value]
    return lines


# ---------------------------------------------------------------- finding profiles by name


@attrs.frozen
class NamedProfile:
    """A profile that ``--profile NAME`` finds: shipped with cuzk or with a plugin."""

    name: str
    path: Path
    origin: str
    """``shipped``, or the plugin's distribution name and version (``cuzk-fastcpu 0.1.0``)."""
    shadowed_by: str | None = None
    """The origin of the profile of this name that wins, when this one is hidden by it."""


@attrs.frozen
class BrokenProfiles:
    """A ``cuzk.profiles`` entry point whose package cannot be read, and why."""

    origin: str
    reason: str


def _toml_files(package: str) -> dict[str, Path]:
    folder = importlib.resources.files(package)
    return {Path(p.name).stem: Path(str(p)) for p in folder.iterdir() if p.name.endswith(".toml")}


def shipped_profiles() -> dict[str, Path]:
    """The profiles that ship with cuzk, by name."""
    return _toml_files("cuzk_profiles")


def _origin(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = entry_point.dist
    return f"{dist.name} {dist.version}" if dist is not None else f"entry point {entry_point.name}"


def plugin_profiles() -> tuple[list[NamedProfile], list[BrokenProfiles]]:
    """The profiles plugins ship (by entry-point name, then file name), and the unreadable ones."""
    found: list[NamedProfile] = []
    broken: list[BrokenProfiles] = []
    group = importlib.metadata.entry_points(group=PROFILE_ENTRY_POINTS)
    for entry_point in sorted(group, key=lambda e: (e.name, e.value)):
        origin = _origin(entry_point)
        try:
            if entry_point.attr is not None:
                raise ValueError(f"{entry_point.value!r} must name a package, not an attribute")
            files = _toml_files(entry_point.module)
        except Exception as exc:  # a broken plugin must not stop the others being listed
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
            broken.append(BrokenProfiles(f"{origin} ({entry_point.name})", reason))
            continue
        found += [NamedProfile(name, path, origin) for name, path in sorted(files.items())]
    return found, broken


def named_profiles() -> list[NamedProfile]:
    """Every named profile: shipped ones first, then plugins'; a hidden one says who hides it."""
    winners: dict[str, str] = {}
    listed = []
    shipped = [NamedProfile(n, p, "shipped") for n, p in sorted(shipped_profiles().items())]
    for profile in (*shipped, *plugin_profiles()[0]):
        if profile.name in winners:
            profile = attrs.evolve(profile, shadowed_by=winners[profile.name])
        else:
            winners[profile.name] = profile.origin
        listed.append(profile)
    return listed


def resolve_profile_path(ref: str | Path, relative_to: Path | None = None) -> Path:
    """A profile path from a path (relative to ``relative_to`` if given), else a named profile.

    A name is looked up among the shipped profiles, then the plugins' (shipped wins a clash).
    """
    candidates = [Path(ref)]
    if relative_to is not None and not Path(ref).is_absolute():
        candidates.insert(0, relative_to / ref)
    for path in candidates:
        if path.is_file():
            return path
    name = Path(str(ref)).name.removesuffix(".toml")
    shipped = shipped_profiles()
    if name in shipped:
        return shipped[name]
    plugins = plugin_profiles()[0]
    for profile in plugins:
        if profile.name == name:
            return profile.path
    offered = sorted({f"{p.name} ({p.origin})" for p in plugins if p.name not in shipped})
    raise ProfileError(
        f"profile {str(ref)!r} not found: not a file, and not a shipped profile "
        f"(shipped: {', '.join(sorted(shipped))}"
        + (f"; from plugins: {', '.join(offered)})" if offered else ")")
    )


# ---------------------------------------------------------------- loading


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML table of ``path``; every way it can be unreadable is a one-line ProfileError."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_PROFILE_BYTES + 1)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile: {exc.strerror}") from None
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfileError(f"{path}: larger than {MAX_PROFILE_BYTES} bytes; not a profile")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ProfileError(
            f"{path}: not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            f"(line {line}); TOML files are UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ProfileError(f"{path}: malformed TOML: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. Python's limit on digits in an integer
        if "integer string conversion" in str(exc):
            limit = sys.get_int_max_str_digits()
            raise ProfileError(
                f"{path}: malformed TOML: an integer with more than {limit} digits"
            ) from None
        raise ProfileError(f"{path}: malformed TOML: {exc}") from None


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _check_file(table: dict[str, Any], path: Path) -> None:
    extends = table.get("extends")
    if extends is not None and not isinstance(extends, str):
        raise ProfileError(f"{path}: 'extends' must be a string, got {_shown(extends)}")
    _check_table({k: v for k, v in table.items() if k != "extends"}, Profile, path, "")


def _load_raw(path: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The merged table of ``path`` and its ``extends`` chain, and the files it came from."""
    chain: list[tuple[Path, dict[str, Any]]] = []
    seen: dict[Path, None] = {}  # an ordered set
    while True:
        resolved = path.resolve()
        if resolved in seen:
            cycle = " -> ".join(str(p) for p in (*seen, resolved))
            raise ProfileError(f"{chain[0][0]}: 'extends' forms a cycle: {cycle}")
        if len(seen) == MAX_EXTENDS_DEPTH:
            raise ProfileError(
                f"{chain[0][0]}: 'extends' chain is longer than {MAX_EXTENDS_DEPTH} files "
                f"(the limit), stopped at {path}"
            )
        seen[resolved] = None
        table = _read_toml(path)
        _check_file(table, path)
        parent = table.pop("extends", None)
        chain.append((path, table))
        if parent is None:
            break
        try:
            path = resolve_profile_path(parent, relative_to=path.parent)
        except ProfileError as exc:
            raise ProfileError(f"{path}: 'extends': {exc}") from None
    merged: dict[str, Any] = {}
    for _, table in reversed(chain):
        merged = _merge(merged, table)
    return merged, tuple(str(p) for p, _ in reversed(chain))


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
    _check_table(table, Profile, label, "")
    return table


def load_profile(
    ref: str | Path | None = None, changes: Mapping[str, Any] | None = None
) -> Profile:
    """Load, merge and validate a profile given by path or name (default: ``cpu``).

    ``changes`` maps dotted keys (``"memory.pinning"``) to values applied on top, for A/B runs
    of one knob; they are validated like the file's own keys.
    """
    path = resolve_profile_path(ref if ref is not None else DEFAULT_PROFILE)
    raw, sources = _load_raw(path)
    if changes:
        raw = _merge(raw, _nest_changes(changes, "--change"))
        sources = (*sources, *(f"--change {k}={_toml_value(v)}" for k, v in changes.items()))
    profile = _build(Profile, raw, name=path.stem, sources=sources)
    memory = profile.memory
    # A conflict may come from a change as well as the file: name both.
    where = f"{path} with {', '.join(sources[-len(changes) :])}" if changes else str(path)
    if profile.msm.table_bits.any() and memory.key_storage is not KeyStorage.DEVICE:
        raise ProfileError(
            f"{where}: 'msm.table_bits' applies to key_storage \"device\" (a resident key), "
            f"not {json.dumps(memory.key_storage.value)}"
        )
    for name in MSM_NAMES:
        windows = profile.msm.table_windows.for_msm(name)
        bits = profile.msm.table_bits.for_msm(name)
        if windows is None:
            continue
        if bits is None:
            raise ProfileError(
                f"{where}: 'msm.table_windows.{name}' applies to a window table, and "
                f"'msm.table_bits.{name}' sets none"
            )
        if windows > TableBits.windows(bits):
            raise ProfileError(
                f"{where}: 'msm.table_windows.{name}' must be an integer from 2 to "
                f"{TableBits.windows(bits)} (a {bits}-bit table's windows), got {windows}"
            )
    streamed = (KeyStorage.STREAM, KeyStorage.MMAP)
    if memory.device_budget_kib is not None and memory.key_storage not in streamed:
        raise ProfileError(
            f'{where}: \'memory.device_budget_kib\' applies to key_storage "stream" or "mmap" '
            f"(the key is streamed in chunks), not {json.dumps(memory.key_storage.value)}"
        )
    return profile
