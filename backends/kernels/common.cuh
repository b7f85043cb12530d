// Shared by every cuzk kernel: fixed-width types, the host/device qualifier, and the carry-chain
// primitives the field arithmetic is written in. On the device each primitive is one PTX
// instruction; on the host the same calls are emulated with an explicit carry flag, so the
// exact instruction sequence of the field code can be tested with an ordinary C++ compiler.
#pragma once

#if defined(__CUDACC_RTC__)
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
#else
#include <cstdint>
#endif

#if defined(__CUDACC__)
#define CUZK_HD __host__ __device__ __forceinline__
#define CUZK_HD_NOINLINE __host__ __device__ __noinline__
#else
#define CUZK_HD inline
#define CUZK_HD_NOINLINE inline
#endif

#if !defined(__CUDA_ARCH__)
// The emulated carry flag (CC.CF in PTX terms) of the host build.
inline thread_local uint32_t cuzk_host_carry = 0;
#endif

// add.cc: a + b, carry out.
CUZK_HD uint32_t add_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    uint64_t s = (uint64_t)a + b;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// addc.cc: a + b + carry, carry out.
CUZK_HD uint32_t addc_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    uint64_t s = (uint64_t)a + b + cuzk_host_carry;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// addc: a + b + carry, carry dropped.
CUZK_HD uint32_t addc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (uint32_t)((uint64_t)a + b + cuzk_host_carry);
#endif
}

// sub.cc: a - b, borrow out.
CUZK_HD uint32_t sub_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    uint64_t d = (uint64_t)a - b;
    cuzk_host_carry = (uint32_t)(d >> 63);
    return (uint32_t)d;
#endif
}

// subc.cc: a - b - borrow, borrow out.
CUZK_HD uint32_t subc_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    uint64_t d = (uint64_t)a - b - cuzk_host_carry;
    cuzk_host_carry = (uint32_t)(d >> 63);
    return (uint32_t)d;
#endif
}

// subc: a - b - borrow, borrow dropped (subc(0, 0) turns a borrow into an all-ones mask).
CUZK_HD uint32_t subc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (uint32_t)((uint64_t)a - b - cuzk_host_carry);
#endif
}

// mad.lo.cc: lo(a*b) + c, carry out.
CUZK_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// madc.lo.cc: lo(a*b) + c + carry, carry out.
CUZK_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    uint64_t s = (uint64_t)(uint32_t)((uint64_t)a * b) + c + cuzk_host_carry;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// mad.hi.cc: hi(a*b) + c, carry out.
CUZK_HD uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    uint64_t s = (((uint64_t)a * b) >> 32) + c;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// madc.hi.cc: hi(a*b) + c + carry, carry out.
CUZK_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    uint64_t s = (((uint64_t)a * b) >> 32) + c + cuzk_host_carry;
    cuzk_host_carry = (uint32_t)(s >> 32);
    return (uint32_t)s;
#endif
}

// madc.hi: hi(a*b) + c + carry, carry dropped.
CUZK_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#else
    return (uint32_t)((((uint64_t)a * b) >> 32) + c + cuzk_host_carry);
#endif
}
