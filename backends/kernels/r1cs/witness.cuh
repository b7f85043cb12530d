// The witness program's ops as each thread runs them (r1cs/witness.cu launches them; the host
// harness tests/conformance/witness_host.cpp runs the same code on threads).
//
// The program is thousands of levels of a few hundred ops each (porep-lite 2^20: 6,273 levels
// of ~166), so one launch per level would be launch-bound. witness_levels runs every level in
// one persistent launch instead: a group of WITNESS_OP_LANES lanes per op (a whole warp by
// default; the lanes split the rows' entries), and a grid-wide barrier between levels. A level
// then costs the latency of one op (loads, products, group sums: ~7 µs on the H200) plus the
// barrier's (~1.5 µs); see bench/NOTES.md for the A/B of block sizes, barriers and prefetching
// across the barrier (no gain). The blocks must all be resident at once: the host launches no
// more than fit. When the program splits into independent parts (porep-lite: a challenge each),
// witness_blocks runs them without the grid barrier instead (backends/gpu/witness_schedule.py).
//
// z is kept in Montgomery form. B's and lin's coefficients are canonical (as the SpMV reads
// them), so coeff·z_mont under the Montgomery product is the canonical coeff·z; A's and C's are
// canonical too, or scaled per op (WITNESS_SCALED_ROWS, see run_op).
//
// A body takes the thread's `Lanes`: lane (its lane in its op's group), shuffle_down(x, d)
// (every lane of the group together, as __shfl_down_sync over the group's width),
// load_coherent / store_coherent (z where other multiprocessors write it), sync_block() and
// sync_grid(sync, round) (false when stuck). Below, a "warp" of the kernels' indexing is such
// a group: the host's schedules count groups.
#pragma once

#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// Tuning macros (bench/gpu_witness_variants.py sets them through the driver's defines).
#ifndef WITNESS_THREADS
#define WITNESS_THREADS 128
#endif
#ifndef WITNESS_NARROW_SUMS  // 1: a group sum over only the lanes that hold the op's entries
#define WITNESS_NARROW_SUMS 1
#endif
#ifndef WITNESS_SCALED_ROWS  // 1: A and C rows pre-scaled per op (witness_scale_rows), so a
#define WITNESS_SCALED_ROWS 1  // SOLVE waits on two products in a row, not three
#endif
#ifndef WITNESS_BLOCKS_PER_SM  // witness_blocks: at least this many blocks a multiprocessor
#define WITNESS_BLOCKS_PER_SM 1  // (4: 128 registers, spilling the ops fetched ahead)
#endif
#ifndef WITNESS_OP_LANES  // lanes an op: a warp's 32, or fewer so that one warp runs several
#define WITNESS_OP_LANES 32  // ops at once (porep-lite's rows are ~6 entries)
#endif
static_assert(WITNESS_OP_LANES >= 1 && WITNESS_OP_LANES <= 32 &&
                  (WITNESS_OP_LANES & (WITNESS_OP_LANES - 1)) == 0,
              "WITNESS_OP_LANES: a power of two from 1 to 32");
#ifndef WITNESS_FLAT_ROWS  // 1: an op's A, B and C entries dealt over its lanes as one list, so
#define WITNESS_FLAT_ROWS 0  // a lane makes one product, not one for each of the three rows
#endif
#ifndef WITNESS_TIMING_NO_BARRIER  // timing only (a wrong witness): no grid or block barriers
#define WITNESS_TIMING_NO_BARRIER 0
#endif
#ifndef WITNESS_TIMING_NO_OPS  // timing only (a wrong witness): levels or steps without ops
#define WITNESS_TIMING_NO_OPS 0
#endif
#define OP_BIT 2
#define OP_SBOX 3  // x², x⁴, x⁵ of the B row's x into aux, aux + 1, aux + 2 (witness_chains.py)

#if defined(__CUDACC__)
#define WITNESS_FN __device__ __forceinline__
#else
#define WITNESS_FN inline
#endif

// Thread `thread` of a block (blocks are whole warps): its lane in its op group, its group in
// the block, and the mask of its group's lanes in its warp (the shuffles' participants).
struct op_group {
    uint32_t lane, group, mask;
};

WITNESS_FN op_group op_group_of(uint32_t thread) {
    const uint32_t first_lane = thread & 31 & ~(uint32_t)(WITNESS_OP_LANES - 1);
    return {thread % WITNESS_OP_LANES, thread / WITNESS_OP_LANES,
            (0xffffffffu >> (32 - WITNESS_OP_LANES)) << first_lane};
}

