// Short-Weierstrass points with a = 0 (both BLS12-381 groups): affine inputs and XYZZ
// accumulators (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2). XYZZ makes the mixed addition that
// dominates an MSM cost 8M + 2S with no inversion; formulas are the 2008 Sutherland ones
// (madd-2008-s, add-2008-s, dbl-2008-s-1, mdbl-2008-s-1) from the Explicit-Formulas Database.
#pragma once

#include "../common.cuh"

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
        const F v = u.sqr();
        const F w = u * v;
        const F s = x * v;
        const F x2 = x.sqr();
        const F m = x2.dbl() + x2;
        const F X3 = m.sqr() - s.dbl();
        return {X3, m * (s - X3) - w * y, v, w};
    }

    // this += (x, ±y) (madd-2008-s), handling infinity, equal and opposite points.
    CUZK_HD_NOINLINE void add_affine(const affine_t<F>& q, bool negate) {
        if (q.is_inf()) return;
        const F qy = negate ? -q.y : q.y;
        if (is_inf()) {
            *this = {q.x, qy, F::one(), F::one()};
            return;
        }
        const F p = q.x * ZZ - X;
        const F r = qy * ZZZ - Y;
        if (p.is_zero()) {
            *this = r.is_zero() ? dbl_affine(q.x, qy) : inf();
            return;
        }
        const F pp = p.sqr();
        const F ppp = p * pp;
        const F qq = X * pp;
        const F X3 = r.sqr() - ppp - qq.dbl();
        Y = r * (qq - X3) - Y * ppp;
        X = X3;
        ZZ = ZZ * pp;
        ZZZ = ZZZ * ppp;
    }

    // this = 2·this (dbl-2008-s-1).
    CUZK_HD_NOINLINE void dbl() {
        if (is_inf()) return;
        const F u = Y.dbl();
        const F v = u.sqr();
        const F w = u * v;
        const F s = X * v;
        const F x2 = X.sqr();
        const F m = x2.dbl() + x2;
        const F X3 = m.sqr() - s.dbl();
        Y = m * (s - X3) - w * Y;
        X = X3;
        ZZ = v * ZZ;
        ZZZ = w * ZZZ;
    }

    // this += q for XYZZ q (add-2008-s), handling infinity, equal and opposite points.
    CUZK_HD_NOINLINE void add(const xyzz_t& q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = q;
            return;
        }
        const F u1 = X * q.ZZ;
        const F s1 = Y * q.ZZZ;
        const F p = q.X * ZZ - u1;
        const F r = q.Y * ZZZ - s1;
        if (p.is_zero()) {
            if (r.is_zero()) {
                dbl();
            } else {
                *this = inf();
            }
            return;
        }
        const F pp = p.sqr();
        const F ppp = p * pp;
        const F qq = u1 * pp;
        const F X3 = r.sqr() - ppp - qq.dbl();
        Y = r * (qq - X3) - s1 * ppp;
        X = X3;
        ZZ = ZZ * q.ZZ * pp;
        ZZZ = ZZZ * q.ZZZ * ppp;
    }

    // The same point with every coordinate taken out of Montgomery form.
    CUZK_HD xyzz_t from_mont() const {
        return {X.from_mont(), Y.from_mont(), ZZ.from_mont(), ZZZ.from_mont()};
    }
};
