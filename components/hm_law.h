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
 * The FMI boilerplate (fmu/templates/) calls these through the macros HM_ADVANCE,
 * HM_FORCE, HM_RATE, HM_SETUP defined by the exporter.
 */
#ifndef HM_LAW_H
#define HM_LAW_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef HM_MAX_STATES
#define HM_MAX_STATES 512
#endif

typedef void (*hm_rate_fn)(const double *x, double u, double v, const double *p, double *out);

static double hm_sign(double v) { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }

/* message buffer for LAW_setup errors */
static char hm_msg[256];

#define HM_CHECK(cond, ...) do { if (!(cond)) { snprintf(hm_msg, sizeof hm_msg, __VA_ARGS__); return hm_msg; } } while (0)

/* Dormand & Prince (1980) 5(4) over one input segment, in place: the same scheme,
 * coefficients and error control as rk_advance in _ode.py, so the C and Python
 * kernels agree to rounding. Returns the number of accepted steps. */
static int hm_rk_advance(hm_rate_fn rate, double *x, int n, double u0, double dt, double v,
                         const double *p, double rtol, const double *xscale)
{
    static const double C2 = 1.0 / 5, C3 = 3.0 / 10, C4 = 4.0 / 5, C5 = 8.0 / 9;
    static const double A21 = 1.0 / 5;
    static const double A31 = 3.0 / 40, A32 = 9.0 / 40;
    static const double A41 = 44.0 / 45, A42 = -56.0 / 15, A43 = 32.0 / 9;
    static const double A51 = 19372.0 / 6561, A52 = -25360.0 / 2187, A53 = 64448.0 / 6561,
                        A54 = -212.0 / 729;
    static const double A61 = 9017.0 / 3168, A62 = -355.0 / 33, A63 = 46732.0 / 5247,
                        A64 = 49.0 / 176, A65 = -5103.0 / 18656;
    static const double B1 = 35.0 / 384, B3 = 500.0 / 1113, B4 = 125.0 / 192,
                        B5 = -2187.0 / 6784, B6 = 11.0 / 84;
    static const double E1 = 71.0 / 57600, E3 = -71.0 / 16695, E4 = 71.0 / 1920,
                        E5 = -17253.0 / 339200, E6 = 22.0 / 525, E7 = -1.0 / 40;
    double k1[HM_MAX_STATES], k2[HM_MAX_STATES], k3[HM_MAX_STATES], k4[HM_MAX_STATES],
           k5[HM_MAX_STATES], k6[HM_MAX_STATES], k7[HM_MAX_STATES], y[HM_MAX_STATES],
           xn[HM_MAX_STATES];
    double s = 0.0, h = dt, hmin = dt * 1e-14;
    int i, steps = 0;
    if (dt <= 0.0) return 0;
    rate(x, u0, v, p, k1);
    while (s < dt) {
        double err = 0.0;
        if (s + h > dt) h = dt - s;
        for (i = 0; i < n; i++) y[i] = x[i] + h * A21 * k1[i];
        rate(y, u0 + v * (s + C2 * h), v, p, k2);
        for (i = 0; i < n; i++) y[i] = x[i] + h * (A31 * k1[i] + A32 * k2[i]);
        rate(y, u0 + v * (s + C3 * h), v, p, k3);
        for (i = 0; i < n; i++) y[i] = x[i] + h * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i]);
        rate(y, u0 + v * (s + C4 * h), v, p, k4);
        for (i = 0; i < n; i++)
            y[i] = x[i] + h * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i]);
        rate(y, u0 + v * (s + C5 * h), v, p, k5);
        for (i = 0; i < n; i++)
            y[i] = x[i] + h * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i] + A65 * k5[i]);
        rate(y, u0 + v * (s + h), v, p, k6);
        for (i = 0; i < n; i++)
            xn[i] = x[i] + h * (B1 * k1[i] + B3 * k3[i] + B4 * k4[i] + B5 * k5[i] + B6 * k6[i]);
        rate(xn, u0 + v * (s + h), v, p, k7);
        for (i = 0; i < n; i++) {
            double e = h * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i]
                            + E7 * k7[i]);
            double sc = fabs(x[i]);
            if (fabs(xn[i]) > sc) sc = fabs(xn[i]);
            if (xscale[i] > sc) sc = xscale[i];
            sc *= rtol;
            if (fabs(e) / sc > err) err = fabs(e) / sc;
        }
        if (err <= 1.0 || h <= hmin) {
            double fac;
            s += h;
            for (i = 0; i < n; i++) { x[i] = xn[i]; k1[i] = k7[i]; }
            steps++;
            fac = (err == 0.0) ? 5.0 : fmin(5.0, 0.9 * pow(err, -0.2));
            h *= fac;
        } else {
            h *= fmax(0.1, 0.9 * pow(err, -0.2));
        }
    }
    return steps;
}

