/* Many Poseidon permutations on canonical states, from the core's table of Montgomery constants
 * (cuzk_core/gadgets/poseidon/batch.py lays it out): the first round's constants; per full round
 * its t x t matrix and the t constants added after it; per partial round A00, w (t - 1),
 * v (t - 1) and the t constants added after it (the sparse layers of sparse_rounds.py).
 */
#ifndef CUZK_FASTCPU_POSEIDON_H
#define CUZK_FASTCPU_POSEIDON_H

#include <stdatomic.h>

#include "curves.h"
#include "field.h"

#define POSEIDON_MAX_T 16
#define POSEIDON_BLOCK 16 /* states a worker takes at once */

static const fr FR_PLAIN_ONE = {{1, 0, 0, 0}}; /* x * 1 / R: out of Montgomery form */

INLINE void fr_fifth(fr *r, const fr *x) {
    fr x2, x4;
    fr_mul(&x2, x, x);
    fr_mul(&x4, &x2, &x2);
    fr_mul(r, &x4, x);
}

/* x <- M sbox(x) + c, M and c read from *w (advanced past them) */
static void poseidon_full_round(fr *x, int t, const fr **w) {
    fr fifth[POSEIDON_MAX_T];
    for (int i = 0; i < t; i++) fr_fifth(&fifth[i], &x[i]);
    const fr *m = *w, *c = *w + t * t;
    for (int j = 0; j < t; j++) {
        fr acc = c[j], term;
        for (int k = 0; k < t; k++) {
            fr_mul(&term, &m[j * t + k], &fifth[k]);
            fr_add(&acc, &acc, &term);
        }
        x[j] = acc;
    }
    *w += t * t + t;
}

/* one state (t canonical values) permuted in place */
static void poseidon_permute(fr *s, int t, int half, int partial, const fr *w) {
    fr x[POSEIDON_MAX_T];
    for (int i = 0; i < t; i++) {
        fr_to_mont(&x[i], &s[i]);
        fr_add(&x[i], &x[i], &w[i]);
    }
    w += t;
    for (int r = 0; r < half; r++) poseidon_full_round(x, t, &w);
    for (int r = 0; r < partial; r++) {
        const fr *m00 = w, *wh = w + 1, *v = w + t, *c = w + 2 * t - 1;
        fr y, acc, term;
        fr_fifth(&y, &x[0]);
        fr_mul(&acc, m00, &y);
        for (int k = 1; k < t; k++) {
            fr_mul(&term, &wh[k - 1], &x[k]);
            fr_add(&acc, &acc, &term);
        }
        fr_add(&x[0], &acc, &c[0]);
        for (int k = 1; k < t; k++) {
            fr_mul(&term, &v[k - 1], &y);
            fr_add(&x[k], &x[k], &term);
            fr_add(&x[k], &x[k], &c[k]);
        }
        w += 3 * t - 1;
    }
    for (int r = 0; r < half; r++) poseidon_full_round(x, t, &w);
    for (int i = 0; i < t; i++) fr_mul(&s[i], &x[i], &FR_PLAIN_ONE);
}

typedef struct {
    fr *states;
    size_t n;
    int t, half, partial;
    const fr *table;
    atomic_size_t next;
} poseidon_job;

static void *poseidon_worker(void *arg) {
    poseidon_job *job = arg;
    for (;;) {
        size_t lo = atomic_fetch_add(&job->next, POSEIDON_BLOCK);
        if (lo >= job->n) return NULL;
        size_t hi = lo + POSEIDON_BLOCK < job->n ? lo + POSEIDON_BLOCK : job->n;
        for (size_t i = lo; i < hi; i++)
            poseidon_permute(&job->states[i * job->t], job->t, job->half, job->partial, job->table);
    }
}

/* every one of n states permuted in place, on up to `threads` threads (one per block of states) */
static void poseidon_many(fr *states, size_t n, int t, int half, int partial, const fr *table,
                          int threads) {
    poseidon_job job = {states, n, t, half, partial, table, 0};
    size_t blocks = (n + POSEIDON_BLOCK - 1) / POSEIDON_BLOCK;
    if ((size_t)threads > blocks) threads = (int)blocks;
    run_workers(poseidon_worker, &job, threads < 1 ? 1 : threads);
}

#endif
