/* The FMI core shared by fmi2_model.c and fmi3_model.c (one implementation of the
 * state machine, the second-order co-simulation step, model exchange of inclusions
 * and operators, the checks; see fmi2_model.c for what they guarantee). The template
 * defines HM_API_FIELDS (its callback fields of the instance) and hm_emit (its
 * logger) before including this file; status codes are FMI's common numbering. */
#ifndef HM_FMU_H
#define HM_FMU_H
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>

#include "hm_config.h"

enum { HM_OK = 0, HM_WARNING = 1, HM_DISCARD = 2, HM_ERROR = 3 };

struct hm_inst_;
static void hm_emit(struct hm_inst_ *c, int status, const char *category, const char *msg);

#ifndef HM_NZ_LAW
#define HM_NZ_LAW 0
#endif
#if HM_KIND == 0
#define HM_NCS HM_NX
#define HM_NZ HM_NZ_LAW
#define HM_RATE_ME HM_RATE
#define HM_CS(i) (i)
#else
#define HM_NZ 2
#ifdef HM_NCS_MIXED  /* a sum of inclusions/operators and smooth laws (fmu/export.py) */
#define HM_NCS HM_NCS_MIXED
#define HM_RATE_ME HM_RATE_SMOOTH
#define HM_CS(i) HM_CS_IDX[i]
#else
#define HM_NCS 0
#endif
#endif
#ifndef HM_MAX_INTERNAL_STEPS
/* about 0.05 s of the costliest kernel (the power-law Taylor steps); a call that needs
 * more returns fmi2Discard and the master retries with a smaller step */
#define HM_MAX_INTERNAL_STEPS 20000L
#endif
#define HM_MAGIC 0x484d5332u  /* "HMS2" */

/* M_CONF: FMI 3.0 Configuration Mode (structural parameters, fmi3_model.c) */
enum { M_INST, M_INIT, M_STEP, M_EVENT, M_CONT, M_TERM, M_ERROR, M_CONF, M_COUNT };
#define B(m) (1u << (m))
#define M_ANY (B(M_INST) | B(M_INIT) | B(M_STEP) | B(M_EVENT) | B(M_CONT) | B(M_TERM) | B(M_ERROR))
#define M_RUN (B(M_STEP) | B(M_EVENT) | B(M_CONT))
static const char *const HM_MODE_NAME[M_COUNT] = {
    "instantiated", "initialization mode", "step complete", "event mode",
    "continuous-time mode", "terminated", "error", "configuration mode"};

/* the whole simulation state: Get/SetFMUstate copy it, serialisation writes it */
typedef struct {
    unsigned magic, size;
    unsigned long long guid_hash;
    int mode, initialized, dir, has_du, has_d2u, has_dv, pred_ok, pad;
    double time;
    double u, v;           /* inputs as set */
    double du, d2u, dv;    /* CS: input derivatives for the next step */
    double rtol, tol;      /* rtol parameter; master tolerance (0: none given) */
    double t_c, u_c, v_c;  /* CS: committed point; ME operators: the anchor */
    double u_end, v_end;   /* CS: inputs at the end of the last step (output point) */
    double u_a;            /* ME operators: input at the last completed step (no crossing) */
    double ud_end, vd_end; /* CS: du/dt and dv/dt of the predicted input path at its end */
    double q[HM_NQ + 1], p[HM_NP + 1];
    double x[HM_NX + 1];   /* CS: predicted state at time; ME smooth: states; else x0 copy */
    double xc[HM_NX + 1];  /* CS: committed state at t_c; ME operators: anchored state */
    double x0[HM_NX + 1];
#ifdef HM_STRUCT
    double n_struct;       /* FMI 3.0 structural parameter: the length of the sized arrays */
#endif
} hm_state;

typedef struct hm_inst_ {
    hm_state s;
    HM_API_FIELDS
    char *name;
    int cosim, loggingOn, inputs_set;
    unsigned log_mask;      /* bit i: category HM_LOG_CAT[i] is on (fmi2SetDebugLogging) */
    int mode_before_error;  /* where fmi2SetFMUstate returns to after an error */
    /* cache of the state at the current inputs (CS after new inputs, ME operators) */
    int w_ok;
    double w_u, w_t, xw[HM_NX + 1];
    char err[320];
} hm_inst;

static unsigned long long hm_guid_hash(void)
{
    const char *s = HM_GUID;
    unsigned long long h = 1469598103934665603ULL;
    while (*s) { h ^= (unsigned char)*s++; h *= 1099511628211ULL; }
    return h;
}

/* the one formatter of every message (hm_log, hm_error) */
static void hm_vlog(hm_inst *c, int st, const char *cat, const char *fmt, va_list ap)
{
    char buf[512];
    if (!c) return;
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (st >= HM_ERROR) snprintf(c->err, sizeof c->err, "%s", buf);
    if (st == HM_OK) {  /* information: only when logging and its category are on */
        int i;
        if (!c->loggingOn) return;
        for (i = 0; i < HM_N_LOGCAT && strcmp(cat, HM_LOG_CAT[i]) != 0; i++) {}
        if (i == HM_N_LOGCAT || !(c->log_mask >> i & 1u)) return;
    }
    hm_emit(c, st, cat, buf);
}

static void hm_log(hm_inst *c, int st, const char *cat, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hm_vlog(c, st, cat, fmt, ap);
    va_end(ap);
}

/* fmi2SetDebugLogging/fmi3SetDebugLogging: no categories switches every category with
 * logging; named ones (from <LogCategories>) are switched one by one. Messages of
 * status warning, discard and error reach the logger whatever is switched on, so that
 * a host always learns why a call failed. An unknown name: refused, nothing changed. */
static int hm_debug_logging(hm_inst *c, int on, size_t n, const char *const cats[], const char *fn)
{
    size_t k;
    unsigned mask = c->log_mask;
    if (n && !cats) { hm_log(c, HM_ERROR, "logStatusError", "%s: NULL array", fn); return HM_ERROR; }
    for (k = 0; k < n; k++) {
        int i;
        for (i = 0; i < HM_N_LOGCAT && cats[k] && strcmp(cats[k], HM_LOG_CAT[i]) != 0; i++) {}
        if (!cats[k] || i == HM_N_LOGCAT) {
            hm_log(c, HM_ERROR, "logStatusError", "%s: unknown log category %s (allowed: %s)",
                   fn, cats[k] ? cats[k] : "(null)", HM_LOG_CAT_LIST);
            return HM_ERROR;
        }
        mask = on ? (mask | 1u << i) : (mask & ~(1u << i));
    }
    if (n == 0) mask = on ? (1u << HM_N_LOGCAT) - 1u : 0u;
    c->log_mask = mask;
    c->loggingOn = n == 0 ? on : mask != 0;
    return HM_OK;
}

