/* The force-element protocol in C: the mirror of base.py and _ode.py.
 *
 * Each law's C kernel lives beside its Python definition (dahl.c next to dahl.py)
 * with the same functions and the same parameter vector p (see the `# p = [...]`
 * comment of the .py file):
 *
 *   void   LAW_advance(double *x, double u0, double u1, double dt, double v,
 *                      const double *p, double rtol);          one linear input segment
 *   double LAW_force(const double *x, double u, double v, const double *p);
 *   void   LAW_rate(const double *x, double u, double v, const double *p, double *out);
 *   const char *LAW_setup(const double *q, int nq, double *p, int np, double *x0, int nx);
 *
 * LAW_setup maps the constructor parameters q (in the order of the class's
 * param_info, arrays flattened) to p and the initial state x0, and returns NULL or
 * a message naming the offending parameter and its allowed range (the checks of
 * the Python constructor, so that an FMU user who changes a parameter gets the
 * same error).
 *
 * Optional, appended at the end of a law's file when the law needs them in the FMU:
 *
 *   double LAW_switch(const double *x, double u, double dir, const double *p);
 *       inclusions/operators: the next input value from u in the direction dir (±1)
 *       where F jumps or has a kink (face, threshold, memory corner), or dir·inf;
 *       model exchange puts an event indicator on it
 *   const char *LAW_check(const double *x, const double *p);
 *       NULL or what is wrong with a state from outside (a deserialised FMU state),
 *       checked before any kernel indexes with it (e.g. the Preisach memory depth)
 *   void LAW_jac(const double *x, double u, double v, const double *p, double *J);
 *       smooth laws: the twin of the Python jac kernel, J (n+1) x (n+2) row-major;
 *       model exchange's directional derivatives
 *   void LAW_dforce(const double *x, double u, double v, double dir, const double *p,
 *                   double *d);
 *       inclusions/operators: d[0] = dF/du on the branch the input follows from u in
 *       the direction dir (±1), x the state carried to u; d[1] = ∂F/∂v (model
 *       exchange's directional derivatives)
 *   double LAW_mean(double *x, double u0, double u1, double dt, double v, double vf,
 *                   const double *p, double rtol, double *stiff, double *dfdv);
 *       laws whose force has a fast transient (LuGre's σ1·ẋ) or relaxes fast to a
 *       saturated branch (Dahl, Bouc-Wen, modified Dahl): the mean force over
 *       the linear input segment u0 -> u1 of duration dt at velocity v (exact where the
 *       segment solution is a closed form, else Simpson on the exact states; vf: the velocity
 *       of a viscous term), advancing x as LAW_advance(x, u0, u1, dt, v, p, rtol) does, to
 *       the bit (a host may reuse the end state for its commit); a host with a step much
 *       longer than the transient (MuJoCo's plugin) hands it over as the step's force;
 *       *stiff = dt times the fastest decay rate of the state on the segment; dfdv
 *       (NULL: not wanted): the mean's derivative in v (vf = v, u1 = u0 + v·dt, x and
 *       dt fixed), or NAN where the law does not give it (the host then iterates
 *       without it)
 *   void LAW_events(const double *x, double u, double v, const double *p, double *z);
 *       smooth laws with a non-Lipschitz point: #define LAW_NZ n event indicators,
 *       n fixed whatever the parameters (inactive ones constant, e.g. 1.0)
 *
 * The FMI boilerplate (fmu/templates/) calls these through the macros HM_ADVANCE,
 * HM_FORCE, HM_RATE, HM_SETUP, HM_SWITCH, HM_CHECK_STATE, HM_EVENTS defined by the
 * exporter, which also renames every external symbol with the model identifier.
 */
#ifndef HM_LAW_H
#define HM_LAW_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef HM_MAX_STATES
#define HM_MAX_STATES 512
#endif

static double hm_sign(double v) { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }

/* Thread-local so that instances driven from different threads never see each
 * other's messages; the FMI boilerplate copies them into its instance right after
 * every kernel call (error state is per instance). */
#ifndef HM_TLS
#if defined(_MSC_VER)
#define HM_TLS __declspec(thread)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define HM_TLS _Thread_local
#else
#define HM_TLS __thread
#endif
#endif

