"""Bit decomposition of a field element and packing bits back into one."""

from __future__ import annotations

from collections.abc import Sequence

from cuzk_core.field.constants import FR_MODULUS
from cuzk_core.r1cs import ONE, ConstraintSystem, LinearCombination, gadget

from .boolean import PLACEHOLDER_BIT, AllocatedBit
from .num import Num, NumLike

MAX_BITS = FR_MODULUS.bit_length() - 1
"""The most bits a decomposition may have and still be unique (2^MAX_BITS < r)."""

_BIT_NAMES = tuple(f"bit {i}" for i in range(MAX_BITS))


def _placeholder_bits(cs: ConstraintSystem, num: NumLike, n_bits: int) -> list[AllocatedBit]:
    return [PLACEHOLDER_BIT] * n_bits


@gadget(_placeholder_bits)
def to_bits_le(cs: ConstraintSystem, num: NumLike, n_bits: int) -> list[AllocatedBit]:
    """Decompose ``num`` into ``n_bits`` little-endian bits, under the namespace "bits".

    n_bits + 1 constraints: booleanity per bit ("bits/bit i") and the packing constraint
    ("bits/pack": Σ 2^i·bᵢ = num). A value that does not fit in n_bits gets its low bits, so the
    packing constraint, not synthesis, reports it.
    """
    if not 1 <= n_bits <= MAX_BITS:
        raise ValueError(f"n_bits must be in 1..{MAX_BITS}, got {n_bits}")
    value, source = num.value, num.lc
    empty = LinearCombination()
    bits = []
    with cs.namespace("bits"):
        for i in range(n_bits):
            bit = (value >> i) & 1
            v = cs.alloc_bit(_BIT_NAMES[i], bit, source, i)
            cs.enforce(_BIT_NAMES[i], v, ONE - v, empty)
            bits.append(AllocatedBit(v, bool(bit)))
        cs.enforce("pack", pack_bits(bits).lc, ONE, source)
    return bits


def pack_bits(bits: Sequence[AllocatedBit]) -> Num:
    """Σ 2^i·bᵢ (little-endian) as a linear combination with its value; no constraint."""
    if len(bits) > MAX_BITS:
        raise ValueError(f"at most {MAX_BITS} bits pack into one field element, got {len(bits)}")
    lc = LinearCombination({bit.variable: 1 << i for i, bit in enumerate(bits)})
    value = sum(1 << i for i, bit in enumerate(bits) if bit.value)
    return Num(lc, value)
