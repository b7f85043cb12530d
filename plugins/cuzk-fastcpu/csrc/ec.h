/* Short Weierstrass a = 0 group law over a field FE, instantiated once for G1 (FE = fq) and once
 * for G2 (FE = fq2). The includer defines FE (the field type), FE_(op) (its operation names) and
 * EC_(name) (the prefix of everything declared here). Jacobian points (X/Z^2, Y/Z^3) with Z = 0
 * for infinity; affine points carry no infinity (callers track it).
 */
#if !defined(FE) || !defined(FE_) || !defined(EC_)
#error "define FE, FE_ and EC_ before including ec.h"
#endif

typedef struct { FE x, y; } EC_(aff);
typedef struct { FE X, Y, Z; } EC_(jac);

INLINE void EC_(set_inf)(EC_(jac) *p) {
    FE_(set_one)(&p->X);
    FE_(set_one)(&p->Y);
    FE_(set_zero)(&p->Z);
}

INLINE int EC_(is_inf)(const EC_(jac) *p) { return FE_(is_zero)(&p->Z); }

INLINE void EC_(from_aff)(EC_(jac) *r, const EC_(aff) *a) {
    r->X = a->x;
    r->Y = a->y;
    FE_(set_one)(&r->Z);
}

/* dbl-2009-l: 2M + 5S */
static void EC_(dbl)(EC_(jac) *r, const EC_(jac) *p) {
    if (EC_(is_inf)(p)) {
        *r = *p;
        return;
    }
    FE a, b, c, d, e, f, t;
    FE_(sqr)(&a, &p->X);
    FE_(sqr)(&b, &p->Y);
    FE_(sqr)(&c, &b);
    FE_(add)(&t, &p->X, &b);
    FE_(sqr)(&t, &t);
    FE_(sub)(&t, &t, &a);
    FE_(sub)(&t, &t, &c);
    FE_(add)(&d, &t, &t);
    FE_(add)(&e, &a, &a);
    FE_(add)(&e, &e, &a);
    FE_(sqr)(&f, &e);
    FE_(mul)(&r->Z, &p->Y, &p->Z);
    FE_(add)(&r->Z, &r->Z, &r->Z);
    FE_(sub)(&r->X, &f, &d);
    FE_(sub)(&r->X, &r->X, &d);
    FE_(sub)(&t, &d, &r->X);
    FE_(mul)(&t, &e, &t);
    FE_(add)(&c, &c, &c);
    FE_(add)(&c, &c, &c);
    FE_(add)(&c, &c, &c);
    FE_(sub)(&r->Y, &t, &c);
}

/* madd-2007-bl: p + q with q affine, 7M + 4S; handles p = inf, p = q and p = -q */
static void EC_(madd)(EC_(jac) *r, const EC_(jac) *p, const EC_(aff) *q) {
    if (EC_(is_inf)(p)) {
        EC_(from_aff)(r, q);
        return;
    }
    FE z1z1, u2, s2, h, hh, i, j, rr, v, t;
    FE_(sqr)(&z1z1, &p->Z);
    FE_(mul)(&u2, &q->x, &z1z1);
    FE_(mul)(&s2, &q->y, &p->Z);
    FE_(mul)(&s2, &s2, &z1z1);
    FE_(sub)(&h, &u2, &p->X);
    FE_(sub)(&rr, &s2, &p->Y);
    if (FE_(is_zero)(&h)) {
        if (FE_(is_zero)(&rr)) {
            EC_(jac) tmp;
            EC_(from_aff)(&tmp, q);
            EC_(dbl)(r, &tmp);
        } else {
            EC_(set_inf)(r);
        }
        return;
    }
    FE_(add)(&rr, &rr, &rr);
    FE_(sqr)(&hh, &h);
    FE_(add)(&i, &hh, &hh);
    FE_(add)(&i, &i, &i);
    FE_(mul)(&j, &h, &i);
    FE_(mul)(&v, &p->X, &i);
    FE Y1 = p->Y;
    FE_(add)(&t, &p->Z, &h);
    FE_(sqr)(&t, &t);
    FE_(sub)(&t, &t, &z1z1);
    FE_(sub)(&r->Z, &t, &hh);
    FE_(sqr)(&r->X, &rr);
    FE_(sub)(&r->X, &r->X, &j);
    FE_(sub)(&r->X, &r->X, &v);
    FE_(sub)(&r->X, &r->X, &v);
    FE_(sub)(&t, &v, &r->X);
    FE_(mul)(&t, &rr, &t);
    FE_(mul)(&Y1, &Y1, &j);
    FE_(add)(&Y1, &Y1, &Y1);
    FE_(sub)(&r->Y, &t, &Y1);
}

/* add-2007-bl: 11M + 5S; handles infinities, p = q and p = -q */
static void EC_(add)(EC_(jac) *r, const EC_(jac) *p, const EC_(jac) *q) {
    if (EC_(is_inf)(p)) {
        *r = *q;
        return;
    }
    if (EC_(is_inf)(q)) {
        *r = *p;
        return;
    }
    FE z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
    FE_(sqr)(&z1z1, &p->Z);
    FE_(sqr)(&z2z2, &q->Z);
    FE_(mul)(&u1, &p->X, &z2z2);
    FE_(mul)(&u2, &q->X, &z1z1);
    FE_(mul)(&s1, &p->Y, &q->Z);
    FE_(mul)(&s1, &s1, &z2z2);
    FE_(mul)(&s2, &q->Y, &p->Z);
    FE_(mul)(&s2, &s2, &z1z1);
    FE_(sub)(&h, &u2, &u1);
    FE_(sub)(&rr, &s2, &s1);
    if (FE_(is_zero)(&h)) {
        if (FE_(is_zero)(&rr))
            EC_(dbl)(r, p);
        else
            EC_(set_inf)(r);
        return;
    }
    FE_(add)(&rr, &rr, &rr);
    FE_(add)(&i, &h, &h);
    FE_(sqr)(&i, &i);
    FE_(mul)(&j, &h, &i);
    FE_(mul)(&v, &u1, &i);
    FE_(add)(&t, &p->Z, &q->Z);
    FE_(sqr)(&t, &t);
    FE_(sub)(&t, &t, &z1z1);
    FE_(sub)(&t, &t, &z2z2);
    FE_(mul)(&r->Z, &t, &h);
    FE_(sqr)(&r->X, &rr);
    FE_(sub)(&r->X, &r->X, &j);
    FE_(sub)(&r->X, &r->X, &v);
    FE_(sub)(&r->X, &r->X, &v);
    FE_(sub)(&t, &v, &r->X);
    FE_(mul)(&t, &rr, &t);
    FE_(mul)(&s1, &s1, &j);
    FE_(add)(&s1, &s1, &s1);
    FE_(sub)(&r->Y, &t, &s1);
}

/* affine coordinates of p; returns 1 (and leaves r untouched) when p is infinity */
static int EC_(to_aff)(EC_(aff) *r, const EC_(jac) *p) {
    if (EC_(is_inf)(p)) return 1;
    FE zi, zi2;
    FE_(inv)(&zi, &p->Z);
    FE_(sqr)(&zi2, &zi);
    FE_(mul)(&r->x, &p->X, &zi2);
    FE_(mul)(&zi2, &zi2, &zi);
    FE_(mul)(&r->y, &p->Y, &zi2);
    return 0;
}
