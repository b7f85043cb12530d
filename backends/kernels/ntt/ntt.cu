// Radix-2 NTT over Fr, natural order in and out: a bit-reversing gather (fused with the
// conversion to Montgomery form and any coset scaling), then decimation-in-time butterflies
// in groups of up to NTT_SHARED_LOG stages per pass through shared memory, then a scaling pass
// (out of Montgomery form, times 1/n or a geometric sequence for inverse transforms).
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

#ifndef NTT_SHARED_LOG
#define NTT_SHARED_LOG 10
#endif
#if NTT_SHARED_LOG < 1 || NTT_SHARED_LOG > 11
#error "NTT_SHARED_LOG must be 1..11 (2^11 elements of 32 bytes fill 64 KiB of shared memory)"
#endif

// How a pass scales element i (Montgomery product with a factor): the factor is R^2 (enter
// Montgomery form), the canonical 1 (leave it), a constant, or a geometric sequence
// hi[i >> lo_bits]·lo[i & mask] built from two small tables.
enum ScaleMode : int { TO_MONT = 0, FROM_MONT = 1, CONSTANT = 2, GEOMETRIC = 3 };

__device__ __forceinline__ fr_t scale_factor(int mode, uint64_t i, const fr_t* hi,
                                             const fr_t* lo, uint32_t lo_bits) {
    switch (mode) {
        case TO_MONT:
            return fr_t::r2();
        case FROM_MONT:
            return fr_t::canonical_one();
        case CONSTANT:
            return load_vec(hi);
        default:
            return load_vec(hi + (i >> lo_bits)) * load_vec(lo + (i & ((1ull << lo_bits) - 1)));
    }
}

// out[k] = hi[k >> lo_bits]·lo[k & mask] for k < count: a geometric table (twiddles).
extern "C" __global__ void ntt_fill_table(const fr_t* hi, const fr_t* lo, uint32_t lo_bits,
                                          fr_t* out, uint64_t count) {
    const uint64_t k = global_thread();
    if (k < count) store_vec(out + k, scale_factor(GEOMETRIC, k, hi, lo, lo_bits));
}

// out[j] = in[bitrev(j)]·factor(bitrev(j)): the DIT input order, scaled on the way.
extern "C" __global__ void ntt_bitrev_scale(const fr_t* in, fr_t* out, uint32_t log_n, int mode,
                                            const fr_t* hi, const fr_t* lo, uint32_t lo_bits) {
    const uint64_t j = global_thread();
    if (j >> log_n) return;
    const uint64_t src = __brevll(j) >> (64 - log_n);
    store_vec(out + j, load_vec(in + src) * scale_factor(mode, src, hi, lo, lo_bits));
}

// Stages s .. s+K-1 of the DIT transform, in place. A block owns the 2^K elements that differ
// only in index bits s .. s+K-1, for 2^J consecutive values of the low bits (so global
// accesses come in runs of 2^J elements); it does their K stages in shared memory.
extern "C" __global__ void ntt_stages(fr_t* data, const fr_t* tw, uint32_t log_n, uint32_t s,
                                      uint32_t K, uint32_t J) {
    extern __shared__ uint4 shared_raw[];
    fr_t* sh = reinterpret_cast<fr_t*>(shared_raw);
    const uint32_t size = 1u << (K + J);
    const uint32_t jmask = (1u << J) - 1;
    const uint32_t low_blocks_log = s - J;
    const uint64_t blk = blockIdx.x;
    const uint64_t lo0 = blk & ((1ull << low_blocks_log) - 1);
    const uint64_t base = ((blk >> low_blocks_log) << (s + K)) | (lo0 << J);

    for (uint32_t e = threadIdx.x; e < size; e += blockDim.x) {
        sh[e] = load_vec(data + base + ((uint64_t)(e >> J) << s) + (e & jmask));
    }
    __syncthreads();
    const uint32_t half = size >> 1;
    for (uint32_t st = 0; st < K; st++) {
        const uint32_t low_mid = (1u << st) - 1;
        const uint32_t tw_shift = log_n - 1 - s - st;
        for (uint32_t u = threadIdx.x; u < half; u += blockDim.x) {
            const uint32_t lo = u & jmask;
            const uint32_t v = u >> J;
            const uint32_t mid_a = ((v >> st) << (st + 1)) | (v & low_mid);
            const uint32_t ea = (mid_a << J) | lo;
            const uint32_t eb = ea + (1u << (st + J));
            const uint64_t j = ((uint64_t)(mid_a & low_mid) << s) | (lo0 << J) | lo;
            const fr_t a = sh[ea];
            const fr_t b = sh[eb] * load_vec(tw + (j << tw_shift));
            sh[ea] = a + b;
            sh[eb] = a - b;
        }
        __syncthreads();
    }
    for (uint32_t e = threadIdx.x; e < size; e += blockDim.x) {
        store_vec(data + base + ((uint64_t)(e >> J) << s) + (e & jmask), sh[e]);
    }
}

// data[i] <- data[i]·factor(i), in place (leaves Montgomery form; see ScaleMode).
extern "C" __global__ void ntt_scale(fr_t* data, uint64_t n, int mode, const fr_t* hi,
                                     const fr_t* lo, uint32_t lo_bits) {
    const uint64_t i = global_thread();
    if (i < n) store_vec(data + i, load_vec(data + i) * scale_factor(mode, i, hi, lo, lo_bits));
}
