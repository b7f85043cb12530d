// Evaluate constraint rows on the witness: out = M·z mod r for a CSR matrix M over Fr.
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// Threads a row: SPMV_LANES neighbouring threads take every SPMV_LANES-th entry of one row, so a
// warp's loads of columns and coefficients are contiguous and a row has that many gathers of z
// in flight at once, then add their sums across the lanes. 1 is one thread a row, its entries
// in sequence. The host (backends/gpu/field.py) launches rows × SPMV_LANES threads. 4 by
// measurement over the distinct rows by length (r1cs_spmv_rows; H100, porep-lite d32): 2^20
// 0.50 → 0.48 ms, 2^22 2.51 → 2.34, 2^24 10.18 → 9.34 against 2; over every row in order
// (r1cs_spmv, the fallback) 4 costs 3% at 2^22 and 2^24 (bench/NOTES.md, rounds 32–33, 39).
#ifndef SPMV_LANES
#define SPMV_LANES 4
#endif
static_assert(SPMV_LANES >= 1 && SPMV_LANES <= 32 && (SPMV_LANES & (SPMV_LANES - 1)) == 0,
              "SPMV_LANES is a power of two up to a warp");
#define FULL_WARP 0xffffffffu

// One CSR matrix on the device, as the host passes it: indptr, cols, coeffs.
struct csr_t {
    const int64_t* indptr;
    const int64_t* cols;
    const fr_t* coeffs;
};

// Matrix m's (0 A, 1 B, 2 C) value of a, b, c: selects, so no array of the three is made in
// local memory.
template <typename T>
__device__ __forceinline__ T of_matrix(uint64_t m, T a, T b, T c) {
    return m == 0 ? a : m == 1 ? b : c;
}

// coeffs are canonical and z_mont in Montgomery form, so each Montgomery product
// coeff·(z·R)·R^-1 is already the canonical coeff·z: no conversion of the output.
// This lane's share of row `row`'s sum, added across the row's lanes. Every thread of the warp
// calls it (the launch's blocks are whole warps, and a row past the end adds zeros), as the
// shuffles need.
__device__ __forceinline__ fr_t row_sum(csr_t matrix, const fr_t* z_mont, uint64_t row, bool live,
                                        int lane) {
    fr_t acc = fr_t::zero();
    if (live) {
        for (int64_t e = matrix.indptr[row] + lane; e < matrix.indptr[row + 1]; e += SPMV_LANES) {
            acc = acc + load_vec(matrix.coeffs + e) * load_vec(z_mont + matrix.cols[e]);
        }
    }
#if SPMV_LANES > 1
#pragma unroll
    for (int d = SPMV_LANES / 2; d > 0; d /= 2) {
        fr_t other;
#pragma unroll
        for (int i = 0; i < fr_t::N; i++) other.v[i] = __shfl_xor_sync(FULL_WARP, acc.v[i], d);
        acc = acc + other;
    }
#endif
    return acc;
}

// out = M·z, row by row.
extern "C" __global__ void r1cs_spmv(const int64_t* indptr, const int64_t* cols,
                                     const fr_t* coeffs, const fr_t* z_mont, fr_t* out,
                                     uint64_t rows) {
    const uint64_t thread = global_thread();
    const uint64_t row = thread / SPMV_LANES;
    const int lane = static_cast<int>(thread % SPMV_LANES);
    const fr_t acc = row_sum({indptr, cols, coeffs}, z_mont, row, row < rows, lane);
    if (row < rows && lane == 0) store_vec(out + row, acc);
}

// A·z, B·z and C·z in one launch, over a list of row ids (matrix m's row r is m·rows + r):
// out[id] for each of order[0 … count), out holding A·z, then B·z, then C·z. The prover's list
// holds each distinct row once, by length, so a warp's rows take alike time (in one matrix's
// order a warp waits for its longest row: porep-lite's lengths run from 1 to hundreds).
extern "C" __global__ void r1cs_spmv_rows(
    const int64_t* pa, const int64_t* ca, const fr_t* ka, const int64_t* pb, const int64_t* cb,
    const fr_t* kb, const int64_t* pc, const int64_t* cc, const fr_t* kc, const fr_t* z_mont,
    fr_t* out, const uint32_t* order, uint64_t count, uint64_t rows) {
    const uint64_t thread = global_thread();
    const uint64_t k = thread / SPMV_LANES;
    const int lane = static_cast<int>(thread % SPMV_LANES);
    const uint64_t id = k < count ? order[k] : 0;
    const csr_t matrix = of_matrix<csr_t>(id / rows, {pa, ca, ka}, {pb, cb, kb}, {pc, cc, kc});
    const fr_t acc = row_sum(matrix, z_mont, id % rows, k < count, lane);
    if (k < count && lane == 0) store_vec(out + id, acc);
}