/* message buffer for LAW_setup errors */
static HM_TLS char hm_msg[256];

/* The two variables a host touches around every kernel call; a host built as one
 * shared library may give them a cheaper TLS model (the MuJoCo plugin: initial-exec,
 * no __tls_get_addr call per access). */
#ifndef HM_TLS_HOT
#define HM_TLS_HOT HM_TLS
#endif

/* set by a kernel that cannot continue (e.g. the Preisach memory stack is full); the
 * FMI boilerplate reports it as an error after the step */
static HM_TLS_HOT const char *hm_fail = NULL;

/* Work budget of the adaptive integrators below: the FMI boilerplate sets it before a
 * kernel call (< 0: unlimited) so that one doStep does bounded work; when it runs
 * out the integrator stops and sets hm_fail = HM_BUDGET_MSG. */
static HM_TLS_HOT long hm_budget = -1;
static const char HM_BUDGET_MSG[] = "maximum number of internal steps reached";

static int hm_spend(void)
{
    if (hm_budget < 0) return 0;
    if (hm_budget == 0) { hm_fail = HM_BUDGET_MSG; return 1; }
    hm_budget--;
    return 0;
}

#define HM_CHECK(cond, ...) do { if (!(cond)) { snprintf(hm_msg, sizeof hm_msg, __VA_ARGS__); return hm_msg; } } while (0)

/* sgn(y)·|y|^m, finite at y = 0 for every m > 0 (spow in modified_dahl.py) */
static double hm_spow(double y, double m)
{
    if (y > 0.0) return pow(y, m);
    if (y < 0.0) return -pow(-y, m);
    return 0.0;
}

/* (1 − e^(−k s))/k, = s for k = 0 (_phi in modified_dahl.py) */
static double hm_phi(double k, double s)
{
    if (k == 0.0) return s;
    return -expm1(-k * s) / k;
}

/* y(L) for dy/ds = q0 − q1·y − q2·|y|, exactly: the mirror of linear_law_advance in
 * modified_dahl.py (closed-form exponential on each side, one switch at y = 0) */
static double hm_linear_law_advance(double y, double L, double q0, double q1, double q2)
{
    double k, g;
    if (L <= 0.0) return y;
    k = (y > 0.0 || (y == 0.0 && q0 > 0.0)) ? q1 + q2 : q1 - q2;
    g = q0 - k * y;
    if (y != 0.0 && g * y < 0.0) {
        double r = -y / g, c = 1.0 - k * r;
        if (c > 0.0) {
            double s0 = (k == 0.0) ? r : -log1p(-k * r) / k;
            if (s0 < L) {
                double ka = q0 > 0.0 ? q1 + q2 : q1 - q2;
                return q0 * hm_phi(ka, L - s0);
            }
        }
    }
    return y + g * hm_phi(k, L);
}

/* (1 − e^(−y))/y and (y − 1 + e^(−y))/y², = 1 and 1/2 at y = 0 (the series below 0.1:
 * no cancellation); y may be negative (a rate that grows) */
static double hm_phi1(double y)
{
    return fabs(y) < 1e-300 ? 1.0 : -expm1(-y) / y;
}

/* ψ(y) given em = expm1(−y) (a caller that has em for φ does not compute it twice; em
 * is not read below |y| = 0.1, where the series is used) */
static double hm_psi_em(double y, double em)
{
    double s;
    if (fabs(y) < 0.1) {            /* Σ (−y)^k/(k+2)!: no cancellation */
        s = 1.0 / 40320.0;
        s = 1.0 / 5040.0 - y * s;
        s = 1.0 / 720.0 - y * s;
        s = 1.0 / 120.0 - y * s;
        s = 1.0 / 24.0 - y * s;
        s = 1.0 / 6.0 - y * s;
        return 0.5 - y * s;
    }
    return (y + em) / (y * y);
}

static double hm_psi(double y)
{
    return hm_psi_em(y, fabs(y) < 0.1 ? 0.0 : expm1(-y));
}

