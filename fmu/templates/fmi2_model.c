/* FMI 2.0 boilerplate shared by every hystmech law (co-simulation + model exchange).
 *
 * The law comes from hm_config.h, written by hystmech.fmu.export_fmu: it defines the
 * sizes (HM_NX states, HM_NP kernel parameters, HM_NQ constructor parameters), the
 * kind (HM_KIND 0 smooth, 1 inclusion, 2 operator), the value references, the start
 * values, the kernel names HM_ADVANCE/HM_FORCE/HM_RATE/HM_SETUP and the optional
 * HM_SWITCH/HM_EVENTS/HM_CHECK_STATE, renames every kernel symbol with the model
 * identifier (so any number of hystmech source FMUs link into one program), and
 * includes the law's C file (components/LAW.c, see components/hm_law.h). The calls are
 * thin wrappers of the API-neutral core hm_fmu.h, shared with fmi3_model.c.
 *
 * Co-simulation (second order): the committed state follows the piecewise-linear
 * input path through the received u_k (at doStep k+1 the FMU knows u_k and u_{k+1});
 * the output at t_k + h comes from a predicted copy advanced along
 * u_k + u̇_k (t − t_k) (u̇_k = fmi2SetRealInputDerivatives of u if given, else v_k).
 *
 * Model exchange: smooth laws expose continuous states with derivatives HM_RATE (and
 * the law's event indicators HM_EVENTS where the rate is not Lipschitz). Inclusions
 * and operators keep their state at an anchor (x_a at u_a), changed only in event
 * mode; F at u is the law's exact segment update from the anchor, which is exact
 * while u moves monotonically and has not passed the next switch point. Two event
 * indicators: dir·v (a reversal of the input) and dir·(u_switch − u) (the next face,
 * threshold or memory corner, HM_SWITCH). A host that misses a crossing is asked for
 * a step event in fmi2CompletedIntegratorStep; the anchor (the memory) moves only in
 * event mode, never in a completed step.
 *
 * Never crash, never lie: the FMI state machine is enforced (wrong calls return
 * fmi2Error with a logged message), non-finite inputs are rejected with the state
 * untouched, deserialised states are validated field by field before use, one doStep
 * does bounded work (fmi2Discard with fmi2LastSuccessfulTime), all error state lives
 * in the instance.
 */
#include "fmi2Functions.h"

#define HM_API_FIELDS fmi2CallbackFunctions cb;
#include "hm_fmu.h"

static void hm_emit(struct hm_inst_ *c, int st, const char *cat, const char *msg)
{
    if (c->cb.logger)
        c->cb.logger(c->cb.componentEnvironment, c->name, (fmi2Status)st, cat, "%s", msg);
}

#define INST ((hm_inst *)c)
#define ST(x) ((fmi2Status)(x))
/* the state machine and the interface type, checked first by every call */
#define GUARD(modes, fn) if (hm_refuse(INST, (modes), fn)) return fmi2Error
#define GUARD_ME(modes, fn) GUARD(modes, fn); if (hm_need_type(INST, 0, fn)) return fmi2Error
#define GUARD_CS(modes, fn) GUARD(modes, fn); if (hm_need_type(INST, 1, fn)) return fmi2Error

