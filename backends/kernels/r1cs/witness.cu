// A compiled circuit's witness program on the device (cuzk_core/witness/program.py), and the
// witness check.
//
// The program is thousands of levels of a few hundred ops each (porep-lite 2^20: 6,273 levels
// of ~166), so one launch per level would be launch-bound. witness_levels runs every level in
// one persistent launch instead: a warp per op (its lanes split the rows' entries), and a
// grid-wide barrier between levels. A level then costs the latency of one op (loads, products,
// warp sums: ~7 µs on the H200) plus the barrier's (~1.5 µs); see bench/NOTES.md for the A/B
// of block sizes, barriers and prefetching across the barrier (no gain). The blocks must all be
// resident at once: the host launches no more than fit. When the program splits into
// independent parts (porep-lite: a challenge each), witness_blocks runs them without the grid
// barrier instead.
//
// z is kept in Montgomery form; the matrices' coefficients stay canonical (as the SpMV reads
// them), so coeff·z_mont under the Montgomery product is the canonical coeff·z.
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// Tuning macros (bench/gpu_witness_variants.py sets them through the driver's defines).
#ifndef WITNESS_THREADS
#define WITNESS_THREADS 128
#endif
#ifndef WITNESS_NARROW_SUMS  // 1: a warp sum over only as many lanes as the op's longest row
#define WITNESS_NARROW_SUMS 1
#endif
#ifndef WITNESS_SCALED_ROWS  // 1: A and C rows pre-scaled per op (witness_scale_rows), so a
#define WITNESS_SCALED_ROWS 1  // SOLVE waits on two products in a row, not three
#endif
#ifndef WITNESS_BLOCKS_PER_SM  // witness_blocks: at least this many blocks a multiprocessor
#define WITNESS_BLOCKS_PER_SM 1  // (4: 128 registers, spilling the ops fetched ahead)
#endif
#ifndef WITNESS_TIMING_NO_BARRIER  // timing only (a wrong witness): levels without barriers
#define WITNESS_TIMING_NO_BARRIER 0
#endif
#ifndef WITNESS_TIMING_NO_OPS  // timing only (a wrong witness): barriers without ops
#define WITNESS_TIMING_NO_OPS 0
#endif
#define FULL_WARP 0xffffffffu
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

