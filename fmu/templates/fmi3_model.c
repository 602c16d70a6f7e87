/* FMI 3.0 boilerplate shared by every hystmech law (co-simulation + model exchange).
 * Same semantics as fmi2_model.c (see there for what each mode guarantees): both are
 * thin wrappers of the API-neutral core hm_fmu.h; the law comes from hm_config.h.
 * Value reference 0 is the independent variable time. FMI 3.0 has no input
 * derivatives: in co-simulation v_k is the slope of the predicted input path.
 */
#include "fmi3Functions.h"

#define HM_VR_TIME 0
#define HM_VR_Z 300000  /* event indicators (fmu/fmi3.py VR_Z) */
#define HM_API_FIELDS fmi3InstanceEnvironment env; fmi3LogMessageCallback logger;
#include "hm_fmu.h"

static void hm_emit(struct hm_inst_ *c, int st, const char *cat, const char *msg)
{
    if (c->logger) c->logger(c->env, (fmi3Status)st, cat, msg);
}

#define INST ((hm_inst *)c)
#define ST(x) ((fmi3Status)(x))
#define GUARD(modes, fn) if (hm_refuse(INST, (modes), fn)) return fmi3Error
#define GUARD_ME(modes, fn) GUARD(modes, fn); if (hm_need_type(INST, 0, fn)) return fmi3Error
#define GUARD_CS(modes, fn) GUARD(modes, fn); if (hm_need_type(INST, 1, fn)) return fmi3Error

static fmi3Instance hm_new(fmi3String name, fmi3String token, fmi3Boolean loggingOn,
                           fmi3InstanceEnvironment env, fmi3LogMessageCallback logger, int cosim)
{
    hm_inst *c;
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
    c->log_mask = loggingOn ? (1u << HM_N_LOGCAT) - 1u : 0u;
    hm_defaults(c);
    if (hm_setup(c, 1) != HM_OK) { free(c->name); free(c); return NULL; }
    return c;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cats[])
{
    if (!c) return fmi3Error;
    return ST(hm_debug_logging(INST, on, n, cats, "fmi3SetDebugLogging"));
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
    (void)res; (void)visible; (void)earlyReturnAllowed; (void)req; (void)nreq; (void)upd;
    if (eventModeUsed) {  /* hasEventMode="false" */
        if (log) log(env, fmi3Error, "logStatusError", "event mode in co-simulation is not supported");
        return NULL;
    }
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
    if (!c) return;
    free(INST->name);
    free(c);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean tolDef, fmi3Float64 tol,
                                       fmi3Float64 t0, fmi3Boolean stopDef, fmi3Float64 tstop)
{
    (void)stopDef; (void)tstop;
    GUARD(B(M_INST), "fmi3EnterInitializationMode");
    if (hm_start(INST, tolDef, tol, t0) != HM_OK) return fmi3Error;
    INST->s.mode = M_INIT;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c)
{
    GUARD(B(M_INIT), "fmi3ExitInitializationMode");
    return ST(hm_exit_init(INST));
}

fmi3Status fmi3EnterEventMode(fmi3Instance c)
{
    GUARD_ME(B(M_EVENT) | B(M_CONT), "fmi3EnterEventMode");
    INST->s.mode = M_EVENT;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance c)
{
    GUARD(M_RUN, "fmi3Terminate");
    INST->s.mode = M_TERM;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance c)
{
    if (!c) return fmi3Error;
    return ST(hm_reset(INST));
}

#ifdef HM_NQA
/* the length of array parameter k now: a sized one's is the structural parameter */
static int hm3_qa_len(const hm_inst *c, int k)
{
#ifdef HM_STRUCT
    if (HM_QA_SIZED[k]) return (int)c->s.n_struct;
#else
    (void)c;
#endif
    return HM_QA_LEN[k];
}

