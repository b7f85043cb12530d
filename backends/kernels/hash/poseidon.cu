// Many Poseidon permutations, one state per thread, from the core's table of Montgomery
// constants (cuzk_core/gadgets/poseidon/batch.py lays it out): the first round's constants; per
// full round its t x t matrix and the t constants added after it; per partial round A00,
// w (t - 1), v (t - 1) and the t constants added after it (the sparse layers).
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

#ifndef POSEIDON_MAX_T
#define POSEIDON_MAX_T 8
#endif

__device__ __forceinline__ fr_t fifth_power(const fr_t& x) {
    const fr_t x2 = x * x;
    return x2 * x2 * x;
}

// x <- M·sbox(x) + c, with M and c at *w, which moves past them.
__device__ void full_round(fr_t* x, int t, const fr_t*& w) {
    fr_t fifth[POSEIDON_MAX_T];
    for (int i = 0; i < t; i++) fifth[i] = fifth_power(x[i]);
    for (int j = 0; j < t; j++) {
        fr_t acc = load_vec(w + t * t + j);
        for (int k = 0; k < t; k++) acc = acc + load_vec(w + j * t + k) * fifth[k];
        x[j] = acc;
    }
    w += t * t + t;
}

// states: n states of t canonical values, permuted in place; t <= POSEIDON_MAX_T.
extern "C" __global__ void poseidon_permute(fr_t* states, const fr_t* table, uint64_t n, int t,
                                            int half, int partial) {
    const uint64_t i = global_thread();
    if (i >= n) return;
    fr_t x[POSEIDON_MAX_T];
    fr_t* s = states + i * t;
    const fr_t* w = table;
    for (int k = 0; k < t; k++) x[k] = load_vec(s + k).to_mont() + load_vec(w + k);
    w += t;
    for (int r = 0; r < half; r++) full_round(x, t, w);
    for (int r = 0; r < partial; r++) {
        const fr_t y = fifth_power(x[0]);
        fr_t acc = load_vec(w) * y + load_vec(w + 2 * t - 1);
        for (int k = 1; k < t; k++) {
            acc = acc + load_vec(w + k) * x[k];
            x[k] = x[k] + load_vec(w + t + k - 1) * y + load_vec(w + 2 * t - 1 + k);
        }
        x[0] = acc;
        w += 3 * t - 1;
    }
    for (int r = 0; r < half; r++) full_round(x, t, w);
    for (int k = 0; k < t; k++) store_vec(s + k, x[k].from_mont());
}