/* dψ/dy (ψ above): (φ − 2ψ)/y, its series below 0.1 */
static double hm_dpsi(double y, double phi, double psi)
{
    double s;
    if (fabs(y) < 0.1) {            /* Σ_{k>=1} k (−y)^(k−1) (−1)/(k+2)! */
        s = 1.0 / 6720.0;
        s = -1.0 / 1008.0 + y * s;
        s = 1.0 / 180.0 + y * s;
        s = -1.0 / 40.0 + y * s;
        s = 1.0 / 12.0 + y * s;
        return -1.0 / 6.0 + y * s;
    }
    return (phi - 2.0 * psi) / y;
}

/* The mean of y over s in [0, L] along dy/ds = q0 − q1·y − q2·|y| (the path of
 * hm_linear_law_advance, same switch at y = 0), exactly: on a piece of constant
 * k = q1 ± q2 from y0, y(s) = y0 e^(−ks) + q0 (1 − e^(−ks))/k, so
 * ∫_0^t y ds = y0 t φ(kt) + q0 t² ψ(kt) (hm_phi1, hm_psi). */
static double hm_linear_law_mean(double y, double L, double q0, double q1, double q2)
{
    double k, g, t0;
    if (!(L > 0.0)) return y;
    k = (y > 0.0 || (y == 0.0 && q0 > 0.0)) ? q1 + q2 : q1 - q2;
    g = q0 - k * y;
    if (y != 0.0 && g * y < 0.0) {
        double r = -y / g, c = 1.0 - k * r;
        if (c > 0.0) {
            t0 = (k == 0.0) ? r : -log1p(-k * r) / k;
            if (t0 < L) {       /* reaches y = 0 at t0, then leaves it on the q0 side */
                double ka = q0 > 0.0 ? q1 + q2 : q1 - q2, t1 = L - t0;
                return (y * t0 * hm_phi1(k * t0) + q0 * t0 * t0 * hm_psi(k * t0)
                        + q0 * t1 * t1 * hm_psi(ka * t1)) / L;
            }
        }
    }
    return y * hm_phi1(k * L) + q0 * L * hm_psi(k * L);
}

/* Exact segment map of dy/ds = q0 − q1 sgn(y)|y|^m − q2 |y|^m: the mirror of
 * components/power_law_map.py (same regions, series, iteration and arithmetic; read
 * its docstrings). On a side of y = 0, w = |y| moves along dw/ds = ±(a − b w^m) and
 * the arc length is ∫ x^(p−1) dx/|1 ∓ x| · λ/(a m), x = (w/λ)^m, λ = (a/|b|)^(1/m),
 * p = 1/m (an incomplete beta function), summed by the series of six regions of x and
 * solved for the end by a safeguarded Halley iteration. */
enum { HM_PL_NP, HM_PL_CP, HM_PL_AP, HM_PL_HP, HM_PL_NM, HM_PL_FM };
#define HM_PL_LN2 0.6931471805599453
#define HM_PL_MAXTERMS 4000

static double hm_pl_eta(double lnx, double p)
{
    double q = p - 1.0;
    return q == 0.0 ? lnx : expm1(q * lnx) / q;
}

static double hm_pl_lnx_of_eta(double eta, double p)
{
    double q = p - 1.0;
    return q == 0.0 ? eta : log1p(q * eta) / q;
}

static double hm_pl_v_of_lnx(int kind, double lnx, double p)
{
    if (kind == HM_PL_NP || kind == HM_PL_NM) return exp(p * lnx);
    if (kind == HM_PL_CP) return -log(-expm1(lnx));
    if (kind == HM_PL_AP) return -log(-expm1(-lnx));
    if (kind == HM_PL_HP) return -hm_pl_eta(lnx, p);
    return hm_pl_eta(lnx, p);
}

static double hm_pl_lnx_of_v(int kind, double v, double p, double m)
{
    if (kind == HM_PL_NP || kind == HM_PL_NM) return v > 0.0 ? m * log(v) : -INFINITY;
    if (kind == HM_PL_CP) return log1p(-exp(-v));
    if (kind == HM_PL_AP) return -log1p(-exp(-v));
    if (kind == HM_PL_HP) return hm_pl_lnx_of_eta(-v, p);
    return hm_pl_lnx_of_eta(v, p);
}

