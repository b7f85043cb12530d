// fp64_mont.cuh built for the host (tests/test_fp64_products.py): each input line holds a
// field's limb count n (5: Fr, 8: Fq) and two elements as 2n hex 52-bit limbs; each output
// line, their product's n.
#include <cstdio>

#include "common.cuh"
#include "fp64_mont.cuh"

template <class P>
bool product_line() {
    unsigned long long x[2 * P::LIMBS];
    for (int i = 0; i < 2 * P::LIMBS; i++)
        if (std::scanf("%llx", &x[i]) != 1) return false;
    fp64::element<P> a, b;
    for (int i = 0; i < P::LIMBS; i++) {
        a.l[i] = double(x[i]);
        b.l[i] = double(x[P::LIMBS + i]);
    }
    const fp64::element<P> t = fp64::mul(a, b);
    for (int i = 0; i < P::LIMBS; i++) std::printf(i ? " %llx" : "%llx", (unsigned long long)t.l[i]);
    std::printf("\n");
    return true;
}

int main() {
    int limbs = 0;
    while (std::scanf("%d", &limbs) == 1) {
        const bool read = limbs == fp64::fr_params::LIMBS ? product_line<fp64::fr_params>()
                                                          : product_line<fp64::fq_params>();
        if (!read) return 1;
    }
    return 0;
}
