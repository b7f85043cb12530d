// Field inversion by Pornin's optimized binary GCD ("Optimized Binary GCD for Modular
// Inversion", IACR eprint 2020/972, algorithm 2), for the batch-affine bucket sums' inversion a
// step, key generation's fixed-base multiples and a resident key's window tables.
//
// Why not Fermat's x^(p−2): ~380 squarings and ~190 products of Fq are ~570 products on the
// multiply pipe, where the binary GCD's 25 rounds take ~120 wide multiplies each and otherwise
// 64-bit adds, shifts and selects on the integer pipe (bench/NOTES.md, round 19).
//
// The GCD runs on (a, b) = (y, p) with (u, v) = (1, 0) keeping a ≡ u·y and b ≡ v·y (mod p). A
// round takes 31 binary-GCD steps on 64-bit approximations of a and b (their low 31 bits and
// the top 33 bits of the wider), as the 2x2 matrix of factors those steps make, then applies it
// to the full a, b (exactly divisible by 2^31) and to u, v (divided by 2^31 modulo p, as in a
// Montgomery reduction). After ⌈(2·bits(p) − 1)/31⌉ rounds b = gcd = 1 and v = 1/y; for y = 0,
// b stays p and v = 0. Rounds past the end leave everything as it is, so the count is a bound
// with no data-dependent exit: every thread runs the same instructions.
#pragma once

#include "fp2.cuh"
#include "mont.cuh"

namespace bingcd {

constexpr int STEPS = 31;  // binary-GCD steps a round; |f| + |g| ≤ 2^31 for each factor pair

CUZK_HD uint32_t leading_zeros(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __clz(x);
#else
    return x == 0 ? 32u : (uint32_t)__builtin_clz(x);
#endif
}

// The 64-bit approximations of a and b: the numbers themselves when both fit 64 bits, else
// their low 31 bits under the top 33 bits below the wider one's length n. Words are picked by
// compare and select, not by index, so they stay in registers.
template <int N>
CUZK_HD void approximations(const uint32_t* a, const uint32_t* b, uint64_t& a_bar,
                            uint64_t& b_bar) {
    uint32_t top = 0, top_word = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t either = a[i] | b[i];
        top = either != 0 ? (uint32_t)i : top;
        top_word = either != 0 ? either : top_word;
    }
    const uint32_t n = 32 * top + 32 - leading_zeros(top_word);
    if (n <= 64) {
        a_bar = a[0] | (uint64_t)a[1] << 32;
        b_bar = b[0] | (uint64_t)b[1] << 32;
        return;
    }
    const uint32_t start = n - 33, word = start / 32, shift = start % 32;
    uint64_t a_pair = 0, b_pair = 0;  // words word + 1 : word, where the 33 bits lie
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
        if ((uint32_t)i == word) {
            a_pair = a[i] | (uint64_t)a[i + 1] << 32;
            b_pair = b[i] | (uint64_t)b[i + 1] << 32;
        }
    }
    const uint64_t top33 = (1ull << 33) - 1;
    a_bar = (a[0] & 0x7fffffffu) | ((a_pair >> shift) & top33) << 31;
    b_bar = (b[0] & 0x7fffffffu) | ((b_pair >> shift) & top33) << 31;
}

// One round's factors: STEPS binary-GCD steps on the approximations, as
// (a', b')·2^STEPS = (f0·a + g0·b, f1·a + g1·b).
CUZK_HD void round_factors(uint64_t a_bar, uint64_t b_bar, int64_t& f0, int64_t& g0,
                           int64_t& f1, int64_t& g1) {
    f0 = 1, g0 = 0, f1 = 0, g1 = 1;
#pragma unroll
    for (int j = 0; j < STEPS; j++) {
        const bool odd = (a_bar & 1) != 0;
        const bool swap = odd && a_bar < b_bar;
        const uint64_t a_new = swap ? b_bar : a_bar, b_new = swap ? a_bar : b_bar;
        const int64_t f0_new = swap ? f1 : f0, f1_new = swap ? f0 : f1;
        const int64_t g0_new = swap ? g1 : g0, g1_new = swap ? g0 : g1;
        a_bar = odd ? a_new - b_new : a_new;
        b_bar = b_new;
        f0 = odd ? f0_new - f1_new : f0_new;
        g0 = odd ? g0_new - g1_new : g0_new;
        a_bar >>= 1;
        f1 = f1_new * 2;
        g1 = g1_new * 2;
    }
}

// t[0 .. N+2) = x·f + y·g in two's complement, for |f| + |g| ≤ 2^31: each word's terms and
// carry stay below 2^63 in magnitude.
template <int N>
CUZK_HD void combine(const uint32_t* x, int64_t f, const uint32_t* y, int64_t g, uint32_t* t) {
    const uint32_t f_abs = (uint32_t)(f < 0 ? -f : f), g_abs = (uint32_t)(g < 0 ? -g : g);
    int64_t carry = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int64_t xf = (int64_t)((uint64_t)x[i] * f_abs);
        const int64_t yg = (int64_t)((uint64_t)y[i] * g_abs);
        const int64_t s = carry + (f < 0 ? -xf : xf) + (g < 0 ? -yg : yg);
        t[i] = (uint32_t)s;
        carry = s >> 32;
    }
    t[N] = (uint32_t)carry;
    t[N + 1] = (uint32_t)(carry >> 32);
}