static void hm_enter_error(hm_inst *c)
{
    if (c->s.mode != M_ERROR) c->mode_before_error = c->s.mode;
    c->s.mode = M_ERROR;
}

/* an error: logged, and the instance enters the error state (FMI 2.0 §2.1.3, FMI 3.0 §2.2.3) */
static int hm_error(hm_inst *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hm_vlog(c, HM_ERROR, "logStatusError", fmt, ap);
    va_end(ap);
    hm_enter_error(c);
    return HM_ERROR;
}

/* a call the state machine does not allow now: HM_ERROR, the instance unchanged */
static int hm_refuse(hm_inst *c, unsigned allowed, const char *fn)
{
    if (!c) return 1;
    if (B(c->s.mode) & allowed) return 0;
    hm_log(c, HM_ERROR, "logStatusError", "%s is not allowed in %s%s", fn,
           HM_MODE_NAME[c->s.mode],
           c->s.mode == M_ERROR ? " (after an error: set an FMU state or reset first)" : "");
    return 1;
}

static int hm_need_type(hm_inst *c, int cosim, const char *fn)
{
    if (c->cosim == cosim) return 0;
    hm_log(c, HM_ERROR, "logStatusError", "%s: this instance is %s", fn,
           c->cosim ? "co-simulation" : "model exchange");
    return 1;
}

static double hm_rtol(hm_inst *c)
{
    return (c->s.tol > 0.0 && c->s.tol < c->s.rtol) ? c->s.tol : c->s.rtol;
}

/* The work budget of one FMI call (a doStep, an output evaluation): every kernel
 * segment of the call draws on the same HM_MAX_INTERNAL_STEPS, so that no input path,
 * however long or contorted (a restored state is checked for validity, not for
 * plausibility), makes one call run for long. */
static void hm_budget_begin(void) { hm_budget = HM_MAX_INTERNAL_STEPS; }
static void hm_budget_end(void) { hm_budget = -1; }

/* one kernel segment; returns NULL or the kernel's message (HM_BUDGET_MSG when the
 * call's budget ran out) */
static const char *hm_advance(hm_inst *c, double *x, double u0, double u1, double dt, double v)
{
    int own = hm_budget < 0;
    hm_fail = NULL;
    if (own) hm_budget_begin();
    HM_ADVANCE(x, u0, u1, dt, v, c->s.p, hm_rtol(c));
    if (own) hm_budget_end();
    return hm_fail;
}

/* the anchor's segment update in model exchange: in a mixed sum only the inclusions/
 * operators move with the anchor, the host integrates the smooth parts */
static const char *hm_advance_anchor(hm_inst *c, double *x, double u0, double u1, double dt,
                                     double v)
{
#ifdef HM_ADVANCE_OPS
    int own = hm_budget < 0;
    hm_fail = NULL;
    if (own) hm_budget_begin();
    HM_ADVANCE_OPS(x, u0, u1, dt, v, c->s.p, hm_rtol(c));
    if (own) hm_budget_end();
    return hm_fail;
#else
    return hm_advance(c, x, u0, u1, dt, v);
#endif
}

/* The law's setup on the constructor parameters of s. With a structural parameter
 * (HM_STRUCT, fmu/fmi3_structural.py) q holds HM_N_MAX slots per sized array: the
 * kernel gets the first n of each (HM_Q_SLOT), with its sizes for that n. */
static const char *hm_law_setup(hm_state *s)
{
#ifdef HM_STRUCT
    const char *e;
    int j, m = 0, n = (int)s->n_struct, np = HM_NP_OF(n);
    double *qp = (double *)malloc(sizeof(double) * (HM_NQ + 1));
    if (!qp) return "out of memory";
    /* the room p has (a law's kernel vector may be built smaller than its bound for n,
     * e.g. the Preisach table for the exported distinct thresholds): setup refuses more */
    if (np > HM_NP) np = HM_NP;
    for (j = 0; j < HM_NQ; j++) if (HM_Q_SLOT[j] < n) qp[m++] = s->q[j];
    e = HM_SETUP(qp, m, s->p, np, s->x0, HM_NX_OF(n));
    free(qp);
    return e;
#else
    return HM_SETUP(s->q, HM_NQ, s->p, HM_NP, s->x0, HM_NX);
#endif
}

/* constructor parameters -> kernel parameters and initial state (the law's checks) */
static int hm_setup(hm_inst *c, int reset_state)
{
    const char *err;
    int i;
    for (i = 0; i < HM_NQ; i++)
        if (!isfinite(c->s.q[i])) {
            hm_log(c, HM_ERROR, "logStatusError", "parameter (value reference %d) must be "
                   "finite (got %g)", HM_VR_Q + i, c->s.q[i]);
            return HM_ERROR;
        }
    err = hm_law_setup(&c->s);
    if (err) {
        hm_log(c, HM_ERROR, "logStatusError", "%s", err);
        return HM_ERROR;
    }
    if (!(c->s.rtol > 0.0 && c->s.rtol < 1.0)) {
        hm_log(c, HM_ERROR, "logStatusError", "rtol must be in (0, 1) (got %g)", c->s.rtol);
        return HM_ERROR;
    }
    if (reset_state) {
        memcpy(c->s.x, c->s.x0, sizeof(double) * (HM_NX + 1));
        memcpy(c->s.xc, c->s.x0, sizeof(double) * (HM_NX + 1));
    }
    c->s.initialized = 1;
    c->w_ok = 0;
    return HM_OK;
}

static void hm_defaults(hm_inst *c)
{
    int i;
    memset(&c->s, 0, sizeof c->s);
    c->s.magic = HM_MAGIC;
    c->s.size = (unsigned)sizeof(hm_state);
    c->s.guid_hash = hm_guid_hash();
    c->s.dir = 1;
    for (i = 0; i < HM_NQ; i++) c->s.q[i] = HM_Q_START[i];
#ifdef HM_STRUCT
    c->s.n_struct = HM_N_START;
#endif
    c->s.rtol = HM_RTOL_START;
    c->w_ok = 0;
    c->inputs_set = 0;
}

