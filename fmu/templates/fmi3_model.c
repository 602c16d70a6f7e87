/* FMI 3.0 boilerplate shared by every hystmech law (co-simulation + model exchange).
 * Same structure and semantics as fmi2_model.c (see there); the law comes from
 * hm_config.h. Value reference 0 is the independent variable time.
 */
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>

#include "fmi3Functions.h"
#include "hm_config.h"

#if HM_KIND == 0
#define HM_NCS HM_NX
#else
#define HM_NCS 0
#endif

typedef struct {
    double time, t_last;
    double u, v, u_eval, u_last;
    double rtol;
    double q[HM_NQ + 1], p[HM_NP + 1], x[HM_NX + 1], x0[HM_NX + 1];
    int initialized;
} hm_state;

typedef struct {
    hm_state s;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback logger;
    char *name;
    int cosim, loggingOn, mode;
} hm_inst;

static void hm_log(hm_inst *c, fmi3Status st, const char *cat, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!c || !c->logger) return;
    if (st == fmi3OK && !c->loggingOn) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->logger(c->env, st, cat, buf);
}

static fmi3Status hm_setup(hm_inst *c, int reset_state)
{
    const char *err = HM_SETUP(c->s.q, HM_NQ, c->s.p, HM_NP, c->s.x0, HM_NX);
    if (err) { hm_log(c, fmi3Error, "logStatusError", "%s", err); return fmi3Error; }
    if (!(c->s.rtol > 0.0 && c->s.rtol < 1.0)) {
        hm_log(c, fmi3Error, "logStatusError", "rtol must be in (0, 1) (got %g)", c->s.rtol);
        return fmi3Error;
    }
    if (reset_state) memcpy(c->s.x, c->s.x0, sizeof(double) * HM_NX);
    c->s.initialized = 1;
    return fmi3OK;
}

static double hm_F(hm_inst *c) { return HM_FORCE(c->s.x, c->s.u_eval, c->s.v, c->s.p); }

static void hm_catch_up(hm_inst *c)
{
#if HM_KIND != 0
    double dt = c->s.time - c->s.t_last;
    double vs = dt > 0.0 ? (c->s.u - c->s.u_last) / dt : c->s.v;
    if (dt > 0.0 || c->s.u != c->s.u_last) {
        hm_fail = NULL;
        HM_ADVANCE(c->s.x, c->s.u_last, c->s.u, dt, vs, c->s.p, c->s.rtol);
        if (hm_fail) hm_log(c, fmi3Error, "logStatusError", "%s (t = %g)", hm_fail, c->s.time);
    }
    c->s.t_last = c->s.time;
    c->s.u_last = c->s.u;
#else
    (void)c;
#endif
}

static fmi3Instance hm_new(fmi3String name, fmi3String token, fmi3Boolean loggingOn,
                           fmi3InstanceEnvironment env, fmi3LogMessageCallback logger, int cosim)
{
    hm_inst *c;
    int i;
    if (!token || strcmp(token, HM_GUID) != 0) {
        if (logger) logger(env, fmi3Error, "logStatusError", "instantiationToken does not match");
        return NULL;
    }
    c = (hm_inst *)calloc(1, sizeof(hm_inst));
    if (!c) return NULL;
    c->env = env;
    c->logger = logger;
    c->name = (char *)calloc(strlen(name ? name : "") + 1, 1);
    if (c->name) strcpy(c->name, name ? name : "");
    c->cosim = cosim;
    c->loggingOn = loggingOn;
    for (i = 0; i < HM_NQ; i++) c->s.q[i] = HM_Q_START[i];
    c->s.rtol = HM_RTOL_START;
    if (hm_setup(c, 1) != fmi3OK) { free(c->name); free(c); return NULL; }
    return c;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cats[])
{
    (void)n; (void)cats;
    if (!c) return fmi3Error;
    ((hm_inst *)c)->loggingOn = on;
    return fmi3OK;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String res,
                                          fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment env, fmi3LogMessageCallback log)
{
    (void)res; (void)visible;
    return hm_new(name, token, loggingOn, env, log, 0);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String res,
                                         fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference req[], size_t nreq,
                                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                         fmi3IntermediateUpdateCallback upd)
{
    (void)res; (void)visible; (void)eventModeUsed; (void)earlyReturnAllowed; (void)req;
    (void)nreq; (void)upd;
    return hm_new(name, token, loggingOn, env, log, 1);
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String name, fmi3String token, fmi3String res,
                                               fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment env,
                                               fmi3LogMessageCallback log,
                                               fmi3ClockUpdateCallback cu,
                                               fmi3LockPreemptionCallback lp,
                                               fmi3UnlockPreemptionCallback up)
{
    (void)name; (void)token; (void)res; (void)visible; (void)loggingOn; (void)cu; (void)lp;
    (void)up;
    if (log) log(env, fmi3Error, "logStatusError", "scheduled execution is not supported");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance c)
{
    hm_inst *m = (hm_inst *)c;
    if (!m) return;
    free(m->name);
    free(m);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tolDef, fmi3Float64 tol,
                                       fmi3Float64 t0, fmi3Boolean stopDef, fmi3Float64 tstop)
{
    hm_inst *m = (hm_inst *)c;
    (void)tolDef; (void)tol; (void)stopDef; (void)tstop;
    if (!m) return fmi3Error;
    m->s.time = m->s.t_last = t0;
    m->mode = 1;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c)
{
    hm_inst *m = (hm_inst *)c;
    if (!m) return fmi3Error;
    if (!m->s.initialized && hm_setup(m, 1) != fmi3OK) return fmi3Error;
    m->s.u_eval = m->s.u_last = m->s.u;
    m->s.t_last = m->s.time;
    m->mode = 2;
    return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance c)
{
    if (!c) return fmi3Error;
    hm_catch_up((hm_inst *)c);
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c) { if (!c) return fmi3Error; ((hm_inst *)c)->mode = 3; return fmi3OK; }

