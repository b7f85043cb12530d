// NTT over Fr, natural order in and out: decimation-in-time butterflies, two stages per round
// (radix 4) in registers, up to 10 stages per pass through shared memory (the host's plan).
// The first pass gathers in bit-reversed order (applying a coset's powers), the last scales
// (by 1/n, and the inverse shift's powers, for inverse transforms), so a transform of 2^24
// elements is three passes over memory.
//
// Values are never in Montgomery form: the transform is linear and every product has one
// factor in Montgomery form (a twiddle ω^k·R, a scale factor f·R), so the Montgomery product
// x·(f·R)·R^-1 = x·f is the plain product. Entering and leaving Montgomery form would cost two
// products per element for nothing. Between the first load and the last pass's store they are
// reduced lazily, in [0, 2r): a product by a canonical constant needs no final subtraction
// then, and sums and differences cost what they did (2^24: 4.37 → 4.19 ms on the H200,
// bench/NOTES.md, round 12).
#include "../common_mem.cuh"
#include "../ff/bls12_381.cuh"

// c·x for a canonical constant c and x < 2r, in [0, 2r); x ± y for x, y < 2r, in [0, 2r).
__device__ __forceinline__ fr_t by(const fr_t& c, const fr_t& x) { return fr_t::mul_lazy(c, x); }
__device__ __forceinline__ fr_t plus(const fr_t& x, const fr_t& y) { return fr_t::add_lazy(x, y); }
__device__ __forceinline__ fr_t minus(const fr_t& x, const fr_t& y) { return fr_t::sub_lazy(x, y); }

// How a pass scales element i (Montgomery product with a factor f·R): not at all, by a constant,
// or by a geometric sequence hi[i >> lo_bits]·lo[i & mask] built from two small tables.
enum ScaleMode : int { NO_SCALE = 0, CONSTANT = 1, GEOMETRIC = 2 };

__device__ __forceinline__ fr_t scale_factor(int mode, uint64_t i, const fr_t* hi,
                                             const fr_t* lo, uint32_t lo_bits) {
    if (mode == CONSTANT) return load_vec(hi);
    return load_vec(hi + (i >> lo_bits)) * load_vec(lo + (i & ((1ull << lo_bits) - 1)));
}

// out[k] = hi[k >> lo_bits]·lo[k & mask] for k < count: a geometric table (twiddles).
extern "C" __global__ void ntt_fill_table(const fr_t* hi, const fr_t* lo, uint32_t lo_bits,
                                          fr_t* out, uint64_t count) {
    const uint64_t k = global_thread();
    if (k < count) store_vec(out + k, scale_factor(GEOMETRIC, k, hi, lo, lo_bits));
}

