/* Montgomery arithmetic for BLS12-381: Fq (6 limbs), Fr (4 limbs) and Fq2 = Fq[u]/(u^2 + 1).
 *
 * Limbs are little-endian uint64. Every function returns fully reduced values (below the modulus),
 * so equality and zero tests compare limbs. Multiplication is CIOS with the "no-carry" shortcut,
 * valid because both moduli leave the top bit of their top limb clear.
 */
#ifndef CUZK_FASTCPU_FIELD_H
#define CUZK_FASTCPU_FIELD_H

#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;
#define INLINE static inline __attribute__((always_inline))

#define FQ_LIMBS 6
#define FR_LIMBS 4

typedef struct { uint64_t l[FQ_LIMBS]; } fq;
typedef struct { uint64_t l[FR_LIMBS]; } fr;
typedef struct { fq c0, c1; } fq2;

static const uint64_t FQ_P[FQ_LIMBS] = {
    0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
    0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static const uint64_t FQ_PINV = 0x89f3fffcfffcfffdULL; /* -p^-1 mod 2^64 */
static const fq FQ_R2 = {{0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                          0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL}};
static const fq FQ_ONE = {{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                           0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}};

static const uint64_t FR_P[FR_LIMBS] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                        0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
static const uint64_t FR_PINV = 0xfffffffeffffffffULL;
static const fr FR_R2 = {{0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL,
                          0x0748d9d99f59ff11ULL}};
static const fr FR_ONE = {{0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL,
                           0x1824b159acc5056fULL}};

/* ---------------------------------------------------------------- generic n-limb primitives */

/* r = t - p when t >= p, else t (for t < 2p) */
INLINE void mp_reduce_once(uint64_t *r, const uint64_t *t, const uint64_t *p, int n) {
    uint64_t d[FQ_LIMBS], borrow = 0;
    for (int j = 0; j < n; j++) {
        u128 s = (u128)t[j] - p[j] - borrow;
        d[j] = (uint64_t)s;
        borrow = (uint64_t)(s >> 64) & 1;
    }
    for (int j = 0; j < n; j++) r[j] = borrow ? t[j] : d[j];
}

INLINE void mp_mont_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p,
                        uint64_t pinv, int n) {
    uint64_t t[FQ_LIMBS] = {0};
    for (int i = 0; i < n; i++) {
        u128 s;
        uint64_t c = 0;
        for (int j = 0; j < n; j++) {
            s = (u128)a[j] * b[i] + t[j] + c;
            t[j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        uint64_t top = c;
        uint64_t m = t[0] * pinv;
        s = (u128)m * p[0] + t[0];
        c = (uint64_t)(s >> 64);
        for (int j = 1; j < n; j++) {
            s = (u128)m * p[j] + t[j] + c;
            t[j - 1] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        t[n - 1] = top + c;
    }
    mp_reduce_once(r, t, p, n);
}

INLINE void mp_add_mod(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p,
                       int n) {
    uint64_t s[FQ_LIMBS], d[FQ_LIMBS], carry = 0, borrow = 0;
    for (int j = 0; j < n; j++) {
        u128 t = (u128)a[j] + b[j] + carry;
        s[j] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
    for (int j = 0; j < n; j++) {
        u128 t = (u128)s[j] - p[j] - borrow;
        d[j] = (uint64_t)t;
        borrow = (uint64_t)(t >> 64) & 1;
    }
    for (int j = 0; j < n; j++) r[j] = borrow ? s[j] : d[j];
}

INLINE void mp_sub_mod(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p,
                       int n) {
    uint64_t d[FQ_LIMBS], borrow = 0, carry = 0;
    for (int j = 0; j < n; j++) {
        u128 t = (u128)a[j] - b[j] - borrow;
        d[j] = (uint64_t)t;
        borrow = (uint64_t)(t >> 64) & 1;
    }
    uint64_t mask = (uint64_t)0 - borrow;
    for (int j = 0; j < n; j++) {
        u128 t = (u128)d[j] + (p[j] & mask) + carry;
        r[j] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
}

INLINE int mp_is_zero(const uint64_t *a, int n) {
    uint64_t acc = 0;
    for (int j = 0; j < n; j++) acc |= a[j];
    return acc == 0;
}

INLINE int mp_eq(const uint64_t *a, const uint64_t *b, int n) {
    uint64_t acc = 0;
    for (int j = 0; j < n; j++) acc |= a[j] ^ b[j];
    return acc == 0;
}

/* ---------------------------------------------------------------- Fq */

/* Fq multiplication goes through a kernel pointer: the portable C, or mulx/adcx/adox assembly
 * where the CPU has them (fq_adx.h). Both are out of line on purpose: the curve formulas call them
 * dozens of times, and inlining every call overflows the instruction cache (measured: bucket
 * reduction 1.7x slower when inlined). */
typedef void (*fq_mul_kernel)(fq *, const fq *, const fq *);

static __attribute__((noinline)) void fq_mul_portable(fq *r, const fq *a, const fq *b) {
    mp_mont_mul(r->l, a->l, b->l, FQ_P, FQ_PINV, FQ_LIMBS);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include "fq_adx.h"
#endif

typedef struct {
    const char *name;
    fq_mul_kernel mul;
} fq_kernel;

static const fq_kernel FQ_KERNELS[] = {
    {"portable", fq_mul_portable},
#if defined(__x86_64__) && defined(__GNUC__)
    {"x86-64-adx", fq_mul_adx},
#endif
};
#define FQ_KERNEL_COUNT ((int)(sizeof FQ_KERNELS / sizeof FQ_KERNELS[0]))

static int fq_kernel_supported(int k) {
    if (k < 0 || k >= FQ_KERNEL_COUNT) return 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (FQ_KERNELS[k].mul == fq_mul_adx) return fq_adx_supported();
#endif
    return 1;
}

static fq_mul_kernel fq_mul_active = fq_mul_portable;

INLINE void fq_mul(fq *r, const fq *a, const fq *b) { fq_mul_active(r, a, b); }
INLINE void fq_sqr(fq *r, const fq *a) { fq_mul_active(r, a, a); }
INLINE void fq_add(fq *r, const fq *a, const fq *b) { mp_add_mod(r->l, a->l, b->l, FQ_P, 6); }
INLINE void fq_sub(fq *r, const fq *a, const fq *b) { mp_sub_mod(r->l, a->l, b->l, FQ_P, 6); }
INLINE int fq_is_zero(const fq *a) { return mp_is_zero(a->l, 6); }
INLINE int fq_eq(const fq *a, const fq *b) { return mp_eq(a->l, b->l, 6); }
INLINE void fq_set_zero(fq *r) { memset(r, 0, sizeof *r); }
INLINE void fq_set_one(fq *r) { *r = FQ_ONE; }

INLINE void fq_neg(fq *r, const fq *a) {
    fq zero;
    fq_set_zero(&zero);
    fq_sub(r, &zero, a);
}

/* canonical -> Montgomery (x * R) and back */
INLINE void fq_to_mont(fq *r, const fq *a) { fq_mul(r, a, &FQ_R2); }
INLINE void fq_from_mont(fq *r, const fq *a) {
    static const fq one_plain = {{1, 0, 0, 0, 0, 0}};
    fq_mul(r, a, &one_plain);
}

/* a^(p-2) (Fermat); the inverse of 0 comes out as 0 */
static void fq_inv(fq *r, const fq *a) {
    static const uint64_t e[FQ_LIMBS] = {
        0xb9feffffffffaaa9ULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
        0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
    fq acc = FQ_ONE, base = *a;
    for (int bit = 380; bit >= 0; bit--) {
        fq_sqr(&acc, &acc);
        if ((e[bit / 64] >> (bit % 64)) & 1) fq_mul(&acc, &acc, &base);
    }
    *r = acc;
}

/* ---------------------------------------------------------------- Fr */

INLINE void fr_mul(fr *r, const fr *a, const fr *b) { mp_mont_mul(r->l, a->l, b->l, FR_P, FR_PINV, 4); }
INLINE void fr_add(fr *r, const fr *a, const fr *b) { mp_add_mod(r->l, a->l, b->l, FR_P, 4); }
INLINE void fr_sub(fr *r, const fr *a, const fr *b) { mp_sub_mod(r->l, a->l, b->l, FR_P, 4); }
INLINE void fr_to_mont(fr *r, const fr *a) { fr_mul(r, a, &FR_R2); }

/* ---------------------------------------------------------------- Fq2, u^2 = -1 */

INLINE void fq2_add(fq2 *r, const fq2 *a, const fq2 *b) {
    fq_add(&r->c0, &a->c0, &b->c0);
    fq_add(&r->c1, &a->c1, &b->c1);
}

INLINE void fq2_sub(fq2 *r, const fq2 *a, const fq2 *b) {
    fq_sub(&r->c0, &a->c0, &b->c0);
    fq_sub(&r->c1, &a->c1, &b->c1);
}

INLINE void fq2_mul(fq2 *r, const fq2 *a, const fq2 *b) {
    fq t0, t1, sa, sb, t2;
    fq_mul(&t0, &a->c0, &b->c0);
    fq_mul(&t1, &a->c1, &b->c1);
    fq_add(&sa, &a->c0, &a->c1);
    fq_add(&sb, &b->c0, &b->c1);
    fq_mul(&t2, &sa, &sb);
    fq_sub(&r->c0, &t0, &t1);
    fq_sub(&t2, &t2, &t0);
    fq_sub(&r->c1, &t2, &t1);
}

INLINE void fq2_sqr(fq2 *r, const fq2 *a) {
    fq s, d, p;
    fq_add(&s, &a->c0, &a->c1);
    fq_sub(&d, &a->c0, &a->c1);
    fq_mul(&p, &a->c0, &a->c1);
    fq_mul(&r->c0, &s, &d);
    fq_add(&r->c1, &p, &p);
}

INLINE int fq2_is_zero(const fq2 *a) { return fq_is_zero(&a->c0) && fq_is_zero(&a->c1); }
INLINE int fq2_eq(const fq2 *a, const fq2 *b) { return fq_eq(&a->c0, &b->c0) && fq_eq(&a->c1, &b->c1); }
INLINE void fq2_set_zero(fq2 *r) { memset(r, 0, sizeof *r); }

INLINE void fq2_set_one(fq2 *r) {
    r->c0 = FQ_ONE;
    fq_set_zero(&r->c1);
}

static void fq2_inv(fq2 *r, const fq2 *a) {
    fq n0, n1, inv;
    fq_sqr(&n0, &a->c0);
    fq_sqr(&n1, &a->c1);
    fq_add(&n0, &n0, &n1);
    fq_inv(&inv, &n0);
    fq_mul(&r->c0, &a->c0, &inv);
    fq_mul(&inv, &a->c1, &inv);
    fq_neg(&r->c1, &inv);
}

INLINE void fq2_to_mont(fq2 *r, const fq2 *a) {
    fq_to_mont(&r->c0, &a->c0);
    fq_to_mont(&r->c1, &a->c1);
}

INLINE void fq2_from_mont(fq2 *r, const fq2 *a) {
    fq_from_mont(&r->c0, &a->c0);
    fq_from_mont(&r->c1, &a->c1);
}

#endif