/* Co-simulation input paths. A master whose v_k is the chord slope of the step
 * (v_k h = u_{k+1} - u_k: a piecewise-linear input, as drive() takes it) gets chords;
 * otherwise v is the derivative of a smooth input: the committed path is the cubic
 * Hermite interpolant of (u_k, v_k), (u_{k+1}, v_{k+1}) and the prediction the parabola
 * with the acceleration (v_{k+1} - v_k)/h (or the master's input derivatives). */
static int hm_secant(const hm_inst *c, double t, double u)
{
    double dt = t - c->s.t_c, du = u - c->s.u_c;
    if (!(dt > 0.0)) return 1;
    return fabs(c->s.v_c * dt - du) <= 1e-9 * (fabs(du) + fabs(c->s.v_c * dt));
}

/* x along u(s) = u0 + a1 s + a2 s^2 + a3 s^3 on [0, H] ending exactly at u1: one chord
 * per monotone piece (exact for the rate-independent laws, whose state depends on the
 * path's extrema and length only) */
static const char *hm_advance_poly(hm_inst *c, double *x, double u0, double u1, double a1,
                                   double a2, double a3, double H)
{
    double cut[4], r[2];
    int n = 0, m = 0, i;
    if (a3 != 0.0) {
        double d = 4.0 * a2 * a2 - 12.0 * a3 * a1;
        if (d > 0.0) {
            double q = -0.5 * (2.0 * a2 + copysign(sqrt(d), a2));  /* stable roots */
            r[n++] = q / (3.0 * a3);
            if (q != 0.0) r[n++] = a1 / q;
        }
    } else if (a2 != 0.0) {
        r[n++] = -a1 / (2.0 * a2);
    }
    cut[m++] = 0.0;
    if (n == 2 && r[1] < r[0]) { double t = r[0]; r[0] = r[1]; r[1] = t; }
    for (i = 0; i < n; i++)
        if (r[i] > 1e-12 * H && r[i] < H * (1.0 - 1e-12) && r[i] > cut[m - 1]) cut[m++] = r[i];
    cut[m++] = H;
    for (i = 0; i + 1 < m; i++) {
        double s0 = cut[i], s1 = cut[i + 1], p0, p1;
        const char *e;
        p0 = i == 0 ? u0 : u0 + s0 * (a1 + s0 * (a2 + s0 * a3));
        p1 = i + 2 == m ? u1 : u0 + s1 * (a1 + s1 * (a2 + s1 * a3));
        e = hm_advance(c, x, p0, p1, s1 - s0, (p1 - p0) / (s1 - s0));
        if (e) return e;
    }
    return NULL;
}

/* the committed state carried from (t_c, u_c, v_c) to (t, u, v) */
static const char *hm_commit_path(hm_inst *c, double *x, double t, double u, double v)
{
    double H = t - c->s.t_c, D = u - c->s.u_c, v0 = c->s.v_c;
    if (!(H > 0.0)) return NULL;
    if (hm_secant(c, t, u)) return hm_advance(c, x, c->s.u_c, u, H, D / H);
    return hm_advance_poly(c, x, c->s.u_c, u, v0, 3.0 * D / (H * H) - (2.0 * v0 + v) / H,
                           (v0 + v) / (H * H) - 2.0 * D / (H * H * H), H);
}

/* The state the outputs are evaluated with, and the inputs it belongs to:
 *   CS after a step, inputs unchanged: the predicted state at (u_end, v_end);
 *   CS with new inputs: the committed state carried along the chord to the new u;
 *   ME inclusions/operators: the anchored state carried to u;
 *   otherwise: x. NULL (error logged) if a kernel failed. */
static const double *hm_now(hm_inst *c, double *u, double *v)
{
    int run = (B(c->s.mode) & (M_RUN | B(M_TERM) | B(M_ERROR))) != 0;
    *u = c->s.u;
    *v = c->s.v;
    if (run && c->cosim) {
        if (!c->inputs_set) { *u = c->s.u_end; *v = c->s.v_end; return c->s.x; }
        /* new inputs at the end point of the prediction: the predicted state */
        if (c->s.pred_ok && fabs(c->s.u - c->s.u_end)
                <= 8.0 * 2.22e-16 * fmax(fabs(c->s.u), fabs(c->s.u_end)))
            return c->s.x;
        if (!(c->s.time > c->s.t_c)) return c->s.xc;  /* before the first step */
    } else if (!(run && HM_KIND != 0)) {
        return c->s.x;
    }
    if (!(c->w_ok && c->w_u == c->s.u && c->w_t == c->s.time)) {
        double dt = c->s.time - c->s.t_c, vs;
        const char *e;
        vs = dt > 0.0 ? (c->s.u - c->s.u_c) / dt : c->s.v;
        memcpy(c->xw, c->s.xc, sizeof(double) * (HM_NX + 1));
        if (dt > 0.0 || c->s.u != c->s.u_c) {
            hm_budget_begin();
            e = c->cosim ? hm_commit_path(c, c->xw, c->s.time, c->s.u, c->s.v)
                         : hm_advance_anchor(c, c->xw, c->s.u_c, c->s.u, dt > 0.0 ? dt : 0.0, vs);
            hm_budget_end();
            if (e) { hm_error(c, "%s (t = %g)", e, c->s.time); return NULL; }
        }
#if HM_KIND != 0 && HM_NCS > 0
        if (!c->cosim) {  /* the host's continuous states */
            int i;
            for (i = 0; i < HM_NCS; i++) c->xw[HM_CS(i)] = c->s.x[HM_CS(i)];
        }
#endif
        c->w_ok = 1;
        c->w_u = c->s.u;
        c->w_t = c->s.time;
    }
    return c->xw;
}

static int hm_output(hm_inst *c, double *F)
{
    double u, v;
    const double *x = hm_now(c, &u, &v);
    if (!x) return HM_ERROR;
    *F = HM_FORCE(x, u, v, c->s.p);
    if (!isfinite(*F)) return hm_error(c, "non-finite force at t = %g", c->s.time);
    return HM_OK;
}

#if HM_KIND != 0
/* event indicators of inclusions and operators (see the header comment) */
static void hm_op_indicators(hm_inst *c, double *z)
{
    double dir = c->s.dir >= 0 ? 1.0 : -1.0;
    z[0] = dir * c->s.v;
#ifdef HM_SWITCH
    {
        double sw = HM_SWITCH(c->s.xc, c->s.u_c, dir, c->s.p);
        z[1] = isfinite(sw) ? dir * (sw - c->s.u) : 1.0;
    }
#else
    z[1] = 1.0;
#endif
}

