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
        const F u = y.dbl();
        const F v = psqr(u);
        const F w = pmul(u, v);
        const F s = pmul(x, v);
        const F x2 = psqr(x);
        const F m = x2.dbl() + x2;
        const F X3 = psqr(m) - s.dbl();
        return {X3, pmul(m, s - X3) - pmul(w, y), v, w};
    }

    // this += (x, ±y) (madd-2008-s), handling infinity, equal and opposite points. Inlined: it
    // is the MSM's inner loop, and a call would keep the accumulator in local memory.
    CUZK_HD void add_affine(const affine_t<F>& q, bool negate) {
        if (q.is_inf()) return;
        const F qy = negate ? -q.y : q.y;
        if (is_inf()) {
            *this = {q.x, qy, F::one(), F::one()};
            return;
        }
        const F p = pmul(q.x, ZZ) - X;
        const F r = pmul(qy, ZZZ) - Y;
        if (p.is_zero()) {
            *this = r.is_zero() ? dbl_affine(q.x, qy) : inf();
            return;
        }
        const F pp = psqr(p);
        const F ppp = pmul(p, pp);
        const F qq = pmul(X, pp);
        const F X3 = psqr(r) - ppp - qq.dbl();
        Y = pmul(r, qq - X3) - pmul(Y, ppp);
        X = X3;
        ZZ = pmul(ZZ, pp);
        ZZZ = pmul(ZZZ, ppp);
    }

    // this = 2·this (dbl-2008-s-1), as a call: off the hot paths, and it keeps code size down.
    CUZK_HD_NOINLINE void dbl() {
        if (is_inf()) return;
        const F u = Y.dbl();
        const F v = psqr(u);
        const F w = pmul(u, v);
        const F s = pmul(X, v);
        const F x2 = psqr(X);
        const F m = x2.dbl() + x2;
        const F X3 = psqr(m) - s.dbl();
        Y = pmul(m, s - X3) - pmul(w, Y);
        X = X3;
        ZZ = pmul(v, ZZ);
        ZZZ = pmul(w, ZZZ);
    }

    // this += q for XYZZ q (add-2008-s), handling infinity, equal and opposite points.
    CUZK_HD void add(const xyzz_t& q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = q;
            return;
        }
        const F u1 = pmul(X, q.ZZ);
        const F s1 = pmul(Y, q.ZZZ);
        const F p = pmul(q.X, ZZ) - u1;
        const F r = pmul(q.Y, ZZZ) - s1;
        if (p.is_zero()) {
            if (r.is_zero()) {
                dbl();
            } else {
                *this = inf();
            }
            return;
        }
        const F pp = psqr(p);
        const F ppp = pmul(p, pp);
        const F qq = pmul(u1, pp);
        const F X3 = psqr(r) - ppp - qq.dbl();
        Y = pmul(r, qq - X3) - pmul(s1, ppp);
        X = X3;
        ZZ = pmul(pmul(ZZ, q.ZZ), pp);
        ZZZ = pmul(pmul(ZZZ, q.ZZZ), ppp);
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