/* ---------------------------------------------------------------- common ------ */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cats[])
{
    if (!c) return fmi2Error;
    return ST(hm_debug_logging(INST, on, n, cats, "fmi2SetDebugLogging"));
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                              fmi2String location, const fmi2CallbackFunctions *cb,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    hm_inst *c;
    (void)location; (void)visible;
    if (!cb || !cb->allocateMemory || !cb->freeMemory) return NULL;
    if (!guid || strcmp(guid, HM_GUID) != 0) {
        if (cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError",
                       "GUID %s does not match %s", guid ? guid : "(null)", HM_GUID);
        return NULL;
    }
    if (type != fmi2CoSimulation && type != fmi2ModelExchange) {
        if (cb->logger)
            cb->logger(cb->componentEnvironment, name, fmi2Error, "logStatusError",
                       "unknown fmuType %d", (int)type);
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
    c->log_mask = loggingOn ? (1u << HM_N_LOGCAT) - 1u : 0u;
    hm_defaults(c);
    if (hm_setup(c, 1) != HM_OK) {
        cb->freeMemory(c->name);
        cb->freeMemory(c);
        return NULL;
    }
    return c;
}

void fmi2FreeInstance(fmi2Component c)
{
    if (!c) return;
    INST->cb.freeMemory(INST->name);
    INST->cb.freeMemory(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDefined, fmi2Real tol,
                               fmi2Real t0, fmi2Boolean stopDefined, fmi2Real tstop)
{
    (void)stopDefined; (void)tstop;
    GUARD(B(M_INST), "fmi2SetupExperiment");
    return ST(hm_start(INST, tolDefined, tol, t0));
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    GUARD(B(M_INST), "fmi2EnterInitializationMode");
    INST->s.mode = M_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    GUARD(B(M_INIT), "fmi2ExitInitializationMode");
    return ST(hm_exit_init(INST));
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    GUARD(M_RUN, "fmi2Terminate");
    INST->s.mode = M_TERM;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    if (!c) return fmi2Error;
    return ST(hm_reset(INST));
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    if (!c) return fmi2Error;
    return ST(hm_get_real(INST, vr, nvr, value, "fmi2GetReal"));
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    if (!c) return fmi2Error;
    return ST(hm_set_real(INST, vr, nvr, value, "fmi2SetReal"));
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

/* ------------------------------------------------------------- FMU state ------ */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *st)
{
    GUARD(M_ANY & ~B(M_ERROR), "fmi2GetFMUstate");
    if (!st) return ST(hm_error(INST, "fmi2GetFMUstate: NULL pointer"));
    if (*st && ((hm_state *)*st)->magic != HM_MAGIC)
        return ST(hm_error(INST, "fmi2GetFMUstate: *FMUstate is not a state of this FMU"));
    if (!*st) *st = INST->cb.allocateMemory(1, sizeof(hm_state));
    if (!*st) return ST(hm_error(INST, "fmi2GetFMUstate: out of memory"));
    return ST(hm_state_get(INST, (hm_state *)*st));
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate st)
{
    if (!c) return fmi2Error;
    return ST(hm_state_set(INST, (const hm_state *)st, "fmi2SetFMUstate"));
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *st)
{
    if (!c || !st) return fmi2Error;
    if (*st) INST->cb.freeMemory(*st);
    *st = NULL;
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate st, size_t *size)
{
    (void)st;
    if (!c || !size) return fmi2Error;
    *size = sizeof(hm_state);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate st, fmi2Byte buf[], size_t size)
{
    if (!c) return fmi2Error;
    if (!st || !buf || size < sizeof(hm_state) || ((hm_state *)st)->magic != HM_MAGIC) {
        hm_log(INST, HM_ERROR, "logStatusError", "fmi2SerializeFMUstate: bad state or buffer");
        return fmi2Error;
    }
    memcpy(buf, st, sizeof(hm_state));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte buf[], size_t size, fmi2FMUstate *st)
{
    hm_state *tmp;
    if (!c || !st) return fmi2Error;
    tmp = (hm_state *)malloc(sizeof(hm_state));
    if (!tmp) return fmi2Error;
    if (hm_state_read(INST, buf, size, tmp, "fmi2DeSerializeFMUstate") != HM_OK) {
        free(tmp);
        return fmi2Error;
    }
    if (!*st) *st = INST->cb.allocateMemory(1, sizeof(hm_state));
    if (*st) memcpy(*st, tmp, sizeof(hm_state));
    free(tmp);
    return *st ? fmi2OK : fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vu[], size_t nu,
                                        const fmi2ValueReference vk[], size_t nk,
                                        const fmi2Real dvk[], fmi2Real dvu[])
{
    if (!c) return fmi2Error;
    return ST(hm_directional(INST, vu, nu, vk, nk, dvk, dvu, 0, "fmi2GetDirectionalDerivative"));
}

/* -------------------------------------------------------- model exchange ------ */
fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    GUARD_ME(B(M_EVENT) | B(M_CONT), "fmi2EnterEventMode");
    INST->s.mode = M_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *ev)
{
    GUARD_ME(B(M_EVENT), "fmi2NewDiscreteStates");
    if (!ev) return ST(hm_error(INST, "fmi2NewDiscreteStates: NULL eventInfo"));
    if (hm_new_discrete(INST) != HM_OK) return fmi2Error;
    ev->newDiscreteStatesNeeded = fmi2False;
    ev->terminateSimulation = fmi2False;
    ev->nominalsOfContinuousStatesChanged = fmi2False;
    ev->valuesOfContinuousStatesChanged = fmi2False;
    ev->nextEventTimeDefined = fmi2False;
    ev->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    GUARD_ME(B(M_EVENT), "fmi2EnterContinuousTimeMode");
    INST->s.mode = M_CONT;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetPrior,
                                       fmi2Boolean *enterEvent, fmi2Boolean *terminate)
{
    int enter;
    (void)noSetPrior;
    GUARD_ME(B(M_CONT), "fmi2CompletedIntegratorStep");
    if (!enterEvent || !terminate)
        return ST(hm_error(INST, "fmi2CompletedIntegratorStep: NULL pointer"));
    if (hm_completed_step(INST, &enter) != HM_OK) return fmi2Error;
    *enterEvent = enter ? fmi2True : fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t)
{
    GUARD_ME(B(M_EVENT) | B(M_CONT), "fmi2SetTime");
    return ST(hm_set_time(INST, t, "fmi2SetTime"));
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    GUARD_ME(B(M_CONT), "fmi2SetContinuousStates");
    return ST(hm_set_x(INST, x, nx, "fmi2SetContinuousStates"));
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t nx)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi2GetDerivatives");
    return ST(hm_get_dx(INST, dx, nx, "fmi2GetDerivatives"));
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t nz)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi2GetEventIndicators");
    return ST(hm_get_z(INST, z, nz, "fmi2GetEventIndicators"));
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    GUARD_ME(B(M_INIT) | M_RUN | B(M_TERM), "fmi2GetContinuousStates");
    return ST(hm_get_x(INST, x, nx, "fmi2GetContinuousStates"));
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real xn[], size_t nx)
{
    size_t i;
    GUARD(M_ANY & ~B(M_ERROR), "fmi2GetNominalsOfContinuousStates");
    if (nx != HM_NCS || (nx && !xn))
        return ST(hm_error(INST, "fmi2GetNominalsOfContinuousStates: nx = %lu, expected %d",
                           (unsigned long)nx, HM_NCS));
#if HM_NCS > 0
    for (i = 0; i < nx; i++) xn[i] = HM_X_NOMINAL[HM_CS(i)];
#endif
    return fmi2OK;
}

