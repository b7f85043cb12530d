// Host build of the kernel field and curve headers, driven by test_kernel_arith.py: each stdin
// line is an operation and hex operands (canonical), each stdout line the hex results.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ec/xyzz.cuh"
#include "ff/bls12_381.cuh"
#include "ff/fp2.cuh"
#include "ff/inverse.cuh"

typedef fp2_t<fq_t> fq2_t;

template <class F>
static F parse_raw(const std::string& hex) {
    F r = F::zero();
    int word = 0, shift = 0;
    for (int i = (int)hex.size() - 1; i >= 0 && word < F::N; i--) {
        const char ch = hex[i];
        const uint32_t d = ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
        r.v[word] |= d << shift;
        shift += 4;
        if (shift == 32) shift = 0, word++;
    }
    return r;
}

template <class F>
static F parse(const std::string& hex) {
    return parse_raw<F>(hex).to_mont();
}

// The limbs as they are (lazily reduced values are not canonical, so no from_mont).
template <class F>
static std::string show_raw(const F& c) {
    std::string out;
    char buf[9];
    for (int i = F::N - 1; i >= 0; i--) {
        snprintf(buf, sizeof buf, "%08x", c.v[i]);
        out += buf;
    }
    return out;
}

// The lazy operations on raw limbs x, y < 2p and a canonical constant c.
template <class F>
static void lazy_op(std::istream& in) {
    std::string a, b, k;
    in >> a >> b >> k;
    const F x = parse_raw<F>(a), y = parse_raw<F>(b), c = parse_raw<F>(k);
    std::cout << show_raw(F::add_lazy(x, y)) << " " << show_raw(F::sub_lazy(x, y)) << " "
              << show_raw(F::mul_lazy(c, x)) << " " << show_raw(x.reduced()) << "\n";
}

template <class F>
static std::string show(const F& a) {
    return show_raw(a.from_mont());
}

static fq2_t parse2(std::istream& in) {
    std::string a, b;
    in >> a >> b;
    return {parse<fq_t>(a), parse<fq_t>(b)};
}

static std::string show2(const fq2_t& a) { return show(a.c0) + " " + show(a.c1); }

template <class F, class Read, class Show>
static void curve_op(const std::string& op, std::istream& in, Read read, Show show_f) {
    // sum: count then (x y neg) triples, by mixed addition and by XYZZ addition; dbl of the sum.
    int count;
    in >> count;
    xyzz_t<F> mixed = xyzz_t<F>::inf(), general = xyzz_t<F>::inf();
    for (int i = 0; i < count; i++) {
        affine_t<F> a{read(in), read(in)};
        int neg;
        in >> neg;
        mixed.add_affine(a, neg != 0);
        affine_t<F> b = a;
        if (neg && !a.is_inf()) b.y = -a.y;
        general.add(xyzz_t<F>::from_affine(b));
    }
    xyzz_t<F> doubled = mixed;
    doubled.dbl();
    for (const xyzz_t<F>* p : {&mixed, &general, &doubled}) {
        std::cout << show_f(p->X) << " " << show_f(p->Y) << " " << show_f(p->ZZ) << " "
                  << show_f(p->ZZZ) << (p == &doubled ? "\n" : " ");
    }
    (void)op;
}

// field_inverse on raw words X (any integer below p, not taken into Montgomery form): the
// device's R²·X^−1 mod p, raw.
template <class F>
static void inverse_raw_op(std::istream& in) {
    std::string hex;
    in >> hex;
    std::cout << show_raw(field_inverse(parse_raw<F>(hex))) << "\n";
}

// count x drawn here (every bit length, from splitmix64 seeded by seed), each checked as
// x·field_inverse(x) == 1: prints how many were not.
template <class F>
static void inverse_check_op(std::istream& in) {
    uint64_t count, seed;
    in >> count >> seed;
    auto next = [&seed]() {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    uint64_t wrong = 0;
    for (uint64_t n = 0; n < count; n++) {
        F x;
        for (int i = 0; i < F::N; i++) x.v[i] = (uint32_t)next();
        const int bits = (int)(next() % (32 * F::N - 1)) + 1;  // below the top bit, then < 2^bits
        for (int j = bits; j < 32 * F::N; j++) x.v[j / 32] &= ~(1u << (j % 32));
        while (!(x.reduced() == x)) x = x.reduced();
        const F inverse = field_inverse(x);
        wrong += x.is_zero() ? !inverse.is_zero() : !(x * inverse == F::one());
    }
    std::cout << wrong << "\n";
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string op;
        in >> op;
        if (op == "fr" || op == "fq") {
            std::string a, b;
            in >> a >> b;
            if (op == "fr") {
                fr_t x = parse<fr_t>(a), y = parse<fr_t>(b);
                std::cout << show(x * y) << " " << show(x + y) << " " << show(x - y) << " "
                          << show(-x) << " " << show(x.sqr()) << " "
                          << show(fr_t::karatsuba_call(x, y)) << "\n";
            } else {
                fq_t x = parse<fq_t>(a), y = parse<fq_t>(b);
                std::cout << show(x * y) << " " << show(x + y) << " " << show(x - y) << " "
                          << show(-x) << " " << show(x.sqr()) << " "
                          << show(fq_t::karatsuba_call(x, y)) << "\n";
            }
        } else if (op == "frlazy") {
            lazy_op<fr_t>(in);
        } else if (op == "fqlazy") {
            lazy_op<fq_t>(in);
        } else if (op == "fq2") {
            fq2_t x = parse2(in), y = parse2(in);
            std::cout << show2(x * y) << " " << show2(x.sqr()) << " " << show2(x - y) << "\n";
        } else if (op == "inv") {  // canonical in and out
            std::string field, hex;
            in >> field >> hex;
            if (field == "fr") {
                std::cout << show(field_inverse(parse<fr_t>(hex))) << "\n";
            } else {
                std::cout << show(field_inverse(parse<fq_t>(hex))) << "\n";
            }
        } else if (op == "invraw") {
            std::string field;
            in >> field;
            field == "fr" ? inverse_raw_op<fr_t>(in) : inverse_raw_op<fq_t>(in);
        } else if (op == "invcheck") {
            std::string field;
            in >> field;
            field == "fr" ? inverse_check_op<fr_t>(in) : inverse_check_op<fq_t>(in);
        } else if (op == "fq2inv") {
            std::cout << show2(field_inverse(parse2(in))) << "\n";
        } else if (op == "g1") {
            curve_op<fq_t>(op, in, [](std::istream& s) { std::string h; s >> h; return parse<fq_t>(h); },
                           [](const fq_t& v) { return show(v); });
        } else if (op == "g2") {
            curve_op<fq2_t>(op, in, parse2, show2);
        }
        std::cout.flush();
    }
    return 0;
}
