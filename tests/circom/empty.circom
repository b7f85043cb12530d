pragma circom 2.0.0;

// No constraint and no input: the proving system's smallest case (one row, the constant's; a
// snarkjs domain of 2 points).
template Nothing() {
    signal x;
}

component main = Nothing();
