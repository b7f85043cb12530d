// MSM kernels for G1 (over Fq) and G2 (over Fq2), instantiated from msm/pippenger.cuh, plus
// the curve-independent digit, segment and 0/1-split kernels, the conversion of uploaded
// bases to Montgomery form and the window tables of a resident key's bases.
#include "../ff/bls12_381.cuh"
#include "../ff/fp2.cuh"
#include "batch_affine.cuh"
#include "pippenger.cuh"

typedef fp2_t<fq_t> fq2_t;

// words[i] (an Fq element per 12 words) <- Montgomery form, for n elements, in place.
extern "C" __global__ void fq_to_mont(fq_t* words, uint64_t n) {
    const uint64_t i = global_thread();
    if (i < n) store_vec(words + i, load_vec(words + i).to_mont());
}

// Where digit (window w, magnitude mag) of scalar i goes: its bucket, and the point it adds.
// A table holds the bases' multiples 2^(c·j)·P for its table_windows windows j (window-major,
// table_rows rows a window): window w adds multiple w mod table_windows into the buckets of set
// w / table_windows, so a table of every window has one set of buckets. Without a table
// (table_rows = 0, table_windows = 1) each window has its own buckets and adds base i.
__device__ __forceinline__ uint64_t digit_bucket(uint32_t w, uint32_t mag, uint32_t buckets,
                                                 uint32_t table_windows) {
    const uint32_t set = table_windows == 1 ? w : w / table_windows;  // no division when plain
    return (uint64_t)set * buckets + mag - 1;
}

__device__ __forceinline__ uint32_t digit_point(uint32_t w, uint32_t i, uint32_t table_rows,
                                                uint32_t table_windows) {
    return table_rows == 0 ? i : (w % table_windows) * table_rows + i;
}

// The counting sort's first step, every digit computed once: digits[w·n + i] = the magnitude
// of scalar i's digit in window w | its sign in bit 31 (0 for a zero digit or a skipped
// scalar), and counts[bucket] += 1 for every nonzero one. The scatter then reads a window's
// digits (4 bytes a scalar) instead of recomputing every window up to it from the scalars
// (32 bytes a scalar, a launch for each few windows).
extern "C" __global__ void msm_digits(const uint32_t* scalars, const uint8_t* skip, uint32_t n,
                                      uint32_t c, uint32_t windows, uint32_t buckets,
                                      int is_signed, uint32_t table_windows, uint32_t* counts,
                                      uint32_t* digits) {
    const uint32_t i = (uint32_t)global_thread();
    if (i >= n) return;
    if (skip != nullptr && skip[i]) {
        for (uint32_t w = 0; w < windows; w++) digits[(uint64_t)w * n + i] = 0;
        return;
    }
    for_each_window_digit(scalars, i, c, windows, is_signed != 0,
                          [&](uint32_t w, uint32_t mag, bool neg) {
                              digits[(uint64_t)w * n + i] = mag | (neg ? MSM_SIGN_BIT : 0u);
                              if (mag != 0) {
                                  atomicAdd(counts + digit_bucket(w, mag, buckets, table_windows),
                                            1u);
                              }
                          });
}

// entries[cursor[bucket]++] = point | sign for every nonzero digit in windows [first, last): the
// counting sort's scatter. The host passes a few windows at a time so that the buckets' write
// fronts (a 32-byte sector each) stay in L2 rather than being written back half-filled.
extern "C" __global__ void msm_scatter(const uint32_t* digits, uint32_t n, uint32_t first,
                                       uint32_t last, uint32_t buckets, uint32_t table_rows,
                                       uint32_t table_windows, uint32_t* cursor,
                                       uint32_t* entries) {
    const uint32_t i = (uint32_t)global_thread();
    if (i >= n) return;
    for (uint32_t w = first; w < last; w++) {
        const uint32_t digit = digits[(uint64_t)w * n + i];
        const uint32_t mag = digit & ~MSM_SIGN_BIT;
        if (mag == 0) continue;
        const uint32_t pos =
            atomicAdd(cursor + digit_bucket(w, mag, buckets, table_windows), 1u);
        entries[pos] = digit_point(w, i, table_rows, table_windows) | (digit & MSM_SIGN_BIT);
    }
}