static double hm_pl_v_cut(int kind, double p)
{
    if (kind == HM_PL_NP) return exp(-p * HM_PL_LN2);
    if (kind == HM_PL_CP || kind == HM_PL_AP) return HM_PL_LN2;
    if (kind == HM_PL_HP) return -hm_pl_eta(HM_PL_LN2, p);
    if (kind == HM_PL_NM) return 1.0;
    return 0.0;
}

/* P[0..2] for the series at v, d[0..1] the arc length's first two derivatives in v */
static void hm_pl_point(int kind, double v, double p, double m, double *P, double *d)
{
    double x, e, X, lx, a;
    P[0] = P[1] = P[2] = 0.0;
    if (kind == HM_PL_NP) {
        x = pow(v, m);
        d[0] = m / (1.0 - x);
        d[1] = v > 0.0 ? m * d[0] * x / (v * (1.0 - x)) : 0.0;
        P[0] = x; P[1] = v;
    } else if (kind == HM_PL_NM) {
        x = pow(v, m);
        P[0] = x / (1.0 + x);
        P[1] = v * pow(1.0 + x, -p);
        d[0] = m / (1.0 + x);
        d[1] = v > 0.0 ? -m * d[0] * x / (v * (1.0 + x)) : 0.0;
    } else if (kind == HM_PL_CP) {
        e = exp(-v);
        P[0] = e;
        d[0] = pow(1.0 - e, p - 1.0);
        d[1] = (p - 1.0) * d[0] * e / (1.0 - e);
    } else if (kind == HM_PL_AP) {
        e = exp(-v);
        P[0] = e;
        d[0] = pow(1.0 - e, -p);
        d[1] = -p * d[0] * e / (1.0 - e);
    } else if (kind == HM_PL_HP) {
        lx = hm_pl_lnx_of_eta(-v, p);
        X = exp(-lx);
        a = 1.0 - (p - 1.0) * v;
        P[0] = X; P[1] = -lx; P[2] = a;
        d[0] = 1.0 / (1.0 - X);
        d[1] = X / a * d[0] * d[0];
    } else {
        lx = hm_pl_lnx_of_eta(v, p);
        x = exp(lx);
        X = 1.0 / (1.0 + x);
        P[0] = X; P[1] = -log1p(x); P[2] = pow(X, 1.0 - p);
        d[0] = x * X;
        d[1] = x / (1.0 + (p - 1.0) * v) * X * X;
    }
}

static double hm_pl_em1c(double c, double r) { return c == 0.0 ? r : expm1(c * r) / c; }

/* arc length from v_b (B = hm_pl_point there) to v (P) in units λ/(a m) (_darc) */
static double hm_pl_darc(int kind, double vb, const double *B, double v, const double *P,
                      double p, double tol)
{
    double tot = 0.0, a1, a0, c, d, t;
    int k;
    if (v == vb) return 0.0;
    if (kind == HM_PL_NP) {
        a1 = P[1]; a0 = B[1];
        for (k = 0; k < HM_PL_MAXTERMS; k++) {
            t = (a1 - a0) / (k + p);
            tot += t;
            if (fabs(t) <= 0.25 * tol * fabs(tot)) break;
            a1 *= P[0]; a0 *= B[0];
        }
        return tot;
    }
    if (kind == HM_PL_NM) {
        a1 = P[1]; a0 = B[1]; c = 1.0;
        for (k = 0; k < HM_PL_MAXTERMS; k++) {
            t = c * (a1 - a0) / (p + k);
            tot += t;
            if (k > p && fabs(t) <= 0.25 * tol * fabs(tot)) break;
            c *= (p + k) / (k + 1.0);
            a1 *= P[0]; a0 *= B[0];
        }
        return tot;
    }
    if (kind == HM_PL_CP || kind == HM_PL_AP) {
        double sh = kind == HM_PL_CP ? -p : p - 1.0, kmin = kind == HM_PL_CP ? p : 2.0 * p;
        tot = v - vb; d = 1.0; a1 = 1.0; a0 = 1.0;
        for (k = 1; k < HM_PL_MAXTERMS; k++) {
            d *= (k + sh) / k;
            if (d == 0.0) break;
            a1 *= P[0]; a0 *= B[0];
            t = d * (a0 - a1) / k;
            tot += t;
            if (k > kmin && fabs(t) <= 0.25 * tol * fabs(tot)) break;
        }
        return tot;
    }
    a1 = P[2]; a0 = B[2];
    d = kind == HM_PL_HP ? 1.0 : -1.0;
    for (k = 0; k < HM_PL_MAXTERMS; k++) {
        if (k > 0 && kind == HM_PL_FM) {
            d *= (k - p) / k;
            if (d == 0.0) break;
        }
        c = k - p + 1.0;
        if (fabs(c) < 0.5) t = d * a0 * hm_pl_em1c(c, P[1] - B[1]);
        else t = d * (a1 - a0) / c;
        tot += t;
        if (k > p && fabs(t) <= 0.25 * tol * fabs(tot)) break;
        a1 *= P[0]; a0 *= B[0];
    }
    return tot;
}

