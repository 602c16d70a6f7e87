/* FMI 2.0 boilerplate shared by every hystmech law (co-simulation + model exchange).
 *
 * The law comes from hm_config.h, written by hystmech.fmu.export_fmu: it defines the
 * sizes (HM_NX states, HM_NP kernel parameters, HM_NQ constructor parameters), the
 * kind (HM_KIND 0 smooth, 1 inclusion, 2 operator), the value references, the start
 * values and the kernel names HM_ADVANCE/HM_FORCE/HM_RATE/HM_SETUP, and includes the
 * law's C file (components/LAW.c, see components/hm_law.h for the protocol).
 *
 * Co-simulation: between communication points the input is u(t) = u_k + v_k (t − t_k)
 * and doStep advances the state with the law's own segment update HM_ADVANCE (exact
 * where the law allows, adaptive Dormand-Prince to rtol otherwise).
 * Model exchange: smooth laws expose their state as continuous states with
 * derivatives HM_RATE; inclusions and operators keep their state as discrete states
 * advanced with HM_ADVANCE at each completed integrator step and at events (the
 * projection/memory update needs the input path, not a rate).
 */
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>

#include "fmi2Functions.h"
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
    int initialized;  /* setup done after the last parameter change */
} hm_state;

typedef struct {
    hm_state s;
    fmi2CallbackFunctions cb;
    char *name;
    int cosim, loggingOn, mode;  /* mode 0 instantiated, 1 init, 2 running, 3 terminated */
} hm_inst;

static void hm_log(hm_inst *c, fmi2Status st, const char *cat, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!c || !c->cb.logger) return;
    if (st == fmi2OK && !c->loggingOn) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->cb.logger(c->cb.componentEnvironment, c->name, st, cat, "%s", buf);
}

/* constructor parameters -> kernel parameters and initial state (the law's checks) */
static fmi2Status hm_setup(hm_inst *c, int reset_state)
{
    const char *err = HM_SETUP(c->s.q, HM_NQ, c->s.p, HM_NP, c->s.x0, HM_NX);
    if (err) {
        hm_log(c, fmi2Error, "logStatusError", "%s", err);
        return fmi2Error;
    }
    if (!(c->s.rtol > 0.0 && c->s.rtol < 1.0)) {
        hm_log(c, fmi2Error, "logStatusError", "rtol must be in (0, 1) (got %g)", c->s.rtol);
        return fmi2Error;
    }
    if (reset_state) memcpy(c->s.x, c->s.x0, sizeof(double) * HM_NX);
    c->s.initialized = 1;
    return fmi2OK;
}

static double hm_F(hm_inst *c)
{
    return HM_FORCE(c->s.x, c->s.u_eval, c->s.v, c->s.p);
}

/* discrete update of inclusions/operators over the input path since the last one */
static void hm_catch_up(hm_inst *c)
{
#if HM_KIND != 0
    double dt = c->s.time - c->s.t_last;
    double vs = dt > 0.0 ? (c->s.u - c->s.u_last) / dt : c->s.v;
    if (dt > 0.0 || c->s.u != c->s.u_last) {
        hm_fail = NULL;
        HM_ADVANCE(c->s.x, c->s.u_last, c->s.u, dt, vs, c->s.p, c->s.rtol);
        if (hm_fail) hm_log(c, fmi2Error, "logStatusError", "%s (t = %g)", hm_fail, c->s.time);
    }
    c->s.t_last = c->s.time;
    c->s.u_last = c->s.u;
#else
    (void)c;
#endif
}

/* ---------------------------------------------------------------- common ------ */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[])
{
    (void)n; (void)cats;
    if (!c) return fmi2Error;
    ((hm_inst *)c)->loggingOn = on;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String location, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    hm_inst *c;
    int i;
    (void)location; (void)visible;
    if (!cb || !cb->allocateMemory || !cb->freeMemory) return NULL;
    if (!guid || strcmp(guid, HM_GUID) != 0) {
        if (cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError",
                       "GUID %s does not match %s", guid ? guid : "(null)", HM_GUID);
        return NULL;
    }
    c = (hm_inst *)cb->allocateMemory(1, sizeof(hm_inst));
    if (!c) return NULL;
    memset(c, 0, sizeof *c);
    c->cb = *cb;
    c->name = (char *)cb->allocateMemory(strlen(name ? name : "") + 1, 1);
    if (c->name) strcpy(c->name, name ? name : "");
    c->cosim = (type == fmi2CoSimulation);
    c->loggingOn = loggingOn;
    for (i = 0; i < HM_NQ; i++) c->s.q[i] = HM_Q_START[i];
    c->s.rtol = HM_RTOL_START;
    if (hm_setup(c, 1) != fmi2OK) {
        cb->freeMemory(c->name);
        cb->freeMemory(c);
        return NULL;
    }
    return c;
}

