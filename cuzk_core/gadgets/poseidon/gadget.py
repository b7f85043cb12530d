"""The Poseidon permutation in-circuit: three constraints per S-box, linear layers for free.

Lanes are carried as linear combinations with their values. Adding round constants and the linear
layers only rewrite those combinations; each x^5 costs x² = x·x, x⁴ = x²·x², x⁵ = x⁴·x. The
partial rounds use the equivalent sparse layers of :mod:`.sparse_rounds` (same witness values,
about a quarter of the work). An S-box whose input is a constant (the capacity lane in round 0)
is evaluated natively instead, so a t = 3 hash costs 3·(R_F·t + R_P) − 3 = 240 constraints.
"""

from __future__ import annotations

from collections.abc import Sequence

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.r1cs import ONE, ConstraintSystem, LinearCombination, gadget

from ..num import PLACEHOLDER_NUM, Num, NumLike
from .params import PoseidonParams, poseidon_params
from .sparse_rounds import sparse_rounds

_R = FR_MODULUS
_ONE_LC = LinearCombination({ONE: 1})


def _placeholder_state(
    cs: ConstraintSystem, state: Sequence[NumLike], params: PoseidonParams
) -> list[Num]:
    return [PLACEHOLDER_NUM] * len(state)


@gadget(_placeholder_state)
def poseidon_permutation_gadget(
    cs: ConstraintSystem, state: Sequence[NumLike], params: PoseidonParams
) -> list[Num]:
    """Constrain the permutation of ``state``; constraints are named "round r/sbox i x^k"."""
    if params.modulus != _R:
        raise ValueError("the Poseidon gadget needs parameters over BLS12-381 Fr")
    t = params.t
    if len(state) != t:
        raise ValueError(f"state has {len(state)} lanes, the permutation takes {t}")
    schedule = sparse_rounds(params)
    constants = schedule.round_constants
    full_mds = iter(schedule.full_mds)
    names = [(f"sbox {i} x^2", f"sbox {i} x^4", f"sbox {i} x^5") for i in range(t)]
    lcs = [s.lc + c for s, c in zip(state, constants[0], strict=True)]
    values = [(s.value + c) % _R for s, c in zip(state, constants[0], strict=True)]
    for r in range(len(constants)):
        full = params.is_full_round(r)
        with cs.namespace(f"round {r}"):
            for i in range(t if full else 1):
                lcs[i], values[i] = _sbox(cs, lcs[i], values[i], names[i])
        # The linear layer, with the next round's constants folded in.
        following = constants[r + 1] if r + 1 < len(constants) else (0,) * t
        if full:
            mds = next(full_mds)
            lcs = [
                LinearCombination.scaled_sum([*zip(row, lcs, strict=True), (c, _ONE_LC)])
                for row, c in zip(mds, following, strict=True)
            ]
            values = [
                (sum(m * v for m, v in zip(row, values, strict=True)) + c) % _R
                for row, c in zip(mds, following, strict=True)
            ]
        else:
            m00, w, v = schedule.sparse[r - params.r_f // 2]
            y, y_value = lcs[0], values[0]
            rest = list(zip(lcs[1:], values[1:], v, following[1:], strict=True))
            lane0 = [(m00, y), *zip(w, lcs[1:], strict=True), (following[0], _ONE_LC)]
            lane0_value = m00 * y_value + sum(wj * x for wj, x in zip(w, values[1:], strict=True))
            lcs = [
                LinearCombination.scaled_sum(lane0),
                *(x.add_scaled([(vj, y), (c, _ONE_LC)]) for x, _, vj, c in rest),
            ]
            values = [
                (lane0_value + following[0]) % _R,
                *((xv + vj * y_value + c) % _R for _, xv, vj, c in rest),
            ]
    return [Num(lc, v) for lc, v in zip(lcs, values, strict=True)]


def _sbox(
    cs: ConstraintSystem, x: LinearCombination, value: int, names: tuple[str, str, str]
) -> tuple[LinearCombination, int]:
    """x^5 in three constraints, or natively when x is a constant."""
    x2v = value * value % _R
    x5v = x2v * x2v * value % _R
    if x.terms.keys() <= {ONE}:
        return LinearCombination.constant(x5v), x5v
    name2, name4, name5 = names
    x2 = cs.alloc_solved(name2, x2v)
    cs.enforce(name2, x, x, x2)
    x4 = cs.alloc_solved(name4, x2v * x2v)
    cs.enforce(name4, x2, x2, x4)
    x5 = cs.alloc_solved(name5, x5v)
    cs.enforce(name5, x4, x, x5)
    return LinearCombination({x5: 1}), x5v


@gadget(lambda *args, **kwargs: PLACEHOLDER_NUM)
def poseidon_hash2_gadget(
    cs: ConstraintSystem, left: NumLike, right: NumLike, params: PoseidonParams | None = None
) -> Num:
    """In-circuit :func:`~.permutation.poseidon_hash2`, under the namespace "poseidon"."""
    params = poseidon_params() if params is None else params
    capacity = Num(LinearCombination(), 0)
    with cs.namespace("poseidon"):
        return poseidon_permutation_gadget(cs, [capacity, left, right], params)[1]
