// Montgomery arithmetic modulo an odd prime p of N 32-bit limbs (little-endian), R = 2^(32N).
//
// Why 32-bit limbs: the GPU's integer multiplier is 32×32 bits (IMAD); a 64-bit multiply is
// emulated with several of them, and PTX's carry chains (add.cc/madc) exist only for 32-bit
// words. With 32-bit limbs every partial product is one mad.lo or mad.hi in a carry chain.
// Both BLS12-381 primes leave the top bit of their last limb free (p < 2^(32N-1)), so CIOS
// needs only N+1 accumulator words and values stay below 2p until one final subtraction.
#pragma once

#include "../common.cuh"

// Params supplies: N; m0 = -p^-1 mod 2^32; p(i), one(i) (R mod p), r2(i) (R^2 mod p) limbs; and
// reduction_p(i), reduction_m0(): the same p and m0 as the product's reduction reads them.
template <class Params>
struct mont_t {
    static constexpr int N = Params::N;
    static constexpr bool point_calls = false;  // see xyzz_t::accumulate
    uint32_t v[N];

    CUZK_HD static mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }

    // 1 in Montgomery form (R mod p).
    CUZK_HD static mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = Params::one(i);
        return r;
    }

    // R^2 mod p: multiplying a canonical value by it gives the value's Montgomery form.
    CUZK_HD static mont_t r2() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = Params::r2(i);
        return r;
    }

    // The canonical integer 1 (not Montgomery): multiplying by it leaves Montgomery form.
    CUZK_HD static mont_t canonical_one() {
        mont_t r = zero();
        r.v[0] = 1;
        return r;
    }

    CUZK_HD bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }

    CUZK_HD bool operator==(const mont_t& o) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }

    // t (< 2p) reduced into [0, p) by one conditional subtraction.
    CUZK_HD static void final_sub(uint32_t* t) {
        uint32_t s[N];
        s[0] = sub_cc(t[0], Params::p(0));
#pragma unroll
        for (int i = 1; i < N; i++) s[i] = subc_cc(t[i], Params::p(i));
        const uint32_t keep = subc(0, 0);  // all ones when t < p
#pragma unroll
        for (int i = 0; i < N; i++) t[i] = (t[i] & keep) | (s[i] & ~keep);
    }

    CUZK_HD friend mont_t operator+(const mont_t& a, const mont_t& b) {
        mont_t r;
        r.v[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = addc_cc(a.v[i], b.v[i]);
        final_sub(r.v);
        return r;
    }

    CUZK_HD friend mont_t operator-(const mont_t& a, const mont_t& b) {
        mont_t r;
        r.v[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = subc_cc(a.v[i], b.v[i]);
        const uint32_t borrow = subc(0, 0);
        r.v[0] = add_cc(r.v[0], Params::p(0) & borrow);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = addc_cc(r.v[i], Params::p(i) & borrow);
        return r;
    }

    // Lazy reduction, for sums of products by canonical constants (the NTT's butterflies):
    // values in [0, 2p) rather than [0, p). 2p < R for both primes, so they fit N words.

    // 2p's limb i.
    CUZK_HD static uint32_t p2(int i) {
        return (Params::p(i) << 1) | (i > 0 ? Params::p(i - 1) >> 31 : 0u);
    }

    // a + b mod 2p for a, b < 2p, in [0, 2p). The sum may carry out of N words (Fr: 4p > R);
    // then it is at least 2p, and its low words less than 2p, so the subtraction borrows.
    CUZK_HD static mont_t add_lazy(const mont_t& a, const mont_t& b) {
        uint32_t s[N], t[N];
        s[0] = add_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) s[i] = addc_cc(a.v[i], b.v[i]);
        const uint32_t carry = addc(0, 0);
        t[0] = sub_cc(s[0], p2(0));
#pragma unroll
        for (int i = 1; i < N; i++) t[i] = subc_cc(s[i], p2(i));
        const uint32_t keep = subc(carry, 0);  // all ones when the sum is below 2p
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (s[i] & keep) | (t[i] & ~keep);
        return r;
    }

    // a − b mod 2p for a, b < 2p, in [0, 2p).
    CUZK_HD static mont_t sub_lazy(const mont_t& a, const mont_t& b) {
        mont_t r;
        r.v[0] = sub_cc(a.v[0], b.v[0]);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = subc_cc(a.v[i], b.v[i]);
        const uint32_t borrow = subc(0, 0);
        r.v[0] = add_cc(r.v[0], p2(0) & borrow);
#pragma unroll
        for (int i = 1; i < N; i++) r.v[i] = addc_cc(r.v[i], p2(i) & borrow);
        return r;
    }

    // a·b·R^-1 for canonical a (a constant: a twiddle, a scale factor) and any b < R, in
    // [0, 2p): the product without its final subtraction (CIOS keeps every row below a + p).
    CUZK_HD static mont_t mul_lazy(const mont_t& a, const mont_t& b) {
        return product(a, b, false);
    }

    // This value (< 2p) reduced into [0, p).
    CUZK_HD mont_t reduced() const {
        mont_t r = *this;
        final_sub(r.v);
        return r;
    }

    CUZK_HD mont_t operator-() const { return zero() - *this; }

    CUZK_HD mont_t dbl() const { return *this + *this; }

    // acc[0..N) += Σ_k x[2k + parity]·y·2^(64k) (plus the carry flag with carry_in): one carry
    // chain of low/high halves, carry out left in the flag. Parity 1 drops it: the odd half
    // holds words 1..N of a row's sum, which is below 2^(32(N+1)), so it never carries out.
    CUZK_HD static void mul_add_pairs(uint32_t* acc, const uint32_t* x, int parity, uint32_t y,
                                      bool carry_in = false) {
        acc[0] = carry_in ? madc_lo_cc(x[parity], y, acc[0]) : mad_lo_cc(x[parity], y, acc[0]);
#pragma unroll
        for (int j = 0; j < N - 2; j += 2) {
            acc[j + 1] = madc_hi_cc(x[j + parity], y, acc[j + 1]);
            acc[j + 2] = madc_lo_cc(x[j + 2 + parity], y, acc[j + 2]);
        }
        acc[N - 1] = parity ? madc_hi(x[N - 2 + parity], y, acc[N - 1])
                            : madc_hi_cc(x[N - 2 + parity], y, acc[N - 1]);
    }

    // acc[0..2k) += Σ_{t<k} x[first + 2t]·y·2^(64t) for first + 2(k − 1) ≤ last: products of
    // every other limb, so one carry chain of mad.lo/madc.hi pairs; carry out in the flag.
    CUZK_HD static void mul_add_run(uint32_t* acc, const uint32_t* x, int first, int last,
                                    uint32_t y) {
        acc[0] = mad_lo_cc(x[first], y, acc[0]);
        acc[1] = madc_hi_cc(x[first], y, acc[1]);
#pragma unroll
        for (int j = first + 2; j <= last; j += 2) {
            acc[j - first] = madc_lo_cc(x[j], y, acc[j - first]);
            acc[j - first + 1] = madc_hi_cc(x[j], y, acc[j - first + 1]);
        }
    }

    // One Montgomery step on the halves x (words 0..N−1) and y (words 1..N), see product():
    // m·p added so that word 0 vanishes, then the sum over 2^32 by renaming; returns the word
    // that falls on word 0, for the next step (or merge_halves) to add. carry_in: the flag
    // holds the carry of an add into x[0] just before, which y's chain takes.
    CUZK_HD static uint32_t reduce_row(uint32_t* x, uint32_t* y, const uint32_t* p,
                                       bool carry_in) {
        const uint32_t m = x[0] * Params::reduction_m0();
        mul_add_pairs(y, p, 1, m, carry_in);
        mul_add_pairs(x, p, 0, m);
        y[N - 1] = addc(y[N - 1], 0);
        const uint32_t pending = x[1];
#pragma unroll
        for (int k = 0; k < N; k++) {
            const uint32_t next_y = k + 2 < N ? x[k + 2] : 0u;
            x[k] = y[k];
            y[k] = next_y;
        }
        return pending;
    }

    // The halves after the last step as one value: x + y·2^32 + pending.
    CUZK_HD static mont_t merge_halves(const uint32_t* x, const uint32_t* y, uint32_t pending) {
        mont_t r;
        r.v[0] = add_cc(x[0], pending);
#pragma unroll
        for (int k = 1; k < N - 1; k++) r.v[k] = addc_cc(x[k], y[k - 1]);
        r.v[N - 1] = addc(x[N - 1], 0);
        return r;
    }

    // Montgomery product a·b·R^-1 mod p: CIOS (interleaved multiply and reduce, a row per limb
    // of b) with each row's products split by the parity of the limb of a (or p), so that each
    // half is one carry chain of mad.lo/madc.hi pairs, which ptxas fuses into one
    // IMAD.WIDE.U32.X a product (SASS: 1272 → 624 instructions for Fq; bench/NOTES.md).
    //
    // The halves are never merged inside the loop. x holds words 0..N−1 (the even limbs'
    // products land on pairs (0,1), (2,3), …), y words 1..N (y[k] is word k + 1: the odd
    // limbs' pairs (1,2), (3,4), …). Dividing a row by 2^32 then only renames: y becomes the
    // next x, x's words 2..N−1 the next y, and x's word 1 falls on word 0, added at the next
    // row's start with its carry taken by that row's first odd product. One add and two carry
    // adds a row instead of an N-word merge (an Fq product's 144 carry adds → ~48).
    //
    // On the H200 (bench/NOTES.md, round 23): G2 MSM 2^24 −3%, coset NTTs 2^24 −1.5%, G1
    // within 1%. Bounds: every row's sum is below (a + p)·2^32 ≤ 2^(32(N+1)), so y (words
    // 1..N) never carries out, and x's carry out (word N) is added to y's top word. The result
    // is below a + p before its final subtraction (``reduce``), below p after it.
    CUZK_HD static mont_t product(const mont_t& a, const mont_t& b, bool reduce) {
        static_assert(N % 2 == 0, "the even/odd split needs an even number of limbs");
        uint32_t p[N], x[N], y[N], pending = 0;
#pragma unroll
        for (int j = 0; j < N; j++) p[j] = Params::reduction_p(j);
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            if (i == 0) {
#pragma unroll
                for (int j = 0; j < N; j += 2) {
                    const uint64_t even = (uint64_t)a.v[j] * bi, odd = (uint64_t)a.v[j + 1] * bi;
                    x[j] = (uint32_t)even;
                    x[j + 1] = (uint32_t)(even >> 32);
                    y[j] = (uint32_t)odd;
                    y[j + 1] = (uint32_t)(odd >> 32);
                }
            } else {
                x[0] = add_cc(x[0], pending);  // its carry goes to word 1, y[0]
                mul_add_pairs(y, a.v, 1, bi, true);
                mul_add_pairs(x, a.v, 0, bi);
                y[N - 1] = addc(y[N - 1], 0);
            }
            pending = reduce_row(x, y, p, false);
        }
        mont_t r = merge_halves(x, y, pending);
        if (reduce) final_sub(r.v);
        return r;
    }

    // x·y for H-limb x, y as 2H words out: the schoolbook products split by the parity of
    // their word i + j, as sqr_wide's, so every run's low/high pairs start at an even index.
    template <int H>
    CUZK_HD static void half_product(const uint32_t* x, const uint32_t* y, uint32_t* out) {
        static_assert(H % 2 == 0, "the even/odd split needs an even number of limbs");
        uint32_t even[2 * H], odd[2 * H];
#pragma unroll
        for (int j = 0; j < 2 * H; j++) even[j] = odd[j] = 0;
#pragma unroll
        for (int i = 0; i < H; i++) {
            const int same = i & 1, other = 1 - same;  // the first j with i + j even, odd
            const int last_same = H - 2 + same, last_other = H - 1 - same;
            mul_add_run(even + i + same, x, same, last_same, y[i]);
            if (i + last_same + 2 < 2 * H) {
                even[i + last_same + 2] = addc(even[i + last_same + 2], 0);
            }
            mul_add_run(odd + i + other - 1, x, other, last_other, y[i]);
            if (i + last_other + 1 < 2 * H) {
                odd[i + last_other + 1] = addc(odd[i + last_other + 1], 0);
            }
        }
        out[0] = even[0];
        out[1] = add_cc(even[1], odd[0]);
#pragma unroll
        for (int j = 2; j < 2 * H; j++) out[j] = addc_cc(even[j], odd[j - 1]);
    }

    // a·b as 2N words t by one level of Karatsuba over N/2-limb halves: a0·b0, a1·b1 and
    // (a0 + a1)(b0 + b1), 3N²/4 products where the schoolbook takes N².
    CUZK_HD static void mul_wide(const mont_t& a, const mont_t& b, uint32_t* t) {
        constexpr int H = N / 2;
        uint32_t sa[H], sb[H], mid[N + 1];
        sa[0] = add_cc(a.v[0], a.v[H]);
#pragma unroll
        for (int j = 1; j < H; j++) sa[j] = addc_cc(a.v[j], a.v[H + j]);
        const uint32_t ca = 0u - addc(0, 0);  // all ones when a0 + a1 carries
        sb[0] = add_cc(b.v[0], b.v[H]);
#pragma unroll
        for (int j = 1; j < H; j++) sb[j] = addc_cc(b.v[j], b.v[H + j]);
        const uint32_t cb = 0u - addc(0, 0);
        half_product<H>(a.v, b.v, t);
        half_product<H>(a.v + H, b.v + H, t + N);
        half_product<H>(sa, sb, mid);
        // (a0 + a1)(b0 + b1) with the sums' carries: + 2^(32H)·(ca·sb + cb·sa) + ca·cb·2^(64H).
        mid[H] = add_cc(mid[H], sb[0] & ca);
#pragma unroll
        for (int j = 1; j < H; j++) mid[H + j] = addc_cc(mid[H + j], sb[j] & ca);
        mid[N] = addc(ca & cb & 1u, 0);
        mid[H] = add_cc(mid[H], sa[0] & cb);
#pragma unroll
        for (int j = 1; j < H; j++) mid[H + j] = addc_cc(mid[H + j], sa[j] & cb);
        mid[N] = addc(mid[N], 0);
        // − a0·b0 − a1·b1: the middle term a0·b1 + a1·b0, below 2^(32N + 1).
        mid[0] = sub_cc(mid[0], t[0]);
#pragma unroll
        for (int j = 1; j < N; j++) mid[j] = subc_cc(mid[j], t[j]);
        mid[N] = subc(mid[N], 0);
        mid[0] = sub_cc(mid[0], t[N]);
#pragma unroll
        for (int j = 1; j < N; j++) mid[j] = subc_cc(mid[j], t[N + j]);
        mid[N] = subc(mid[N], 0);
        // t += middle·2^(32H).
        t[H] = add_cc(t[H], mid[0]);
#pragma unroll
        for (int j = 1; j <= N; j++) t[H + j] = addc_cc(t[H + j], mid[j]);
#pragma unroll
        for (int j = H + N + 1; j < 2 * N; j++) t[j] = addc_cc(t[j], 0);
    }

    CUZK_HD friend mont_t operator*(const mont_t& a, const mont_t& b) { return product(a, b, true); }

    // a² unreduced as 2N words t: the products a_i·a_j (i < j) once, doubled, plus the
    // squares a_i², N(N + 1)/2 products where a·a takes N². The products go by the parity of
    // their word i + j: even ones to `even` (word k at k), odd ones to `odd` (word k at k − 1),
    // so every run's low/high pairs start at an even index, as IMAD.WIDE's register pairs do
    // (split by the parity of j instead, half the rows started at odd indices and ptxas moved
    // every pair: 95 MOVs in an Fq square).
    CUZK_HD static void sqr_wide(const mont_t& a, uint32_t* t) {
        static_assert(N % 2 == 0, "the even/odd split needs an even number of limbs");
        uint32_t even[2 * N], odd[2 * N];
#pragma unroll
        for (int j = 0; j < 2 * N; j++) even[j] = odd[j] = 0;
#pragma unroll
        for (int i = 0; i < N - 1; i++) {
            const int last_same = (N - 1 - i) % 2 == 0 ? N - 1 : N - 2;  // j ≡ i, j ≤ N − 1
            const int last_other = 2 * N - 3 - last_same;                  // j ≢ i
            if (i + 2 <= last_same) {
                mul_add_run(even + 2 * i + 2, a.v, i + 2, last_same, a.v[i]);
                even[i + last_same + 2] = addc(even[i + last_same + 2], 0);
            }
            mul_add_run(odd + 2 * i, a.v, i + 1, last_other, a.v[i]);
            odd[i + last_other + 1] = addc(odd[i + last_other + 1], 0);
        }
        t[0] = even[0];
        t[1] = add_cc(even[1], odd[0]);
#pragma unroll
        for (int j = 2; j < 2 * N; j++) t[j] = addc_cc(even[j], odd[j - 1]);
        t[0] = add_cc(t[0], t[0]);
#pragma unroll
        for (int j = 1; j < 2 * N; j++) t[j] = addc_cc(t[j], t[j]);
        t[0] = mad_lo_cc(a.v[0], a.v[0], t[0]);
        t[1] = madc_hi_cc(a.v[0], a.v[0], t[1]);
#pragma unroll
        for (int i = 1; i < N - 1; i++) {
            t[2 * i] = madc_lo_cc(a.v[i], a.v[i], t[2 * i]);
            t[2 * i + 1] = madc_hi_cc(a.v[i], a.v[i], t[2 * i + 1]);
        }
        t[2 * N - 2] = madc_lo_cc(a.v[N - 1], a.v[N - 1], t[2 * N - 2]);
        t[2 * N - 1] = madc_hi(a.v[N - 1], a.v[N - 1], t[2 * N - 1]);
    }

    // Montgomery reduction t·R^-1 mod p of 2N words t < p·R: the low half reduced a word at a
    // time (acc = (t_lo + M·p)/R ≤ p), then the high half (< p) added; one final subtraction.
    // Its rows are product()'s (reduce_row: one add a row, no N-word merge).
    CUZK_HD static mont_t redc_wide(const uint32_t* t) {
        uint32_t p[N], x[N], y[N], pending = 0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            p[j] = Params::reduction_p(j);
            x[j] = t[j];
            y[j] = 0;
        }
