// Host build of msm/reduce.cuh (the very device code, carry chains emulated by common.cuh),
// driven by test_reduce_kernel.py. stdin, all numbers hex: the group (g1 or g2); windows,
// buckets a window and m (a power of two); each bucket's XYZZ words in Montgomery form, window
// by window. The steps run in backends/gpu/msm.py's order (_window_sums), each step's threads
// in turn. stdout: a line per window, its sum Σ_j (j+1)·S_j as XYZZ words in Montgomery form.
#include <cstring>
#include <iostream>
#include <vector>

#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "group_main.h"
#include "msm/reduce.cuh"

typedef fp2_t<fq_t> fq2_t;

// Every group's `size` points down to one by pair_sum_at passes.
template <class F>
static std::vector<xyzz_t<F>> pair_sums(std::vector<xyzz_t<F>> points, uint32_t groups,
                                        uint32_t size) {
    while (size > 1) {
        const uint32_t half = (size + 1) / 2;
        std::vector<xyzz_t<F>> out(size_t(groups) * half);
        for (uint64_t u = 0; u < out.size(); u++)
            pair_sum_at<F>(u, points.data(), groups, size, out.data());
        points.swap(out);
        size = half;
    }
    return points;
}

template <class F>
static void run(std::istream& in) {
    uint32_t windows, per_window, m;
    in >> windows >> per_window >> m;
    std::vector<uint32_t> words(size_t(windows) * per_window * (sizeof(xyzz_t<F>) / 4));
    for (auto& w : words) in >> w;
    std::vector<xyzz_t<F>> buckets(size_t(windows) * per_window);
    std::memcpy(buckets.data(), words.data(), words.size() * 4);

    const uint32_t chunks = (per_window + m - 1) / m;
    std::vector<xyzz_t<F>> sums(2 * size_t(windows) * chunks);
    for (uint64_t t = 0; t < uint64_t(windows) * chunks; t++)
        chunk_sums_at<F>(t, buckets.data(), windows, per_window, m, chunks, sums.data());
    uint32_t bits = 0, mu = 0;
    while ((1u << bits) < chunks) bits++;
    while ((1u << mu) < m) mu++;
    const uint32_t planes = 1 + bits, per = plane_partials(bits);
    std::vector<xyzz_t<F>> partials(size_t(windows) * planes * per);
    for (uint64_t u = 0; u < partials.size(); u++)
        plane_sum_at<F>(u, sums.data(), windows, chunks, bits, partials.data());
    const std::vector<xyzz_t<F>> totals = pair_sums<F>(partials, windows * planes, per);
    std::vector<xyzz_t<F>> terms(totals.size());
    for (uint64_t u = 0; u < terms.size(); u++)
        window_term_at<F>(u, totals.data(), windows, bits, mu, terms.data());
    const size_t out_words = sizeof(xyzz_t<F>) / 4;
    for (const xyzz_t<F>& p : pair_sums<F>(terms, windows, planes)) {
        const uint32_t* w = reinterpret_cast<const uint32_t*>(&p);
        for (size_t j = 0; j < out_words; j++) std::cout << (j ? " " : "") << w[j];
        std::cout << "\n";
    }
}

CUZK_GROUP_MAIN(run)
