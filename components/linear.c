/* Linear spring, damper and spring-damper in C, the mirror of linear.py (no state).
 * LinearSpring: F = k (u − u0),       p = [k, u0],    q = [k, u0]
 * LinearDamper: F = c u̇,              p = [c],        q = [c]
 * SpringDamper: F = k (u − u0) + c u̇, p = [k, c, u0], q = [k, c, u0]
 */
#include "hm_law.h"

static void linear_no_advance(double *x, double u0, double u1, double dt, double v,
                              const double *p, double rtol)
{
    (void)x; (void)u0; (void)u1; (void)dt; (void)v; (void)p; (void)rtol;
}

static void linear_no_rate(const double *x, double u, double v, const double *p, double *out)
{
    (void)x; (void)u; (void)v; (void)p; (void)out;
}

void spring_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                    double rtol) { linear_no_advance(x, u0, u1, dt, v, p, rtol); }
void spring_rate(const double *x, double u, double v, const double *p, double *out)
{ linear_no_rate(x, u, v, p, out); }
double spring_force(const double *x, double u, double v, const double *p)
{ (void)x; (void)v; return p[0] * (u - p[1]); }
const char *spring_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    (void)x0;
    HM_CHECK(nq == 2 && np == 2 && nx == 0, "LinearSpring: wrong vector sizes");
    HM_CHECK(isfinite(q[0]), "k must be finite (got %g)", q[0]);
    HM_CHECK(isfinite(q[1]), "u0 must be finite (got %g)", q[1]);
    p[0] = q[0]; p[1] = q[1];
    return NULL;
}

void damper_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                    double rtol) { linear_no_advance(x, u0, u1, dt, v, p, rtol); }
void damper_rate(const double *x, double u, double v, const double *p, double *out)
{ linear_no_rate(x, u, v, p, out); }
double damper_force(const double *x, double u, double v, const double *p)
{ (void)x; (void)u; return p[0] * v; }
const char *damper_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    (void)x0;
    HM_CHECK(nq == 1 && np == 1 && nx == 0, "LinearDamper: wrong vector sizes");
    HM_CHECK(q[0] >= 0.0, "c must be in [0, inf) (got %g)", q[0]);
    p[0] = q[0];
    return NULL;
}

void spring_damper_advance(double *x, double u0, double u1, double dt, double v,
                           const double *p, double rtol)
{ linear_no_advance(x, u0, u1, dt, v, p, rtol); }
void spring_damper_rate(const double *x, double u, double v, const double *p, double *out)
{ linear_no_rate(x, u, v, p, out); }
double spring_damper_force(const double *x, double u, double v, const double *p)
{ (void)x; return p[0] * (u - p[2]) + p[1] * v; }
const char *spring_damper_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    (void)x0;
    HM_CHECK(nq == 3 && np == 3 && nx == 0, "SpringDamper: wrong vector sizes");
    HM_CHECK(isfinite(q[0]), "k must be finite (got %g)", q[0]);
    HM_CHECK(q[1] >= 0.0, "c must be in [0, inf) (got %g)", q[1]);
    HM_CHECK(isfinite(q[2]), "u0 must be finite (got %g)", q[2]);
    p[0] = q[0]; p[1] = q[1]; p[2] = q[2];
    return NULL;
}

/* J = [∂F/∂u, ∂F/∂v] (no states; spring_jac, damper_jac, spring_damper_jac) */
void spring_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)x; (void)u; (void)v;
    J[0] = p[0];
    J[1] = 0.0;
}

void damper_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)x; (void)u; (void)v;
    J[0] = 0.0;
    J[1] = p[0];
}

void spring_damper_jac(const double *x, double u, double v, const double *p, double *J)
{
    (void)x; (void)u; (void)v;
    J[0] = p[0];
    J[1] = p[1];
}
