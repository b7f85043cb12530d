/* Pippenger's bucket method with batch-affine bucket additions, instantiated per group like ec.h.
 *
 * Each window is one task; worker threads take windows from a shared counter. Within a window a
 * point whose bucket is empty is copied in for free; otherwise (bucket, point) pairs are gathered
 * into a batch of distinct buckets, and the whole batch is added in affine coordinates with one
 * field inversion (Montgomery's trick), about 6 multiplications per addition instead of 11 for a
 * mixed Jacobian addition. A point whose bucket is already in the batch waits for the next batch
 * once; if it collides again (or the wait list is full) it goes into that bucket's Jacobian spill
 * accumulator, so repeated scalars cannot serialise the batches. Buckets are then summed with
 * the running-sum trick in Jacobian coordinates.
 */

typedef struct {
    uint32_t bucket;
    int32_t digit; /* the signed digit, so the point is negated when it is < 0 */
    uint32_t point;
} EC_(entry);

typedef struct {
    const EC_(aff) *points; /* Montgomery form */
    const uint8_t *infinity;
    const int32_t *digits; /* windows x n, window-major */
    size_t n;
    int windows;
    size_t buckets;   /* bucket indices run 1..buckets */
    size_t batch_max; /* additions per inversion */
    EC_(jac) *results; /* one per window */
    int next_window;   /* shared work counter */
    int failed;
} EC_(job);

typedef struct {
    const EC_(job) *job;
    EC_(aff) *bucket;
    uint8_t *occupied;
    EC_(jac) *spill;
    uint8_t *spilled;
    uint32_t *stamp; /* stamp[b] == batch_id: b is in the current batch */
    uint32_t batch_id;
    EC_(entry) *batch, *waiting, *retry;
    size_t batch_len, waiting_len;
    FE *prefix;
    EC_(aff) *addend;
} EC_(window_state);

INLINE void EC_(entry_point)(EC_(aff) *r, const EC_(job) *job, const EC_(entry) *e) {
    *r = job->points[e->point];
    if (e->digit < 0) FE_(sub)(&r->y, &(FE){0}, &r->y);
}

static void EC_(spill_add)(EC_(window_state) *s, const EC_(entry) *e) {
    EC_(aff) p;
    EC_(entry_point)(&p, s->job, e);
    if (!s->spilled[e->bucket]) {
        EC_(set_inf)(&s->spill[e->bucket]);
        s->spilled[e->bucket] = 1;
    }
    EC_(madd)(&s->spill[e->bucket], &s->spill[e->bucket], &p);
}

/* add the batch into its buckets: one inversion for all of it */
static void EC_(flush)(EC_(window_state) *s) {
    size_t len = s->batch_len;
    if (len == 0) return;
    FE acc, den, inv, lambda, t;
    FE_(set_one)(&acc);
    for (size_t k = 0; k < len; k++) {
        const EC_(entry) *e = &s->batch[k];
        EC_(aff) *p = &s->addend[k];
        const EC_(aff) *b = &s->bucket[e->bucket];
        EC_(entry_point)(p, s->job, e);
        FE_(sub)(&den, &p->x, &b->x);
        if (FE_(is_zero)(&den)) {
            /* same x: doubling when y agrees (2y; y = 0 has no inverse: 2-torsion) or P + (-P) */
            if (FE_(eq)(&p->y, &b->y)) FE_(add)(&den, &b->y, &b->y);
            if (FE_(is_zero)(&den)) FE_(set_one)(&den);
        }
        s->prefix[k] = acc;
        FE_(mul)(&acc, &acc, &den);
    }
    FE_(inv)(&inv, &acc);
    for (size_t k = len; k-- > 0;) {
        const EC_(entry) *e = &s->batch[k];
        const EC_(aff) *p = &s->addend[k];
        EC_(aff) *b = &s->bucket[e->bucket];
        FE inv_k;
        FE_(mul)(&inv_k, &inv, &s->prefix[k]);
        FE_(sub)(&den, &p->x, &b->x);
        if (!FE_(is_zero)(&den)) {
            FE_(mul)(&inv, &inv, &den);
            FE_(sub)(&t, &p->y, &b->y);
            FE_(mul)(&lambda, &t, &inv_k);
        } else if (FE_(eq)(&p->y, &b->y) && !FE_(is_zero)(&b->y)) {
            FE_(add)(&den, &b->y, &b->y);
            FE_(mul)(&inv, &inv, &den);
            FE_(sqr)(&t, &b->x);
            FE_(add)(&lambda, &t, &t);
            FE_(add)(&lambda, &lambda, &t);
            FE_(mul)(&lambda, &lambda, &inv_k);
        } else {
            s->occupied[e->bucket] = 0; /* P + (-P), or doubling a 2-torsion point */
            continue;
        }
        FE x3;
        FE_(sqr)(&x3, &lambda);
        FE_(sub)(&x3, &x3, &b->x);
        FE_(sub)(&x3, &x3, &p->x);
        FE_(sub)(&t, &b->x, &x3);
        FE_(mul)(&t, &lambda, &t);
        FE_(sub)(&b->y, &t, &b->y);
        b->x = x3;
    }
    s->batch_len = 0;
    s->batch_id++;
}