// Stages s .. s+K-1 of the DIT transform. A block owns the 2^K elements that differ only in
// index bits s .. s+K-1, for 2^J consecutive values of the low bits (so global accesses come in
// runs of 2^J elements), and does their K stages in shared memory. The first pass (s = 0,
// J = 0, src given) gathers its input from src in bit-reversed order, scaled by the entry
// factor; the last pass scales its output by the exit factor (mode NO_SCALE: no scaling).
// Four blocks of 256 threads per multiprocessor (64 registers, a 16-byte spill): 4.36–4.40 ms
// at 2^24 against 5.11–5.13 with ptxas's own choice under a one-block bound (bench/NOTES.md).
extern "C" __global__ void __launch_bounds__(256, 4)
    ntt_stages(const fr_t* src, fr_t* data, const fr_t* tw, uint32_t log_n, uint32_t s,
               uint32_t K, uint32_t J, int entry_mode, const fr_t* entry_hi, const fr_t* entry_lo,
               uint32_t entry_bits, int exit_mode, const fr_t* exit_hi, const fr_t* exit_lo,
               uint32_t exit_bits) {
    extern __shared__ uint4 shared_raw[];
    fr_t* sh = reinterpret_cast<fr_t*>(shared_raw);
    const uint32_t size = 1u << (K + J);
    const uint32_t jmask = (1u << J) - 1;
    const uint32_t low_blocks_log = s - J;
    const uint64_t blk = blockIdx.x;
    const uint64_t lo0 = blk & ((1ull << low_blocks_log) - 1);
    const uint64_t base = ((blk >> low_blocks_log) << (s + K)) | (lo0 << J);

    for (uint32_t e = threadIdx.x; e < size; e += blockDim.x) {
        const uint64_t i = base + ((uint64_t)(e >> J) << s) + (e & jmask);
        if (src == nullptr) {
            store_vec(sh + e, load_vec(data + i));
        } else {
            const uint64_t from = __brevll(i) >> (64 - log_n);
            fr_t value = load_vec(src + from);
            if (entry_mode != NO_SCALE) {
                value = by(scale_factor(entry_mode, from, entry_hi, entry_lo, entry_bits), value);
            }
            store_vec(sh + e, value);
        }
    }
    __syncthreads();
    // Two stages per round (radix 4): a thread takes four elements, differing in local index
    // bits st + J and st + 1 + J, through both stages in registers: half the shared-memory
    // traffic and barriers of radix 2, and two independent products in flight per stage.
    uint32_t st = 0;
    for (; st + 1 < K; st += 2) {
        const uint32_t low_mid = (1u << st) - 1;
        const uint32_t step = 1u << (st + J);
        const uint32_t tw_shift = log_n - 1 - s - st;  // stage st; stage st + 1 has one less
        for (uint32_t u = threadIdx.x; u < (size >> 2); u += blockDim.x) {
            const uint32_t lo = u & jmask;
            const uint32_t v = u >> J;
            const uint32_t mid = ((v >> st) << (st + 2)) | (v & low_mid);
            const uint32_t e = (mid << J) | lo;
            const uint64_t j = ((uint64_t)(mid & low_mid) << s) | (lo0 << J) | lo;
            fr_t x0 = load_vec(sh + e), x1 = load_vec(sh + e + step);
            fr_t x2 = load_vec(sh + e + 2 * step), x3 = load_vec(sh + e + 3 * step);
            if (s + st != 0) {  // the transform's first stage has only the twiddle 1
                const fr_t w = load_vec(tw + (j << tw_shift));
                x1 = by(w, x1);
                x3 = by(w, x3);
            }
            const fr_t t0 = plus(x0, x1), t1 = minus(x0, x1);
            const fr_t t2 = by(load_vec(tw + (j << (tw_shift - 1))), plus(x2, x3));
            const fr_t t3 =
                by(load_vec(tw + ((j + (1ull << (st + s))) << (tw_shift - 1))), minus(x2, x3));
            store_vec(sh + e, plus(t0, t2));
            store_vec(sh + e + 2 * step, minus(t0, t2));
            store_vec(sh + e + step, plus(t1, t3));
            store_vec(sh + e + 3 * step, minus(t1, t3));
        }
        __syncthreads();
    }
    if (st < K) {  // an odd stage count ends with one radix-2 stage
        const uint32_t low_mid = (1u << st) - 1;
        const uint32_t tw_shift = log_n - 1 - s - st;
        for (uint32_t u = threadIdx.x; u < (size >> 1); u += blockDim.x) {
            const uint32_t lo = u & jmask;
            const uint32_t v = u >> J;
            const uint32_t mid_a = ((v >> st) << (st + 1)) | (v & low_mid);
            const uint32_t ea = (mid_a << J) | lo;
            const uint32_t eb = ea + (1u << (st + J));
            const uint64_t j = ((uint64_t)(mid_a & low_mid) << s) | (lo0 << J) | lo;
            const fr_t a = load_vec(sh + ea);
            fr_t b = load_vec(sh + eb);
            if (s + st != 0) b = by(load_vec(tw + (j << tw_shift)), b);
            store_vec(sh + ea, plus(a, b));
            store_vec(sh + eb, minus(a, b));
        }
        __syncthreads();
    }
    const bool last = s + K == log_n;  // the last pass stores canonical values
    for (uint32_t e = threadIdx.x; e < size; e += blockDim.x) {
        const uint64_t i = base + ((uint64_t)(e >> J) << s) + (e & jmask);
        fr_t value = load_vec(sh + e);
        if (exit_mode != NO_SCALE) {  // the product with final subtraction: canonical
            value = scale_factor(exit_mode, i, exit_hi, exit_lo, exit_bits) * value;
        } else if (last) {
            value = value.reduced();
        }
        store_vec(data + i, value);
    }
}
