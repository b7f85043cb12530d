"""The native Poseidon permutation and the 2-to-1 hash built on it (plain ints)."""

from __future__ import annotations

from collections.abc import Sequence

from .params import PoseidonParams, poseidon_params


def poseidon_permutation(state: Sequence[int], params: PoseidonParams) -> list[int]:
    """Apply the permutation as the reference does: per round, add the round constants, apply
    x^5 to every lane (full rounds) or to lane 0 only (partial rounds), then multiply by M."""
    p, t, mds = params.modulus, params.t, params.mds
    if len(state) != t:
        raise ValueError(f"state has {len(state)} lanes, the permutation takes {t}")
    s = [x % p for x in state]
    for r, constants in enumerate(params.round_constants):
        s = [x + c for x, c in zip(s, constants, strict=True)]
        if params.is_full_round(r):
            s = [pow(x, 5, p) for x in s]
        else:
            s[0] = pow(s[0], 5, p)
        s = [sum(m * x for m, x in zip(row, s, strict=True)) % p for row in mds]
    return s


def poseidon_hash2(left: int, right: int, params: PoseidonParams | None = None) -> int:
    """The 2-to-1 hash: permute [0 (capacity), left, right] with t = 3 and return lane 1."""
    params = poseidon_params() if params is None else params
    return poseidon_permutation([0, left, right], params)[1]
