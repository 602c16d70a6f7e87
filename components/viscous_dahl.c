/* Viscous + Dahl MR-damper models in C, the mirror of viscous_dahl.py.
 *     F = κx ẋ + κw w,   ẇ = ρ(ẋ − |ẋ| w)                          eqs. (10)-(12)
 *     asymmetric: Fd = κw1 w (w ≥ 0), κw2 w (w ≤ 0);
 *                 Fv = κx1 ẋ (ẋ ≥ 0), κx2 ẋ (ẋ ≤ 0)                eqs. (27)-(33)
 * A modified viscous + Dahl model for large-scale MR dampers (Ikhouane group).
 * ViscousDahl:           p = [kx, kw, rho];             q = [kx, kw, rho, w0]
 * AsymmetricViscousDahl: p = [kx1, kw1, kx2, kw2, rho]; q = [kx1, kw1, kx2, kw2, rho, w0]
 */
#include "hm_law.h"

static double viscous_dahl_w(double w, double v, double dt, double rho)
{
    /* exact Dahl segment update (v constant) */
    if (v > 0.0) return 1.0 + (w - 1.0) * exp(-rho * v * dt);
    if (v < 0.0) return -1.0 + (w + 1.0) * exp(rho * v * dt);
    return w;
}

void viscous_dahl_advance(double *x, double u0, double u1, double dt, double v,
                          const double *p, double rtol)
{
    (void)u0; (void)u1; (void)rtol;
    x[0] = viscous_dahl_w(x[0], v, dt, p[2]);
}

void viscous_dahl_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)u;
    out[0] = p[2] * (v - fabs(v) * x[0]);
}

double viscous_dahl_force(const double *x, double u, double v, const double *p)
{
    (void)u;
    return p[0] * v + p[1] * x[0];
}

const char *viscous_dahl_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    HM_CHECK(nq == 4 && np == 3 && nx == 1, "ViscousDahl: wrong vector sizes");
    HM_CHECK(q[0] >= 0.0, "kx must be in [0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] > 0.0, "kw must be in (0, inf) (got %g)", q[1]);
    HM_CHECK(q[2] > 0.0, "rho must be in (0, inf) (got %g)", q[2]);
    HM_CHECK(q[3] >= -1.0 && q[3] <= 1.0, "w0 must be in [-1, 1] (got %g)", q[3]);
    p[0] = q[0]; p[1] = q[1]; p[2] = q[2];
    x0[0] = q[3];
    return NULL;
}

void asym_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                  double rtol)
{
    (void)u0; (void)u1; (void)rtol;
    x[0] = viscous_dahl_w(x[0], v, dt, p[4]);
}

void asym_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)u;
    out[0] = p[4] * (v - fabs(v) * x[0]);
}

double asym_force(const double *x, double u, double v, const double *p)
{
    double w = x[0];
    double Fd = w >= 0.0 ? p[1] * w : p[3] * w;   /* eqs. (30)-(31) */
    double Fv = v >= 0.0 ? p[0] * v : p[2] * v;   /* eqs. (32)-(33) */
    (void)u;
    return Fv + Fd;
}

const char *asym_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    int i;
    HM_CHECK(nq == 6 && np == 5 && nx == 1, "AsymmetricViscousDahl: wrong vector sizes");
    HM_CHECK(q[0] >= 0.0, "kx1 must be in [0, inf) (got %g)", q[0]);
    HM_CHECK(q[1] > 0.0, "kw1 must be in (0, inf) (got %g)", q[1]);
    HM_CHECK(q[2] >= 0.0, "kx2 must be in [0, inf) (got %g)", q[2]);
    HM_CHECK(q[3] > 0.0, "kw2 must be in (0, inf) (got %g)", q[3]);
    HM_CHECK(q[4] > 0.0, "rho must be in (0, inf) (got %g)", q[4]);
    HM_CHECK(q[5] >= -1.0 && q[5] <= 1.0, "w0 must be in [-1, 1] (got %g)", q[5]);
    for (i = 0; i < 5; i++) p[i] = q[i];
    x0[0] = q[5];
    return NULL;
}

/* ∂ẇ/∂v of the Dahl rate ρ(v − |v| w) (_dahl_dwdv in viscous_dahl.py) */
static double viscous_dahl_dwdv(double w, double v, double rho)
{
    return rho * (1.0 - hm_sign(v) * w);
}

/* J, 2 x 3 row-major: ∂ẇ/∂(w, u, v), ∂F/∂(w, u, v) (viscous_dahl_jac) */
void viscous_dahl_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)u;
    J[0] = -p[2] * fabs(v);
    J[1] = 0.0;
    J[2] = viscous_dahl_dwdv(x[0], v, p[2]);
    J[3] = p[1];
    J[4] = 0.0;
    J[5] = p[0];
}

/* the asymmetric form, eqs. (27)-(33): the branch of w's and v's sign (asym_jac) */
void asym_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)u;
    J[0] = -p[4] * fabs(v);
    J[1] = 0.0;
    J[2] = viscous_dahl_dwdv(x[0], v, p[4]);
    J[3] = x[0] >= 0.0 ? p[1] : p[3];
    J[4] = 0.0;
    J[5] = v >= 0.0 ? p[0] : p[2];
}
