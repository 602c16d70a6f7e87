/* hystmech force elements as MuJoCo passive-force plugins (mjpPlugin).
 *
 * One plugin per law ("hystmech.LuGre", ...) is registered at run time by
 * hm_mj_register() with the law's C kernels (components/LAW.c, the same functions
 * the FMU exporter compiles: LAW_advance, LAW_force, LAW_setup) passed as function
 * pointers, and the law's constructor parameters as configuration attributes by their
 * Python names (arrays: whitespace-separated values), plus "joint" or "tendon" (the
 * element's target) and "rtol" (tolerance of the adaptive segment update).
 *
 * Host discipline (trial/commit): compute() evaluates the force on a COPY of the state
 * committed at the last step, advanced from the committed input to the current one;
 * advance() (called by MuJoCo once per step, after the integration) commits the state
 * over the segment of that step. Everything an instance needs lives in
 * mjData.plugin_state, so mj_copyData / mj_getState save and restore it exactly.
 *
 * plugin_state layout of one instance (HDR header entries, then x, then p):
 *   0 anchored (0/1)   1 anchor: target coordinate at the first step   2 u committed
 *   3 t committed      4 target kind (0 joint, 1 tendon)   5 target id   6 qpos address
 *   7 dof address      8 rtol      9 force at the last compute (diagnostic)
 *   10 number of kernel failures (e.g. a Preisach memory stack overflow, hm_fail)
 *   11 the mean force over the second half of the last committed segment: 0 unknown,
 *      1 known (held in 12), 2 known and a switch point lay in that half
 *
 * Laws whose force jumps or kinks at switch points (LAW_switch: relay thresholds,
 * Masing faces, Preisach memory corners), under the semi-implicit integrators (Euler,
 * implicit, implicitfast): MuJoCo's update v+ = v + h·a(q_n), q+ = q_n + h·v+ is the
 * leapfrog scheme whose force impulse h·F(q_n) stands for the integral of F over
 * [t_n − h/2, t_n + h/2]. Second order for a force smooth in q, but a jump of F inside
 * that window is placed up to h/2 off, an O(h) error per switch. When a switch point
 * falls in the window, compute() returns the mean force over it instead: the second
 * half of the committed segment (averaged at commit, header entry 12) and the first
 * half of the next one along q_n + v·(t − t_n), each split at the switch points and
 * averaged by the midpoint rule on the pieces. No switch in the window: F(q_n), as
 * before. RK4 evaluates pointwise forces at its stages, so none of this applies there.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <mujoco/mujoco.h>

#define HDR 13
#define HM_MAX_X 4096

typedef void (*hm_adv_fn)(double *x, double u0, double u1, double dt, double v,
                          const double *p, double rtol);
typedef double (*hm_force_fn)(const double *x, double u, double v, const double *p);
typedef const char *(*hm_setup_fn)(const double *q, int nq, double *p, int np, double *x0,
                                   int nx);
typedef const char *(*hm_fail_fn)(void);
typedef double (*hm_switch_fn)(const double *x, double u, double dir, const double *p);

typedef struct {
    hm_adv_fn adv;
    hm_force_fn force;
    hm_setup_fn setup;
    hm_fail_fn fail;            /* returns and clears the kernels' hm_fail (or NULL) */
    hm_switch_fn sw;            /* next jump/kink of F along u (NULL: smooth law) */
    const char *name;
    int nx, np, nq, nattr;      /* nattr: law attributes (without joint/tendon/rtol) */
    char **attr;                /* nattr + 3 names */
    int *attr_len;              /* number of q values of each law attribute */
    int slot;
} hm_law_t;

static hm_law_t *hm_laws = NULL;
static int hm_nlaws = 0;
/* slot (MuJoCo's plugin table) -> index in hm_laws */
static int *hm_of_slot = NULL;
static int hm_nslots = 0;

static const hm_law_t *law_of(const mjModel *m, int instance)
{
    int slot = m->plugin[instance];
    if (slot < 0 || slot >= hm_nslots || hm_of_slot[slot] < 0)
        mju_error("hystmech plugin: instance %d is not a hystmech element", instance);
    return &hm_laws[hm_of_slot[slot]];
}

static int hm_nstate(const mjModel *m, int instance)
{
    const hm_law_t *L = law_of(m, instance);
    return HDR + L->nx + L->np;
}

/* parse the instance's configuration into the header, x0 and p; returns an error
 * message (static buffer) or NULL */
