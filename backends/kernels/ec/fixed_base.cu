// Fixed-base scalar multiplication for key generation: out[i] = k_i·G for one point G and many
// scalars k_i, one thread per scalar, in G1 (over Fq) and G2 (over Fq2).
//
// The host (backends/gpu/fixed_base.py) uploads a table of the affine multiples
// table[w·H + j] = (j + 1)·2^(c·w)·G, j < H = 2^(c−1), in Montgomery form. A thread recodes its
// scalar into signed base-2^c digits d_w ∈ (−2^(c−1), 2^(c−1)] and adds ±table[w·H + |d_w| − 1]
// for every nonzero digit: no doublings at all, and signed digits halve the table. Then one
// field inversion per thread (ff/inverse.cuh's binary GCD: Montgomery's batch trick would need
// the other threads' values) turns the XYZZ sum into affine coordinates, written canonical (out of
// Montgomery form), with infinity as zero coordinates and a flag.
//
// The device functions are host-callable too (CUZK_HD, carry chains emulated on the host by
// common.cuh), so tests/conformance/fixed_base_host.cpp runs this very code with g++.
#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "../ff/bls12_381.cuh"
#include "../ff/fp2.cuh"
#include "../ff/inverse.cuh"
#include "../ff/scalar_window.cuh"

typedef fp2_t<fq_t> fq2_t;

// One table entry (16-byte loads on the device: the table is 16-byte aligned, an entry 96 or
// 192 bytes).
template <class F>
CUZK_HD affine_t<F> fb_entry(const affine_t<F>* table, uint32_t index) {
#if defined(__CUDA_ARCH__)
    return load_vec(table + index);
#else
    return table[index];
#endif
}

// Σ_w d_w·2^(c·w)·G from the table, for the scalar k (below 2^(c·windows − 1), so the last
// digit takes the last carry). A digit above 2^(c−1) becomes d − 2^c with a carry onward.
template <class F>
CUZK_HD xyzz_t<F> fb_multiply(const affine_t<F>* table, const uint32_t k[8], uint32_t c,
                              uint32_t windows) {
    const uint32_t half = 1u << (c - 1), full = 1u << c;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    uint32_t carry = 0;
#pragma unroll 1
    for (uint32_t w = 0; w < windows; w++) {
        const uint32_t d = scalar_window(k, w * c, c) + carry;
        const bool neg = d > half;
        carry = neg ? 1u : 0u;
        const uint32_t mag = neg ? full - d : d;
        if (mag != 0) acc.accumulate(fb_entry(table, w * half + mag - 1), neg);
    }
    return acc;
}

// k·G as a canonical affine point; `infinity` says whether it is the point at infinity (then
// both coordinates are zero, the layout's convention).
template <class F>
CUZK_HD affine_t<F> fb_point(const affine_t<F>* table, const uint32_t k[8], uint32_t c,
                             uint32_t windows, bool& infinity) {
    const xyzz_t<F> p = fb_multiply(table, k, c, windows);
    infinity = p.is_inf();
    if (infinity) return {F::zero(), F::zero()};
    // x = X/ZZ, y = Y/ZZZ with one inversion: i = 1/(ZZ·ZZZ), so 1/ZZ = ZZZ·i and 1/ZZZ = ZZ·i.
    const F i = field_inverse(p.ZZ * p.ZZZ);
    const F x = p.X * (p.ZZZ * i);
    const F y = p.Y * (p.ZZ * i);
    return {x.from_mont(), y.from_mont()};
}

#if defined(__CUDACC__)
// Thread i: out[i] = scalars[i]·G (canonical), infinity[i] = 1 where that is the identity.
// Scalars are canonical (n, 8) words; the table as above, Montgomery form.
template <class F>
__device__ __forceinline__ void fixed_base(const affine_t<F>* __restrict__ table,
                                           const uint32_t* __restrict__ scalars, uint64_t n,
                                           uint32_t c, uint32_t windows,
                                           affine_t<F>* __restrict__ out,
                                           uint8_t* __restrict__ infinity) {
    const uint64_t i = global_thread();
    if (i >= n) return;
    uint32_t k[8];
    const uint4* src = reinterpret_cast<const uint4*>(scalars + 8 * i);
    const uint4 a = src[0], b = src[1];
    k[0] = a.x, k[1] = a.y, k[2] = a.z, k[3] = a.w, k[4] = b.x, k[5] = b.y, k[6] = b.z, k[7] = b.w;
    bool is_inf;
    const affine_t<F> p = fb_point(table, k, c, windows, is_inf);
    store_vec(out + i, p);
    infinity[i] = is_inf ? 1 : 0;
}

extern "C" __global__ void fixed_base_g1(const affine_t<fq_t>* table, const uint32_t* scalars,
                                         uint64_t n, uint32_t c, uint32_t windows,
                                         affine_t<fq_t>* out, uint8_t* infinity) {
    fixed_base<fq_t>(table, scalars, n, c, windows, out, infinity);
}

extern "C" __global__ void fixed_base_g2(const affine_t<fq2_t>* table, const uint32_t* scalars,
                                         uint64_t n, uint32_t c, uint32_t windows,
                                         affine_t<fq2_t>* out, uint8_t* infinity) {
    fixed_base<fq2_t>(table, scalars, n, c, windows, out, infinity);
}
#endif
