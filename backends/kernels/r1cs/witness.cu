// A compiled circuit's witness program on the device (cuzk_core/witness/program.py), and the
// witness check. The ops themselves, and why there are two kernels, are in witness.cuh.
#include "witness.cuh"

// How long a block waits at a barrier before the launch is declared stuck (ns): only reached
// when the blocks are not all resident, which would otherwise hang the device.
#define BARRIER_TIMEOUT_NS 10000000000ull

// z is written by other multiprocessors during the launch: read it from L2, never a stale L1.
__device__ __forceinline__ fr_t load_shared_z(const fr_t* p) {
    fr_t out;
    const uint4* s = reinterpret_cast<const uint4*>(p);
    uint4* d = reinterpret_cast<uint4*>(&out);
    d[0] = __ldcg(s);
    d[1] = __ldcg(s + 1);
    return out;
}

__device__ __forceinline__ void store_shared_z(fr_t* p, const fr_t& value) {
    const uint4* s = reinterpret_cast<const uint4*>(&value);
    uint4* d = reinterpret_cast<uint4*>(p);
    __stcg(d, s[0]);
    __stcg(d + 1, s[1]);
}

__device__ __forceinline__ uint64_t global_timer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void arrive_release(uint32_t* p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

__device__ __forceinline__ uint32_t load_acquire(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Every block of the launch waits here for the others at barrier number `round` (1, 2, …):
// arrivals only ever add up, so round r is complete when r·blocks have arrived. sync =
// {arrived, stuck}; false when the launch is stuck (a block timed out, or saw another one
// time out).
__device__ bool grid_barrier(uint32_t* sync, uint32_t round) {
    __shared__ bool ok;
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile uint32_t* stuck = sync + 1;
        ok = true;
        const uint64_t start = global_timer_ns();
        const uint32_t target = round * gridDim.x;
        __threadfence();
        arrive_release(sync);
        while (load_acquire(sync) < target) {
            if (*stuck != 0 || global_timer_ns() - start > BARRIER_TIMEOUT_NS) {
                *stuck = 1;
                ok = false;
                break;
            }
        }
        __threadfence();
    }
    __syncthreads();
    return ok;
}

// A device thread's Lanes (witness.cuh): its op's group is WITNESS_OP_LANES neighbouring lanes
// of one warp (op_group_of), which shuffle among themselves only (the warp's other groups may
// be at another op).
struct device_lanes {
    uint32_t lane;
    uint32_t group_mask;

    __device__ explicit device_lanes(const op_group& g) : lane(g.lane), group_mask(g.mask) {}

    __device__ __forceinline__ fr_t shuffle_down(const fr_t& x, int d) const {
        fr_t other;
#pragma unroll
        for (int i = 0; i < fr_t::N; i++) {
            other.v[i] = __shfl_down_sync(group_mask, x.v[i], d, WITNESS_OP_LANES);
        }
        return other;
    }
    __device__ __forceinline__ fr_t load_coherent(const fr_t* p) const { return load_shared_z(p); }
    __device__ __forceinline__ void store_coherent(fr_t* p, const fr_t& value) const {
        store_shared_z(p, value);
    }
    __device__ __forceinline__ void sync_block() const { __syncthreads(); }
    __device__ __forceinline__ bool sync_grid(uint32_t* sync, uint32_t round) const {
        return grid_barrier(sync, round);
    }
};

extern "C" __global__ void __launch_bounds__(WITNESS_THREADS) witness_levels(
    const int64_t* a_cols, const fr_t* a_coeffs, const int64_t* b_cols, const fr_t* b_coeffs,
    const int64_t* c_cols, const fr_t* c_coeffs, const int64_t* lin_cols, const fr_t* lin_coeffs,
    const op_t* ops, const fr_t* inv_r3, const int64_t* level_ptr, uint64_t num_levels, fr_t* z,
    uint64_t num_inputs, uint32_t* sync) {
    const witness_rows rows = {a_cols,   b_cols,   c_cols,   lin_cols,
                               a_coeffs, b_coeffs, c_coeffs, lin_coeffs};
    const op_group g = op_group_of(threadIdx.x);
    const int64_t groups_a_block = blockDim.x / WITNESS_OP_LANES;
    witness_levels_thread(device_lanes(g), (int64_t)blockIdx.x * groups_a_block + g.group,
                          gridDim.x * groups_a_block, rows, ops, inv_r3, level_ptr, num_levels, z,
                          num_inputs, sync);
}

extern "C" __global__ void __launch_bounds__(WITNESS_THREADS, WITNESS_BLOCKS_PER_SM)
    witness_blocks(const int64_t* a_cols, const fr_t* a_coeffs, const int64_t* b_cols,
                   const fr_t* b_coeffs, const int64_t* c_cols, const fr_t* c_coeffs,
                   const int64_t* lin_cols, const fr_t* lin_coeffs, const op_t* ops,
                   const fr_t* inv_r3, const int32_t* op_step, const int64_t* warp_ptr,
                   const int32_t* block_steps, fr_t* z, uint64_t num_inputs) {
    const witness_rows rows = {a_cols,   b_cols,   c_cols,   lin_cols,
                               a_coeffs, b_coeffs, c_coeffs, lin_coeffs};
    const op_group g = op_group_of(threadIdx.x);
    const int64_t group = (int64_t)blockIdx.x * (blockDim.x / WITNESS_OP_LANES) + g.group;
    witness_blocks_thread(device_lanes(g), group, block_steps[blockIdx.x], rows, ops, inv_r3,
                          op_step, warp_ptr, z, num_inputs);
}

extern "C" __global__ void witness_scale_rows(const op_t* ops, uint64_t count,
                                              const fr_t* a_coeffs, const fr_t* c_coeffs,
                                              const fr_t* inv_r3, fr_t* a_out, fr_t* c_out) {
    const uint64_t i = global_thread();
    if (i < count) witness_scale_row(i, ops, a_coeffs, c_coeffs, inv_r3, a_out, c_out);
}

// z[0 .. n_in) = inputs and z[n_in + hint_aux[h]] = hints[hint_slot[h]], into Montgomery form
// (z zeroed by the caller): one thread per input, then one per hint.
extern "C" __global__ void witness_start(const fr_t* inputs, uint64_t num_inputs,
                                         const fr_t* hints, const int64_t* hint_aux,
                                         const int64_t* hint_slot, uint64_t num_hints, fr_t* z) {
    const uint64_t i = global_thread();
    if (i < num_inputs) {
        store_vec(z + i, load_vec(inputs + i).to_mont());
    } else if (i < num_inputs + num_hints) {
        const uint64_t h = i - num_inputs;
        store_vec(z + num_inputs + hint_aux[h], load_vec(hints + hint_slot[h]).to_mont());
    }
}

// *first = min(*first, every row i with a[i]·b[i] ≠ c[i]) for canonical a, b, c; the caller
// sets *first to n (no row fails) before the launch.
extern "C" __global__ void witness_first_unsatisfied(const fr_t* a, const fr_t* b, const fr_t* c,
                                                     uint64_t n, unsigned long long* first) {
    const uint64_t i = global_thread();
    if (i >= n) return;
    const fr_t ab = load_vec(a + i).to_mont() * load_vec(b + i);
    if (!(ab == load_vec(c + i))) atomicMin(first, (unsigned long long)i);
}

// x[i] <- x[i]·R^-1 mod r (Montgomery to canonical), in place.
extern "C" __global__ void witness_from_mont(fr_t* x, uint64_t n) {
    const uint64_t i = global_thread();
    if (i < n) store_vec(x + i, load_vec(x + i).from_mont());
}
