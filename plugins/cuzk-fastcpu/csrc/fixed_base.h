/* Fixed-base multiplication, scalar_i * base for many scalars (the setup's key batches), for the
 * group ec.h was just instantiated for. Scalars are cut into signed digits of c bits (c chosen
 * from the batch size, so the table's cost stays a small share), and a table holds
 * d * 2^(c*w) * base for every window w and digit 1 <= d <= 2^(c-1), built window by window with
 * one inversion each (Montgomery's trick). A point costs one addition per nonzero digit, all in
 * affine coordinates: threads take chunks of points and advance the whole chunk one window at a
 * time, sharing one inversion among the chunk's additions, so the results come out affine.
 */
#if !defined(FE) || !defined(FE_) || !defined(EC_)
#error "define FE, FE_ and EC_ before including fixed_base.h"
#endif

#ifndef FB_MAX_BITS
#define FB_MIN_BITS 4
#define FB_MAX_BITS 16
#define FB_CHUNK 512
#define FB_COVERED_BITS (SCALAR_BITS + 1) /* c * windows >= this: no carry out of a scalar < r */

/* the window width for n points: n * windows additions against windows * 2^(c-1) table entries,
 * each entry about three additions' worth (a mixed addition and its share of the inversion) */
static int fb_window_bits(size_t n) {
    int best = FB_MIN_BITS;
    double best_cost = 0;
    for (int c = FB_MIN_BITS; c <= FB_MAX_BITS; c++) {
        double windows = (double)((FB_COVERED_BITS + c - 1) / c);
        double cost = windows * ((double)n + 3.0 * (double)((size_t)1 << (c - 1)));
        if (c == FB_MIN_BITS || cost < best_cost) {
            best = c;
            best_cost = cost;
        }
    }
    return best;
}
#endif

typedef struct {
    int c, windows;
    size_t half; /* 2^(c-1): table entries a window */
    const EC_(aff) *window_base; /* 2^(c*w) * base, one a window */
    EC_(aff) *table;             /* windows rows of `half` points: d * 2^(c*w) * base */
    const uint64_t *scalars;
    size_t n;
    EC_(aff) *out; /* Montgomery form; rows of points at infinity are left as they are */
    uint8_t *infinity;
    size_t next; /* the first window (table build) or point (main pass) nobody has taken */
    int failed;  /* a worker could not allocate its buffers */
} EC_(fb_job);

/* a = 2a, affine, for a point of odd order (so y != 0) */
static void EC_(fb_double_aff)(EC_(aff) *a) {
    FE x2, num, den, lambda, t;
    FE_(sqr)(&x2, &a->x);
    FE_(add)(&num, &x2, &x2);
    FE_(add)(&num, &num, &x2);
    FE_(add)(&den, &a->y, &a->y);
    FE_(inv)(&den, &den);
    FE_(mul)(&lambda, &num, &den);
    FE_(sqr)(&t, &lambda);
    FE_(sub)(&t, &t, &a->x);
    FE_(sub)(&t, &t, &a->x); /* x3 */
    FE_(sub)(&num, &a->x, &t);
    FE_(mul)(&num, &lambda, &num);
    FE_(sub)(&a->y, &num, &a->y);
    a->x = t;
}

/* one window's row of the table: d * B for d = 1..half (B = window_base[w], not infinity and of
 * prime order r > half, so no entry is infinity), to affine with one inversion */
