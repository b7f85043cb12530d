"""What a conformance check is and what it checks with: the backend under test and its
reference (:class:`Subject`), a check and its outcome, the answers a hook must give
(:func:`expected`, :func:`expected_msm`) and the comparisons that raise :class:`CheckFailed`
with one line saying where a backend differs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.conformance.inputs import (
    GROUPS,
)
from cuzk_core.conformance.oracles import (
    msm_by_definition,
)
from cuzk_core.hookspecs import BackendInfo
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints
from cuzk_core.plugins import Plugins, load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer

REFERENCE = "cpu"
"""The backend every other one is held to."""
PINNING = ("none", "register", "pool")
KEY_STORAGE = ("device", "host", "stream", "mmap")
NOT_IMPLEMENTED = "not implemented (optional hook)"
HOST_INPUT = 1 << 10
"""Largest MSM, NTT or vector the suite gives a backend that computes on the host: the
plain-Python reference must match it, on CI's two cores."""
DEVICE_INPUT = 1 << 16
"""Largest input the suite gives a backend on an accelerator (``BackendInfo.device``)."""


def largest_input(info: BackendInfo) -> int:
    """The largest MSM, NTT or vector the suite gives backend ``info``."""
    return DEVICE_INPUT if info.accelerated else HOST_INPUT


class CheckFailed(AssertionError):
    """A backend's answer differs from the reference's or breaks the hook contract."""


@attrs.frozen
class Subject:
    """The backend under test, by name, and the reference it must match."""

    name: str
    plugins: Plugins
    reference: Backend

    @property
    def is_reference(self) -> bool:
        """True when the backend under test is the reference: it is held to the definitions."""
        return self.name == REFERENCE

    def backend(self, **changes: Any) -> Backend:
        """The backend under test with profile ``changes`` (dotted keys: ``msm.split_01``)."""
        profile = load_profile(REFERENCE, {"backend": self.name, **changes})
        return self.plugins.backend(profile, Timer(level=0))


def subject(name: str, plugins: Plugins | None = None) -> Subject:
    """The subject for backend ``name``; BackendUnavailable when it or the reference can't run."""
    plugins = plugins if plugins is not None else load_plugins()
    plugins.backend(load_profile(REFERENCE, {"backend": name}))  # unknown, broken: fail now
    return Subject(name, plugins, plugins.backend(load_profile(REFERENCE), Timer(level=0)))


@attrs.frozen
class Check:
    """One check of one hook: ``run`` raises on a failure, or returns why it did not apply."""

    hook: str
    case: str
    run: Callable[[Subject, random.Random], str | None] = attrs.field(repr=False)

    @property
    def id(self) -> str:
        """``hook:case``, unique among the checks."""
        return f"{self.hook}:{self.case}"

    def rng(self, seed: int) -> random.Random:
        """This check's randomness under ``seed``, whichever checks ran before it."""
        return random.Random(f"{seed}:{self.id}")


@attrs.frozen
class Outcome:
    """How a check went: ``error`` (one line) when it failed, ``note`` when it did not apply."""

    check: Check
    error: str | None = None
    note: str | None = None


def run_check(check: Check, checked: Subject, seed: int) -> Outcome:
    """Run one check; any exception (a mismatch, a crash, a missing hook) is a failure."""
    try:
        note = check.run(checked, check.rng(seed))
    except Exception as exc:
        text = " ".join(str(exc).split())
        if not isinstance(exc, CheckFailed):
            text = f"{type(exc).__name__}: {text}"[:300]
        return Outcome(check, error=text)
    return Outcome(check, note=note)


# ---------------------------------------------------------------- definitions


def expected(
    checked: Subject, from_reference: Callable[[Backend], Any], by_definition: Callable[[], Any]
) -> Any:
    """What a hook must return: the reference's answer, or the definition's for the reference."""
    return by_definition() if checked.is_reference else from_reference(checked.reference)


def expected_msm(
    checked: Subject, group: str, points: list, scalars: list[int]
) -> G1Affines | G2Affines:
    """The MSM a backend must return: the reference's, or the plain sum for the reference."""
    batch = GROUPS[group][2]
    return expected(
        checked,
        lambda reference: msm_of(
            reference, group, batch.from_points(points), ints_to_limbs(scalars)
        ),
        lambda: batch.from_points([msm_by_definition(group, points, scalars)]),
    )


# ---------------------------------------------------------------- comparisons


def kind_of(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__}" + (f" {value.dtype} {shape}" if shape is not None else "")


def _hex(row: np.ndarray) -> str:
    return hex(limbs_to_ints(np.asarray(row, dtype=np.uint64).reshape(1, -1))[0])


def same_scalars(got: Any, want: np.ndarray, what: str) -> None:
    """``got`` is a uint64 array of the reference's shape and values."""
    if not isinstance(got, np.ndarray) or got.dtype != np.uint64 or got.shape != want.shape:
        raise CheckFailed(f"{what}: returned {kind_of(got)}, expected uint64 {want.shape}")
    if not np.array_equal(got, want):
        row = int(np.nonzero((got != want).reshape(len(want), -1).any(axis=1))[0][0])
        raise CheckFailed(
            f"{what}: row {row} is {_hex(got[row])}, the reference gives {_hex(want[row])}"
        )


def _point(batch: G1Affines | G2Affines) -> str:
    if batch.infinity[0]:
        return "infinity" if not batch.coords.any() else "infinity with nonzero coordinates"
    return f"x = {_hex(batch.coords[0].reshape(-1, 6)[0])[:18]}…"


def same_point(got: Any, want: G1Affines | G2Affines, what: str) -> None:
    """``got`` is a one-point batch of the reference's type, equal to it in every limb."""
    if not isinstance(got, type(want)) or len(got) != 1:
        raise CheckFailed(f"{what}: returned {kind_of(got)}, expected one {type(want).__name__}")
    if not got.equals(want):
        raise CheckFailed(f"{what}: {_point(got)}, the reference gives {_point(want)}")


def unchanged(arrays: list[np.ndarray], copies: list[np.ndarray], what: str) -> None:
    """The hook left its input arrays as they were."""
    if not all(np.array_equal(a, c) for a, c in zip(arrays, copies, strict=True)):
        raise CheckFailed(f"{what} modified its input")


def short(value: int) -> str:
    return str(value) if value < 1 << 16 else f"{value:#x}"[:12] + "…"


def profile_changes(changes: dict[str, Any]) -> str:
    return "".join(f", {key}={value}" for key, value in changes.items())


def msm_of(
    backend: Backend, group: str, bases: Any, scalars: np.ndarray, window_bits: int | None = None
) -> G1Affines | G2Affines:
    call = backend.msm_g1 if group == "g1" else backend.msm_g2
    return call(bases, scalars, "conformance", window_bits)


def same_points(got: Any, want: G1Affines | G2Affines, what: str) -> None:
    """``got`` is a batch of the reference's type and length, equal to it in every limb."""
    if not isinstance(got, type(want)) or len(got) != len(want):
        raise CheckFailed(f"{what}: returned {kind_of(got)}, expected {len(want)} points")
    if not got.equals(want):
        differs = (got.coords != want.coords).reshape(len(want), -1).any(axis=1)
        row = int(np.nonzero(differs | (got.infinity != want.infinity))[0][0])
        raise CheckFailed(
            f"{what}: point {row} is {_point(got[row : row + 1])}, the reference "
            f"gives {_point(want[row : row + 1])}"
        )