void fmi2FreeInstance(fmi2Component c)
{
    hm_inst *m = (hm_inst *)c;
    if (!m) return;
    m->cb.freeMemory(m->name);
    m->cb.freeMemory(m);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDefined, fmi2Real tol,
                               fmi2Real t0, fmi2Boolean stopDefined, fmi2Real tstop)
{
    hm_inst *m = (hm_inst *)c;
    (void)tolDefined; (void)tol; (void)stopDefined; (void)tstop;
    if (!m) return fmi2Error;
    m->s.time = m->s.t_last = t0;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    hm_inst *m = (hm_inst *)c;
    if (!m) return fmi2Error;
    m->mode = 1;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    hm_inst *m = (hm_inst *)c;
    if (!m) return fmi2Error;
    if (!m->s.initialized && hm_setup(m, 1) != fmi2OK) return fmi2Error;
    m->s.u_eval = m->s.u_last = m->s.u;
    m->s.t_last = m->s.time;
    m->mode = 2;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c) { if (!c) return fmi2Error; ((hm_inst *)c)->mode = 3; return fmi2OK; }

fmi2Status fmi2Reset(fmi2Component c)
{
    hm_inst *m = (hm_inst *)c;
    int i;
    if (!m) return fmi2Error;
    memset(&m->s, 0, sizeof m->s);
    for (i = 0; i < HM_NQ; i++) m->s.q[i] = HM_Q_START[i];
    m->s.rtol = HM_RTOL_START;
    m->mode = 0;
    return hm_setup(m, 1);
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    hm_inst *m = (hm_inst *)c;
    size_t i;
    if (!m) return fmi2Error;
    if (nvr > 0 && !m->s.initialized && hm_setup(m, 1) != fmi2OK) return fmi2Error;
    for (i = 0; i < nvr; i++) {
        fmi2ValueReference r = vr[i];
        if (r == HM_VR_U) value[i] = m->s.u;
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
            hm_log(m, fmi2Error, "logStatusError", "fmi2GetReal: unknown value reference %u", r);
            return fmi2Error;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    hm_inst *m = (hm_inst *)c;
    size_t i;
    if (!m) return fmi2Error;
    for (i = 0; i < nvr; i++) {
        fmi2ValueReference r = vr[i];
        if (r == HM_VR_U) { m->s.u = value[i]; m->s.u_eval = value[i]; }
        else if (r == HM_VR_V) m->s.v = value[i];
        else if ((r >= HM_VR_Q && r < HM_VR_Q + HM_NQ) || r == HM_VR_RTOL) {
            if (m->mode >= 2) {
                hm_log(m, fmi2Error, "logStatusError",
                       "parameter (value reference %u) can only be set before initialization", r);
                return fmi2Error;
            }
            if (r == HM_VR_RTOL) m->s.rtol = value[i];
            else m->s.q[r - HM_VR_Q] = value[i];
            m->s.initialized = 0;
        } else {
            hm_log(m, fmi2Error, "logStatusError", "fmi2SetReal: value reference %u is not settable", r);
            return fmi2Error;
        }
    }
    if (m->mode < 2 && !m->s.initialized) return hm_setup(m, 1);
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[])
{ (void)vr; (void)v; return (c && n == 0) ? fmi2OK : fmi2Error; }

/* the whole simulation state is the plain struct hm_state: copy it */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || !st) return fmi2Error;
    if (!*st) *st = m->cb.allocateMemory(1, sizeof(hm_state));
    if (!*st) return fmi2Error;
    memcpy(*st, &m->s, sizeof(hm_state));
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || !st) return fmi2Error;
    memcpy(&m->s, st, sizeof(hm_state));
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || !st) return fmi2Error;
    if (*st) m->cb.freeMemory(*st);
    *st = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate st, size_t *size)
{
    (void)st;
    if (!c) return fmi2Error;
    *size = sizeof(hm_state);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate st, fmi2Byte buf[], size_t size)
{
    if (!c || !st || size < sizeof(hm_state)) return fmi2Error;
    memcpy(buf, st, sizeof(hm_state));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte buf[], size_t size, fmi2FMUstate *st)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || size != sizeof(hm_state)) return fmi2Error;
    if (!*st) *st = m->cb.allocateMemory(1, sizeof(hm_state));
    if (!*st) return fmi2Error;
    memcpy(*st, buf, sizeof(hm_state));
    return fmi2OK;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vu[], size_t nu,
                                        const fmi2ValueReference vk[], size_t nk,
                                        const fmi2Real dvk[], fmi2Real dvu[])
{
    (void)vu; (void)nu; (void)vk; (void)nk; (void)dvk; (void)dvu;
    hm_log((hm_inst *)c, fmi2Error, "logStatusError", "directional derivatives are not provided");
    return fmi2Error;
}

