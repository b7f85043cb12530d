"""The canonical array layouts for data crossing a hook (see docs/hooks.md).

Scalars are ``uint64`` arrays shaped ``(n, 4)``: little-endian 64-bit limbs of the canonical
(non-Montgomery) value. G1 affine points are ``(n, 2, 6)`` (x, y; six limbs each), G2 affine points
``(n, 2, 2, 6)`` (x, y; c0, c1; six limbs each), with an explicit ``infinity`` mask beside the
coordinates (whose rows are zero for points at infinity). Backends convert at their boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import attrs
import numpy as np

if TYPE_CHECKING:
    from typing_extensions import Self

SCALAR_LIMBS = 4
FQ_LIMBS = 6
_FQ_BYTES = 8 * FQ_LIMBS


def ints_to_limbs(values: Sequence[int], limbs: int = SCALAR_LIMBS) -> np.ndarray:
    """Pack non-negative ints below 2^(64·limbs) into a writable ``(n, limbs)`` uint64 array.

    One ``int.to_bytes`` per value (mapped in C) and one buffer copy, rather than per-limb shifts.
    """
    width = 8 * limbs
    little: Literal["little"] = "little"
    data = bytearray().join(map(int.to_bytes, values, repeat(width), repeat(little)))
    return np.frombuffer(data, dtype="<u8").reshape(len(values), limbs)


def limbs_to_ints(array: np.ndarray) -> list[int]:
    """Unpack an ``(n, limbs)`` little-endian uint64 array into Python ints."""
    if array.ndim != 2:
        raise ValueError(f"expected an (n, limbs) array, got shape {array.shape}")
    data = np.ascontiguousarray(array, dtype="<u8").tobytes()
    width = 8 * array.shape[1]
    return [int.from_bytes(data[i : i + width], "little") for i in range(0, len(data), width)]


def _fq_from(data: bytes, offset: int) -> int:
    return int.from_bytes(data[offset : offset + _FQ_BYTES], "little")


@attrs.frozen(eq=False)
class _AffineBatch:
    """Affine points: ``coords`` (``(n, *POINT_SHAPE)`` uint64) and an ``infinity`` mask."""

    POINT_SHAPE: ClassVar[tuple[int, ...]]
    coords: np.ndarray
    infinity: np.ndarray

    @staticmethod
    def _flatten(point: Any) -> Sequence[int]:
        """An affine tuple's coordinates in limb order (each subclass defines it)."""
        raise NotImplementedError

    @staticmethod
    def _unflatten(coords: list[int]) -> Any:
        """The affine tuple of coordinates in limb order (each subclass defines it)."""
        raise NotImplementedError

    @classmethod
    def elements_per_point(cls) -> int:
        """Fq elements in a point: 2 in G1, 4 in G2."""
        return int(np.prod(cls.POINT_SHAPE)) // FQ_LIMBS

    def element_rows(self) -> np.ndarray:
        """``coords`` as ``(n, elements a point, FQ_LIMBS)``: the shape stated, as a reshape
        with -1 cannot be for a batch of no points."""
        return self.coords.reshape(len(self), self.elements_per_point(), FQ_LIMBS)

    @classmethod
    def from_points(cls, points: Sequence) -> Self:
        """Build a batch from affine tuples; ``None`` is the point at infinity."""
        per_point = cls.elements_per_point()
        zero = bytes(per_point * _FQ_BYTES)
        chunks, infinity = [], []
        for point in points:
            infinity.append(point is None)
            if point is None:
                chunks.append(zero)
            else:
                chunks.extend(c.to_bytes(_FQ_BYTES, "little") for c in cls._flatten(point))
        data = b"".join(chunks)
        coords = np.frombuffer(data, dtype="<u8").astype(np.uint64)
        return cls(coords.reshape(len(infinity), *cls.POINT_SHAPE), np.array(infinity, dtype=bool))

    @classmethod
    def empty(cls, n: int) -> Self:
        """``n`` points at infinity, to be filled in place."""
        return cls(np.zeros((n, *cls.POINT_SHAPE), np.uint64), np.ones(n, dtype=bool))

    def to_points(self) -> list:
        """The batch as affine tuples, ``None`` for infinity."""
        per_point = self.elements_per_point()
        data = np.ascontiguousarray(self.coords, dtype="<u8").tobytes()
        step = per_point * _FQ_BYTES
        offsets = [k * _FQ_BYTES for k in range(per_point)]
        return [
            None if inf else self._unflatten([_fq_from(data, i * step + o) for o in offsets])
            for i, inf in enumerate(self.infinity.tolist())
        ]

    def __len__(self) -> int:
        return len(self.infinity)

    def __getitem__(self, index: slice | np.ndarray) -> Self:
        return type(self)(self.coords[index], self.infinity[index])

    def equals(self, other: _AffineBatch) -> bool:
        """Exact equality of both arrays."""
        return np.array_equal(self.coords, other.coords) and np.array_equal(
            self.infinity, other.infinity
        )


class G1Affines(_AffineBatch):
    """G1 points: ``coords`` ``(n, 2, 6)`` (x, y), affine tuples ``(x, y)``."""

    POINT_SHAPE = (2, FQ_LIMBS)

    @staticmethod
    def _flatten(point: tuple[int, int]) -> Sequence[int]:
        return point

    @staticmethod
    def _unflatten(coords: list[int]) -> tuple[int, int]:
        return (coords[0], coords[1])


class G2Affines(_AffineBatch):
    """G2 points: ``coords`` ``(n, 2, 2, 6)`` (x, y; c0, c1), tuples ``((x0, x1), (y0, y1))``."""

    POINT_SHAPE = (2, 2, FQ_LIMBS)

    @staticmethod
    def _flatten(point: tuple[tuple[int, int], tuple[int, int]]) -> Sequence[int]:
        (x0, x1), (y0, y1) = point
        return (x0, x1, y0, y1)

    @staticmethod
    def _unflatten(coords: list[int]) -> tuple[tuple[int, int], tuple[int, int]]:
        return ((coords[0], coords[1]), (coords[2], coords[3]))