static double hm_pl_halley(double f, double d1, double d2)
{
    double den = 2.0 * d1 * d1 - f * d2;
    if (den > d1 * d1) return -2.0 * f * d1 / den;
    return -f / d1;
}

/* w/λ at v + dv to first order from hm_pl_point at v (_t_lin) */
static double hm_pl_t_lin(int kind, double v, const double *P, const double *d, double p,
                       double dv)
{
    double x;
    if (kind == HM_PL_NP || kind == HM_PL_NM) return v + dv;
    if (kind == HM_PL_CP) return (1.0 - P[0]) * d[0] + p * d[0] * P[0] * dv;
    if (kind == HM_PL_AP) return d[0] + d[1] * dv;
    if (kind == HM_PL_HP) return (P[2] - p * dv) / P[0];
    x = 1.0 / P[0] - 1.0;
    return x * (1.0 + (p - 1.0) * v) + p * x * dv;
}

/* travel sig ≥ 0 from v_b towards v_end on region kind (_solve); *left = the arc
 * length left over when v_end is reached first, *T = w/λ at the end or NaN */
static double hm_pl_solve(int kind, double vb, double sig, double vend, double p, double m,
                       double tol, double acc, const double *B, const double *db,
                       double *left, double *T)
{
    double dirv, lo, hi, target, v, vn, dv, vs, f, P[3], d[2];
    int tried_end = 0, it;
    *left = 0.0;
    *T = NAN;
    if (sig <= 0.0) return vb;
    dirv = vend > vb ? 1.0 : -1.0;
    lo = fmin(vb, vend);
    hi = fmax(vb, vend);
    target = dirv * sig;
    v = vb + hm_pl_halley(-target, db[0], db[1]);
    if (!(lo < v && v < hi)) {
        if ((v - vb) * dirv > 0.0) { v = vend; tried_end = 1; }
        else v = 0.5 * (vb + vend);
        if (fabs(v) == INFINITY) { v = vb + target / db[0]; tried_end = 0; }
    }
    for (it = 0; it < 200; it++) {
        if (fabs(v) == INFINITY) return v;
        if (hm_spend()) return v;
        hm_pl_point(kind, v, p, m, P, d);
        f = hm_pl_darc(kind, vb, B, v, P, p, tol) - target;
        if (v == vend && f * dirv <= 0.0) { *left = sig - fabs(f + target); return vend; }
        if (f < 0.0) lo = v; else hi = v;
        dv = hm_pl_halley(f, d[0], d[1]);
        vn = v + dv;
        vs = (kind == HM_PL_NP || kind == HM_PL_NM) ? fmax(fabs(v), fabs(vb)) : fmax(fabs(v), 1.0);
        if ((vn - vend) * dirv >= 0.0 && !tried_end) { v = vend; tried_end = 1; continue; }
        if (!(lo <= vn && vn <= hi)) {
            if (fabs(hi) == INFINITY || fabs(lo) == INFINITY)
                vn = fmin(fmax(v - 2.0 * f / d[0], lo), hi);
            else vn = 0.5 * (lo + hi);
        } else if (fabs(dv) <= acc * vs && fabs(d[1] / d[0]) * dv * dv <= tol * vs) {
            *T = hm_pl_t_lin(kind, v, P, d, p, dv);
            return vn;
        }
        if (vn == v) return v;
        v = vn;
    }
    return v;
}