fmi3Status fmi3Reset(fmi3Instance c)
{
    hm_inst *m = (hm_inst *)c;
    int i;
    if (!m) return fmi3Error;
    memset(&m->s, 0, sizeof m->s);
    for (i = 0; i < HM_NQ; i++) m->s.q[i] = HM_Q_START[i];
    m->s.rtol = HM_RTOL_START;
    m->mode = 0;
    return hm_setup(m, 1);
}

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 value[], size_t nv)
{
    hm_inst *m = (hm_inst *)c;
    size_t i;
    (void)nv;
    if (!m) return fmi3Error;
    if (nvr > 0 && !m->s.initialized && hm_setup(m, 1) != fmi3OK) return fmi3Error;
    for (i = 0; i < nvr; i++) {
        fmi3ValueReference r = vr[i];
        if (r == 0) value[i] = m->s.time;
        else if (r == HM_VR_U) value[i] = m->s.u;
        else if (r == HM_VR_V) value[i] = m->s.v;
        else if (r == HM_VR_F) value[i] = hm_F(m);
        else if (r == HM_VR_RTOL) value[i] = m->s.rtol;
        else if (r >= HM_VR_Q && r < HM_VR_Q + HM_NQ) value[i] = m->s.q[r - HM_VR_Q];
        else if (r >= HM_VR_X && r < HM_VR_X + HM_NX) value[i] = m->s.x[r - HM_VR_X];
#if HM_KIND == 0
        else if (r >= HM_VR_DX && r < HM_VR_DX + HM_NX) {
            double d[HM_NX + 1];
            HM_RATE(m->s.x, m->s.u_eval, m->s.v, m->s.p, d);
            value[i] = d[r - HM_VR_DX];
        }
#endif
        else {
            hm_log(m, fmi3Error, "logStatusError", "fmi3GetFloat64: unknown value reference %u", r);
            return fmi3Error;
        }
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 value[], size_t nv)
{
    hm_inst *m = (hm_inst *)c;
    size_t i;
    (void)nv;
    if (!m) return fmi3Error;
    for (i = 0; i < nvr; i++) {
        fmi3ValueReference r = vr[i];
        if (r == HM_VR_U) { m->s.u = value[i]; m->s.u_eval = value[i]; }
        else if (r == HM_VR_V) m->s.v = value[i];
        else if ((r >= HM_VR_Q && r < HM_VR_Q + HM_NQ) || r == HM_VR_RTOL) {
            if (m->mode >= 2) {
                hm_log(m, fmi3Error, "logStatusError",
                       "parameter (value reference %u) can only be set before initialization", r);
                return fmi3Error;
            }
            if (r == HM_VR_RTOL) m->s.rtol = value[i];
            else m->s.q[r - HM_VR_Q] = value[i];
            m->s.initialized = 0;
        } else {
            hm_log(m, fmi3Error, "logStatusError", "fmi3SetFloat64: value reference %u is not settable", r);
            return fmi3Error;
        }
    }
    if (m->mode < 2 && !m->s.initialized) return hm_setup(m, 1);
    return fmi3OK;
}

/* no variables of the other types: calls with nothing to do succeed, others fail */
#define HM_NO_GET(NAME, T) \
    fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, T v[], size_t nv) \
    { (void)vr; (void)v; (void)nv; return (c && n == 0) ? fmi3OK : fmi3Error; }
