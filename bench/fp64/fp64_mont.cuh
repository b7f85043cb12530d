// An experiment, not a kernel of the product (bench/NOTES.md, round 45): Montgomery products of
// BLS12-381's fields on the FP64 pipe, to measure whether a second multiplier beside IMAD pays.
// It does not on an H100: Fr 0.93×, Fq 0.76× the IMAD products' rates, 1.03× / 0.84× with both
// kinds interleaved in a thread.
//
// An element is x·2^(52n) mod p (< 2p) in n 52-bit limbs, each an exact integer held in a
// double (Fr: n = 5, Fq: n = 8). A limb product a·b (< 2^104) is split exactly by two FMAs
// rounding toward zero:
//   h = fma_rz(a, b, 2^104)           = 2^104 + k·2^52, k = floor(a·b / 2^52)
//   l = fma_rz(a, b, 2^104 + 2^52 − h) = 2^52 + (a·b mod 2^52)   (exact: no rounding)
// and the bit patterns of h and l are HI_BIAS + k and LO_BIAS + (a·b mod 2^52), so the columns
// add them as 64-bit integers. Both biases are multiples of 2^52: each column starts at minus
// the biases its parts will bring, which leaves its value mod 2^52 right at any time and its
// whole value right once its last part is in. Three FP64 operations and two integer adds a
// limb product; 2n² limb products (n² for a·b, n² for the reduction) a Montgomery product.
// Needs backends/kernels/common.cuh before it (the fixed-width types and CUZK_HD).
#pragma once

#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

namespace fp64 {

constexpr int BITS = 52;
constexpr uint64_t MASK = (1ull << BITS) - 1;
constexpr uint64_t HI_BIAS = 0x467ull << 52;  // the exponent field of 2^104
constexpr uint64_t LO_BIAS = 0x433ull << 52;  // the exponent field of 2^52
constexpr double TWO52 = 0x1p52;
constexpr double TWO104 = 0x1p104;
constexpr double TWO104_52 = 0x1p104 + 0x1p52;

struct fr_params {
    static constexpr int LIMBS = 5;
    static constexpr uint64_t NEG_INV = 0xffffeffffffffull;  // −r^−1 mod 2^52
    CUZK_HD static double modulus(int i) {
        const uint64_t r[LIMBS] = {0xfffff00000001ull, 0x2fffe5bfefffull, 0x9a1d80553bda4ull,
                                   0x7d483339d8080ull, 0x73eda753299dull};
        return double(r[i]);
    }
};

struct fq_params {
    static constexpr int LIMBS = 8;
    static constexpr uint64_t NEG_INV = 0x3fffcfffcfffdull;  // −q^−1 mod 2^52
    CUZK_HD static double modulus(int i) {
        const uint64_t q[LIMBS] = {0xeffffffffaaabull, 0xfeb153ffffb9full, 0x6b0f6241eabffull,
                                   0x12bf6730d2a0full, 0x764774b84f385ull, 0x1ba7b6434bacdull,
                                   0x1ea397fe69a4bull, 0x1a011ull};
        return double(q[i]);
    }
};

template <class P>
struct element {
    double l[P::LIMBS];
};

// Limb pairs (i, j) of n limbs with i + j = k.
CUZK_HD constexpr int pairs(int n, int k) {
    return k < 0 || k > 2 * (n - 1) ? 0 : (k < n ? k + 1 : 2 * n - 1 - k);
}

// Minus the biases column k receives: a low part of a·b and of m·p for each pair summing to k,
// a high part for each pair summing to k − 1.
CUZK_HD constexpr uint64_t column_start(int n, int k) {
    return 0ull - 2ull * (uint64_t(pairs(n, k)) * LO_BIAS + uint64_t(pairs(n, k - 1)) * HI_BIAS);
}

#if defined(__CUDA_ARCH__)
CUZK_HD double fma_rz(double a, double b, double c) { return __fma_rz(a, b, c); }
CUZK_HD uint64_t bits(double x) { return uint64_t(__double_as_longlong(x)); }
CUZK_HD double from_bits(uint64_t x) { return __longlong_as_double((long long)x); }
#else
// The host harness's fma_rz for this file's arguments: a, b and c exact integers with
// a·b + c in [0, 2^106), rounded toward zero to 53 bits.
inline double fma_rz(double a, double b, double c) {
    const unsigned __int128 exact =
        (unsigned __int128)((__int128)(uint64_t)a * (uint64_t)b + (__int128)c);
    int len = 0;
    for (unsigned __int128 v = exact; v; v >>= 1) len++;
    const int drop = len > 53 ? len - 53 : 0;
    return double((exact >> drop) << drop);
}
inline uint64_t bits(double x) {
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
}
inline double from_bits(uint64_t u) {
    double x;
    std::memcpy(&x, &u, 8);
    return x;
}
#endif

// x < 2^52 as a double: 2^52 + x by its bit pattern, less 2^52.
CUZK_HD double to_double(uint64_t x) { return from_bits(x | LO_BIAS) - TWO52; }

CUZK_HD void mul_add(uint64_t& low_column, uint64_t& high_column, double a, double b) {
    const double h = fma_rz(a, b, TWO104);
    const double l = fma_rz(a, b, TWO104_52 - h);
    high_column += bits(h);
    low_column += bits(l);
}

// a·b·2^(−52n) mod p, below 2p for a, b below 2p: the result is (a·b + m·p)/2^(52n), below
// p + 4p²/2^(52n) < 2p as 4p < 2^(52n) for both fields.
template <class P>
CUZK_HD element<P> mul(const element<P>& a, const element<P>& b) {
    constexpr int n = P::LIMBS;
    uint64_t c[2 * n];
#pragma unroll
    for (int k = 0; k < 2 * n; k++) c[k] = column_start(n, k);
#pragma unroll
    for (int i = 0; i < n; i++)
#pragma unroll
        for (int j = 0; j < n; j++) mul_add(c[i + j], c[i + j + 1], a.l[i], b.l[j]);
#pragma unroll
    for (int i = 0; i < n; i++) {
        const double m = to_double(((c[i] & MASK) * P::NEG_INV) & MASK);
#pragma unroll
        for (int j = 0; j < n; j++) mul_add(c[i + j], c[i + j + 1], m, P::modulus(j));
        c[i + 1] += c[i] >> BITS;  // column i is now a multiple of 2^52, all its parts in
    }
    element<P> t;
#pragma unroll
    for (int k = n; k < 2 * n - 1; k++) {
        t.l[k - n] = to_double(c[k] & MASK);
        c[k + 1] += c[k] >> BITS;
    }
    t.l[n - 1] = to_double(c[2 * n - 1]);  // below 2^52: the result is below 2p
    return t;
}

}  // namespace fp64