/* region, v and hm_pl_point at w = λT, x = T^m (_start) */
static int hm_pl_start(double T, double x, int pos, double p, double m, double *v, double *B,
                    double *db)
{
    double e, lx, X, a;
    B[0] = B[1] = B[2] = 0.0;
    if (pos) {
        if (x <= 0.5) {
            db[0] = m / (1.0 - x);
            db[1] = T > 0.0 ? m * db[0] * x / (T * (1.0 - x)) : 0.0;
            B[0] = x; B[1] = T; *v = T;
            return HM_PL_NP;
        }
        if (x < 1.0) {
            e = 1.0 - x;
            db[0] = T / x;
            db[1] = (p - 1.0) * db[0] * e / x;
            B[0] = e; *v = -log(e);
            return HM_PL_CP;
        }
        if (x <= 2.0) {
            e = 1.0 - 1.0 / x;
            db[0] = T;
            db[1] = -p * T * e / (1.0 - e);
            B[0] = e; *v = -log(e);
            return HM_PL_AP;
        }
        lx = log(x);
        X = 1.0 / x;
        a = T / x;
        db[0] = 1.0 / (1.0 - X);
        db[1] = X / a * db[0] * db[0];
        B[0] = X; B[1] = -lx; B[2] = a; *v = -hm_pl_eta(lx, p);
        return HM_PL_HP;
    }
    if (x <= 1.0) {
        B[0] = x / (1.0 + x);
        B[1] = T * pow(1.0 + x, -p);
        db[0] = m / (1.0 + x);
        db[1] = T > 0.0 ? -m * db[0] * x / (T * (1.0 + x)) : 0.0;
        *v = T;
        return HM_PL_NM;
    }
    lx = log(x);
    X = 1.0 / (1.0 + x);
    *v = hm_pl_eta(lx, p);
    B[0] = X; B[1] = -log1p(x); B[2] = pow(X, 1.0 - p);
    db[0] = x * X;
    db[1] = T / x * x / (1.0 + (p - 1.0) * *v) * X * X;
    return HM_PL_FM;
}

#define HM_PL_FAR 8.0

/* ln of ∫_x^∞ t^(p−1) dt/(t ∓ 1) at x = e^lx ≥ e^8, p < 1, and its derivative in lx
 * (_tail) */
static double hm_pl_tail(double lx, int pos, double p, double *dg)
{
    double X = exp(-lx), sgn = pos ? 1.0 : -1.0, tot = 0.0, der = 0.0, c = 1.0, t;
    int k;
    for (k = 0; k < 60; k++) {
        t = c / (k + 1.0 - p);
        tot += t;
        der += k * t;
        if (fabs(t) <= 1e-17 * fabs(tot)) break;
        c *= sgn * X;
    }
    *dg = (p - 1.0) - der / tot;
    return (p - 1.0) * lx + log(tot);
}

/* fall from x = e^lx towards e^lf over the arc length *sig; returns ln x at the end,
 * *sig = the arc length left over at e^lf, else 0 (_far_fall) */
static double hm_pl_far_fall(double lx, double lf, double *sig, int pos, double p)
{
    double dg, g0 = hm_pl_tail(lx, pos, p, &dg), gf = hm_pl_tail(lf, pos, p, &dg), ls, g1,
           l1, g, dl;
    int it;
    if (!(*sig > 0.0)) { *sig = 0.0; return lx; }
    if (*sig >= exp(gf) - exp(g0)) { *sig -= exp(gf) - exp(g0); return lf; }
    ls = log(*sig);
    g1 = ls > g0 ? ls + log1p(exp(g0 - ls)) : g0 + log1p(exp(ls - g0));
    *sig = 0.0;
    if (!(g1 > g0)) return lx;
    l1 = fmin(fmax((g1 + log(1.0 - p)) / (p - 1.0), lf), lx);
    for (it = 0; it < 50; it++) {
        g = hm_pl_tail(l1, pos, p, &dg);
        dl = -(g - g1) / dg;
        l1 = fmin(fmax(l1 + dl, lf), lx);
        if (fabs(dl) <= 1e-15 * l1) break;
    }
    return l1;
}

