"""The optimal ate pairing: bilinearity, non-degeneracy and agreement with py_ecc."""

import pytest
from py_ecc.fields import optimized_bls12_381_FQ12 as PyFQ12
from py_ecc.optimized_bls12_381 import pairing as py_pairing
from py_ecc.optimized_bls12_381.optimized_pairing import final_exponentiate as py_final_exponentiate
from py_ecc.optimized_bls12_381.optimized_pairing import miller_loop as py_miller_loop
from py_ecc_oracle import to_py_fq12, to_py_g1, to_py_g2

from cuzk_core.curve import G1_GENERATOR, g1_from_affine, g1_mul, g1_neg, g1_to_affine
from cuzk_core.curve.g2 import G2_GENERATOR, g2_from_affine, g2_mul, g2_to_affine
from cuzk_core.field import FR_MODULUS
from cuzk_core.field.tower import FQ12_ONE, fq12_mul, fq12_pow
from cuzk_core.pairing import (
    final_exponentiation,
    miller_loop,
    multi_pairing,
    pairing,
    pairing_product_is_one,
)

R = FR_MODULUS
P = G1_GENERATOR
Q = G2_GENERATOR


def g1(k: int):
    return g1_to_affine(g1_mul(g1_from_affine(P), k))


def g2(k: int):
    return g2_to_affine(g2_mul(g2_from_affine(Q), k))


def py_product_is_one(pairs) -> bool:
    """py_ecc's product check: one final exponentiation over the product of Miller loops."""
    f = PyFQ12.one()
    for a, b in pairs:
        if a is None or b is None:
            continue
        f = f * py_miller_loop(to_py_g2(b), to_py_g1(a), final_exponentiate=False)
    return py_final_exponentiate(f) == PyFQ12.one()


def test_non_degenerate_and_order_r():
    e = pairing(P, Q)
    assert e != FQ12_ONE
    assert fq12_pow(e, R) == FQ12_ONE


def test_bilinear(rng):
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    e = pairing(P, Q)
    assert pairing(g1(a), g2(b)) == fq12_pow(e, a * b % R)
    assert pairing(g1(a), Q) == pairing(P, g2(a))


def test_product_of_inverse_pairs_is_one(rng):
    a = rng.randrange(1, R)
    neg_p = g1_to_affine(g1_neg(g1_from_affine(P)))
    assert pairing_product_is_one([(g1(a), Q), (neg_p, g2(a))])
    assert not pairing_product_is_one([(g1(a), Q), (P, g2(a))])
    assert multi_pairing([(g1(a), Q), (neg_p, g2(a))]) == FQ12_ONE


def test_multi_pairing_is_product_of_pairings(rng):
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    pairs = [(g1(a), Q), (P, g2(b))]
    assert multi_pairing(pairs) == fq12_mul(pairing(*pairs[0]), pairing(*pairs[1]))
    assert final_exponentiation(miller_loop(pairs)) == multi_pairing(pairs)


def test_infinity_pairs_are_skipped():
    assert pairing(None, Q) == FQ12_ONE
    assert pairing(P, None) == FQ12_ONE
    assert miller_loop([]) == FQ12_ONE
    assert pairing_product_is_one([])
    e = pairing(P, Q)
    assert multi_pairing([(None, Q), (P, Q), (P, None)]) == e


def test_four_pair_groth16_shaped_check(rng):
    """e(A, B) = e(α, β)·e(L, γ)·e(C, δ), written as a product of four pairings equal to one."""
    alpha, beta, gamma, delta, l_, c = (rng.randrange(1, R) for _ in range(6))
    # choose a·b so that the equation holds: a·b = α·β + l·γ + c·δ
    ab = (alpha * beta + l_ * gamma + c * delta) % R
    a = rng.randrange(1, R)
    b = ab * pow(a, -1, R) % R
    pairs = [(g1(a), g2(b)), (g1(-alpha), g2(beta)), (g1(-l_), g2(gamma)), (g1(-c), g2(delta))]
    assert pairing_product_is_one(pairs)
    pairs[3] = (g1(-c - 1), g2(delta))
    assert not pairing_product_is_one(pairs)


def test_value_is_py_ecc_pairing_to_the_minus_three(rng):
    """Our hard part computes 3·(q⁴ − q² + 1)/r and py_ecc loops over |x| without conjugating,
    so our pairing is py_ecc's to the power −3: still bilinear and non-degenerate (3 ∤ r)."""
    a = rng.randrange(1, R)
    ours = to_py_fq12(pairing(g1(a), Q))
    theirs = py_pairing(to_py_g2(Q), to_py_g1(g1(a)))
    assert ours * theirs**3 == PyFQ12.one()


@pytest.mark.parametrize("holds", [True, False])
def test_product_check_agrees_with_py_ecc(holds, rng):
    a, b = rng.randrange(1, R), rng.randrange(1, R)
    c = a * b % R if holds else (a * b + 1) % R
    pairs = [(g1(a), g2(b)), (g1(R - c), Q)]
    assert pairing_product_is_one(pairs) == holds
    assert py_product_is_one(pairs) == holds
