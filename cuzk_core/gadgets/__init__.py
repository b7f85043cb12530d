"""Circuit gadgets over the constraint system: booleans, numbers, bits, Poseidon, Merkle paths."""
