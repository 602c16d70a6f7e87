/* Modified Dahl model in C, the mirror of modified_dahl.py (same functions, same p).
 *     Ḟ =  Λ u̇ sgn(h_u(u) − F) |h_u(u) − F|^μ     if u̇ ≥ 0
 *     Ḟ = −Λ u̇ sgn(h_l(u) − F) |h_l(u) − F|^μ     if u̇ ≤ 0,   h_u = a u + b, h_l = d u + e
 * Bastien, Michon, Manin & Dufour (2007), eqs. (3)-(4).
 * p = [Lambda, mu, a, b, d, e]; constructor q = [Lambda, mu, a, b, d, e, F0]; x = [F]
 * On a segment the gap D = h(u) − F obeys dD/ds = c − Λ sgn(D)|D|^μ (s = |v| t):
 * advanced by hm_power_law_advance (the closed-form arc-length integral solved for D:
 * exact crossing of D = 0, approaches the equilibrium D* to rounding), closed forms
 * for μ = 1 and c = 0 (see modified_dahl.py).
 */
#include "hm_law.h"

static double modified_dahl_gap_advance(double D, double c, double lam, double mu, double L,
                                        double rtol, double scale)
{
    double Ds;
    if (mu == 1.0 && c != 0.0) {
        Ds = c / lam;
        return Ds + (D - Ds) * exp(-lam * L);
    }
    return hm_power_law_advance(D, L, c, lam, 0.0, mu, rtol, scale);
}

void modified_dahl_advance(double *x, double u0, double u1, double dt, double v,
                           const double *p, double rtol)
{
    double lam = p[0], mu = p[1], a = p[2], b = p[3], d = p[4], e = p[5];
    double L, r, scale;
    if (v == 0.0) return;  /* Ḟ = 0 on both branches */
    L = fabs(v) * dt;
    r = (u1 - u0) / L;     /* = sgn(v) when v is the segment slope */
    scale = fmax(fmax(fabs(x[0]), fabs(b)), fmax(fabs(e), 1.0));  /* F's accuracy matters */
    if (v > 0.0) {
        double D = modified_dahl_gap_advance(a * u0 + b - x[0], a * r, lam, mu, L, rtol, scale);
        x[0] = a * u1 + b - D;
    } else {
        double E = modified_dahl_gap_advance(d * u0 + e - x[0], d * r, lam, mu, L, rtol, scale);
        x[0] = d * u1 + e - E;
    }
}

void modified_dahl_rate(const double *x, double u, double v, const double *p, double *out)
{
    if (v >= 0.0)
        out[0] = p[0] * v * hm_spow(p[2] * u + p[3] - x[0], p[1]);
    else
        out[0] = -p[0] * v * hm_spow(p[4] * u + p[5] - x[0], p[1]);
}

double modified_dahl_force(const double *x, double u, double v, const double *p)
{
    (void)u; (void)v; (void)p;
    return x[0];
}

const char *modified_dahl_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    int i;
    HM_CHECK(nq == 7 && np == 6 && nx == 1, "ModifiedDahl: wrong vector sizes");
    HM_CHECK(q[0] > 0.0, "Lambda must be in (0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] > 0.0, "mu must be in (0, inf) (got %g)", q[1]);
    for (i = 0; i < 7; i++) HM_CHECK(isfinite(q[i]), "parameter %d must be finite", i);
    HM_CHECK(q[2] >= 0.0, "a must be in [0, inf) (got %g)", q[2]);
    HM_CHECK(q[4] >= 0.0, "d must be in [0, inf) (got %g)", q[4]);
    HM_CHECK(q[5] <= q[3], "e must be in (-inf, b] = (-inf, %g] (got %g)", q[3], q[5]);
    for (i = 0; i < 6; i++) p[i] = q[i];
    x0[0] = q[6];
    return NULL;
}

/* Model exchange (fmu/templates): event indicators [v, h_u(u) − F, h_l(u) − F]. With
 * μ < 1 the rate is not Lipschitz where F meets the active envelope, so the host
 * integrator must restart there instead of stepping across (Bastien et al. (2007),
 * eqs. (3)-(4)); the sign of v selects the branch. Three whatever μ (a host sizes its
 * indicator vector from the model description, before it sets μ): constant for μ ≥ 1. */
