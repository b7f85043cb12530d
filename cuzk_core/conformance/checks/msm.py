"""Checks of the MSM hooks (random, every scalar and point edge under each digit encoding),
the scalars' gather, the fixed-base hooks and the snarkjs point decoder.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any

import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.conformance.inputs import (
    GROUPS,
    POINT_KINDS,
    SCALAR_KINDS,
    SPECIAL_SCALARS,
    R,
    edge_points,
    random_points,
    random_r1cs,
    random_scalars,
    snarkjs_point_rows,
)
from cuzk_core.conformance.oracles import (
    fixed_base_by_definition,
)
from cuzk_core.fallbacks import reference_fixed_base_g1, reference_fixed_base_g2
from cuzk_core.interop.points import reference_decode
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs, limbs_to_ints

from .base import (
    NOT_IMPLEMENTED,
    Check,
    CheckFailed,
    Subject,
    expected,
    expected_msm,
    kind_of,
    msm_of,
    profile_changes,
    same_point,
    same_points,
    same_scalars,
    short,
    unchanged,
)
from .circuits import COMPILED_CIRCUITS

MSM_PROFILES = {
    "signed": {},
    "split01": {"msm.split_01": True},
    "unsigned": {"msm.signed_digits": False},
}
"""Profile changes every edge-input MSM runs under: both digit encodings and the 0/1 split."""
REFERENCE_FIXED_BASE = {"g1": reference_fixed_base_g1, "g2": reference_fixed_base_g2}


# ---------------------------------------------------------------- MSM


def check_msm(
    checked: Subject,
    group: str,
    points: list,
    scalars: list[int],
    profiles: tuple[dict[str, Any], ...] = ({},),
    windows: tuple[int | None, ...] = (None,),
    want: G1Affines | G2Affines | None = None,
) -> None:
    """The MSM is ``want`` (by default :func:`expected_msm`) under each profile and window."""
    bases = GROUPS[group][2].from_points(points)
    limbs = ints_to_limbs(scalars)
    inputs = [bases.coords, bases.infinity, limbs]
    copies = [a.copy() for a in inputs]
    if want is None:
        want = expected_msm(checked, group, points, scalars)
    for changes in profiles:
        backend = checked.backend(**changes)
        for window_bits in windows:
            what = f"{len(points)} points, window_bits={window_bits}{profile_changes(changes)}"
            same_point(msm_of(backend, group, bases, limbs, window_bits), want, what)
    unchanged(inputs, copies, f"msm_{group}")


def _msm_random(group: str, n: int, checked: Subject, rng: random.Random) -> None:
    points, scalars = random_points(group, rng, n), random_scalars(rng, n)
    check_msm(checked, group, points, scalars, windows=(None, 4, 9))


def _msm_scalars(
    group: str, kind: str, changes: dict[str, Any], checked: Subject, rng: random.Random
) -> None:
    n = 64 if group == "g1" else 32
    points = random_points(group, rng, n)
    check_msm(checked, group, points, SCALAR_KINDS[kind](rng, n), (changes,), (None, 4))


def _msm_points(
    group: str, kind: str, changes: dict[str, Any], checked: Subject, rng: random.Random
) -> None:
    n = 64 if group == "g1" else 32
    points = edge_points(group, kind, rng, n)
    for scalars in (SCALAR_KINDS["mixed"](rng, n), [1] * n):
        check_msm(checked, group, points, scalars, (changes,), (None, 4))


def _index_patterns(rng: random.Random, n: int) -> list[np.ndarray]:
    """None, the first, the last, all, a sorted subset, random ones repeating, and one
    read-only array given twice (a key's query indices: a device may keep its copy)."""
    shared = np.array(sorted(rng.sample(range(n), max(1, n // 2))), dtype=np.int64)
    shared.flags.writeable = False
    patterns = [np.zeros(0, np.int64), np.array([0]), np.array([n - 1]), np.arange(n)]
    patterns.append(np.array(sorted(rng.sample(range(n), max(1, n // 3))), dtype=np.int64))
    patterns.append(np.array([rng.randrange(n) for _ in range(2 * n)], dtype=np.int64))
    return [*patterns, shared, shared]


def _gather_scalars(checked: Subject, rng: random.Random) -> str | None:
    """Rows of host scalars, of R1CS products and of a witness the backend returned (which a
    device backend gathers where it holds them), for every index pattern: numpy's take. A
    handle (not a host array) is checked through its host copy and the MSMs that take it."""
    from cuzk_core.witness.compiled import compile_circuit
    from cuzk_core.witness.replay import replay

    backend = checked.backend()
    if not backend.implements("cuzk_gather_scalars"):
        return NOT_IMPLEMENTED
    sources = {"host scalars": ints_to_limbs(SCALAR_KINDS["mixed"](rng, 37))}
    witness = [1, *random_scalars(rng, 39)]
    sources["products"] = backend.evaluate_r1cs(random_r1cs(rng, 41, 40), ints_to_limbs(witness))[0]
    circuit = COMPILED_CIRCUITS["porep-lite-2x3"](rng)
    compiled, _ = compile_circuit(checked.reference, circuit(0), use_cache=False)
    assert compiled.program is not None, compiled.problem
    sources["witness"] = backend.witness(compiled.program, *replay(circuit(1), compiled.program))
    sources["rows of the witness"] = sources["witness"][3:]  # a view, as the L query takes
    for name, values in sources.items():
        copy = values.copy()
        patterns = _index_patterns(rng, len(values))
        gathered = backend.gather_scalars(values, patterns, "conformance")
        if len(gathered) != len(patterns):
            raise CheckFailed(f"{name}: {len(gathered)} results for {len(patterns)} index arrays")
        for rows, got in zip(patterns, gathered, strict=True):
            want = np.take(values, rows, axis=0)
            what = f"{len(rows)} rows of {len(values)} {name}"
            if len(got) != len(rows):
                raise CheckFailed(f"{what}: {len(got)} scalars")
            check_msm_scalars(checked, backend, got, want, what)
        unchanged([values], [copy], "gather_scalars")
    return None


def check_msm_scalars(
    checked: Subject, backend: Backend, got: Any, want: np.ndarray, what: str
) -> None:
    """``got`` holds the scalars ``want``: as a host array, or as a handle whose host copy
    (``np.asarray``) and MSMs (G1 over all and over its last rows, G2 over all) agree."""
    if isinstance(got, np.ndarray):
        same_scalars(got, want, what)
        return
    same_scalars(np.asarray(got), want, f"{what}, its host copy")
    rng = random.Random(len(want))
    for group, rows in (
        ("g1", slice(None)),
        ("g1", slice(len(want) // 2, None)),
        ("g2", slice(None)),
    ):
        taken = want[rows]
        if not len(taken):
            continue
        points = random_points(group, rng, len(taken))
        expect = expected_msm(checked, group, points, limbs_to_ints(taken))
        bases = GROUPS[group][2].from_points(points)
        same_point(msm_of(backend, group, bases, got[rows]), expect, f"{what}: an MSM over it")


def _msm_ahead(checked: Subject, rng: random.Random) -> str | None:
    """MSMs named ahead (``cuzk_msm_ahead``) over gathered scalars, then an MSM named nowhere,
    the named ones in another order (one with other window bits, one twice over the same
    scalars in both groups) and one named but never asked for: every sum is the reference's,
    and every hint returns a bool. Then again over resident window tables of fewer windows
    (``msm.table_windows``), the same in both groups, so that G1 takes G2's sort."""
    changes = {
        "msm.sorts_ahead": True,
        "msm.share_sorts": True,
        "msm.split_01": True,
        "memory.key_storage": "device",
    }
    tables = {"msm.table_bits.a": 16, "msm.table_windows.a": 5}
    tables.update({"msm.table_bits.b_g2": 16, "msm.table_windows.b_g2": 5})
    for extra in ({}, tables):
        backend = checked.backend(**changes, **extra)
        if not backend.implements("cuzk_msm_ahead"):
            return NOT_IMPLEMENTED
        _named_ahead(checked, backend, rng, "over tables" if extra else "")
    return None


def _named_ahead(checked: Subject, backend: Any, rng: random.Random, where: str) -> None:
    n = 48
    values = ints_to_limbs(SCALAR_KINDS["mixed"](rng, 2 * n))
    rows = [np.arange(n), np.arange(n, 2 * n), np.arange(0, 2 * n, 2)]
    handles = backend.gather_scalars(values, rows, "conformance")
    ints = [limbs_to_ints(values[r]) for r in rows]
    points = {group: random_points(group, rng, n) for group in GROUPS}
    purposes = {"g1": "a", "g2": "b_g2"}  # the MSMs a profile's window tables name
    bases = {g: backend.upload(GROUPS[g][2].from_points(points[g]), purposes[g]) for g in GROUPS}
    try:
        named = [
            backend.msm_ahead(bases["g2"], handles[0], "b_g2", "g2"),
            backend.msm_ahead(bases["g1"], handles[1], "a", "g1"),
            backend.msm_ahead(bases["g1"], handles[2], "l", "g1"),  # never asked for
        ]
        if not all(isinstance(t, bool) for t in named):
            raise CheckFailed(f"msm_ahead returned {named}, expected bools")
        plain = ints_to_limbs(SCALAR_KINDS["mixed"](rng, n))
        asked = [
            ("g1", plain, limbs_to_ints(plain), None, "scalars named nowhere"),
            ("g2", handles[0], ints[0], None, "scalars named for G2"),
            ("g1", handles[0], ints[0], None, "the G2 MSM's scalars again, in G1"),
            ("g1", handles[1], ints[1], 5, "scalars named, asked with 5-bit windows"),
        ]
        for group, scalars, want_ints, window_bits, what in asked:
            want = expected_msm(checked, group, points[group], want_ints)
            got = msm_of(backend, group, bases[group], scalars, window_bits)
            same_point(got, want, f"{n} points, {what} {where}".strip())
    finally:
        for handle in bases.values():
            backend.release(handle)


# ---------------------------------------------------------------- fixed base (optional hooks)


def check_fixed_base(checked: Subject, group: str, base: Any, scalars: list[int]) -> str | None:
    """The backend's fixed-base hook gives the reference's points (the definition's for the
    reference itself); :data:`NOT_IMPLEMENTED` when the backend leaves the hook out."""
    backend = checked.backend()
    limbs = ints_to_limbs(scalars)
    copy = limbs.copy()
    hook = f"cuzk_fixed_base_{group}"
    if not backend.implements(hook):
        return NOT_IMPLEMENTED
    got = getattr(backend, f"fixed_base_{group}")(base, limbs)
    want = expected(
        checked,
        lambda reference: REFERENCE_FIXED_BASE[group](base, limbs),
        lambda: GROUPS[group][2].from_points(fixed_base_by_definition(group, base, scalars)),
    )
    where = "infinity" if base is None else f"x = {short(base[0] if group == 'g1' else base[0][0])}"
    same_points(got, want, f"{len(scalars)} scalars, base {where}")
    unchanged([limbs], [copy], f"fixed_base_{group}")
    return None


def _fixed_base_random(group: str, checked: Subject, rng: random.Random) -> str | None:
    generator = GROUPS[group][1]
    for n in (1, 3, 257):
        if check_fixed_base(checked, group, generator, random_scalars(rng, n)) is not None:
            return NOT_IMPLEMENTED
    return None


def _fixed_base_edges(group: str, checked: Subject, rng: random.Random) -> str | None:
    """0, 1, r−1 and the other special scalars, repeated, on G and on another point; no
    scalars; and the base at infinity."""
    edges = [*SPECIAL_SCALARS, *SPECIAL_SCALARS[::-1], rng.randrange(R), 0, 0]
    other = random_points(group, rng, 1)[0]
    for base, scalars in ((GROUPS[group][1], edges), (other, edges), (other, []), (None, edges)):
        if check_fixed_base(checked, group, base, scalars) is not None:
            return NOT_IMPLEMENTED
    return None


def _decode_snarkjs_points(group: str, checked: Subject, rng: random.Random) -> str | None:
    """A zkey's points, random and every edge (infinity, off the subgroup, coordinates at and
    above q, off the curve), and none at all: the reference's batch and status, point by point."""
    backend = checked.backend()
    if not backend.implements("cuzk_decode_snarkjs_points"):
        return NOT_IMPLEMENTED
    for n in (0, 3, 64):
        rows = snarkjs_point_rows(group, rng, n)
        for raw in (rows, rows[:0]) if n == 0 else (rows,):
            copy = raw.copy()
            got = backend.decode_snarkjs_points(raw, group)
            want, want_status = reference_decode(raw, group)
            if not isinstance(got, tuple) or len(got) != 2:
                raise CheckFailed(f"returned {kind_of(got)}, expected (batch, status)")
            same_points(got[0], want, f"{len(raw)} {group} points")
            status = np.asarray(got[1])
            if status.shape != want_status.shape or not np.array_equal(status, want_status):
                raise CheckFailed(
                    f"{len(raw)} points: status {status}, the reference {want_status}"
                )
            unchanged([raw], [copy], "decode_snarkjs_points")
    return None


def checks() -> Iterator[Check]:
    """The MSMs of both groups, the fixed-base hooks, the point decoder and the gather."""
    partial = functools.partial
    for group in GROUPS:
        hook = f"cuzk_msm_{group}"
        for n in (1, 2, 3, 64):
            yield Check(hook, f"random-{n}", partial(_msm_random, group, n))
        for encoding, changes in MSM_PROFILES.items():
            for kind in [k for k in SCALAR_KINDS if k != "random"]:
                run = partial(_msm_scalars, group, kind, changes)
                yield Check(hook, f"scalars={kind},{encoding}", run)
            for kind in POINT_KINDS:
                run = partial(_msm_points, group, kind, changes)
                yield Check(hook, f"points={kind},{encoding}", run)
    for group in GROUPS:
        hook = f"cuzk_fixed_base_{group}"
        yield Check(hook, "random-1-3-257", partial(_fixed_base_random, group))
        yield Check(hook, "edges", partial(_fixed_base_edges, group))
    for group in GROUPS:
        decode = partial(_decode_snarkjs_points, group)
        yield Check("cuzk_decode_snarkjs_points", f"{group}-random-and-edges", decode)
    yield Check("cuzk_gather_scalars", "host-returned-and-witness", _gather_scalars)
    yield Check("cuzk_msm_ahead", "named-then-asked-in-another-order", _msm_ahead)
