"""The native Poseidon permutation and the 2-to-1 hash built on it (plain ints)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import mul

from .params import PoseidonParams, poseidon_params
from .sparse_rounds import sparse_rounds


def poseidon_permutation(state: Sequence[int], params: PoseidonParams) -> list[int]:
    """The permutation, with the partial rounds' sparse linear layers (:mod:`.sparse_rounds`,
    the same output as the reference's dense rounds for half the products); in the partial
    rounds only lane 0 is reduced each round, the other lanes grow by less than p² a round."""
    p, t, half = params.modulus, params.t, params.r_f // 2
    if len(state) != t:
        raise ValueError(f"state has {len(state)} lanes, the permutation takes {t}")
    schedule = sparse_rounds(params)
    following = [*schedule.round_constants[1:], (0,) * t]  # each linear layer adds the next
    full_mds = iter(schedule.full_mds)
    s = [(x + c) % p for x, c in zip(state, schedule.round_constants[0], strict=True)]

    def full_round(s: list[int], mds: tuple[tuple[int, ...], ...], c: tuple[int, ...]):
        squares = [x * x % p for x in s]
        fifth = [x2 * x2 % p * x % p for x2, x in zip(squares, s, strict=True)]
        return [(sum(map(mul, row, fifth)) + cj) % p for row, cj in zip(mds, c, strict=True)]

    for r in range(half):
        s = full_round(s, next(full_mds), following[r])
    x0, rest = s[0], s[1:]
    partial = following[half : half + params.r_p]
    for (m00, w, v), c in zip(schedule.sparse, partial, strict=True):
        x2 = x0 * x0 % p
        y = x2 * x2 % p * x0 % p
        x0 = (m00 * y + sum(map(mul, w, rest)) + c[0]) % p
        rest = [xj + vj * y + cj for xj, vj, cj in zip(rest, v, c[1:], strict=True)]
    s = [x0, *(x % p for x in rest)]
    for r in range(half + params.r_p, params.r_f + params.r_p):
        s = full_round(s, next(full_mds), following[r])
    return s


def poseidon_hash2(left: int, right: int, params: PoseidonParams | None = None) -> int:
    """The 2-to-1 hash: permute [0 (capacity), left, right] with t = 3 and return lane 1."""
    params = poseidon_params() if params is None else params
    return poseidon_permutation([0, left, right], params)[1]