// One op as the kernels read it (built once per program by the host): aux j, kind | extra << 8
// (extra: the inverse's index for SOLVE, the bit for BIT), and the entry ranges of its rows in
// A, B, C (a BIT op's `lin` row in the A slot, B and C empty).
struct alignas(16) op_t {
    int64_t aux, kind_extra, a_begin, a_end, b_begin, b_end, c_begin, c_end;
};

// The rows ops read: A, B, C and `lin` (columns of z, coefficients).
struct witness_rows {
    const int64_t *a_cols, *b_cols, *c_cols, *lin_cols;
    const fr_t *a_coeffs, *b_coeffs, *c_coeffs, *lin_coeffs;
};

// What an op reads before any z: this lane's first entry of each of its three rows, or with
// WITNESS_FLAT_ROWS its first entry of the three rows' entries in a row, and that entry's row.
#if WITNESS_FLAT_ROWS
struct op_start {
    int64_t col;
    fr_t coeff;
    int32_t row;
};
#else
struct op_start {
    int64_t col[3];
    fr_t coeff[3];
};
#endif

WITNESS_FN bool is_bit(const op_t& op) { return (op.kind_extra & 0xff) == OP_BIT; }
WITNESS_FN bool is_sbox(const op_t& op) { return (op.kind_extra & 0xff) == OP_SBOX; }

// Entry e of the op's A, B and C entries in a row: its row (0, 1, 2; -1 past the last) and its
// position in that row's matrix.
WITNESS_FN int flat_entry(const op_t& op, int64_t e, int64_t& index) {
    const int64_t a = op.a_end - op.a_begin, b = op.b_end - op.b_begin;
    if (e < a) {
        index = op.a_begin + e;
        return 0;
    }
    if (e < a + b) {
        index = op.b_begin + e - a;
        return 1;
    }
    index = op.c_begin + e - a - b;
    return index < op.c_end ? 2 : -1;
}

// sum[row] += x, the row known only at run time (selects, so that sum stays in registers).
WITNESS_FN void add_to_row(fr_t (&sum)[3], int row, const fr_t& x) {
#pragma unroll
    for (int m = 0; m < 3; m++) {
        if (m == row) sum[m] = sum[m] + x;
    }
}

// The three rows op reads, as (columns, coefficients) pointers: a BIT op's `lin` row for A.
#define OP_ROWS(op, rows)                                                                  \
    const int64_t* cols[3] = {is_bit(op) ? (rows).lin_cols : (rows).a_cols, (rows).b_cols, \
                              (rows).c_cols};                                              \
    const fr_t* coeffs[3] = {is_bit(op) ? (rows).lin_coeffs : (rows).a_coeffs,             \
                             (rows).b_coeffs, (rows).c_coeffs}

// The first entry of each row, loaded together (one load latency, not three); with
// WITNESS_FLAT_ROWS the one entry.
WITNESS_FN op_start first_entries(const op_t& op, uint32_t lane, const witness_rows& rows) {
    OP_ROWS(op, rows);
#if WITNESS_FLAT_ROWS
    op_start first;
    int64_t index = 0;
    first.row = flat_entry(op, lane, index);
    const int row = first.row < 0 ? 0 : first.row;
    const int64_t* row_cols = row == 0 ? cols[0] : row == 1 ? cols[1] : cols[2];
    const fr_t* row_coeffs = row == 0 ? coeffs[0] : row == 1 ? coeffs[1] : coeffs[2];
    first.col = first.row >= 0 ? row_cols[index] : -1;
    first.coeff = first.row >= 0 ? load_vec(row_coeffs + index) : fr_t::zero();
    return first;
#else
    const int64_t begin[3] = {op.a_begin, op.b_begin, op.c_begin};
    const int64_t end[3] = {op.a_end, op.b_end, op.c_end};
    op_start first;
#pragma unroll
    for (int m = 0; m < 3; m++) {
        const int64_t e = begin[m] + lane;
        first.col[m] = e < end[m] ? cols[m][e] : -1;
        first.coeff[m] = e < end[m] ? load_vec(coeffs[m] + e) : fr_t::zero();
    }
    return first;
#endif
}

// The sum of x over lanes 0 .. 2·half − 1, in lane 0 (half a power of two, at most
// WITNESS_OP_LANES / 2).
template <class Lanes>
WITNESS_FN fr_t warp_sum(const Lanes& lanes, fr_t x, int half) {
    for (int d = half; d > 0; d >>= 1) x = x + lanes.shuffle_down(x, d);
    return x;
}

