"""The reference script's MDS security checks (algorithms 1–3), in plain Python over GF(p).

hadeshash's ``generate_parameters_grain.sage`` rejects a Cauchy matrix M that admits an
invariant subspace trail through the partial rounds (one S-box lane, s = 1):

1. for i = 1..t−1: M^i is not a scalar matrix; no eigenvector of M^i (eigenvalue in GF(p)) lies
   in S_i, the subspace that stays clear of the S-box lane for i − 1 rounds; and S_i is not
   invariant under M^j for j = 1..i;
2. the vectors e₀, M·e₀, M²·e₀, … span the whole space (e₀ is cyclic for M);
3. check 2 also holds for M^r, r = 2..4t.

Subspaces are kept as reduced row-echelon bases, so equal subspaces have equal bases.
"""

from __future__ import annotations

from itertools import count

from .linalg import Matrix, identity, intersection, kernel, mat_mul, mat_vec, rref

Poly = list[int]  # coefficients, constant term first, no trailing zeros


def is_secure_mds(m: Matrix, p: int) -> bool:
    """Whether the t×t matrix ``m`` over GF(p) passes the reference script's three checks."""
    t = len(m)
    powers = [identity(t)]
    for _ in range(4 * t):
        powers.append(mat_mul(powers[-1], m, p))
    return (
        _algorithm_1(powers, p)
        and _krylov_is_full(m, p)
        and all(_krylov_is_full(powers[r], p) for r in range(2, 4 * t + 1))
    )


def _algorithm_1(powers: list[Matrix], p: int) -> bool:
    m = powers[1]
    t = len(m)
    for i in range(1, t):
        a = powers[i]
        if a == [[a[0][0] if r == c else 0 for c in range(t)] for r in range(t)]:
            return False
        # S_i: vectors with lane 0 clear whose image keeps lane 0 clear for i − 1 rounds.
        rows = [powers[k][0][1:] for k in range(1, i)]
        s = rref([[0, *v] for v in kernel(rows, t - 1, p)], p)
        eigen_parts = []
        for lam in _roots(_charpoly(a, p), p):
            shifted = [
                [(x - lam) % p if r == c else x for c, x in enumerate(row)]
                for r, row in enumerate(a)
            ]
            eigen_parts += intersection(s, rref(kernel(shifted, t, p), p), t, p)
        spanned = rref(eigen_parts, p)
        if len(spanned) >= 1 and len(spanned) != t:
            return False
        for j in range(1, i + 1):
            if rref([mat_vec(powers[j], v, p) for v in s], p) == s:
                return False
    return True


def _krylov_is_full(m: Matrix, p: int) -> bool:
    """Algorithm 2 for s = 1 (its iota-space test is vacuous there): e₀ is cyclic for m."""
    t = len(m)
    v = [1] + [0] * (t - 1)
    basis = [v]
    while len(basis) < t:
        v = mat_vec(m, v, p)
        grown = rref([*basis, v], p)
        if len(grown) == len(basis):
            return False
        basis = grown
    return True


# -- eigenvalues: the characteristic polynomial's roots in GF(p) ---------------------------------


def _charpoly(a: Matrix, p: int) -> Poly:
    """det(xI − a) by Faddeev–LeVerrier (needs t < p)."""
    t = len(a)
    coeffs = [0] * t + [1]
    acc = [[0] * t for _ in range(t)]
    for k in range(1, t + 1):
        acc = mat_mul(a, acc, p)
        for d in range(t):
            acc[d][d] = (acc[d][d] + coeffs[t - k + 1]) % p
        trace = sum(mat_mul(a, acc, p)[d][d] for d in range(t))
        coeffs[t - k] = -trace * pow(k, -1, p) % p
    return coeffs


def _roots(f: Poly, p: int) -> list[int]:
    """The distinct roots of f in GF(p): gcd with x^p − x, then Cantor–Zassenhaus splitting."""
    x = [0, 1]
    g = _gcd(f, _sub(_powmod(x, p, f, p), x, p), p)
    return sorted(_split(g, p))


def _split(g: Poly, p: int) -> list[int]:
    """Roots of a monic g that is a product of distinct linear factors."""
    if len(g) <= 1:
        return []
    if len(g) == 2:
        return [-g[0] % p]
    for shift in count():
        h = _gcd(g, _sub(_powmod([shift, 1], (p - 1) // 2, g, p), [1], p), p)
        if 1 < len(h) < len(g):
            return _split(h, p) + _split(_divmod(g, h, p)[0], p)
    raise AssertionError("unreachable")


def _trim(a: Poly) -> Poly:
    while a and a[-1] == 0:
        a = a[:-1]
    return a


def _sub(a: Poly, b: Poly, p: int) -> Poly:
    n = max(len(a), len(b))
    a, b = a + [0] * (n - len(a)), b + [0] * (n - len(b))
    return _trim([(x - y) % p for x, y in zip(a, b, strict=True)])


def _divmod(a: Poly, b: Poly, p: int) -> tuple[Poly, Poly]:
    a = list(a)
    inv = pow(b[-1], -1, p)
    quotient = [0] * max(len(a) - len(b) + 1, 0)
    for shift in range(len(a) - len(b), -1, -1):
        q = a[shift + len(b) - 1] * inv % p
        quotient[shift] = q
        for i, y in enumerate(b):
            a[shift + i] = (a[shift + i] - q * y) % p
    return _trim(quotient), _trim(a)


def _mulmod(a: Poly, b: Poly, f: Poly, p: int) -> Poly:
    prod = [0] * (len(a) + len(b) - 1) if a and b else []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            prod[i + j] += x * y
    return _divmod(_trim([c % p for c in prod]), f, p)[1]


def _powmod(base: Poly, e: int, f: Poly, p: int) -> Poly:
    result, base = [1], _divmod(base, f, p)[1]
    while e:
        if e & 1:
            result = _mulmod(result, base, f, p)
        base = _mulmod(base, base, f, p)
        e >>= 1
    return result


def _gcd(a: Poly, b: Poly, p: int) -> Poly:
    """The monic gcd (the zero polynomial when both are zero)."""
    while b:
        a, b = b, _divmod(a, b, p)[1]
    if not a:
        return a
    inv = pow(a[-1], -1, p)
    return [c * inv % p for c in a]