/* move the anchor to the current input (event mode only); the direction follows v.
 * The path from the anchor goes through the input of the last completed step first:
 * the host accepted the monotone stretch up to it, so an extremum of u that a host
 * stepped over without locating (a reversal between two completed steps, e.g. a
 * piecewise-linear input whose v jumps) is at least kept at that input. */
static int hm_reanchor(hm_inst *c)
{
    double u, v, dir = c->s.dir >= 0 ? 1.0 : -1.0;
    const double *x;
    if ((c->s.u_a - c->s.u_c) * dir > 0.0 && (c->s.u - c->s.u_a) * dir < 0.0) {
        const char *e = hm_advance_anchor(c, c->s.xc, c->s.u_c, c->s.u_a, 0.0, dir);
        if (e) return hm_error(c, "%s (t = %g)", e, c->s.time);
        c->s.u_c = c->s.u_a;
        c->w_ok = 0;
    }
    x = hm_now(c, &u, &v);
    if (!x) return HM_ERROR;
    if (x != c->s.xc) memcpy(c->s.xc, x, sizeof(double) * (HM_NX + 1));
    c->s.u_c = c->s.u_a = c->s.u;
    if (c->s.time > c->s.t_c) c->s.t_c = c->s.time;
    if (c->s.v != 0.0) c->s.dir = c->s.v > 0.0 ? 1 : -1;
    c->w_ok = 0;
    return HM_OK;
}
#endif

/* every field of a state from outside checked before any kernel sees it: sizes,
 * identity, mode and flags, finiteness, the kernel parameters (recomputed from the
 * constructor parameters: must match, and replace the stored ones of a state taken
 * before initialisation) and the law's own state check. The one check of both ways in:
 * fmi2SetFMUstate/fmi3SetFMUState (a state pointer from the host) and deserialisation
 * (bytes from the host); s is the caller's copy, which it may complete. */
static const char *hm_validate(hm_state *s)
{
    static const char *const bad_p = "kernel parameters do not match the constructor parameters";
    hm_state *t;
    const char *e;
    int i;
    if (s->magic != HM_MAGIC || s->size != sizeof(hm_state)) return "not a state of this FMU";
    if (s->guid_hash != hm_guid_hash()) return "state of another FMU (GUID differs)";
    if (s->mode < 0 || s->mode >= M_COUNT) return "mode out of range";
    if ((unsigned)s->initialized > 1u || (s->dir != 1 && s->dir != -1) || (unsigned)s->has_du > 1u
        || (unsigned)s->has_d2u > 1u || (unsigned)s->has_dv > 1u || (unsigned)s->pred_ok > 1u
        || (unsigned)s->pad > 1u)
        return "flag out of range";
    if (!(isfinite(s->time) && isfinite(s->u) && isfinite(s->v) && isfinite(s->du)
          && isfinite(s->d2u) && isfinite(s->dv) && isfinite(s->t_c) && isfinite(s->u_c)
          && isfinite(s->v_c)
          && isfinite(s->u_end) && isfinite(s->v_end) && isfinite(s->u_a)
          && isfinite(s->ud_end) && isfinite(s->vd_end)))
        return "non-finite time or input";
    if (!(s->rtol > 0.0 && s->rtol < 1.0) || !(s->tol >= 0.0 && s->tol < 1.0))
        return "tolerance out of range";
    for (i = 0; i < HM_NX; i++)
        if (!isfinite(s->x[i]) || !isfinite(s->xc[i]) || !isfinite(s->x0[i]))
            return "non-finite state";
    for (i = 0; i < HM_NQ; i++) if (!isfinite(s->q[i])) return "non-finite parameter";
#ifdef HM_STRUCT
    if (!(s->n_struct >= 1.0 && s->n_struct <= HM_N_MAX && s->n_struct == floor(s->n_struct)))
        return "structural parameter out of range";
#endif
    for (i = 0; i < HM_NP; i++) if (!isfinite(s->p[i]) && s->initialized) return "non-finite parameter";
    t = (hm_state *)malloc(sizeof *t);  /* large laws: not on a host thread's stack */
    if (!t) return "out of memory";
    memcpy(t, s, sizeof *t);
    e = hm_law_setup(t);
    if (!e && s->initialized && memcmp(t->p, s->p, sizeof(double) * HM_NP) != 0) e = bad_p;
    if (!e) memcpy(s->p, t->p, sizeof(double) * (HM_NP + 1));
#ifdef HM_CHECK_STATE
    if (!e) e = HM_CHECK_STATE(s->x, t->p);
    if (!e) e = HM_CHECK_STATE(s->xc, t->p);
    if (!e) e = HM_CHECK_STATE(s->x0, t->p);
#endif
    free(t);
    return e;
}


/* ------------------------------------------------ the FMI calls, API-neutral ---- */
static int hm_start(hm_inst *c, int tolDefined, double tol, double t0)
{
    if (!isfinite(t0)) return hm_error(c, "start time must be finite (got %g)", t0);
    if (tolDefined && !(tol > 0.0 && tol < 1.0))
        return hm_error(c, "tolerance must be in (0, 1) (got %g)", tol);
    c->s.tol = tolDefined ? tol : 0.0;
    c->s.time = c->s.t_c = t0;
    return HM_OK;
}

static int hm_exit_init(hm_inst *c)
{
    if (!c->s.initialized && hm_setup(c, 1) != HM_OK) { hm_enter_error(c); return HM_ERROR; }
    memcpy(c->s.xc, c->s.x, sizeof(double) * (HM_NX + 1));
    c->s.u_c = c->s.u_end = c->s.u_a = c->s.u;
    c->s.v_c = c->s.v_end = c->s.v;
    c->s.t_c = c->s.time;
    c->s.dir = c->s.v < 0.0 ? -1 : 1;
    c->s.pred_ok = 0;
    c->inputs_set = 0;
    c->w_ok = 0;
    c->s.mode = c->cosim ? M_STEP : M_EVENT;
    return HM_OK;
}

static int hm_reset(hm_inst *c)
{
    hm_defaults(c);
    c->err[0] = 0;
    if (hm_setup(c, 1) != HM_OK) { hm_enter_error(c); return HM_ERROR; }
    return HM_OK;
}

static int hm_get_z(hm_inst *c, double z[], size_t nz, const char *fn);

