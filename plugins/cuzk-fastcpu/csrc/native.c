/* cuzk_fastcpu._native: the C kernels of the fastcpu backend, on buffers in cuzk's canonical
 * layouts. Every function releases the GIL while it computes; MSMs spread windows over threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#include "curves.h"
#include "fr_ops.h"
#include "poseidon.h"
#include "snarkjs.h"
#include "witness.h"

/* ---------------------------------------------------------------- Python bindings */

static int check_len(const Py_buffer *buf, Py_ssize_t want, const char *what) {
    if (buf->len != want) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what, want, buf->len);
        return -1;
    }
    return 0;
}

static void release(Py_buffer **bufs, int count) {
    for (int i = 0; i < count; i++) PyBuffer_Release(bufs[i]);
}

/* the body of msm_g1 and msm_g2; AFF_FQ is the number of Fq elements in one affine point */
#define MSM_BINDING(G, AFF_FQ)                                                                   \
    static PyObject *py_msm_##G(PyObject *self, PyObject *args) {                                \
        Py_buffer bases, infinity, scalars, out;                                                 \
        int window_bits, signed_digits, threads;                                                 \
        Py_ssize_t batch;                                                                        \
        if (!PyArg_ParseTuple(args, "y*y*y*iiniw*", &bases, &infinity, &scalars, &window_bits,   \
                              &signed_digits, &batch, &threads, &out))                           \
            return NULL;                                                                         \
        Py_buffer *all[] = {&bases, &infinity, &scalars, &out};                                  \
        Py_ssize_t n = infinity.len;                                                             \
        if (check_len(&bases, n * (Py_ssize_t)sizeof(G##_aff), "bases") ||                       \
            check_len(&scalars, n * 8 * FR_LIMBS, "scalars") ||                                  \
            check_len(&out, (Py_ssize_t)sizeof(G##_aff), "out")) {                               \
            release(all, 4);                                                                     \
            return NULL;                                                                         \
        }                                                                                        \
        if (window_bits < 1 || window_bits > 30 || batch < 1 || threads < 1) {                   \
            release(all, 4);                                                                     \
            PyErr_SetString(PyExc_ValueError, "need window_bits 1..30, batch >= 1, threads >= 1"); \
            return NULL;                                                                         \
        }                                                                                        \
        int rc = 0, at_infinity = 1;                                                             \
        Py_BEGIN_ALLOW_THREADS;                                                                  \
        G##_aff *points = malloc(((size_t)n + 1) * sizeof *points);                              \
        if (!points) {                                                                           \
            rc = -1;                                                                             \
        } else {                                                                                 \
            const fq *src = (const fq *)bases.buf;                                               \
            fq *dst = (fq *)points;                                                              \
            for (size_t k = 0; k < (size_t)n * (AFF_FQ); k++) fq_to_mont(&dst[k], &src[k]);      \
            G##_jac sum;                                                                         \
            rc = G##_msm(points, (const uint8_t *)infinity.buf, (const uint64_t *)scalars.buf,   \
                         (size_t)n, window_bits, signed_digits, (size_t)batch, threads, &sum);   \
            G##_aff affine;                                                                      \
            if (rc == 0 && !(at_infinity = G##_to_aff(&affine, &sum))) {                         \
                const fq *from = (const fq *)&affine;                                            \
                fq *to = (fq *)out.buf;                                                          \
                for (int k = 0; k < (AFF_FQ); k++) fq_from_mont(&to[k], &from[k]);               \
            }                                                                                    \
            free(points);                                                                        \
        }                                                                                        \
        Py_END_ALLOW_THREADS;                                                                    \
        release(all, 4);                                                                         \
        if (rc) return PyErr_NoMemory();                                                         \
        return PyBool_FromLong(at_infinity);                                                     \
    }

MSM_BINDING(g1, 2)
MSM_BINDING(g2, 4)

/* fixed_base_g1 / fixed_base_g2: scalar_i * base into out (canonical) and infinity */
#define FIXED_BASE_BINDING(G, AFF_FQ)                                                            \
    static PyObject *py_fixed_base_##G(PyObject *self, PyObject *args) {                         \
        Py_buffer base, scalars, out, infinity;                                                  \
        int threads;                                                                             \
        if (!PyArg_ParseTuple(args, "y*y*iw*w*", &base, &scalars, &threads, &out, &infinity))    \
            return NULL;                                                                         \
        Py_buffer *all[] = {&base, &scalars, &out, &infinity};                                   \
        Py_ssize_t n = infinity.len;                                                             \
        if (check_len(&base, (Py_ssize_t)sizeof(G##_aff), "base") ||                             \
            check_len(&scalars, n * 8 * FR_LIMBS, "scalars") ||                                  \
            check_len(&out, n * (Py_ssize_t)sizeof(G##_aff), "out")) {                           \
            release(all, 4);                                                                     \
            return NULL;                                                                         \
        }                                                                                        \
        if (threads < 1) {                                                                       \
            release(all, 4);                                                                     \
            PyErr_SetString(PyExc_ValueError, "need threads >= 1");                              \
            return NULL;                                                                         \
        }                                                                                        \
        int rc;                                                                                  \
        Py_BEGIN_ALLOW_THREADS;                                                                  \
        G##_aff mont_base;                                                                       \
        const fq *from = (const fq *)base.buf;                                                   \
        for (int k = 0; k < (AFF_FQ); k++) fq_to_mont(&((fq *)&mont_base)[k], &from[k]);         \
        G##_aff *points = (G##_aff *)out.buf;                                                    \
        memset(points, 0, (size_t)n * sizeof *points);                                           \
        rc = G##_fixed_base(&mont_base, (const uint64_t *)scalars.buf, (size_t)n, threads,       \
                            points, (uint8_t *)infinity.buf);                                    \
        fq *coords = (fq *)out.buf;                                                              \
        for (size_t k = 0; rc == 0 && k < (size_t)n * (AFF_FQ); k++)                             \
            fq_from_mont(&coords[k], &coords[k]);                                                \
        Py_END_ALLOW_THREADS;                                                                    \
        release(all, 4);                                                                         \
        if (rc) return PyErr_NoMemory();                                                         \
        Py_RETURN_NONE;                                                                          \
    }

FIXED_BASE_BINDING(g1, 2)
FIXED_BASE_BINDING(g2, 4)

/* snarkjs_g1 / snarkjs_g2: zkey points (Montgomery bytes) into canonical out, infinity, status */
#define SNARKJS_BINDING(G, AFF_FQ)                                                               \
    static PyObject *py_snarkjs_##G(PyObject *self, PyObject *args) {                            \
        Py_buffer raw, out, infinity, status;                                                    \
        int threads;                                                                             \
        if (!PyArg_ParseTuple(args, "y*w*w*w*i", &raw, &out, &infinity, &status, &threads))      \
            return NULL;                                                                         \
        Py_buffer *all[] = {&raw, &out, &infinity, &status};                                     \
        Py_ssize_t n = status.len, bytes = n * (AFF_FQ) * (Py_ssize_t)sizeof(fq);                \
        if (check_len(&raw, bytes, "raw") || check_len(&out, bytes, "out") ||                    \
            check_len(&infinity, n, "infinity")) {                                               \
            release(all, 4);                                                                     \
            return NULL;                                                                         \
        }                                                                                        \
        Py_BEGIN_ALLOW_THREADS;                                                                  \
        G##_snarkjs_decode(raw.buf, (size_t)n, out.buf, infinity.buf, status.buf,                \
                           threads < 1 ? 1 : threads);                                           \
        Py_END_ALLOW_THREADS;                                                                    \
        release(all, 4);                                                                         \
        Py_RETURN_NONE;                                                                          \
    }

SNARKJS_BINDING(g1, 2)
SNARKJS_BINDING(g2, 4)

static PyObject *py_fr_ntt(PyObject *self, PyObject *args) {
    Py_buffer values, omega;
    if (!PyArg_ParseTuple(args, "w*y*", &values, &omega)) return NULL;
    Py_buffer *all[] = {&values, &omega};
    size_t n = (size_t)values.len / sizeof(fr);
    int log_n = 0;
    while (((size_t)1 << log_n) < n) log_n++;
    if (check_len(&omega, sizeof(fr), "omega") ||
        check_len(&values, (Py_ssize_t)(((size_t)1 << log_n) * sizeof(fr)), "values")) {
        release(all, 2);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = fr_ntt((fr *)values.buf, log_n, (const fr *)omega.buf);
    Py_END_ALLOW_THREADS;
    release(all, 2);
    if (rc) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_fr_scale_powers(PyObject *self, PyObject *args) {
    Py_buffer values, base, first;
    if (!PyArg_ParseTuple(args, "w*y*y*", &values, &base, &first)) return NULL;
    Py_buffer *all[] = {&values, &base, &first};
    if (check_len(&base, sizeof(fr), "base") || check_len(&first, sizeof(fr), "first")) {
        release(all, 3);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS;
    fr_scale_powers((fr *)values.buf, (size_t)values.len / sizeof(fr), (const fr *)base.buf,
                    (const fr *)first.buf);
    Py_END_ALLOW_THREADS;
    release(all, 3);
    Py_RETURN_NONE;
}

static PyObject *py_fr_quotient(PyObject *self, PyObject *args) {
    Py_buffer a, b, c, scale, out;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &a, &b, &c, &scale, &out)) return NULL;
    Py_buffer *all[] = {&a, &b, &c, &scale, &out};
    if (check_len(&b, a.len, "b") || check_len(&c, a.len, "c") || check_len(&out, a.len, "out") ||
        check_len(&scale, sizeof(fr), "scale")) {
        release(all, 5);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS;
    fr_quotient((fr *)out.buf, (const fr *)a.buf, (const fr *)b.buf, (const fr *)c.buf,
                (size_t)a.len / sizeof(fr), (const fr *)scale.buf);
    Py_END_ALLOW_THREADS;
    release(all, 5);
    Py_RETURN_NONE;
}

static PyObject *py_fr_first_unsatisfied(PyObject *self, PyObject *args) {
    Py_buffer a, b, c;
    if (!PyArg_ParseTuple(args, "y*y*y*", &a, &b, &c)) return NULL;
    Py_buffer *all[] = {&a, &b, &c};
    if (check_len(&b, a.len, "b") || check_len(&c, a.len, "c")) {
        release(all, 3);
        return NULL;
    }
    size_t first;
    Py_BEGIN_ALLOW_THREADS;
    first = fr_first_unsatisfied((const fr *)a.buf, (const fr *)b.buf, (const fr *)c.buf,
                                 (size_t)a.len / sizeof(fr));
    Py_END_ALLOW_THREADS;
    release(all, 3);
    return PyLong_FromSize_t(first);
}

static PyObject *py_fr_poseidon(PyObject *self, PyObject *args) {
    Py_buffer states, table;
    int t, half, partial, threads;
    if (!PyArg_ParseTuple(args, "w*y*iiii", &states, &table, &t, &half, &partial, &threads))
        return NULL;
    Py_buffer *all[] = {&states, &table};
    size_t words = (size_t)t + 2 * (size_t)half * (size_t)(t * t + t) +
                   (size_t)partial * (size_t)(3 * t - 1);
    if (t < 2 || t > POSEIDON_MAX_T || half < 0 || partial < 0 ||
        (size_t)table.len != words * sizeof(fr) || states.len % ((Py_ssize_t)t * sizeof(fr))) {
        release(all, 2);
        PyErr_SetString(PyExc_ValueError, "malformed Poseidon table or states");
        return NULL;
    }
    size_t n = (size_t)states.len / ((size_t)t * sizeof(fr));
    Py_BEGIN_ALLOW_THREADS;
    poseidon_many(states.buf, n, t, half, partial, table.buf, threads);
    Py_END_ALLOW_THREADS;
    release(all, 2);
    Py_RETURN_NONE;
}

/* a CSR matrix from three buffers, or -1 (Python error set) when their sizes disagree */
static int csr_from(csr *out, Py_buffer *indptr, Py_buffer *cols, Py_buffer *coeffs, size_t m,
                    const char *what) {
    out->rows = indptr->len / 8 ? (size_t)indptr->len / 8 - 1 : 0;
    out->nnz = (size_t)cols->len / 8;
    out->indptr = indptr->buf;
    out->cols = cols->buf;
    out->coeffs = coeffs->buf;
    if (indptr->len < 8 || coeffs->len != (Py_ssize_t)(out->nnz * sizeof(fr)) ||
        csr_invalid(out, m)) {
        PyErr_Format(PyExc_ValueError, "%s: malformed CSR matrix over %zu columns", what, m);
        return -1;
    }
    return 0;
}

/* z in Montgomery form, or NULL when out of memory */
static fr *to_mont_copy(const fr *z, size_t m) {
    fr *zm = malloc((m ? m : 1) * sizeof *zm);
    if (zm)
        for (size_t j = 0; j < m; j++) fr_to_mont(&zm[j], &z[j]);
    return zm;
}

static PyObject *py_fr_spmv(PyObject *self, PyObject *args) {
    Py_buffer indptr, cols, coeffs, z, out;
    int threads;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*i", &indptr, &cols, &coeffs, &z, &out, &threads))
        return NULL;
    Py_buffer *all[] = {&indptr, &cols, &coeffs, &z, &out};
    size_t m = (size_t)z.len / sizeof(fr);
    csr mat;
    if (csr_from(&mat, &indptr, &cols, &coeffs, m, "matrix") ||
        check_len(&out, (Py_ssize_t)(mat.rows * sizeof(fr)), "out")) {
        release(all, 5);
        return NULL;
    }
    fr *zm;
    Py_BEGIN_ALLOW_THREADS;
    zm = to_mont_copy((const fr *)z.buf, m);
    if (zm) spmv_threads((fr *)out.buf, &mat, zm, NULL, mat.rows, threads < 1 ? 1 : threads);
    free(zm);
    Py_END_ALLOW_THREADS;
    release(all, 5);
    if (!zm) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* 0 when the listed rows exist and their entries are well formed over m columns */
static int csr_rows_invalid(const int64_t *indptr, const int64_t *cols, size_t rows, size_t nnz,
                            const int64_t *listed, size_t count, size_t m) {
    for (size_t i = 0; i < count; i++) {
        int64_t row = listed[i];
        if (row < 0 || (size_t)row >= rows) return 1;
        int64_t lo = indptr[row], hi = indptr[row + 1];
        if (lo < 0 || hi < lo || (size_t)hi > nnz) return 1;
        for (int64_t k = lo; k < hi; k++)
            if (cols[k] < 0 || (size_t)cols[k] >= m) return 1;
    }
    return 0;
}

static PyObject *py_fr_spmv_rows(PyObject *self, PyObject *args) {
    Py_buffer indptr, cols, coeffs, zm, rows, out;
    int threads;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*w*i", &indptr, &cols, &coeffs, &zm, &rows, &out,
                          &threads))
        return NULL;
    Py_buffer *all[] = {&indptr, &cols, &coeffs, &zm, &rows, &out};
    size_t m = (size_t)zm.len / sizeof(fr), nnz = (size_t)cols.len / 8;
    size_t n_rows = indptr.len / 8 ? (size_t)indptr.len / 8 - 1 : 0;
    size_t count = (size_t)rows.len / 8;
    if (indptr.len < 8 || coeffs.len != (Py_ssize_t)(nnz * sizeof(fr)) ||
        check_len(&out, (Py_ssize_t)(n_rows * sizeof(fr)), "out") ||
        csr_rows_invalid(indptr.buf, cols.buf, n_rows, nnz, rows.buf, count, m)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "malformed CSR rows over %zu columns", m);
        release(all, 6);
        return NULL;
    }
    csr mat = {indptr.buf, cols.buf, coeffs.buf, n_rows, nnz};
    Py_BEGIN_ALLOW_THREADS;
    spmv_threads((fr *)out.buf, &mat, (const fr *)zm.buf, rows.buf, count,
                 threads < 1 ? 1 : threads);
    Py_END_ALLOW_THREADS;
    release(all, 6);
    Py_RETURN_NONE;
}

static PyObject *py_fingerprint(PyObject *self, PyObject *args) {
    Py_buffer words;
    if (!PyArg_ParseTuple(args, "y*", &words)) return NULL;
    uint64_t h;
    Py_BEGIN_ALLOW_THREADS;
    h = words_fingerprint(words.buf, (size_t)words.len / 8);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&words);
    return PyLong_FromUnsignedLongLong(h);
}

/* 0 when `cuts` is "not yet found" (-1), "none" (-2) or cuts 0 = c_0 <= ... <= c_parts = n */
static int cuts_invalid(const int64_t *cuts, int parts, size_t n) {
    if (cuts[0] == CUTS_UNKNOWN || cuts[0] == CUTS_NONE) return 0;
    if (cuts[0] != 0 || cuts[parts] != (int64_t)n) return 1;
    for (int p = 0; p < parts; p++)
        if (cuts[p + 1] < cuts[p]) return 1;
    return 0;
}

/* 0 when every op points at a row, hint, inverse or bit that exists and the levels list ops */
static int program_invalid(const witness_job *job, size_t n_aux, size_t n_hints, size_t n_inv,
                           size_t n_level_ops) {
    size_t computed = 0;
    for (size_t j = 0; j < n_aux; j++) {
        int64_t arg = job->arg[j], extra = job->extra[j];
        switch (job->kind[j]) {
        case OP_HINT:
            if (arg < 0 || (size_t)arg >= n_hints) return 1;
            break;
        case OP_SOLVE:
            if (arg < 0 || (size_t)arg >= job->a.rows || extra < 0 || (size_t)extra >= n_inv)
                return 1;
            computed++;
            break;
        case OP_BIT:
            if (arg < 0 || (size_t)arg >= job->lin.rows || extra < 0 || extra > 254) return 1;
            computed++;
            break;
        default:
            return 1;
        }
    }
    if (computed != n_level_ops || job->level_ptr[0] != 0 ||
        job->level_ptr[job->levels] != (int64_t)n_level_ops)
        return 1;
    for (size_t l = 0; l < job->levels; l++)
        if (job->level_ptr[l + 1] < job->level_ptr[l]) return 1;
    for (size_t k = 0; k < n_level_ops; k++) {
        int64_t j = job->level_ops[k];
        if (j < 0 || (size_t)j >= n_aux || job->kind[j] == OP_HINT) return 1;
    }
    return 0;
}

static PyObject *py_fr_witness(PyObject *self, PyObject *args) {
    Py_buffer z, zm_out, row_a, row_b, hints, kind, arg, extra, inverses, level_ptr, level_ops,
        mats[12], cuts;
    Py_ssize_t n_in;
    int threads;
    if (!PyArg_ParseTuple(args, "w*w*w*w*ny*y*y*y*y*y*y*y*y*y*y*y*y*y*y*y*y*y*y*iw*", &z,
                          &zm_out, &row_a, &row_b, &n_in, &hints, &kind, &arg, &extra, &inverses,
                          &mats[0], &mats[1], &mats[2], &mats[3], &mats[4], &mats[5], &mats[6],
                          &mats[7], &mats[8], &mats[9], &mats[10], &mats[11], &level_ptr,
                          &level_ops, &threads, &cuts))
        return NULL;
    Py_buffer *all[] = {&z,        &zm_out,   &row_a,    &row_b,    &hints,     &kind,
                        &arg,      &extra,    &inverses, &level_ptr, &level_ops, &mats[0],
                        &mats[1],  &mats[2],  &mats[3],  &mats[4],  &mats[5],  &mats[6],
                        &mats[7],  &mats[8],  &mats[9],  &mats[10], &mats[11], &cuts};
    const int count = 24;
    size_t m = (size_t)z.len / sizeof(fr), n_aux = (size_t)kind.len;
    witness_job job = {0};
    csr *targets[] = {&job.a, &job.b, &job.c, &job.lin};
    const char *names[] = {"a", "b", "c", "lin"};
    for (int k = 0; k < 4; k++) {
        if (csr_from(targets[k], &mats[3 * k], &mats[3 * k + 1], &mats[3 * k + 2], m, names[k])) {
            release(all, count);
            return NULL;
        }
    }
    job.z = z.buf;
    job.n_in = (size_t)n_in;
    job.n_aux = n_aux;
    job.kind = kind.buf;
    job.arg = arg.buf;
    job.extra = extra.buf;
    job.level_ptr = level_ptr.buf;
    job.level_ops = level_ops.buf;
    job.levels = level_ptr.len / 8 ? (size_t)level_ptr.len / 8 - 1 : 0;
    size_t n_hints = (size_t)hints.len / sizeof(fr), n_inv = (size_t)inverses.len / sizeof(fr);
    if (n_in < 1 || (size_t)n_in + n_aux != m || arg.len != (Py_ssize_t)(8 * n_aux) ||
        extra.len != (Py_ssize_t)(8 * n_aux) || level_ptr.len < 8 || job.b.rows != job.a.rows ||
        job.c.rows != job.a.rows || zm_out.len != z.len ||
        row_a.len != row_b.len || (row_a.len && (size_t)row_a.len < job.a.rows * sizeof(fr)) ||
        threads < 1 || cuts.len < 16 || cuts_invalid(cuts.buf, (int)(cuts.len / 8 - 1), n_aux) ||
        program_invalid(&job, n_aux, n_hints, n_inv, (size_t)level_ops.len / 8)) {
        release(all, count);
        PyErr_SetString(PyExc_ValueError, "malformed witness program or witness buffer");
        return NULL;
    }
    fr *zm = zm_out.buf, *inv_mont = NULL;
    job.row_a = row_a.len ? row_a.buf : NULL;
    job.row_b = row_b.len ? row_b.buf : NULL;
    int failed;
    Py_BEGIN_ALLOW_THREADS;
    memset(zm, 0, m * sizeof *zm);
    inv_mont = malloc((n_inv ? n_inv : 1) * sizeof *inv_mont);
    if (inv_mont) {
        const fr *hint_values = hints.buf;
        for (size_t j = 0; j < n_aux; j++)
            if (job.kind[j] == OP_HINT) job.z[n_in + j] = hint_values[job.arg[j]];
            else memset(&job.z[n_in + j], 0, sizeof(fr));
        for (size_t j = 0; j < (size_t)n_in + n_aux; j++)
            if (j < (size_t)n_in || job.kind[j - n_in] == OP_HINT) fr_to_mont(&zm[j], &job.z[j]);
        for (size_t k = 0; k < n_inv; k++) fr_to_mont(&inv_mont[k], &((const fr *)inverses.buf)[k]);
        job.zm = zm;
        job.inverses_mont = inv_mont;
        /* a barrier per level costs more than it saves on narrow levels (and far more when the
         * cores are shared): threads only when levels average WITNESS_MIN_WIDTH ops per thread */
        size_t ops = (size_t)level_ops.len / 8, width = job.levels ? ops / job.levels : 0;
        int usable = threads < 1 ? 1 : threads, level_threads = usable;
        while (level_threads > 1 && width < (size_t)level_threads * WITNESS_MIN_WIDTH)
            level_threads--;
        witness_run(&job, usable, level_threads, cuts.buf, (int)(cuts.len / 8 - 1));
    }
    failed = !inv_mont;
    free(inv_mont);
    Py_END_ALLOW_THREADS;
    release(all, count);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *py_fq_kernels(PyObject *self, PyObject *unused) {
    PyObject *names = PyList_New(0);
    for (int k = 0; names && k < FQ_KERNEL_COUNT; k++) {
        if (!fq_kernel_supported(k)) continue;
        PyObject *name = PyUnicode_FromString(FQ_KERNELS[k].name);
        if (!name || PyList_Append(names, name) < 0) Py_CLEAR(names);
        Py_XDECREF(name);
    }
    return names;
}

static PyObject *py_fq_kernel(PyObject *self, PyObject *unused) {
    for (int k = 0; k < FQ_KERNEL_COUNT; k++)
        if (FQ_KERNELS[k].mul == fq_mul_active) return PyUnicode_FromString(FQ_KERNELS[k].name);
    Py_RETURN_NONE;
}

static PyObject *py_use_fq_kernel(PyObject *self, PyObject *args) {
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    for (int k = 0; k < FQ_KERNEL_COUNT; k++) {
        if (strcmp(FQ_KERNELS[k].name, name) == 0 && fq_kernel_supported(k)) {
            fq_mul_active = FQ_KERNELS[k].mul;
            Py_RETURN_NONE;
        }
    }
    return PyErr_Format(PyExc_ValueError, "Fq kernel %s is not available on this CPU", name);
}

static PyMethodDef methods[] = {
    {"fq_kernels", py_fq_kernels, METH_NOARGS, "fq_kernels() -> the Fq kernels this CPU runs"},
    {"fq_kernel", py_fq_kernel, METH_NOARGS, "fq_kernel() -> the Fq kernel in use"},
    {"use_fq_kernel", py_use_fq_kernel, METH_VARARGS,
     "use_fq_kernel(name): switch Fq kernels (not while an MSM runs)"},
    {"msm_g1", py_msm_g1, METH_VARARGS,
     "msm_g1(bases, infinity, scalars, window_bits, signed, batch, threads, out) -> at_infinity"},
    {"msm_g2", py_msm_g2, METH_VARARGS,
     "msm_g2(bases, infinity, scalars, window_bits, signed, batch, threads, out) -> at_infinity"},
    {"fixed_base_g1", py_fixed_base_g1, METH_VARARGS,
     "fixed_base_g1(base, scalars, threads, out, infinity): out[i] = scalars[i] * base"},
    {"fixed_base_g2", py_fixed_base_g2, METH_VARARGS,
     "fixed_base_g2(base, scalars, threads, out, infinity): out[i] = scalars[i] * base"},
    {"snarkjs_g1", py_snarkjs_g1, METH_VARARGS,
     "snarkjs_g1(raw, out, infinity, status, threads): zkey G1 points checked, out of Montgomery"},
    {"snarkjs_g2", py_snarkjs_g2, METH_VARARGS,
     "snarkjs_g2(raw, out, infinity, status, threads): zkey G2 points checked, out of Montgomery"},
    {"fr_ntt", py_fr_ntt, METH_VARARGS, "fr_ntt(values, omega_mont): in-place NTT"},
    {"fr_scale_powers", py_fr_scale_powers, METH_VARARGS,
     "fr_scale_powers(values, base_mont, first_mont): values[i] *= first * base^i"},
    {"fr_quotient", py_fr_quotient, METH_VARARGS,
     "fr_quotient(a, b, c, scale_mont, out): out = (a*b - c)*scale"},
    {"fr_first_unsatisfied", py_fr_first_unsatisfied, METH_VARARGS,
     "fr_first_unsatisfied(a, b, c): the first i with a[i]*b[i] != c[i], or len(a)"},
    {"fr_poseidon", py_fr_poseidon, METH_VARARGS,
     "fr_poseidon(states, table, t, half, partial, threads): every state permuted in place"},
    {"fr_spmv", py_fr_spmv, METH_VARARGS,
     "fr_spmv(indptr, cols, coeffs, z, out, threads): out = M z"},
    {"fr_spmv_rows", py_fr_spmv_rows, METH_VARARGS,
     "fr_spmv_rows(indptr, cols, coeffs, zm, rows, out, threads): out[row] = M_row z for the "
     "rows listed, zm being z in Montgomery form"},
    {"fingerprint", py_fingerprint, METH_VARARGS,
     "fingerprint(buffer) -> a 64-bit fingerprint of its words"},
    {"fr_witness", py_fr_witness, METH_VARARGS,
     "fr_witness(z, zm, row_a, row_b, num_inputs, hints, kind, arg, extra, inverses, "
     "a/b/c/lin indptr, cols, coeffs, level_ptr, level_ops, threads, cuts): run a witness program "
     "into z (zm: z in Montgomery form; row_a, row_b: empty, or A·z and B·z of the solved rows; "
     "cuts: parts + 1 int64, [-1] to find the program's independent runs into it)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "C kernels of the cuzk fastcpu backend", -1, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
