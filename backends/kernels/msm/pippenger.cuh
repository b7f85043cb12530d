// Pippenger's bucket method on the GPU, as device templates over the coordinate field F
// (Fq for G1, Fq2 for G2). The host (backends/gpu/msm.py) sequences the steps:
//
//   1. digits / scatter: the signed (or unsigned) base-2^c digits of every scalar, and a
//      counting sort of (window, bucket) ← point index, sign in bit 31;
//   2. sum_affine_ranges, then reduce.cuh's first_partial_at and range_carry_at (or sum_xyzz
//      and group_sum_at): the bucket sums. The first pass gives every thread an equal run of
//      sorted entries, cutting it at bucket boundaries (one crowded bucket, all scalars equal
//      say, spreads over many threads; uneven buckets cost no waiting). A bucket left with a
//      few partials has them added by the thread of its first range boundary; one with more
//      goes through passes of segments of at most seg_len, then one thread a bucket adds what
//      is left. Large passes may take batch_affine.cuh's first pass instead (affine additions
//      sharing inversions), which leaves partials in the same slots' layout;
//   3. reduce.cuh: Σ_j (j+1)·bucket_j per window, by chunked running sums, planes of chunk
//      sums by bit, and binary trees of additions, then out of Montgomery form; the host
//      combines the windows (a few hundred doublings, cheaper on the CPU than on one thread).
//
// For a resident key the host may first build a window table (window_table): every base's
// multiples 2^(c·w)·P. Then all windows' digits fall into one set of buckets, each adding its
// window's multiple, and the single window sum is the MSM: fewer windows (wider ones), one
// bucket reduction, no combination.
#pragma once

#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "../ff/scalar_window.cuh"
#include "groups.cuh"
#include "reduce.cuh"
#include "window_table.cuh"

// Call visit(window, magnitude, negative) for every digit of scalar i in windows [0, windows),
// zeros included (magnitude 0). Signed digits lie in (−2^(c−1), 2^(c−1)]: a digit above
// 2^(c−1) becomes digit − 2^c with a carry into the next window.
template <class Visit>
__device__ __forceinline__ void for_each_window_digit(const uint32_t* scalars, uint64_t i,
                                                      uint32_t c, uint32_t windows,
                                                      bool is_signed, Visit visit) {
    uint32_t k[8];
    const uint4* src = reinterpret_cast<const uint4*>(scalars + 8 * i);
    const uint4 a = src[0], b = src[1];
    k[0] = a.x, k[1] = a.y, k[2] = a.z, k[3] = a.w, k[4] = b.x, k[5] = b.y, k[6] = b.z, k[7] = b.w;
    const uint32_t half = 1u << (c - 1), full = 1u << c;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < windows; w++) {
        const uint32_t d = scalar_window(k, w * c, c) + carry;
        const bool neg = is_signed && d > half;
        carry = neg ? 1 : 0;
        visit(w, neg ? full - d : d, neg);
    }
}

// Segment s's entry range [begin, end) within its group.
struct segment_range {
    uint32_t begin, end;
};

__device__ __forceinline__ bool locate_segment(const uint32_t* group_offsets,
                                               const uint32_t* seg_offsets, uint32_t groups,
                                               uint32_t seg_len, uint32_t s,
                                               segment_range* range) {
    if (s >= seg_offsets[groups]) return false;
    const uint32_t g = segment_group(seg_offsets, groups, s);
    range->begin = group_offsets[g] + (s - seg_offsets[g]) * seg_len;
    range->end = min(range->begin + seg_len, group_offsets[g + 1]);
    return true;
}

// The first bucket-summing pass, balanced: thread t adds entries [t·L, t·L + L) (L = range_len)
// whatever buckets they fall in, storing a partial sum at each bucket boundary into the slot of
// (bucket g, thread t): seg_offsets[g] + t − group_offsets[g] / L (range_slot_counts sizes
// them). Every thread does the same number of additions, so no warp waits on its largest bucket.
template <class F>
__device__ __forceinline__ void sum_affine_ranges(const affine_t<F>* bases,
                                                  const uint32_t* entries,
                                                  const uint32_t* group_offsets,
                                                  const uint32_t* seg_offsets, uint32_t groups,
                                                  uint32_t range_len, xyzz_t<F>* out) {
    const uint32_t t = (uint32_t)global_thread();
    const uint32_t total = group_offsets[groups];
    if ((uint64_t)t * range_len >= total) return;
    const uint32_t begin = t * range_len;
    const uint32_t end = min(begin + range_len, total);
    uint32_t g = segment_group(group_offsets, groups, begin);
    uint32_t next = group_offsets[g + 1];
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t e = begin; e < end; e++) {
        if (e == next) {
            store_vec(out + seg_offsets[g] + t - group_offsets[g] / range_len, acc);
            do {  // skip empty buckets
                next = group_offsets[++g + 1];
            } while (next <= e);
            acc = xyzz_t<F>::inf();
        }
        const uint32_t entry = entries[e];
        acc.accumulate(load_vec(bases + (entry & ~MSM_SIGN_BIT)), (entry & MSM_SIGN_BIT) != 0);
    }
    store_vec(out + seg_offsets[g] + t - group_offsets[g] / range_len, acc);
}

// Segment sums of XYZZ points: segment s of its group's points, one partial a segment.
template <class F>
__device__ __forceinline__ void sum_xyzz(const xyzz_t<F>* points, const uint32_t* group_offsets,
                                         const uint32_t* seg_offsets, uint32_t groups,
                                         uint32_t seg_len, xyzz_t<F>* out) {
    const uint32_t s = (uint32_t)global_thread();
    segment_range range;
    if (!locate_segment(group_offsets, seg_offsets, groups, seg_len, s, &range)) return;
    xyzz_t<F> acc = load_vec(points + range.begin);
    for (uint32_t e = range.begin + 1; e < range.end; e++) acc.accumulate(load_vec(points + e));
    store_vec(out + s, acc);
}

// The window table's thread per base (see window_table.cuh).
template <class F>
__device__ __forceinline__ void window_table(affine_t<F>* table, uint32_t n, uint32_t c,
                                             uint32_t windows) {
    const uint32_t i = (uint32_t)global_thread();
    if (i < n) window_table_entry(table, n, c, windows, i);
}
