/* snarkjs's points → cuzk's canonical layout (cuzk_core/interop/points.py's reference, bit for
 * bit): each coordinate 48 bytes little-endian in Montgomery form x·2^384 mod q, which is this
 * library's own fq; checked below q and on the curve, then out of Montgomery form. Status per
 * point: 0 valid, 1 a coordinate not below q, 2 not on the curve (output zero). Free of Python.
 */
#ifndef CUZK_FASTCPU_SNARKJS_H
#define CUZK_FASTCPU_SNARKJS_H

#include <string.h>

#include "curves.h"

#define SNARKJS_CHUNK 4096 /* points a worker claims at a time */

static int fq_below_p(const fq *a) {
    for (int i = FQ_LIMBS - 1; i >= 0; i--)
        if (a->l[i] != FQ_P[i]) return a->l[i] < FQ_P[i];
    return 0;
}

typedef struct {
    const uint8_t *raw;
    uint64_t *out;
    uint8_t *infinity, *status;
    size_t n;
    size_t next; /* the next unclaimed point, advanced atomically */
} snarkjs_job;

/* coords = Fq elements per point (2 in G1, 4 in G2); on_curve(x, y) for Montgomery words */
#define SNARKJS_DECODER(G, COORDS, ON_CURVE)                                                     \
    static void *G##_snarkjs_worker(void *arg) {                                                 \
        snarkjs_job *job = arg;                                                                  \
        for (;;) {                                                                               \
            size_t start = __atomic_fetch_add(&job->next, SNARKJS_CHUNK, __ATOMIC_RELAXED);      \
            if (start >= job->n) return NULL;                                                    \
            size_t stop = start + SNARKJS_CHUNK < job->n ? start + SNARKJS_CHUNK : job->n;       \
            for (size_t i = start; i < stop; i++) {                                              \
                fq c[COORDS];                                                                    \
                memcpy(c, job->raw + i * sizeof c, sizeof c); /* the file gives no alignment */  \
                fq *out = (fq *)(job->out) + i * (COORDS);                                       \
                int zero = 1, below = 1;                                                         \
                for (int k = 0; k < (COORDS); k++) {                                             \
                    zero &= fq_is_zero(&c[k]);                                                   \
                    below &= fq_below_p(&c[k]);                                                  \
                }                                                                                \
                job->infinity[i] = (uint8_t)zero;                                                \
                memset(out, 0, sizeof c);                                                        \
                if (zero) {                                                                      \
                    job->status[i] = 0;                                                          \
                } else if (!below) {                                                             \
                    job->status[i] = 1;                                                          \
                } else if (!ON_CURVE(c)) {                                                       \
                    job->status[i] = 2;                                                          \
                } else {                                                                         \
                    job->status[i] = 0;                                                          \
                    for (int k = 0; k < (COORDS); k++) fq_from_mont(&out[k], &c[k]);             \
                }                                                                                \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    static void G##_snarkjs_decode(const uint8_t *raw, size_t n, uint64_t *out,                  \
                                   uint8_t *infinity, uint8_t *status, int threads) {            \
        snarkjs_job job = {raw, out, infinity, status, n, 0};                                    \
        size_t useful = (n + SNARKJS_CHUNK - 1) / SNARKJS_CHUNK;                                 \
        run_workers(G##_snarkjs_worker, &job, useful < (size_t)threads ? (int)useful : threads); \
    }

/* y² = x³ + 4 */
static int g1_snarkjs_on_curve(const fq *c) {
    fq four = FQ_ONE, lhs, rhs;
    fq_add(&four, &four, &four);
    fq_add(&four, &four, &four);
    fq_sqr(&lhs, &c[1]);
    fq_sqr(&rhs, &c[0]);
    fq_mul(&rhs, &rhs, &c[0]);
    fq_add(&rhs, &rhs, &four);
    return fq_eq(&lhs, &rhs);
}

/* y² = x³ + 4(1 + u) */
static int g2_snarkjs_on_curve(const fq *c) {
    const fq2 *x = (const fq2 *)&c[0], *y = (const fq2 *)&c[2];
    fq2 b, lhs, rhs;
    b.c0 = FQ_ONE;
    fq_add(&b.c0, &b.c0, &b.c0);
    fq_add(&b.c0, &b.c0, &b.c0);
    b.c1 = b.c0;
    fq2_sqr(&lhs, y);
    fq2_sqr(&rhs, x);
    fq2_mul(&rhs, &rhs, x);
    fq2_add(&rhs, &rhs, &b);
    return fq2_eq(&lhs, &rhs);
}

SNARKJS_DECODER(g1, 2, g1_snarkjs_on_curve)
SNARKJS_DECODER(g2, 4, g2_snarkjs_on_curve)

#endif