static const char *configure(const mjModel *m, mjtNum *s, int instance)
{
    static char msg[512];
    const hm_law_t *L = law_of(m, instance);
    double q[HM_MAX_X * 4];
    int a, k = 0;
    const char *jn, *tn, *rt;
    if (L->nq > (int)(sizeof q / sizeof q[0]))
        return "hystmech plugin: too many parameters";
    for (a = 0; a < L->nattr; a++) {
        const char *txt = mj_getPluginConfig(m, instance, L->attr[a]);
        char *end;
        int i;
        if (!txt || !*txt) {
            snprintf(msg, sizeof msg, "hystmech plugin: missing config attribute '%s'",
                     L->attr[a]);
            return msg;
        }
        for (i = 0; i < L->attr_len[a]; i++) {
            double val = strtod(txt, &end);
            if (end == txt) {
                snprintf(msg, sizeof msg, "hystmech plugin: config attribute '%s' must hold "
                         "%d number(s)", L->attr[a], L->attr_len[a]);
                return msg;
            }
            q[k++] = val;
            txt = end;
        }
        while (*txt == ' ' || *txt == '\t' || *txt == '\n') txt++;
        if (*txt) {
            snprintf(msg, sizeof msg, "hystmech plugin: config attribute '%s' must hold "
                     "%d number(s)", L->attr[a], L->attr_len[a]);
            return msg;
        }
    }
    {
        const char *e = L->setup(q, L->nq, s + HDR + L->nx, L->np, s + HDR, L->nx);
        if (e) {
            snprintf(msg, sizeof msg, "hystmech plugin: %s", e);
            return msg;
        }
    }
    jn = mj_getPluginConfig(m, instance, "joint");
    tn = mj_getPluginConfig(m, instance, "tendon");
    rt = mj_getPluginConfig(m, instance, "rtol");
    s[0] = 0.0; s[1] = 0.0; s[2] = 0.0; s[3] = 0.0; s[9] = 0.0; s[10] = 0.0;
    s[11] = 0.0; s[12] = 0.0;
    if (jn && *jn && !(tn && *tn)) {
        int j = mj_name2id(m, mjOBJ_JOINT, jn);
        if (j < 0) {
            snprintf(msg, sizeof msg, "hystmech plugin: no joint named '%s'", jn);
            return msg;
        }
        if (m->jnt_type[j] != mjJNT_SLIDE && m->jnt_type[j] != mjJNT_HINGE) {
            snprintf(msg, sizeof msg, "hystmech plugin: joint '%s' must be a slide or hinge "
                     "joint (one degree of freedom)", jn);
            return msg;
        }
        s[4] = 0.0; s[5] = j; s[6] = m->jnt_qposadr[j]; s[7] = m->jnt_dofadr[j];
    } else if (tn && *tn && !(jn && *jn)) {
        int t = mj_name2id(m, mjOBJ_TENDON, tn);
        if (t < 0) {
            snprintf(msg, sizeof msg, "hystmech plugin: no tendon named '%s'", tn);
            return msg;
        }
        s[4] = 1.0; s[5] = t; s[6] = -1; s[7] = -1;
    } else {
        return "hystmech plugin: give exactly one of the config attributes 'joint' and 'tendon'";
    }
    s[8] = (rt && *rt) ? strtod(rt, NULL) : 1e-8;
    if (!(s[8] > 0.0 && s[8] < 1.0)) return "hystmech plugin: rtol must be in (0, 1)";
    return NULL;
}

static void hm_reset(const mjModel *m, mjtNum *plugin_state, void *plugin_data, int instance)
{
    const char *e = configure(m, plugin_state, instance);
    (void)plugin_data;
    if (e) mju_error("%s", e);
}

static int hm_init(const mjModel *m, mjData *d, int instance)
{
    const char *e = configure(m, d->plugin_state + m->plugin_stateadr[instance], instance);
    if (e) {
        mju_warning("%s", e);
        return -1;
    }
    return 0;
}

static void target(const mjModel *m, const mjData *d, const mjtNum *s, double *u, double *v)
{
    if (s[4] == 0.0) {
        *u = d->qpos[(int)s[6]];
        *v = d->qvel[(int)s[7]];
    } else {
        *u = d->ten_length[(int)s[5]];
        *v = d->ten_velocity[(int)s[5]];
    }
}

/* segment from the committed (u_c, t_c) to (u, t): duration and mean velocity. A
 * displacement at an unchanged time (a finite-difference perturbation of qpos, e.g. in
 * mjd_transitionFD) is taken as travelled at the current speed, in its own direction,
 * so that rate-dependent laws see a tangent in both directions; rate-independent laws
 * ignore dt anyway */
static void segment(double uc, double tc, double u, double t, double vnow, double *dt,
                    double *vs)
{
    double du = u - uc;
    *dt = t - tc;
    if (*dt > 0.0) {
        *vs = du / *dt;
    } else if (du != 0.0 && vnow != 0.0) {
        *dt = fabs(du / vnow);
        *vs = du / *dt;
    } else {
        *dt = 0.0;
        *vs = du == 0.0 ? vnow : 0.0;
    }
}

