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

// x <- M·sbox(x) + c, with M and c at *w, which moves past them.
CUZK_HD void full_round(fr_t* x, int t, const fr_t*& w) {
    fr_t fifth[POSEIDON_MAX_T];
    for (int i = 0; i < t; i++) fifth[i] = fifth_power(x[i]);
    for (int j = 0; j < t; j++) {
        fr_t acc = load_vec(w + t * t + j);
        for (int k = 0; k < t; k++) acc = acc + load_vec(w + j * t + k) * fifth[k];
        x[j] = acc;
    }
    w += t * t + t;
}

// x (Montgomery form) <- the permutation of x: the first constants added, then every round.
CUZK_HD void permute(fr_t* x, int t, const fr_t* w, int half, int partial) {
    for (int k = 0; k < t; k++) x[k] = x[k] + load_vec(w + k);
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
}

// State i of states (t canonical values each), permuted in place; t <= POSEIDON_MAX_T.
CUZK_HD void permute_state(fr_t* states, uint64_t i, int t, const fr_t* table, int half,
                           int partial) {
    fr_t x[POSEIDON_MAX_T];
    fr_t* s = states + i * t;
    for (int k = 0; k < t; k++) x[k] = load_vec(s + k).to_mont();
    permute(x, t, table, half, partial);
    for (int k = 0; k < t; k++) store_vec(s + k, x[k].from_mont());
}

// Hash i of a layer over nodes (canonical values): nodes[out + i] = lane 1 of the t = 3
// permutation of (0, nodes[left[i]], nodes[right[i]]).
CUZK_HD void hash2_node(fr_t* nodes, const int64_t* left, const int64_t* right, uint64_t i,
                        uint64_t out, const fr_t* table, int half, int partial) {
    fr_t x[3] = {fr_t::zero(), load_vec(nodes + left[i]).to_mont(),
                 load_vec(nodes + right[i]).to_mont()};
    permute(x, 3, table, half, partial);
    store_vec(nodes + out + i, x[1].from_mont());
}
