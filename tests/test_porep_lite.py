"""porep-lite: shape, determinism, the sparse tree, and rejection of wrong witnesses or inputs."""

from __future__ import annotations

import pytest

from cuzk_core.circuits import CIRCUITS, PorepLite, circuit_from_spec, get_circuit
from cuzk_core.errors import CuzkError
from cuzk_core.field.constants import FR_MODULUS as R
from cuzk_core.gadgets.poseidon import poseidon_hash2
from cuzk_core.r1cs import ConstraintSystem, Variable


class TamperingCS(ConstraintSystem):
    """Adds 1 to the value (private or public) allocated under ``target``."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.hits = 0

    def _bump(self, name: str, value: int) -> int:
        hit = self.qualified_name(name) == self.target
        self.hits += hit
        return value + hit

    def alloc(self, name: str, value: int) -> Variable:
        return super().alloc(name, self._bump(name, value))

    def alloc_input(self, name: str, value: int) -> Variable:
        return super().alloc_input(name, self._bump(name, value))


def _synthesize(circuit: PorepLite, cs: ConstraintSystem | None = None) -> ConstraintSystem:
    cs = ConstraintSystem() if cs is None else cs
    circuit.synthesize(cs)
    return cs


@pytest.mark.parametrize(("challenges", "depth"), [(1, 1), (2, 8), (4, 12), (3, 32)])
def test_shape_and_satisfaction(challenges: int, depth: int) -> None:
    circuit = PorepLite(challenges=challenges, depth=depth, seed=5)
    cs = _synthesize(circuit)
    assert cs.num_constraints == challenges * (242 * depth + 2)
    assert cs.num_inputs == 1 + 1 + challenges
    assert cs.assignment()[1 : cs.num_inputs] == circuit.public_inputs()
    assert cs.is_satisfied() is None


def test_reported_sizes() -> None:
    assert _synthesize(PorepLite(2, 8)).num_constraints == 3876
    assert _synthesize(PorepLite(4, 12)).num_constraints == 11624


def test_matrices_satisfy_the_r1cs() -> None:
    cs = _synthesize(PorepLite(challenges=2, depth=3))
    m = cs.matrices()
    z = cs.assignment()
    az, bz, cz = m.a.dot(z), m.b.dot(z), m.c.dot(z)
    assert all(a * b % R == c for a, b, c in zip(az, bz, cz, strict=True))
    z[1] = (z[1] + 1) % R  # a different root
    az, bz, cz = m.a.dot(z), m.b.dot(z), m.c.dot(z)
    assert any(a * b % R != c for a, b, c in zip(az, bz, cz, strict=True))


def test_sparse_tree_equals_the_dense_tree() -> None:
    depth = 5
    circuit = PorepLite(challenges=6, depth=depth, seed=11)
    level = [circuit.leaf(i) for i in range(1 << depth)]
    tree = [level]
    while len(level) > 1:
        level = [poseidon_hash2(level[i], level[i + 1]) for i in range(0, len(level), 2)]
        tree.append(level)
    assert circuit.root() == tree[-1][0]
    for index in circuit.indices:
        assert circuit.path(index) == [tree[l][(index >> l) ^ 1] for l in range(depth)]
    assert circuit.leaf(circuit.indices[0]) != circuit.leaf(-1)


def test_determinism_and_seeds() -> None:
    a, b = PorepLite(3, 10, seed=1), PorepLite(3, 10, seed=1)
    assert a.public_inputs() == b.public_inputs()
    assert a.public_inputs() != PorepLite(3, 10, seed=2).public_inputs()
    assert all(0 <= i < 1 << 10 for i in a.indices)
    assert a.knobs() == {"challenges": 3, "depth": 10, "seed": 1}


def test_corrupted_leaf_value_fails_where_it_is_first_used() -> None:
    cs = TamperingCS("challenge 1/leaf")
    _synthesize(PorepLite(challenges=2, depth=6), cs)
    assert cs.hits == 1
    assert "'challenge 1/level 0/" in cs.is_satisfied()


def test_corrupted_sibling_value_fails_at_its_level() -> None:
    cs = TamperingCS("challenge 0/sibling 3")
    _synthesize(PorepLite(challenges=2, depth=6), cs)
    assert "'challenge 0/level 3/" in cs.is_satisfied()


def test_wrong_leaf_fails_at_the_root_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """A consistent witness for a leaf that is not in the committed tree."""
    circuit = PorepLite(challenges=2, depth=6)
    circuit.root()
    honest_leaf = circuit.leaf
    monkeypatch.setattr(circuit, "leaf", lambda index: honest_leaf(index) + 1)
    cs = _synthesize(circuit)
    assert cs.is_satisfied().endswith("'challenge 0/root' is not satisfied")


def test_wrong_public_index_fails() -> None:
    cs = TamperingCS("challenge 1 index")
    _synthesize(PorepLite(challenges=2, depth=6), cs)
    assert cs.hits == 1
    assert cs.is_satisfied().endswith("'challenge 1/bits/pack' is not satisfied")


def test_wrong_public_root_fails() -> None:
    cs = TamperingCS("root")
    _synthesize(PorepLite(challenges=2, depth=6), cs)
    assert cs.is_satisfied().endswith("'challenge 0/root' is not satisfied")


def test_proving_another_index_fails() -> None:
    """A witness for one leaf offered for a different public index (bits consistent with it)."""
    circuit = PorepLite(challenges=1, depth=6, seed=3)
    honest_root, honest_index = circuit.root(), circuit.indices[0]
    circuit.indices = (honest_index ^ 0b100,)
    cs = _synthesize(circuit)
    assert cs.assignment()[1:3] == [honest_root, honest_index ^ 0b100]
    assert cs.is_satisfied().endswith("'challenge 0/root' is not satisfied")


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"challenges": 0}, "challenges must be an integer 1..1048576"),
        ({"challenges": 1.5}, "challenges must be an integer 1..1048576"),
        ({"challenges": 10**100}, "challenges must be an integer 1..1048576"),
        ({"depth": 0}, "depth must be an integer 1..32"),
        ({"depth": 33}, "depth must be an integer 1..32"),
        ({"depth": True}, "depth must be an integer 1..32"),
        ({"seed": -1}, "seed must be an integer 0.."),
    ],
)
def test_knob_validation(knobs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PorepLite(**knobs)


def test_registry() -> None:
    assert CIRCUITS["porep-lite"] is PorepLite and PorepLite.name == "porep-lite"
    circuit = get_circuit("porep-lite", challenges=3, depth=4)
    assert isinstance(circuit, PorepLite) and circuit.knobs()["depth"] == 4
    with pytest.raises(ValueError, match="known circuits: porep-lite"):
        get_circuit("nope")
    with pytest.raises(TypeError):
        get_circuit("porep-lite", width=3)


def test_an_unknown_knob_is_named_with_the_allowed_ones():
    with pytest.raises(CuzkError) as unknown:
        circuit_from_spec({"circuit": "porep-lite", "challenges": 1, "x": 1}, "p/circuit.json")
    assert str(unknown.value) == (
        "p/circuit.json: circuit 'porep-lite': unknown knob 'x' (its knobs: challenges, depth, "
        "seed)"
    )
