"""Checks of the memory hooks: host buffers, pinning, uploads under every key storage and
pinning strategy (streamed in chunks too, their merged buckets at every edge), window tables
for resident bases, and release.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from typing import Any

import numpy as np

from cuzk_core.conformance.inputs import (
    GROUPS,
    POINT_KINDS,
    SCALAR_KINDS,
    R,
    edge_points,
    random_points,
    random_scalars,
)
from cuzk_core.layout import G1Affines, G2Affines, ints_to_limbs

from .base import (
    KEY_STORAGE,
    PINNING,
    Check,
    CheckFailed,
    Subject,
    expected_msm,
    kind_of,
    msm_of,
    profile_changes,
    same_point,
    unchanged,
)


def _memory(pinning: str) -> dict[str, Any]:
    return {"memory.pinning": pinning, "memory.pool_mib": 4}


def _alloc_host(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    for shape in ((1, 4), (257, 4), (3, 2, 6)):
        buffer = backend.alloc_host(shape, "uint64", "conformance")
        if not isinstance(buffer, np.ndarray) or buffer.shape != shape or buffer.dtype != np.uint64:
            raise CheckFailed(f"alloc_host({shape}, 'uint64') returned {kind_of(buffer)}")
        if buffer.any():
            raise CheckFailed(f"alloc_host({shape}) is not zeroed")
        buffer[...] = 7
        if not (buffer == 7).all():
            raise CheckFailed(f"alloc_host({shape}) does not keep what is written to it")
        backend.release(buffer)


def _host_arrays(
    checked: Subject, group: str, rng: random.Random
) -> tuple[G1Affines | G2Affines, np.ndarray, G1Affines | G2Affines]:
    """16 random bases and scalars as host arrays, and the MSM they must give."""
    points, scalars = random_points(group, rng, 16), random_scalars(rng, 16)
    bases = GROUPS[group][2].from_points(points)
    return bases, ints_to_limbs(scalars), expected_msm(checked, group, points, scalars)


def _pin(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    points, scalars = G1Affines.from_points(random_points("g1", rng, 16)), random_scalars(rng, 16)
    buffer = backend.alloc_host((64,), "uint64", "conformance")
    buffer[:] = 7
    arrays = [points.coords, ints_to_limbs(scalars), buffer]
    copies = [a.copy() for a in arrays]
    handle = backend.pin(arrays, "params")
    if handle is None:
        raise CheckFailed("pin returned None, not a handle")
    unchanged(arrays, copies, "pin")
    backend.unpin(handle)
    unchanged(arrays, copies, "unpin")
    backend.release(buffer)


def _unpin(pinning: str, checked: Subject, rng: random.Random) -> None:
    backend = checked.backend(**_memory(pinning))
    bases, scalars, want = _host_arrays(checked, "g1", rng)
    backend.unpin(backend.pin([bases.coords, scalars], "params"))
    same_point(backend.msm_g1(bases, scalars, "a"), want, "G1 MSM on arrays pinned and unpinned")


STREAM_BUDGET_KIB = 1
"""A device budget that streams the 16 test bases in chunks of 5 G1 / 2 G2 points (GPU)."""


def _upload(
    storage: str,
    pinning: str,
    checked: Subject,
    rng: random.Random,
    budget_kib: int | None = None,
) -> None:
    changes = {"memory.key_storage": storage, **_memory(pinning), "memory.pool_mib": 1}
    if budget_kib is not None:
        changes["memory.device_budget_kib"] = budget_kib
    backend = checked.backend(**changes)
    for group, purpose in (("g1", "a"), ("g2", "b_g2")):
        bases, scalars, want = _host_arrays(checked, group, rng)
        pinned = backend.pin([bases.coords, scalars], "params")
        handle = backend.upload(bases, purpose)
        for window_bits in (None, 4):
            got = msm_of(backend, group, handle, scalars, window_bits)
            same_point(got, want, f"{group} MSM on uploaded bases, window_bits={window_bits}")
        backend.release(handle)
        backend.unpin(pinned)


def _merged_chunks(checked: Subject, rng: random.Random) -> None:
    """A key streamed in chunks of 5 G1 / 2 G2 points (STREAM_BUDGET_KIB), whose passes merge
    their buckets into one set (GPU): every point kind, and "halves" (P then −P: equal chunks'
    buckets meet, then opposite ones), with one scalar repeated, mixed scalars, zeros and ones,
    under both digit encodings and the 0/1 split, at two window widths."""
    changes = {
        "memory.key_storage": "stream",
        **_memory("pool"),
        "memory.device_budget_kib": STREAM_BUDGET_KIB,
    }
    variants: tuple[dict[str, Any], ...] = (
        {},
        {"msm.signed_digits": False},
        {"msm.split_01": True},
    )
    for group, purpose in (("g1", "a"), ("g2", "b_g2")):
        n = 20 if group == "g1" else 8  # four chunks
        p = random_points(group, rng, 1)[0]
        minus_p = GROUPS[group][0].neg_affine(p)
        point_sets = {kind: edge_points(group, kind, rng, n) for kind in POINT_KINDS}
        point_sets["halves"] = [p] * (n // 2) + [minus_p] * (n // 2)
        scalar_sets = {
            "one repeated": [rng.randrange(R)] * n,
            "mixed": SCALAR_KINDS["mixed"](rng, n),
            "zeros": [0] * n,
            "ones": [1] * n,
        }
        for kind, points in point_sets.items():
            bases = GROUPS[group][2].from_points(points)
            for name, scalars in scalar_sets.items():
                want = expected_msm(checked, group, points, scalars)
                limbs = ints_to_limbs(scalars)
                for variant in variants:
                    backend = checked.backend(**changes, **variant)
                    handle = backend.upload(bases, purpose)
                    for window_bits in (None, 4):
                        got = msm_of(backend, group, handle, limbs, window_bits)
                        what = f"{group} {kind} points, {name} scalars, window_bits={window_bits}"
                        same_point(got, want, f"{what}{profile_changes(variant)}")
                    backend.release(handle)


def _window_tables(bits: int, pinning: str, checked: Subject, rng: random.Random) -> None:
    """Resident bases with window tables (``msm.table_bits.*``): MSMs over them give the
    reference's sums for every scalar kind and edge point, with signed and unsigned digits and
    the 0/1 split, over tables of every window and of fewer (``msm.table_windows.*``: sets of
    windows, the last one short); the same batch then gives them again without tables."""
    memory = {"memory.key_storage": "device", **_memory(pinning)}
    fewer = 5 if bits == 16 else 4  # 16 or 13 windows: sets of 5, 5, 5, 1 or 4, 4, 4, 1
    for group, purpose in (("g1", "a"), ("g2", "b_g2")):
        # The fewer windows' table is built first, then every window's, whose first two
        # windows serve the last variant.
        variants: tuple[dict[str, Any], ...] = (
            {f"msm.table_windows.{purpose}": fewer},
            {},
            {"msm.signed_digits": False},
            {"msm.split_01": True},
            {f"msm.table_windows.{purpose}": 2, "msm.signed_digits": False, "msm.split_01": True},
        )
        n = 48 if group == "g1" else 24
        kinds = ("random", "zeros", "ones", "r-1", "bits", "mixed")
        cases = [(random_points(group, rng, n), SCALAR_KINDS[kind](rng, n)) for kind in kinds]
        cases.append((edge_points(group, "mixed", rng, n), SCALAR_KINDS["mixed"](rng, n)))
        for points, scalars in cases:
            bases = GROUPS[group][2].from_points(points)
            limbs = ints_to_limbs(scalars)
            want = expected_msm(checked, group, points, scalars)
            for variant in ({f"msm.table_bits.{purpose}": bits, **v} for v in variants):
                backend = checked.backend(**memory, **variant)
                got = msm_of(backend, group, backend.upload(bases, purpose), limbs)
                same_point(got, want, f"{n} {group} points, {profile_changes(variant)[2:]}")
            plain = checked.backend(**memory)
            got = msm_of(plain, group, plain.upload(bases, purpose), limbs)
            same_point(got, want, f"{n} {group} points, after a table of {bits} bits")


def _release(checked: Subject, rng: random.Random) -> None:
    for storage in KEY_STORAGE:
        backend = checked.backend(**{"memory.key_storage": storage})
        bases, scalars, want = _host_arrays(checked, "g1", rng)
        backend.release(backend.upload(bases, "a"))
        handle = backend.upload(bases, "a")
        same_point(backend.msm_g1(handle, scalars, "a"), want, f"upload after a release, {storage}")
        backend.release(handle)
        backend.release(backend.alloc_host((8, 4), "uint64", "conformance"))


def checks() -> Iterator[Check]:
    """Each memory hook under every pinning strategy and key storage."""
    partial = functools.partial
    for hook, run in (("cuzk_alloc_host", _alloc_host), ("cuzk_pin", _pin), ("cuzk_unpin", _unpin)):
        for pinning in PINNING:
            yield Check(hook, f"pinning={pinning}", partial(run, pinning))
    for storage in KEY_STORAGE:
        for pinning in PINNING:
            run = partial(_upload, storage, pinning)
            yield Check("cuzk_upload", f"key_storage={storage},pinning={pinning}", run)
    for storage in ("stream", "mmap"):  # many chunks, each uploaded while the previous is summed
        for pinning in PINNING:
            run = partial(_upload, storage, pinning, budget_kib=STREAM_BUDGET_KIB)
            case = f"key_storage={storage},pinning={pinning},device_budget_kib={STREAM_BUDGET_KIB}"
            yield Check("cuzk_upload", case, run)
    yield Check("cuzk_upload", "merged-chunks-edges", _merged_chunks)
    for bits, pinning in ((16, "none"), (16, "pool"), (20, "pool")):
        run = partial(_window_tables, bits, pinning)
        yield Check("cuzk_upload", f"key_storage=device,table_bits={bits},pinning={pinning}", run)
    yield Check("cuzk_release", "every-key-storage", _release)