// z as an op reads and writes it: coherent across multiprocessors (LOCAL false), or plain
// (LOCAL true: only the op's own block writes what it reads).
template <bool LOCAL, class Lanes>
WITNESS_FN fr_t load_z(const Lanes& lanes, const fr_t* p) {
    return LOCAL ? load_vec(p) : lanes.load_coherent(p);
}

template <bool LOCAL, class Lanes>
WITNESS_FN void store_z(const Lanes& lanes, fr_t* p, const fr_t& value) {
    if (LOCAL) {
        store_vec(p, value);
    } else {
        lanes.store_coherent(p, value);
    }
}

// How many lanes a group sum adds, halved: all the op's lanes, or only those that hold one of
// its entries (lanes 0 .. held − 1: its longest row's length, or with WITNESS_FLAT_ROWS its
// entries in all).
WITNESS_FN int warp_sum_half(int64_t held) {
#if WITNESS_NARROW_SUMS
    if (held >= WITNESS_OP_LANES) return WITNESS_OP_LANES / 2;
    if (held < 2) return 0;
#if defined(__CUDA_ARCH__)
    return 1 << (31 - __clz((int)held - 1));
#else
    return 1 << (31 - __builtin_clz((unsigned)held - 1));
#endif
#else
    (void)held;
    return WITNESS_OP_LANES / 2;
#endif
}

// Op `op` by one group of lanes, from its first entries: aux[op.aux] = its value. With
// canonical rows, inv_r3[k] is the k-th inverse times R^3, so that
// ((a·b)·R^-1 − c·R^-1)·inv·R^3·R^-1 = (a·b − c)·inv in Montgomery form. With scaled rows
// (witness_scale_row) A·z is a·inv·R^2 and C·z is c·inv·R, so (A·z)(B·z)·R^-1 − C·z is that
// value with one product fewer.
template <bool LOCAL, class Lanes>
WITNESS_FN void run_op(const Lanes& lanes, const op_t& op, const op_start& first,
                       const witness_rows& rows, const fr_t* inv_r3, const fr_t* z, fr_t* aux) {
    const uint32_t lane = lanes.lane;
    const bool bit = is_bit(op);
    const int64_t begin[3] = {op.a_begin, op.b_begin, op.c_begin};
    const int64_t end[3] = {op.a_end, op.b_end, op.c_end};
    OP_ROWS(op, rows);
#if WITNESS_FLAT_ROWS
    fr_t sum[3] = {fr_t::zero(), fr_t::zero(), fr_t::zero()};
    if (first.col >= 0) {
        add_to_row(sum, first.row, first.coeff * load_z<LOCAL>(lanes, z + first.col));
    }
    const int64_t entries = (end[0] - begin[0]) + (end[1] - begin[1]) + (end[2] - begin[2]);
    // more entries than the op's lanes: the rest, lane-strided
    for (int64_t e = WITNESS_OP_LANES + lane; e < entries; e += WITNESS_OP_LANES) {
        int64_t index = 0;
        const int row = flat_entry(op, e, index);
        const int64_t* row_cols = row == 0 ? cols[0] : row == 1 ? cols[1] : cols[2];
        const fr_t* row_coeffs = row == 0 ? coeffs[0] : row == 1 ? coeffs[1] : coeffs[2];
        const fr_t coeff = load_vec(row_coeffs + index);
        add_to_row(sum, row, coeff * load_z<LOCAL>(lanes, z + row_cols[index]));
    }
    const int half = warp_sum_half(entries);  // entries lie in lanes 0 .. min(entries, lanes) − 1
#else
    fr_t sum[3];
#pragma unroll
    for (int m = 0; m < 3; m++) {
        sum[m] = first.col[m] >= 0 ? first.coeff[m] * load_z<LOCAL>(lanes, z + first.col[m])
                                   : fr_t::zero();
    }
#pragma unroll
    for (int m = 0; m < 3; m++) {  // rows longer than the op's lanes: the rest, lane-strided
        for (int64_t e = begin[m] + WITNESS_OP_LANES + lane; e < end[m]; e += WITNESS_OP_LANES) {
            sum[m] = sum[m] + load_vec(coeffs[m] + e) * load_z<LOCAL>(lanes, z + cols[m][e]);
        }
    }
    int64_t longest = 1;
#pragma unroll
    for (int m = 0; m < 3; m++) longest = longest > end[m] - begin[m] ? longest : end[m] - begin[m];
    const int half = warp_sum_half(longest);
#endif
    if (is_sbox(op)) {  // the B row is x (canonical coefficients: B·z is x itself, not x·R)
        const fr_t x = warp_sum(lanes, sum[1], half).to_mont();  // A and C are empty
        const fr_t x2 = x.sqr();
        const fr_t x4 = x2.sqr();
        if (lane == 0) {
            store_z<LOCAL>(lanes, aux + op.aux, x2);
            store_z<LOCAL>(lanes, aux + op.aux + 1, x4);
            store_z<LOCAL>(lanes, aux + op.aux + 2, x4 * x);
        }
        return;
    }
#pragma unroll
    for (int m = 0; m < 3; m++) sum[m] = warp_sum(lanes, sum[m], half);
    fr_t value;
    if (bit) {
        const uint32_t b = (uint32_t)(op.kind_extra >> 8);
        value = (sum[0].v[b >> 5] >> (b & 31)) & 1 ? fr_t::one() : fr_t::zero();
    } else {  // SOLVE: aux j is still zero, so C·z leaves out its own term
#if WITNESS_SCALED_ROWS
        (void)inv_r3;
        value = sum[0] * sum[1] - sum[2];
#else
        const fr_t inv = load_vec(inv_r3 + (op.kind_extra >> 8));
        value = (sum[0] * sum[1] - sum[2] * fr_t::canonical_one()) * inv;
#endif
    }
    if (lane == 0) store_z<LOCAL>(lanes, aux + op.aux, value);
}

