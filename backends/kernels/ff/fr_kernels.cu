// Elementwise Fr kernels on canonical (n, 8) uint32 arrays: Montgomery conversion, the
// quotient step of H, and a row gather (a sparse key's query scalars).
#include "../common_mem.cuh"
#include "bls12_381.cuh"

// x[i] <- x[i]·R mod r (canonical to Montgomery), in place.
extern "C" __global__ void fr_to_mont(fr_t* x, uint64_t n) {
    const uint64_t i = global_thread();
    if (i < n) store_vec(x + i, load_vec(x + i).to_mont());
}

// out[i] <- (a[i]·b[i] − c[i])·scale, canonical in and out; scale_mont is scale·R mod r.
extern "C" __global__ void fr_quotient(const fr_t* a, const fr_t* b, const fr_t* c,
                                       const fr_t* scale_mont, fr_t* out, uint64_t n) {
    const uint64_t i = global_thread();
    if (i >= n) return;
    const fr_t ab = load_vec(a + i).to_mont() * load_vec(b + i);
    store_vec(out + i, (ab - load_vec(c + i)) * *scale_mont);
}

// out[i] <- x[index[i]] for n rows (either form: the values are only moved).
extern "C" __global__ void fr_gather(const fr_t* x, const uint32_t* index, fr_t* out, uint64_t n) {
    const uint64_t i = global_thread();
    if (i < n) store_vec(out + i, load_vec(x + index[i]));
}