// seg_counts[g] = ⌈(offsets[g + 1] − offsets[g]) / seg_len⌉: the segments of each group of a
// segmented sum (the host's prefix sum of them gives the segments' offsets).
extern "C" __global__ void msm_segment_counts(const uint32_t* offsets, uint32_t groups,
                                              uint32_t seg_len, uint32_t* seg_counts) {
    const uint32_t g = (uint32_t)global_thread();
    if (g < groups) seg_counts[g] = (offsets[g + 1] - offsets[g] + seg_len - 1) / seg_len;
}

// counts[g] = the partial-sum slots group g gets from the first pass: one per range of
// range_len entries it overlaps (none when empty); a range is a thread's run in
// sum_affine_ranges, its lanes' runs together in sum_batch_affine_ranges.
extern "C" __global__ void msm_range_slot_counts(const uint32_t* offsets, uint32_t groups,
                                                 uint32_t range_len, uint32_t* counts) {
    const uint32_t g = (uint32_t)global_thread();
    if (g >= groups) return;
    const uint32_t begin = offsets[g], end = offsets[g + 1];
    counts[g] = end == begin ? 0 : (end - 1) / range_len - begin / range_len + 1;
}

// The 0/1 split: ones[i] = 1 where scalar i (8 words) equals 1 and is not skipped; skip_out[i]
// marks it skipped for the Pippenger pass, as are the points skip already names.
extern "C" __global__ void msm_mark_ones(const uint32_t* scalars, const uint8_t* skip, uint32_t n,
                                         uint32_t* ones, uint8_t* skip_out) {
    const uint32_t i = (uint32_t)global_thread();
    if (i >= n) return;
    const uint32_t* s = scalars + (uint64_t)i * 8;
    bool one = s[0] == 1;
#pragma unroll
    for (int k = 1; k < 8; k++) one = one && s[k] == 0;
    const bool skipped = skip != nullptr && skip[i] != 0;
    one = one && !skipped;
    ones[i] = one ? 1u : 0u;
    skip_out[i] = (one || skipped) ? 1 : 0;
}

