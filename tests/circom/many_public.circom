pragma circom 2.0.0;

// Many public inputs: a public vector, a private vector, and their dot product as the output.
template DotProduct(n) {
    signal input xs[n];
    signal input ws[n];
    signal output dot;

    signal partial[n];
    partial[0] <== xs[0] * ws[0];
    for (var i = 1; i < n; i++) {
        partial[i] <== partial[i - 1] + xs[i] * ws[i];
    }
    dot <== partial[n - 1];
}

component main {public [xs]} = DotProduct(40);
