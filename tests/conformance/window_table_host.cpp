// Host build of msm/window_table.cuh (the very device code, carry chains emulated by
// common.cuh), driven by test_window_table_kernel.py. stdin, all numbers hex: the group (g1 or
// g2), c, the window count, the base count and each base's affine words (Montgomery form, as
// the GPU backends upload them; zero for infinity). stdout: a line per table row, window-major
// (row w·n + i is 2^(c·w)·base i), its affine words in Montgomery form.
#include <iostream>
#include <vector>

#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "group_main.h"
#include "msm/window_table.cuh"

typedef fp2_t<fq_t> fq2_t;

template <class F>
static void run(std::istream& in) {
    uint32_t c, windows, n;
    in >> c >> windows >> n;
    const size_t words = sizeof(affine_t<F>) / 4;
    std::vector<uint32_t> table(size_t(windows) * n * words);
    for (size_t k = 0; k < n * words; k++) in >> table[k];
    affine_t<F>* rows = reinterpret_cast<affine_t<F>*>(table.data());
    for (uint32_t i = 0; i < n; i++) window_table_entry(rows, n, c, windows, i);
    for (size_t row = 0; row < size_t(windows) * n; row++) {
        for (size_t j = 0; j < words; j++) std::cout << (j ? " " : "") << table[row * words + j];
        std::cout << "\n";
    }
}

CUZK_GROUP_MAIN(run)