/* a kernel that could not continue (hm_fail) is counted in the state (read it with
 * element_failures) and reported once per instance on stderr (not through mju_warning,
 * whose default handler appends to MUJOCO_LOG.TXT in the working directory) */
static void check_fail(const hm_law_t *L, mjtNum *s, int instance)
{
    const char *f = L->fail ? L->fail() : NULL;
    if (f) {
        s[10] += 1.0;
        if (s[10] == 1.0)
            fprintf(stderr, "hystmech MuJoCo plugin %s (instance %d): %s\n", L->name, instance, f);
    }
}

/* leapfrog window averaging applies (see the header comment) */
static int windowed(const mjModel *m, const hm_law_t *L)
{
    return L->sw != NULL && m->opt.integrator != mjINT_RK4;
}

/* is the switch point w strictly inside the segment from a to b (direction dir)? */
static int inside(double w, double a, double b, double dir)
{
    return dir * (w - a) > 0.0 && dir * (b - w) > 0.0;
}

/* mean force over the monotone segment a -> b travelled at the constant speed vs in
 * the time T, advancing x along it: the segment is cut at the law's switch points and
 * each piece contributes its length times the force at its midpoint (exact for a force
 * constant or linear in u between switches: relays, discrete Preisach) */
static double mean_force(const hm_law_t *L, double *x, double a, double b, double T,
                         double vs, double vf, const double *p, double rtol)
{
    double dir = b > a ? 1.0 : -1.0, cur = a, acc = 0.0, nxt, mid;
    int k;
    for (k = 0; k < 64 && cur != b; k++) {
        double w = L->sw(x, cur, dir, p);
        nxt = inside(w, cur, b, dir) ? w : b;
        mid = 0.5 * (cur + nxt);
        L->adv(x, cur, mid, T * (mid - cur) / (b - a), vs, p, rtol);
        acc += (nxt - cur) * L->force(x, mid, vf, p);
        L->adv(x, mid, nxt, T * (nxt - mid) / (b - a), vs, p, rtol);
        cur = nxt;
    }
    if (cur != b) {      /* more than 64 switch points in half a step: the rest as one */
        L->adv(x, cur, b, T * (b - cur) / (b - a), vs, p, rtol);
        acc += (b - cur) * L->force(x, b, vf, p);
    }
    return acc / (b - a);
}

static void hm_compute(const mjModel *m, mjData *d, int instance, int capability_bit)
{
    const hm_law_t *L = law_of(m, instance);
    mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];
    const double *p = s + HDR + L->nx;
    double xt[L->nx > 0 ? L->nx : 1];
    double *xs = s + HDR;          /* the state at u: the committed one, or a trial copy */
    double q, v, u, dt, vs, F;
    if (!(capability_bit & mjPLUGIN_PASSIVE)) return;
    target(m, d, s, &q, &v);
    if (s[0] == 0.0) {
        /* anchor u = 0 at the first force evaluation (not at qpos0) */
        s[0] = 1.0; s[1] = q; s[2] = 0.0; s[3] = d->time; s[11] = 0.0;
    }
    u = q - s[1];
    if (u != s[2] || d->time != s[3]) {
        memcpy(xt, s + HDR, sizeof(double) * L->nx);
        segment(s[2], s[3], u, d->time, v, &dt, &vs);
        L->adv(xt, s[2], u, dt, vs, p, s[8]);
        check_fail(L, s, instance);
        xs = xt;
    }
    F = L->force(xs, u, v, p);
    if (windowed(m, L)) {
        double dir = v > 0.0 ? 1.0 : -1.0, uf = u + 0.5 * m->opt.timestep * v;
        int fwd = v != 0.0 && inside(L->sw(xs, u, dir, p), u, uf, dir);
        int back = s[11] != 0.0 && d->time == s[3];   /* the back half's mean is known */
        if (fwd || (back && s[11] == 2.0)) {
            double Ff = F;
            if (v != 0.0) {      /* the first half of the next segment, as predicted */
                if (xs != xt) memcpy(xt, xs, sizeof(double) * L->nx);
                Ff = mean_force(L, xt, u, uf, 0.5 * m->opt.timestep, v, v, p, s[8]);
                check_fail(L, s, instance);
            }
            F = 0.5 * ((back ? s[12] : F) + Ff);
        }
    }
    s[9] = F;
    if (s[4] == 0.0) {
        d->qfrc_passive[(int)s[7]] -= F;
    } else {
        int t = (int)s[5], k;
        int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
        for (k = 0; k < nnz; k++)
            d->qfrc_passive[m->ten_J_colind[adr + k]] -= F * d->ten_J[adr + k];
    }
}

