// Host build of ec/fixed_base.cu (the very device code, carry chains emulated by common.cuh),
// driven by test_fixed_base_kernel.py. stdin, all numbers hex: the group (g1 or g2), c, the
// window count, the table's entry count, each entry's words (Montgomery form, as
// backends/gpu/fixed_base.py uploads them), the scalar count and each scalar's 8 words.
// stdout: a line per scalar, its infinity flag and then its affine point's words (canonical).
#include <iostream>
#include <vector>

#include "ec/fixed_base.cu"
#include "group_main.h"

template <class F>
static void run(std::istream& in) {
    uint32_t c, windows, entries, count;
    in >> c >> windows >> entries;
    const size_t words = sizeof(affine_t<F>) / 4;
    std::vector<uint32_t> table(entries * words);
    for (uint32_t& w : table) in >> w;
    in >> count;
    const affine_t<F>* points = reinterpret_cast<const affine_t<F>*>(table.data());
    for (uint32_t i = 0; i < count; i++) {
        uint32_t k[8];
        for (uint32_t& w : k) in >> w;
        bool infinity;
        const affine_t<F> p = fb_point(points, k, c, windows, infinity);
        const uint32_t* out = reinterpret_cast<const uint32_t*>(&p);
        std::cout << (infinity ? 1 : 0);
        for (size_t j = 0; j < words; j++) std::cout << " " << out[j];
        std::cout << "\n";
    }
}

CUZK_GROUP_MAIN(run)
