"""The circuits the checks prove and compile: a tiny one of squarings and bits, random ones
built from every gadget, one whose rows run past a warp, and porep-lite at small sizes.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

from cuzk_core.conformance.inputs import (
    R,
)
from cuzk_core.r1cs import ConstraintSystem, LinearCombination

# ---------------------------------------------------------------- the tiny circuit


class TinyCircuit:
    """Squarings of ``x`` with boolean bits beside them, and one public output."""

    name = "conformance-tiny"

    def __init__(self, x: int, steps: int) -> None:
        self.x, self.steps = x, steps

    def knobs(self) -> dict[str, int]:
        """The circuit's size knob."""
        return {"steps": self.steps}

    def public_inputs(self) -> list[int]:
        """The last square."""
        v = self.x
        for i in range(self.steps):
            v = (v * v + i) % R
        return [v]

    def synthesize(self, cs: ConstraintSystem) -> None:
        """``v_{i+1} = v_i² + i`` and ``bit_i·(1 − bit_i) = 0``, then ``out = v_steps``."""
        v = self.x
        var = cs.alloc("x", v)
        for i in range(self.steps):
            bit = cs.alloc(f"bit{i}", i % 2)
            cs.enforce(f"boolean{i}", bit, 1 - bit, LinearCombination())
            v = (v * v + i) % R
            nxt = cs.alloc(f"v{i}", v)
            cs.enforce(f"square{i}", var, var, nxt - i)
            var = nxt
        out = cs.alloc_input("out", v)
        cs.enforce("output", var, cs.one, out)


