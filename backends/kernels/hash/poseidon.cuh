// The Poseidon permutation of one state, from the core's table of Montgomery constants
// (cuzk_core/gadgets/poseidon/batch.py lays it out): the first round's constants; per full
// round its t x t matrix and the t constants added after it; per partial round A00, w (t - 1),
// v (t - 1) and the t constants added after it (the sparse layers). Host and device code: the
// host harness (tests/conformance/poseidon_host.cpp) runs it as the kernels do.
#pragma once

#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

#ifndef POSEIDON_MAX_T
#define POSEIDON_MAX_T 8
#endif

CUZK_HD fr_t fifth_power(const fr_t& x) {
    const fr_t x2 = x * x;
    return x2 * x2 * x;
}

// The rounds take the width as a template argument T, or T = 0 for one known only at run time
// (t, at most POSEIDON_MAX_T). With T fixed a state and its rounds' loops stay in registers;
// with a runtime width they are arrays on the stack (352 bytes for the 2-to-1 hash) and every
// round waits on local memory. Only the 2-to-1 hash's width is fixed: each fixed width is
// another fully unrolled copy of the rounds to compile.
template <int T>
struct Width {
    static constexpr int capacity = T > 0 ? T : POSEIDON_MAX_T;  // a state's array
};

// x <- M·sbox(x) + c, with M and c at *w, which moves past them.
template <int T>
CUZK_HD void full_round(fr_t (&x)[Width<T>::capacity], int t, const fr_t*& w) {
    const int n = T > 0 ? T : t;
    fr_t fifth[Width<T>::capacity];
#pragma unroll
    for (int i = 0; i < n; i++) fifth[i] = fifth_power(x[i]);
#pragma unroll
    for (int j = 0; j < n; j++) {
        fr_t acc = load_vec(w + n * n + j);
#pragma unroll
        for (int k = 0; k < n; k++) acc = acc + load_vec(w + j * n + k) * fifth[k];
        x[j] = acc;
    }
    w += n * n + n;
}

// x (Montgomery form) <- the permutation of x: the first constants added, then every round.
template <int T>
CUZK_HD void permute(fr_t (&x)[Width<T>::capacity], int t, const fr_t* w, int half,
                     int partial) {
    const int n = T > 0 ? T : t;
#pragma unroll
    for (int k = 0; k < n; k++) x[k] = x[k] + load_vec(w + k);
    w += n;
    for (int r = 0; r < half; r++) full_round<T>(x, t, w);
    for (int r = 0; r < partial; r++) {
        const fr_t y = fifth_power(x[0]);
        fr_t acc = load_vec(w) * y + load_vec(w + 2 * n - 1);
#pragma unroll
        for (int k = 1; k < n; k++) {
            acc = acc + load_vec(w + k) * x[k];
            x[k] = x[k] + load_vec(w + n + k - 1) * y + load_vec(w + 2 * n - 1 + k);
        }
        x[0] = acc;
        w += 3 * n - 1;
    }
    for (int r = 0; r < half; r++) full_round<T>(x, t, w);
}

template <int T>
CUZK_HD void permute_state_of(fr_t* states, uint64_t i, int t, const fr_t* table, int half,
                              int partial) {
    const int n = T > 0 ? T : t;
    fr_t x[Width<T>::capacity];
    fr_t* s = states + i * n;
#pragma unroll
    for (int k = 0; k < n; k++) x[k] = load_vec(s + k).to_mont();
    permute<T>(x, t, table, half, partial);
#pragma unroll
    for (int k = 0; k < n; k++) store_vec(s + k, x[k].from_mont());
}

// State i of states (t canonical values each), permuted in place; 1 <= t <= POSEIDON_MAX_T.
CUZK_HD void permute_state(fr_t* states, uint64_t i, int t, const fr_t* table, int half,
                           int partial) {
    if (t == 3) return permute_state_of<3>(states, i, t, table, half, partial);
    permute_state_of<0>(states, i, t, table, half, partial);
}

// Hash i of a layer over nodes (canonical values): nodes[out + i] = lane 1 of the t = 3
// permutation of (0, nodes[left[i]], nodes[right[i]]).
CUZK_HD void hash2_node(fr_t* nodes, const int64_t* left, const int64_t* right, uint64_t i,
                        uint64_t out, const fr_t* table, int half, int partial) {
    fr_t x[3] = {fr_t::zero(), load_vec(nodes + left[i]).to_mont(),
                 load_vec(nodes + right[i]).to_mont()};
    permute<3>(x, 3, table, half, partial);
    store_vec(nodes + out + i, x[1].from_mont());
}
