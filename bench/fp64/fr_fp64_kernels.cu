// bench/fr_fp64.py's kernels: the FP64 Fr product (fr_fp64.cuh) checked on given pairs, and the
// peak rates of chained products: by FP64, by the kernels' IMAD product (fr_t, with and without
// its final subtraction; the NTT's is mul_lazy), and both kinds interleaved in one thread.

// Products a[t]·b[t], five 52-bit limbs an element (as 64-bit integers), for the check.
extern "C" __global__ void fr_fp64_products(const uint64_t* a, const uint64_t* b, uint64_t* out,
                                            uint32_t n) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    fr_fp64::fr52 x, y;
#pragma unroll
    for (int i = 0; i < fr_fp64::LIMBS; i++) {
        x.l[i] = double(a[fr_fp64::LIMBS * t + i]);
        y.l[i] = double(b[fr_fp64::LIMBS * t + i]);
    }
    const fr_fp64::fr52 z = fr_fp64::mul(x, y);
#pragma unroll
    for (int i = 0; i < fr_fp64::LIMBS; i++) out[fr_fp64::LIMBS * t + i] = uint64_t(z.l[i]);
}

__device__ __forceinline__ fr_fp64::fr52 fr52_at(const uint64_t* in, uint64_t i) {
    fr_fp64::fr52 x;
#pragma unroll
    for (int k = 0; k < fr_fp64::LIMBS; k++) x.l[k] = double(in[fr_fp64::LIMBS * (i & 1023) + k]);
    return x;
}

__device__ __forceinline__ uint64_t low_bits(const fr_fp64::fr52& x) { return uint64_t(x.l[0]); }

// Four independent chains a thread, as pipe_peak's fq_mul: x ← x·y.
extern "C" __global__ void peak_fr_fp64(const uint64_t* in, uint64_t* out, uint32_t iters) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    fr_fp64::fr52 a = fr52_at(in, t), b = fr52_at(in, t + 1), c = fr52_at(in, t + 2),
                  d = fr52_at(in, t + 3);
    const fr_fp64::fr52 y = fr52_at(in, t + 4);
    for (uint32_t i = 0; i < iters; i++) {
        a = fr_fp64::mul(a, y);
        b = fr_fp64::mul(b, y);
        c = fr_fp64::mul(c, y);
        d = fr_fp64::mul(d, y);
    }
    if ((low_bits(a) ^ low_bits(b) ^ low_bits(c) ^ low_bits(d)) == 0x5eed) out[t] = low_bits(a);
}

extern "C" __global__ void peak_fr_mul(const fr_t* in, fr_t* out, uint32_t iters) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    fr_t a = in[t & 1023], b = in[(t + 1) & 1023], c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const fr_t y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = a * y;
        b = b * y;
        c = c * y;
        d = d * y;
    }
    if ((a.v[0] ^ b.v[0] ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = a;
}

// The NTT's product: a canonical constant times a value below R, in [0, 2p).
extern "C" __global__ void peak_fr_mul_lazy(const fr_t* in, fr_t* out, uint32_t iters) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    fr_t a = in[t & 1023], b = in[(t + 1) & 1023], c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const fr_t y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = fr_t::mul_lazy(y, a);
        b = fr_t::mul_lazy(y, b);
        c = fr_t::mul_lazy(y, c);
        d = fr_t::mul_lazy(y, d);
    }
    if ((a.v[0] ^ b.v[0] ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = a;
}

// Two FP64 chains and two IMAD chains (mul_lazy) in one thread: do the pipes add up?
extern "C" __global__ void peak_fr_mixed(const uint64_t* in52, const fr_t* in, uint64_t* out,
                                         uint32_t iters) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    fr_fp64::fr52 a = fr52_at(in52, t), b = fr52_at(in52, t + 1);
    const fr_fp64::fr52 y52 = fr52_at(in52, t + 4);
    fr_t c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const fr_t y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = fr_fp64::mul(a, y52);
        c = fr_t::mul_lazy(y, c);
        b = fr_fp64::mul(b, y52);
        d = fr_t::mul_lazy(y, d);
    }
    if ((low_bits(a) ^ low_bits(b) ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = low_bits(a);
}