/* sgn(y)·|y|^m, finite at y = 0 for every m > 0 (spow in modified_dahl.py) */
static double hm_spow(double y, double m)
{
    if (y > 0.0) return pow(y, m);
    if (y < 0.0) return -pow(-y, m);
    return 0.0;
}

typedef double (*hm_scalar_rhs)(double y, double q0, double q1, double q2, double q3);

/* y(L) for the autonomous scalar field dy/ds = rhs(y, q0..q3), decreasing in y with
 * the single zero ystar (NaN: none); the mirror of make_autonomous_rk in
 * modified_dahl.py: a step that would overshoot ystar stops at ystar, where the
 * exact solution ends up. Local error per step <= rtol·max(|y|, scale). */
static double hm_autonomous_rk(hm_scalar_rhs rhs, double y, double L, double q0, double q1,
                               double q2, double q3, double ystar, double rtol, double scale)
{
    static const double A21 = 1.0 / 5;
    static const double A31 = 3.0 / 40, A32 = 9.0 / 40;
    static const double A41 = 44.0 / 45, A42 = -56.0 / 15, A43 = 32.0 / 9;
    static const double A51 = 19372.0 / 6561, A52 = -25360.0 / 2187, A53 = 64448.0 / 6561,
                        A54 = -212.0 / 729;
    static const double A61 = 9017.0 / 3168, A62 = -355.0 / 33, A63 = 46732.0 / 5247,
                        A64 = 49.0 / 176, A65 = -5103.0 / 18656;
    static const double B1 = 35.0 / 384, B3 = 500.0 / 1113, B4 = 125.0 / 192,
                        B5 = -2187.0 / 6784, B6 = 11.0 / 84;
    static const double E1 = 71.0 / 57600, E3 = -71.0 / 16695, E4 = 71.0 / 1920,
                        E5 = -17253.0 / 339200, E6 = 22.0 / 525, E7 = -1.0 / 40;
    double s = 0.0, h = L, hmin = L * 1e-14, dirn = 0.0, snap = 0.0;
    double k1, k2, k3, k4, k5, k6, k7, yn, e, err;
    int clamp = (ystar == ystar);
    if (L <= 0.0) return y;
    if (clamp) {
        if (y == ystar) return y;
        dirn = ystar > y ? 1.0 : -1.0;
        snap = 1e-3 * rtol * scale;
    }
    k1 = rhs(y, q0, q1, q2, q3);
    while (s < L) {
        if (clamp && fabs(y - ystar) <= snap) return ystar;
        if (s + h > L) h = L - s;
        k2 = rhs(y + h * A21 * k1, q0, q1, q2, q3);
        k3 = rhs(y + h * (A31 * k1 + A32 * k2), q0, q1, q2, q3);
        k4 = rhs(y + h * (A41 * k1 + A42 * k2 + A43 * k3), q0, q1, q2, q3);
        k5 = rhs(y + h * (A51 * k1 + A52 * k2 + A53 * k3 + A54 * k4), q0, q1, q2, q3);
        k6 = rhs(y + h * (A61 * k1 + A62 * k2 + A63 * k3 + A64 * k4 + A65 * k5), q0, q1, q2, q3);
        yn = y + h * (B1 * k1 + B3 * k3 + B4 * k4 + B5 * k5 + B6 * k6);
        k7 = rhs(yn, q0, q1, q2, q3);
        e = h * (E1 * k1 + E3 * k3 + E4 * k4 + E5 * k5 + E6 * k6 + E7 * k7);
        err = fabs(e) / (rtol * fmax(fmax(fabs(y), fabs(yn)), scale));
        if (err <= 1.0 || h <= hmin) {
            if (clamp && (yn - ystar) * dirn >= 0.0) return ystar;
            s += h;
            y = yn;
            k1 = k7;
            h *= (err == 0.0) ? 5.0 : fmin(5.0, 0.9 * pow(err, -0.2));
        } else {
            h *= fmax(0.1, 0.9 * pow(err, -0.2));
        }
    }
    return y;
}

#endif