static void hm_advance(const mjModel *m, mjData *d, int instance)
{
    const hm_law_t *L = law_of(m, instance);
    mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];
    double *x = s + HDR;
    const double *p = s + HDR + L->nx;
    double q, v, u, dt, vs;
    if (s[0] == 0.0) return;       /* never evaluated: nothing to commit */
    /* after the integration qpos, qvel and time are those of the new step; tendon
       lengths are not recomputed yet, so a tendon's committed length moves with the new
       velocity through the Jacobian of the step's start (exact for a fixed tendon under
       semi-implicit Euler; the next compute() advances the trial copy over any rest) */
    if (s[4] == 0.0) {
        q = d->qpos[(int)s[6]];
        v = d->qvel[(int)s[7]];
        u = q - s[1];
    } else {
        int t = (int)s[5], k;
        int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
        v = 0.0;
        for (k = 0; k < nnz; k++) v += d->ten_J[adr + k] * d->qvel[m->ten_J_colind[adr + k]];
        u = s[2] + (d->time - s[3]) * v;
    }
    segment(s[2], s[3], u, d->time, v, &dt, &vs);
    s[11] = 0.0;
    if (windowed(m, L) && u != s[2] && dt > 0.0) {
        /* commit the first half of the segment, then the second half piece by piece
           (cut at switch points), keeping its mean force for the next step's window */
        double dir = u > s[2] ? 1.0 : -1.0, um = 0.5 * (s[2] + u);
        L->adv(x, s[2], um, 0.5 * dt, vs, p, s[8]);
        s[11] = inside(L->sw(x, um, dir, p), um, u, dir) ? 2.0 : 1.0;
        s[12] = mean_force(L, x, um, u, 0.5 * dt, vs, v, p, s[8]);
    } else {
        L->adv(x, s[2], u, dt, vs, p, s[8]);
    }
    check_fail(L, s, instance);
    s[2] = u;
    s[3] = d->time;
}

/* Register a law as the plugin `name`; returns the MuJoCo plugin slot (or -1). The
 * strings are copied. attr_len[i]: number of values of attribute i. */
int hm_mj_register(const char *name, void *adv, void *force, void *setup, void *fail,
                   void *sw, int nx, int np, int nattr, const char **attr, const int *attr_len)
{
    hm_law_t *L;
    mjpPlugin plugin;
    int i, nq = 0, slot = -1, idx;
    const mjpPlugin *old = mjp_getPlugin(name, &slot);
    if (old) return slot;           /* registered once per process */
    if (nx > HM_MAX_X) return -2;
    for (i = 0; i < nattr; i++) nq += attr_len[i];
    hm_laws = realloc(hm_laws, sizeof(hm_law_t) * (hm_nlaws + 1));
    idx = hm_nlaws++;
    L = &hm_laws[idx];
    L->adv = (hm_adv_fn)adv;
    L->force = (hm_force_fn)force;
    L->setup = (hm_setup_fn)setup;
    L->fail = (hm_fail_fn)fail;
    L->sw = (hm_switch_fn)sw;
    L->name = strdup(name);
    L->nx = nx; L->np = np; L->nq = nq; L->nattr = nattr;
    L->attr = malloc(sizeof(char *) * (nattr + 3));
    L->attr_len = malloc(sizeof(int) * (nattr + 1));
    for (i = 0; i < nattr; i++) {
        L->attr[i] = strdup(attr[i]);
        L->attr_len[i] = attr_len[i];
    }
    L->attr[nattr] = strdup("joint");
    L->attr[nattr + 1] = strdup("tendon");
    L->attr[nattr + 2] = strdup("rtol");
    mjp_defaultPlugin(&plugin);
    plugin.name = strdup(name);
    plugin.nattribute = nattr + 3;
    plugin.attributes = (const char *const *)L->attr;
    plugin.capabilityflags = mjPLUGIN_PASSIVE;
    plugin.nstate = hm_nstate;
    plugin.init = hm_init;
    plugin.reset = hm_reset;
    plugin.compute = hm_compute;
    plugin.advance = hm_advance;
    slot = mjp_registerPlugin(&plugin);
    L->slot = slot;
    if (slot >= hm_nslots) {
        int n = slot + 16;
        hm_of_slot = realloc(hm_of_slot, sizeof(int) * n);
        for (i = hm_nslots; i < n; i++) hm_of_slot[i] = -1;
        hm_nslots = n;
    }
    hm_of_slot[slot] = idx;
    return slot;
}

int hm_mj_header(void) { return HDR; }
