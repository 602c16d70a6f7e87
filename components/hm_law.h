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
 *   void LAW_events(const double *x, double u, double v, const double *p, double *z);
 *       smooth laws with a non-Lipschitz point: #define LAW_NZ n event indicators
 *       (optionally followed by the comment hm:events-if PARAM OP VALUE: only then)
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

/* set by a kernel that cannot continue (e.g. the Preisach memory stack is full); the
 * FMI boilerplate reports it as an error after the step */
static HM_TLS const char *hm_fail = NULL;

/* Work budget of the adaptive integrators below: the FMI boilerplate sets it before a
 * kernel call (< 0: unlimited) so that one doStep does bounded work; when it runs
 * out the integrator stops and sets hm_fail = HM_BUDGET_MSG. */
static HM_TLS long hm_budget = -1;
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

static double hm_side_k(double y, double q1, double q2) { return y > 0.0 ? q1 + q2 : q2 - q1; }

/* s(Z) = ∫_0^Z dz / (q0 − k|z|^m) as a geometric series (|k||Z|^m ≤ |q0|/2) */
static double hm_series_s(double Z, double q0, double k, double m)
{
    double az = fabs(Z), r = k * pow(az, m) / q0, tot = 0.0, term = 1.0;
    int j;
    for (j = 0; j < 200; j++) {
        double c = term / (j * m + 1.0);
        tot += c;
        if (fabs(c) < 1e-17 * fabs(tot)) break;
        term *= r;
    }
    return copysign(az, Z) * tot / q0;
}

/* Z on the given side (±1) with s(Z) = target (Newton; s' = 1/g) */
static double hm_series_inv(double target, double side, double q0, double k, double m,
                            double zmax)
{
    double Z = fmin(fmax(q0 * target * side, 0.0), zmax) * side;
    int it;
    for (it = 0; it < 60; it++) {
        double g = q0 - k * pow(fabs(Z), m);
        double dZ = (hm_series_s(Z, q0, k, m) - target) * g;
        double Zn = Z - dZ;
        if (Zn * side < 0.0) Zn = 0.5 * Z;
        else if (fabs(Zn) > zmax) Zn = side * zmax;
        if (fabs(Zn - Z) <= 1e-16 * fmax(fabs(Zn), 1e-300)) return Zn;
        Z = Zn;
    }
    return Z;
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

#define HM_TAYLOR_K 16

/* Taylor coefficients of y(s) for dy/ds = q0 − κ|y|^m (_taylor_coeffs in
 * modified_dahl.py, same arithmetic); returns k, *err = |c[k]|·h^k */
static int hm_taylor_coeffs(double y, double q0, double kap, double m, double h, double tol,
                            double *c, double *err)
{
    double sy = y > 0.0 ? 1.0 : -1.0, a0 = fabs(y), inv = 1.0 / a0, hk, prev, term;
    double *w = c + HM_TAYLOR_K + 1;
    int k, j;
    c[0] = y;
    w[0] = pow(a0, m);
    c[1] = q0 - kap * w[0];
    hk = h;
    prev = fabs(c[1]) * hk;
    term = prev;
    for (k = 1; k < HM_TAYLOR_K; k++) {
        double acc = 0.0;
        for (j = 1; j <= k; j++) acc += (m * j - (k - j)) * (sy * c[j]) * w[k - j];
        w[k] = acc * inv / k;
        c[k + 1] = -kap * w[k] / (k + 1);
        hk *= h;
        term = fabs(c[k + 1]) * hk;
        if (term <= tol && prev <= tol) { *err = term; return k + 1; }
        prev = term;
    }
    *err = term;
    return HM_TAYLOR_K;
}

/* y(L) for dy/ds = g(y) = q0 − q1 sgn(y)|y|^m − q2 |y|^m: the mirror of
 * power_law_advance in modified_dahl.py (shared by the modified Dahl gap and the
 * Bouc-Wen state): closed forms for m = 1 and q0 = 0, Taylor steps elsewhere, the
 * zone around y = 0 crossed exactly through the series inverse function, stops at
 * the zero y* of g instead of passing it. */
static double hm_power_law_advance(double y, double L, double q0, double q1, double q2,
                                   double m, double rtol, double scale)
{
    double sa, ka, kb, kmax, eps, ystar, snap, s, c[2 * (HM_TAYLOR_K + 1)];
    if (L <= 0.0) return y;
    if (m == 1.0) return hm_linear_law_advance(y, L, q0, q1, q2);
    if (q0 == 0.0) {
        double kap, r;
        if (y == 0.0) return 0.0;
        kap = hm_side_k(y, q1, q2);
        r = pow(fabs(y), 1.0 - m) - (1.0 - m) * kap * L;
        if (r <= 0.0) return 0.0;
        return copysign(pow(r, 1.0 / (1.0 - m)), y);
    }
    sa = q0 > 0.0 ? 1.0 : -1.0;
    ka = hm_side_k(sa, q1, q2);
    kb = hm_side_k(-sa, q1, q2);
    ystar = (q0 / ka > 0.0) ? sa * pow(q0 / ka, 1.0 / m) : NAN;
    kmax = fmax(fabs(ka), fabs(kb));
    eps = kmax > 0.0 ? pow(1e-3 * fabs(q0) / kmax, 1.0 / m) : INFINITY;
    if (eps == INFINITY) return y + q0 * L;
    snap = 1e-3 * rtol * scale;
    s = 0.0;
    while (s < L) {
        double rem = L - s, kap, tol, h, yn = y, err;
        int it, kk, j;
        if (hm_spend()) return y;
        if (ystar == ystar && fabs(y - ystar) <= snap) return ystar;
        if (fabs(y) < eps) {
            double s_y, target, se;
            if (y * sa < 0.0) {
                double sy = hm_series_s(y, q0, kb, m);
                if (-sy >= rem) return hm_series_inv(sy + rem, -sa, q0, kb, m, eps);
                s += -sy;
                y = 0.0;
                rem = L - s;
            }
            s_y = hm_series_s(y, q0, ka, m);
            target = s_y + rem;
            se = hm_series_s(sa * eps, q0, ka, m);
            if (se >= target) return hm_series_inv(target, sa, q0, ka, m, eps);
            s += se - s_y;
            y = sa * eps;
            continue;
        }
        kap = hm_side_k(y, q1, q2);
        /* no step meets a tolerance below round-off: floor it at 1e-15 (relative) */
        tol = fmax(0.01 * rtol, 1e-15) * fmax(fabs(y), scale);
        h = rem;
        for (it = 0; it < 60; it++) {
            if (it > 0 && hm_spend()) return y;  /* a retry is work too */
            kk = hm_taylor_coeffs(y, q0, kap, m, h, tol, c, &err);
            yn = c[kk];
            for (j = kk - 1; j >= 0; j--) yn = yn * h + c[j];
            if (err <= tol && yn * y > 0.0) break;
            if (err > tol) h *= 0.8 * pow(tol / err, 1.0 / kk);
            else h *= 0.5;
        }
        if (ystar == ystar && y * sa > 0.0 && (yn - ystar) * (ystar - y) >= 0.0) return ystar;
        s += h;
        y = yn;
    }
    return y;
}

#endif