static int hm_get_real(hm_inst *c, const unsigned vr[], size_t nvr, double value[], const char *fn)
{
    size_t i;
    if (hm_refuse(c, M_ANY, fn)) return HM_ERROR;
    if (nvr > 0 && (!vr || !value)) return hm_error(c, "%s: NULL array", fn);
    if (nvr > 0 && !c->s.initialized && hm_setup(c, 1) != HM_OK) return HM_ERROR;
    for (i = 0; i < nvr; i++) {
        unsigned r = vr[i];
#ifdef HM_VR_TIME
        if (r == HM_VR_TIME) { value[i] = c->s.time; continue; }
#endif
#if defined(HM_VR_Z) && HM_NZ > 0
        if (r >= HM_VR_Z && r < HM_VR_Z + HM_NZ) {
            double z[HM_NZ + 1];
            if (c->cosim) { value[i] = 0.0; continue; }
            if (hm_get_z(c, z, HM_NZ, fn) != HM_OK) return HM_ERROR;
            value[i] = z[r - HM_VR_Z];
            continue;
        }
#endif
        if (r == HM_VR_U) value[i] = c->s.u;
        else if (r == HM_VR_V) value[i] = c->s.v;
        else if (r == HM_VR_F) { if (hm_output(c, &value[i]) != HM_OK) return HM_ERROR; }
        else if (r == HM_VR_RTOL) value[i] = c->s.rtol;
        else if (r >= HM_VR_Q && r < HM_VR_Q + HM_NQ) value[i] = c->s.q[r - HM_VR_Q];
        else if (r >= HM_VR_X && r < HM_VR_X + HM_NX) {
            double u, v;
            const double *x = hm_now(c, &u, &v);
            if (!x) return HM_ERROR;
            value[i] = x[r - HM_VR_X];
        }
#if HM_NCS > 0
        else if (r >= HM_VR_DX && r < HM_VR_DX + HM_NX) {
            double d[HM_NX + 1], u, v;
            const double *x = hm_now(c, &u, &v);
            if (!x) return HM_ERROR;
            memset(d, 0, sizeof d);
            HM_RATE_ME(x, u, v, c->s.p, d);
            value[i] = d[r - HM_VR_DX];
        }
#endif
        else {
            hm_log(c, HM_ERROR, "logStatusError", "%s: unknown value reference %u", fn, r);
            return HM_ERROR;
        }
    }
    return HM_OK;
}

/* Parameters are set before initialisation; the tunable ones (HM_Q_TUNABLE: those that
 * size nothing and bound no state, e.g. viscous coefficients, spring stiffnesses) also
 * at a communication point (co-simulation) or in event mode (model exchange), checked
 * by the law's setup on a copy: the state is kept, the new value acts from then on. */
static int hm_set_real(hm_inst *c, const unsigned vr[], size_t nvr, const double value[], const char *fn)
{
    size_t i;
    int tune = 0;
    hm_state *t = NULL;
    if (hm_refuse(c, B(M_INST) | B(M_INIT) | M_RUN, fn)) return HM_ERROR;
    if (nvr > 0 && (!vr || !value)) return hm_error(c, "%s: NULL array", fn);
    /* check everything first: a rejected call leaves the instance as it was */
    for (i = 0; i < nvr; i++) {
        unsigned r = vr[i];
        int is_in = (r == HM_VR_U || r == HM_VR_V);
        int is_par = (r >= HM_VR_Q && r < HM_VR_Q + HM_NQ) || r == HM_VR_RTOL;
        /* a wrong call, refused like one the state machine forbids (instance unchanged) */
        if (!is_in && !is_par) {
            hm_log(c, HM_ERROR, "logStatusError", "%s: value reference %u is not settable", fn, r);
            return HM_ERROR;
        }
        if (is_par && c->s.mode >= M_STEP) {
            int tunable = r != HM_VR_RTOL && HM_Q_TUNABLE[r - HM_VR_Q];
            if (!tunable || c->s.mode != (c->cosim ? M_STEP : M_EVENT)) {
                hm_log(c, HM_ERROR, "logStatusError", tunable
                       ? "parameter (value reference %u) is tunable at a communication point "
                         "(co-simulation) or in event mode (model exchange) only"
                       : "parameter (value reference %u) can only be set before initialization", r);
                return HM_ERROR;
            }
            tune = 1;
        }
        if (!isfinite(value[i]))
            return hm_error(c, "%s: %s (value reference %u) must be finite (got %g)", fn,
                            r == HM_VR_U ? "input u" : r == HM_VR_V ? "input v" : "parameter",
                            r, value[i]);
    }
    if (tune) {  /* the new parameters through the law's checks, on a copy */
        const char *e;
        t = (hm_state *)malloc(sizeof *t);
        if (!t) { hm_log(c, HM_ERROR, "logStatusError", "%s: out of memory", fn); return HM_ERROR; }
        memcpy(t, &c->s, sizeof *t);
        for (i = 0; i < nvr; i++)
            if (vr[i] >= HM_VR_Q && vr[i] < HM_VR_Q + HM_NQ) t->q[vr[i] - HM_VR_Q] = value[i];
        e = hm_law_setup(t);
        if (e) {
            free(t);
            hm_log(c, HM_ERROR, "logStatusError", "%s: %s", fn, e);
            return HM_ERROR;
        }
    }
    for (i = 0; i < nvr; i++) {
        unsigned r = vr[i];
        if (r == HM_VR_U) { if (c->s.u != value[i]) c->w_ok = 0; c->s.u = value[i]; c->inputs_set = 1; }
        else if (r == HM_VR_V) {
            /* co-simulation: v shapes the input path into the new point (hm_now) */
            if (c->s.v != value[i]) c->w_ok = 0;
            c->s.v = value[i];
            c->inputs_set = 1;
        }
        else if (!tune) {
            if (r == HM_VR_RTOL) c->s.rtol = value[i];
            else c->s.q[r - HM_VR_Q] = value[i];
            c->s.initialized = 0;
        }
    }
    if (tune) {  /* the state stays; x0 stays the initial state of the run */
        memcpy(c->s.q, t->q, sizeof(double) * (HM_NQ + 1));
        memcpy(c->s.p, t->p, sizeof(double) * (HM_NP + 1));
        c->w_ok = 0;
        free(t);
        return HM_OK;
    }
    if (c->s.mode < M_STEP && !c->s.initialized && hm_setup(c, 1) != HM_OK) {
        hm_enter_error(c);
        return HM_ERROR;
    }
    return HM_OK;
}

/* FMU states: in memory a copy of hm_state (pad keeps whether inputs were set). Setting
 * one restores every value, not the position in the state machine: the instance stays
 * in its mode, or after an error returns to the mode it had before the error. */