// ---------------------------------------------------------------- distinct rows
// The rows of A, B and C as one list of ids (matrix m's row r is m·rows + r). A row's first is
// the least id holding the same entries in the same order (columns and canonical coefficients):
// its product is summed once (r1cs_spmv_rows) and copied to the rest. In an R1CS one linear
// combination is often A's and B's row of a square x·x and B's row of x⁴·x (porep-lite: 65%
// of the entries).
// Found once per matrices: r1cs_rows_insert puts every row's hash in an open-addressing table,
// keeping the least id with that hash; r1cs_rows_first checks each row against that id's row
// entry for entry (a hash collision leaves a row its own first).

// Tests only: a mask on the rows' hashes, so that few bits make collisions (the check entry
// for entry then keeps rows apart).
#ifndef R1CS_ROW_HASH_MASK
#define R1CS_ROW_HASH_MASK 0xffffffffffffffffull
#endif

// murmur3's 64-bit finalizer.
__device__ __forceinline__ uint64_t row_mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

// A row's hash over its length, columns and coefficient words; never 0 (an empty slot).
__device__ uint64_t row_hash(csr_t matrix, uint64_t row) {
    const int64_t begin = matrix.indptr[row], end = matrix.indptr[row + 1];
    uint64_t h = row_mix((uint64_t)(end - begin) + 0x9e3779b97f4a7c15ull);
    for (int64_t e = begin; e < end; e++) {
        h = row_mix(h ^ (uint64_t)matrix.cols[e]);
        const fr_t k = load_vec(matrix.coeffs + e);
#pragma unroll
        for (int i = 0; i < fr_t::N; i += 2) {
            h = row_mix(h ^ ((uint64_t)k.v[i + 1] << 32 | k.v[i]));
        }
    }
    h &= R1CS_ROW_HASH_MASK;
    return h != 0 ? h : 1;
}

// Row ids first_id … first_id + rows − 1 (one matrix): hashes[id] = the row's hash, and into the
// table (capacity mask + 1, a power of two, zeroed): keys[slot] = a hash, least[slot] = the
// largest ~id of the rows with it (so ~least[slot] is the least id).
extern "C" __global__ void r1cs_rows_insert(const int64_t* indptr, const int64_t* cols,
                                            const fr_t* coeffs, uint64_t rows, uint32_t first_id,
                                            unsigned long long* hashes, unsigned long long* keys,
                                            uint32_t* least, uint64_t mask) {
    const uint64_t row = global_thread();
    if (row >= rows) return;
    const uint32_t id = first_id + (uint32_t)row;
    const unsigned long long h = row_hash({indptr, cols, coeffs}, row);
    hashes[id] = h;
    // Plain reads first: a slot's key never changes once set, and least only grows, so a row
    // of a common hash (every empty row) mostly finds both done without an atomic.
    for (uint64_t slot = h & mask;; slot = (slot + 1) & mask) {
        unsigned long long seen = keys[slot];
        if (seen == 0) seen = atomicCAS(keys + slot, 0ull, h);
        if (seen == 0 || seen == h) {
            if (least[slot] < ~id) atomicMax(least + slot, ~id);
            return;
        }
    }
}

// Whether row ra of matrix x and row rb of matrix y hold the same entries.
__device__ bool rows_same(csr_t x, uint64_t ra, csr_t y, uint64_t rb) {
    const int64_t a = x.indptr[ra], b = y.indptr[rb], length = x.indptr[ra + 1] - a;
    bool same = length == y.indptr[rb + 1] - b;
    for (int64_t e = 0; same && e < length; e++) {
        same = x.cols[a + e] == y.cols[b + e] &&
               load_vec(x.coeffs + a + e) == load_vec(y.coeffs + b + e);
    }
    return same;
}

