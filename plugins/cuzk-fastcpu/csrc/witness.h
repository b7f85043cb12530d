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
#define WITNESS_MIN_RUN 4096   /* ops per thread before the ops are split into runs */
#define CUTS_UNKNOWN (-1)      /* cuts[0] before witness_cuts looked for them */
#define CUTS_NONE (-2)         /* cuts[0] when it found none */

/* a CSR matrix with canonical coefficients */
typedef struct {
    const int64_t *indptr, *cols;
    const fr *coeffs;
    size_t rows, nnz;
} csr;

/* acc (9 limbs) += a·b as a full 512-bit product: no reduction per term */
INLINE void fr_wide_mul_acc(uint64_t acc[9], const uint64_t *a, const uint64_t *b) {
    uint64_t p[8], c = 0;
    u128 t;
    for (int j = 0; j < 4; j++) {
        t = (u128)a[j] * b[0] + c;
        p[j] = (uint64_t)t;
        c = (uint64_t)(t >> 64);
    }
    p[4] = c;
    for (int i = 1; i < 4; i++) {
        c = 0;
        for (int j = 0; j < 4; j++) {
            t = (u128)a[j] * b[i] + p[i + j] + c;
            p[i + j] = (uint64_t)t;
            c = (uint64_t)(t >> 64);
        }
        p[i + 4] = c;
    }
    c = 0;
    for (int k = 0; k < 8; k++) {
        t = (u128)acc[k] + p[k] + c;
        acc[k] = (uint64_t)t;
        c = (uint64_t)(t >> 64);
    }
    acc[8] += c;
}

/* out = T / 2^256 mod r, canonical, for a sum T of products below r^2 each (fewer than 2^60 of
 * them): a Montgomery reduction zeroes the four low limbs, the top limb folds back in as
 * 2^256 ≡ FR_ONE, and what is left is below 2^256 < 3r */