/* ---------------------------------------------------------- co-simulation ------ */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    GUARD_CS(B(M_INIT) | B(M_STEP), "fmi2SetRealInputDerivatives");
    return ST(hm_input_derivatives(INST, vr, nvr, order, value, "fmi2SetRealInputDerivatives"));
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    GUARD_CS(B(M_STEP), "fmi2GetRealOutputDerivatives");
    return ST(hm_output_derivatives(INST, vr, nvr, order, value, "fmi2GetRealOutputDerivatives"));
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior)
{
    (void)noSetPrior;
    GUARD_CS(B(M_STEP), "fmi2DoStep");
    return ST(hm_do_step(INST, t, h, "fmi2DoStep"));
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    if (!c) return fmi2Error;
    hm_log(INST, HM_ERROR, "logStatusError", "fmi2CancelStep: doStep never runs asynchronously");
    return fmi2Error;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{
    (void)s;
    if (!c || !v) return fmi2Error;
    return fmi2Discard;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    if (!c || !v) return fmi2Error;
    if (s == fmi2LastSuccessfulTime) { *v = INST->s.time; return fmi2OK; }
    return fmi2Discard;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v)
{
    if (!c || !v) return fmi2Error;
    if (s == fmi2Terminated) { *v = fmi2False; return fmi2OK; }  /* never asks to stop */
    return fmi2Discard;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v)
{ (void)c; (void)s; (void)v; return fmi2Discard; }
