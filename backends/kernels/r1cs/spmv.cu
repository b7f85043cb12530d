// Evaluate constraint rows on the witness: out = M·z mod r for a CSR matrix M over Fr.
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// One thread per row. coeffs are canonical and z_mont in Montgomery form, so each Montgomery
// product coeff·(z·R)·R^-1 is already the canonical coeff·z: no conversion of the output.
extern "C" __global__ void r1cs_spmv(const int64_t* indptr, const int64_t* cols,
                                     const fr_t* coeffs, const fr_t* z_mont, fr_t* out,
                                     uint64_t rows) {
    const uint64_t row = global_thread();
    if (row >= rows) return;
    fr_t acc = fr_t::zero();
    for (int64_t e = indptr[row]; e < indptr[row + 1]; e++) {
        acc = acc + load_vec(coeffs + e) * load_vec(z_mont + cols[e]);
    }
    store_vec(out + row, acc);
}