#define HM_NO_SET(NAME, T) \
    fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const T v[], size_t nv) \
    { (void)vr; (void)v; (void)nv; return (c && n == 0) ? fmi3OK : fmi3Error; }
HM_NO_GET(fmi3GetFloat32, fmi3Float32)
HM_NO_GET(fmi3GetInt8, fmi3Int8)
HM_NO_GET(fmi3GetUInt8, fmi3UInt8)
HM_NO_GET(fmi3GetInt16, fmi3Int16)
HM_NO_GET(fmi3GetUInt16, fmi3UInt16)
HM_NO_GET(fmi3GetInt32, fmi3Int32)
HM_NO_GET(fmi3GetUInt32, fmi3UInt32)
HM_NO_GET(fmi3GetInt64, fmi3Int64)
HM_NO_GET(fmi3GetUInt64, fmi3UInt64)
HM_NO_GET(fmi3GetBoolean, fmi3Boolean)
HM_NO_GET(fmi3GetString, fmi3String)
HM_NO_SET(fmi3SetFloat32, fmi3Float32)
HM_NO_SET(fmi3SetInt8, fmi3Int8)
HM_NO_SET(fmi3SetUInt8, fmi3UInt8)
HM_NO_SET(fmi3SetInt16, fmi3Int16)
HM_NO_SET(fmi3SetUInt16, fmi3UInt16)
HM_NO_SET(fmi3SetInt32, fmi3Int32)
HM_NO_SET(fmi3SetUInt32, fmi3UInt32)
HM_NO_SET(fmi3SetInt64, fmi3Int64)
HM_NO_SET(fmi3SetUInt64, fmi3UInt64)
HM_NO_SET(fmi3SetBoolean, fmi3Boolean)
HM_NO_SET(fmi3SetString, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, size_t sz[],
                         fmi3Binary v[], size_t nv)
{ (void)vr; (void)sz; (void)v; (void)nv; return (c && n == 0) ? fmi3OK : fmi3Error; }
fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const size_t sz[],
                         const fmi3Binary v[], size_t nv)
{ (void)vr; (void)sz; (void)v; (void)nv; return (c && n == 0) ? fmi3OK : fmi3Error; }
fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Clock v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi3OK : fmi3Error; }
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3Clock v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi3OK : fmi3Error; }

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr, size_t *n)
{ (void)c; (void)vr; (void)n; return fmi3Error; }
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference d, size_t e1[],
                                       fmi3ValueReference ind[], size_t e2[],
                                       fmi3DependencyKind k[], size_t n)
{ (void)c; (void)d; (void)e1; (void)ind; (void)e2; (void)k; (void)n; return fmi3Error; }

fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || !st) return fmi3Error;
    if (!*st) *st = calloc(1, sizeof(hm_state));
    if (!*st) return fmi3Error;
    memcpy(*st, &m->s, sizeof(hm_state));
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || !st) return fmi3Error;
    memcpy(&m->s, st, sizeof(hm_state));
    return fmi3OK;
}

fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *st)
{
    if (!c || !st) return fmi3Error;
    free(*st);
    *st = NULL;
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState st, size_t *size)
{ (void)st; if (!c) return fmi3Error; *size = sizeof(hm_state); return fmi3OK; }

fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState st, fmi3Byte buf[], size_t size)
{
    if (!c || !st || size < sizeof(hm_state)) return fmi3Error;
    memcpy(buf, st, sizeof(hm_state));
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte buf[], size_t size,
                                   fmi3FMUState *st)
{
    if (!c || size != sizeof(hm_state)) return fmi3Error;
    if (!*st) *st = calloc(1, sizeof(hm_state));
    if (!*st) return fmi3Error;
    memcpy(*st, buf, sizeof(hm_state));
    return fmi3OK;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference u[], size_t nu,
                                        const fmi3ValueReference k[], size_t nk,
                                        const fmi3Float64 s[], size_t ns, fmi3Float64 r[], size_t nr)
{ (void)c; (void)u; (void)nu; (void)k; (void)nk; (void)s; (void)ns; (void)r; (void)nr; return fmi3Error; }
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference u[], size_t nu,
                                    const fmi3ValueReference k[], size_t nk,
                                    const fmi3Float64 s[], size_t ns, fmi3Float64 r[], size_t nr)
{ (void)c; (void)u; (void)nu; (void)k; (void)nk; (void)s; (void)ns; (void)r; (void)nr; return fmi3Error; }

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  fmi3Float64 iv[], fmi3IntervalQualifier q[])
{ (void)c; (void)vr; (void)n; (void)iv; (void)q; return fmi3Error; }
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   fmi3UInt64 cn[], fmi3UInt64 rs[], fmi3IntervalQualifier q[])
{ (void)c; (void)vr; (void)n; (void)cn; (void)rs; (void)q; return fmi3Error; }
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Float64 s[])
{ (void)c; (void)vr; (void)n; (void)s; return fmi3Error; }
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                fmi3UInt64 cn[], fmi3UInt64 rs[])
{ (void)c; (void)vr; (void)n; (void)cn; (void)rs; return fmi3Error; }
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  const fmi3Float64 iv[])
{ (void)c; (void)vr; (void)n; (void)iv; return fmi3Error; }
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   const fmi3UInt64 cn[], const fmi3UInt64 rs[])
{ (void)c; (void)vr; (void)n; (void)cn; (void)rs; return fmi3Error; }
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Float64 s[])
{ (void)c; (void)vr; (void)n; (void)s; return fmi3Error; }
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                const fmi3UInt64 cn[], const fmi3UInt64 rs[])
{ (void)c; (void)vr; (void)n; (void)cn; (void)rs; return fmi3Error; }
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { if (!c) return fmi3Error; hm_catch_up((hm_inst *)c); return fmi3OK; }

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *need, fmi3Boolean *term,
                                    fmi3Boolean *nomChanged, fmi3Boolean *valChanged,
                                    fmi3Boolean *nextDef, fmi3Float64 *next)
{
    if (!c) return fmi3Error;
    hm_catch_up((hm_inst *)c);
    *need = fmi3False; *term = fmi3False; *nomChanged = fmi3False; *valChanged = fmi3False;
    *nextDef = fmi3False; *next = 0.0;
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { return c ? fmi3OK : fmi3Error; }

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet, fmi3Boolean *enter,
                                       fmi3Boolean *term)
{
    (void)noSet;
    if (!c) return fmi3Error;
    hm_catch_up((hm_inst *)c);
    *enter = fmi3False;
    *term = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) { if (!c) return fmi3Error; ((hm_inst *)c)->s.time = t; return fmi3OK; }

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi3Error;
    if (nx) memcpy(m->s.x, x, sizeof(double) * nx);
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi3Error;
#if HM_KIND == 0
    HM_RATE(m->s.x, m->s.u, m->s.v, m->s.p, dx);
#else
    (void)dx;
#endif
    return fmi3OK;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t nz)
{ (void)z; return (c && nz == 0) ? fmi3OK : fmi3Error; }

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi3Error;
    if (nx) memcpy(x, m->s.x, sizeof(double) * nx);
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 xn[], size_t nx)
{
    size_t i;
    if (!c || nx != HM_NCS) return fmi3Error;
    for (i = 0; i < nx; i++) xn[i] = HM_X_NOMINAL[i];
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { if (!c) return fmi3Error; *n = 0; return fmi3OK; }
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { if (!c) return fmi3Error; *n = HM_NCS; return fmi3OK; }

fmi3Status fmi3EnterStepMode(fmi3Instance c) { return c ? fmi3OK : fmi3Error; }

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 o[], fmi3Float64 v[], size_t nv)
{ (void)c; (void)vr; (void)n; (void)o; (void)v; (void)nv; return fmi3Error; }

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSet,
                      fmi3Boolean *eventNeeded, fmi3Boolean *term, fmi3Boolean *early,
                      fmi3Float64 *lastTime)
{
    hm_inst *m = (hm_inst *)c;
    double u0, u1, F;
    (void)noSet;
    if (!m) return fmi3Error;
    *eventNeeded = fmi3False; *term = fmi3False; *early = fmi3False; *lastTime = t;
    if (h < 0.0) {
        hm_log(m, fmi3Error, "logStatusError", "communication step size must be >= 0 (got %g)", h);
        return fmi3Error;
    }
    u0 = m->s.u;                       /* u(t) = u_k + v_k (t − t_k) on the step */
    u1 = u0 + m->s.v * h;
    hm_fail = NULL;
    HM_ADVANCE(m->s.x, u0, u1, h, m->s.v, m->s.p, m->s.rtol);
    if (hm_fail) {
        hm_log(m, fmi3Error, "logStatusError", "%s (t = %g)", hm_fail, t);
        return fmi3Error;
    }
    m->s.u_eval = u1;
    m->s.time = t + h;
    m->s.t_last = m->s.time;
    m->s.u_last = u1;
    *lastTime = m->s.time;
    F = hm_F(m);
    if (F != F) {
        hm_log(m, fmi3Error, "logStatusError", "non-finite force at t = %g", m->s.time);
        return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clk, fmi3Float64 t)
{ (void)c; (void)clk; (void)t; return fmi3Error; }
