/* Dahl friction in C, the mirror of dahl.py (same functions, same p).
 *     ẇ = ρ (u̇ − |u̇| w),   F = Fc · w
 * Ikhouane, Mañosa & Pujol, §1.
 * p = [rho, Fc]; constructor q = [rho, Fc, w0]; x = [w]
 */
#include "hm_law.h"

void dahl_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                  double rtol)
{
    /* v constant on the segment: w = sgn(v) + (w0 − sgn(v)) exp(−ρ|v|dt) exactly */
    double s = hm_sign(v);
    (void)u0; (void)u1; (void)rtol;
    if (s == 0.0) return;
    x[0] = s + (x[0] - s) * exp(-p[0] * fabs(v) * dt);
}

void dahl_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)u;
    out[0] = p[0] * (v - fabs(v) * x[0]);
}

double dahl_force(const double *x, double u, double v, const double *p)
{
    (void)u; (void)v;
    return p[1] * x[0];
}

const char *dahl_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    HM_CHECK(nq == 3 && np == 2 && nx == 1, "Dahl: wrong vector sizes");
    HM_CHECK(q[0] > 0.0, "rho must be in (0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] > 0.0, "Fc must be in (0, inf) (got %g)", q[1]);
    HM_CHECK(q[2] >= -1.0 && q[2] <= 1.0, "w0 must be in [-1, 1] (got %g)", q[2]);
    p[0] = q[0]; p[1] = q[1];
    x0[0] = q[2];
    return NULL;
}

/* J, (n+1) x (n+2) row-major: rows ∂ẋ/∂(x, u, v), last row ∂F/∂(x, u, v) (dahl_jac) */
void dahl_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)u;
    J[0] = -p[0] * fabs(v);
    J[1] = 0.0;
    J[2] = p[0] * (1.0 - hm_sign(v) * x[0]);
    J[3] = p[1];
    J[4] = 0.0;
    J[5] = 0.0;
}

/* The exact mean force over a linear input segment (duration dt, velocity v), advancing
 * x along it (hm_law.h: LAW_mean): with k = ρ|v| and s = sgn v, w(t) = s + (w0 − s)e^(−kt),
 * so mean F = Fc (s + (w0 − s) φ(k dt)), φ(y) = (1 − e^(−y))/y. A sticking Dahl element
 * is a spring of stiffness ρ·Fc: on a light link (ω·h > 2 at MuJoCo's default step) the
 * host takes this mean at the joint's implicit velocity. *stiff = k·dt. */
double dahl_mean(double *x, double u0, double u1, double dt, double v, double vf,
                 const double *p, double rtol, double *stiff, double *dfdv)
{
    double s = hm_sign(v), y = p[0] * fabs(v) * dt, w0 = x[0], phi;
    (void)vf;
    *stiff = 0.0;
    if (dfdv) *dfdv = 0.0;             /* v = 0: the smooth side's (the kink's mean) */
    if (!(dt > 0.0) || s == 0.0) return dahl_force(x, u0, v, p);
    *stiff = y;
    dahl_advance(x, u0, u1, dt, v, p, rtol);
    phi = hm_phi1(y);
    /* dF/dv = Fc (w0 − s) φ'(y) ρ s dt, φ' = ψ − φ */
    if (dfdv) *dfdv = p[1] * (w0 - s) * (hm_psi(y) - phi) * p[0] * s * dt;
    return p[1] * (s + (w0 - s) * phi);
}