// witness_levels, one thread of warp `warp` of `warps`: ops[level_ptr[l] .. level_ptr[l+1]) is
// level l, a warp an op, every block waiting for all others between levels.
template <class Lanes>
WITNESS_FN void witness_levels_thread(const Lanes& lanes, int64_t warp, int64_t warps,
                                      const witness_rows& rows, const op_t* ops,
                                      const fr_t* inv_r3, const int64_t* level_ptr,
                                      uint64_t num_levels, fr_t* z, uint64_t num_inputs,
                                      uint32_t* sync) {
    fr_t* aux = z + num_inputs;
    for (uint64_t level = 0; level < num_levels; level++) {
        const int64_t last = level_ptr[level + 1];
        for (int64_t i = level_ptr[level] + warp; i < last && !WITNESS_TIMING_NO_OPS; i += warps) {
            const op_t op = load_vec(ops + i);
            run_op<false>(lanes, op, first_entries(op, lanes.lane, rows), rows, inv_r3, z, aux);
        }
#if !WITNESS_TIMING_NO_BARRIER
        if (level + 1 < num_levels && !lanes.sync_grid(sync, (uint32_t)level + 1)) return;
#endif
    }
}

// witness_blocks, one thread of warp `warp` (counted over the launch) of a block with `steps`
// steps: the warp runs ops[warp_ptr[warp] .. warp_ptr[warp + 1]) in order, op i at its block's
// step op_step[i], and the block waits for its warps after each step. Neither an op nor its
// rows depend on z, so a warp fetches them ahead while it runs the op before: an op then waits
// on one load, its z.
template <class Lanes>
WITNESS_FN void witness_blocks_thread(const Lanes& lanes, int64_t warp, int32_t steps,
                                      const witness_rows& rows, const op_t* ops,
                                      const fr_t* inv_r3, const int32_t* op_step,
                                      const int64_t* warp_ptr, fr_t* z, uint64_t num_inputs) {
    const uint32_t lane = lanes.lane;
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
#if !WITNESS_TIMING_NO_OPS
            run_op<true>(lanes, op, first, rows, inv_r3, z, aux);
#endif
            op = next;
            step = next_step;
            first = next_first;
            next = after;
            next_step = after_step;
            i++;
        }
#if !WITNESS_TIMING_NO_BARRIER
        lanes.sync_block();
#endif
    }
}

// The A and C rows op i reads if it is a SOLVE, scaled for WITNESS_SCALED_ROWS: a_out =
// a·inv·R^2 and c_out = c·inv·R for its inverse inv (canonical coefficients in).
WITNESS_FN void witness_scale_row(uint64_t i, const op_t* ops, const fr_t* a_coeffs,
                                  const fr_t* c_coeffs, const fr_t* inv_r3, fr_t* a_out,
                                  fr_t* c_out) {
    const op_t op = load_vec(ops + i);
    if (is_bit(op)) return;
    const fr_t inv = load_vec(inv_r3 + (op.kind_extra >> 8));  // coeff·inv·R^3·R^-1
    for (int64_t e = op.a_begin; e < op.a_end; e++) store_vec(a_out + e, load_vec(a_coeffs + e) * inv);
    for (int64_t e = op.c_begin; e < op.c_end; e++) {
        store_vec(c_out + e, load_vec(c_coeffs + e) * inv * fr_t::canonical_one());
    }
}
