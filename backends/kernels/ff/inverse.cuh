// Field inversion by Fermat's little theorem, for work off the per-proof paths: the fixed-base
// multiples of key generation and a resident key's window tables.
#pragma once

#include "fp2.cuh"
#include "mont.cuh"

// x^(p−2) = x^−1 for x ≠ 0 (and 0 for x = 0), by left-to-right square-and-multiply over the bits
// of p − 2. The exponent is the same in every thread, so the branch never diverges. The loops
// stay rolled: unrolled, 380 squarings and ~190 products would be ~10^5 instructions.
template <class P>
CUZK_HD mont_t<P> field_inverse(const mont_t<P>& x) {
    uint32_t e[P::N];
    uint32_t borrow = 2;  // e = p − 2, limb by limb
#pragma unroll
    for (int i = 0; i < P::N; i++) {
        const uint32_t limb = P::p(i);
        e[i] = limb - borrow;
        borrow = limb < borrow ? 1u : 0u;
    }
    mont_t<P> r = mont_t<P>::one();
#pragma unroll 1
    for (int i = P::N - 1; i >= 0; i--) {
        const uint32_t word = e[i];
#pragma unroll 1
        for (int b = 31; b >= 0; b--) {
            r = r.sqr();
            if ((word >> b) & 1u) r = r * x;
        }
    }
    return r;
}

// (c0 + c1·u)^−1 = (c0 − c1·u)/(c0² + c1²), as u² = −1: one inversion in the base field.
template <class F>
CUZK_HD fp2_t<F> field_inverse(const fp2_t<F>& a) {
    const F t = field_inverse(a.c0.sqr() + a.c1.sqr());
    return {a.c0 * t, -(a.c1 * t)};
}
