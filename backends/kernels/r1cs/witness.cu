// A compiled circuit's witness program on the device (cuzk_core/witness/program.py), and the
// witness check.
//
// The program is thousands of levels of a few hundred ops each (porep-lite 2^20: 6,273 levels
// of ~166), so one launch per level would be launch-bound. witness_levels runs every level in
// one persistent launch instead: a warp per op (its lanes split the row's entries), and a
// grid-wide barrier between levels. Its blocks must all be resident at once, which the host
// guarantees by launching at most one block of WITNESS_THREADS per multiprocessor.
//
// z is kept in Montgomery form; the matrices' coefficients stay canonical (as the SpMV reads
// them), so coeff·z_mont under the Montgomery product is the canonical coeff·z.
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

#define WITNESS_THREADS 256
#define FULL_WARP 0xffffffffu
#define OP_SOLVE 1
#define OP_BIT 2
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

// The warp's sum of x, in lane 0.
__device__ __forceinline__ fr_t warp_sum(fr_t x) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        fr_t other;
#pragma unroll
        for (int i = 0; i < fr_t::N; i++) other.v[i] = __shfl_down_sync(FULL_WARP, x.v[i], d);
        x = x + other;
    }
    return x;
}

// This lane's share of row `row` of a CSR matrix times z: entries lane, lane + 32, …
__device__ __forceinline__ fr_t lane_dot(const int64_t* ptr, const int64_t* cols,
                                         const fr_t* coeffs, int64_t row, const fr_t* z,
                                         uint32_t lane) {
    fr_t acc = fr_t::zero();
    const int64_t end = ptr[row + 1];
    for (int64_t e = ptr[row] + lane; e < end; e += 32) {
        acc = acc + load_vec(coeffs + e) * load_shared_z(z + cols[e]);
    }
    return acc;
}

__device__ __forceinline__ uint64_t global_timer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Every block of the launch waits here for the others; sync = {arrived, generation, stuck}.
// False when the launch is stuck (a block timed out, or saw another one time out).
__device__ bool grid_barrier(uint32_t* sync) {
    __shared__ bool ok;
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile uint32_t* generation = sync + 1;
        volatile uint32_t* stuck = sync + 2;
        const uint32_t seen = *generation;  // cannot move on before this block arrives
        __threadfence();
        ok = true;
        if (atomicAdd(sync, 1) == gridDim.x - 1) {
            atomicExch(sync, 0);
            __threadfence();
            atomicAdd(sync + 1, 1);
        } else {
            const uint64_t start = global_timer_ns();
            while (*generation == seen) {
                if (*stuck != 0 || global_timer_ns() - start > BARRIER_TIMEOUT_NS) {
                    *stuck = 1;
                    ok = false;
                    break;
                }
            }
        }
        __threadfence();
    }
    __syncthreads();
    return ok;
}

// z[n_in + j] for every non-hint op j, level by level. The rows' tables are CSR (ptr, cols,
// canonical coeffs) of A, B, C and of the `lin` rows BIT ops decompose; inv_r3[k] is the k-th
// inverse times R^3, so that ((a·b)·R^-1 − c·R^-1)·inv·R^3·R^-1 = (a·b − c)·inv in Montgomery
// form with a, b, c canonical.
extern "C" __global__ void __launch_bounds__(WITNESS_THREADS) witness_levels(
    const int64_t* a_ptr, const int64_t* a_cols, const fr_t* a_coeffs,
    const int64_t* b_ptr, const int64_t* b_cols, const fr_t* b_coeffs,
    const int64_t* c_ptr, const int64_t* c_cols, const fr_t* c_coeffs,
    const int64_t* lin_ptr, const int64_t* lin_cols, const fr_t* lin_coeffs,
    const uint8_t* kind, const int64_t* arg, const int64_t* extra, const fr_t* inv_r3,
    const int64_t* level_ptr, const int64_t* level_ops, uint64_t num_levels, fr_t* z,
    uint64_t num_inputs, uint32_t* sync) {
    const uint32_t lane = threadIdx.x & 31;
    const int64_t warp = (int64_t)(global_thread() >> 5);
    const int64_t warps = (int64_t)((gridDim.x * (uint64_t)blockDim.x) >> 5);
    fr_t* aux = z + num_inputs;
    for (uint64_t level = 0; level < num_levels; level++) {
        const int64_t last = level_ptr[level + 1];
        for (int64_t i = level_ptr[level] + warp; i < last; i += warps) {
            const int64_t j = level_ops[i];
            const int64_t row = arg[j];
            fr_t value;
            if (kind[j] == OP_BIT) {
                const fr_t sum = warp_sum(lane_dot(lin_ptr, lin_cols, lin_coeffs, row, z, lane));
                const uint32_t bit = (uint32_t)extra[j];
                value = (sum.v[bit >> 5] >> (bit & 31)) & 1 ? fr_t::one() : fr_t::zero();
            } else {  // SOLVE: aux j is still zero, so C·z leaves out its own term
                const fr_t a = warp_sum(lane_dot(a_ptr, a_cols, a_coeffs, row, z, lane));
                const fr_t b = warp_sum(lane_dot(b_ptr, b_cols, b_coeffs, row, z, lane));
                const fr_t c = warp_sum(lane_dot(c_ptr, c_cols, c_coeffs, row, z, lane));
                value = (a * b - c * fr_t::canonical_one()) * load_vec(inv_r3 + extra[j]);
            }
            if (lane == 0) store_shared_z(aux + j, value);
        }
        if (level + 1 < num_levels && !grid_barrier(sync)) return;
    }
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
