// The bucket sums' first pass in affine coordinates: each thread carries `lanes` runs of the
// sorted entries at once and adds one entry to every run a step, all the step's denominators
// sharing one inversion (Montgomery's trick). An affine addition is 5 products and a square
// where the XYZZ mixed addition is 8 and 2; with 512 lanes the inversion is ~1 product an
// addition. On the H200 at 2^24 points and 512 lanes the pass without its merge takes 0.92×
// the XYZZ pass's time in G1 and 0.75× in G2; with it the whole MSM takes 1.04× and 0.86×
// (bench/NOTES.md, round 16). Host-callable (CUZK_HD), so
// tests/conformance/batch_affine_host.cpp runs this very code against cuzk_core's sums.
//
// Lane k of thread t owns the virtual range v = t·lanes + k of range_len entries, so a thread's
// lanes are consecutive ranges and together cover one thread range of lanes·range_len entries:
// one binary search finds the first lane's group and the others walk on from it. The thread
// merges its lanes' pieces of a group before writing it, so the partials are one a group and
// thread range — the slots msm_range_slot_counts sizes with that range length, as few as the
// XYZZ pass writes (one a lane cost 21 ms of later XYZZ additions at 2^24, round 16). Scratch
// is lane-major (k·threads + t) so a step's accesses coalesce.
#pragma once

#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "../ff/inverse.cuh"
#include "groups.cuh"

// What a lane does in a step, decided alike on the way up (denominators) and down (sums).
enum lane_step : uint32_t {
    LANE_IDLE,    // past its range, or the point is infinity
    LANE_COPY,    // the running sum is infinity: it becomes the point
    LANE_CANCEL,  // the point is minus the running sum: infinity
    LANE_ADD,     // λ = (y_P − y_A)/(x_P − x_A)
    LANE_DOUBLE,  // the point is the running sum: λ = 3x²/(2y)
};

// A lane's scratch, lane k of thread t at k·threads + t: the running sum (infinity as (0, 0)),
// its x and y in separate arrays so that the way up reads x alone and y only where a decision
// needs it (a group's end, infinity, equal x); its group, the product of the step's earlier
// denominators, and its head: the piece of its first group when that group began in an
// earlier lane and ended in this one (head_group NO_HEAD when none), merged with the earlier
// lanes' pieces at the end.
template <class F>
struct batch_scratch {
    F* sum_x;
    F* sum_y;
    uint32_t* group;
    F* prefix;
    affine_t<F>* head;
    uint32_t* head_group;
};

constexpr uint32_t NO_HEAD = 0xffffffffu;

template <class F>
CUZK_HD affine_t<F> load_sum(const batch_scratch<F>& scratch, uint64_t at) {
    return {load_vec(scratch.sum_x + at), load_vec(scratch.sum_y + at)};
}

template <class F>
CUZK_HD void store_sum(const batch_scratch<F>& scratch, uint64_t at, const affine_t<F>& sum) {
    store_vec(scratch.sum_x + at, sum.x);
    store_vec(scratch.sum_y + at, sum.y);
}

template <class F>
CUZK_HD lane_step classify(const affine_t<F>& sum, const affine_t<F>& point) {
    if (point.is_inf()) return LANE_IDLE;
    if (sum.is_inf()) return LANE_COPY;
    if (!(sum.x == point.x)) return LANE_ADD;
    return sum.y == point.y ? LANE_DOUBLE : LANE_CANCEL;
}

template <class F>
CUZK_HD F denominator(lane_step step, const affine_t<F>& sum, const affine_t<F>& point) {
    return step == LANE_DOUBLE ? sum.y.dbl() : point.x - sum.x;
}

// An entry's point (its index, its digit's sign), negated when its digit was.
template <class F>
CUZK_HD affine_t<F> entry_point(const affine_t<F>* bases, uint32_t entry) {
    affine_t<F> p = load_vec(bases + (entry & ~MSM_SIGN_BIT));
    if ((entry & MSM_SIGN_BIT) != 0 && !p.is_inf()) p.y = -p.y;
    return p;
}

