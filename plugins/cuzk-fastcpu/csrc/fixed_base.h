/* Fixed-base multiplication, scalar_i * base for many scalars (the setup's key batches), for the
 * group ec.h was just instantiated for. A table holds d * 2^(8w) * base for every window w of
 * 8 bits and digit d, so a point costs one mixed addition per nonzero digit; threads take chunks
 * of points and share one inversion per chunk (Montgomery's trick) to go affine.
 */
#if !defined(FE) || !defined(FE_) || !defined(EC_)
#error "define FE, FE_ and EC_ before including fixed_base.h"
#endif

#ifndef FB_BITS
#define FB_BITS 8
#define FB_DIGITS ((1 << FB_BITS) - 1)
#define FB_WINDOWS ((64 * FR_LIMBS + FB_BITS - 1) / FB_BITS)
#define FB_CHUNK 256
#endif

typedef struct {
    const EC_(aff) *table; /* FB_WINDOWS rows of FB_DIGITS points: (d+1) * 2^(8w) * base */
    const uint64_t *scalars;
    size_t n;
    EC_(aff) *out; /* Montgomery form; rows of points at infinity are left zero */
    uint8_t *infinity;
    size_t next; /* the first point no thread has taken yet */
} EC_(fb_job);

/* the table for `base` (not infinity, of prime order r, so no entry is infinity) */
static void EC_(fb_table)(EC_(aff) *table, const EC_(aff) *base) {
    EC_(jac) window_base, acc;
    EC_(from_aff)(&window_base, base);
    for (int w = 0; w < FB_WINDOWS; w++) {
        acc = window_base;
        for (int d = 0; d < FB_DIGITS; d++) {
            EC_(to_aff)(&table[(size_t)w * FB_DIGITS + d], &acc);
            EC_(add)(&acc, &acc, &window_base);
        }
        for (int b = 0; b < FB_BITS; b++) EC_(dbl)(&window_base, &window_base);
    }
}

static void *EC_(fb_worker)(void *arg) {
    EC_(fb_job) *job = arg;
    EC_(jac) acc[FB_CHUNK];
    FE prefix[FB_CHUNK];
    for (;;) {
        size_t start = __atomic_fetch_add(&job->next, FB_CHUNK, __ATOMIC_RELAXED);
        if (start >= job->n) return NULL;
        size_t count = job->n - start < FB_CHUNK ? job->n - start : FB_CHUNK;
        FE running;
        FE_(set_one)(&running);
        for (size_t k = 0; k < count; k++) {
            const uint64_t *s = job->scalars + FR_LIMBS * (start + k);
            EC_(set_inf)(&acc[k]);
            for (int w = 0; w < FB_WINDOWS; w++) {
                uint64_t d = scalar_bits(s, w * FB_BITS, FB_BITS);
                if (d) EC_(madd)(&acc[k], &acc[k], &job->table[(size_t)w * FB_DIGITS + d - 1]);
            }
            prefix[k] = running; /* the product of the earlier finite Z's */
            if (!EC_(is_inf)(&acc[k])) FE_(mul)(&running, &running, &acc[k].Z);
        }
        FE inverse; /* of the running product, then peeled back one Z at a time */
        FE_(inv)(&inverse, &running);
        for (size_t k = count; k-- > 0;) {
            size_t i = start + k;
            if (EC_(is_inf)(&acc[k])) {
                job->infinity[i] = 1;
                continue;
            }
            FE zi, zi2, zi3;
            FE_(mul)(&zi, &inverse, &prefix[k]);
            FE_(mul)(&inverse, &inverse, &acc[k].Z);
            FE_(sqr)(&zi2, &zi);
            FE_(mul)(&zi3, &zi2, &zi);
            FE_(mul)(&job->out[i].x, &acc[k].X, &zi2);
            FE_(mul)(&job->out[i].y, &acc[k].Y, &zi3);
            job->infinity[i] = 0;
        }
    }
}

/* scalar_i * base for i < n into out (Montgomery form) and infinity; -1 when out of memory */
static int EC_(fixed_base)(const EC_(aff) *base, const uint64_t *scalars, size_t n, int threads,
                           EC_(aff) *out, uint8_t *infinity) {
    EC_(aff) *table = malloc((size_t)FB_WINDOWS * FB_DIGITS * sizeof *table);
    if (!table) return -1;
    EC_(fb_table)(table, base);
    EC_(fb_job) job = {table, scalars, n, out, infinity, 0};
    run_workers(EC_(fb_worker), &job, threads);
    free(table);
    return 0;
}