/* w = |y| along dw/ds = a − b w^m (toward_zero = 0) or −(a − b w^m) over the arc
 * length S; *left = the arc length left when w reached 0 first (side_travel) */
static double hm_pl_side_travel(double w0, int toward_zero, double S, double a, double b,
                             double m, double tol, double acc, double *left)
{
    double p, lam, sig, T, Te, x, v, vend, lnx, B[3], db[2];
    int pos, kind, outward;
    *left = 0.0;
    if (b == 0.0) {
        if (!toward_zero) return w0 + a * S;
        if (a * S >= w0) { *left = S - w0 / a; return 0.0; }
        return w0 - a * S;
    }
    pos = b > 0.0;
    p = 1.0 / m;
    lam = pow(a / fabs(b), p);
    sig = fmin(S * (a * m) / lam, 1e300);
    T = w0 / lam;
    if (T > 1.0 && m > 1.0 && pos != toward_zero) {
        /* falling from far beyond λ: closed-form tail (see side_travel) */
        double lx = m * log(T), lf = HM_PL_FAR / (1.0 - p);
        if ((1.0 - p) * lx > HM_PL_FAR) {
            lx = hm_pl_far_fall(lx, lf, &sig, pos, p);
            if (lx > lf) return lam * exp(p * lx);
            T = exp(p * lf);
        }
    }
    x = pow(T, m);
    if (pos && x == 1.0) return w0;
    outward = toward_zero && pos && x > 1.0;  /* beyond a return branch's unstable point */
    kind = hm_pl_start(T, x, pos, p, m, &v, B, db);
    for (;;) {
        if (outward) vend = kind == HM_PL_AP ? hm_pl_v_cut(kind, p) : (p >= 1.0 ? -INFINITY : -1.0 / (1.0 - p));
        else if (toward_zero) vend = (kind == HM_PL_NP || kind == HM_PL_NM) ? 0.0 : hm_pl_v_cut(kind, p);
        else if (kind == HM_PL_NP || kind == HM_PL_NM || kind == HM_PL_HP) vend = hm_pl_v_cut(kind, p);
        else if (kind == HM_PL_FM) vend = p >= 1.0 ? INFINITY : 1.0 / (1.0 - p);
        else vend = INFINITY;
        v = hm_pl_solve(kind, v, sig, vend, p, m, tol, acc, B, db, &sig, &Te);
        if (sig <= 0.0 || v != vend) break;
        if (kind == HM_PL_NP || kind == HM_PL_NM) {
            if (toward_zero) { *left = sig * lam / (a * m); return 0.0; }
        } else if ((kind == HM_PL_FM && !toward_zero) || (kind == HM_PL_HP && outward)) return INFINITY;
        lnx = hm_pl_lnx_of_v(kind, v, p, m);
        if (outward) kind = HM_PL_HP;
        else if (toward_zero) kind = kind == HM_PL_CP ? HM_PL_NP : HM_PL_NM;
        else kind = kind == HM_PL_NP ? HM_PL_CP : (kind == HM_PL_HP ? HM_PL_AP : HM_PL_FM);
        v = hm_pl_v_of_lnx(kind, lnx, p);
        hm_pl_point(kind, v, p, m, B, db);
    }
    if (kind == HM_PL_NP || kind == HM_PL_NM) return lam * v;
    if (Te == Te) return lam * Te;
    if (kind == HM_PL_CP) return lam * pow(-expm1(-v), p);
    if (kind == HM_PL_AP) return lam * pow(-expm1(-v), -p);
    return lam * exp(p * hm_pl_lnx_of_v(kind, v, p, m));
}

/* y(h) by the degree-6 Taylor polynomial about y ≠ 0, or NaN when h is not short
 * (_short_step in power_law_map.py) */
