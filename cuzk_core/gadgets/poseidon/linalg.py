"""Small dense linear algebra over GF(p) on lists of ints, for Poseidon parameter work."""

from __future__ import annotations

Matrix = list[list[int]]


def identity(t: int) -> Matrix:
    """The t×t identity matrix."""
    return [[int(r == c) for c in range(t)] for r in range(t)]


def mat_mul(a: Matrix, b: Matrix, p: int) -> Matrix:
    """The product a·b mod p."""
    cols = list(zip(*b, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) % p for col in cols] for row in a]


def mat_vec(a: Matrix, v: list[int], p: int) -> list[int]:
    """The product a·v mod p."""
    return [sum(x * y for x, y in zip(row, v, strict=True)) % p for row in a]


def rref(rows: Matrix, p: int) -> Matrix:
    """The non-zero rows of the reduced row-echelon form: a canonical basis of the row space."""
    rows = [[x % p for x in row] for row in rows]
    width = len(rows[0]) if rows else 0
    basis: Matrix = []
    for col in range(width):
        pivot = next((r for r in rows if r[col]), None)
        if pivot is None:
            continue
        rows.remove(pivot)
        inv = pow(pivot[col], -1, p)
        pivot = [x * inv % p for x in pivot]
        rows = [[(x - r[col] * y) % p for x, y in zip(r, pivot, strict=True)] for r in rows]
        basis = [[(x - b[col] * y) % p for x, y in zip(b, pivot, strict=True)] for b in basis]
        basis.append(pivot)
    return basis


def kernel(rows: Matrix, width: int, p: int) -> Matrix:
    """A basis of the right kernel {v : row·v = 0 for every row} in GF(p)^width."""
    reduced = rref(rows, p)
    pivots = [next(c for c, x in enumerate(row) if x) for row in reduced]
    basis = []
    for free in (c for c in range(width) if c not in pivots):
        v = [0] * width
        v[free] = 1
        for row, pc in zip(reduced, pivots, strict=True):
            v[pc] = -row[free] % p
        basis.append(v)
    return basis


def intersection(u: Matrix, w: Matrix, width: int, p: int) -> Matrix:
    """U ∩ W (bases as rows) as (U^⊥ + W^⊥)^⊥ for the dot product, non-degenerate over any field."""
    return rref(kernel(kernel(u, width, p) + kernel(w, width, p), width, p), p)


def inverse(a: Matrix, p: int) -> Matrix:
    """a⁻¹ mod p by Gauss–Jordan on [a | I]; ValueError when a is singular."""
    t = len(a)
    reduced = rref([[*row, *unit] for row, unit in zip(a, identity(t), strict=True)], p)
    if len(reduced) < t or any(reduced[i][i] != 1 for i in range(t)):
        raise ValueError("matrix is singular")
    return [row[t:] for row in reduced]
