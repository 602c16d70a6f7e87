/* Modified Maxwell-slip model in C, the mirror of maxwell_slip.py (same p).
 *     Ż_i = δ̇ while |Z_i| < Δ_i (stick), 0 in slip;   F = Σ k_i Z_i
 * Jankowski, Marszał & Stefański (2017), eqs. (1)-(7).
 * p = [n, k_1 .. k_n, Delta_1 .. Delta_n]; constructor q = [k_1..k_n, delta_1..delta_n,
 * z0_1..z0_n]; x = [Z_1 .. Z_n]
 */
#include "hm_law.h"

void maxwell_slip_advance(double *x, double u0, double u1, double dt, double v,
                          const double *p, double rtol)
{
    /* each asperity is a stop operator: exact on a linear segment */
    int i, n = (int)p[0];
    double du = u1 - u0;
    (void)dt; (void)v; (void)rtol;
    for (i = 0; i < n; i++) {
        double d = p[1 + n + i], z = x[i] + du;
        if (z > d) z = d;
        else if (z < -d) z = -d;
        x[i] = z;
    }
}

void maxwell_slip_rate(const double *x, double u, double v, const double *p, double *out)
{
    int i, n = (int)p[0];
    (void)x; (void)u;
    for (i = 0; i < n; i++) out[i] = v;
}

double maxwell_slip_force(const double *x, double u, double v, const double *p)
{
    int i, n = (int)p[0];
    double f = 0.0;
    (void)u; (void)v;
    for (i = 0; i < n; i++) f += p[1 + i] * x[i];
    return f;
}

const char *maxwell_slip_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    int i, n = nx;
    HM_CHECK(nq == 3 * n && np == 2 * n + 1, "MaxwellSlip: wrong vector sizes");
    p[0] = (double)n;
    for (i = 0; i < n; i++) {
        HM_CHECK(q[i] > 0.0, "k must be in (0, inf) elementwise (got k[%d] = %g)", i, q[i]);
        HM_CHECK(q[n + i] >= 0.0, "delta must be in [0, inf) elementwise (got delta[%d] = %g)",
                 i, q[n + i]);
        HM_CHECK(fabs(q[2 * n + i]) <= q[n + i],
                 "z0 must be in [-delta_i, delta_i] elementwise (got z0[%d] = %g)", i, q[2 * n + i]);
        p[1 + i] = q[i];
        p[1 + n + i] = q[n + i];
        x0[i] = q[2 * n + i];
    }
    return NULL;
}

/* Model exchange (fmu/templates): the nearest input value in the direction dir (±1)
 * at which an asperity reaches its slip limit (a kink of F), or dir·inf. */
double maxwell_slip_switch(const double *x, double u, double dir, const double *p)
{
    int i, n = (int)p[0];
    double best = INFINITY;
    for (i = 0; i < n; i++) {
        double d = p[1 + n + i], z = x[i];
        if (dir > 0.0 ? z < d : z > -d) {
            double gap = fabs(dir * d - z);
            if (gap < best) best = gap;
        }
    }
    return u + dir * best;
}

const char *maxwell_slip_check(const double *x, const double *p)
{
    int i, n = (int)p[0];
    for (i = 0; i < n; i++)
        if (!(fabs(x[i]) <= p[1 + n + i] * (1.0 + 1e-12)))
            return "MaxwellSlip: Z[i] outside [-Delta_i, Delta_i]";
    return NULL;
}

/* Model exchange derivatives: d[0] = dF/du on the branch of direction dir (±1) from u,
 * the sum of the stiffnesses of the asperities that stick (maxwell_slip_slope),
 * d[1] = ∂F/∂v = 0. */
void maxwell_slip_dforce(const double *x, double u, double v, double dir, const double *p,
                         double *d)
{
    int i, n = (int)p[0];
    double s = 0.0;
    (void)u; (void)v;
    for (i = 0; i < n; i++) {
        double dl = p[1 + n + i];
        if (dl <= 0.0) continue;
        if ((x[i] >= dl && dir > 0.0) || (x[i] <= -dl && dir < 0.0)) continue;
        s += p[1 + i];
    }
    d[0] = s;
    d[1] = 0.0;
}
