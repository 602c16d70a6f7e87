/* The linear mechanical parts of an assembly as FMI 2.0 co-simulation FMUs (SSP export,
 * fmu/ssp_parts.py writes part_config.h):
 *
 *   PART_MASS      m·ẍ = Σ s_i·F_i + f0 + Σ_j A_j·cos(ω_j·t + φ_j)      outputs x, v
 *                  (f0 holds gravity m·g and constant forces; F_i [N] are the forces of
 *                  the connections at this DOF, s_i = −1 where the DOF is the connection's
 *                  a, +1 where it is its b: Assembly's rule "−F on a, +F on b")
 *   PART_LINK      F = k·(u − u0) + c·v + preload, u = xa − xb, v = va − vb   output F
 *                  (a spring: c = 0; a damper: k = u0 = preload = 0)
 *   PART_RELATIVE  u = xa − xb, v = va − vb                               outputs u, v
 *                  (what a force element between two DOFs sees)
 *   PART_MOTION    x(t) = f0 + A·cos(ω·t + φ) + table(t), v(t) = dx/dt   outputs x, v
 *                  (an imposed DOF; table: N_TAB knots TAB_T, TAB_X, TAB_V compiled in
 *                  part_config.h, cubic Hermite between knots, v the Hermite
 *                  derivative; a repeated knot time carries a jump of v)
 *
 * Within a communication step [t, t + h] the mass integrates its motion exactly with its
 * inputs held (extrapolate = 0) or extrapolated linearly from the last two communication
 * points (extrapolate = 1), the harmonic forces exactly. Links and relative parts report
 * at t + h their outputs at the inputs predicted there (x + h·v; a velocity extrapolated
 * linearly from its last two samples) when extrapolate = 1, at the received inputs when 0.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "part_config.h"

#define PART_MASS 0
#define PART_LINK 1
#define PART_RELATIVE 2
#define PART_MOTION 3

typedef struct {
    double r[N_REAL];
    double t;
    double h_prev;             /* last communication step (0: none yet) */
    double prev[4];            /* inputs at the previous communication point */
    int started;
    const fmi2CallbackFunctions *cb;
    char name[64];
} Part;

static void say(Part *p, fmi2Status st, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (p && p->cb && p->cb->logger)
        p->cb->logger(p->cb->componentEnvironment, p->name, st,
                      st == fmi2OK ? "logEvents" : "logStatusError", "%s", buf);
}

#if PART_KIND == PART_MOTION
/* 1 when t is outside the table's knots [TAB_T[0], TAB_T[N_TAB-1]] (beyond a relative
 * 1e-9 of the span): the imposed motion is not defined there */
static int motion_at(double t, double *x, double *v, const double *r) {
    double w = r[I_OMEGA], ph = r[I_PHI];
    *x = r[I_F0] + r[I_A] * cos(w * t + ph);
    *v = -r[I_A] * w * sin(w * t + ph);
#if N_TAB > 0
    double span = TAB_T[N_TAB - 1] - TAB_T[0], tol = 1e-9 * (span > 0 ? span : 1.0);
    if (t < TAB_T[0] - tol || t > TAB_T[N_TAB - 1] + tol) return 1;
    /* the last knot interval [T_i, T_i+1] of positive length with T_i <= t */
    int lo = 0, hi = N_TAB - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (TAB_T[mid] <= t) lo = mid; else hi = mid;
    }
    while (lo > 0 && TAB_T[lo + 1] == TAB_T[lo]) lo--;
    double d = TAB_T[lo + 1] - TAB_T[lo];
    if (!(d > 0.0)) { lo++; d = TAB_T[lo + 1] - TAB_T[lo]; }
    double s = (t - TAB_T[lo]) / d;
    if (s < 0.0) s = 0.0;
    if (s > 1.0) s = 1.0;
    double x0 = TAB_X[lo], x1 = TAB_X[lo + 1], m0 = TAB_V[lo] * d, m1 = TAB_V[lo + 1] * d;
    double s2 = s * s, s3 = s2 * s;
    *x += (2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * x1
          + (s3 - s2) * m1;
    *v += ((6 * s2 - 6 * s) * x0 + (3 * s2 - 4 * s + 1) * m0 + (-6 * s2 + 6 * s) * x1
           + (3 * s2 - 2 * s) * m1) / d;
#endif
    return 0;
}
#endif

static void outputs(Part *p, double h) {
    double *r = p->r;
#if PART_KIND == PART_LINK || PART_KIND == PART_RELATIVE
    double u = r[I_XA] - r[I_XB], v = r[I_VA] - r[I_VB];
    if (h > 0.0 && r[I_EXTRAP] != 0.0) {
        u += h * v;
        if (p->h_prev > 0.0)
            v += (v - (p->prev[1] - p->prev[3])) * h / p->h_prev;
    }
#if PART_KIND == PART_LINK
    r[I_F] = r[I_K] * (u - r[I_U0]) + r[I_C] * v + r[I_PRE];
#else
    r[I_U] = u;
    r[I_V] = v;
#endif
#elif PART_KIND == PART_MOTION
    (void)h;
    motion_at(p->t, &r[I_X], &r[I_V], r);
#else
    (void)p; (void)h; (void)r;
#endif
}

