// Host build of r1cs/witness.cuh (the very device code; a block's lanes are threads here, each
// given its lane, group and shuffle mask by the kernels' op_group_of, its group's shuffles and
// the block's and grid's barriers are waits; a shuffle outside its mask aborts), driven by
// test_witness_kernel.py.
// stdin, numbers hex; an array is its count, then its 32-bit words:
//   the kernel ("levels" or "blocks"), WITNESS_SCALED_ROWS' setting (the harness is built with
//   it; canonical coefficients come in and the harness scales them), the input count;
//   z (inputs and hints in place, Montgomery form); A, B, C and lin, each its columns (int64)
//   and coefficients; the op table (op_t rows); the inverses·R^3;
//   for "levels": the op groups ("warps") of the launch, level_ptr;
//   for "blocks": the groups a block, the blocks' steps (int32), the ops' steps (int32),
//   warp_ptr (int64).
// stdout: z after the kernel, an element a line.
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "harness_io.h"
#include "r1cs/witness.cuh"

// Every one of `count` threads waits here until all have arrived. The waiters yield rather
// than sleep: a group's threads meet at every shuffle, far too often to pay a futex each.
class host_barrier {
   public:
    explicit host_barrier(int count) : count_(count) {}
    void wait() {
        const uint32_t generation = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(generation + 1, std::memory_order_release);
        } else {
            while (generation_.load(std::memory_order_acquire) == generation) {
                std::this_thread::yield();
            }
        }
    }

   private:
    const int count_;
    std::atomic<int> arrived_{0};
    std::atomic<uint32_t> generation_{0};
};

// A warp's shuffle slots, a slot a lane (its groups write disjoint slots).
struct host_warp {
    fr_t slots[32];
};

// An op group's barrier, where its lanes meet at each shuffle.
struct host_group {
    host_barrier barrier{WITNESS_OP_LANES};
};

// A host thread's Lanes (witness.cuh).
struct host_lanes {
    uint32_t lane, warp_lane, mask;  // in its group, in its warp; its group's lanes in the warp
    host_warp* warp;
    host_group* group;
    host_barrier* block;
    host_barrier* grid;

    // __shfl_down_sync(mask, x, d, WITNESS_OP_LANES): a source past the group's width gives x.
    fr_t shuffle_down(const fr_t& x, int d) const {
        warp->slots[warp_lane] = x;
        group->barrier.wait();
        fr_t out = x;
        if (lane + d < WITNESS_OP_LANES) {
            const uint32_t source = warp_lane + d;
            if (!(mask >> warp_lane & 1) || !(mask >> source & 1)) std::abort();
            out = warp->slots[source];
        }
        group->barrier.wait();
        return out;
    }
    fr_t load_coherent(const fr_t* p) const { return *p; }
    void store_coherent(fr_t* p, const fr_t& value) const { *p = value; }
    void sync_block() const { block->wait(); }
    bool sync_grid(uint32_t*, uint32_t) const {
        grid->wait();
        return true;
    }
};

// Thread t of a block of threads as the kernels see it (op_group_of), in these warps and groups.
static host_lanes block_lanes(uint32_t t, std::vector<host_warp>& warps,
                              std::vector<host_group>& groups, host_barrier* block,
                              host_barrier* grid) {
    const op_group g = op_group_of(t);
    return {g.lane, t & 31, g.mask, &warps[t / 32], &groups.at(g.group), block, grid};
}

template <class T>
static std::vector<T> read_counted(std::istream& in) {
    uint64_t count;
    in >> count;
    return read_words<T>(in, count);
}

int main() {
    std::string kernel;
    uint32_t scaled;
    std::cin >> kernel >> std::hex >> scaled;
    std::cout << std::hex;
    if (scaled != WITNESS_SCALED_ROWS) return 2;  // built for the other setting
    uint64_t num_inputs;
    std::cin >> num_inputs;
    std::vector<fr_t> z = read_counted<fr_t>(std::cin);
    std::vector<int64_t> cols[4];
    std::vector<fr_t> coeffs[4];
    for (int m = 0; m < 4; m++) {
        cols[m] = read_counted<int64_t>(std::cin);
        coeffs[m] = read_counted<fr_t>(std::cin);
    }
    const std::vector<op_t> ops = read_counted<op_t>(std::cin);
    const std::vector<fr_t> inv_r3 = read_counted<fr_t>(std::cin);
#if WITNESS_SCALED_ROWS
    std::vector<fr_t> a_scaled = coeffs[0], c_scaled = coeffs[2];
    for (uint64_t i = 0; i < ops.size(); i++) {
        witness_scale_row(i, ops.data(), coeffs[0].data(), coeffs[2].data(), inv_r3.data(),
                          a_scaled.data(), c_scaled.data());
    }
    coeffs[0] = a_scaled;
    coeffs[2] = c_scaled;
#endif
    const witness_rows rows = {cols[0].data(),   cols[1].data(),   cols[2].data(),
                               cols[3].data(),   coeffs[0].data(), coeffs[1].data(),
                               coeffs[2].data(), coeffs[3].data()};
    std::vector<std::thread> threads;
    if (kernel == "levels") {
        uint64_t warps;
        std::cin >> warps;
        const std::vector<int64_t> level_ptr = read_counted<int64_t>(std::cin);
        const uint32_t count = (uint32_t)warps * WITNESS_OP_LANES;  // one block of every group
        std::vector<host_warp> warp((count + 31) / 32);
        std::vector<host_group> group(warps);
        host_barrier grid((int)count);
        for (uint32_t t = 0; t < count; t++) {
            threads.emplace_back([&, t] {
                const host_lanes lanes = block_lanes(t, warp, group, nullptr, &grid);
                witness_levels_thread(lanes, (int64_t)op_group_of(t).group, (int64_t)warps, rows,
                                      ops.data(), inv_r3.data(), level_ptr.data(),
                                      level_ptr.size() - 1, z.data(), num_inputs, nullptr);
            });
        }
        for (auto& t : threads) t.join();
    } else if (kernel == "blocks") {
        uint64_t warps_a_block;
        std::cin >> warps_a_block;
        const std::vector<int32_t> block_steps = read_counted<int32_t>(std::cin);
        const std::vector<int32_t> op_step = read_counted<int32_t>(std::cin);
        const std::vector<int64_t> warp_ptr = read_counted<int64_t>(std::cin);
        for (uint64_t b = 0; b < block_steps.size(); b++) {  // blocks share nothing: in turn
            const uint32_t count = (uint32_t)warps_a_block * WITNESS_OP_LANES;
            std::vector<host_warp> warp((count + 31) / 32);
            std::vector<host_group> group(warps_a_block);
            host_barrier block((int)count);
            for (uint32_t t = 0; t < count; t++) {
                threads.emplace_back([&, b, t] {
                    const host_lanes lanes = block_lanes(t, warp, group, &block, nullptr);
                    const int64_t g = (int64_t)(b * warps_a_block + op_group_of(t).group);
                    witness_blocks_thread(lanes, g, block_steps[b], rows, ops.data(),
                                          inv_r3.data(), op_step.data(), warp_ptr.data(),
                                          z.data(), num_inputs);
                });
            }
            for (auto& t : threads) t.join();
            threads.clear();
        }
    } else {
        return 1;
    }
    print_words(z);
    return 0;
}