static int hm_state_get(hm_inst *c, hm_state *dst)
{
    memcpy(dst, &c->s, sizeof(hm_state));
    dst->pad = c->inputs_set;
    return HM_OK;
}

static int hm_state_set(hm_inst *c, const hm_state *s, const char *fn)
{
    hm_state *t;
    const char *e;
    if (!s) {
        hm_log(c, HM_ERROR, "logStatusError", "%s: NULL state", fn);
        return HM_ERROR;
    }
    /* a copy first: the checks read it field by field and never the host's memory twice */
    t = (hm_state *)malloc(sizeof *t);
    if (!t) { hm_log(c, HM_ERROR, "logStatusError", "%s: out of memory", fn); return HM_ERROR; }
    memcpy(t, s, sizeof *t);
    e = hm_validate(t);
    if (e) {
        free(t);
        hm_log(c, HM_ERROR, "logStatusError", "%s: corrupted state: %s", fn, e);
        return HM_ERROR;
    }
    {
        int mode = c->s.mode == M_ERROR ? c->mode_before_error : c->s.mode;
        memcpy(&c->s, t, sizeof(hm_state));
        c->s.mode = mode;
    }
    c->inputs_set = t->pad != 0;
    c->w_ok = 0;
    free(t);
    return HM_OK;
}

/* a serialised state, validated into dst (a plain copy: the buffer may be unaligned) */
static int hm_state_read(hm_inst *c, const char *buf, size_t size, hm_state *dst, const char *fn)
{
    const char *e;
    if (!buf || size != sizeof(hm_state)) {
        hm_log(c, HM_ERROR, "logStatusError", "%s: %lu bytes, expected %lu", fn,
               (unsigned long)size, (unsigned long)sizeof(hm_state));
        return HM_ERROR;
    }
    memcpy(dst, buf, sizeof(hm_state));
    e = hm_validate(dst);
    if (e) {
        hm_log(c, HM_ERROR, "logStatusError", "%s: corrupted state: %s", fn, e);
        return HM_ERROR;
    }
    return HM_OK;
}

static int hm_new_discrete(hm_inst *c)
{
#if HM_KIND != 0
    int st = hm_reanchor(c);
    if (st == HM_OK)
        hm_log(c, HM_OK, "logEvents", "event at t = %.17g: memory anchored at u = %.17g, "
               "direction %+d", c->s.time, c->s.u_c, c->s.dir);
    return st;
#else
    hm_log(c, HM_OK, "logEvents", "event at t = %.17g (u = %.17g, v = %.17g)", c->s.time,
           c->s.u, c->s.v);
    return HM_OK;
#endif
}

static int hm_completed_step(hm_inst *c, int *enter)
{
    *enter = 0;
#if HM_KIND != 0
    {
        double z[2];
        hm_op_indicators(c, z);
        /* a crossing the host missed: an event. Otherwise nothing moves: the memory
         * (the anchor) changes only in event mode, so that F at any point of the
         * completed step, and after it, stays the law's F along the monotone stretch
         * from the anchor (FMI 2.0 §3.1: discrete states change only at events) */
        if (z[0] < 0.0 || z[1] < 0.0) *enter = 1;
        else c->s.u_a = c->s.u;  /* recorded only: no output changes */
    }
#endif
    return HM_OK;
}

static int hm_set_time(hm_inst *c, double t, const char *fn)
{
    if (!isfinite(t)) return hm_error(c, "%s: time must be finite (got %g)", fn, t);
    if (t != c->s.time) c->w_ok = 0;
    c->s.time = t;
    return HM_OK;
}

static int hm_set_x(hm_inst *c, const double x[], size_t nx, const char *fn)
{
    size_t i;
    if (nx != HM_NCS) return hm_error(c, "%s: nx = %lu, expected %d", fn, (unsigned long)nx, HM_NCS);
    if (nx && !x) return hm_error(c, "%s: NULL array", fn);
    for (i = 0; i < nx; i++)
        if (!isfinite(x[i])) return hm_error(c, "%s: state %lu must be finite (got %g)", fn,
                                             (unsigned long)i, x[i]);
#if HM_NCS > 0
    for (i = 0; i < nx; i++) c->s.x[HM_CS(i)] = x[i];
#endif
    c->w_ok = 0;
    return HM_OK;
}

static int hm_get_x(hm_inst *c, double x[], size_t nx, const char *fn)
{
    if (nx != HM_NCS) return hm_error(c, "%s: nx = %lu, expected %d", fn, (unsigned long)nx, HM_NCS);
    if (nx && !x) return hm_error(c, "%s: NULL array", fn);
#if HM_NCS > 0
    {
        size_t i;
        for (i = 0; i < nx; i++) x[i] = c->s.x[HM_CS(i)];
    }
#endif
    return HM_OK;
}

static int hm_get_dx(hm_inst *c, double dx[], size_t nx, const char *fn)
{
    if (nx != HM_NCS) return hm_error(c, "%s: nx = %lu, expected %d", fn, (unsigned long)nx, HM_NCS);
#if HM_KIND == 0
    if (nx) {
        size_t i;
        if (!dx) return hm_error(c, "%s: NULL array", fn);
        HM_RATE(c->s.x, c->s.u, c->s.v, c->s.p, dx);
        for (i = 0; i < nx; i++)
            if (!isfinite(dx[i])) return hm_error(c, "non-finite derivative at t = %g", c->s.time);
    }
#elif HM_NCS > 0
    {   /* mixed sum: the smooth parts' rates at the current (anchored + host) state */
        double d[HM_NX + 1], u, v;
        size_t i;
        const double *x = hm_now(c, &u, &v);
        if (!x) return HM_ERROR;
        if (!dx) return hm_error(c, "%s: NULL array", fn);
        memset(d, 0, sizeof d);
        HM_RATE_SMOOTH(x, u, v, c->s.p, d);
        for (i = 0; i < nx; i++) {
            dx[i] = d[HM_CS(i)];
            if (!isfinite(dx[i])) return hm_error(c, "non-finite derivative at t = %g", c->s.time);
        }
    }
#else
    (void)dx;
#endif
    return HM_OK;
}

static int hm_get_z(hm_inst *c, double z[], size_t nz, const char *fn)
{
    if (nz != HM_NZ) return hm_error(c, "%s: nz = %lu, expected %d", fn, (unsigned long)nz, HM_NZ);
    if (nz && !z) return hm_error(c, "%s: NULL array", fn);
#if HM_KIND != 0
    hm_op_indicators(c, z);
#elif HM_NZ_LAW > 0
    HM_EVENTS(c->s.x, c->s.u, c->s.v, c->s.p, z);
#endif
    return HM_OK;
}

