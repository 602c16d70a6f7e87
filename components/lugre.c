/* LuGre friction in C, the mirror of lugre.py (default Stribeck g, viscous f = σ2 ν).
 *     ẋ = −σ0 |u̇| / g(u̇) · x + u̇,    F = σ0 x + σ1 ẋ + σ2 u̇
 *     g(ν) = Fc + (Fs − Fc) exp(−|ν / vs|^β)
 * Ikhouane, Mañosa & Pujol, eq. (1) and §4.2.
 * p = [sigma0, sigma1, Fc, Fs, vs, beta, sigma2];
 * constructor q = [sigma0, sigma1, Fc, Fs, vs, beta, sigma2, x0]; x = [x]
 */
#include "hm_law.h"

static double lugre_stribeck_g(double v, const double *p)
{
    /* pow is the costliest call of the kernel; skipped for beta = 1 and 2 (as lugre.py) */
    double r = fabs(v / p[4]);
    r = p[5] == 2.0 ? r * r : p[5] == 1.0 ? r : pow(r, p[5]);
    /* e^{-r} underflows to exactly 0 from r ≈ 745.13 on, and Fc + (Fs − Fc)·0 = Fc: the
       same number without the call (sliding well above vs, the common case) */
    if (r >= 746.0) return p[2];
    return p[2] + (p[3] - p[2]) * exp(-r);
}

void lugre_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                   double rtol)
{
    /* the rate is linear in x with constant coefficients while v is constant;
       (1 − e^{−z})/z through expm1 keeps full precision for small z */
    double z = p[0] * fabs(v) / lugre_stribeck_g(v, p) * dt, em;
    (void)u0; (void)u1; (void)rtol;
    if (z < 1e-300) {
        x[0] = x[0] + v * dt;
    } else {
        em = expm1(-z);   /* e^{-z} = 1 + em: one transcendental call for both terms */
        x[0] = x[0] * (1.0 + em) + v * dt * (-em / z);
    }
}

void lugre_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)u;
    out[0] = -p[0] * fabs(v) / lugre_stribeck_g(v, p) * x[0] + v;
}

double lugre_force(const double *x, double u, double v, const double *p)
{
    double xd = -p[0] * fabs(v) / lugre_stribeck_g(v, p) * x[0] + v;
    (void)u;
    return p[0] * x[0] + p[1] * xd + p[6] * v;
}

/* The mean force over a linear input segment (duration dt, velocity v), advancing x
 * along it as lugre_advance does: with a = σ0|v|/g(v) and y = a·dt the bristle state is
 * x(t) = x_ss + (x0 − x_ss) e^{−a t}, so over the segment
 *     mean x = x0 φ(y) + v dt ψ(y),  x(dt) − x0 = φ(y) ẋ0 dt,
 *     φ(y) = (1 − e^{−y})/y,  ψ(y) = (y − 1 + e^{−y})/y²,
 * and mean F = σ0 mean x + σ1 (x(dt) − x0)/dt + σ2 vf exactly (vf: the velocity of the
 * viscous term). A host whose step h is much longer than the micro-slip time 1/a (or
 * σ1/σ0) takes this as the step's force: the impulse of the σ1 ẋ transient is σ1 Δx, not
 * σ1 ẋ(t0)·h. Optional kernel (hm_law.h: LAW_mean); dt = 0: the pointwise force;
 * *stiff = y, the number of relaxation times the segment spans. */
double lugre_mean(double *x, double u0, double u1, double dt, double v, double vf,
                  const double *p, double rtol, double *stiff, double *dfdv)
{
    double a, y, em, phi, psi, x0 = x[0], xd0, g;
    (void)u0; (void)u1; (void)rtol;
    *stiff = 0.0;
    if (!(dt > 0.0)) {
        if (dfdv) *dfdv = NAN;
        return lugre_force(x, u0, vf, p);
    }
    g = lugre_stribeck_g(v, p);
    a = p[0] * fabs(v) / g;
    y = a * dt;
    *stiff = y;
    xd0 = v - a * x0;
    if (y < 1e-300) {
        phi = 1.0;
        psi = 0.5;
        x[0] = x0 + v * dt;
    } else {
        em = expm1(-y);
        phi = -em / y;
        x[0] = x0 * (1.0 + em) + v * dt * phi;    /* as lugre_advance */
        psi = hm_psi_em(y, em);
    }
    if (dfdv) {
        /* dF/dv = σ0 (x0 φ' y' + dt ψ + v dt ψ' y') + σ1 (φ' y' ẋ0 + φ (1 − a' x0)) + σ2,
           y' = a' dt, a' = σ0/g (sgn v − |v| g'/g), g' = −(g − Fc) β r/v (r = |v/vs|^β),
           φ' = ψ − φ; at v = 0 the smooth side's (sgn 0 = 0) */
        double r = fabs(v / p[4]), dg, da, dy, dphi = psi - phi;
        r = p[5] == 2.0 ? r * r : p[5] == 1.0 ? r : pow(r, p[5]);
        dg = v != 0.0 ? -(g - p[2]) * p[5] * r / v : 0.0;
        da = p[0] / g * (hm_sign(v) - fabs(v) * dg / g);
        dy = da * dt;
        *dfdv = p[0] * (x0 * dphi * dy + dt * psi + v * dt * hm_dpsi(y, phi, psi) * dy)
                + p[1] * (dphi * dy * xd0 + phi * (1.0 - da * x0)) + p[6];
    }
    return p[0] * (x0 * phi + v * dt * psi) + p[1] * phi * xd0 + p[6] * vf;
}

const char *lugre_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    int i;
    HM_CHECK(nq == 8 && np == 7 && nx == 1, "LuGre: wrong vector sizes");
    HM_CHECK(q[0] > 0.0, "sigma0 must be in (0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] >= 0.0, "sigma1 must be in [0, inf) (got %g)", q[1]);
    HM_CHECK(q[2] > 0.0, "Fc must be in (0, inf) (got %g)", q[2]);
    HM_CHECK(q[3] >= q[2], "Fs must be in [Fc, inf) = [%g, inf) (got %g)", q[2], q[3]);
    HM_CHECK(q[4] > 0.0, "vs must be in (0, inf) (got %g)", q[4]);
    HM_CHECK(q[5] > 0.0, "beta must be in (0, inf) (got %g)", q[5]);
    HM_CHECK(q[6] >= 0.0, "sigma2 must be in [0, inf) (got %g)", q[6]);
    for (i = 0; i < 7; i++) p[i] = q[i];
    x0[0] = q[7];
    return NULL;
}

/* J, 2 x 3 row-major (lugre_jac); |ν|^(β−1) taken as 0 at ν = 0 */
void lugre_jac(const double *x, double u, double v, const double *p, double *J)
{
    double gv = lugre_stribeck_g(v, p), sv = hm_sign(v), r = fabs(v / p[4]), dg, dxx, dxv;
    (void)u;
    dg = r > 0.0 ? -(p[3] - p[2]) * exp(-pow(r, p[5])) * p[5] * pow(r, p[5] - 1.0) * sv / p[4]
                 : 0.0;
    dxx = -p[0] * fabs(v) / gv;
    dxv = -p[0] * x[0] * (sv / gv - fabs(v) * dg / (gv * gv)) + 1.0;
    J[0] = dxx;
    J[1] = 0.0;
    J[2] = dxv;
    J[3] = p[0] + p[1] * dxx;
    J[4] = 0.0;
    J[5] = p[1] * dxv + p[6];
}
