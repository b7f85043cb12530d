pragma circom 2.0.0;

// A comparator with range checks: both inputs must fit in 32 bits (Num2Bits keeps a linear
// constraint per check, a row whose A and B are empty) and the public bound must exceed the value.
include "circomlib/circuits/comparators.circom";
include "circomlib/circuits/bitify.circom";

template RangeCompare(bits) {
    signal input value;
    signal input bound;
    signal output isLess;

    component valueBits = Num2Bits(bits);
    valueBits.in <== value;
    component boundBits = Num2Bits(bits);
    boundBits.in <== bound;

    component less = LessThan(bits);
    less.in[0] <== value;
    less.in[1] <== bound;
    isLess <== less.out;
    isLess === 1;
}

component main {public [bound]} = RangeCompare(32);
