// Many Poseidon permutations, one state per thread (hash/poseidon.cuh); and layers of 2-to-1
// hashes, a Merkle tree's levels as one launch each on one stream, every node staying on the
// device between them.
#include "poseidon.cuh"

extern "C" __global__ void poseidon_permute(fr_t* states, const fr_t* table, uint64_t n, int t,
                                            int half, int partial) {
    const uint64_t i = global_thread();
    if (i < n) permute_state(states, i, t, table, half, partial);
}

// One layer: nodes[out + i] for i < n (the core checked every index against earlier nodes).
extern "C" __global__ void poseidon_hash2_layer(fr_t* nodes, const int64_t* left,
                                                const int64_t* right, uint64_t n, uint64_t out,
                                                const fr_t* table, int half, int partial) {
    const uint64_t i = global_thread();
    if (i < n) hash2_node(nodes, left, right, i, out, table, half, partial);
}
