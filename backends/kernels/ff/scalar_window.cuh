// Windows of a scalar: the digit extraction Pippenger and the fixed-base kernel share.
#pragma once

#include "../common.cuh"

// The c-bit field (c ≤ 31) of a little-endian 8-word scalar starting at `bit` (zero past bit
// 255). The words are picked by comparison, not by index, so k stays in registers.
CUZK_HD uint32_t scalar_window(const uint32_t k[8], uint32_t bit, uint32_t c) {
    const uint32_t word = bit >> 5;
    uint32_t lo = 0, hi = 0;
#pragma unroll
    for (uint32_t j = 0; j < 8; j++) {
        lo = j == word ? k[j] : lo;
        hi = j == word + 1 ? k[j] : hi;
    }
    const uint64_t both = ((uint64_t)hi << 32) | lo;
    return (uint32_t)(both >> (bit & 31)) & ((1u << c) - 1);
}
