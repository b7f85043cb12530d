// snarkjs's curve points → the canonical layout, one thread per point (a zkey's conversion
// into the key cache: backends/gpu/snarkjs_points.py).
//
// A snarkjs coordinate is 48 bytes little-endian in Montgomery form, x·2^384 mod q: exactly this
// code's fq_t words (12 limbs of 32 bits, R = 2^384), so a point is read as it lies in the file.
// Each thread checks every coordinate is below q and the point is on its curve (y² = x³ + b,
// in Montgomery form), then writes x·R⁻¹ and y·R⁻¹ (one product by the integer 1 each). The
// all-zero encoding is the point at infinity. Status per point, as the core's reference
// (cuzk_core/interop/points.py) reports it: 0 valid, 1 a coordinate not below q, 2 not on the
// curve; an invalid point's output words are zero.
//
// The device functions are host-callable too (CUZK_HD), so tests/conformance/
// snarkjs_points_host.cpp runs this very code with g++.
#include "../common_mem.cuh"
#include "../ec/xyzz.cuh"
#include "../ff/bls12_381.cuh"
#include "../ff/fp2.cuh"

typedef fp2_t<fq_t> fq2_t;

enum : uint8_t { SNARKJS_VALID = 0, SNARKJS_NOT_BELOW_Q = 1, SNARKJS_OFF_CURVE = 2 };

// The curve's b in Montgomery form: 4 on E(Fq), 4(1 + u) on the twist E'(Fq2).
template <class F>
CUZK_HD F snarkjs_curve_b();

template <>
CUZK_HD fq_t snarkjs_curve_b<fq_t>() {
    return fq_t::one().dbl().dbl();
}

template <>
CUZK_HD fq2_t snarkjs_curve_b<fq2_t>() {
    const fq_t four = fq_t::one().dbl().dbl();
    return {four, four};
}

// words[0..12) < q, compared from the most significant limb down.
CUZK_HD bool snarkjs_below_q(const uint32_t* words) {
#pragma unroll 1
    for (int i = fq_t::N - 1; i >= 0; i--) {
        const uint32_t limb = fq_params::p(i);
        if (words[i] != limb) return words[i] < limb;
    }
    return false;
}

// One point: ``in`` its 2·sizeof(F)/4 words as in the file, ``out`` the canonical words.
template <class F>
CUZK_HD uint8_t snarkjs_point(const uint32_t* in, uint32_t* out, bool& infinity) {
    constexpr int words = 2 * (int)(sizeof(F) / 4);
    uint32_t any = 0;
    for (int i = 0; i < words; i++) {
        any |= in[i];
        out[i] = 0;
    }
    infinity = any == 0;
    if (infinity) return SNARKJS_VALID;
    for (int k = 0; k < words; k += fq_t::N) {
        if (!snarkjs_below_q(in + k)) return SNARKJS_NOT_BELOW_Q;
    }
    affine_t<F> p;
    uint32_t* raw = reinterpret_cast<uint32_t*>(&p);
    for (int i = 0; i < words; i++) raw[i] = in[i];
    if (!(p.y.sqr() == p.x.sqr() * p.x + snarkjs_curve_b<F>())) return SNARKJS_OFF_CURVE;
    const affine_t<F> canonical = {p.x.from_mont(), p.y.from_mont()};
    const uint32_t* result = reinterpret_cast<const uint32_t*>(&canonical);
    for (int i = 0; i < words; i++) out[i] = result[i];
    return SNARKJS_VALID;
}

#if defined(__CUDACC__)
// Thread i decodes point i of ``in`` ((n, words) as in the file) into ``out`` (same shape,
// canonical), ``infinity[i]`` and ``status[i]``.
template <class F>
__device__ __forceinline__ void snarkjs_points(const uint32_t* __restrict__ in, uint64_t n,
                                               uint32_t* __restrict__ out,
                                               uint8_t* __restrict__ infinity,
                                               uint8_t* __restrict__ status) {
    const uint64_t i = global_thread();
    if (i >= n) return;
    constexpr uint64_t words = 2 * sizeof(F) / 4;
    bool is_inf;
    status[i] = snarkjs_point<F>(in + words * i, out + words * i, is_inf);
    infinity[i] = is_inf ? 1 : 0;
}

extern "C" __global__ void snarkjs_points_g1(const uint32_t* in, uint64_t n, uint32_t* out,
                                             uint8_t* infinity, uint8_t* status) {
    snarkjs_points<fq_t>(in, n, out, infinity, status);
}

extern "C" __global__ void snarkjs_points_g2(const uint32_t* in, uint64_t n, uint32_t* out,
                                             uint8_t* infinity, uint8_t* status) {
    snarkjs_points<fq2_t>(in, n, out, infinity, status);
}
#endif