#if PART_KIND == PART_MASS
static double input_force(const double *r) {
    double f = 0.0;
    for (int i = 0; i < N_IN; i++) f += r[I_SIGN + i] * r[I_FIN + i];
    return f;
}
#endif

static void step(Part *p, double t, double h) {
    double *r = p->r;
#if PART_KIND == PART_MASS
    /* a(τ) = (P + Q·τ + Σ A_j cos(ω_j (t + τ) + φ_j))/m, integrated exactly over [0, h] */
    double m = r[I_M], F = input_force(r), P = F + r[I_F0], Q = 0.0;
    if (r[I_EXTRAP] != 0.0 && p->h_prev > 0.0) Q = (F - p->prev[0]) / p->h_prev;
    double dv = P * h + 0.5 * Q * h * h, dx = 0.5 * P * h * h + Q * h * h * h / 6.0;
    for (int j = 0; j < N_HARM; j++) {
        double A = r[I_HARM + 3 * j], w = r[I_HARM + 3 * j + 1], ph = r[I_HARM + 3 * j + 2];
        if (w == 0.0) {
            double c = A * cos(ph);
            dv += c * h;
            dx += 0.5 * c * h * h;
        } else {
            double s0 = sin(w * t + ph), s1 = sin(w * (t + h) + ph);
            double c0 = cos(w * t + ph), c1 = cos(w * (t + h) + ph);
            dv += A * (s1 - s0) / w;
            dx += A * (-(c1 - c0) / (w * w) - s0 * h / w);
        }
    }
    r[I_X] += r[I_V] * h + dx / m;
    r[I_V] += dv / m;
    p->prev[0] = F;
#elif PART_KIND == PART_MOTION
    (void)h; (void)t;
#else
    (void)t;
    outputs(p, h);
    p->prev[0] = r[I_XA]; p->prev[1] = r[I_VA]; p->prev[2] = r[I_XB]; p->prev[3] = r[I_VB];
#endif
    p->h_prev = h;
}

/* ---- FMI 2.0 ------------------------------------------------------------------------ */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)c; (void)on; (void)n; (void)cat;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String location, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean logging) {
    (void)location; (void)visible; (void)logging;
    if (type != fmi2CoSimulation || !guid || strcmp(guid, PART_GUID) != 0) {
        if (cb && cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError",
                       type != fmi2CoSimulation ? "this FMU is co-simulation only"
                                                : "GUID mismatch (expected %s)", PART_GUID);
        return NULL;
    }
    Part *p = (Part *)calloc(1, sizeof(Part));
    if (!p) return NULL;
    memcpy(p->r, START, sizeof p->r);
    p->cb = cb;
    snprintf(p->name, sizeof p->name, "%s", name ? name : "part");
    return p;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tol_def, fmi2Real tol,
                               fmi2Real t0, fmi2Boolean stop_def, fmi2Real t1) {
    (void)tol_def; (void)tol; (void)stop_def; (void)t1;
    ((Part *)c)->t = t0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Part *p = (Part *)c;
#if PART_KIND == PART_MASS
    if (!(p->r[I_M] > 0.0)) {
        say(p, fmi2Error, "m must be > 0 kg (got %g)", p->r[I_M]);
        return fmi2Error;
    }
    p->r[I_X] = p->r[I_X0];
    p->r[I_V] = p->r[I_V0];
#endif
#if PART_KIND == PART_MOTION
    {
        double x, v;
        if (motion_at(p->t, &x, &v, p->r)) {
            say(p, fmi2Error, "the imposed motion's table starts at t = %.17g s, after the "
                "start time %.17g s", TAB_T[0], p->t);
            return fmi2Error;
        }
    }
#endif
    outputs(p, 0.0);
    p->started = 1;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }

fmi2Status fmi2Reset(fmi2Component c) {
    Part *p = (Part *)c;
    memcpy(p->r, START, sizeof p->r);
    p->h_prev = 0.0;
    p->started = 0;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Part *p = (Part *)c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REAL) {
            say(p, fmi2Error, "no Real variable with value reference %u", (unsigned)vr[i]);
            return fmi2Error;
        }
        v[i] = p->r[vr[i]];
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
    Part *p = (Part *)c;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= N_REAL) {
            say(p, fmi2Error, "no Real variable with value reference %u", (unsigned)vr[i]);
            return fmi2Error;
        }
        if (p->started && !SETTABLE_AFTER_INIT[vr[i]]) {
            say(p, fmi2Error, "%s is not settable after initialisation", NAMES[vr[i]]);
            return fmi2Error;
        }
        if (!isfinite(v[i])) {
            say(p, fmi2Error, "%s must be finite (got %g)%s", NAMES[vr[i]], v[i],
                SETTABLE_AFTER_INIT[vr[i]] ? ": the co-simulation diverged upstream" : "");
            return fmi2Error;
        }
        p->r[vr[i]] = v[i];
    }
    return fmi2OK;
}