// Per group: the bucket-sum passes, msm_add_into_* (acc[i] += more[i], merging a chunked MSM's
// passes into one set of buckets), the reduction's steps, the canonical form and the tables.
#define CUZK_MSM_KERNELS(G, F)                                                                  \
    extern "C" __global__ void msm_sum_affine_##G(                                              \
        const affine_t<F>* bases, const uint32_t* entries, const uint32_t* group_offsets,      \
        const uint32_t* seg_offsets, uint32_t groups, uint32_t range_len, xyzz_t<F>* out) {     \
        sum_affine_ranges<F>(bases, entries, group_offsets, seg_offsets, groups, range_len, out); \
    }                                                                                           \
    extern "C" __global__ void msm_sum_batch_affine_##G(                                        \
        const affine_t<F>* bases, const uint32_t* entries, const uint32_t* group_offsets,      \
        const uint32_t* seg_offsets, uint32_t groups, uint32_t range_len, uint32_t lanes,      \
        affine_t<F>* sums, uint32_t* sum_groups, F* prefix, affine_t<F>* heads,                \
        uint32_t* head_groups, xyzz_t<F>* out) {                                                \
        const uint64_t threads = (uint64_t)gridDim.x * blockDim.x;                              \
        F* sum_x = reinterpret_cast<F*>(sums); /* then the y of as many lanes */                \
        sum_batch_affine_ranges<F>(                                                             \
            global_thread(), threads, lanes, bases, entries, group_offsets, seg_offsets,         \
            groups, range_len, {sum_x, sum_x + threads * lanes, sum_groups, prefix, heads,       \
                                head_groups},                                                   \
            out);                                                                               \
    }                                                                                           \
    extern "C" __global__ void msm_sum_xyzz_##G(                                                \
        const xyzz_t<F>* points, const uint32_t* group_offsets, const uint32_t* seg_offsets,    \
        uint32_t groups, uint32_t seg_len, xyzz_t<F>* out) {                                    \
        sum_xyzz<F>(points, group_offsets, seg_offsets, groups, seg_len, out);                  \
    }                                                                                           \
    extern "C" __global__ void msm_first_partials_##G(const xyzz_t<F>* partials,                \
                                                      const uint32_t* slots, uint32_t groups,   \
                                                      xyzz_t<F>* out) {                         \
        first_partial_at<F>(global_thread(), partials, slots, groups, out);                     \
    }                                                                                           \
    extern "C" __global__ void msm_range_carries_##G(                                           \
        const xyzz_t<F>* partials, const uint32_t* group_offsets, const uint32_t* slots,        \
        uint32_t groups, uint32_t range_len, uint32_t ranges, xyzz_t<F>* out) {                 \
        range_carry_at<F>(global_thread(), partials, group_offsets, slots, groups, range_len,   \
                          ranges, out);                                                         \
    }                                                                                           \
    extern "C" __global__ void msm_add_into_##G(xyzz_t<F>* acc, const xyzz_t<F>* more,           \
                                                uint32_t count) {                               \
        const uint64_t i = global_thread();                                                     \
        if (i >= count) return;                                                                 \
        xyzz_t<F> sum = load_vec(acc + i);                                                      \
        sum.accumulate(load_vec(more + i));                                                     \
        store_vec(acc + i, sum);                                                                \
    }                                                                                           \
    extern "C" __global__ void msm_group_sums_##G(const xyzz_t<F>* points,                      \
                                                  const uint32_t* offsets, uint32_t groups,     \
                                                  xyzz_t<F>* out) {                             \
        group_sum_at<F>(global_thread(), points, offsets, groups, out);                         \
    }                                                                                           \
    extern "C" __global__ void msm_chunk_sums_##G(const xyzz_t<F>* buckets, uint32_t windows,   \
                                                  uint32_t buckets_per_window, uint32_t m,      \
                                                  uint32_t chunks, xyzz_t<F>* out) {            \
        chunk_sums_at<F>(global_thread(), buckets, windows, buckets_per_window, m, chunks, out); \
    }                                                                                           \
    extern "C" __global__ void msm_plane_sums_##G(const xyzz_t<F>* chunk_sums, uint32_t windows, \
                                                  uint32_t chunks, uint32_t bits,               \
                                                  xyzz_t<F>* out) {                             \
        plane_sum_at<F>(global_thread(), chunk_sums, windows, chunks, bits, out);               \
    }                                                                                           \
    extern "C" __global__ void msm_pair_sums_##G(const xyzz_t<F>* in, uint32_t groups,          \
                                                 uint32_t size, xyzz_t<F>* out) {               \
        pair_sum_at<F>(global_thread(), in, groups, size, out);                                 \
    }                                                                                           \
    extern "C" __global__ void msm_window_terms_##G(const xyzz_t<F>* plane_totals,              \
                                                    uint32_t windows, uint32_t bits,            \
                                                    uint32_t mu, xyzz_t<F>* out) {              \
        window_term_at<F>(global_thread(), plane_totals, windows, bits, mu, out);               \
    }                                                                                           \
    extern "C" __global__ void msm_canonical_##G(const xyzz_t<F>* points, uint32_t count,       \
                                                 xyzz_t<F>* out) {                              \
        const uint64_t i = global_thread();                                                     \
        if (i < count) store_vec(out + i, load_vec(points + i).from_mont());                    \
    }                                                                                           \
    extern "C" __global__ void msm_window_table_##G(affine_t<F>* table, uint32_t n, uint32_t c,   \
                                                    uint32_t windows) {                         \
        window_table<F>(table, n, c, windows);                                                  \
    }                                                                                           \

CUZK_MSM_KERNELS(g1, fq_t)
CUZK_MSM_KERNELS(g2, fq2_t)