static double hm_pl_short_step(double y, double h, double q0, double kap, double m, double tol,
                            double scale)
{
    double sy = y > 0.0 ? 1.0 : -1.0, a0 = fabs(y), w0, c1, inv, km, A1, w1, c2, A2, w2, c3,
           A3, w3, c4, A4, w4, c5, A5, w5, c6, h2, h5;
    const double third = 1.0 / 3.0, sixth = 1.0 / 6.0;
    w0 = pow(a0, m);
    c1 = q0 - kap * w0;
    if (fabs(c1) * h > 0.25 * a0) return NAN;
    /* w2..w5 below are the coefficients times |y| (one reciprocal, no division on the
     * chain), as in _short_step */
    inv = 1.0 / a0;
    km = -kap * inv;
    A1 = sy * c1;
    w1 = m * A1 * w0 * inv;
    c2 = -kap * w1 * 0.5;
    A2 = sy * c2;
    w2 = ((m - 1.0) * A1 * w1 + 2.0 * m * A2 * w0) * 0.5;
    c3 = km * w2 * third;
    A3 = sy * c3;
    w3 = ((m - 2.0) * A1 * w2 * inv + (2.0 * m - 1.0) * A2 * w1 + 3.0 * m * A3 * w0) * third;
    c4 = km * w3 * 0.25;
    A4 = sy * c4;
    w4 = ((m - 3.0) * A1 * w3 * inv + (2.0 * m - 2.0) * A2 * w2 * inv + (3.0 * m - 1.0) * A3 * w1
          + 4.0 * m * A4 * w0) * 0.25;
    c5 = km * w4 * 0.2;
    A5 = sy * c5;
    w5 = ((m - 4.0) * A1 * w4 * inv + (2.0 * m - 3.0) * A2 * w3 * inv
          + (3.0 * m - 2.0) * A3 * w2 * inv + (4.0 * m - 1.0) * A4 * w1 + 5.0 * m * A5 * w0) * 0.2;
    c6 = km * w5 * sixth;
    h2 = h * h;
    h5 = h2 * h2 * h;
    if (fabs(c5) * h5 + fabs(c6) * h5 * h > 0.1 * tol * fmax(a0, scale)) return NAN;
    return y + h * (c1 + h * (c2 + h * (c3 + h * (c4 + h * (c5 + h * c6)))));
}

/* y(L) for dy/ds = q0 − q1 sgn(y)|y|^m − q2 |y|^m (power_law_advance in
 * power_law_map.py): shared by the modified Dahl gap and the Bouc-Wen state; scale is
 * the size of the quantity whose accuracy matters (the force for the gap, 0 for z) */
static double hm_power_law_advance(double y, double L, double q0, double q1, double q2,
                                   double m, double rtol, double scale)
{
    double tol, acc, sa, a, ka, kb, w, left;
    if (!(L > 0.0)) return y;
    if (q0 == 0.0) {
        double kap, r;
        if (y == 0.0) return 0.0;
        kap = y > 0.0 ? q1 + q2 : q1 - q2;  /* d|y|/ds = −κ|y|^m */
        if (m == 1.0) return y * exp(-kap * L);
        r = pow(fabs(y), 1.0 - m) - (1.0 - m) * kap * L;
        if (r <= 0.0) return 0.0;
        return copysign(pow(r, 1.0 / (1.0 - m)), y);
    }
    tol = fmin(fmax(1e-3 * rtol, 1e-16), 1e-6);
    if (y != 0.0) {
        w = hm_pl_short_step(y, L, q0, y > 0.0 ? q1 + q2 : q2 - q1, m, tol, scale);
        if (w == w) return w;
    }
    acc = 0.1 * sqrt(tol);
    sa = q0 > 0.0 ? 1.0 : -1.0;
    a = fabs(q0);
    ka = sa > 0.0 ? q1 + q2 : q2 - q1;
    kb = sa > 0.0 ? q2 - q1 : q1 + q2;
    if (y * sa < 0.0) {
        w = hm_pl_side_travel(fabs(y), 1, L, a, sa * kb, m, tol, acc, &left);
        if (left <= 0.0 || w != 0.0) return -sa * w;
        L = left;
    }
    w = hm_pl_side_travel(y * sa > 0.0 ? fabs(y) : 0.0, 0, L, a, sa * ka, m, tol, acc, &left);
    return sa * w;
}

#endif
