// The main() of a host harness whose stdin starts with the group, all numbers hex after it:
// "g1" hands the rest to run<fq_t>, "g2" to run<fq2_t>, anything else exits 1.
#pragma once

#include <iostream>
#include <string>

#define CUZK_GROUP_MAIN(run)                  \
    int main() {                              \
        std::string group;                    \
        std::cin >> group >> std::hex;        \
        std::cout << std::hex;                \
        if (group == "g1") {                  \
            run<fq_t>(std::cin);              \
        } else if (group == "g2") {           \
            run<fq2_t>(std::cin);             \
        } else {                              \
            return 1;                         \
        }                                     \
        return 0;                             \
    }
