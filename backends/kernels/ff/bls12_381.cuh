// The two BLS12-381 prime fields as Montgomery types: Fr (scalars, 255 bits, 8 limbs) and
// Fq (coordinates, 381 bits, 12 limbs). Constants are little-endian 32-bit limbs of p,
// R mod p, R^2 mod p with R = 2^(32N), and m0 = -p^-1 mod 2^32.
#pragma once

#include "mont.cuh"

#if defined(__CUDA_ARCH__)
// Fr's p and m0 for the Montgomery reduction, read from constant memory on the device: seen as
// immediates, its limbs 1 and 2^32 − 1 (and m0 = 2^32 − 1) lead ptxas to split the reduction's
// fused 64-bit multiply-adds into narrow pairs (SASS of an Fr product: 368 → 320 instructions).
__constant__ uint32_t cuzk_fr_reduction[9] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                              0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753,
                                              0xffffffff};
#endif

struct fr_params {
    static constexpr int N = 8;
    static constexpr uint32_t m0 = 0xffffffffu;
    CUZK_HD static uint32_t p(int i) {
        const uint32_t v[N] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                               0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return v[i];
    }
    CUZK_HD static uint32_t one(int i) {
        const uint32_t v[N] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                               0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return v[i];
    }
    CUZK_HD static uint32_t r2(int i) {
        const uint32_t v[N] = {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb,
                               0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9};
        return v[i];
    }
#if defined(__CUDA_ARCH__)
    __device__ static uint32_t reduction_p(int i) { return cuzk_fr_reduction[i]; }
    __device__ static uint32_t reduction_m0() { return cuzk_fr_reduction[N]; }
#else
    static uint32_t reduction_p(int i) { return p(i); }
    static uint32_t reduction_m0() { return m0; }
#endif
};

struct fq_params {
    static constexpr int N = 12;
    static constexpr uint32_t m0 = 0xfffcfffdu;
    CUZK_HD static uint32_t p(int i) {
        const uint32_t v[N] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                               0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                               0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return v[i];
    }
    CUZK_HD static uint32_t one(int i) {
        const uint32_t v[N] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                               0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                               0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return v[i];
    }
    CUZK_HD static uint32_t r2(int i) {
        const uint32_t v[N] = {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6,
                               0x4c95b6d5, 0x8de5476c, 0x939d83c0, 0x67eb88a9,
                               0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5};
        return v[i];
    }
    CUZK_HD static uint32_t reduction_p(int i) { return p(i); }
    CUZK_HD static uint32_t reduction_m0() { return m0; }
};

typedef mont_t<fr_params> fr_t;
typedef mont_t<fq_params> fq_t;
