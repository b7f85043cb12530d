// Array primitives over uint32 the host side of the MSM needs between its kernels: inclusive
// prefix sums, a maximum, and stream compaction. Written here rather than taken from CuPy or
// PyCUDA, so that both GPU backends run the same code.
#include "../common_mem.cuh"

#define SCAN_THREADS 256
#define SCAN_ITEMS 4
// Elements one block scans (the host's SCAN_TILE).
#define SCAN_TILE (SCAN_THREADS * SCAN_ITEMS)
#define FULL_WARP 0xffffffffu

// Inclusive sum of x over the lanes 0 .. this one of the warp.
__device__ __forceinline__ uint32_t warp_inclusive_sum(uint32_t x) {
    const uint32_t lane = threadIdx.x & 31;
#pragma unroll
    for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t other = __shfl_up_sync(FULL_WARP, x, d);
        if (lane >= d) x += other;
    }
    return x;
}

// out[i] = in[t·SCAN_TILE] + … + in[i] within each tile t (in == out is allowed); the tile's
// total goes to tile_sums[t] unless tile_sums is null. Launched with SCAN_THREADS per block.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
    scan_tiles_u32(const uint32_t* in, uint32_t* out, uint32_t* tile_sums, uint64_t n) {
    __shared__ uint32_t warp_sums[SCAN_THREADS / 32];
    const uint64_t first = (uint64_t)blockIdx.x * SCAN_TILE + (uint64_t)threadIdx.x * SCAN_ITEMS;
    uint32_t run[SCAN_ITEMS];
    uint32_t total = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; k++) {
        total += first + k < n ? in[first + k] : 0u;
        run[k] = total;
    }
    const uint32_t warp = threadIdx.x >> 5;
    const uint32_t inclusive = warp_inclusive_sum(total);
    if ((threadIdx.x & 31) == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const uint32_t lane = threadIdx.x;
        const uint32_t sums = warp_inclusive_sum(lane < SCAN_THREADS / 32 ? warp_sums[lane] : 0u);
        if (lane < SCAN_THREADS / 32) warp_sums[lane] = sums;
    }
    __syncthreads();
    const uint32_t before = inclusive - total + (warp > 0 ? warp_sums[warp - 1] : 0u);
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; k++) {
        if (first + k < n) out[first + k] = before + run[k];
    }
    if (tile_sums != nullptr && threadIdx.x == 0) {
        tile_sums[blockIdx.x] = warp_sums[SCAN_THREADS / 32 - 1];
    }
}

// data[i] += tile_prefix[t − 1] for i in tile t ≥ 1 (tile_prefix: inclusive sums of the tile
// totals): the carry between tiles. One thread per element from the second tile on.
extern "C" __global__ void scan_add_u32(uint32_t* data, const uint32_t* tile_prefix, uint64_t n) {
    const uint64_t i = global_thread() + SCAN_TILE;
    if (i < n) data[i] += tile_prefix[i / SCAN_TILE - 1];
}

// *out = max(*out, in[0 .. n)), out zeroed by the caller: a warp maximum, then one atomic.
extern "C" __global__ void max_u32(const uint32_t* in, uint64_t n, uint32_t* out) {
    const uint64_t i = global_thread();
    uint32_t value = i < n ? in[i] : 0u;
#pragma unroll
    for (uint32_t d = 16; d > 0; d >>= 1) {
        const uint32_t other = __shfl_down_sync(FULL_WARP, value, d);
        value = other > value ? other : value;
    }
    if ((threadIdx.x & 31) == 0 && value != 0) atomicMax(out, value);
}

// out[positions[i] − 1] = i for every i < n whose flag is set (positions: inclusive sums of the
// flags), so the indices keep their order.
extern "C" __global__ void compact_u32(const uint32_t* flags, const uint32_t* positions,
                                       uint64_t n, uint32_t* out) {
    const uint64_t i = global_thread();
    if (i < n && flags[i] != 0) out[positions[i] - 1] = (uint32_t)i;
}