// t (N + 2 words, two's complement, a multiple of 2^STEPS) shifted right by STEPS, as its
// magnitude in N words (it fits) and whether it was negative.
template <int N>
CUZK_HD bool shifted_magnitude(const uint32_t* t, uint32_t* out) {
    const bool negative = (t[N + 1] >> 31) != 0;
    const uint32_t flip = negative ? ~0u : 0u;
    uint32_t carry = negative ? 1u : 0u;  // −t = ~t + 1
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t lo = t[i] >> STEPS | t[i + 1] << (32 - STEPS);
        const uint64_t s = (uint64_t)(lo ^ flip) + carry;
        out[i] = (uint32_t)s;
        carry = (uint32_t)(s >> 32);
    }
    return negative;
}

// (x·f + y·g)/2^STEPS mod p into out (N words, in [0, p)), for x, y in [0, p): a Montgomery
// division (k·p added so the low STEPS bits vanish, k < 2^STEPS), then one correction: the
// quotient lies in (−p, 2p) as |x·f + y·g| ≤ 2^STEPS·p.
template <class P>
CUZK_HD void combine_mod(const uint32_t* x, int64_t f, const uint32_t* y, int64_t g,
                         uint32_t* out) {
    constexpr int N = P::N;
    uint32_t t[N + 2];
    combine<N>(x, f, y, g, t);
    const uint32_t k = (t[0] * P::m0) & ((1u << STEPS) - 1);  // m0 = −p^−1 mod 2^32
    uint64_t carry = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint64_t s = (uint64_t)P::p(i) * k + t[i] + carry;
        t[i] = (uint32_t)s;
        carry = s >> 32;
    }
    const uint64_t s = (uint64_t)t[N] + carry;
    t[N] = (uint32_t)s;
    t[N + 1] += (uint32_t)(s >> 32);
    uint32_t q[N + 1];  // the quotient, N + 1 words in two's complement
#pragma unroll
    for (int i = 0; i <= N; i++) q[i] = t[i] >> STEPS | t[i + 1] << (32 - STEPS);
    const bool negative = (q[N] >> 31) != 0;
    uint32_t plus[N], minus[N];  // q + p and q − p
    uint64_t add_carry = 0;
    int64_t borrow = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint64_t sum = (uint64_t)q[i] + P::p(i) + add_carry;
        plus[i] = (uint32_t)sum;
        add_carry = sum >> 32;
        const int64_t diff = (int64_t)q[i] - P::p(i) + borrow;
        minus[i] = (uint32_t)diff;
        borrow = diff >> 32;  // 0 or −1
    }
    // For q ≥ 0 (then q < 2p < 2^(32N): q[N] = 0), q ≥ p when q − p does not borrow out.
    const bool at_least_p = (int64_t)q[N] + borrow >= 0;
#pragma unroll
    for (int i = 0; i < N; i++) out[i] = negative ? plus[i] : at_least_p ? minus[i] : q[i];
}

}  // namespace bingcd

// 1/x for x ≠ 0 (and 0 for x = 0), in Montgomery form: the GCD inverts the stored word value
// X = x·R, and x^−1·R = X^−1·R², two products by R² mod p.
template <class P>
CUZK_HD mont_t<P> field_inverse(const mont_t<P>& x) {
    constexpr int N = P::N;
    uint32_t a[N], b[N], u[N], v[N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        a[i] = x.v[i];
        b[i] = P::p(i);
        u[i] = i == 0 ? 1u : 0u;
        v[i] = 0;
    }
    const int bits = 32 * N - (int)bingcd::leading_zeros(P::p(N - 1));
    const int rounds = (2 * bits - 1 + bingcd::STEPS - 1) / bingcd::STEPS;
#pragma unroll 1
    for (int round = 0; round < rounds; round++) {
        uint64_t a_bar, b_bar;
        bingcd::approximations<N>(a, b, a_bar, b_bar);
        int64_t f0, g0, f1, g1;
        bingcd::round_factors(a_bar, b_bar, f0, g0, f1, g1);
        uint32_t t[N + 2];
        bingcd::combine<N>(a, f0, b, g0, t);
        uint32_t a_next[N];
        if (bingcd::shifted_magnitude<N>(t, a_next)) f0 = -f0, g0 = -g0;
        bingcd::combine<N>(a, f1, b, g1, t);
        if (bingcd::shifted_magnitude<N>(t, b)) f1 = -f1, g1 = -g1;
        uint32_t u_next[N];
        bingcd::combine_mod<P>(u, f0, v, g0, u_next);
        bingcd::combine_mod<P>(u, f1, v, g1, v);
#pragma unroll
        for (int i = 0; i < N; i++) a[i] = a_next[i], u[i] = u_next[i];
    }
    mont_t<P> r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = v[i];
    return r * mont_t<P>::r2() * mont_t<P>::r2();
}

// (c0 + c1·u)^−1 = (c0 − c1·u)/(c0² + c1²), as u² = −1: one inversion in the base field.
template <class F>
CUZK_HD fp2_t<F> field_inverse(const fp2_t<F>& a) {
    const F t = field_inverse(a.c0.sqr() + a.c1.sqr());
    return {a.c0 * t, -(a.c1 * t)};
}