// The y of an entry's point whose x is known: y, negated when its digit was (and x, y are
// not infinity's zeros).
template <class F>
CUZK_HD F entry_y(const affine_t<F>* bases, uint32_t entry, const F& x) {
    const F y = load_vec(&bases[entry & ~MSM_SIGN_BIT].y);
    return (entry & MSM_SIGN_BIT) != 0 && !(x.is_zero() && y.is_zero()) ? -y : y;
}

// Entry e, or 0 past the end. The sweeps read each lane's entry a lane ahead, so that a lane's
// point is gathered at once instead of after its entry's load.
CUZK_HD uint32_t entry_at(const uint32_t* entries, uint64_t e, uint32_t total) {
    return e < total ? entries[e] : 0u;
}

// Thread t's `lanes` ranges over entries [0, group_offsets[groups]): its piece of each group
// sums into out (XYZZ, as sum_affine_ranges writes them) at slot seg_offsets[g] + t −
// group_offsets[g] / (lanes·range_len).
template <class F>
CUZK_HD void sum_batch_affine_ranges(uint64_t t, uint64_t threads, uint32_t lanes,
                                     const affine_t<F>* bases, const uint32_t* entries,
                                     const uint32_t* group_offsets, const uint32_t* seg_offsets,
                                     uint32_t groups, uint32_t range_len, batch_scratch<F> scratch,
                                     xyzz_t<F>* out) {
    const uint32_t total = group_offsets[groups];
    const uint64_t thread_range = (uint64_t)lanes * range_len;
    const affine_t<F> inf = {F::zero(), F::zero()};
    auto write = [&](uint32_t g, const xyzz_t<F>& piece) {
        store_vec(out + seg_offsets[g] + t - group_offsets[g] / thread_range, piece);
    };
    for (uint32_t s = 0; s < range_len; s++) {
        // Up: set aside the sums whose group ended, and the product of the denominators.
        F run = F::one();
        uint32_t first = 0;  // at s = 0, the group of the previous lane's first entry
        uint32_t ahead = entry_at(entries, t * lanes * range_len + s, total);
        // From the second step on, a lane's group and where it ends are read a lane ahead too.
        uint32_t ahead_group = 0, ahead_end = 0;
        if (s > 0 && t * lanes * range_len + s < total) {
            ahead_group = scratch.group[t];
            ahead_end = group_offsets[ahead_group + 1];
        }
        for (uint32_t k = 0; k < lanes; k++) {
            const uint64_t v = t * lanes + k, at = k * threads + t;
            const uint64_t e = v * range_len + s;
            const uint32_t entry = ahead, lane_group = ahead_group, lane_end = ahead_end;
            const bool next_lane = k + 1 < lanes && e + range_len < total;
            ahead = next_lane ? entries[e + range_len] : 0u;
            if (s > 0 && next_lane) {
                ahead_group = scratch.group[at + threads];
                ahead_end = group_offsets[ahead_group + 1];
            }
            if (e >= total) continue;
            uint32_t g;
            affine_t<F> sum = inf;
            bool y_read = true;  // sum.y is the running sum's (else still zero, not yet read)
            if (s == 0) {
                if (k == 0) {
                    first = segment_group(group_offsets, groups, (uint32_t)e);
                } else {
                    while (group_offsets[first + 1] <= e) first++;
                }
                g = first;
                store_sum(scratch, at, inf);
                scratch.head_group[at] = NO_HEAD;
            } else {
                g = lane_group;
                sum.x = load_vec(scratch.sum_x + at);
                y_read = false;
                if (e == lane_end) {
                    sum.y = load_vec(scratch.sum_y + at);
                    y_read = true;
                    if (group_offsets[g] >= v * range_len) {  // the whole group is this lane's
                        write(g, xyzz_t<F>::from_affine(sum));
                    } else {
                        store_vec(scratch.head + at, sum);
                        scratch.head_group[at] = g;
                    }
                    do {  // skip empty groups
                        g++;
                    } while (group_offsets[g + 1] <= e);
                    sum = inf;
                    store_sum(scratch, at, inf);
                }
            }
            scratch.group[at] = g;
            // The point's x decides the step but at a zero x (infinity, or (0, ±2)) or one equal
            // to the sum's, so its y is gathered only there: 48 of the 96 bytes.
            affine_t<F> point = {load_vec(&bases[entry & ~MSM_SIGN_BIT].x), F::zero()};
            const bool x_met = sum.x == point.x;
            if (point.x.is_zero() || x_met) point.y = entry_y(bases, entry, point.x);
            if (!y_read && (sum.x.is_zero() || x_met)) {
                sum.y = load_vec(scratch.sum_y + at);
            }
            const lane_step step = classify(sum, point);
            store_vec(scratch.prefix + at, run);
            if (step >= LANE_ADD) run = pmul(run, denominator(step, sum, point));
        }
        // Down: each lane's 1/denominator from the running inverse, then its sum.
        F inverse = field_inverse(run);
        ahead = entry_at(entries, ((t + 1) * lanes - 1) * range_len + s, total);
        for (uint32_t k = lanes; k-- > 0;) {
            const uint64_t v = t * lanes + k, at = k * threads + t;
            const uint64_t e = v * range_len + s;
            const uint32_t entry = ahead;
            ahead = k > 0 ? entry_at(entries, e - range_len, total) : 0u;
            if (e >= total) continue;
            // The prefix is loaded with the sum and the point, not in the addition's branch
            // where the first product waits on it (G1 2^24 −0.7 to −1.6%, round 23).
            const affine_t<F> sum = load_sum(scratch, at);
            const affine_t<F> point = entry_point(bases, entry);
            const F prefix = load_vec(scratch.prefix + at);
            const lane_step step = classify(sum, point);
            affine_t<F> next = sum;
            if (step == LANE_COPY) next = point;
            if (step == LANE_CANCEL) next = inf;
            if (step >= LANE_ADD) {
                const F d_inv = pmul(inverse, prefix);
                inverse = pmul(inverse, denominator(step, sum, point));
                const F rise = step == LANE_DOUBLE ? psqr(sum.x) : point.y - sum.y;
                const F scaled = step == LANE_DOUBLE ? rise.dbl() + rise : rise;
                const F lambda = pmul(scaled, d_inv);
                const F x3 = psqr(lambda) - sum.x - point.x;
                next = {x3, pmul(lambda, sum.x - x3) - sum.y};
            }
            store_sum(scratch, at, next);
        }
    }
    // Merge: the lanes in order, each group's pieces into one XYZZ sum. A lane's head closes
    // the group the earlier lanes' sums carried; its running sum goes on to the next lane. The
    // additions are calls: inlined, G1's would hold 204 registers for 150, a block an SM less.
    xyzz_t<F> acc = xyzz_t<F>::inf();
    uint32_t acc_group = NO_HEAD;
    for (uint32_t k = 0; k < lanes; k++) {
        const uint64_t v = t * lanes + k, at = k * threads + t;
        if (v * range_len >= total) break;
        const uint32_t head_group = scratch.head_group[at];
        if (head_group != NO_HEAD) {
            acc.add_affine_call(load_vec(scratch.head + at), false);
            write(head_group, acc);
            acc = xyzz_t<F>::inf();
            acc_group = NO_HEAD;
        }
        const uint32_t g = scratch.group[at];
        if (acc_group != g && acc_group != NO_HEAD) {  // the group ended at the lane's start
            write(acc_group, acc);
            acc = xyzz_t<F>::inf();
        }
        acc_group = g;
        acc.add_affine_call(load_sum(scratch, at), false);
    }
    if (acc_group != NO_HEAD) write(acc_group, acc);
}
