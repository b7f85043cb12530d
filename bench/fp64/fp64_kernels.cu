// bench/fp64_products.py's kernels: the FP64 Montgomery products (fp64_mont.cuh) of Fr and Fq
// checked on given pairs, and the peak rates of chained products: by FP64, by the kernels' IMAD
// product (fr_t, fq_t; for Fr also mul_lazy, the NTT's), and both kinds interleaved in a thread.

template <class P>
__device__ __forceinline__ fp64::element<P> element_at(const uint64_t* in, uint64_t i) {
    fp64::element<P> x;
#pragma unroll
    for (int k = 0; k < P::LIMBS; k++) x.l[k] = double(in[P::LIMBS * i + k]);
    return x;
}

template <class P>
__device__ __forceinline__ uint64_t low_bits(const fp64::element<P>& x) {
    return uint64_t(x.l[0]);
}

__device__ __forceinline__ uint64_t thread_index() {
    return uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Products a[t]·b[t], n 52-bit limbs an element (as 64-bit integers), for the check.
template <class P>
__device__ __forceinline__ void products(const uint64_t* a, const uint64_t* b, uint64_t* out,
                                         uint32_t count) {
    const uint64_t t = thread_index();
    if (t >= count) return;
    const fp64::element<P> z = fp64::mul(element_at<P>(a, t), element_at<P>(b, t));
#pragma unroll
    for (int i = 0; i < P::LIMBS; i++) out[P::LIMBS * t + i] = uint64_t(z.l[i]);
}

// Four independent chains a thread, as pipe_peak's fq_mul: x ← x·y, over 1024 inputs.
template <class P>
__device__ __forceinline__ void peak_fp64(const uint64_t* in, uint64_t* out, uint32_t iters) {
    const uint64_t t = thread_index();
    fp64::element<P> a = element_at<P>(in, t & 1023), b = element_at<P>(in, (t + 1) & 1023),
                     c = element_at<P>(in, (t + 2) & 1023), d = element_at<P>(in, (t + 3) & 1023);
    const fp64::element<P> y = element_at<P>(in, (t + 4) & 1023);
    for (uint32_t i = 0; i < iters; i++) {
        a = fp64::mul(a, y);
        b = fp64::mul(b, y);
        c = fp64::mul(c, y);
        d = fp64::mul(d, y);
    }
    if ((low_bits(a) ^ low_bits(b) ^ low_bits(c) ^ low_bits(d)) == 0x5eed) out[t] = low_bits(a);
}

// The same chains by the kernels' IMAD product: `lazy` takes mul_lazy (no final subtraction).
template <class F, bool lazy>
__device__ __forceinline__ void peak_imad(const F* in, F* out, uint32_t iters) {
    const uint64_t t = thread_index();
    F a = in[t & 1023], b = in[(t + 1) & 1023], c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const F y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = lazy ? F::mul_lazy(y, a) : a * y;
        b = lazy ? F::mul_lazy(y, b) : b * y;
        c = lazy ? F::mul_lazy(y, c) : c * y;
        d = lazy ? F::mul_lazy(y, d) : d * y;
    }
    if ((a.v[0] ^ b.v[0] ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = a;
}

// Two FP64 chains and two IMAD chains in one thread: do the pipes add up?
template <class P, class F, bool lazy>
__device__ __forceinline__ void peak_mixed(const uint64_t* in52, const F* in, uint64_t* out,
                                           uint32_t iters) {
    const uint64_t t = thread_index();
    fp64::element<P> a = element_at<P>(in52, t & 1023), b = element_at<P>(in52, (t + 1) & 1023);
    const fp64::element<P> y52 = element_at<P>(in52, (t + 4) & 1023);
    F c = in[(t + 2) & 1023], d = in[(t + 3) & 1023];
    const F y = in[(t + 4) & 1023];
    for (uint32_t i = 0; i < iters; i++) {
        a = fp64::mul(a, y52);
        c = lazy ? F::mul_lazy(y, c) : c * y;
        b = fp64::mul(b, y52);
        d = lazy ? F::mul_lazy(y, d) : d * y;
    }
    if ((low_bits(a) ^ low_bits(b) ^ c.v[0] ^ d.v[0]) == 0x5eed) out[t] = low_bits(a);
}

extern "C" __global__ void fr_fp64_products(const uint64_t* a, const uint64_t* b, uint64_t* out,
                                            uint32_t count) {
    products<fp64::fr_params>(a, b, out, count);
}
extern "C" __global__ void fq_fp64_products(const uint64_t* a, const uint64_t* b, uint64_t* out,
                                            uint32_t count) {
    products<fp64::fq_params>(a, b, out, count);
}
extern "C" __global__ void peak_fr_fp64(const uint64_t* in, uint64_t* out, uint32_t iters) {
    peak_fp64<fp64::fr_params>(in, out, iters);
}
extern "C" __global__ void peak_fq_fp64(const uint64_t* in, uint64_t* out, uint32_t iters) {
    peak_fp64<fp64::fq_params>(in, out, iters);
}
extern "C" __global__ void peak_fr_mul(const fr_t* in, fr_t* out, uint32_t iters) {
    peak_imad<fr_t, false>(in, out, iters);
}
extern "C" __global__ void peak_fr_mul_lazy(const fr_t* in, fr_t* out, uint32_t iters) {
    peak_imad<fr_t, true>(in, out, iters);
}
extern "C" __global__ void peak_fq_mul(const fq_t* in, fq_t* out, uint32_t iters) {
    peak_imad<fq_t, false>(in, out, iters);
}
extern "C" __global__ void peak_fr_mixed(const uint64_t* in52, const fr_t* in, uint64_t* out,
                                         uint32_t iters) {
    peak_mixed<fp64::fr_params, fr_t, true>(in52, in, out, iters);
}
extern "C" __global__ void peak_fq_mixed(const uint64_t* in52, const fq_t* in, uint64_t* out,
                                         uint32_t iters) {
    peak_mixed<fp64::fq_params, fq_t, false>(in52, in, out, iters);
}
