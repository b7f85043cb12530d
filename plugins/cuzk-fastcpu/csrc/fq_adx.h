/* Fq Montgomery multiplication for x86-64 CPUs with BMI2 and ADX: mulx with two independent carry
 * chains (adcx on CF, adox on OF), the same CIOS no-carry algorithm as mp_mont_mul, 1.8x faster
 * than the portable C on the dev machine. Only called after fq_adx_supported() said yes.
 *
 * Each ROUND adds a*b[i] into the seven-word accumulator t, then one Montgomery step adds m*p with
 * m = t0 * pinv, which zeroes t0. The registers rotate instead of shifting: the zeroed t0 is the
 * next round's top word. Neither chain can carry out of the top word: before a step it holds less
 * than 2^62, since t < 2p and p < 2^381.
 */
#ifndef CUZK_FASTCPU_FQ_ADX_H
#define CUZK_FASTCPU_FQ_ADX_H

#include <cpuid.h>

#define ADX_MACC(src, lo_dst, hi_dst)                                                            \
    "mulxq " src ", %[lo], %[hi]\n\t"                                                            \
    "adoxq %[lo], %[" #lo_dst "]\n\t"                                                            \
    "adcxq %[hi], %[" #hi_dst "]\n\t"
/* t += rdx * base[0..5] */
#define ADX_ROW(base, t0, t1, t2, t3, t4, t5, t6)                                                \
    "xorl %k[lo], %k[lo]\n\t"                                                                    \
    ADX_MACC("0(%[" base "])", t0, t1) ADX_MACC("8(%[" base "])", t1, t2)                        \
    ADX_MACC("16(%[" base "])", t2, t3) ADX_MACC("24(%[" base "])", t3, t4)                      \
    ADX_MACC("32(%[" base "])", t4, t5) ADX_MACC("40(%[" base "])", t5, t6)                      \
    "movl $0, %k[lo]\n\t"                                                                        \
    "adoxq %[lo], %[" #t6 "]\n\t"
#define ADX_ROUND(b_offset, t0, t1, t2, t3, t4, t5, t6)                                          \
    "movq " #b_offset "(%[b]), %%rdx\n\t"                                                        \
    ADX_ROW("a", t0, t1, t2, t3, t4, t5, t6)                                                     \
    "movq %[" #t0 "], %%rdx\n\t"                                                                 \
    "imulq %[pinv], %%rdx\n\t"                                                                   \
    ADX_ROW("p", t0, t1, t2, t3, t4, t5, t6)

static __attribute__((noinline)) void fq_mul_adx(fq *r, const fq *a, const fq *b) {
    uint64_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0, lo, hi;
    __asm__(ADX_ROUND(0, r0, r1, r2, r3, r4, r5, r6)
            ADX_ROUND(8, r1, r2, r3, r4, r5, r6, r0)
            ADX_ROUND(16, r2, r3, r4, r5, r6, r0, r1)
            ADX_ROUND(24, r3, r4, r5, r6, r0, r1, r2)
            ADX_ROUND(32, r4, r5, r6, r0, r1, r2, r3)
            ADX_ROUND(40, r5, r6, r0, r1, r2, r3, r4)
            : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [r4] "+&r"(r4),
              [r5] "+&r"(r5), [r6] "+&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi)
            : [a] "r"(a->l), [b] "r"(b->l), [p] "r"(FQ_P), [pinv] "m"(FQ_PINV)
            : "rdx", "cc", "memory");
    (void)r5; /* zeroed by the last round */
    uint64_t t[FQ_LIMBS] = {r6, r0, r1, r2, r3, r4};
    mp_reduce_once(r->l, t, FQ_P, FQ_LIMBS);
}

static int fq_adx_supported(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
    return (ebx >> 8 & 1) && (ebx >> 19 & 1); /* BMI2 (mulx) and ADX (adcx, adox) */
}

#endif