#pragma unroll
        for (int i = 0; i < N; i++) {
            if (i > 0) x[0] = add_cc(x[0], pending);  // its carry goes to word 1, y[0]
            pending = reduce_row(x, y, p, i > 0);
        }
        mont_t r = merge_halves(x, y, pending);
        r.v[0] = add_cc(r.v[0], t[N]);
#pragma unroll
        for (int j = 1; j < N; j++) r.v[j] = addc_cc(r.v[j], t[N + j]);
        final_sub(r.v);
        return r;
    }

    CUZK_HD mont_t sqr() const {
        uint32_t t[2 * N];
        sqr_wide(*this, t);
        return redc_wide(t);
    }

    // The same product as a called (not inlined) function, for Fq2's three products: with
    // every product inlined, a mixed addition is thousands of instructions and the MSM loop
    // stalls on instruction-cache misses (ncu, with the older product); with the even/odd
    // product inlined the bucket sums are still 5–10% slower than with calls (bench/NOTES.md).
    CUZK_HD_NOINLINE static mont_t mul_call(mont_t a, mont_t b) { return a * b; }

    // The curve formulas' product over this field (point_mul), called for the same reason, by
    // Karatsuba (mul_wide, then redc_wide: 3N²/4 + N² products where CIOS takes 2N²): with the
    // halves split by word parity ptxas pairs every product (round 14's version, rows at odd
    // offsets, lost 15%). G1 MSMs 1.1–1.7% faster on the H100 (round 50); under Fq2's products
    // the G2 pass spills and was 2.6% slower, and inlined under the NTT's 64 registers it spills
    // (pipe 2112 → 2288 a radix-4 step), so mul_call, operator* and mul_lazy stay CIOS.
    CUZK_HD_NOINLINE static mont_t karatsuba_call(mont_t a, mont_t b) {
        uint32_t t[2 * N];
        mul_wide(a, b, t);
        return redc_wide(t);
    }

    // The square as a call, for the same reason: 222 products for Fq where a·a takes 288, and
    // the G1 MSMs 2–3% faster on the H200 (bench/NOTES.md, round 11).
    CUZK_HD_NOINLINE static mont_t sqr_call(mont_t a) { return a.sqr(); }

    CUZK_HD static mont_t point_mul(const mont_t& a, const mont_t& b) {
        return karatsuba_call(a, b);
    }

    CUZK_HD static mont_t point_sqr(const mont_t& a) { return sqr_call(a); }

    CUZK_HD mont_t to_mont() const { return *this * r2(); }

    CUZK_HD mont_t from_mont() const { return *this * canonical_one(); }
};