static int hm_input_derivatives(hm_inst *c, const unsigned vr[], size_t nvr, const int order[],
                                const double value[], const char *fn)
{
    size_t i;
    if (nvr && (!vr || !order || !value)) return hm_error(c, "%s: NULL array", fn);
    for (i = 0; i < nvr; i++) {
        int ok_u = vr[i] == HM_VR_U && (order[i] == 1 || order[i] == 2);
        int ok_v = vr[i] == HM_VR_V && order[i] == 1;
        if (!ok_u && !ok_v)
            return hm_error(c, "%s: derivative of order %d of value reference %u is not "
                            "supported (u: orders 1, 2; v: order 1)", fn, order[i], vr[i]);
        if (!isfinite(value[i])) return hm_error(c, "%s: value must be finite (got %g)", fn, value[i]);
    }
    for (i = 0; i < nvr; i++) {
        if (vr[i] == HM_VR_V) { c->s.dv = value[i]; c->s.has_dv = 1; }
        else if (order[i] == 1) { c->s.du = value[i]; c->s.has_du = 1; }
        else { c->s.d2u = value[i]; c->s.has_d2u = 1; }
    }
    return HM_OK;
}

/* Directional (adjoint = 0) or adjoint (adjoint = 1) derivatives in model exchange, at
 * the current continuous states and inputs. J is (n+1) x (n+2), row-major. Smooth laws:
 * from the law's C jac (LAW_jac, the twin of the Python jac kernel), unknowns F and
 * der(x_i), knowns x_j, u, v (value references). Inclusions and operators (no
 * continuous states): unknown F, knowns u, v, from LAW_dforce at the state carried from
 * the anchor to u: dF/du along the branch the input is on (the direction of its move
 * from the anchor; before any move, the last direction), ∂F/∂v. */
static int hm_jac_row(unsigned r)
{
    if (r == HM_VR_F) return HM_NX;
    if (HM_KIND == 0 && r >= HM_VR_DX && r < HM_VR_DX + HM_NX) return (int)(r - HM_VR_DX);
    return -1;
}

static int hm_jac_col(unsigned r)
{
    if (r == HM_VR_U) return HM_NX;
    if (r == HM_VR_V) return HM_NX + 1;
    if (HM_KIND == 0 && r >= HM_VR_X && r < HM_VR_X + HM_NX) return (int)(r - HM_VR_X);
    return -1;
}

static int hm_directional(hm_inst *c, const unsigned unk[], size_t nu, const unsigned kn[],
                          size_t nk, const double seed[], double out[], int adjoint,
                          const char *fn)
{
#if defined(HM_JAC) || defined(HM_DFORCE)
    double J[(HM_NX + 1) * (HM_NX + 2)];
    size_t a, b;
    if (hm_refuse(c, B(M_INIT) | M_RUN | B(M_TERM), fn)) return HM_ERROR;
    if (c->cosim)
        return hm_error(c, "%s: provided in model exchange only (in co-simulation F depends "
                        "on the input path of the step)", fn);
    if ((nu && (!unk || !out)) || (nk && (!kn || !seed))) return hm_error(c, "%s: NULL array", fn);
    for (a = 0; a < nu; a++)
        if (hm_jac_row(unk[a]) < 0)
            return hm_error(c, "%s: value reference %u is not an unknown (F, der(x))", fn, unk[a]);
    for (b = 0; b < nk; b++)
        if (hm_jac_col(kn[b]) < 0)
            return hm_error(c, "%s: value reference %u is not a known (x, u, v)", fn, kn[b]);
#ifdef HM_JAC
    HM_JAC(c->s.x, c->s.u, c->s.v, c->s.p, J);
#else
    {
        double u, v, d[2], dir;
        const double *x = hm_now(c, &u, &v);
        if (!x) return HM_ERROR;
        dir = u > c->s.u_c ? 1.0 : (u < c->s.u_c ? -1.0 : (c->s.dir >= 0 ? 1.0 : -1.0));
        HM_DFORCE(x, u, v, dir, c->s.p, d);
        memset(J, 0, sizeof J);
        J[HM_NX * (HM_NX + 2) + HM_NX] = d[0];
        J[HM_NX * (HM_NX + 2) + HM_NX + 1] = d[1];
    }
#endif
    if (!adjoint) {
        for (a = 0; a < nu; a++) {
            double acc = 0.0;
            for (b = 0; b < nk; b++)
                acc += J[hm_jac_row(unk[a]) * (HM_NX + 2) + hm_jac_col(kn[b])] * seed[b];
            out[a] = acc;
        }
    } else {  /* seed on the unknowns, result on the knowns */
        for (b = 0; b < nk; b++) {
            double acc = 0.0;
            for (a = 0; a < nu; a++)
                acc += J[hm_jac_row(unk[a]) * (HM_NX + 2) + hm_jac_col(kn[b])] * seed[a];
            out[b] = acc;
        }
    }
    for (a = 0; a < (adjoint ? nk : nu); a++)
        if (!isfinite(out[a])) return hm_error(c, "%s: non-finite derivative", fn);
    return HM_OK;
#else
    (void)unk; (void)nu; (void)kn; (void)nk; (void)seed; (void)out; (void)adjoint;
    hm_log(c, HM_ERROR, "logStatusError", "%s: this law provides no Jacobian", fn);
    return HM_ERROR;
#endif
}

/* Co-simulation output derivatives: dF/dt at the end of the last doStep along the
 * predicted input path u(t) (its slope ud_end, v's rate vd_end), at the predicted state:
 *   smooth laws  dF/dt = ∂F/∂x·ẋ + ∂F/∂u·u̇ + ∂F/∂v·v̇ (LAW_jac, ẋ = LAW_rate at v = u̇),
 *   inclusions/operators  dF/dt = dF/du·u̇ + ∂F/∂v·v̇ on the branch of u̇ (LAW_dforce).
 * Only F, order 1, and only until new inputs are set (they start a new path). */
