// The quadratic extension F[u]/(u^2 + 1) over a Montgomery field: Fq2, where G2 lives.
#pragma once

#include "mont.cuh"

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

    // Karatsuba: three base-field products.
    CUZK_HD friend fp2_t operator*(const fp2_t& a, const fp2_t& b) {
        const F v0 = F::mul_call(a.c0, b.c0);
        const F v1 = F::mul_call(a.c1, b.c1);
        const F s = F::mul_call(a.c0 + a.c1, b.c0 + b.c1);
        return {v0 - v1, s - v0 - v1};
    }

    // Curve formulas' product and square: already made of called base-field products. (Lazy
    // reduction, three unreduced products and two reductions in one call, made G2 MSMs 17%
    // slower on the H200: bench/NOTES.md, round 11.)
    CUZK_HD static fp2_t point_mul(const fp2_t& a, const fp2_t& b) { return a * b; }
    CUZK_HD static fp2_t point_sqr(const fp2_t& a) { return a.sqr(); }

    // (c0 + c1)(c0 − c1) and 2·c0·c1: two base-field products.
    CUZK_HD fp2_t sqr() const {
        const F m = F::mul_call(c0, c1);
        return {F::mul_call(c0 + c1, c0 - c1), m.dbl()};
    }

    CUZK_HD fp2_t from_mont() const { return {c0.from_mont(), c1.from_mont()}; }
};