/* the number of values value reference r stands for (1: a scalar) */
static size_t hm3_count(const hm_inst *c, unsigned r)
{
    if (r >= HM_VR_QA && r < HM_VR_QA + HM_NQA) return (size_t)hm3_qa_len(c, (int)(r - HM_VR_QA));
#ifdef HM_NX_SIZED
    if (r == HM_VR_X) return (size_t)c->s.n_struct;  /* the states array Z */
#endif
    return 1;
}

/* Array parameters: value reference HM_VR_QA + k stands for the HM_QA_LEN[k] constructor
 * parameters from q[HM_QA_OFF[k]] (FMI 3.0 arrays, row-major values). A call is expanded
 * into the scalar value references of those parameters, so arrays get the checks, the
 * tunability and the all-or-nothing behaviour of scalars. With a structural parameter
 * the sized arrays (and a sized state array at HM_VR_X) have its current length.
 * *out: malloc'ed (free it). */
static int hm3_expand(hm_inst *c, const fmi3ValueReference vr[], size_t nvr, size_t nv,
                      unsigned **out, size_t *n, const char *fn)
{
    size_t i, m = 0;
    int j;
    unsigned *e;
    if (nvr > 0 && !vr) return hm_error(c, "%s: NULL array", fn);
    for (i = 0; i < nvr; i++) m += hm3_count(c, vr[i]);
    if (nv < m)
        return hm_error(c, "%s: nValues = %lu, but the value references hold %lu values", fn,
                        (unsigned long)nv, (unsigned long)m);
    e = (unsigned *)malloc(sizeof(unsigned) * (m + 1));
    if (!e) return hm_error(c, "%s: out of memory", fn);
    for (i = 0, m = 0; i < nvr; i++) {
        if (vr[i] >= HM_VR_QA && vr[i] < HM_VR_QA + HM_NQA) {
            int k = (int)(vr[i] - HM_VR_QA);
            for (j = 0; j < hm3_qa_len(c, k); j++) e[m++] = HM_VR_Q + (unsigned)(HM_QA_OFF[k] + j);
        } else if (hm3_count(c, vr[i]) > 1) {  /* the sized state array */
            for (j = 0; j < (int)hm3_count(c, vr[i]); j++) e[m++] = vr[i] + (unsigned)j;
        } else {
            e[m++] = vr[i];
        }
    }
    *out = e;
    *n = m;
    return HM_OK;
}
#endif

fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 value[], size_t nv)
{
    if (!c) return fmi3Error;
#ifdef HM_NQA
    {
        unsigned *e;
        size_t n;
        int st;
        if (hm3_expand(INST, vr, nvr, nv, &e, &n, "fmi3GetFloat64") != HM_OK) return fmi3Error;
        st = hm_get_real(INST, e, n, value, "fmi3GetFloat64");
        free(e);
        return ST(st);
    }
#else
    if (nv < nvr) return ST(hm_error(INST, "fmi3GetFloat64: nValues = %lu < %lu", (unsigned long)nv,
                                     (unsigned long)nvr));
    return ST(hm_get_real(INST, vr, nvr, value, "fmi3GetFloat64"));
#endif
}

fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 value[], size_t nv)
{
    if (!c) return fmi3Error;
#ifdef HM_NQA
    {
        unsigned *e;
        size_t n;
        int st;
        if (hm3_expand(INST, vr, nvr, nv, &e, &n, "fmi3SetFloat64") != HM_OK) return fmi3Error;
        st = hm_set_real(INST, e, n, value, "fmi3SetFloat64");
        free(e);
        return ST(st);
    }
#else
    if (nv < nvr) return ST(hm_error(INST, "fmi3SetFloat64: nValues = %lu < %lu", (unsigned long)nv,
                                     (unsigned long)nvr));
    return ST(hm_set_real(INST, vr, nvr, value, "fmi3SetFloat64"));
#endif
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
#ifndef HM_STRUCT
HM_NO_GET(fmi3GetUInt64, fmi3UInt64)
#endif
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
#ifndef HM_STRUCT
HM_NO_SET(fmi3SetUInt64, fmi3UInt64)
#endif
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
    GUARD(M_ANY & ~B(M_ERROR), "fmi3GetFMUState");
    if (!st) return ST(hm_error(INST, "fmi3GetFMUState: NULL pointer"));
    if (*st && ((hm_state *)*st)->magic != HM_MAGIC)
        return ST(hm_error(INST, "fmi3GetFMUState: *FMUState is not a state of this FMU"));
    if (!*st) *st = calloc(1, sizeof(hm_state));
    if (!*st) return ST(hm_error(INST, "fmi3GetFMUState: out of memory"));
    return ST(hm_state_get(INST, (hm_state *)*st));
}

fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState st)
{
    if (!c) return fmi3Error;
    return ST(hm_state_set(INST, (const hm_state *)st, "fmi3SetFMUState"));
}

fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *st)
{
    if (!c || !st) return fmi3Error;
    free(*st);
    *st = NULL;
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState st, size_t *size)
{ (void)st; if (!c || !size) return fmi3Error; *size = sizeof(hm_state); return fmi3OK; }

fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState st, fmi3Byte buf[], size_t size)
{
    if (!c) return fmi3Error;
    if (!st || !buf || size < sizeof(hm_state) || ((hm_state *)st)->magic != HM_MAGIC) {
        hm_log(INST, HM_ERROR, "logStatusError", "fmi3SerializeFMUState: bad state or buffer");
        return fmi3Error;
    }
    memcpy(buf, st, sizeof(hm_state));
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte buf[], size_t size,
                                   fmi3FMUState *st)
{
    hm_state *tmp;
    if (!c || !st) return fmi3Error;
    tmp = (hm_state *)malloc(sizeof(hm_state));
    if (!tmp) return fmi3Error;
    if (hm_state_read(INST, (const char *)buf, size, tmp, "fmi3DeserializeFMUState") != HM_OK) {
        free(tmp);
        return fmi3Error;
    }
    if (!*st) *st = calloc(1, sizeof(hm_state));
    if (*st) memcpy(*st, tmp, sizeof(hm_state));
    free(tmp);
    return *st ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference u[], size_t nu,
                                        const fmi3ValueReference k[], size_t nk,
                                        const fmi3Float64 s[], size_t ns, fmi3Float64 r[], size_t nr)
{
    if (!c) return fmi3Error;
    if (ns != nk || nr != nu)
        return ST(hm_error(INST, "fmi3GetDirectionalDerivative: nSeed = nKnowns and "
                           "nSensitivity = nUnknowns for scalar variables"));
    return ST(hm_directional(INST, u, nu, k, nk, s, r, 0, "fmi3GetDirectionalDerivative"));
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference u[], size_t nu,
                                    const fmi3ValueReference k[], size_t nk,
                                    const fmi3Float64 s[], size_t ns, fmi3Float64 r[], size_t nr)
{
    if (!c) return fmi3Error;
    if (ns != nu || nr != nk)
        return ST(hm_error(INST, "fmi3GetAdjointDerivative: nSeed = nUnknowns and "
                           "nSensitivity = nKnowns for scalar variables"));
    return ST(hm_directional(INST, u, nu, k, nk, s, r, 1, "fmi3GetAdjointDerivative"));
}

#ifdef HM_STRUCT
/* The structural parameter (fmu/fmi3_structural.py): the length n of the sized arrays,
 * read at any time, changed in Configuration Mode only (variability fixed: entered from
 * Instantiated, before initialization), to a value in [1, HM_N_MAX]. Arrays keep their
 * first min(n_old, n) values; new entries repeat the last one. */
fmi3Status fmi3GetUInt64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3UInt64 v[],
                         size_t nv)
{
    size_t i;
    if (!c) return fmi3Error;
    if (n > 0 && (!vr || !v)) return ST(hm_error(INST, "fmi3GetUInt64: NULL array"));
    if (nv < n) return ST(hm_error(INST, "fmi3GetUInt64: nValues = %lu < %lu", (unsigned long)nv,
                                   (unsigned long)n));
    for (i = 0; i < n; i++) {
        if (vr[i] != HM_VR_N) {
            hm_log(INST, HM_ERROR, "logStatusError", "fmi3GetUInt64: unknown value reference %u",
                   (unsigned)vr[i]);
            return fmi3Error;
        }
        v[i] = (fmi3UInt64)INST->s.n_struct;
    }
    return fmi3OK;
}