#define MODIFIED_DAHL_NZ 3
void modified_dahl_events(const double *x, double u, double v, const double *p, double *z)
{
    z[0] = v;
    if (p[1] >= 1.0) { z[1] = z[2] = 1.0; return; }  /* Lipschitz: no restart needed */
    z[1] = p[2] * u + p[3] - x[0];
    z[2] = p[4] * u + p[5] - x[0];
}

/* d|D|^μ/dD with |D| floored for μ < 1 at max(D*, 1e-6·max(|h|, 1 N)), D* = (|c|/Λ)^(1/μ)
 * the settled distance (_dpow in modified_dahl.py: the infinite slope on the envelope
 * replaced by the settled branch's) */
static double modified_dahl_dpow(double D, double lam, double mu, double c, double h)
{
    double floor_;
    if (mu >= 1.0) return mu * pow(fabs(D), mu - 1.0);
    floor_ = fmax(pow(fabs(c) / lam, 1.0 / mu), 1e-6 * fmax(fabs(h), 1.0));
    return mu * pow(fmax(fabs(D), floor_), mu - 1.0);
}

/* J, 2 x 3 row-major: ∂Ḟ/∂(F, u, v), ∂F/∂(F, u, v) (modified_dahl_jac) */
void modified_dahl_jac(const double *x, double u, double v, const double *p, double *J)
{
    double lam = p[0], mu = p[1], h, g;
    if (v >= 0.0) {
        h = p[2] * u + p[3];
        g = modified_dahl_dpow(h - x[0], lam, mu, p[2], h);
        J[0] = -lam * v * g;
        J[1] = lam * v * g * p[2];
        J[2] = lam * hm_spow(h - x[0], mu);
    } else {
        h = p[4] * u + p[5];
        g = modified_dahl_dpow(h - x[0], lam, mu, p[4], h);
        J[0] = lam * v * g;
        J[1] = -lam * v * g * p[4];
        J[2] = -lam * hm_spow(h - x[0], mu);
    }
    J[3] = 1.0;
    J[4] = 0.0;
    J[5] = 0.0;
}

/* The mean force over a linear input segment (duration dt, velocity v), advancing x as
 * modified_dahl_advance does (hm_law.h: LAW_mean): F = h(u) − D with the gap
 * dD/ds = c − Λ sgn(D)|D|^μ (s = |v| t); for μ = 1 the gap relaxes exponentially,
 * D(s) = D0 e^(−Λs) + c (1 − e^(−Λs))/Λ, and its mean is exact (hm_linear_law_mean),
 * else Simpson's rule on the exactly advanced F at the start, middle and end (x itself
 * advanced in one call, as modified_dahl_advance over the segment).
 * *stiff = dt times the gap's decay rate (Λ μ |v| |D|^(μ−1), D floored at the settled
 * gap (|c|/Λ)^(1/μ) for μ < 1). */
double modified_dahl_mean(double *x, double u0, double u1, double dt, double v, double vf,
                          const double *p, double rtol, double *stiff, double *dfdv)
{
    double lam = p[0], mu = p[1], L, r, a, b, F0 = x[0], Fm;
    (void)vf;
    *stiff = 0.0;
    if (dfdv) *dfdv = NAN;          /* not given: the host iterates without it */
    if (!(dt > 0.0) || v == 0.0) return x[0];
    L = fabs(v) * dt;
    r = (u1 - u0) / L;
    a = v > 0.0 ? p[2] : p[4];
    b = v > 0.0 ? p[3] : p[5];
    if (mu == 1.0) {
        *stiff = lam * L;
        Fm = a * 0.5 * (u0 + u1) + b - hm_linear_law_mean(a * u0 + b - F0, L, a * r, lam, 0.0);
    } else {
        double Fa = F0, Fb = F0, D = fmax(fabs(a * u0 + b - F0), pow(fabs(a) / lam, 1.0 / mu));
        *stiff = lam * mu * L * pow(D, mu - 1.0);
        modified_dahl_advance(&Fa, u0, 0.5 * (u0 + u1), 0.5 * dt, v, p, rtol);
        modified_dahl_advance(&Fb, u0, u1, dt, v, p, rtol);
        Fm = (F0 + 4.0 * Fa + Fb) / 6.0;
    }
    modified_dahl_advance(x, u0, u1, dt, v, p, rtol);
    return Fm;
}
