// The quadratic extension F[u]/(u^2 + 1) over a Montgomery field: Fq2, where G2 lives.
#pragma once

#include "mont.cuh"

#ifndef CUZK_FP2_LAZY
// A/B (bench/NOTES.md, round 11): Fq2 products with lazy reduction (1) or three reduced ones (0).
#define CUZK_FP2_LAZY 1
#endif

template <class F>
struct fp2_t {
    static constexpr bool point_calls = true;  // see xyzz_t::accumulate
    F c0, c1;

    CUZK_HD static fp2_t zero() { return {F::zero(), F::zero()}; }
    CUZK_HD static fp2_t one() { return {F::one(), F::zero()}; }

    CUZK_HD bool is_zero() const { return c0.is_zero() & c1.is_zero(); }
    CUZK_HD bool operator==(const fp2_t& o) const { return (c0 == o.c0) & (c1 == o.c1); }

    CUZK_HD friend fp2_t operator+(const fp2_t& a, const fp2_t& b) {
        return {a.c0 + b.c0, a.c1 + b.c1};
    }
    CUZK_HD friend fp2_t operator-(const fp2_t& a, const fp2_t& b) {
        return {a.c0 - b.c0, a.c1 - b.c1};
    }
    CUZK_HD fp2_t operator-() const { return {-c0, -c1}; }
    CUZK_HD fp2_t dbl() const { return {c0.dbl(), c1.dbl()}; }

    // Karatsuba with lazy reduction: the three base-field products unreduced (2N words each),
    // combined as c0 = a0·b0 − a1·b1 (plus p·R if negative) and c1 = (a0 + a1)(b0 + b1) − a0·b0 −
    // a1·b1 (the sums unreduced, so that c1 is exactly a0·b1 + a1·b0), then two Montgomery
    // reductions instead of three: both below p·R (4p < R), as a reduction needs. A call:
    // inlined, its ~1,500 instructions would be copied into every formula.
    CUZK_HD_NOINLINE static fp2_t mul_call(fp2_t a, fp2_t b) {
#if !CUZK_FP2_LAZY
        const F v0 = F::mul_call(a.c0, b.c0);
        const F v1 = F::mul_call(a.c1, b.c1);
        const F s = F::mul_call(a.c0 + a.c1, b.c0 + b.c1);
        return {v0 - v1, s - v0 - v1};
#else
        constexpr int W = 2 * F::N;
        // In this order (c0 reduced before the third product) fewer words are live at once.
        const F sa = F::add_unreduced(a.c0, a.c1), sb = F::add_unreduced(b.c0, b.c1);
        uint32_t v0[W], v1[W], t[W];
        F::mul_wide(a.c0, b.c0, v0);
        F::mul_wide(a.c1, b.c1, v1);
        F::add_wide(t, v0, v1);
        F::add_p_high(v0, F::sub_wide(v0, v1));
        const F c0 = F::redc_wide(v0);
        F::mul_wide(sa, sb, v1);
        F::sub_wide(v1, t);
        return {c0, F::redc_wide(v1)};
#endif
    }

    CUZK_HD friend fp2_t operator*(const fp2_t& a, const fp2_t& b) { return mul_call(a, b); }

    // Curve formulas' product and square.
    CUZK_HD static fp2_t point_mul(const fp2_t& a, const fp2_t& b) { return mul_call(a, b); }
    CUZK_HD static fp2_t point_sqr(const fp2_t& a) { return a.sqr(); }

    // (c0 + c1)(c0 − c1) and 2·c0·c1: two base-field products.
    CUZK_HD fp2_t sqr() const {
        const F m = F::mul_call(c0, c1);
        return {F::mul_call(c0 + c1, c0 - c1), m.dbl()};
    }

    CUZK_HD fp2_t from_mont() const { return {c0.from_mont(), c1.from_mont()}; }
};