/* route one (bucket, point) pair: into an empty bucket, the batch, the wait list or the spill */
INLINE void EC_(route)(EC_(window_state) *s, const EC_(entry) *e, int may_wait) {
    uint32_t b = e->bucket;
    if (!s->occupied[b]) {
        EC_(entry_point)(&s->bucket[b], s->job, e);
        s->occupied[b] = 1;
    } else if (s->stamp[b] != s->batch_id) {
        s->stamp[b] = s->batch_id;
        s->batch[s->batch_len++] = *e;
    } else if (may_wait && s->waiting_len < s->job->batch_max) {
        s->waiting[s->waiting_len++] = *e;
    } else {
        EC_(spill_add)(s, e);
    }
}

static void EC_(window)(EC_(window_state) *s, int w, EC_(jac) *result) {
    const EC_(job) *job = s->job;
    const int32_t *digits = job->digits + (size_t)w * job->n;
    size_t nb = job->buckets;
    memset(s->occupied, 0, nb + 1);
    memset(s->spilled, 0, nb + 1);
    size_t i = 0;
    while (i < job->n || s->waiting_len) {
        EC_(entry) *retry = s->waiting;
        size_t retry_len = s->waiting_len;
        s->waiting = s->retry;
        s->retry = retry;
        s->waiting_len = 0;
        for (size_t k = 0; k < retry_len; k++) EC_(route)(s, &retry[k], 0);
        while (s->batch_len < job->batch_max && i < job->n) {
            int32_t d = digits[i];
            if (d != 0 && !job->infinity[i]) {
                EC_(entry) e = {(uint32_t)(d < 0 ? -d : d), d, (uint32_t)i};
                EC_(route)(s, &e, 1);
            }
            i++;
        }
        EC_(flush)(s);
    }
    EC_(jac) running, total;
    EC_(set_inf)(&running);
    EC_(set_inf)(&total);
    for (size_t b = nb; b >= 1; b--) {
        if (s->occupied[b]) EC_(madd)(&running, &running, &s->bucket[b]);
        if (s->spilled[b]) EC_(add)(&running, &running, &s->spill[b]);
        if (!EC_(is_inf)(&running)) EC_(add)(&total, &total, &running);
    }
    *result = total;
}

static void *EC_(worker)(void *arg) {
    EC_(job) *job = (EC_(job) *)arg;
    size_t nb = job->buckets, bm = job->batch_max;
    EC_(window_state) s = {.job = job};
    s.bucket = malloc((nb + 1) * sizeof *s.bucket);
    s.occupied = malloc(nb + 1);
    s.spill = malloc((nb + 1) * sizeof *s.spill);
    s.spilled = malloc(nb + 1);
    s.stamp = calloc(nb + 1, sizeof *s.stamp);
    s.batch = malloc(bm * sizeof *s.batch);
    s.waiting = malloc(bm * sizeof *s.waiting);
    s.retry = malloc(bm * sizeof *s.retry);
    s.prefix = malloc(bm * sizeof *s.prefix);
    s.addend = malloc(bm * sizeof *s.addend);
    s.batch_id = 1;
    if (s.bucket && s.occupied && s.spill && s.spilled && s.stamp && s.batch && s.waiting &&
        s.retry && s.prefix && s.addend) {
        int w;
        while ((w = __atomic_fetch_add(&job->next_window, 1, __ATOMIC_RELAXED)) < job->windows)
            EC_(window)(&s, w, &job->results[w]);
    } else {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    }
    free(s.bucket);
    free(s.occupied);
    free(s.spill);
    free(s.spilled);
    free(s.stamp);
    free(s.batch);
    free(s.waiting);
    free(s.retry);
    free(s.prefix);
    free(s.addend);
    return NULL;
}

/* sum over i of scalar_i * point_i (points in Montgomery form), batch_max additions per inversion.
 * Returns 0, or -1 when out of memory */
static int EC_(msm)(const EC_(aff) *points, const uint8_t *infinity, const uint64_t *scalars,
                    size_t n, int window_bits, int signed_digits, size_t batch_max, int threads,
                    EC_(jac) *out) {
    int windows = 0;
    int32_t *digits = scalar_digits(scalars, n, window_bits, signed_digits, &windows);
    EC_(jac) *results = malloc((size_t)windows * sizeof *results);
    if (!digits || !results) {
        free(digits);
        free(results);
        return -1;
    }
    size_t buckets = signed_digits ? (size_t)1 << (window_bits - 1) : ((size_t)1 << window_bits) - 1;
    EC_(job) job = {points, infinity, digits, n, windows, buckets, batch_max, results, 0, 0};
    run_workers(EC_(worker), &job, threads < windows ? threads : windows);
    if (!job.failed) {
        EC_(set_inf)(out);
        for (int w = windows - 1; w >= 0; w--) {
            for (int k = 0; k < window_bits; k++) EC_(dbl)(out, out);
            EC_(add)(out, out, &results[w]);
        }
    }
    free(digits);
    free(results);
    return job.failed ? -1 : 0;
}
