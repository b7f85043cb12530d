// Host build of msm/reduce.cuh (the very device code, carry chains emulated by common.cuh),
// driven by test_reduce_kernel.py; the steps run in backends/gpu/msm.py's order, each step's
// threads in turn. stdin, all numbers hex, XYZZ points as words in Montgomery form: the group
// (g1 or g2), then a mode:
// - "windows": windows, buckets a window and m (a power of two); each bucket's point, window
//   by window. stdout: a line per window, its sum Σ_j (j+1)·S_j (_window_sums).
// - "carries": buckets, range_len and ranges; the buckets' entry offsets and slot offsets
//   (buckets + 1 each); each slot's partial. stdout: a line per bucket, the sum of its
//   partials (first_partial_at, then range_carry_at).
#include <cstring>
#include <string>
#include <vector>

#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "group_main.h"
#include "harness_io.h"
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
static void run_carries(std::istream& in) {
    uint32_t groups, range_len, ranges;
    in >> groups >> range_len >> ranges;
    const std::vector<uint32_t> offsets = read_words<uint32_t>(in, groups + 1);
    const std::vector<uint32_t> slots = read_words<uint32_t>(in, groups + 1);
    const std::vector<xyzz_t<F>> partials = read_words<xyzz_t<F>>(in, slots[groups]);
    std::vector<xyzz_t<F>> out(groups);
    std::memset(out.data(), 1, out.size() * sizeof(xyzz_t<F>));  // a bucket left unwritten shows
    for (uint64_t g = 0; g < groups; g++)
        first_partial_at<F>(g, partials.data(), slots.data(), groups, out.data());
    for (uint64_t u = 0; u + 1 < ranges; u++)
        range_carry_at<F>(u, partials.data(), offsets.data(), slots.data(), groups, range_len,
                          ranges, out.data());
    print_words(out);
}

template <class F>
static void run_windows(std::istream& in) {
    uint32_t windows, per_window, m;
    in >> windows >> per_window >> m;
    const std::vector<xyzz_t<F>> buckets =
        read_words<xyzz_t<F>>(in, size_t(windows) * per_window);

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
    print_words(pair_sums<F>(terms, windows, planes));
}

template <class F>
static void run(std::istream& in) {
    std::string mode;
    in >> mode;
    if (mode == "windows") {
        run_windows<F>(in);
    } else if (mode == "carries") {
        run_carries<F>(in);
    }
}

CUZK_GROUP_MAIN(run)
