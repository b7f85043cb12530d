"""``cuzk check --key``: every point of a proving key in its prime-order subgroup, on the backend.

A curve point P lies in the order-r subgroup iff [r]P = O; one point at a time that is a Python
scalar multiplication (about 5 ms in G1, 9 ms in G2), minutes for a large key. Instead the
backend's MSM sums each batch with random small weights, S = Σ ρᵢPᵢ with ρᵢ uniform in [0, p),
p the smallest prime factor of the group's cofactor (3 for G1, 13 for G2). A point outside the
subgroup has a nonzero component of cofactor order, and for any choice of the other weights at
most one residue of its own weight cancels it, so a bad batch gives [r]S = O with probability at
most 1/p: :data:`SOUNDNESS_BITS` bits take 41 sums in G1 and 18 in G2. A good batch always
passes. A failing batch is halved, left half first, down to :data:`EXACT_POINTS` points checked
one by one, so the error names the first bad point. The loaded verifying key is already checked
point by point (the readers do it on every load); the zkey's coefficients can be compared with
the circuit's own (``--r1cs``).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import numpy as np

from cuzk_core.backend import Backend
from cuzk_core.curve.g1 import g1_in_subgroup
from cuzk_core.curve.g2 import g2_in_subgroup
from cuzk_core.errors import FormatError
from cuzk_core.fileio import read_start
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.qap import with_input_rows
from cuzk_core.interop.r1cs import read_r1cs
from cuzk_core.interop.zkey import ZKEY_MAGIC, Zkey
from cuzk_core.layout import SCALAR_LIMBS, G1Affines, G2Affines
from cuzk_core.progress import NullProgress, Progress
from cuzk_core.r1cs import SparseMatrix

SOUNDNESS_BITS = 64
"""A key with a point outside its subgroup passes with probability below 2^-64."""
EXACT_POINTS = 16
"""Batches this small are checked point by point."""


@attrs.frozen
class _Group:
    name: str
    smallest_cofactor_prime: int
    in_subgroup: Callable
    msm: Callable[[Backend], Callable]
    batch: type

    @property
    def rounds(self) -> int:
        """Sums per batch for :data:`SOUNDNESS_BITS` bits."""
        return math.ceil(SOUNDNESS_BITS / math.log2(self.smallest_cofactor_prime))


G1 = _Group("G1", 3, g1_in_subgroup, lambda backend: backend.msm_g1, G1Affines)
G2 = _Group("G2", 13, g2_in_subgroup, lambda backend: backend.msm_g2, G2Affines)


@attrs.frozen
class KeyReport:
    """What a passing check covered."""

    g1_points: int
    g2_points: int
    coefficients_checked: bool


class _Searcher:
    """Finds the first point outside the subgroup in one concatenated batch."""

    def __init__(self, backend: Backend, group: _Group, points, progress: Progress) -> None:
        self.msm = group.msm(backend)
        self.group = group
        self.points = points
        self.progress = progress
        self.rng = np.random.default_rng(secrets.randbits(128))

    def passes(self, lo: int, hi: int, report: bool = False) -> bool:
        """Whether ``points[lo:hi]`` pass every random sum (certainly, when all are good)."""
        batch = self.points[lo:hi]
        for round_ in range(self.group.rounds):
            if report:
                self.progress.step(f"{self.group.name} sum {round_ + 1}/{self.group.rounds}")
            weights = np.zeros((hi - lo, SCALAR_LIMBS), dtype=np.uint64)
            weights[:, 0] = self.rng.integers(0, self.group.smallest_cofactor_prime, hi - lo)
            total = self.msm(batch, weights, "check_key").to_points()[0]
            if total is not None and not self.group.in_subgroup(total):
                return False
        return True

    def first_bad(self) -> int | None:
        """The index of the first point outside the subgroup, or None."""
        count = len(self.points)
        if count == 0:
            return None
        if self.passes(0, count, report=True):
            return None
        found = self._locate(0, count)
        return found if found is not None else self._exact(0, count)  # a 2^-64 false pass

    def _locate(self, lo: int, hi: int) -> int | None:
        if hi - lo <= EXACT_POINTS:
            return self._exact(lo, hi)
        mid = (lo + hi) // 2
        if not self.passes(lo, mid):
            found = self._locate(lo, mid)
            if found is not None:
                return found
        return self._locate(mid, hi)

    def _exact(self, lo: int, hi: int) -> int | None:
        for index, point in enumerate(self.points[lo:hi].to_points(), start=lo):
            if point is not None and not self.group.in_subgroup(point):
                return index
        return None


def check_subgroups(
    backend: Backend,
    group: _Group,
    sections: Sequence[tuple[str, G1Affines | G2Affines]],
    where: Path,
    progress: Progress | None = None,
) -> int:
    """Check every point of the named sections of one group; the count checked, or a
    FormatError naming the section and index of the first point outside the subgroup."""
    sections = [(name, batch) for name, batch in sections if len(batch)]
    if not sections:
        return 0
    coords = np.concatenate([batch.coords for _, batch in sections])
    infinity = np.concatenate([batch.infinity for _, batch in sections])
    searcher = _Searcher(backend, group, group.batch(coords, infinity), progress or NullProgress())
    bad = searcher.first_bad()
    if bad is not None:
        starts = np.cumsum([0] + [len(batch) for _, batch in sections])
        which = int(np.searchsorted(starts, bad, side="right")) - 1
        raise FormatError(
            f"{where}: {sections[which][0]} point {bad - int(starts[which])} is not in the "
            f"prime-order subgroup of {group.name}"
        )
    return len(coords)


def _first_difference(have: SparseMatrix, want: SparseMatrix) -> int | None:
    """The first row in which two canonical CSR matrices differ, or None."""
    rows_have = np.repeat(np.arange(len(have.indptr) - 1), np.diff(have.indptr))
    rows_want = np.repeat(np.arange(len(want.indptr) - 1), np.diff(want.indptr))
    common = min(len(rows_have), len(rows_want))
    differs = (
        (rows_have[:common] != rows_want[:common])
        | (have.cols[:common] != want.cols[:common])
        | (have.coeffs[:common] != want.coeffs[:common]).any(axis=1)
    )
    index = np.nonzero(differs)[0]
    if len(index):
        return int(min(rows_have[index[0]], rows_want[index[0]]))
    if len(rows_have) != len(rows_want):
        longer = rows_have if len(rows_have) > common else rows_want
        return int(longer[common])
    if len(have.indptr) != len(want.indptr):
        return min(len(have.indptr), len(want.indptr)) - 1
    return None


def check_zkey_coefficients(zkey: Zkey, r1cs_path: str | Path) -> None:
    """The zkey's A and B coefficients are the circuit's (its input rows included)."""
    r1cs = read_r1cs(r1cs_path)
    header = zkey.header
    if (r1cs.num_wires, r1cs.num_public) != (header.num_vars, header.num_public):
        raise FormatError(
            f"{zkey.path}: {header.num_vars} variables and {header.num_public} public signals, "
            f"but {r1cs_path} has {r1cs.num_wires} and {r1cs.num_public}: not the same circuit"
        )
    have, want = zkey.matrices(), with_input_rows(r1cs.matrices)
    for name, ours, theirs in (("A", have.a, want.a), ("B", have.b, want.b)):
        row = _first_difference(ours, theirs)
        if row is not None:
            raise FormatError(
                f"{zkey.path}: section 4 (coefficients): row {row} of {name} differs from the "
                f"circuit {r1cs_path} (coefficients altered, or a key for another circuit)"
            )


def _is_zkey(path: Path) -> bool:
    return not path.is_dir() and read_start(path, len(ZKEY_MAGIC)) == ZKEY_MAGIC


def check_key(
    path: str | Path,
    backend: Backend,
    r1cs: str | Path | None = None,
    progress: Progress | None = None,
) -> KeyReport:
    """Fully check a snarkjs zkey, a params folder from ``cuzk setup`` or a params.bin."""
    path = Path(path)
    if _is_zkey(path):
        zkey = Zkey(path)
        zkey.verifying_key()
        pk = zkey.proving_key()
        g1 = [
            ("section 5 (A)", pk.a),
            ("section 6 (B1)", pk.b_g1),
            ("section 8 (C)", pk.l),
            ("section 9 (H)", pk.h),
        ]
        g2 = [("section 7 (B2)", pk.b_g2)]
        if r1cs is not None:
            check_zkey_coefficients(zkey, r1cs)
    else:
        if r1cs is not None:
            raise FormatError(f"{path}: --r1cs goes with a zkey; this is cuzk's own parameters")
        if path.is_dir():
            params_dir.read_vk(path)
            path = path / params_dir.PARAMS_FILE
        pk = files.read_params(path)
        g1 = [("h", pk.h), ("l", pk.l), ("a", pk.a), ("b_g1", pk.b_g1)]
        g2 = [("b_g2", pk.b_g2)]
    g1_count = check_subgroups(backend, G1, g1, path, progress)
    g2_count = check_subgroups(backend, G2, g2, path, progress)
    return KeyReport(g1_count, g2_count, r1cs is not None)
