// The bucket sums' last steps and the bucket reduction after them, as per-thread steps over
// XYZZ points that the host (backends/gpu/msm.py) launches in order without waiting on any of
// them. Host-callable (CUZK_HD), so tests/conformance/reduce_host.cpp runs this very code
// against cuzk_core's sums.
//
// The first pass leaves partials in slots, one a bucket and range of range_len entries
// (msm_range_slot_counts). When no bucket has more than a few, first_partial_at copies each
// bucket's first partial and range_carry_at adds the rest, a thread a range boundary: a thread
// a bucket would add in nearly every warp, as ~10% of the buckets straddle a boundary, and a
// thread a boundary adds in few warps, most of whose threads add. Else group_sum_at ends
// pippenger.cuh's segmented passes.
//
// The reduction, each window's Σ_j (j+1)·S_j over its buckets S_0 … S_{B−1}:
//
//   1. chunk_sums_at: chunks of m = 2^mu buckets; a running sum from the top gives
//      T_k = Σ_i (i+1)·S_{km+i} and R_k = Σ_i S_{km+i}, and the window sum is
//      Σ_k T_k + m·Σ_k k·R_k. Throughput bound: every thread adds 2m points.
//   2. plane_sum_at: Σ_k k·R_k = Σ_t 2^t·U_t, U_t the sum of the R_k whose index has bit t
//      set. Plane 0 holds the T_k, plane 1 + t the R_k of U_t; each thread adds a few members
//      (found by arithmetic, K chunks padded to K' = 2^bits) into K'/4 partials a plane.
//   3. pair_sum_at: one addition a thread halves every group's partials; the host repeats it
//      until one point a group is left. These passes are latency bound (one thread's addition
//      is ~14 µs in G1 on the H200), and a binary tree is the shortest chain of additions.
//   4. window_term_at: plane 1 + t doubled mu + t times, every plane in its own thread; then
//      pair_sum_at adds each window's planes.
//
// Round 17 measured the chain this replaced (segments of 8 added in turn, then one thread
// doubling and adding a window's 15 planes by Horner's rule) at 1.07 ms of a G1 MSM's 9.1 ms
// of kernels at 2^20 over a 20-bit table, and 3.4 of G2's 26.4 (bench/NOTES.md).
#pragma once

#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "groups.cuh"

// Chunk t = w·chunks + k: T_k into out[t], R_k into out[windows·chunks + t].
template <class F>
CUZK_HD void chunk_sums_at(uint64_t t, const xyzz_t<F>* buckets, uint32_t windows,
                           uint32_t buckets_per_window, uint32_t m, uint32_t chunks,
                           xyzz_t<F>* out) {
    if (t >= (uint64_t)windows * chunks) return;
    const uint32_t w = (uint32_t)(t / chunks), k = (uint32_t)(t % chunks);
    const uint32_t first = k * m;
    const uint32_t last = first + m < buckets_per_window ? first + m : buckets_per_window;
    const xyzz_t<F>* window = buckets + (uint64_t)w * buckets_per_window;
    xyzz_t<F> running = xyzz_t<F>::inf(), total = xyzz_t<F>::inf();
    for (uint32_t j = last; j > first; j--) {
        running.accumulate(load_vec(window + j - 1));
        total.accumulate(running);
    }
    store_vec(out + t, total);
    store_vec(out + (uint64_t)windows * chunks + t, running);
}

// Partials a plane gets from plane_sum_at: K'/4 for K' = 2^bits, at least one.
CUZK_HD uint32_t plane_partials(uint32_t bits) {
    return bits < 2 ? 1u : 1u << (bits - 2);
}

// The chunk index of member x of plane p: x itself in plane 0 (every chunk); in plane 1 + t
// the x-th index with bit t set (x with a one inserted at bit t).
CUZK_HD uint32_t plane_member(uint32_t plane, uint32_t x) {
    if (plane == 0) return x;
    const uint32_t t = plane - 1;
    return ((x >> t) << (t + 1)) | (1u << t) | (x & ((1u << t) - 1));
}

