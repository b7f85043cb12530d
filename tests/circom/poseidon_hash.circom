pragma circom 2.0.0;

// A hash: the Poseidon digest of two private field elements is the one public output.
include "circomlib/circuits/poseidon.circom";

template PoseidonHash() {
    signal input a;
    signal input b;
    signal output digest;

    component hasher = Poseidon(2);
    hasher.inputs[0] <== a;
    hasher.inputs[1] <== b;
    digest <== hasher.out;
}

component main = PoseidonHash();