static void EC_(fb_table_row)(const EC_(fb_job) *job, int w, EC_(jac) *jac, FE *prefix) {
    const EC_(aff) *b = &job->window_base[w];
    EC_(aff) *row = job->table + (size_t)w * job->half;
    EC_(from_aff)(&jac[0], b);
    for (size_t d = 1; d < job->half; d++) EC_(madd)(&jac[d], &jac[d - 1], b);
    FE running;
    FE_(set_one)(&running);
    for (size_t d = 0; d < job->half; d++) {
        prefix[d] = running;
        FE_(mul)(&running, &running, &jac[d].Z);
    }
    FE inverse;
    FE_(inv)(&inverse, &running);
    for (size_t d = job->half; d-- > 0;) {
        FE zi, zi2, zi3;
        FE_(mul)(&zi, &inverse, &prefix[d]);
        FE_(mul)(&inverse, &inverse, &jac[d].Z);
        FE_(sqr)(&zi2, &zi);
        FE_(mul)(&zi3, &zi2, &zi);
        FE_(mul)(&row[d].x, &jac[d].X, &zi2);
        FE_(mul)(&row[d].y, &jac[d].Y, &zi3);
    }
}

static void *EC_(fb_table_worker)(void *arg) {
    EC_(fb_job) *job = arg;
    EC_(jac) *jac = malloc(job->half * sizeof *jac);
    FE *prefix = malloc(job->half * sizeof *prefix);
    if (!jac || !prefix) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            size_t w = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
            if (w >= (size_t)job->windows) break;
            EC_(fb_table_row)(job, (int)w, jac, prefix);
        }
    }
    free(jac);
    free(prefix);
    return NULL;
}

typedef struct {
    EC_(aff) acc[FB_CHUNK];
    FE prefix[FB_CHUNK], den[FB_CHUNK];
    uint32_t member[FB_CHUNK];       /* the chunk positions added in this window's batch */
    const EC_(aff) *entry[FB_CHUNK]; /* this window's table entry of each point (NULL: digit 0) */
    uint8_t negative[FB_CHUNK], at_inf[FB_CHUNK], carry[FB_CHUNK];
} EC_(fb_chunk);

/* add window w's digits of the chunk's points into their accumulators: one inversion. The
 * digits and their table entries come first, each entry prefetched (a row of a wide window is
 * larger than the cache, and these loads are random), then the additions. */
static void EC_(fb_window)(const EC_(fb_job) *job, EC_(fb_chunk) *s, size_t start, size_t count,
                           int w) {
    const EC_(aff) *row = job->table + (size_t)w * job->half;
    const int64_t half = (int64_t)job->half;
    for (size_t k = 0; k < count; k++) {
        const uint64_t *scalar = job->scalars + FR_LIMBS * (start + k);
        int64_t d = (int64_t)scalar_bits(scalar, w * job->c, job->c) + s->carry[k];
        s->carry[k] = 0;
        if (d > half) {
            d -= (int64_t)1 << job->c;
            s->carry[k] = 1;
        }
        s->negative[k] = d < 0;
        s->entry[k] = d ? &row[(d < 0 ? -d : d) - 1] : NULL;
        if (d) {
            __builtin_prefetch(s->entry[k]);
            __builtin_prefetch((const char *)s->entry[k] + sizeof(EC_(aff)) - 1);
        }
    }
    size_t members = 0;
    FE running;
    FE_(set_one)(&running);
    for (size_t k = 0; k < count; k++) {
        const EC_(aff) *t = s->entry[k];
        if (!t) continue;
        int negative = s->negative[k];
        EC_(aff) *a = &s->acc[k];
        if (s->at_inf[k]) {
            a->x = t->x;
            if (negative) {
                FE_(set_zero)(&a->y);
                FE_(sub)(&a->y, &a->y, &t->y);
            } else {
                a->y = t->y;
            }
            s->at_inf[k] = 0;
            continue;
        }
        FE den;
        FE_(sub)(&den, &t->x, &a->x);
        if (FE_(is_zero)(&den)) { /* a = ±t: a doubling or infinity, done on its own */
            FE y;
            if (negative)
                FE_(add)(&y, &t->y, &a->y);
            else
                FE_(sub)(&y, &t->y, &a->y);
            if (FE_(is_zero)(&y))
                EC_(fb_double_aff)(a);
            else
                s->at_inf[k] = 1;
            continue;
        }
        s->member[members] = (uint32_t)k;
        s->den[members] = den;
        s->prefix[members] = running;
        FE_(mul)(&running, &running, &den);
        members++;
    }
    if (!members) return;
    FE inverse;
    FE_(inv)(&inverse, &running);
    for (size_t m = members; m-- > 0;) {
        size_t k = s->member[m];
        EC_(aff) *a = &s->acc[k];
        const EC_(aff) *t = s->entry[k];
        FE inv, lambda, x3, u;
        FE_(mul)(&inv, &inverse, &s->prefix[m]);
        FE_(mul)(&inverse, &inverse, &s->den[m]);
        /* negative: lambda' = (t.y + a.y) / (t.x - a.x) = -lambda, so y3 = lambda'(x3 - a.x) - a.y */
        if (s->negative[k])
            FE_(add)(&u, &t->y, &a->y);
        else
            FE_(sub)(&u, &t->y, &a->y);
        FE_(mul)(&lambda, &u, &inv);
        FE_(sqr)(&x3, &lambda);
        FE_(sub)(&x3, &x3, &a->x);
        FE_(sub)(&x3, &x3, &t->x);
        if (s->negative[k])
            FE_(sub)(&u, &x3, &a->x);
        else
            FE_(sub)(&u, &a->x, &x3);
        FE_(mul)(&u, &lambda, &u);
        FE_(sub)(&a->y, &u, &a->y);
        a->x = x3;
    }
}

