/* The compiled-circuit witness program (cuzk_core/witness/program.py) and threaded sparse products
 * on canonical values. Ops run level by level; the ops of a level are independent, so threads
 * split each level and meet at a barrier before the next. Free of Python, like curves.h.
 */
#ifndef CUZK_FASTCPU_WITNESS_H
#define CUZK_FASTCPU_WITNESS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "curves.h"

enum { OP_HINT = 0, OP_SOLVE = 1, OP_BIT = 2 };

#define WITNESS_MIN_WIDTH 1024 /* ops per thread and level before a level is split */

/* a CSR matrix with canonical coefficients */
typedef struct {
    const int64_t *indptr, *cols;
    const fr *coeffs;
    size_t rows, nnz;
} csr;

/* Σ coeff·z over one row: canonical, because zm holds z in Montgomery form */
INLINE void row_dot(fr *out, const csr *m, int64_t row, const fr *zm) {
    fr acc = {{0}}, t;
    for (int64_t k = m->indptr[row]; k < m->indptr[row + 1]; k++) {
        fr_mul(&t, &m->coeffs[k], &zm[m->cols[k]]);
        fr_add(&acc, &acc, &t);
    }
    *out = acc;
}

typedef struct {
    fr *z, *zm; /* the witness, canonical and Montgomery; aux entries start at zero */
    size_t n_in;
    const uint8_t *kind;
    const int64_t *arg, *extra;
    const fr *inverses_mont;
    csr a, b, c, lin;
    const int64_t *level_ptr, *level_ops;
    size_t levels;
    int threads;          /* set once every worker has started */
    atomic_int next_id;   /* worker ids, in arrival order */
    atomic_int ready;     /* 1 when `threads` is final */
    atomic_uint arrived;  /* barrier: workers at it */
    atomic_uint generation;
} witness_job;

static void witness_barrier(witness_job *job) {
    unsigned gen = atomic_load(&job->generation);
    if (atomic_fetch_add(&job->arrived, 1) == (unsigned)job->threads - 1) {
        atomic_store(&job->arrived, 0);
        atomic_fetch_add(&job->generation, 1);
        return;
    }
    for (int spins = 0; atomic_load(&job->generation) == gen; spins++)
        if (spins > 256) sched_yield();
}

static void witness_op(witness_job *job, int64_t j) {
    size_t col = job->n_in + (size_t)j;
    fr v = {{0}};
    if (job->kind[j] == OP_SOLVE) {
        /* z_j = (A·z · B·z − C·z) / c_j, with z_j still 0 so C·z leaves its own term out */
        fr a, b, c, am, t;
        row_dot(&a, &job->a, job->arg[j], job->zm);
        row_dot(&b, &job->b, job->arg[j], job->zm);
        row_dot(&c, &job->c, job->arg[j], job->zm);
        fr_to_mont(&am, &a);
        fr_mul(&t, &am, &b);
        fr_sub(&t, &t, &c);
        fr_mul(&v, &t, &job->inverses_mont[job->extra[j]]);
    } else { /* OP_BIT: bit `extra` of the canonical value of the lin row */
        fr value;
        row_dot(&value, &job->lin, job->arg[j], job->zm);
        int64_t pos = job->extra[j];
        v.l[0] = (value.l[pos / 64] >> (pos % 64)) & 1;
    }
    job->z[col] = v;
    fr_to_mont(&job->zm[col], &v);
}

static void *witness_worker(void *arg) {
    witness_job *job = arg;
    int id = atomic_fetch_add(&job->next_id, 1);
    while (!atomic_load(&job->ready)) sched_yield();
    int threads = job->threads;
    for (size_t l = 0; l < job->levels; l++) {
        int64_t lo = job->level_ptr[l], hi = job->level_ptr[l + 1];
        int64_t chunk = (hi - lo + threads - 1) / threads;
        int64_t start = lo + chunk * id, end = start + chunk < hi ? start + chunk : hi;
        for (int64_t k = start; k < end; k++) witness_op(job, job->level_ops[k]);
        if (threads > 1) witness_barrier(job);
    }
    return NULL;
}

/* run the levels on up to `threads` threads (this one included) */
static void witness_run(witness_job *job, int threads) {
    pthread_t ids[MAX_THREADS];
    int started = 0;
    atomic_store(&job->next_id, 0);
    atomic_store(&job->ready, 0);
    atomic_store(&job->arrived, 0);
    atomic_store(&job->generation, 0);
    for (int t = 1; t < threads && t < MAX_THREADS; t++)
        if (pthread_create(&ids[started], NULL, witness_worker, job) == 0) started++;
    job->threads = started + 1;
    atomic_store(&job->ready, 1);
    witness_worker(job);
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

typedef struct {
    fr *out;
    const csr *m;
    const fr *zm;
    atomic_size_t next; /* rows are taken in blocks */
} spmv_job;

#define SPMV_BLOCK 4096

static void *spmv_worker(void *arg) {
    spmv_job *job = arg;
    for (;;) {
        size_t lo = atomic_fetch_add(&job->next, SPMV_BLOCK);
        if (lo >= job->m->rows) return NULL;
        size_t hi = lo + SPMV_BLOCK < job->m->rows ? lo + SPMV_BLOCK : job->m->rows;
        for (size_t i = lo; i < hi; i++) row_dot(&job->out[i], job->m, (int64_t)i, job->zm);
    }
}

/* out = M z on `threads` threads; zm is z in Montgomery form */
static void spmv_threads(fr *out, const csr *m, const fr *zm, int threads) {
    spmv_job job = {out, m, zm, 0};
    if (m->rows < 2 * SPMV_BLOCK) threads = 1;
    run_workers(spmv_worker, &job, threads);
}

/* 0 when the CSR matrix is well formed over m columns */
static int csr_invalid(const csr *mat, size_t m) {
    if (mat->indptr[0] != 0 || mat->indptr[mat->rows] != (int64_t)mat->nnz) return 1;
    for (size_t i = 0; i < mat->rows; i++)
        if (mat->indptr[i + 1] < mat->indptr[i]) return 1;
    for (size_t k = 0; k < mat->nnz; k++)
        if (mat->cols[k] < 0 || (size_t)mat->cols[k] >= m) return 1;
    return 0;
}

#endif
