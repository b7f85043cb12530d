// Host build of ec/snarkjs_points.cu (the very device code, carry chains emulated by common.cuh),
// driven by test_snarkjs_points_kernel.py. stdin, all numbers hex: the group (g1 or g2), the
// point count and each point's words as they lie in a zkey. stdout: a line per point, its
// status, its infinity flag and then its canonical words.
#include <iostream>
#include <vector>

#include "ec/snarkjs_points.cu"
#include "group_main.h"

template <class F>
static void run(std::istream& in) {
    const size_t words = 2 * sizeof(F) / 4;
    uint32_t count;
    in >> count;
    std::vector<uint32_t> point(words), out(words);
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t& w : point) in >> w;
        bool infinity;
        const uint8_t status = snarkjs_point<F>(point.data(), out.data(), infinity);
        std::cout << unsigned(status) << " " << (infinity ? 1 : 0);
        for (uint32_t w : out) std::cout << " " << w;
        std::cout << "\n";
    }
}

CUZK_GROUP_MAIN(run)
