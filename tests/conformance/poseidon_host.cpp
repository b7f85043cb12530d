// Host build of hash/poseidon.cuh (the very device code, carry chains emulated by common.cuh),
// driven by test_poseidon_kernel.py. stdin, numbers hex: "permute" or "layers"; t, R_F/2 and
// R_P; the table's element count and its words (Montgomery form, as the GPU backends upload
// it). Then for "permute": the state count and the states' words (canonical); for "layers":
// the node count and the nodes' words (canonical), the layer count, and per layer its size
// and its left and right indices. stdout: the permuted states' elements, or every layer's
// hashes in order, an element a line.
#include <string>
#include <vector>

#include "harness_io.h"
#include "hash/poseidon.cuh"

int main() {
    std::string mode;
    int t, half, partial;
    size_t count;
    std::cin >> mode >> std::hex >> t >> half >> partial >> count;
    std::cout << std::hex;
    const std::vector<fr_t> table = read_words<fr_t>(std::cin, count);
    std::cin >> count;
    std::vector<fr_t> values = read_words<fr_t>(std::cin, mode == "permute" ? count * t : count);
    if (mode == "permute") {
        for (uint64_t i = 0; i < count; i++) {
            permute_state(values.data(), i, t, table.data(), half, partial);
        }
        print_words(values);
        return 0;
    }
    if (mode != "layers") return 1;
    const size_t given = values.size();
    size_t layers;
    std::cin >> layers;
    for (size_t j = 0; j < layers; j++) {
        size_t n;
        std::cin >> n;
        std::vector<int64_t> left(n), right(n);
        for (auto& v : left) std::cin >> v;
        for (auto& v : right) std::cin >> v;
        const uint64_t out = values.size();
        values.resize(out + n);
        for (uint64_t i = 0; i < n; i++) {
            hash2_node(values.data(), left.data(), right.data(), i, out, table.data(), half,
                       partial);
        }
    }
    print_words(std::vector<fr_t>(values.begin() + given, values.end()));
    return 0;
}