/* -------------------------------------------------------- model exchange ------ */
fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    if (!c) return fmi2Error;
    hm_catch_up((hm_inst *)c);
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *ev)
{
    if (!c) return fmi2Error;
    hm_catch_up((hm_inst *)c);
    ev->newDiscreteStatesNeeded = fmi2False;
    ev->terminateSimulation = fmi2False;
    ev->nominalsOfContinuousStatesChanged = fmi2False;
    ev->valuesOfContinuousStatesChanged = fmi2False;
    ev->nextEventTimeDefined = fmi2False;
    ev->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return c ? fmi2OK : fmi2Error; }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetPrior,
                                       fmi2Boolean *enterEvent, fmi2Boolean *terminate)
{
    (void)noSetPrior;
    if (!c) return fmi2Error;
    hm_catch_up((hm_inst *)c);
    *enterEvent = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t)
{
    if (!c) return fmi2Error;
    ((hm_inst *)c)->s.time = t;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi2Error;
    if (nx) memcpy(m->s.x, x, sizeof(double) * nx);
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi2Error;
#if HM_KIND == 0
    HM_RATE(m->s.x, m->s.u, m->s.v, m->s.p, dx);
#else
    (void)dx;
#endif
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz)
{
    (void)z;
    return (c && nz == 0) ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    hm_inst *m = (hm_inst *)c;
    if (!m || nx != HM_NCS) return fmi2Error;
    if (nx) memcpy(x, m->s.x, sizeof(double) * nx);
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real xn[], size_t nx)
{
    size_t i;
    if (!c || nx != HM_NCS) return fmi2Error;
    for (i = 0; i < nx; i++) xn[i] = HM_X_NOMINAL[i];
    return fmi2OK;
}

/* ---------------------------------------------------------- co-simulation ------ */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)vr; (void)nvr; (void)order; (void)value;
    hm_log((hm_inst *)c, fmi2Error, "logStatusError", "input derivatives are not supported: set v");
    return fmi2Error;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)vr; (void)nvr; (void)order; (void)value;
    hm_log((hm_inst *)c, fmi2Error, "logStatusError", "output derivatives are not provided");
    return fmi2Error;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior)
{
    hm_inst *m = (hm_inst *)c;
    double u0, u1;
    (void)noSetPrior;
    if (!m) return fmi2Error;
    if (h < 0.0) {
        hm_log(m, fmi2Error, "logStatusError", "communication step size must be >= 0 (got %g)", h);
        return fmi2Error;
    }
    /* u(t) = u_k + v_k (t − t_k) on [t_k, t_k + h] */
    u0 = m->s.u;
    u1 = u0 + m->s.v * h;
    hm_fail = NULL;
    HM_ADVANCE(m->s.x, u0, u1, h, m->s.v, m->s.p, m->s.rtol);
    if (hm_fail) {
        hm_log(m, fmi2Error, "logStatusError", "%s (t = %g)", hm_fail, t);
        return fmi2Error;
    }
    m->s.u_eval = u1;
    m->s.time = t + h;
    m->s.t_last = m->s.time;
    m->s.u_last = u1;
    {
        double F = hm_F(m);
        if (F != F) {
            hm_log(m, fmi2Error, "logStatusError", "non-finite force at t = %g", m->s.time);
            return fmi2Error;
        }
    }
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    if (!c) return fmi2Error;
    if (s == fmi2LastSuccessfulTime) { *v = ((hm_inst *)c)->s.time; return fmi2OK; }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