// first[id] for the 3·rows ids of A, B, C (after r1cs_rows_insert of all three).
extern "C" __global__ void r1cs_rows_first(
    const int64_t* pa, const int64_t* ca, const fr_t* ka, const int64_t* pb, const int64_t* cb,
    const fr_t* kb, const int64_t* pc, const int64_t* cc, const fr_t* kc, uint64_t rows,
    const unsigned long long* hashes, const unsigned long long* keys, const uint32_t* least,
    uint64_t mask, uint32_t* first) {
    const uint64_t id = global_thread();
    if (id >= 3 * rows) return;
    const unsigned long long h = hashes[id];
    uint64_t slot = h & mask;
    while (keys[slot] != h) slot = (slot + 1) & mask;
    const uint64_t f = ~least[slot];
    const csr_t a{pa, ca, ka}, b{pb, cb, kb}, c{pc, cc, kc};
    const bool repeat = f != id && rows_same(of_matrix(id / rows, a, b, c), id % rows,
                                             of_matrix(f / rows, a, b, c), f % rows);
    first[id] = (uint32_t)(repeat ? f : id);
}

// out[id] = out[first[id]] for every row whose first is another (after r1cs_spmv_rows over the
// first rows; a first row's own first is itself, so nothing read here is written here).
extern "C" __global__ void r1cs_copy_repeats(fr_t* out, const uint32_t* first, uint64_t total) {
    const uint64_t id = global_thread();
    if (id >= total) return;
    const uint32_t f = first[id];
    if (f != id) store_vec(out + id, load_vec(out + f));
}

// ---------------------------------------------------------------- the summed rows' order
// r1cs_spmv_rows' list: the ids that are their own first, by their row's length, ids
// ascending within a length. Compacted by util/scan.cu, then sorted by a stable radix sort of
// one bit a pass (backends/gpu/field.py's order_by_length).

// flags[id] = 1 where id is its own first.
extern "C" __global__ void r1cs_summed_flags(const uint32_t* first, uint64_t total,
                                             uint32_t* flags) {
    const uint64_t id = global_thread();
    if (id < total) flags[id] = first[id] == id ? 1u : 0u;
}

// keys[k] = the length of row ids[k] (matrix id / rows), at most 0xFFFF: rows that long fill
// whole warps whatever their order.
extern "C" __global__ void r1cs_row_lengths(const uint32_t* ids, uint64_t count,
                                            const int64_t* pa, const int64_t* pb,
                                            const int64_t* pc, uint64_t rows, uint32_t* keys) {
    const uint64_t k = global_thread();
    if (k >= count) return;
    const uint64_t id = ids[k], r = id % rows;
    const int64_t* indptr = of_matrix(id / rows, pa, pb, pc);
    const int64_t length = indptr[r + 1] - indptr[r];
    keys[k] = (uint32_t)(length < 0xFFFF ? length : 0xFFFF);
}

// flags[k] = 1 where bit `bit` of keys[k] is clear.
extern "C" __global__ void r1cs_key_bit_clear(const uint32_t* keys, uint64_t count, uint32_t bit,
                                              uint32_t* flags) {
    const uint64_t k = global_thread();
    if (k < count) flags[k] = (keys[k] >> bit) & 1u ? 0u : 1u;
}

// One pass: (ids, keys) split by bit `bit` of the keys, clear bits first, each side in its
// order. zeros: the inclusive sums of r1cs_key_bit_clear's flags, so zeros[k] clear bits up
// to k and k − zeros[k] set ones before a set one at k.
extern "C" __global__ void r1cs_split_by_bit(const uint32_t* ids, const uint32_t* keys,
                                             const uint32_t* zeros, uint64_t count, uint32_t bit,
                                             uint32_t* ids_out, uint32_t* keys_out) {
    const uint64_t k = global_thread();
    if (k >= count) return;
    const uint32_t key = keys[k];
    const uint64_t to = (key >> bit) & 1u ? zeros[count - 1] + k - zeros[k] : zeros[k] - 1;
    ids_out[to] = ids[k];
    keys_out[to] = key;
}