// The sum of x over lanes 0 .. 2·half − 1, in lane 0 (half a power of two, at most 16).
__device__ __forceinline__ fr_t warp_sum(fr_t x, int half) {
    for (int d = half; d > 0; d >>= 1) {
        fr_t other;
#pragma unroll
        for (int i = 0; i < fr_t::N; i++) other.v[i] = __shfl_down_sync(FULL_WARP, x.v[i], d);
        x = x + other;
    }
    return x;
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

// One op as the kernels read it (built once per program by the host): aux j, kind | extra << 8
// (extra: the inverse's index for SOLVE, the bit for BIT), and the entry ranges of its rows in
// A, B, C (a BIT op's `lin` row in the A slot, B and C empty).
struct __align__(16) op_t {
    int64_t aux, kind_extra, a_begin, a_end, b_begin, b_end, c_begin, c_end;
};

// The rows ops read: A, B, C and `lin` (columns of z, canonical coefficients).
struct witness_rows {
    const int64_t *a_cols, *b_cols, *c_cols, *lin_cols;
    const fr_t *a_coeffs, *b_coeffs, *c_coeffs, *lin_coeffs;
};

// What an op reads before any z: this lane's first entry of each of its three rows.
struct op_start {
    int64_t col[3];
    fr_t coeff[3];
};

__device__ __forceinline__ bool is_bit(const op_t& op) { return (op.kind_extra & 0xff) == OP_BIT; }

// The three rows op reads, as (columns, coefficients) pointers: a BIT op's `lin` row for A.
#define OP_ROWS(op, rows)                                                                  \
    const int64_t* cols[3] = {is_bit(op) ? (rows).lin_cols : (rows).a_cols, (rows).b_cols, \
                              (rows).c_cols};                                              \
    const fr_t* coeffs[3] = {is_bit(op) ? (rows).lin_coeffs : (rows).a_coeffs,             \
                             (rows).b_coeffs, (rows).c_coeffs}

// The first entry of each row, loaded together (one load latency, not three).
__device__ __forceinline__ op_start first_entries(const op_t& op, uint32_t lane,
                                                  const witness_rows& rows) {
    const int64_t begin[3] = {op.a_begin, op.b_begin, op.c_begin};
    const int64_t end[3] = {op.a_end, op.b_end, op.c_end};
    OP_ROWS(op, rows);
    op_start first;
#pragma unroll
    for (int m = 0; m < 3; m++) {
        const int64_t e = begin[m] + lane;
        first.col[m] = e < end[m] ? cols[m][e] : -1;
        first.coeff[m] = e < end[m] ? load_vec(coeffs[m] + e) : fr_t::zero();
    }
    return first;
}

// z as an op reads and writes it: through L2 when other multiprocessors write it during the
// launch (LOCAL false), through L1 when only the op's own block does (LOCAL true).
template <bool LOCAL>
__device__ __forceinline__ fr_t load_z(const fr_t* p) {
    return LOCAL ? load_vec(p) : load_shared_z(p);
}

template <bool LOCAL>
__device__ __forceinline__ void store_z(fr_t* p, const fr_t& value) {
    if (LOCAL) {
        store_vec(p, value);
    } else {
        store_shared_z(p, value);
    }
}

// Op `op` by one warp, from its first entries: aux[op.aux] = its value. With canonical rows,
// inv_r3[k] is the k-th inverse times R^3, so that ((a·b)·R^-1 − c·R^-1)·inv·R^3·R^-1 =
// (a·b − c)·inv in Montgomery form. With scaled rows (witness_scale_rows) A·z is a·inv·R^2 and
// C·z is c·inv·R, so (A·z)(B·z)·R^-1 − C·z is that value with one product fewer.
template <bool LOCAL>
__device__ __forceinline__ void run_op(const op_t& op, const op_start& first, uint32_t lane,
                                       const witness_rows& rows, const fr_t* inv_r3,
                                       const fr_t* z, fr_t* aux) {
    const bool bit = is_bit(op);
    const int64_t begin[3] = {op.a_begin, op.b_begin, op.c_begin};
    const int64_t end[3] = {op.a_end, op.b_end, op.c_end};
    OP_ROWS(op, rows);
    fr_t sum[3];
#pragma unroll
    for (int m = 0; m < 3; m++) {
        sum[m] = first.col[m] >= 0 ? first.coeff[m] * load_z<LOCAL>(z + first.col[m])
                                   : fr_t::zero();
    }
#pragma unroll
    for (int m = 0; m < 3; m++) {  // rows longer than a warp: the rest, lane-strided
        for (int64_t e = begin[m] + 32 + lane; e < end[m]; e += 32) {
            sum[m] = sum[m] + load_vec(coeffs[m] + e) * load_z<LOCAL>(z + cols[m][e]);
        }
    }
#if WITNESS_NARROW_SUMS
    int64_t longest = 1;
#pragma unroll
    for (int m = 0; m < 3; m++) longest = max(longest, end[m] - begin[m]);
    const int half = longest >= 32 ? 16 : longest < 2 ? 0 : 1 << (31 - __clz((int)longest - 1));
#else
    const int half = 16;
#endif
#pragma unroll
    for (int m = 0; m < 3; m++) sum[m] = warp_sum(sum[m], half);
    fr_t value;
    if (bit) {
        const uint32_t b = (uint32_t)(op.kind_extra >> 8);
        value = (sum[0].v[b >> 5] >> (b & 31)) & 1 ? fr_t::one() : fr_t::zero();
    } else {  // SOLVE: aux j is still zero, so C·z leaves out its own term
#if WITNESS_SCALED_ROWS
        value = sum[0] * sum[1] - sum[2];
#else
        const fr_t inv = load_vec(inv_r3 + (op.kind_extra >> 8));
        value = (sum[0] * sum[1] - sum[2] * fr_t::canonical_one()) * inv;
#endif
    }
    if (lane == 0) store_z<LOCAL>(aux + op.aux, value);
}

// z[n_in + j] for every non-hint op j, level by level: ops[level_ptr[l] .. level_ptr[l+1]) is
// level l, a warp an op, every block waiting for all others between levels.
extern "C" __global__ void __launch_bounds__(WITNESS_THREADS) witness_levels(
    const int64_t* a_cols, const fr_t* a_coeffs, const int64_t* b_cols, const fr_t* b_coeffs,
    const int64_t* c_cols, const fr_t* c_coeffs, const int64_t* lin_cols, const fr_t* lin_coeffs,
    const op_t* ops, const fr_t* inv_r3, const int64_t* level_ptr, uint64_t num_levels, fr_t* z,
    uint64_t num_inputs, uint32_t* sync) {
    const witness_rows rows = {a_cols,   b_cols,   c_cols,   lin_cols,
                               a_coeffs, b_coeffs, c_coeffs, lin_coeffs};
    const uint32_t lane = threadIdx.x & 31;
    const int64_t warp = (int64_t)(global_thread() >> 5);
    const int64_t warps = (int64_t)((gridDim.x * (uint64_t)blockDim.x) >> 5);
    fr_t* aux = z + num_inputs;
    for (uint64_t level = 0; level < num_levels; level++) {
        const int64_t last = level_ptr[level + 1];
        for (int64_t i = level_ptr[level] + warp; i < last && !WITNESS_TIMING_NO_OPS; i += warps) {
            const op_t op = load_vec(ops + i);
            run_op<false>(op, first_entries(op, lane, rows), lane, rows, inv_r3, z, aux);
        }
#if !WITNESS_TIMING_NO_BARRIER
        if (level + 1 < num_levels && !grid_barrier(sync, (uint32_t)level + 1)) return;
#endif
    }
}

// The same ops when the program splits into parts that read nothing of each other
// (witness_schedule.py): each block runs its own parts, step by step, waiting only for its own
// warps between steps. Warp w of block b runs ops[warp_ptr[b·W + w] .. warp_ptr[b·W + w + 1])
// in order, op i at its block's step op_step[i]. Neither an op nor its rows depend on z, so a
// warp fetches them ahead while it runs the op before: an op then waits on one load, its z.
extern "C" __global__ void __launch_bounds__(WITNESS_THREADS, WITNESS_BLOCKS_PER_SM) witness_blocks(
    const int64_t* a_cols, const fr_t* a_coeffs, const int64_t* b_cols, const fr_t* b_coeffs,
    const int64_t* c_cols, const fr_t* c_coeffs, const int64_t* lin_cols, const fr_t* lin_coeffs,
    const op_t* ops, const fr_t* inv_r3, const int32_t* op_step, const int64_t* warp_ptr,
    const int32_t* block_steps, fr_t* z, uint64_t num_inputs) {
    const witness_rows rows = {a_cols,   b_cols,   c_cols,   lin_cols,
                               a_coeffs, b_coeffs, c_coeffs, lin_coeffs};
    const uint32_t lane = threadIdx.x & 31;
    const int64_t warp = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int32_t steps = block_steps[blockIdx.x];
    const int64_t last = warp_ptr[warp + 1];
    fr_t* aux = z + num_inputs;
    // A two-deep pipeline: op i runs while op i + 1's first entries and op i + 2 load.
    int64_t i = warp_ptr[warp];
    op_t op = {}, next = {};
    int32_t step = steps, next_step = steps;  // past the last step: no op left
    op_start first = {};
    if (i < last) {
        op = load_vec(ops + i);
        step = op_step[i];
        first = first_entries(op, lane, rows);
    }
    if (i + 1 < last) {
        next = load_vec(ops + i + 1);
        next_step = op_step[i + 1];
    }
    for (int32_t s = 0; s < steps; s++) {
        while (step == s) {
            op_start next_first = {};
            if (next_step < steps) next_first = first_entries(next, lane, rows);
            op_t after = {};
            int32_t after_step = steps;
            if (i + 2 < last) {
                after = load_vec(ops + i + 2);
                after_step = op_step[i + 2];
            }
            run_op<true>(op, first, lane, rows, inv_r3, z, aux);
            op = next;
            step = next_step;
            first = next_first;
            next = after;
            next_step = after_step;
            i++;
        }
        __syncthreads();
    }
}

// The A and C rows a SOLVE op reads, scaled for WITNESS_SCALED_ROWS: a_out = a·inv·R^2 and
// c_out = c·inv·R for op inverse inv (canonical coefficients in, one thread per op; entries of
// rows no op solves are left as they are).
extern "C" __global__ void witness_scale_rows(const op_t* ops, uint64_t count,
                                              const fr_t* a_coeffs, const fr_t* c_coeffs,
                                              const fr_t* inv_r3, fr_t* a_out, fr_t* c_out) {
    const uint64_t i = global_thread();
    if (i >= count) return;
    const op_t op = load_vec(ops + i);
    if (is_bit(op)) return;
    const fr_t inv = load_vec(inv_r3 + (op.kind_extra >> 8));  // coeff·inv·R^3·R^-1
    for (int64_t e = op.a_begin; e < op.a_end; e++) store_vec(a_out + e, load_vec(a_coeffs + e) * inv);
    for (int64_t e = op.c_begin; e < op.c_end; e++) {
        store_vec(c_out + e, load_vec(c_coeffs + e) * inv * fr_t::canonical_one());
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
