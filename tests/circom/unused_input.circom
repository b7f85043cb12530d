pragma circom 2.0.0;

// A private input no constraint reads: circom's optimizer drops it from the wires but still
// counts it in the header's nPrvIn ("private inputs: 2 (1 belong to witness)").
template Product() {
    signal input a;
    signal input spare;
    signal output c;
    c <== a * a;
}

component main = Product();