// Partial u = (w·planes + p)·per + i of plane p of window w: the sum of its i-th share of
// members (4 of plane 0, 2 of the others once K' ≥ 4), chunks past K being infinity.
template <class F>
CUZK_HD void plane_sum_at(uint64_t u, const xyzz_t<F>* chunk_sums, uint32_t windows,
                          uint32_t chunks, uint32_t bits, xyzz_t<F>* out) {
    const uint32_t planes = 1 + bits, per = plane_partials(bits);
    if (u >= (uint64_t)windows * planes * per) return;
    const uint32_t i = (uint32_t)(u % per), plane = (uint32_t)(u / per % planes);
    const uint32_t w = (uint32_t)(u / per / planes);
    const uint32_t share = (plane == 0 ? 1u << bits : 1u << (bits - 1)) / per;
    const xyzz_t<F>* src = chunk_sums + (uint64_t)(plane == 0 ? w : windows + w) * chunks;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t x = i * share; x < (i + 1) * share; x++) {
        const uint32_t k = plane_member(plane, x);
        if (k < chunks) acc.accumulate(load_vec(src + k));
    }
    store_vec(out + u, acc);
}

// out[g·⌈size/2⌉ + i] = in[g·size + 2i] + in[g·size + 2i + 1] (the last alone when size is odd).
template <class F>
CUZK_HD void pair_sum_at(uint64_t u, const xyzz_t<F>* in, uint32_t groups, uint32_t size,
                         xyzz_t<F>* out) {
    const uint32_t half = (size + 1) / 2;
    if (u >= (uint64_t)groups * half) return;
    const uint32_t g = (uint32_t)(u / half), i = (uint32_t)(u % half);
    const xyzz_t<F>* src = in + (uint64_t)g * size + 2 * i;
    xyzz_t<F> acc = load_vec(src);
    if (2 * i + 1 < size) acc.accumulate(load_vec(src + 1));
    store_vec(out + u, acc);
}

// Plane p of window w (u = w·(1 + bits) + p) times its weight: 1 for plane 0 (the T_k),
// 2^(mu + t) for plane 1 + t.
template <class F>
CUZK_HD void window_term_at(uint64_t u, const xyzz_t<F>* plane_totals, uint32_t windows,
                            uint32_t bits, uint32_t mu, xyzz_t<F>* out) {
    const uint32_t planes = 1 + bits;
    if (u >= (uint64_t)windows * planes) return;
    const uint32_t plane = (uint32_t)(u % planes);
    xyzz_t<F> p = load_vec(plane_totals + u);
    const uint32_t doublings = plane == 0 ? 0 : mu + plane - 1;
    for (uint32_t d = 0; d < doublings; d++) p.dbl();
    store_vec(out + u, p);
}

// out[g] = the sum of group g's points (infinity when empty), a thread a group: the bucket
// sums' last pass, once no group has more than a few points left.
template <class F>
CUZK_HD void group_sum_at(uint64_t g, const xyzz_t<F>* points, const uint32_t* offsets,
                          uint32_t groups, xyzz_t<F>* out) {
    if (g >= groups) return;
    const uint32_t begin = offsets[g], end = offsets[g + 1];
    xyzz_t<F> acc = begin == end ? xyzz_t<F>::inf() : load_vec(points + begin);
    for (uint32_t e = begin + 1; e < end; e++) acc.accumulate(load_vec(points + e));
    store_vec(out + g, acc);
}

// out[g] = bucket g's first partial (infinity when it has none).
template <class F>
CUZK_HD void first_partial_at(uint64_t g, const xyzz_t<F>* partials, const uint32_t* slots,
                              uint32_t groups, xyzz_t<F>* out) {
    if (g >= groups) return;
    const bool empty = slots[g] == slots[g + 1];
    store_vec(out + g, empty ? xyzz_t<F>::inf() : load_vec(partials + slots[g]));
}

// Thread u for the boundary at entry (u + 1)·range_len: if it is the first boundary inside its
// bucket g, out[g] = the sum of all g's partials (after first_partial_at).
template <class F>
CUZK_HD void range_carry_at(uint64_t u, const xyzz_t<F>* partials,
                            const uint32_t* group_offsets, const uint32_t* slots,
                            uint32_t groups, uint32_t range_len, uint32_t ranges,
                            xyzz_t<F>* out) {
    if (u + 1 >= ranges) return;
    const uint32_t r = (uint32_t)u + 1;
    const uint32_t g = segment_group(group_offsets, groups, r * range_len);
    if (group_offsets[g] / range_len + 1 != r) return;
    xyzz_t<F> acc = load_vec(partials + slots[g]);
    for (uint32_t s = slots[g] + 1; s < slots[g + 1]; s++) acc.accumulate(load_vec(partials + s));
    store_vec(out + g, acc);
}
