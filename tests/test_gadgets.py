"""Boolean, number, bit and Merkle gadgets: honest witnesses satisfy, tampered ones fail."""

from __future__ import annotations

import random

import pytest

from cuzk_core.conformance.inputs import random_scalars
from cuzk_core.field.constants import FR_MODULUS as R
from cuzk_core.gadgets.bits import MAX_BITS, pack_bits, to_bits_le
from cuzk_core.gadgets.boolean import AllocatedBit
from cuzk_core.gadgets.merkle import verify_merkle_path
from cuzk_core.gadgets.num import AllocatedNum, Num, conditional_swap, enforce_equal, select
from cuzk_core.gadgets.poseidon import poseidon_hash2, poseidon_hash2_gadget
from cuzk_core.r1cs import ConstraintSystem, LinearCombination, Variable

rng = random.Random(99)


class TamperingCS(ConstraintSystem):
    """A constraint system that adds 1 to the value of whatever is allocated under ``target``."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.hits = 0

    def alloc(self, name: str, value: int) -> Variable:
        if self.qualified_name(name) == self.target:
            self.hits += 1
            value += 1
        return super().alloc(name, value)


def _failure(target: str) -> str:
    return f"'{target}' is not satisfied"


# -- boolean -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, True, False])
def test_bit_allocation(value: int) -> None:
    cs = ConstraintSystem()
    bit = AllocatedBit.alloc(cs, "b", value)
    assert bit.value is bool(value) and cs.value(bit.variable) == int(value)
    assert cs.num_constraints == 1 and cs.is_satisfied() is None
    assert bit.not_lc().evaluate(cs.assignment(), cs.num_inputs) == 1 - int(value)


def test_bit_rejects_non_boolean_values_and_tampering() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        AllocatedBit.alloc(ConstraintSystem(), "b", 2)
    cs = TamperingCS("g/b")
    with cs.namespace("g"):
        AllocatedBit.alloc(cs, "b", 1)
    assert cs.hits == 1 and _failure("g/b") in cs.is_satisfied()


@pytest.mark.parametrize(("a", "b"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_and_xor_truth_tables(a: int, b: int) -> None:
    cs = ConstraintSystem()
    x, y = AllocatedBit.alloc(cs, "x", a), AllocatedBit.alloc(cs, "y", b)
    both, either = x.and_(cs, y), x.xor(cs, y)
    assert (both.value, either.value) == (bool(a & b), bool(a ^ b))
    assert cs.value(both.variable) == a & b and cs.value(either.variable) == a ^ b
    assert cs.is_satisfied() is None


@pytest.mark.parametrize("gate", ["and", "xor"])
def test_tampered_logic_output_fails(gate: str) -> None:
    cs = TamperingCS(f"logic/{gate}")
    with cs.namespace("logic"):
        x, y = AllocatedBit.alloc(cs, "x", 1), AllocatedBit.alloc(cs, "y", 0)
        x.and_(cs, y) if gate == "and" else x.xor(cs, y)
    assert _failure(f"logic/{gate}") in cs.is_satisfied()


# -- numbers -------------------------------------------------------------------------------------


def test_num_arithmetic() -> None:
    cs = ConstraintSystem()
    a_value, b_value = rng.randrange(R), rng.randrange(R)
    a = AllocatedNum.alloc(cs, "a", a_value)
    b = AllocatedNum.alloc_input(cs, "b", b_value)
    product, square = a.mul(cs, b), a.square(cs)
    assert product.value == a_value * b_value % R and square.value == a_value**2 % R
    total = a.add(b)
    assert isinstance(total, Num) and total.value == (a_value + b_value) % R
    combo = total.sub(b).scale(3).add(product)
    assert combo.value == (3 * a_value + a_value * b_value) % R
    z = cs.assignment()
    for num in (product, square, total, combo):
        assert num.lc.evaluate(z, cs.num_inputs) == num.value
    assert cs.num_constraints == 2 and cs.is_satisfied() is None


@pytest.mark.parametrize("gadget", ["mul", "square"])
def test_tampered_product_fails(gadget: str) -> None:
    cs = TamperingCS(f"n/{gadget}")
    with cs.namespace("n"):
        a = AllocatedNum.alloc(cs, "a", 5)
        a.mul(cs, AllocatedNum.alloc(cs, "b", 7)) if gadget == "mul" else a.square(cs)
    assert _failure(f"n/{gadget}") in cs.is_satisfied()


@pytest.mark.parametrize("bit_value", [0, 1])
def test_conditional_swap_and_select(bit_value: int) -> None:
    cs = ConstraintSystem()
    a, b = AllocatedNum.alloc(cs, "a", 11), AllocatedNum.alloc(cs, "b", 22)
    bit = AllocatedBit.alloc(cs, "bit", bit_value)
    first, second = conditional_swap(cs, a, b.add(a), bit)
    chosen = select(cs, bit, a, b)
    expected = (33, 11) if bit_value else (11, 33)
    assert (first.value, second.value) == expected
    assert chosen.value == (11 if bit_value else 22)
    z = cs.assignment()
    assert second.lc.evaluate(z, cs.num_inputs) == expected[1]
    assert cs.num_constraints == 3 and cs.is_satisfied() is None


@pytest.mark.parametrize("gadget", ["swap", "select"])
def test_tampered_swap_and_select_fail(gadget: str) -> None:
    cs = TamperingCS(f"m/{gadget}")
    with cs.namespace("m"):
        a, b = AllocatedNum.alloc(cs, "a", 1), AllocatedNum.alloc(cs, "b", 2)
        bit = AllocatedBit.alloc(cs, "bit", 1)
        conditional_swap(cs, a, b, bit) if gadget == "swap" else select(cs, bit, a, b)
    assert _failure(f"m/{gadget}") in cs.is_satisfied()


def test_enforce_equal() -> None:
    cs = ConstraintSystem()
    a, b = AllocatedNum.alloc(cs, "a", 4), AllocatedNum.alloc(cs, "b", 4)
    enforce_equal(cs, "same", a, b)
    assert cs.is_satisfied() is None
    enforce_equal(cs, "different", a, b.add(a))
    assert _failure("different") in cs.is_satisfied()


# -- bits ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_bits", [1, 8, 64, MAX_BITS])
def test_to_bits_le_random(n_bits: int) -> None:
    for _ in range(3):
        value = rng.randrange(1 << n_bits)
        cs = ConstraintSystem()
        num = AllocatedNum.alloc_input(cs, "x", value)
        bits = to_bits_le(cs, num, n_bits)
        assert [b.value for b in bits] == [bool((value >> i) & 1) for i in range(n_bits)]
        assert cs.num_constraints == n_bits + 1 and cs.is_satisfied() is None
        packed = pack_bits(bits)
        assert packed.value == value
        assert packed.lc.evaluate(cs.assignment(), cs.num_inputs) == value


def test_to_bits_le_reports_a_value_too_wide_at_the_packing_constraint() -> None:
    cs = ConstraintSystem()
    with cs.namespace("idx"):
        to_bits_le(cs, AllocatedNum.alloc(cs, "x", 256 + 5), 8)
    assert _failure("idx/bits/pack") in cs.is_satisfied()


def test_tampered_bit_fails_its_booleanity() -> None:
    cs = TamperingCS("idx/bits/bit 3")
    with cs.namespace("idx"):
        to_bits_le(cs, AllocatedNum.alloc(cs, "x", 0b1010), 4)
    assert _failure("idx/bits/bit 3") in cs.is_satisfied()


def test_bit_counts_are_validated() -> None:
    cs = ConstraintSystem()
    num = AllocatedNum.alloc(cs, "x", 1)
    for bad in (0, MAX_BITS + 1):
        with pytest.raises(ValueError, match="n_bits"):
            to_bits_le(cs, num, bad)
    with pytest.raises(ValueError, match="at most"):
        pack_bits([AllocatedBit.alloc(cs, "b", 0)] * (MAX_BITS + 1))


# -- merkle --------------------------------------------------------------------------------------


def _merkle_instance(depth: int) -> tuple[int, list[int], int, int]:
    """A random leaf, siblings and index, and the root they hash to natively."""
    leaf, index = rng.randrange(R), rng.randrange(1 << depth)
    siblings = random_scalars(rng, depth)
    node = leaf
    for level, sibling in enumerate(siblings):
        right = (index >> level) & 1
        node = poseidon_hash2(sibling, node) if right else poseidon_hash2(node, sibling)
    return leaf, siblings, index, node


def _synthesize_path(
    cs: ConstraintSystem, leaf: int, siblings: list[int], index: int
) -> tuple[Num, AllocatedNum]:
    root_input = AllocatedNum.alloc_input(cs, "root", 0)
    index_num = AllocatedNum.alloc_input(cs, "index", index)
    with cs.namespace("path"):
        bits = to_bits_le(cs, index_num, len(siblings))
        leaf_num = AllocatedNum.alloc(cs, "leaf", leaf)
        sibling_nums = [AllocatedNum.alloc(cs, f"sibling {i}", s) for i, s in enumerate(siblings)]
        root = verify_merkle_path(cs, leaf_num, sibling_nums, bits, poseidon_hash2_gadget)
    return root, root_input


def test_merkle_path_matches_native_root() -> None:
    leaf, siblings, index, expected = _merkle_instance(4)
    cs = ConstraintSystem()
    root, _ = _synthesize_path(cs, leaf, siblings, index)
    assert root.value == expected
    assert root.lc.evaluate(cs.assignment(), cs.num_inputs) == expected
    assert cs.num_constraints == 5 + 4 * (1 + 240)
    assert cs.is_satisfied() is None


@pytest.mark.parametrize(
    "target",
    [
        "path/level 2/swap",
        "path/level 1/poseidon/round 62/sbox 2 x^4",
        "path/level 0/poseidon/round 40/sbox 0 x^5",
    ],
)
def test_tampered_merkle_witness_fails_by_name(target: str) -> None:
    leaf, siblings, index, _ = _merkle_instance(3)
    cs = TamperingCS(target)
    _synthesize_path(cs, leaf, siblings, index)
    assert cs.hits == 1 and _failure(target) in cs.is_satisfied()


def test_wrong_sibling_changes_the_root() -> None:
    leaf, siblings, index, expected = _merkle_instance(3)
    siblings[1] += 1
    cs = ConstraintSystem()
    root, _ = _synthesize_path(cs, leaf, siblings, index)
    assert cs.is_satisfied() is None and root.value != expected


def test_merkle_path_length_mismatch() -> None:
    cs = ConstraintSystem()
    leaf = AllocatedNum.alloc(cs, "leaf", 1)
    with pytest.raises(ValueError, match="siblings"):
        verify_merkle_path(cs, leaf, [leaf], [], poseidon_hash2_gadget)


def test_merkle_with_a_linear_hasher() -> None:
    """The path logic alone, with a constraint-free hasher 2·left + right."""

    def hasher(cs: ConstraintSystem, left: Num, right: Num) -> Num:
        return Num(left.lc * 2 + right.lc, (2 * left.value + right.value) % R)

    cs = ConstraintSystem()
    leaf = AllocatedNum.alloc(cs, "leaf", 1)
    siblings = [AllocatedNum.alloc(cs, f"s {i}", 10 * (i + 1)) for i in range(2)]
    bits = [AllocatedBit.alloc(cs, "b0", 1), AllocatedBit.alloc(cs, "b1", 0)]
    root = verify_merkle_path(cs, leaf, siblings, bits, hasher)
    assert root.value == 2 * (2 * 10 + 1) + 20
    assert isinstance(root.lc, LinearCombination) and cs.is_satisfied() is None
