// The sorted bucket entries' layout, shared by the device passes (pippenger.cuh) and the
// host-callable batch-affine pass (batch_affine.cuh): an entry is a point index with its digit's
// sign in bit 31, and groups (buckets, or segments of them) are runs given by their offsets.
#pragma once

#include "../common.cuh"

#define MSM_SIGN_BIT 0x80000000u

// The group g that item s (a segment, or an entry) belongs to: the last g, offsets[g] <= s.
CUZK_HD uint32_t segment_group(const uint32_t* offsets, uint32_t groups, uint32_t s) {
    uint32_t lo = 0, hi = groups;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) >> 1;
        if (offsets[mid] <= s) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}
