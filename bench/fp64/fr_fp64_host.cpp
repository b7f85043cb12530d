// fr_fp64.cuh built for the host (tests/test_fr_fp64.py): each input line holds two elements as
// ten hex 52-bit limbs; each output line, their product's five.
#include <cstdio>

#include "common.cuh"
#include "fr_fp64.cuh"

int main() {
    unsigned long long x[2 * fr_fp64::LIMBS];
    for (;;) {
        for (int i = 0; i < 2 * fr_fp64::LIMBS; i++)
            if (std::scanf("%llx", &x[i]) != 1) return 0;
        fr_fp64::fr52 a, b;
        for (int i = 0; i < fr_fp64::LIMBS; i++) {
            a.l[i] = double(x[i]);
            b.l[i] = double(x[fr_fp64::LIMBS + i]);
        }
        const fr_fp64::fr52 t = fr_fp64::mul(a, b);
        for (int i = 0; i < fr_fp64::LIMBS; i++)
            std::printf(i ? " %llx" : "%llx", (unsigned long long)t.l[i]);
        std::printf("\n");
    }
}
