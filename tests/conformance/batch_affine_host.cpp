// Host build of msm/batch_affine.cuh (the very device code, carry chains emulated by
// common.cuh), driven by test_batch_affine_kernel.py. stdin, all numbers hex: the group (g1 or
// g2); threads, lanes, range_len, groups, the base count and the entry count; each base's
// affine words (Montgomery form, zero for infinity); the entries (point index, sign in bit 31);
// the groups' entry offsets and slot offsets (groups + 1 each; a slot per group and thread
// range of lanes·range_len entries). stdout: a line per slot, its XYZZ words in Montgomery form.
#include <cstring>
#include <vector>

#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "group_main.h"
#include "harness_io.h"
#include "msm/batch_affine.cuh"

typedef fp2_t<fq_t> fq2_t;

template <class F>
static void run(std::istream& in) {
    uint32_t threads, lanes, range_len, groups, n, count;
    in >> threads >> lanes >> range_len >> groups >> n >> count;
    const std::vector<affine_t<F>> bases = read_words<affine_t<F>>(in, n);
    const std::vector<uint32_t> entries = read_words<uint32_t>(in, count);
    const std::vector<uint32_t> offsets = read_words<uint32_t>(in, groups + 1);
    const std::vector<uint32_t> slots = read_words<uint32_t>(in, groups + 1);
    const size_t scratch = size_t(threads) * lanes;
    std::vector<F> sum(2 * scratch);  // the lanes' x, then their y
    std::vector<uint32_t> group(scratch);
    std::vector<F> prefix(scratch);
    std::vector<affine_t<F>> head(scratch);
    std::vector<uint32_t> head_group(scratch);
    std::vector<xyzz_t<F>> out(slots[groups]);
    std::memset(out.data(), 1, out.size() * sizeof(xyzz_t<F>));  // a slot left unwritten shows
    for (uint32_t t = 0; t < threads; t++) {
        const batch_scratch<F> lane_scratch = {sum.data(),    sum.data() + scratch,
                                               group.data(),  prefix.data(),
                                               head.data(),   head_group.data()};
        sum_batch_affine_ranges<F>(t, threads, lanes, bases.data(), entries.data(), offsets.data(),
                                   slots.data(), groups, range_len, lane_scratch, out.data());
    }
    print_words(out);
}

CUZK_GROUP_MAIN(run)
