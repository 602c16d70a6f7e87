/* Masing model with viscous damping in C, the mirror of masing.py (same p).
 *     ẇ + β(w/η) ∋ u̇,  η = α/k,   F = k w + k0 u + c u̇ − F0
 * Bastien, Michon, Manin & Dufour (2007), eqs. (6)-(11).
 * p = [k, k0, eta, F0, c]; constructor q = [k, k0, alpha, F0, c, w0]; x = [w]
 */
#include "hm_law.h"

void masing_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                    double rtol)
{
    /* exact on a monotone segment: the stop operator w <- clip(w + Δu, −η, η) */
    double eta = p[2], w = x[0] + (u1 - u0);
    (void)dt; (void)v; (void)rtol;
    if (w > eta) w = eta;
    else if (w < -eta) w = -eta;
    x[0] = w;
}

void masing_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)x; (void)u; (void)p;
    out[0] = v;  /* smooth part of the inclusion; the projection does the rest */
}

double masing_force(const double *x, double u, double v, const double *p)
{
    return p[0] * x[0] + p[1] * u + p[4] * v - p[3];
}

const char *masing_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    double eta;
    HM_CHECK(nq == 6 && np == 5 && nx == 1, "Masing: wrong vector sizes");
    HM_CHECK(q[0] > 0.0, "k must be in (0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] >= 0.0, "k0 must be in [0, inf) (got %g)", q[1]);
    HM_CHECK(q[2] > 0.0, "alpha must be in (0, inf) (got %g)", q[2]);
    HM_CHECK(isfinite(q[3]), "F0 must be finite (got %g)", q[3]);
    HM_CHECK(q[4] >= 0.0, "c must be in [0, inf) (got %g)", q[4]);
    eta = q[2] / q[0];
    HM_CHECK(fabs(q[5]) <= eta, "w0 must be in [-eta, eta] = [%g, %g] m (eta = alpha/k) (got %g)",
             -eta, eta, q[5]);
    p[0] = q[0]; p[1] = q[1]; p[2] = eta; p[3] = q[3]; p[4] = q[4];
    x0[0] = q[5];
    return NULL;
}

/* Model exchange (fmu/templates): the next input value, moving from u in the direction
 * dir (±1), at which the force has a kink (w reaches the face of [−η, η]), or
 * dir·inf while w slides on that face. */
double masing_switch(const double *x, double u, double dir, const double *p)
{
    double eta = p[2], w = x[0];
    if (dir > 0.0 ? w < eta : w > -eta) return u + (dir * eta - w);
    return dir * INFINITY;
}

/* a state from outside (deserialised FMU state): NULL or what is wrong with it */
const char *masing_check(const double *x, const double *p)
{
    if (!(fabs(x[0]) <= p[2] * (1.0 + 1e-12))) return "Masing: w outside [-eta, eta]";
    return NULL;
}

/* Model exchange derivatives: d[0] = dF/du on the branch the input follows from u in
 * the direction dir (±1), the state x carried to u (k + k0 while the spring k sticks,
 * k0 while w slides on a face: masing_slope), d[1] = ∂F/∂v = c (masing_jac). */
void masing_dforce(const double *x, double u, double v, double dir, const double *p,
                   double *d)
{
    double eta = p[2];
    (void)u; (void)v;
    d[0] = ((x[0] >= eta && dir > 0.0) || (x[0] <= -eta && dir < 0.0)) ? p[1] : p[0] + p[1];
    d[1] = p[4];
}
