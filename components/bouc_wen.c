/* Bouc-Wen hysteresis in C, the mirror of bouc_wen.py (same functions, same p).
 *     ż = A u̇ − β |u̇| |z|^(n−1) z − γ u̇ |z|^n,    F = k_el u + z
 * p = [A, beta, gamma, n, k_el]; constructor q = [A, beta, gamma, n, k_el, z0]; x = [z]
 * On a segment dz/ds = σA − β sgn(z)|z|^n − σγ|z|^n (s = |v| t, σ = sgn v): n = 1 by
 * the closed-form exponential with one switch at z = 0 (hm_linear_law_advance),
 * otherwise by hm_power_law_advance (the closed-form arc-length integral solved for z,
 * exact crossing of z = 0, approaches z* = σ(A/(β + γ))^(1/n) to rounding). Parameter classes and the ill-posed sets refused
 * by setup: see bouc_wen.py.
 */
#include "hm_law.h"

/* natural size of z (bouc_wen_zscale in bouc_wen.py) */
static double bouc_wen_zscale(double A, double beta, double gamma, double n)
{
    if (beta + gamma > 0.0) return pow(A / (beta + gamma), 1.0 / n);
    if (beta != gamma) return pow(A / fabs(beta - gamma), 1.0 / n);
    return A;
}

void bouc_wen_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                      double rtol)
{
    double A = p[0], beta = p[1], gamma = p[2], n = p[3], sg;
    (void)u0; (void)u1;
    if (v == 0.0) return;
    sg = v > 0.0 ? 1.0 : -1.0;
    if (n == 1.0) {
        x[0] = hm_linear_law_advance(x[0], fabs(v) * dt, sg * A, beta, sg * gamma);
        return;
    }
    x[0] = hm_power_law_advance(x[0], fabs(v) * dt, sg * A, beta, sg * gamma, n, rtol, 0.0);
}

void bouc_wen_rate(const double *x, double u, double v, const double *p, double *out)
{
    double z = x[0], n = p[3];
    (void)u;
    out[0] = p[0] * v - p[1] * fabs(v) * hm_spow(z, n) - p[2] * v * pow(fabs(z), n);
}

double bouc_wen_force(const double *x, double u, double v, const double *p)
{
    (void)v;
    return p[4] * u + x[0];
}

const char *bouc_wen_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    int i;
    HM_CHECK(nq == 6 && np == 5 && nx == 1, "BoucWen: wrong vector sizes");
    HM_CHECK(q[0] > 0.0, "A must be in (0, inf) (got %g)", q[0]);
    HM_CHECK(isfinite(q[1]), "beta must be finite (got %g)", q[1]);
    HM_CHECK(isfinite(q[2]), "gamma must be finite (got %g)", q[2]);
    HM_CHECK(q[3] > 0.0, "n must be in (0, inf) (got %g)", q[3]);
    if (q[3] > 1.0) {
        HM_CHECK(q[1] >= 0.0, "beta must be in [0, inf) when n > 1 (got %g)", q[1]);
        HM_CHECK(q[1] + q[2] >= 0.0, "gamma must be in [-beta, inf) = [%g, inf) when n > 1 "
                 "(got %g)", -q[1], q[2]);
        if (q[2] > q[1]) {
            double zu = pow(q[0] / (q[2] - q[1]), 1.0 / q[3]);
            HM_CHECK(fabs(q[5]) < zu, "z0 must be in (-%g, %g) for gamma > beta and n > 1 "
                     "(got %g)", zu, zu, q[5]);
        }
    }
    HM_CHECK(isfinite(q[4]), "k_el must be finite (got %g)", q[4]);
    HM_CHECK(isfinite(q[5]), "z0 must be finite (got %g)", q[5]);
    for (i = 0; i < 5; i++) p[i] = q[i];
    x0[0] = q[5];
    return NULL;
}

/* J, 2 x 3 row-major (bouc_wen_jac): |z| floored at 1e-6·z* for n < 1, where
 * d|z|^n/d|z| is infinite at z = 0 */
void bouc_wen_jac(const double *x, double u, double v, const double *p, double *J)
{
    double A = p[0], beta = p[1], gamma = p[2], n = p[3], z = x[0], az = fabs(z), dn;
    double sz = hm_sign(z), sv = hm_sign(v);
    (void)u;
    if (n < 1.0) az = fmax(az, 1e-6 * bouc_wen_zscale(A, beta, gamma, n));
    dn = (n != 1.0) ? n * pow(az, n - 1.0) : 1.0;
    J[0] = -(beta * fabs(v) + gamma * v * sz) * dn;
    J[1] = 0.0;
    J[2] = A - beta * sv * hm_spow(z, n) - gamma * pow(fabs(z), n);
    J[3] = 1.0;
    J[4] = p[4];
    J[5] = 0.0;
}

/* Event indicator (model exchange): z = 0 is the non-Lipschitz point of |z|^n for n < 1,
 * where a host must restart its integrator; constant (never crossing) for n >= 1, so
 * that the count does not depend on the parameter values. */
#define BOUC_WEN_NZ 1
void bouc_wen_events(const double *x, double u, double v, const double *p, double *z)
{
    (void)u; (void)v;
    z[0] = p[3] < 1.0 ? x[0] : 1.0;
}

/* The mean force over a linear input segment (duration dt, velocity v), advancing x as
 * bouc_wen_advance does (hm_law.h: LAW_mean): k_el times the mean u, plus the mean z —
 * for n = 1 exactly (hm_linear_law_mean: z relaxes exponentially on each side of z = 0),
 * else by Simpson's rule on the exactly advanced z at the start, middle and end (x
 * itself advanced in one call, as bouc_wen_advance over the segment).
 * *stiff = dt times the decay rate of z near its saturated value z* (n(β+|γ|)|v| z*^(n−1),
 * z* = (A/(β + γ))^(1/n)). */
double bouc_wen_mean(double *x, double u0, double u1, double dt, double v, double vf,
                     const double *p, double rtol, double *stiff, double *dfdv)
{
    double A = p[0], beta = p[1], gamma = p[2], n = p[3], sg, L, zm, z0 = x[0];
    (void)vf;
    *stiff = 0.0;
    if (dfdv) *dfdv = NAN;          /* not given: the host iterates without it */
    if (!(dt > 0.0) || v == 0.0) return bouc_wen_force(x, u0, v, p);
    sg = v > 0.0 ? 1.0 : -1.0;
    L = fabs(v) * dt;
    *stiff = L * n * (fabs(beta) + fabs(gamma))
             * (n == 1.0 ? 1.0 : pow(fmax(fabs(z0), bouc_wen_zscale(A, beta, gamma, n)), n - 1.0));
    if (n == 1.0) {
        zm = hm_linear_law_mean(z0, L, sg * A, beta, sg * gamma);
    } else {
        double za = z0;
        bouc_wen_advance(&za, u0, 0.5 * (u0 + u1), 0.5 * dt, v, p, rtol);
        zm = z0;
        bouc_wen_advance(&zm, u0, u1, dt, v, p, rtol);
        zm = (z0 + 4.0 * za + zm) / 6.0;
    }
    bouc_wen_advance(x, u0, u1, dt, v, p, rtol);
    return p[4] * 0.5 * (u0 + u1) + zm;
}