static int hm_output_derivatives(hm_inst *c, const unsigned vr[], size_t nvr, const int order[],
                                 double value[], const char *fn)
{
#if defined(HM_JAC) || defined(HM_DFORCE)
    size_t i;
    double dF, ud = c->s.ud_end, vd = c->s.vd_end;
    const double *x = c->s.x;
    if (nvr && (!vr || !order || !value)) return hm_error(c, "%s: NULL array", fn);
    /* wrong calls that change nothing: refused, the instance stays in its mode */
    for (i = 0; i < nvr; i++)
        if (vr[i] != HM_VR_F || order[i] != 1) {
            hm_log(c, HM_ERROR, "logStatusError", "%s: only the first derivative (order 1) of F "
                   "(value reference %d) is provided (got order %d of %u)", fn, HM_VR_F,
                   order[i], vr[i]);
            return HM_ERROR;
        }
    if (!c->s.pred_ok || c->inputs_set) {
        hm_log(c, HM_ERROR, "logStatusError", "%s: output derivatives belong to the end of the "
               "last doStep: call them after a doStep and before setting new inputs", fn);
        return HM_ERROR;
    }
#ifdef HM_JAC
    {
        double J[(HM_NX + 1) * (HM_NX + 2)], xd[HM_NX + 1];
        int j;
        HM_JAC(x, c->s.u_end, c->s.v_end, c->s.p, J);
        memset(xd, 0, sizeof xd);
        HM_RATE(x, c->s.u_end, ud, c->s.p, xd);
        dF = J[HM_NX * (HM_NX + 2) + HM_NX] * ud + J[HM_NX * (HM_NX + 2) + HM_NX + 1] * vd;
        for (j = 0; j < HM_NX; j++) dF += J[HM_NX * (HM_NX + 2) + j] * xd[j];
    }
#else
    {
        double d[2], dir = ud > 0.0 ? 1.0 : (ud < 0.0 ? -1.0 : (c->s.dir >= 0 ? 1.0 : -1.0));
        HM_DFORCE(x, c->s.u_end, c->s.v_end, dir, c->s.p, d);
        dF = d[0] * ud + d[1] * vd;
    }
#endif
    if (!isfinite(dF)) return hm_error(c, "%s: non-finite output derivative", fn);
    for (i = 0; i < nvr; i++) value[i] = dF;
    return HM_OK;
#else
    (void)vr; (void)nvr; (void)order; (void)value;
    hm_log(c, HM_ERROR, "logStatusError", "%s: this law provides no output derivatives", fn);
    return HM_ERROR;
#endif
}

/* one communication step, second order (see fmi2_model.c); a kernel that runs out of
 * its work budget: HM_DISCARD with the state as it was at t */
static int hm_do_step(hm_inst *c, double t, double h, const char *fn)
{
    double xc[HM_NX + 1], xp[HM_NX + 1], slope, u1, acc, vend, F;
    const char *e;
    int warn = 0, secant;
    if (!isfinite(t) || !isfinite(h) || h < 0.0)
        return hm_error(c, "%s: communication point and step size must be finite, h >= 0 "
                        "(got t = %g, h = %g)", fn, t, h);
    if (t < c->s.t_c - 1e-9 * (1.0 + fabs(t))) {
        /* a master that goes back without restoring an FMU state: the input path starts
         * afresh at (t, u) from the current state, and the master is told so */
        hm_log(c, HM_WARNING, "logStatusWarning", "%s: t = %.17g is before the last "
               "communication point %.17g: the input path restarts there from the current "
               "state (roll back with an FMU state to repeat a step)", fn, t, c->s.t_c);
        c->s.t_c = t;
        c->s.u_c = c->s.u;
        c->s.v_c = c->s.v;
        c->s.pred_ok = 0;
        warn = 1;
    }
    /* the committed state along the input path from (t_c, u_c) to (t, u) */
    hm_budget_begin();
    secant = hm_secant(c, t, c->s.u);
    acc = (!secant && t > c->s.t_c) ? (c->s.v - c->s.v_c) / (t - c->s.t_c) : 0.0;
    memcpy(xc, c->s.xc, sizeof xc);
    if (t > c->s.t_c) {
        double tolu = 8.0 * 2.22e-16 * fmax(fabs(c->s.u), fabs(c->s.u_end));
        if (c->s.pred_ok && fabs(t - c->s.time) <= 1e-12 * (1.0 + fabs(t))
            && fabs(c->s.u - c->s.u_end) <= tolu
            && (secant || fabs(c->s.v - c->s.v_end) <= 8.0 * 2.22e-16 * fabs(c->s.v))) {
            memcpy(xc, c->s.x, sizeof xc);  /* the prediction was on this very path */
        } else {
            e = hm_commit_path(c, xc, t, c->s.u, c->s.v);
            if (e == HM_BUDGET_MSG) goto discard;
            if (e) { hm_budget_end(); return hm_error(c, "%s (t = %g)", e, t); }
        }
    }
    /* the predicted copy along u + u' (t' - t) + u'' (t' - t)^2 / 2 */
    slope = c->s.has_du ? c->s.du : c->s.v;
    if (c->s.has_d2u) acc = c->s.d2u;
    u1 = c->s.u + slope * h + 0.5 * acc * h * h;
    memcpy(xp, xc, sizeof xp);
    if (h > 0.0) {
        e = hm_advance_poly(c, xp, c->s.u, u1, slope, 0.5 * acc, 0.0, h);
        if (e == HM_BUDGET_MSG) goto discard;
        if (e) { hm_budget_end(); return hm_error(c, "%s (t = %g)", e, t); }
    }
    hm_budget_end();
    vend = c->s.v + (c->s.has_dv ? c->s.dv : acc) * h;
    F = HM_FORCE(xp, u1, vend, c->s.p);
    if (!isfinite(F) || !isfinite(u1) || !isfinite(vend))
        return hm_error(c, "non-finite force at t = %g (input path u = %g at the end)", t + h, u1);
    memcpy(c->s.xc, xc, sizeof xc);
    memcpy(c->s.x, xp, sizeof xp);
    c->s.t_c = t;
    c->s.u_c = c->s.u;
    c->s.v_c = c->s.v;
    c->s.u_end = u1;
    c->s.v_end = vend;
    c->s.ud_end = slope + acc * h;
    c->s.vd_end = c->s.has_dv ? c->s.dv : acc;
    c->s.time = t + h;
    c->s.pred_ok = 1;
    c->s.has_du = c->s.has_d2u = c->s.has_dv = 0;
    c->inputs_set = 0;
    c->w_ok = 0;
    return warn ? HM_WARNING : HM_OK;
discard:
    hm_budget_end();
    hm_log(c, HM_DISCARD, "logStatusDiscard", "%s(t = %g, h = %g): more than %ld internal steps; "
           "the state stays at t = %g (retry with a smaller h)", fn, t, h,
           (long)HM_MAX_INTERNAL_STEPS, c->s.time);
    return HM_DISCARD;
}


#endif