class GadgetCircuit:
    """A random circuit built from every gadget: ``structure`` fixes which gadgets run on which
    operands (the shape), ``values`` the inputs and hints (the instance)."""

    name = "conformance-gadgets"

    def __init__(self, structure: int, values: int, steps: int = 12) -> None:
        self.structure, self.values, self.steps = structure, values, steps

    def knobs(self) -> dict[str, int]:
        """Structure, values and length."""
        return {"structure": self.structure, "values": self.values, "steps": self.steps}

    def shape(self) -> dict[str, int]:
        """The values do not change the constraints."""
        return {"structure": self.structure, "steps": self.steps}

    def public_inputs(self) -> list[int]:
        """Two inputs drawn from the value seed."""
        rng = random.Random(f"values {self.values}")
        return [rng.choice([0, 1, R - 1, rng.randrange(R)]) for _ in range(2)]

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Inputs and hints, then ``steps`` random gadget calls on what came before."""
        from cuzk_core.gadgets.bits import to_bits_le
        from cuzk_core.gadgets.boolean import AllocatedBit
        from cuzk_core.gadgets.merkle import verify_merkle_path
        from cuzk_core.gadgets.num import (
            AllocatedNum,
            Num,
            conditional_swap,
            enforce_equal,
            select,
        )
        from cuzk_core.gadgets.poseidon import poseidon_hash2_gadget

        shape, vals = random.Random(f"structure {self.structure}"), random.Random(f"v{self.values}")
        nums: list[AllocatedNum | Num] = [
            AllocatedNum.alloc_input(cs, f"in {i}", v) for i, v in enumerate(self.public_inputs())
        ]
        nums += [
            AllocatedNum.alloc(cs, f"hint {i}", vals.choice([0, 1, R - 1, vals.randrange(R)]))
            for i in range(3)
        ]
        bits = [AllocatedBit.alloc(cs, f"hint bit {i}", vals.randrange(2)) for i in range(2)]
        for step in range(self.steps):
            pick = shape.choice
            with cs.namespace(f"step {step}"):
                op = pick(
                    ("mul", "square", "and", "xor", "swap", "select", "bits", "hash", "path", "sum")
                )
                x, y, bit = pick(nums), pick(nums), pick(bits)
                if op == "mul":
                    nums.append(pick([n for n in nums if isinstance(n, AllocatedNum)]).mul(cs, y))
                elif op == "square":
                    nums.append(pick([n for n in nums if isinstance(n, AllocatedNum)]).square(cs))
                elif op == "and":
                    bits.append(bit.and_(cs, pick(bits)))
                elif op == "xor":
                    bits.append(bit.xor(cs, pick(bits)))
                elif op == "swap":
                    nums.extend(conditional_swap(cs, x, y, bit))
                elif op == "select":
                    nums.append(select(cs, bit, x, y))
                elif op == "bits":  # a value too wide for n_bits gets its low bits
                    bits.extend(to_bits_le(cs, x, pick((1, 2, 8, 254))))
                elif op == "hash":
                    nums.append(poseidon_hash2_gadget(cs, x, y))
                elif op == "path":
                    siblings = [
                        AllocatedNum.alloc(cs, f"sibling {i}", vals.randrange(R)) for i in range(2)
                    ]
                    nums.append(
                        verify_merkle_path(
                            cs, x, siblings, [bit, pick(bits)], poseidon_hash2_gadget
                        )
                    )
                else:
                    nums.append(Num(x.lc + y.lc + 7, (x.value + y.value + 7) % R))
        enforce_equal(cs, "last", nums[-1], nums[-1])


class WideRowsCircuit:
    """Rows past a warp in every slot: 254-bit decompositions (bits up to 253) of a 40-term
    and of a 255-term combination, a solved value whose C row has 61 entries, in ``parts``
    independent copies; ``values`` draws the hints (the instance), not the constraints."""

    name = "conformance-wide-rows"

    def __init__(self, parts: int, values: int = 0) -> None:
        self.parts, self.values = parts, values

    def knobs(self) -> dict[str, int]:
        """Copies and the value seed."""
        return {"parts": self.parts, "values": self.values}

    def shape(self) -> dict[str, int]:
        """The values do not change the constraints."""
        return {"parts": self.parts}

    def public_inputs(self) -> list[int]:
        """Each copy's solved value."""
        return [self._solved(p) for p in range(self.parts)]

    def _hints(self, part: int) -> list[int]:
        return [pow(7 + part + 101 * self.values, 3 * k + 1, R) for k in range(40)]

    def _solved(self, part: int) -> int:
        hints = self._hints(part)
        combination = sum((k + 1) * h for k, h in enumerate(hints)) % R
        bits = [(combination >> i) & 1 for i in range(254)]
        return (hints[0] * hints[1] - sum((i + 3) * b for i, b in enumerate(bits[:60]))) % R

    def synthesize(self, cs: ConstraintSystem) -> None:
        """Per copy: hints, their combination's bits, the solved value, its output, and the
        bits of the packed bits plus the solved value."""
        from cuzk_core.gadgets.bits import pack_bits, to_bits_le
        from cuzk_core.gadgets.num import AllocatedNum, Num

        outputs = [cs.alloc_input(f"out {p}", v) for p, v in enumerate(self.public_inputs())]
        for part, out in enumerate(outputs):
            with cs.namespace(f"part {part}"):
                hints = [
                    AllocatedNum.alloc(cs, f"h{k}", h) for k, h in enumerate(self._hints(part))
                ]
                terms = LinearCombination()
                for k, h in enumerate(hints):
                    terms = terms + h.lc * (k + 1)
                value = sum((k + 1) * h.value for k, h in enumerate(hints)) % R
                bits = to_bits_le(cs, Num(terms, value), 254)
                solved = self._solved(part)
                y = cs.alloc_solved("y", solved)
                row = LinearCombination({y: 1})
                for i, bit in enumerate(bits[:60]):
                    row = row + bit.lc * (i + 3)
                cs.enforce("y", hints[0].lc, hints[1].lc, row)
                cs.enforce("out", y, cs.one, out)
                packed = pack_bits(bits)
                with cs.namespace("again"):
                    to_bits_le(cs, Num(packed.lc + y, (packed.value + solved) % R), 254)


# ---------------------------------------------------------------- compiled circuits


def porep_lite(challenges: int, depth: int) -> Callable[[int], Any]:
    from cuzk_core.circuits import PorepLite

    return lambda seed: PorepLite(challenges=challenges, depth=depth, seed=seed)


COMPILED_CIRCUITS: dict[str, Callable[[random.Random], Callable[[int], Any]]] = {
    "porep-lite-1x1": lambda rng: porep_lite(1, 1),
    "porep-lite-2x3": lambda rng: porep_lite(2, 3),
    "porep-lite-5x1-copied": lambda rng: porep_lite(5, 1),  # 3 of its 5 paths are copies
    "tiny-all-hints": lambda rng: lambda seed: TinyCircuit(seed * 7919 % R, steps=4),
    "random-gadgets": lambda rng: functools.partial(GadgetCircuit, rng.randrange(1 << 30)),
    "wide-rows-2": lambda rng: functools.partial(WideRowsCircuit, 2),  # rows past a warp
}
"""Circuits the compiled path is checked on, by case: each maps a value seed to an instance of
one shape (the random gadget circuits draw their structure from the check's rng)."""
