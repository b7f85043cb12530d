"""Which keys stay in memory: hot, warm or cold under a byte budget, evicted least recently used.

HOT: the key is loaded as the profile's ``key_storage`` says (host memory, a map of its cache,
or on the device, where its bases stay for as long as the host key lives). WARM: the file a
load reads (the key's cache once it exists) is mapped read-only with ``MADV_WILLNEED``, so a
reload reads the page cache rather than the disk; the OS may still reclaim those pages, so warm
bytes are not counted against the budget. COLD: on disk only.

Only hot bytes count against ``budget_bytes``. Making room demotes the least recently used hot
key that no job holds to warm; a key a job holds (a lease) is never evicted.
"""

from __future__ import annotations

import contextlib
import enum
import mmap
import threading
import time
from collections.abc import Callable, Iterator

import attrs

from cuzk_core.engine.keys import KeySpec, ResidentKey
from cuzk_core.errors import CuzkError

MIB = 1 << 20


class Tier(enum.Enum):
    """Where a key is now."""

    HOT = "hot"
    WARM = "warm"
    COLD = "cold"


class KeyTooLarge(CuzkError):
    """A key does not fit in the budget beside the keys jobs are using."""


class KeyBusy(CuzkError):
    """An eviction of a key that a running job holds."""


class UnknownKey(CuzkError):
    """A key id that is not in the engine's configuration."""


@attrs.frozen
class KeyStatus:
    """One key's residency, for status and metrics."""

    key_id: str
    tier: Tier
    bytes: int
    """Hot: bytes in memory; otherwise the size on disk."""
    refs: int
    loads: int


@attrs.define(eq=False)
class _Entry:
    spec: KeySpec
    loaded: ResidentKey | None = None
    mapping: mmap.mmap | None = None
    refs: int = 0
    loading: bool = False
    last_used: float = 0.0
    loads: int = 0

    @property
    def tier(self) -> Tier:
        if self.loaded is not None:
            return Tier.HOT
        return Tier.WARM if self.mapping is not None else Tier.COLD

    @property
    def hot_bytes(self) -> int:
        if self.loaded is not None:
            return self.loaded.nbytes
        return self.spec.disk_bytes if self.loading else 0


@attrs.frozen
class Lease:
    """A key held for one job: it stays hot until the lease ends."""

    key: ResidentKey
    load_ms: float
    """Time this acquisition spent loading the key (0 when it was hot)."""


def _mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"


