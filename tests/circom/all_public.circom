pragma circom 2.0.0;

// No private signal at all: both inputs public, the product the output (a key with no L points).
template Product() {
    signal input a;
    signal input b;
    signal output c;
    c <== a * b;
}

component main {public [a, b]} = Product();