static void *EC_(fb_worker)(void *arg) {
    EC_(fb_job) *job = arg;
    EC_(fb_chunk) *s = malloc(sizeof *s);
    if (!s) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    for (;;) {
        size_t start = __atomic_fetch_add(&job->next, FB_CHUNK, __ATOMIC_RELAXED);
        if (start >= job->n) break;
        size_t count = job->n - start < FB_CHUNK ? job->n - start : FB_CHUNK;
        memset(s->at_inf, 1, count);
        memset(s->carry, 0, count);
        for (int w = 0; w < job->windows; w++) EC_(fb_window)(job, s, start, count, w);
        for (size_t k = 0; k < count; k++) {
            job->infinity[start + k] = s->at_inf[k];
            if (!s->at_inf[k]) job->out[start + k] = s->acc[k];
        }
    }
    free(s);
    return NULL;
}

/* scalar_i * base for i < n (each scalar below r) into out (Montgomery form) and infinity;
 * -1 when out of memory */
static int EC_(fixed_base)(const EC_(aff) *base, const uint64_t *scalars, size_t n, int threads,
                           EC_(aff) *out, uint8_t *infinity) {
    if (!n) return 0;
    int c = fb_window_bits(n);
    int windows = (FB_COVERED_BITS + c - 1) / c;
    size_t half = (size_t)1 << (c - 1);
    EC_(aff) *window_base = malloc((size_t)windows * sizeof *window_base);
    EC_(aff) *table = malloc((size_t)windows * half * sizeof *table);
    if (!window_base || !table) {
        free(window_base);
        free(table);
        return -1;
    }
    window_base[0] = *base;
    for (int w = 1; w < windows; w++) { /* 2^c * the previous one: c doublings, one inversion */
        EC_(jac) p;
        EC_(from_aff)(&p, &window_base[w - 1]);
        for (int b = 0; b < c; b++) EC_(dbl)(&p, &p);
        EC_(to_aff)(&window_base[w], &p);
    }
    EC_(fb_job) job = {c, windows, half, window_base, table, scalars, n, out, infinity, 0, 0};
    int table_threads = threads < windows ? threads : windows;
    run_workers(EC_(fb_table_worker), &job, table_threads);
    if (!job.failed) {
        job.next = 0;
        run_workers(EC_(fb_worker), &job, threads);
    }
    free(window_base);
    free(table);
    return job.failed ? -1 : 0;
}