class KeyResidency:
    """The keys of an engine and their tiers; thread-safe."""

    def __init__(
        self,
        specs: dict[str, KeySpec],
        budget_bytes: int,
        load: Callable[[KeySpec], ResidentKey],
        on_load: Callable[[str, float, int], None] | None = None,
        on_evict: Callable[[str, int], None] | None = None,
    ) -> None:
        self.budget_bytes = budget_bytes
        self._entries = {key_id: _Entry(spec) for key_id, spec in specs.items()}
        self._load = load
        self._on_load = on_load or (lambda key_id, ms, nbytes: None)
        self._on_evict = on_evict or (lambda key_id, nbytes: None)
        self._changed = threading.Condition()

    def _entry(self, key_id: str) -> _Entry:
        try:
            return self._entries[key_id]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownKey(f"unknown key {key_id!r} (this daemon serves: {known})") from None

    def spec(self, key_id: str) -> KeySpec:
        """The configured key called ``key_id``, or :class:`UnknownKey`."""
        return self._entry(key_id).spec

    @contextlib.contextmanager
    def lease(self, key_id: str) -> Iterator[Lease]:
        """Hold ``key_id`` hot for the block, loading it (and making room) first if needed."""
        entry = self._entry(key_id)
        load_ms = self._acquire(entry)
        try:
            assert entry.loaded is not None
            yield Lease(entry.loaded, load_ms)
        finally:
            with self._changed:
                entry.refs -= 1
                entry.last_used = time.monotonic()
                self._changed.notify_all()

    def preload(self, key_id: str) -> tuple[bool, float]:
        """Make ``key_id`` hot: (whether it already was, ms spent loading); refused with the
        sizes when it cannot fit beside the keys in use."""
        entry = self._entry(key_id)
        with self._changed:
            already = entry.tier is Tier.HOT
            if not already and not entry.loading:
                self._check_fits(entry, wait=False)
        with self.lease(key_id) as lease:
            return already, lease.load_ms

    def evict(self, key_id: str) -> tuple[bool, int]:
        """Drop ``key_id`` to cold: (whether it was hot, bytes freed); refused while in use."""
        entry = self._entry(key_id)
        with self._changed:
            if entry.refs or entry.loading:
                raise KeyBusy(f"key {key_id!r} is in use by {max(entry.refs, 1)} job(s)")
            was_hot = entry.tier is Tier.HOT
            freed = entry.hot_bytes
            self._demote(entry, Tier.COLD)
            return was_hot, freed

    def status(self) -> list[KeyStatus]:
        """Every configured key, by id."""
        with self._changed:
            return [
                KeyStatus(
                    e.spec.key_id,
                    e.tier,
                    e.loaded.nbytes if e.loaded is not None else e.spec.disk_bytes,
                    e.refs,
                    e.loads,
                )
                for _, e in sorted(self._entries.items())
            ]

    def hot_bytes(self) -> int:
        """Bytes the hot keys hold (and keys being loaded are expected to)."""
        with self._changed:
            return sum(e.hot_bytes for e in self._entries.values())

    def close(self) -> None:
        """Drop every key (engine shutdown)."""
        with self._changed:
            for entry in self._entries.values():
                entry.loaded = None
                self._unmap(entry)

    # ------------------------------------------------------------ internals (hold the lock)

    def _acquire(self, entry: _Entry) -> float:
        with self._changed:
            while entry.loading:
                self._changed.wait()
            entry.refs += 1
            if entry.loaded is not None:
                entry.last_used = time.monotonic()
                return 0.0
            try:
                self._check_fits(entry, wait=True)
            except BaseException:
                entry.refs -= 1
                raise
            entry.loading = True
        start = time.perf_counter()
        try:
            loaded = self._load(entry.spec)
        except BaseException:
            with self._changed:
                entry.loading = False
                entry.refs -= 1
                self._changed.notify_all()
            raise
        load_ms = (time.perf_counter() - start) * 1000.0
        with self._changed:
            entry.loaded, entry.loading = loaded, False
            entry.loads += 1
            entry.last_used = time.monotonic()
            self._unmap(entry)
            # The estimate was the size on disk: settle the real one (with window tables, 13x).
            if not self._make_room(0, keep=entry):
                held = sum(e.hot_bytes for e in self._entries.values() if e is not entry)
                self._demote(entry, Tier.WARM)
                entry.refs -= 1
                self._changed.notify_all()
                raise KeyTooLarge(
                    f"key {entry.spec.key_id!r} holds {_mib(loaded.nbytes)} once loaded; the "
                    f"budget is {_mib(self.budget_bytes)} and keys in use hold {_mib(held)}"
                )
            self._changed.notify_all()
        self._on_load(entry.spec.key_id, load_ms, loaded.nbytes)
        return load_ms

    def _check_fits(self, entry: _Entry, wait: bool) -> None:
        need = entry.spec.disk_bytes
        key_id = entry.spec.key_id
        if need > self.budget_bytes:
            raise KeyTooLarge(
                f"key {key_id!r} needs {_mib(need)}, more than the whole budget of "
                f"{_mib(self.budget_bytes)}"
            )
        while not self._make_room(need, keep=entry):
            held = {e.spec.key_id: e.hot_bytes for e in self._busy(entry)}
            if not wait:
                users = ", ".join(f"{k} {_mib(n)}" for k, n in sorted(held.items()))
                raise KeyTooLarge(
                    f"key {key_id!r} needs {_mib(need)}; the budget is {_mib(self.budget_bytes)} "
                    f"and keys in use hold {_mib(sum(held.values()))} ({users})"
                )
            self._changed.wait()

    def _busy(self, keep: _Entry) -> list[_Entry]:
        return [e for e in self._entries.values() if e is not keep and (e.refs or e.loading)]

    def _make_room(self, need: int, keep: _Entry) -> bool:
        """Demote idle hot keys, least recently used first, until ``need`` more bytes fit."""

        def used() -> int:
            return sum(e.hot_bytes for e in self._entries.values() if e is not keep)

        own = keep.loaded.nbytes if keep.loaded is not None else 0
        idle = sorted(
            (e for e in self._entries.values() if e is not keep and e.loaded is not None),
            key=lambda e: e.last_used,
        )
        for victim in idle:
            if used() + own + need <= self.budget_bytes:
                break
            if victim.refs == 0 and not victim.loading:
                freed = victim.hot_bytes
                self._demote(victim, Tier.WARM)
                self._on_evict(victim.spec.key_id, freed)
        return used() + own + need <= self.budget_bytes

    def _demote(self, entry: _Entry, tier: Tier) -> None:
        entry.loaded = None
        if tier is Tier.COLD:
            self._unmap(entry)
        elif entry.mapping is None:
            entry.mapping = _map_warm(entry.spec)

    @staticmethod
    def _unmap(entry: _Entry) -> None:
        if entry.mapping is not None:
            entry.mapping.close()
            entry.mapping = None


def _map_warm(spec: KeySpec) -> mmap.mmap | None:
    """Map the key file read-only and ask the OS to read it in (None for an empty file)."""
    try:
        with spec.loaded_file().open("rb") as f:
            mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None  # a vanished or empty file stays cold; loading it will say what is wrong
    if hasattr(mmap, "MADV_WILLNEED"):
        mapping.madvise(mmap.MADV_WILLNEED)
    return mapping