INLINE void fr_wide_reduce(fr *out, uint64_t t[9]) {
    for (int i = 0; i < 4; i++) {
        uint64_t m = t[i] * FR_PINV, c = 0;
        u128 s;
        for (int j = 0; j < 4; j++) {
            s = (u128)m * FR_P[j] + t[i + j] + c;
            t[i + j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        for (int k = i + 4; k < 9 && c; k++) {
            s = (u128)t[k] + c;
            t[k] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
    }
    uint64_t *v = t + 4;
    while (v[4]) {
        uint64_t top = v[4], c = 0;
        for (int j = 0; j < 4; j++) {
            u128 s = (u128)top * FR_ONE.l[j] + v[j] + c;
            v[j] = (uint64_t)s;
            c = (uint64_t)(s >> 64);
        }
        v[4] = c;
    }
    mp_reduce_once(v, v, FR_P, FR_LIMBS);
    mp_reduce_once(out->l, v, FR_P, FR_LIMBS);
}

/* Σ coeff·z over one row: canonical, because zm holds z in Montgomery form. Rows of two or more
 * terms add unreduced products and reduce once (lazy reduction: about half the work per term) */
INLINE void row_dot(fr *out, const csr *m, int64_t row, const fr *zm) {
    int64_t lo = m->indptr[row], hi = m->indptr[row + 1];
    if (hi - lo == 1) {
        fr_mul(out, &m->coeffs[lo], &zm[m->cols[lo]]);
        return;
    }
    uint64_t acc[9] = {0};
    for (int64_t k = lo; k < hi; k++) fr_wide_mul_acc(acc, m->coeffs[k].l, zm[m->cols[k]].l);
    fr_wide_reduce(out, acc);
}

/* whether row `row` of x and of y hold the same terms (an x² row has A = B) */
INLINE int same_row(const csr *x, const csr *y, int64_t row) {
    int64_t xl = x->indptr[row], n = x->indptr[row + 1] - xl, yl = y->indptr[row];
    return n == y->indptr[row + 1] - yl &&
           memcmp(&x->cols[xl], &y->cols[yl], (size_t)n * sizeof *x->cols) == 0 &&
           memcmp(&x->coeffs[xl], &y->coeffs[yl], (size_t)n * sizeof *x->coeffs) == 0;
}

typedef struct {
    fr *z, *zm; /* the witness, canonical and Montgomery; aux entries start at zero */
    fr *row_a, *row_b; /* when not NULL: A·z and B·z of every solved row, by row */
    size_t n_in, n_aux;
    const uint8_t *kind;
    const int64_t *arg, *extra;
    const fr *inverses_mont;
    csr a, b, c, lin;
    const int64_t *level_ptr, *level_ops;
    size_t levels;
    const int64_t *segments; /* when not NULL: `parts` independent runs of ops, by aux index */
    int parts;
    atomic_int next_segment;
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
        int64_t row = job->arg[j];
        row_dot(&a, &job->a, row, job->zm);
        if (same_row(&job->a, &job->b, row)) b = a;
        else row_dot(&b, &job->b, row, job->zm);
        row_dot(&c, &job->c, row, job->zm);
        if (job->row_a) {
            job->row_a[row] = a;
            job->row_b[row] = b;
        }
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

/* the ops of aux [lo, hi) in allocation order */
static void witness_range(witness_job *job, size_t lo, size_t hi) {
    for (size_t j = lo; j < hi; j++)
        if (job->kind[j] != OP_HINT) witness_op(job, (int64_t)j);
}

/* the lowest computed aux op j reads, n_aux when none (inputs and hints are set before) */
static int64_t lowest_read(const witness_job *job, int64_t j) {
    const csr *rows[3] = {&job->a, &job->b, &job->c};
    int count = job->kind[j] == OP_SOLVE ? 3 : 1;
    if (job->kind[j] == OP_BIT) rows[0] = &job->lin;
    int64_t low = (int64_t)job->n_aux, row = job->arg[j];
    for (int r = 0; r < count; r++)
        for (int64_t k = rows[r]->indptr[row]; k < rows[r]->indptr[row + 1]; k++) {
            int64_t d = rows[r]->cols[k] - (int64_t)job->n_in;
            if (d >= 0 && d < low && d != j && job->kind[d] != OP_HINT) low = d;
        }
    return low;
}

/* Split the ops into `parts` runs of aux indices none of which reads an op of another: cut s is
 * clean when no op at or past s reads a computed op below s. Each cut is the clean one nearest
 * its share of the ops (runs may be empty where clean cuts are scarce); 0, or -1 when out of
 * memory. Independent chains (porep-lite's challenges) give clean cuts between them. */
static int witness_cuts(const witness_job *job, int parts, int64_t *cuts) {
    size_t n = job->n_aux, clean = 0;
    int64_t *suffix = malloc((n + 1) * sizeof *suffix);
    if (!suffix) return -1;
    suffix[n] = (int64_t)n;
    for (size_t j = n; j-- > 0;) {
        int64_t low = job->kind[j] == OP_HINT ? (int64_t)n : lowest_read(job, (int64_t)j);
        suffix[j] = low < suffix[j + 1] ? low : suffix[j + 1];
    }
    for (size_t s = 0; s <= n; s++) /* the clean cuts, ascending, over the same memory */
        if (suffix[s] >= (int64_t)s) suffix[clean++] = (int64_t)s;
    cuts[0] = 0;
    cuts[parts] = (int64_t)n;
    for (int p = 1; p < parts; p++) {
        int64_t target = (int64_t)(n * (size_t)p / (size_t)parts);
        size_t lo = 0, hi = clean - 1; /* suffix[0] = 0 and suffix[clean - 1] = n are clean */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (suffix[mid] <= target) lo = mid;
            else hi = mid;
        }
        int64_t pick = target - suffix[lo] <= suffix[hi] - target ? suffix[lo] : suffix[hi];
        cuts[p] = pick < cuts[p - 1] ? cuts[p - 1] : pick;
    }
    free(suffix);
    return 0;
}

static void *witness_worker(void *arg) {
    witness_job *job = arg;
    if (job->segments) { /* independent runs, taken in turn: no barrier */
        for (int s; (s = atomic_fetch_add(&job->next_segment, 1)) < job->parts;)
            witness_range(job, (size_t)job->segments[s], (size_t)job->segments[s + 1]);
        return NULL;
    }
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

/* run the ops on up to `threads` threads (this one included): one thread runs them in
 * allocation order (every op reads only earlier ones), which keeps each chain's rows and values
 * together in cache where a level jumps between chains; several take the `parts` independent
 * runs of `cuts` in turn (more runs than threads, so a thread the scheduler starves takes fewer;
 * found by witness_cuts on first use and kept by the caller for the program), else split each
 * level (with `level_threads` of them) */
static void witness_run(witness_job *job, int threads, int level_threads, int64_t *cuts,
                        int parts) {
    job->segments = NULL;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    if (level_threads > MAX_THREADS) level_threads = MAX_THREADS;
    if (threads > 1 && cuts[0] == CUTS_UNKNOWN)
        if (job->n_aux < (size_t)threads * WITNESS_MIN_RUN || witness_cuts(job, parts, cuts))
            cuts[0] = CUTS_NONE;
    if (threads > 1 && cuts[0] == 0) {
        job->segments = cuts;
        job->parts = parts;
        atomic_store(&job->next_segment, 0);
    } else {
        threads = level_threads;
    }
    if (threads <= 1) {
        witness_range(job, 0, job->n_aux);
        return;
    }
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
    const int64_t *rows; /* the rows to compute, or NULL for all of them */
    size_t count;        /* how many rows */
    atomic_size_t next;  /* rows are taken in blocks */
} spmv_job;

#define SPMV_BLOCK 4096

static void *spmv_worker(void *arg) {
    spmv_job *job = arg;
    for (;;) {
        size_t lo = atomic_fetch_add(&job->next, SPMV_BLOCK);
        if (lo >= job->count) return NULL;
        size_t hi = lo + SPMV_BLOCK < job->count ? lo + SPMV_BLOCK : job->count;
        for (size_t i = lo; i < hi; i++) {
            int64_t row = job->rows ? job->rows[i] : (int64_t)i;
            row_dot(&job->out[row], job->m, row, job->zm);
        }
    }
}

/* out[row] = M_row z for the `count` rows listed (all rows when `rows` is NULL) on `threads`
 * threads; zm is z in Montgomery form */
static void spmv_threads(fr *out, const csr *m, const fr *zm, const int64_t *rows, size_t count,
                         int threads) {
    spmv_job job = {out, m, zm, rows, count, 0};
    if (count < 2 * SPMV_BLOCK) threads = 1;
    run_workers(spmv_worker, &job, threads);
}

/* a 64-bit fingerprint of n words: any change of one word changes it (odd multipliers) */
static uint64_t words_fingerprint(const uint64_t *w, size_t n) {
    uint64_t lanes[4] = {1, 2, 3, 4};
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++) lanes[l] = (lanes[l] ^ w[i + l]) * k;
    for (; i < n; i++) lanes[0] = (lanes[0] ^ w[i]) * k;
    return ((lanes[0] * k ^ lanes[1]) * k ^ lanes[2]) * k ^ lanes[3] ^ n;
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
