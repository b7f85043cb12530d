// Short-Weierstrass points with a = 0 (both BLS12-381 groups): affine inputs and XYZZ
// accumulators (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2). XYZZ makes the mixed addition that
// dominates an MSM cost 8M + 2S with no inversion; formulas are the 2008 Sutherland ones
// (madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1) from the Explicit-Formulas Database.
#pragma once

#include "../common.cuh"

// The formulas' products and squares go through F::point_mul and F::point_sqr (see
// mont_t::mul_call).
template <class F>
CUZK_HD F pmul(const F& a, const F& b) {
    return F::point_mul(a, b);
}

template <class F>
CUZK_HD F psqr(const F& a) {
    return F::point_sqr(a);
}

// The formulas themselves compute lazily: coordinates stay in [0, 2p) (for Fq2 per component),
// products skip their final subtraction (mont_t::mul_lazy_call says why that is safe), and
// zero tests accept p. A product by anything (operator*, pmul, from_mont) reduces its result,
// so whatever leaves a point as a field element comes out canonical.
#ifndef XYZZ_LAZY
#define XYZZ_LAZY 1
#endif
#if XYZZ_LAZY
template <class F>
CUZK_HD F lmul(const F& a, const F& b) {
    return F::point_mul_lazy(a, b);
}
template <class F>
CUZK_HD F lsqr(const F& a) {
    return F::point_sqr_lazy(a);
}
template <class F>
CUZK_HD F ladd(const F& a, const F& b) {
    return F::add_lazy(a, b);
}
template <class F>
CUZK_HD F lsub(const F& a, const F& b) {
    return F::sub_lazy(a, b);
}
template <class F>
CUZK_HD F lneg(const F& a) {
    return F::neg_lazy(a);
}
template <class F>
CUZK_HD bool lzero(const F& a) {
    return a.is_zero_lazy();
}
#else
template <class F>
CUZK_HD F lmul(const F& a, const F& b) {
    return F::point_mul(a, b);
}
template <class F>
CUZK_HD F lsqr(const F& a) {
    return F::point_sqr(a);
}
template <class F>
CUZK_HD F ladd(const F& a, const F& b) {
    return a + b;
}
template <class F>
CUZK_HD F lsub(const F& a, const F& b) {
    return a - b;
}
template <class F>
CUZK_HD F lneg(const F& a) {
    return -a;
}
template <class F>
CUZK_HD bool lzero(const F& a) {
    return a.is_zero();
}
#endif
template <class F>
CUZK_HD F ldbl(const F& a) {
    return ladd(a, a);
}

// An affine point; (0, 0), which lies on neither curve, marks infinity.
template <class F>
struct affine_t {
    F x, y;

    CUZK_HD bool is_inf() const { return x.is_zero() & y.is_zero(); }
};

template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;

    CUZK_HD static xyzz_t inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }

    CUZK_HD bool is_inf() const { return ZZ.is_zero(); }

    CUZK_HD static xyzz_t from_affine(const affine_t<F>& a) {
        if (a.is_inf()) return inf();
        return {a.x, a.y, F::one(), F::one()};
    }

    // 2·(x, y) for an affine point (mdbl-2008-s-1).
    CUZK_HD_NOINLINE static xyzz_t dbl_affine(const F& x, const F& y) {
        const F u = ldbl(y);
        const F v = lsqr(u);
        const F w = lmul(u, v);
        const F s = lmul(x, v);
        const F x2 = lsqr(x);
        const F m = ladd(ldbl(x2), x2);
        const F X3 = lsub(lsqr(m), ldbl(s));
        return {X3, lsub(lmul(m, lsub(s, X3)), lmul(w, y)), v, w};
    }

    // this += (x, ±y) (madd-2008-s), handling infinity, equal and opposite points. Inlined: it
    // is the MSM's inner loop, and a call would keep the accumulator in local memory.
    CUZK_HD void add_affine(const affine_t<F>& q, bool negate) {
        if (q.is_inf()) return;
        const F qy = negate ? lneg(q.y) : q.y;
        if (is_inf()) {
            *this = {q.x, qy, F::one(), F::one()};
            return;
        }
        const F p = lsub(lmul(q.x, ZZ), X);
        const F r = lsub(lmul(qy, ZZZ), Y);
        if (lzero(p)) {
            *this = lzero(r) ? dbl_affine(q.x, qy) : inf();
            return;
        }
        const F pp = lsqr(p);
        const F ppp = lmul(p, pp);
        const F qq = lmul(X, pp);
        const F X3 = lsub(lsub(lsqr(r), ppp), ldbl(qq));
        Y = lsub(lmul(r, lsub(qq, X3)), lmul(Y, ppp));
        X = X3;
        ZZ = lmul(ZZ, pp);
        ZZZ = lmul(ZZZ, ppp);
    }

    // this = 2·this (dbl-2008-s-1), as a call: off the hot paths, and it keeps code size down.
    CUZK_HD_NOINLINE void dbl() {
        if (is_inf()) return;
        const F u = ldbl(Y);
        const F v = lsqr(u);
        const F w = lmul(u, v);
        const F s = lmul(X, v);
        const F x2 = lsqr(X);
        const F m = ladd(ldbl(x2), x2);
        const F X3 = lsub(lsqr(m), ldbl(s));
        Y = lsub(lmul(m, lsub(s, X3)), lmul(w, Y));
        X = X3;
        ZZ = lmul(v, ZZ);
        ZZZ = lmul(w, ZZZ);
    }

    // this += q for XYZZ q (add-2008-s), handling infinity, equal and opposite points.
    CUZK_HD void add(const xyzz_t& q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = q;
            return;
        }
        const F u1 = lmul(X, q.ZZ);
        const F s1 = lmul(Y, q.ZZZ);
        const F p = lsub(lmul(q.X, ZZ), u1);
        const F r = lsub(lmul(q.Y, ZZZ), s1);
        if (lzero(p)) {
            if (lzero(r)) {
                dbl();
            } else {
                *this = inf();
            }
            return;
        }
        const F pp = lsqr(p);
        const F ppp = lmul(p, pp);
        const F qq = lmul(u1, pp);
        const F X3 = lsub(lsub(lsqr(r), ppp), ldbl(qq));
        Y = lsub(lmul(r, lsub(qq, X3)), lmul(s1, ppp));
        X = X3;
        ZZ = lmul(lmul(ZZ, q.ZZ), pp);
        ZZZ = lmul(lmul(ZZZ, q.ZZZ), ppp);
    }

    // add_affine and add as calls. Over extension fields (F::point_calls) the formulas are
    // large and register-bound, and inlining only adds spills and compile time; XYZZ additions
    // are off the hot path (bucket reduction) everywhere.
    CUZK_HD_NOINLINE void add_affine_call(const affine_t<F>& q, bool negate) {
        add_affine(q, negate);
    }
    CUZK_HD_NOINLINE void add_call(const xyzz_t& q) { add(q); }

    // The bucket-accumulation loop's mixed addition: inlined over Fq, called over Fq2.
    CUZK_HD void accumulate(const affine_t<F>& q, bool negate) {
        if constexpr (F::point_calls) {
            add_affine_call(q, negate);
        } else {
            add_affine(q, negate);
        }
    }

    // The reduction's XYZZ addition, always a call.
    CUZK_HD void accumulate(const xyzz_t& q) { add_call(q); }

    // The same point with every coordinate taken out of Montgomery form.
    CUZK_HD xyzz_t from_mont() const {
        return {X.from_mont(), Y.from_mont(), ZZ.from_mont(), ZZZ.from_mont()};
    }
};
