// Evaluate constraint rows on the witness: out = M·z mod r for a CSR matrix M over Fr.
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// Threads a row: SPMV_LANES neighbouring threads take every SPMV_LANES-th entry of one row, so a
// warp's loads of columns and coefficients are contiguous and a row has that many gathers of z
// in flight at once, then add their sums across the lanes. 1 is one thread a row, its entries
// in sequence. The host (backends/gpu/field.py) launches rows × SPMV_LANES threads. 2 by
// measurement (H100, porep-lite d32): 2^20 1.55 → 1.37 ms, 2^24 21.2 → 19.6 ms against 1 lane;
// 4 and 8 are no faster (bench/NOTES.md, rounds 32–33).
#ifndef SPMV_LANES
#define SPMV_LANES 2
#endif
static_assert(SPMV_LANES >= 1 && SPMV_LANES <= 32 && (SPMV_LANES & (SPMV_LANES - 1)) == 0,
              "SPMV_LANES is a power of two up to a warp");
#define FULL_WARP 0xffffffffu

// coeffs are canonical and z_mont in Montgomery form, so each Montgomery product
// coeff·(z·R)·R^-1 is already the canonical coeff·z: no conversion of the output.
// With `same` (else null), a row it marks is not summed: its product is copied from
// `copy_from`, the product of another matrix whose row is the same (A's x·x rows are B's:
// r1cs_rows_equal).
extern "C" __global__ void r1cs_spmv(const int64_t* indptr, const int64_t* cols,
                                     const fr_t* coeffs, const fr_t* z_mont, fr_t* out,
                                     uint64_t rows, const uint8_t* same, const fr_t* copy_from) {
    const uint64_t thread = global_thread();
    const uint64_t row = thread / SPMV_LANES;
    const int lane = static_cast<int>(thread % SPMV_LANES);
    const bool copied = same != nullptr && row < rows && same[row] != 0;
    fr_t acc = fr_t::zero();
    if (row < rows && !copied) {
        for (int64_t e = indptr[row] + lane; e < indptr[row + 1]; e += SPMV_LANES) {
            acc = acc + load_vec(coeffs + e) * load_vec(z_mont + cols[e]);
        }
    }
#if SPMV_LANES > 1
    // Every thread of the warp gets here (the launch's blocks are whole warps, and a row past
    // the end adds zeros), as the shuffles need.
#pragma unroll
    for (int d = SPMV_LANES / 2; d > 0; d /= 2) {
        fr_t other;
#pragma unroll
        for (int i = 0; i < fr_t::N; i++) other.v[i] = __shfl_xor_sync(FULL_WARP, acc.v[i], d);
        acc = acc + other;
    }
#endif
    if (row < rows && lane == 0) store_vec(out + row, copied ? load_vec(copy_from + row) : acc);
}

// same[row] = 1 where row `row` of matrix A and of matrix B hold the same entries in the same
// order (columns and canonical coefficients), else 0: a thread a row, once per pair of matrices.
extern "C" __global__ void r1cs_rows_equal(const int64_t* indptr_a, const int64_t* cols_a,
                                           const fr_t* coeffs_a, const int64_t* indptr_b,
                                           const int64_t* cols_b, const fr_t* coeffs_b,
                                           uint8_t* same, uint64_t rows) {
    const uint64_t row = global_thread();
    if (row >= rows) return;
    const int64_t a = indptr_a[row], b = indptr_b[row], length = indptr_a[row + 1] - a;
    bool equal = length == indptr_b[row + 1] - b;
    for (int64_t e = 0; equal && e < length; e++) {
        equal = cols_a[a + e] == cols_b[b + e] &&
                load_vec(coeffs_a + a + e) == load_vec(coeffs_b + b + e);
    }
    same[row] = equal ? 1 : 0;
}
