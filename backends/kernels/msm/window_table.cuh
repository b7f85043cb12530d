// A resident key's window tables: every base's multiples 2^(c·w)·P, built once on the device
// (pippenger.cuh's window_table kernel runs this per base). Host-callable (CUZK_HD, carry chains
// emulated by common.cuh), so tests/conformance/window_table_host.cpp runs this very code.
#pragma once

#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "../ff/inverse.cuh"

#define MSM_MAX_TABLE_WINDOWS 16

// Base i's rows of a window table, in place: table[0, n) holds the bases (affine, Montgomery
// form); rows w·n + i get 2^(c·w)·table[i] for w in [1, windows ≤ MSM_MAX_TABLE_WINDOWS). c
// doublings a window in XYZZ, then all of them back to affine with one inversion (Montgomery's
// trick over the thread's own points). As x = X·ZZZ/(ZZ·ZZZ) and y = Y·ZZ/(ZZ·ZZZ), each row
// first holds (X·ZZZ, Y·ZZ) and is scaled by 1/(ZZ·ZZZ) on the way back, so only the
// denominators stay in local memory. Infinity stays (0, 0). Once per key, off the proving path.
template <class F>
CUZK_HD void window_table_entry(affine_t<F>* table, uint32_t n, uint32_t c, uint32_t windows,
                                uint32_t i) {
    if (windows > MSM_MAX_TABLE_WINDOWS) return;
    F denominator[MSM_MAX_TABLE_WINDOWS], below[MSM_MAX_TABLE_WINDOWS];
    xyzz_t<F> q = xyzz_t<F>::from_affine(load_vec(table + i));
    F running = F::one();  // the product of the denominators of the windows so far
    for (uint32_t w = 1; w < windows; w++) {
        for (uint32_t k = 0; k < c; k++) q.dbl();
        affine_t<F> row = {F::zero(), F::zero()};
        denominator[w] = F::one();
        if (!q.is_inf()) {
            row = {pmul(q.X, q.ZZZ), pmul(q.Y, q.ZZ)};
            denominator[w] = pmul(q.ZZ, q.ZZZ);
        }
        store_vec(table + (uint64_t)w * n + i, row);
        below[w] = running;
        running = pmul(running, denominator[w]);
    }
    F inverse = field_inverse(running);  // 1/Π of the denominators of windows ≤ w, going down
    for (uint32_t w = windows - 1; w >= 1; w--) {
        const F t = pmul(inverse, below[w]);  // 1/denominator[w]
        inverse = pmul(inverse, denominator[w]);
        affine_t<F>* at = table + (uint64_t)w * n + i;
        const affine_t<F> row = load_vec(at);
        store_vec(at, affine_t<F>{pmul(row.x, t), pmul(row.y, t)});
    }
}