#define NO_VARS(T, f, g)                                                                      \
    fmi2Status f(fmi2Component c, const fmi2ValueReference vr[], size_t n, T v[]) {             \
        (void)vr; (void)v;                                                                      \
        if (n) { say((Part *)c, fmi2Error, "this FMU has no " g " variables"); return fmi2Error; } \
        return fmi2OK;                                                                          \
    }
NO_VARS(fmi2Integer, fmi2GetInteger, "Integer")
NO_VARS(fmi2Boolean, fmi2GetBoolean, "Boolean")
NO_VARS(fmi2String, fmi2GetString, "String")
NO_VARS(const fmi2Integer, fmi2SetInteger, "Integer")
NO_VARS(const fmi2Boolean, fmi2SetBoolean, "Boolean")
NO_VARS(const fmi2String, fmi2SetString, "String")

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) {
    Part *q = (Part *)malloc(sizeof(Part));
    if (!q) return fmi2Error;
    memcpy(q, c, sizeof(Part));
    *s = q;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
    Part *p = (Part *)c;
    const fmi2CallbackFunctions *cb = p->cb;
    memcpy(p, s, sizeof(Part));
    p->cb = cb;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) {
    (void)c;
    if (s) { free(*s); *s = NULL; }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size) {
    (void)c; (void)s;
    *size = sizeof(Part);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t size) {
    (void)c;
    if (size < sizeof(Part)) return fmi2Error;
    memcpy(b, s, sizeof(Part));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size, fmi2FMUstate *s) {
    if (size != sizeof(Part)) {
        say((Part *)c, fmi2Error, "serialized state has %u bytes, expected %u",
            (unsigned)size, (unsigned)sizeof(Part));
        return fmi2Error;
    }
    Part *q = (Part *)malloc(sizeof(Part));
    if (!q) return fmi2Error;
    memcpy(q, b, sizeof(Part));
    q->cb = ((Part *)c)->cb;
    *s = q;
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[]) {
    (void)u; (void)nu; (void)z; (void)nz; (void)dv; (void)dz;
    say((Part *)c, fmi2Error, "directional derivatives are not provided");
    return fmi2Error;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    say((Part *)c, fmi2Error, "input derivatives are not used (canInterpolateInputs=false)");
    return fmi2Error;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real v[]) {
    (void)vr; (void)n; (void)order; (void)v;
    say((Part *)c, fmi2Error, "output derivatives are not provided");
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean newStep) {
    Part *p = (Part *)c;
    (void)newStep;
    if (!p->started) {
        say(p, fmi2Error, "fmi2DoStep before fmi2ExitInitializationMode");
        return fmi2Error;
    }
    if (!(h > 0.0) || !isfinite(t)) {
        say(p, fmi2Error, "communication step must be > 0 s (got %g at t = %g)", h, t);
        return fmi2Error;
    }
#if PART_KIND == PART_MOTION
    {
        double x, v;
        if (motion_at(t + h, &x, &v, p->r)) {
            say(p, fmi2Error, "the imposed motion's table covers t = [%.17g, %.17g] s only "
                "(asked for t = %.17g s): export with a later t_stop", TAB_T[0],
                TAB_T[N_TAB > 0 ? N_TAB - 1 : 0], t + h);
            return fmi2Error;
        }
    }
#endif
    step(p, t, h);
    p->t = t + h;
#if PART_KIND == PART_MOTION
    outputs(p, h);
#endif
#if PART_KIND == PART_MASS
    if (!isfinite(p->r[I_X]) || !isfinite(p->r[I_V]) || fabs(p->r[I_X]) > 1e100) {
        say(p, fmi2Error, "the motion diverged at t = %g s (x = %g m): the communication step "
            "h = %g s is above the stability limit of this explicit coupling (the stiffness k "
            "and damping c acting on this mass, m = %g kg, need roughly h*sqrt(k/m) < %s and "
            "h*c/m < %s)", t + h, p->r[I_X], h, p->r[I_M],
            p->r[I_EXTRAP] != 0.0 ? "0.3" : "0.6", p->r[I_EXTRAP] != 0.0 ? "0.25" : "0.5");
        return fmi2Error;
    }
#endif
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status *v) {
    (void)c; (void)k; *v = fmi2OK; return fmi2OK;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real *v) {
    if (k == fmi2LastSuccessfulTime) { *v = ((Part *)c)->t; return fmi2OK; }
    return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind k, fmi2Integer *v) {
    (void)c; (void)k; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean *v) {
    (void)c; (void)k; (void)v; return fmi2Discard;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind k, fmi2String *v) {
    (void)c; (void)k; (void)v; return fmi2Discard;
}
