/* The MSM machinery shared by both groups (threads, scalar digits) and the two instantiations of
 * ec.h, fixed_base.h and msm.h: g1_* over Fq and g2_* over Fq2. Free of Python, so C harnesses can include it.
 */
#ifndef CUZK_FASTCPU_CURVES_H
#define CUZK_FASTCPU_CURVES_H

#include <pthread.h>
#include <stdlib.h>

#include "field.h"

#define MAX_THREADS 256
#define SCALAR_BITS 255

typedef void *(*worker_fn)(void *);

/* run fn(job) on `threads` threads, this one included; fewer if threads cannot be started */
static void run_workers(worker_fn fn, void *job, int threads) {
    pthread_t ids[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads && t < MAX_THREADS; t++)
        if (pthread_create(&ids[started], NULL, fn, job) == 0) started++;
    fn(job);
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

static uint64_t scalar_bits(const uint64_t *s, int pos, int width) {
    int limb = pos / 64, off = pos % 64;
    if (limb >= FR_LIMBS) return 0;
    uint64_t v = s[limb] >> off;
    if (off + width > 64 && limb + 1 < FR_LIMBS) v |= s[limb + 1] << (64 - off);
    return v & (((uint64_t)1 << width) - 1);
}

/* base-2^c digits of every scalar, window-major; signed ones lie in [-2^(c-1), 2^(c-1)] */
static int32_t *scalar_digits(const uint64_t *scalars, size_t n, int c, int signed_digits,
                              int *windows_out) {
    int windows = (SCALAR_BITS + (signed_digits ? 1 : 0) + c - 1) / c;
    int32_t *digits = malloc(((size_t)windows * n + 1) * sizeof *digits);
    *windows_out = windows;
    if (!digits) return NULL;
    int64_t half = (int64_t)1 << (c - 1);
    for (size_t i = 0; i < n; i++) {
        const uint64_t *s = scalars + FR_LIMBS * i;
        int64_t carry = 0;
        for (int w = 0; w < windows; w++) {
            int64_t d = (int64_t)scalar_bits(s, w * c, c) + carry;
            carry = 0;
            if (signed_digits && d > half) {
                d -= (int64_t)1 << c;
                carry = 1;
            }
            digits[(size_t)w * n + i] = (int32_t)d;
        }
    }
    return digits;
}

#define FE fq
#define FE_(op) fq_##op
#define EC_(name) g1_##name
#include "ec.h"
#include "fixed_base.h"
#include "msm.h"
#undef FE
#undef FE_
#undef EC_

#define FE fq2
#define FE_(op) fq2_##op
#define EC_(name) g2_##name
#include "ec.h"
#include "fixed_base.h"
#include "msm.h"
#undef FE
#undef FE_
#undef EC_

#endif
