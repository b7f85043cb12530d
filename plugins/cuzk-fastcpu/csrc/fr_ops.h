/* Bulk Fr work on canonical (non-Montgomery) values: NTT, scaling by powers, the quotient step and
 * sparse matrix-vector products. The trick throughout: a Montgomery product of a canonical value
 * and a Montgomery-form constant (x * cR / R) is the canonical product, so data never converts.
 */
#ifndef CUZK_FASTCPU_FR_OPS_H
#define CUZK_FASTCPU_FR_OPS_H

#include <stdlib.h>

#include "field.h"

static size_t bit_reverse(size_t i, int bits) {
    size_t r = 0;
    for (int b = 0; b < bits; b++, i >>= 1) r = (r << 1) | (i & 1);
    return r;
}

/* in-place radix-2 NTT of 2^log_n canonical values; omega in Montgomery form. -1 when out of memory */
static int fr_ntt(fr *a, int log_n, const fr *omega) {
    size_t n = (size_t)1 << log_n;
    if (n < 2) return 0;
    fr *tw = malloc(n / 2 * sizeof *tw);
    if (!tw) return -1;
    tw[0] = FR_ONE;
    for (size_t j = 1; j < n / 2; j++) fr_mul(&tw[j], &tw[j - 1], omega);
    for (size_t i = 0; i < n; i++) {
        size_t j = bit_reverse(i, log_n);
        if (i < j) {
            fr t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t half = len / 2, step = n / len;
        for (size_t start = 0; start < n; start += len) {
            for (size_t j = 0; j < half; j++) {
                fr u = a[start + j], v;
                fr_mul(&v, &a[start + j + half], &tw[j * step]);
                fr_add(&a[start + j], &u, &v);
                fr_sub(&a[start + j + half], &u, &v);
            }
        }
    }
    free(tw);
    return 0;
}

/* a[i] *= first * base^i; first and base in Montgomery form */
static void fr_scale_powers(fr *a, size_t n, const fr *base, const fr *first) {
    fr power = *first;
    for (size_t i = 0; i < n; i++) {
        fr_mul(&a[i], &a[i], &power);
        fr_mul(&power, &power, base);
    }
}

/* out[i] = (a[i] * b[i] - c[i]) * scale; scale in Montgomery form */
static void fr_quotient(fr *out, const fr *a, const fr *b, const fr *c, size_t n, const fr *scale) {
    for (size_t i = 0; i < n; i++) {
        fr am, t;
        fr_to_mont(&am, &a[i]);
        fr_mul(&t, &am, &b[i]);
        fr_sub(&t, &t, &c[i]);
        fr_mul(&out[i], &t, scale);
    }
}

/* the first i with a[i] * b[i] != c[i] (canonical, reduced values), or n */
static size_t fr_first_unsatisfied(const fr *a, const fr *b, const fr *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        fr am, t;
        fr_to_mont(&am, &a[i]);
        fr_mul(&t, &am, &b[i]);
        uint64_t differs = 0;
        for (int k = 0; k < FR_LIMBS; k++) differs |= t.l[k] ^ c[i].l[k];
        if (differs) return i;
    }
    return n;
}

#endif