fmi3Status fmi3SetUInt64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                         const fmi3UInt64 v[], size_t nv)
{
    size_t i;
    int j, k, old;
    fmi3UInt64 want;
    if (!c) return fmi3Error;
    if (n == 0) return fmi3OK;
    if (!vr || !v) return ST(hm_error(INST, "fmi3SetUInt64: NULL array"));
    if (nv < n) return ST(hm_error(INST, "fmi3SetUInt64: nValues = %lu < %lu", (unsigned long)nv,
                                   (unsigned long)n));
    for (i = 0; i < n; i++)  /* check everything first: a refused call changes nothing */
        if (vr[i] != HM_VR_N) {
            hm_log(INST, HM_ERROR, "logStatusError", "fmi3SetUInt64: value reference %u is not "
                   "settable", (unsigned)vr[i]);
            return fmi3Error;
        }
    if (INST->s.mode != M_CONF) {
        hm_log(INST, HM_ERROR, "logStatusError", "fmi3SetUInt64: the structural parameter "
               "(value reference %u) is set in configuration mode only (fmi3EnterConfigurationMode "
               "after instantiation); the instance is in %s", HM_VR_N, HM_MODE_NAME[INST->s.mode]);
        return fmi3Error;
    }
    want = v[n - 1];
    for (i = 0; i < n; i++)
        if (v[i] < 1 || v[i] > (fmi3UInt64)HM_N_MAX) {
            hm_log(INST, HM_ERROR, "logStatusError", "fmi3SetUInt64: the structural parameter "
                   "(value reference %u, the length of the sized arrays) must be in [1, %d], the "
                   "capacity compiled into this FMU (export_fmu(..., max_size=)) (got %llu)",
                   HM_VR_N, HM_N_MAX, (unsigned long long)v[i]);
            return fmi3Error;
        }
    old = (int)INST->s.n_struct;
    for (k = 0; k < HM_NQA; k++)
        if (HM_QA_SIZED[k])
            for (j = old; j < (int)want; j++)
                INST->s.q[HM_QA_OFF[k] + j] = INST->s.q[HM_QA_OFF[k] + old - 1];
    INST->s.n_struct = (double)want;
    INST->s.initialized = 0;
    return fmi3OK;
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance c)
{
    GUARD(B(M_INST), "fmi3EnterConfigurationMode");
    INST->s.mode = M_CONF;
    return fmi3OK;
}

/* back to Instantiated with the law set up for the new length (its checks) */
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c)
{
    GUARD(B(M_CONF), "fmi3ExitConfigurationMode");
    INST->s.mode = M_INST;
    if (!INST->s.initialized && hm_setup(INST, 1) != HM_OK) {
        hm_enter_error(INST);
        return fmi3Error;
    }
    return fmi3OK;
}
#else
fmi3Status fmi3EnterConfigurationMode(fmi3Instance c)
{
    if (!c) return fmi3Error;
    hm_log(INST, HM_ERROR, "logStatusError", "fmi3EnterConfigurationMode: this FMU has no "
           "structural parameters");
    return fmi3Error;
}
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
#endif
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
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c)
{
    GUARD_ME(B(M_EVENT), "fmi3EvaluateDiscreteStates");
    return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *need, fmi3Boolean *term,
                                    fmi3Boolean *nomChanged, fmi3Boolean *valChanged,
                                    fmi3Boolean *nextDef, fmi3Float64 *next)
{
    GUARD_ME(B(M_EVENT), "fmi3UpdateDiscreteStates");
    if (!need || !term || !nomChanged || !valChanged || !nextDef || !next)
        return ST(hm_error(INST, "fmi3UpdateDiscreteStates: NULL pointer"));
    if (hm_new_discrete(INST) != HM_OK) return fmi3Error;
    *need = fmi3False; *term = fmi3False; *nomChanged = fmi3False; *valChanged = fmi3False;
    *nextDef = fmi3False; *next = 0.0;
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c)
{
    GUARD_ME(B(M_EVENT), "fmi3EnterContinuousTimeMode");
    INST->s.mode = M_CONT;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet, fmi3Boolean *enter,
                                       fmi3Boolean *term)
{
    int e;
    (void)noSet;
    GUARD_ME(B(M_CONT), "fmi3CompletedIntegratorStep");
    if (!enter || !term) return ST(hm_error(INST, "fmi3CompletedIntegratorStep: NULL pointer"));
    if (hm_completed_step(INST, &e) != HM_OK) return fmi3Error;
    *enter = e ? fmi3True : fmi3False;
    *term = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t)
{
    GUARD_ME(B(M_EVENT) | B(M_CONT), "fmi3SetTime");
    return ST(hm_set_time(INST, t, "fmi3SetTime"));
}

fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t nx)
{
    GUARD_ME(B(M_CONT), "fmi3SetContinuousStates");
    return ST(hm_set_x(INST, x, nx, "fmi3SetContinuousStates"));
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t nx)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi3GetContinuousStateDerivatives");
    return ST(hm_get_dx(INST, dx, nx, "fmi3GetContinuousStateDerivatives"));
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t nz)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi3GetEventIndicators");
    return ST(hm_get_z(INST, z, nz, "fmi3GetEventIndicators"));
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi3GetContinuousStates");
    return ST(hm_get_x(INST, x, nx, "fmi3GetContinuousStates"));
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 xn[], size_t nx)
{
    size_t i;
    GUARD(M_ANY & ~B(M_ERROR), "fmi3GetNominalsOfContinuousStates");
    if (nx != HM_NCS || (nx && !xn))
        return ST(hm_error(INST, "fmi3GetNominalsOfContinuousStates: nx = %lu, expected %d",
                           (unsigned long)nx, HM_NCS));
#if HM_NCS > 0
    for (i = 0; i < nx; i++) xn[i] = HM_X_NOMINAL[HM_CS(i)];
#endif
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n)
{ if (!c || !n) return fmi3Error; *n = HM_NZ; return fmi3OK; }
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n)
{ if (!c || !n) return fmi3Error; *n = HM_NCS; return fmi3OK; }

fmi3Status fmi3EnterStepMode(fmi3Instance c)
{
    if (!c) return fmi3Error;
    hm_log(INST, HM_ERROR, "logStatusError", "fmi3EnterStepMode: co-simulation without event "
           "mode is in step mode after initialization (hasEventMode=\"false\")");
    return fmi3Error;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 o[], fmi3Float64 v[], size_t nv)
{
    GUARD_CS(B(M_STEP), "fmi3GetOutputDerivatives");
    if (nv != n) return ST(hm_error(INST, "fmi3GetOutputDerivatives: nValues = nValueReferences "
                                    "expected (scalar F)"));
    return ST(hm_output_derivatives(INST, vr, n, o, v, "fmi3GetOutputDerivatives"));
}

fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSet,
                      fmi3Boolean *eventNeeded, fmi3Boolean *term, fmi3Boolean *early,
                      fmi3Float64 *lastTime)
{
    int st;
    (void)noSet;
    GUARD_CS(B(M_STEP), "fmi3DoStep");
    if (!eventNeeded || !term || !early || !lastTime)
        return ST(hm_error(INST, "fmi3DoStep: NULL pointer"));
    *eventNeeded = fmi3False; *term = fmi3False; *early = fmi3False;
    st = hm_do_step(INST, t, h, "fmi3DoStep");
    *lastTime = INST->s.time;
    return ST(st);
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference clk, fmi3Float64 t)
{ (void)c; (void)clk; (void)t; return fmi3Error; }
