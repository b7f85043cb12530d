// Reading and writing the host harnesses' words: structs of 32-bit words (points, field
// elements, indices) as whitespace-separated numbers in the stream's base, one struct a line
// on output.
#pragma once

#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

// `count` values of T (a whole number of 32-bit words each) read word by word.
template <class T>
static std::vector<T> read_words(std::istream& in, size_t count) {
    std::vector<uint32_t> words(count * (sizeof(T) / 4));
    for (auto& w : words) in >> w;
    std::vector<T> out(count);
    std::memcpy(out.data(), words.data(), words.size() * 4);
    return out;
}

// Each value's words on a line of its own.
template <class T>
static void print_words(const std::vector<T>& values) {
    const size_t words = sizeof(T) / 4;
    for (const T& value : values) {
        const uint32_t* w = reinterpret_cast<const uint32_t*>(&value);
        for (size_t j = 0; j < words; j++) std::cout << (j ? " " : "") << w[j];
        std::cout << "\n";
    }
}
