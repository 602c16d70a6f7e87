/* hystmech force elements as MuJoCo passive-force plugins: a self-registering plugin
 * library (one translation unit with every law's C kernel, components/LAW.c).
 *
 * Loading the library (dlopen, mj_loadPluginLibrary, mj_loadAllPluginLibraries, or
 * `import mujoco` through the "mujoco.plugins" entry point) runs its constructor
 * (mjPLUGIN_LIB_INIT, as MuJoCo's first-party plugins do), which registers one plugin
 * "hystmech.<Law>" per law of the generated table hm_mj_laws.h (built from the law
 * classes by plugins/mujoco_build.py) plus "hystmech.Sum", the parallel sum of up to
 * HM_MAX_PARTS laws (components/combine.py; as many as MuJoCo's 255 configuration
 * attributes per plugin allow). No Python is needed at run time.
 *
 * Configuration (MJCF <config key=... value=...>): the law's constructor keywords
 * (arrays: whitespace-separated numbers); the sum: "parts" = law names, then
 * "part<i>.<keyword>"; for every element: "joint" or "tendon" (the target), "rtol"
 * (adaptive segment update), "ref" (target coordinate where u = 0, default: the
 * joint's springref if nonzero else qpos0; a tendon's length at qpos0) and
 * "implicit_damping" (the part c of the joint's/tendon's damping that stands for the
 * law's viscous term: the plugin returns F - c·v, MuJoCo applies -c·v implicitly).
 * Every value is checked at compile time (nstate) by the law's own setup (the checks
 * of the Python constructor, same messages), so a bad config is a compile error.
 *
 * Storage: mjData.plugin_state holds only [x (the committed law state), u_c, t_c]: the
 * law's states + 2 (anything derivable from them or from the model lives in
 * plugin_data). u_c = NaN means "not started": force evaluations use the initial state
 * at the current u, and the first advance() commits from the u at which the first step
 * started (no path from the reference is traversed, as in the Assembly where an element
 * starts at its x0 at whatever u the DOFs start; a qpos set after mj_forward counts;
 * RK4's later stages of that step advance from its start, recorded in plugin_data).
 * Parameters, initial state, target indices (checked at init) live in the instance's
 * plugin_data. A non-finite or inconsistent state (e.g. written by a user) is reported
 * with mju_warning and the element restarts from its initial state: never a crash.
 *
 * Host discipline (trial/commit): compute() evaluates the force on a COPY of the state
 * committed at the last step, advanced from the committed input to the current one;
 * advance() (once per step, after the integration) commits it.
 *
 * Cost: a law without switch points and state check (LuGre, Dahl, Bouc-Wen, springs,
 * ...) is registered with its own compute/advance (HM_PLAIN_CALLBACKS, generated for
 * every such law of the table): the generic callbacks' common case with the law's
 * kernels called directly, the same arithmetic, so the same numbers bit for bit; any
 * other case goes to the generic callbacks.
 *
 * Laws whose force jumps or kinks at switch points (relay thresholds, Masing faces,
 * Preisach memory corners), under the semi-implicit integrators (Euler, implicit,
 * implicitfast): MuJoCo's update v+ = v + h·a(q_n), q+ = q_n + h·v+ is the leapfrog
 * scheme whose impulse h·F(q_n) stands for the integral of F over [t_n - h/2,
 * t_n + h/2]; when a switch point falls in that window compute() returns the mean
 * force over it, cut at the switch points. The state is committed at the step's
 * midpoint (u_c = q - h·v/2, t_c = t - h/2), so the window's back half is the trial's
 * own segment u_c -> q_n (its mean recomputed from the committed state, not stored)
 * and the front half q_n -> q_n + h·v/2 is predicted. RK4 evaluates pointwise forces at
 * its stages and commits at the step's end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <mujoco/mujoco.h>

/* hm_fail and hm_budget (hm_law.h) are touched around every kernel call: initial-exec
 * TLS reads them through the thread pointer instead of a __tls_get_addr call (16 bytes
 * of static TLS; the rest of hm_law.h's thread-locals keep the default model) */
#if defined(__GNUC__) && defined(__ELF__) && !defined(HM_TLS_HOT)
#define HM_TLS_HOT __thread __attribute__((tls_model("initial-exec")))
#endif

typedef void (*hm_adv_fn)(double *x, double u0, double u1, double dt, double v,
                          const double *p, double rtol);
typedef double (*hm_force_fn)(const double *x, double u, double v, const double *p);
typedef const char *(*hm_setup_fn)(const double *q, int nq, double *p, int np, double *x0,
                                   int nx);
typedef double (*hm_switch_fn)(const double *x, double u, double dir, const double *p);
typedef const char *(*hm_check_fn)(const double *x, const double *p);
typedef double (*hm_mean_fn)(double *x, double u0, double u1, double dt, double v, double vf,
                             const double *p, double rtol, double *stiff, double *dfdv);

/* one constructor keyword: count > 0 fixed number of values, 0 an array as long as
 * the law's first array; need: HM_REQ required, HM_DEF default value, HM_OPT omitted
 * when absent (then the law has no such q entries), HM_AUTO computed by the law's
 * complete() like the Python constructor's default */
enum { HM_REQ = 0, HM_DEF = 1, HM_OPT = 2, HM_AUTO = 3 };
typedef struct {
    const char *name;
    int count, need;
    double def;
    const char *unit, *doc;
} hm_key_t;

struct hm_law_;
/* sizes of an instance from its constructor values q (array laws) */
typedef const char *(*hm_sizes_fn)(const struct hm_law_ *L, const double *q, int nq,
                                   int narr, int *nx, int *np);
/* fill the HM_AUTO entries of q */
typedef void (*hm_complete_fn)(double *q, int nq, int narr, const int *given);

typedef struct hm_law_ {
    const char *name;
    hm_adv_fn adv;
    hm_force_fn force;
    hm_setup_fn setup;
    hm_switch_fn sw;
    hm_check_fn check;
    hm_mean_fn mean;         /* exact mean force over a segment (LAW_mean) or NULL */
    int nkey;
    const hm_key_t *key;
    int nx, np;              /* fixed sizes, or taken from sizes() */
    hm_sizes_fn sizes;
    hm_complete_fn complete;
} hm_law_t;

#define HM_EXPORT __attribute__((visibility("default")))
#define HM_MAX_Q 1000000
#define HM_MAX_X 100000

static const char *hm_sizes_maxwell_slip(const hm_law_t *L, const double *q, int nq, int narr,
                                         int *nx, int *np);
static const char *hm_sizes_preisach(const hm_law_t *L, const double *q, int nq, int narr,
                                     int *nx, int *np);
static void hm_complete_maxwell_slip(double *q, int nq, int narr, const int *given);
static void hm_complete_preisach(double *q, int nq, int narr, const int *given);

/* the laws' kernels and the table (generated by plugins/mujoco_build.py) */
#include "hm_mj_laws.h"

/* -- sizes and computed defaults of the array laws ------------------------------ */
static const char *hm_sizes_maxwell_slip(const hm_law_t *L, const double *q, int nq, int narr,
                                         int *nx, int *np)
{
    (void)L; (void)q; (void)nq;
    *nx = narr;
    *np = 2 * narr + 1;
    return NULL;
}

static int hm_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int hm_count_unique(const double *v, int n, double *buf)
{
    int i, m = 0;
    memcpy(buf, v, sizeof(double) * n);
    qsort(buf, n, sizeof(double), hm_cmp);
    for (i = 0; i < n; i++)
        if (m == 0 || buf[i] != buf[m - 1]) buf[m++] = buf[i];
    return m;
}

/* q = a1[N] a2[N] weights[N] initial k0 offset max_depth slope_width [m n] */
static const char *hm_sizes_preisach(const hm_law_t *L, const double *q, int nq, int narr,
                                     int *nx, int *np)
{
    static HM_TLS char msg[200];
    int N = narr, cont = nq == 3 * N + 7;
    double D = q[3 * N + 3], *buf;
    int n1, n2;
    (void)L;
    if (!(D >= 2.0 && D == floor(D) && D <= (HM_MAX_X - 3) / 2)) {
        snprintf(msg, sizeof msg, "max_depth must be an integer in [2, %d] (got %g)",
                 (HM_MAX_X - 3) / 2, D);
        return msg;
    }
    *nx = 3 + 2 * (int)D;
    if (cont) {
        double n = q[3 * N + 6];
        if (!(n >= 1.0 && n == floor(n) && n <= 1000.0)) {
            snprintf(msg, sizeof msg, "grid n must be an integer in [1, 1000] (got %g)", n);
            return msg;
        }
        *np = 9 + 2 * ((int)n + 1) + ((int)n + 2) * ((int)n + 2);
        return NULL;
    }
    buf = (double *)malloc(sizeof(double) * (N > 0 ? N : 1));
    if (!buf) return "out of memory";
    n2 = hm_count_unique(q + N, N, buf);
    n1 = hm_count_unique(q, N, buf);
    free(buf);
    if ((double)(n2 + 1) * (n1 + 1) > 5e7) {
        snprintf(msg, sizeof msg, "a1, a2 must have at most ~7071 distinct values each "
                 "(Everett table of %g entries)", (double)(n2 + 1) * (n1 + 1));
        return msg;
    }
    *np = 9 + n2 + n1 + (n2 + 1) * (n1 + 1);
    return NULL;
}

static void hm_complete_maxwell_slip(double *q, int nq, int narr, const int *given)
{
    int i;
    (void)nq;
    if (!given[2])                       /* z0 = None: no initial deflection */
        for (i = 0; i < narr; i++) q[2 * narr + i] = 0.0;
}

/* slope_width = None: twice the mean spacing of the distinct thresholds of a1 and a2
 * (preisach.py); the continuous mode (grid given) does not use it */
static void hm_complete_preisach(double *q, int nq, int narr, const int *given)
{
    int N = narr, m;
    double *buf;
    if (given[7]) return;
    q[3 * N + 4] = 0.0;
    if (nq == 3 * N + 7) return;
    buf = (double *)malloc(sizeof(double) * 2 * (N > 0 ? N : 1));
    if (!buf) { q[3 * N + 4] = NAN; return; }   /* refused by the law's setup */
    m = hm_count_unique(q, 2 * N, buf);
    q[3 * N + 4] = 2.0 * (buf[m - 1] - buf[0]) / (m - 1 > 1 ? m - 1 : 1);
    free(buf);
}

/* -- configuration ---------------------------------------------------------------- */
typedef struct {
    int nparts;
    const hm_law_t *law[HM_MAX_PARTS];
    int xo[HM_MAX_PARTS], po[HM_MAX_PARTS];
    int nx, np, has_sw, has_check, has_mean, nstate;
    int kind, id, qadr, dadr;          /* kind 0 joint, 1 tendon */
    double ref, rtol, cimp;
    double *p, *x0, *xt;               /* parameters, initial state, trial scratch */
    double *xb;                        /* |x[i]| <= xb[i]: the law's invariant set */
    double *ej;                        /* nv scratch: M^-1 e_j (hm_minv), or NULL */
    int nv;                            /* size of ej */
    long failures;
    int warned;
    /* where the first step of a not-started element began (its first evaluation; see
       hm_start): a trial cache for RK4's later stages, never committed physics */
    int has_start;
    double u_start, t_start;
    /* RK4 and a stiff fast-transient law: the step force computed at the step's first
       stage (time rk_t), handed over at every stage of that step (hm_eval) */
    double rk_t, rk_F;
    int rk_ok;
    /* the implicit step's predicted velocity of this step (w_t: its time) and the part
       of the last step's velocity change the element did not predict (the other forces
       and joints, e_v, plugin_state[nx + 2]): added to the next prediction */
    double w_pred, w_t;
    int has_e;                         /* plugin_state holds e_v after [x, u_c, t_c] */
    /* a one-state mean law's back half as compute() advanced it: from x = c_x0 at
       (c_uc, c_tc) to c_x at (c_u, c_t) (> c_tc); advance() commits the same segment
       with the same kernel arithmetic (LAW_mean advances x as LAW_advance does) and takes
       c_x when every input matches to the bit (a pure function: replays stay bitwise) */
    int c_ok;
    double c_x0, c_uc, c_tc, c_u, c_t, c_x;
    char name[64];
} hm_inst_t;

static const hm_law_t *hm_find_law(const char *name, size_t n)
{
    int i;
    for (i = 0; i < HM_NLAWS; i++)
        if (strlen(hm_laws[i].name) == n && strncmp(hm_laws[i].name, name, n) == 0)
            return &hm_laws[i];
    return NULL;
}

static int hm_slots[HM_NLAWS + 1];     /* MuJoCo plugin slot of each law, then the sum */

/* the law registered at slot (NULL: the sum, or not a hystmech plugin: *ours = 0) */
static const hm_law_t *hm_law_at_slot(int slot, int *ours)
{
    int i;
    *ours = 0;
    for (i = 0; i <= HM_NLAWS; i++)
        if (hm_slots[i] == slot) {
            *ours = 1;
            return i < HM_NLAWS ? &hm_laws[i] : NULL;
        }
    return NULL;
}

static const char *hm_inst_name(const mjModel *m, int instance)
{
    const char *nm = mj_id2name(m, mjOBJ_PLUGIN, instance);
    return nm ? nm : "(unnamed)";
}

/* -- portable model files -------------------------------------------------------------
 * MuJoCo stores an instance's plugin as a registration slot number and its configuration
 * as the values of that plugin's attributes in their declared order (mjModel.plugin_attr,
 * one NUL-terminated string each). A model file (.mjb) saved in a process that registered
 * other plugins first (Python registers MuJoCo's bundled plugins before hystmech's) points
 * at another slot in a process that did not. Each law therefore registers a number of
 * attributes no other hystmech plugin has (HM_FP_BASE + its table index, padded with the
 * unused keys "_hm_fp<j>"): the count of values stored with the instance names the law it
 * was compiled for, which is then used whatever plugin the slot holds now (the values read
 * by position in that law's own attribute list); a count no hystmech plugin has is a clear
 * error naming the plugin found at the slot. */
#define HM_FP_BASE 120
static const char **hm_attrs[HM_NLAWS + 1];
static int hm_nattr[HM_NLAWS + 1];
static HM_TLS int hm_cfg_plugin = -1;      /* law index whose attributes hm_cfg reads */

/* number of attribute values stored with the instance */
static int hm_stored_nattr(const mjModel *m, int instance)
{
    int a = m->plugin_attradr[instance], e, n = 0, k;
    e = instance + 1 < m->nplugin ? m->plugin_attradr[instance + 1] : m->npluginattr;
    if (a < 0 || e > m->npluginattr || e < a) return -1;
    for (k = a; k < e; k++) n += m->plugin_attr[k] == '\0';
    return n;
}

/* the configuration value of key for the law hm_cfg_plugin, by position (NULL: no such
 * attribute) */
static const char *hm_cfg(const mjModel *m, int instance, const char *key)
{
    int j, k, idx = hm_cfg_plugin;
    const char *ptr;
    if (idx < 0) return mj_getPluginConfig(m, instance, key);
    for (j = 0; j < hm_nattr[idx]; j++)
        if (strcmp(hm_attrs[idx][j], key) == 0) break;
    if (j == hm_nattr[idx]) return NULL;
    ptr = m->plugin_attr + m->plugin_attradr[instance];
    for (k = 0; k < j; k++) ptr += strlen(ptr) + 1;
    return ptr;
}

/* the law index (HM_NLAWS: the sum) an instance was compiled for; -1 and *msg if none */
static int hm_resolve(const mjModel *m, int instance, char *msg, size_t nmsg)
{
    int i, slot_idx = -1, n = hm_stored_nattr(m, instance);
    const mjpPlugin *P = mjp_getPluginAtSlot(m->plugin[instance]);
    for (i = 0; i <= HM_NLAWS; i++)
        if (hm_slots[i] == m->plugin[instance]) slot_idx = i;
    if (slot_idx >= 0 && n == hm_nattr[slot_idx]) return slot_idx;
    for (i = 0; i <= HM_NLAWS; i++)
        if (hm_slots[i] >= 0 && n == hm_nattr[i]) return i;
    snprintf(msg, nmsg, "the model stores %d configuration values for this instance, which "
             "no hystmech plugin has (the plugin at its slot %d is '%s', expecting %d): the "
             "model file was saved with other plugins or another build of the library; "
             "load the MJCF instead", n, m->plugin[instance], P && P->name ? P->name : "?",
             P ? P->nattribute : -1);
    return -1;
}

static int hm_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* parse whitespace-separated numbers; -1 on a non-number (*bad: its position) */
static int hm_parse(const char *txt, double *out, int cap, int *count)
{
    int n = 0;
    for (;;) {
        char *end;
        double v;
        while (hm_is_space(*txt)) txt++;
        if (!*txt) break;
        v = strtod(txt, &end);
        if (end == txt || !(hm_is_space(*end) || *end == '\0')) return -1;
        if (n < cap) out[n] = v;
        n++;
        txt = end;
    }
    *count = n;
    return 0;
}

/* the constructor values q of one law, from config keys "<pre><key>"; allocates *q */
static const char *hm_law_q(const mjModel *m, int instance, const hm_law_t *L,
                            const char *pre, double **q_out, int *nq_out, int *narr_out,
                            char *msg, size_t nmsg)
{
    int k, nq = 0, narr = -1, given[64], cap;
    double *q;
    const char *arr_key = NULL;
    char key[96];
    /* first pass: array length */
    for (k = 0; k < L->nkey; k++) {
        const char *txt;
        int cnt;
        snprintf(key, sizeof key, "%s%s", pre, L->key[k].name);
        txt = hm_cfg(m, instance, key);
        if (L->key[k].count != 0 || !txt || !*txt) continue;
        if (hm_parse(txt, NULL, 0, &cnt) < 0) {
            snprintf(msg, nmsg, "config '%s' must hold numbers (got '%.60s')", key, txt);
            return msg;
        }
        if (narr < 0) { narr = cnt; arr_key = L->key[k].name; }
        else if (cnt != narr) {
            snprintf(msg, nmsg, "config '%s' must hold as many numbers as '%s%s' (%d) (got %d)",
                     key, pre, arr_key, narr, cnt);
            return msg;
        }
    }
    if (narr < 0 && L->sizes) {          /* no array given at all */
        for (k = 0; k < L->nkey && L->key[k].count != 0; k++) {}
        snprintf(msg, nmsg, "missing config '%s%s' (%s)", pre, L->key[k < L->nkey ? k : 0].name,
                 L->key[k < L->nkey ? k : 0].doc);
        return msg;
    }
    if (narr == 0) {
        snprintf(msg, nmsg, "config '%s%s' must hold at least one number", pre, arr_key);
        return msg;
    }
    if (narr > HM_MAX_X) {
        snprintf(msg, nmsg, "config '%s%s' must hold at most %d numbers (got %d)", pre,
                 arr_key, HM_MAX_X, narr);
        return msg;
    }
    cap = 0;
    for (k = 0; k < L->nkey; k++) cap += L->key[k].count ? L->key[k].count : narr;
    q = (double *)malloc(sizeof(double) * (cap > 0 ? cap : 1));
    if (!q) return "out of memory";
    for (k = 0; k < L->nkey && k < 64; k++) {
        const hm_key_t *K = &L->key[k];
        int want = K->count ? K->count : narr, cnt, i;
        const char *txt;
        snprintf(key, sizeof key, "%s%s", pre, K->name);
        txt = hm_cfg(m, instance, key);
        given[k] = txt && *txt;
        if (!given[k]) {
            if (K->need == HM_REQ) {
                snprintf(msg, nmsg, "missing config '%s'%s%s%s%s%s", key,
                         *K->doc || *K->unit ? " (" : "", K->doc, *K->doc && *K->unit ? "; " : "",
                         *K->unit ? K->unit : "", *K->doc || *K->unit ? ")" : "");
                free(q);
                return msg;
            }
            if (K->need == HM_OPT) continue;
            for (i = 0; i < want; i++) q[nq + i] = K->need == HM_DEF ? K->def : NAN;
            nq += want;
            continue;
        }
        if (hm_parse(txt, q + nq, want, &cnt) < 0 || cnt != want) {
            snprintf(msg, nmsg, "config '%s' must hold %d number(s) (got '%.60s')", key, want,
                     txt);
            free(q);
            return msg;
        }
        for (i = 0; i < want; i++)
            if (!isfinite(q[nq + i])) {     /* as the constructors' check_finite */
                snprintf(msg, nmsg, "config '%s' must be a finite real number (got %g)", key,
                         q[nq + i]);
                free(q);
                return msg;
            }
        nq += want;
    }
    if (L->complete) L->complete(q, nq, narr, given);
    *q_out = q;
    *nq_out = nq;
    *narr_out = narr;
    return NULL;
}

/* The set a law's state stays in from its initial state (the constructor's ranges and
 * the invariant sets of the papers' equations), so that a state written from outside
 * (mj_setState, plugin_state) beyond it is refused like a non-finite one: Dahl and
 * viscous Dahl |w| <= 1 (ẇ = ρ(u̇ − |u̇|w)); LuGre |z| <= max(|z0|, Fs/σ0) (z moves
 * towards g(v)/σ0·sgn v); Bouc-Wen with γ <= β, β + γ > 0: |z| <= max(|z0|, z*),
 * z* = (A/(β + γ))^(1/n), and with γ > β, n > 1 the constructor's |z| < (A/(γ − β))^(1/n).
 * Laws with a LAW_check kernel (Masing, Maxwell-slip, relay, Preisach) check themselves;
 * the rest (modified Dahl, springs) have no bound here. A relative 1e-9 of slack covers
 * the rounding of the exact segment maps. */
static void hm_state_bounds(const hm_law_t *L, const double *p, const double *x0, double *xb)
{
    const double slack = 1.0 + 1e-9;
    if (!strcmp(L->name, "Dahl") || !strcmp(L->name, "ViscousDahl")
        || !strcmp(L->name, "AsymmetricViscousDahl")
        || !strcmp(L->name, "NaiveAsymmetricViscousDahl")) {
        xb[0] = slack;
    } else if (!strcmp(L->name, "LuGre")) {
        xb[0] = fmax(fabs(x0[0]), p[3] / p[0]) * slack;
    } else if (!strcmp(L->name, "BoucWen")) {
        double A = p[0], be = p[1], ga = p[2], n = p[3];
        if (ga <= be && be + ga > 0.0)
            xb[0] = fmax(fabs(x0[0]), pow(A / (be + ga), 1.0 / n)) * slack;
        else if (ga > be && n > 1.0)
            xb[0] = nextafter(pow(A / (ga - be), 1.0 / n), 0.0);   /* open interval */
    }
}

/* build the instance description from the model (config, targets); NULL or a message */
static const char *hm_configure(const mjModel *m, int instance, hm_inst_t *I, char *msg,
                                size_t nmsg)
{
    int ours, i, k;
    const hm_law_t *L;
    const char *jn, *tn, *txt;
    double val;
    int cnt;
    memset(I, 0, sizeof *I);
    if (instance < 0 || instance >= m->nplugin) return "hystmech plugin: bad instance index";
    hm_law_at_slot(m->plugin[instance], &ours);
    if (!ours) return "hystmech plugin: instance is not a hystmech element";
    hm_cfg_plugin = hm_resolve(m, instance, msg, nmsg);
    if (hm_cfg_plugin < 0) return msg;
    L = hm_cfg_plugin < HM_NLAWS ? &hm_laws[hm_cfg_plugin] : NULL;
    snprintf(I->name, sizeof I->name, "%s", hm_inst_name(m, instance));
    if (L) {
        I->nparts = 1;
        I->law[0] = L;
    } else {
        const char *s = hm_cfg(m, instance, "parts");
        if (!s || !*s) return "hystmech.Sum: missing config 'parts' (law names, e.g. 'Dahl LinearSpring')";
        while (*s) {
            const char *e;
            while (hm_is_space(*s)) s++;
            if (!*s) break;
            e = s;
            while (*e && !hm_is_space(*e)) e++;
            if (I->nparts == HM_MAX_PARTS) {
                snprintf(msg, nmsg, "hystmech.Sum: config 'parts' must name at most %d laws",
                         HM_MAX_PARTS);
                return msg;
            }
            I->law[I->nparts] = hm_find_law(s, (size_t)(e - s));
            if (!I->law[I->nparts]) {
                snprintf(msg, nmsg, "hystmech.Sum: config 'parts': unknown law '%.*s' (known: %s)",
                         (int)(e - s), s, HM_LAW_NAMES);
                return msg;
            }
            I->nparts++;
            s = e;
        }
        if (I->nparts == 0) return "hystmech.Sum: config 'parts' must name at least one law";
    }
    /* sizes and parameters, part by part (each part's setup checks its values) */
    {
        double *qs[HM_MAX_PARTS] = {0};
        int nqs[HM_MAX_PARTS], narr[HM_MAX_PARTS], nxs[HM_MAX_PARTS], nps[HM_MAX_PARTS];
        const char *err = NULL;
        char pre[16];
        for (i = 0; i < I->nparts && !err; i++) {
            const hm_law_t *P = I->law[i];
            if (L) pre[0] = '\0'; else snprintf(pre, sizeof pre, "part%d.", i);
            err = hm_law_q(m, instance, P, pre, &qs[i], &nqs[i], &narr[i], msg, nmsg);
            if (err) break;
            nxs[i] = P->nx; nps[i] = P->np;
            if (P->sizes) err = P->sizes(P, qs[i], nqs[i], narr[i], &nxs[i], &nps[i]);
            if (err && err != msg) {
                snprintf(msg, nmsg, "%s%s", pre, err);
                err = msg;
            }
            if (!err) {
                I->xo[i] = I->nx; I->po[i] = I->np;
                I->nx += nxs[i]; I->np += nps[i];
                if (P->sw) I->has_sw = 1;
                if (P->check) I->has_check = 1;
                if (P->mean) I->has_mean = 1;
            }
            if (!err && I->nx > HM_MAX_X) err = "hystmech plugin: too many states";
        }
        if (!err) {
            I->p = (double *)calloc(I->np > 0 ? I->np : 1, sizeof(double));
            I->x0 = (double *)calloc(I->nx > 0 ? I->nx : 1, sizeof(double));
            I->xt = (double *)calloc(I->nx > 0 ? 2 * I->nx : 1, sizeof(double));
            I->xb = (double *)calloc(I->nx > 0 ? I->nx : 1, sizeof(double));
            if (!I->p || !I->x0 || !I->xt || !I->xb) err = "out of memory";
            else for (k = 0; k < I->nx; k++) I->xb[k] = INFINITY;
        }
        for (i = 0; i < I->nparts && !err; i++) {
            const char *e = I->law[i]->setup(qs[i], nqs[i], I->p + I->po[i], nps[i],
                                             I->x0 + I->xo[i], nxs[i]);
            if (e) {
                if (L) snprintf(msg, nmsg, "%s", e);
                else snprintf(msg, nmsg, "part%d (%s): %s", i, I->law[i]->name, e);
                err = msg;
            }
        }
        for (i = 0; i < HM_MAX_PARTS; i++) free(qs[i]);
        if (err) {
            free(I->p); free(I->x0); free(I->xt); free(I->xb);
            I->p = I->x0 = I->xt = I->xb = NULL;
            return err;
        }
    }
    for (i = 0; i < I->nparts; i++)
        hm_state_bounds(I->law[i], I->p + I->po[i], I->x0 + I->xo[i], I->xb + I->xo[i]);
    I->nstate = I->nx + 2;
    /* target */
    jn = hm_cfg(m, instance, "joint");
    tn = hm_cfg(m, instance, "tendon");
    if (jn && *jn && !(tn && *tn)) {
        int j = mj_name2id(m, mjOBJ_JOINT, jn);
        if (j < 0 || j >= m->njnt) {
            snprintf(msg, nmsg, "no joint named '%s'", jn);
            return msg;
        }
        if (m->jnt_type[j] != mjJNT_SLIDE && m->jnt_type[j] != mjJNT_HINGE) {
            snprintf(msg, nmsg, "joint '%s' must be a slide or hinge joint (one degree of "
                     "freedom)", jn);
            return msg;
        }
        I->kind = 0; I->id = j;
        I->qadr = m->jnt_qposadr[j];
        I->dadr = m->jnt_dofadr[j];
        if (I->qadr < 0 || I->qadr >= m->nq || I->dadr < 0 || I->dadr >= m->nv)
            return "hystmech plugin: joint addresses out of range";
        /* the reference configuration: springref where given (nonzero), else qpos0 */
        I->ref = m->qpos_spring[I->qadr] != 0.0 ? m->qpos_spring[I->qadr] : m->qpos0[I->qadr];
    } else if (tn && *tn && !(jn && *jn)) {
        int t = mj_name2id(m, mjOBJ_TENDON, tn);
        if (t < 0 || t >= m->ntendon) {
            snprintf(msg, nmsg, "no tendon named '%s'", tn);
            return msg;
        }
        I->kind = 1; I->id = t; I->qadr = -1; I->dadr = -1;
        I->ref = m->tendon_length0[t];
    } else {
        return "give exactly one of the configs 'joint' and 'tendon'";
    }
    txt = hm_cfg(m, instance, "ref");
    if (txt && *txt) {
        if (hm_parse(txt, &val, 1, &cnt) < 0 || cnt != 1 || !isfinite(val)) {
            snprintf(msg, nmsg, "config 'ref' must be a finite number [m or rad] (got '%.60s')",
                     txt);
            return msg;
        }
        I->ref = val;
    }
    I->rtol = 1e-8;
    txt = hm_cfg(m, instance, "rtol");
    if (txt && *txt) {
        if (hm_parse(txt, &val, 1, &cnt) < 0 || cnt != 1 || !(val > 0.0 && val < 1.0)) {
            snprintf(msg, nmsg, "config 'rtol' must be in (0, 1) (got '%.60s')", txt);
            return msg;
        }
        I->rtol = val;
    }
    txt = hm_cfg(m, instance, "implicit_damping");
    if (txt && *txt) {
        double have = I->kind == 0 ? m->dof_damping[I->dadr] : m->tendon_damping[I->id];
        if (hm_parse(txt, &val, 1, &cnt) < 0 || cnt != 1 || !(val >= 0.0 && isfinite(val))) {
            snprintf(msg, nmsg, "config 'implicit_damping' must be in [0, inf) (got '%.60s')",
                     txt);
            return msg;
        }
        if (val > have * (1.0 + 1e-12)) {
            snprintf(msg, nmsg, "config 'implicit_damping' = %g exceeds the damping of %s "
                     "'%s' (%g): add it to that damping attribute", val,
                     I->kind == 0 ? "joint" : "tendon", I->kind == 0 ? jn : tn, have);
            return msg;
        }
        I->cimp = val;
    }
    /* a fast-transient law on a joint takes its step force at the joint's implicit
       velocity (hm_implicit_step), which needs the last step's unpredicted velocity
       change: one more double of state, saved and restored with the rest */
    I->has_e = I->has_mean && !I->has_sw && I->kind == 0 && I->cimp == 0.0;
    I->nstate = I->nx + 2 + I->has_e;
    return NULL;
}

static void hm_free(hm_inst_t *I)
{
    if (!I) return;
    free(I->p); free(I->x0); free(I->xt); free(I->xb); free(I->ej);
    free(I);
}

static void hm_fail_msg(const mjModel *m, int instance, const char *what, const char *e)
{
    mju_error("hystmech plugin instance '%s': %s%s", hm_inst_name(m, instance), what, e);
}

/* -- the plugin callbacks ----------------------------------------------------------- */
static int hm_nstate(const mjModel *m, int instance)
{
    hm_inst_t I;
    char msg[600];
    const char *e = hm_configure(m, instance, &I, msg, sizeof msg);
    int n;
    if (e) {
        hm_fail_msg(m, instance, "", e);
        return 0;
    }
    n = I.nstate;
    free(I.p); free(I.x0); free(I.xt); free(I.xb);
    return n;
}

#define HM_INST(d, i) ((hm_inst_t *)(d)->plugin_data[i])

static void hm_restart(const hm_inst_t *I, mjtNum *s)
{
    memcpy(s, I->x0, sizeof(double) * I->nx);
    s[I->nx] = NAN;            /* u_c: not started */
    s[I->nx + 1] = 0.0;        /* t_c */
    if (I->has_e) s[I->nx + 2] = 0.0;   /* e_v */
}

static int hm_init(const mjModel *m, mjData *d, int instance)
{
    char msg[600];
    hm_inst_t *I = (hm_inst_t *)malloc(sizeof(hm_inst_t));
    const char *e;
    if (!I) return -1;
    e = hm_configure(m, instance, I, msg, sizeof msg);
    if (!e && m->plugin_statenum[instance] != I->nstate)
        e = "plugin_statenum does not match the configuration (a model file from another "
            "build of the library?)";
    if (!e && (m->plugin_stateadr[instance] < 0
               || m->plugin_stateadr[instance] + I->nstate > m->npluginstate))
        e = "plugin_stateadr out of range";
    if (e) {
        mju_warning("hystmech plugin instance '%s': %s", hm_inst_name(m, instance), e);
        hm_free(I);
        d->plugin_data[instance] = 0;
        return -1;
    }
    I->nv = m->nv;
    I->ej = (double *)calloc(m->nv > 0 ? 2 * m->nv : 1, sizeof(double));
    if (!I->ej) { hm_free(I); d->plugin_data[instance] = 0; return -1; }
    d->plugin_data[instance] = (uintptr_t)I;
    return 0;
}

static void hm_destroy(mjData *d, int instance)
{
    hm_free(HM_INST(d, instance));
    d->plugin_data[instance] = 0;
}

static void hm_copy(mjData *dest, const mjModel *m, const mjData *src, int instance)
{
    const hm_inst_t *S = HM_INST(src, instance);
    hm_inst_t *I;
    (void)m;
    if (!S) { dest->plugin_data[instance] = 0; return; }
    I = (hm_inst_t *)malloc(sizeof(hm_inst_t));
    if (!I) mju_error("hystmech plugin: out of memory");
    *I = *S;
    I->p = (double *)malloc(sizeof(double) * (S->np > 0 ? S->np : 1));
    I->x0 = (double *)malloc(sizeof(double) * (S->nx > 0 ? S->nx : 1));
    I->xt = (double *)malloc(sizeof(double) * (S->nx > 0 ? 2 * S->nx : 1));
    I->xb = (double *)malloc(sizeof(double) * (S->nx > 0 ? S->nx : 1));
    if (!I->p || !I->x0 || !I->xt || !I->xb) mju_error("hystmech plugin: out of memory");
    memcpy(I->p, S->p, sizeof(double) * S->np);
    memcpy(I->x0, S->x0, sizeof(double) * S->nx);
    memcpy(I->xb, S->xb, sizeof(double) * S->nx);
    I->ej = (double *)calloc(S->nv > 0 ? 2 * S->nv : 1, sizeof(double));
    if (!I->ej) mju_error("hystmech plugin: out of memory");
    dest->plugin_data[instance] = (uintptr_t)I;
}

static void hm_reset(const mjModel *m, mjtNum *plugin_state, void *plugin_data, int instance)
{
    hm_inst_t *I = (hm_inst_t *)plugin_data;
    (void)m; (void)instance;
    if (I) { hm_restart(I, plugin_state); I->w_t = NAN; I->rk_ok = 0; }
}

/* the parts' kernels on their slices (components/combine.py) */
/* work budget of one kernel call (adaptive updates, hm_law.h): a state or input from
 * outside (e.g. fuzzed plugin_state) cannot make a step take unbounded time; running
 * out is a kernel failure (counted, reported once) */
#define HM_MJ_BUDGET 2000L

/* a single law (the common case) without the loop: these run on every step */
#define HM_HOT static inline __attribute__((always_inline))

HM_HOT void hm_adv(const hm_inst_t *I, double *x, double u0, double u1, double dt, double v)
{
    int i;
    if (I->nparts == 1) {
        hm_budget = HM_MJ_BUDGET;
        I->law[0]->adv(x, u0, u1, dt, v, I->p, I->rtol);
    } else {
        for (i = 0; i < I->nparts; i++) {
            hm_budget = HM_MJ_BUDGET;
            I->law[i]->adv(x + I->xo[i], u0, u1, dt, v, I->p + I->po[i], I->rtol);
        }
    }
    hm_budget = -1;
}

HM_HOT double hm_force(const hm_inst_t *I, const double *x, double u, double v)
{
    double F = 0.0;
    int i;
    if (I->nparts == 1) return I->law[0]->force(x, u, v, I->p);
    for (i = 0; i < I->nparts; i++) F += I->law[i]->force(x + I->xo[i], u, v, I->p + I->po[i]);
    return F;
}

static double hm_switch(const hm_inst_t *I, const double *x, double u, double dir)
{
    double best = dir * INFINITY, s;
    int i;
    for (i = 0; i < I->nparts; i++)
        if (I->law[i]->sw) {
            s = I->law[i]->sw(x + I->xo[i], u, dir, I->p + I->po[i]);
            if (dir * s < dir * best) best = s;
        }
    return best;
}

/* NULL or what is wrong with a state block s (written from outside); the common
 * case (all finite, no law check) without a call */
static const char *hm_bad_state_slow(const hm_inst_t *I, const mjtNum *s)
{
    int i;
    static HM_TLS char msg[160];
    for (i = 0; i < I->nx; i++)
        if (!isfinite(s[i])) return "non-finite law state";
    for (i = 0; i < I->nx; i++)
        if (!(fabs(s[i]) <= I->xb[i])) {
            snprintf(msg, sizeof msg, "law state x[%d] = %g outside the law's range "
                     "[-%g, %g] (from its parameters and initial state)", i, s[i], I->xb[i],
                     I->xb[i]);
            return msg;
        }
    if (!isfinite(s[I->nx + 1])) return "non-finite committed time";
    if (I->has_e && !isfinite(s[I->nx + 2])) return "non-finite velocity prediction";
    if (isinf(s[I->nx])) return "infinite committed input";
    for (i = 0; i < I->nparts; i++)
        if (I->law[i]->check) {
            const char *e = I->law[i]->check(s + I->xo[i], I->p + I->po[i]);
            if (e) return e;
        }
    return NULL;
}

static inline const char *hm_bad_state(const hm_inst_t *I, const mjtNum *s)
{
    double z = 0.0;
    int i;
    /* x·0 is 0 for a finite x and NaN for ±inf or NaN */
    int out = 0;
    for (i = 0; i < I->nx; i++) {
        z += s[i] * 0.0;
        out |= fabs(s[i]) > I->xb[i];
    }
    if (z != 0.0 || out || !isfinite(s[I->nx + 1]) || isinf(s[I->nx]) || I->has_check
        || (I->has_e && !isfinite(s[I->nx + 2])))
        return hm_bad_state_slow(I, s);
    return NULL;
}

static void hm_guard(const mjModel *m, mjData *d, int instance, hm_inst_t *I, mjtNum *s)
{
    const char *e = hm_bad_state(I, s);
    if (e) {
        mju_warning("hystmech plugin instance '%s' at t = %g: %s in plugin_state; the element "
                    "restarts from its initial state", I->name, d->time, e);
        hm_restart(I, s);
    }
    (void)m; (void)instance;
}

HM_HOT void hm_target(const mjModel *m, const mjData *d, const hm_inst_t *I, double *u, double *v)
{
    (void)m;
    if (I->kind == 0) {
        *u = d->qpos[I->qadr] - I->ref;
        *v = d->qvel[I->dadr];
    } else {
        *u = d->ten_length[I->id] - I->ref;
        *v = d->ten_velocity[I->id];
    }
}

/* segment from the committed (u_c, t_c) to (u, t): duration and mean velocity. A
 * displacement at an unchanged time (a finite-difference perturbation of qpos, e.g. in
 * mjd_transitionFD) is taken as travelled at the current speed, in its own direction,
 * so that rate-dependent laws see a tangent in both directions */
HM_HOT void hm_segment(double uc, double tc, double u, double t, double vnow, double *dt,
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

/* a kernel that could not continue (hm_fail, e.g. a Preisach memory stack overflow) is
 * counted per instance and reported once through mju_warning */
HM_HOT void hm_check_fail(hm_inst_t *I)
{
    const char *f = hm_fail;
    if (f) {
        hm_fail = NULL;
        I->failures++;
        if (!I->warned) {
            I->warned = 1;
            mju_warning("hystmech plugin instance '%s': %s", I->name, f);
        }
    }
}

HM_HOT int hm_windowed(const mjModel *m, const hm_inst_t *I)
{
    return (I->has_sw || I->has_mean) && m->opt.integrator != mjINT_RK4;
}

HM_HOT int hm_inside(double w, double a, double b, double dir)
{
    return dir * (w - a) > 0.0 && dir * (b - w) > 0.0;
}

/* mean force over the piece a -> b (no switch point inside) in the time T, advancing x
 * along it: the exact mean of the parts with a mean kernel (LuGre: its σ1·ẋ transient
 * may be much shorter than T), the midpoint rule for the others */
static double hm_piece(const hm_inst_t *I, double *x, double a, double b, double T,
                       double vs, double vf, double *stiff)
{
    double mid = 0.5 * (a + b), F = 0.0, y;
    int i;
    *stiff = 0.0;
    if (!I->has_mean) {
        hm_adv(I, x, a, mid, 0.5 * T, vs);
        F = hm_force(I, x, mid, vf);
        hm_adv(I, x, mid, b, 0.5 * T, vs);
        return F;
    }
    for (i = 0; i < I->nparts; i++) {
        const hm_law_t *L = I->law[i];
        double *xi = x + I->xo[i];
        const double *pi = I->p + I->po[i];
        hm_budget = HM_MJ_BUDGET;
        if (L->mean) {
            F += L->mean(xi, a, b, T, vs, vf, pi, I->rtol, &y, NULL);
            if (y > *stiff) *stiff = y;
        } else {
            L->adv(xi, a, mid, 0.5 * T, vs, pi, I->rtol);
            F += L->force(xi, mid, vf, pi);
            hm_budget = HM_MJ_BUDGET;
            L->adv(xi, mid, b, 0.5 * T, vs, pi, I->rtol);
        }
    }
    hm_budget = -1;
    return F;
}

/* mean force over the monotone segment a -> b travelled at the constant speed vs in
 * the time T, advancing x along it: cut at the switch points, hm_piece on the pieces
 * (the C twin of plugins/_switch.py mean_force) */
static double hm_mean_force(const hm_inst_t *I, double *x, double a, double b, double T,
                            double vs, double vf, double *stiff)
{
    double dir = b > a ? 1.0 : -1.0, cur = a, acc = 0.0, nxt, y;
    int k;
    if (!I->has_sw) return hm_piece(I, x, a, b, T, vs, vf, stiff);     /* one piece */
    *stiff = 0.0;
    for (k = 0; k < 64 && cur != b; k++) {
        double w = I->has_sw ? hm_switch(I, x, cur, dir) : dir * INFINITY;
        nxt = hm_inside(w, cur, b, dir) ? w : b;
        acc += (nxt - cur) * hm_piece(I, x, cur, nxt, T * (nxt - cur) / (b - a), vs, vf, &y);
        if (y > *stiff) *stiff = y;
        cur = nxt;
    }
    if (cur != b) {
        hm_adv(I, x, cur, b, T * (b - cur) / (b - a), vs);
        acc += (b - cur) * hm_force(I, x, b, vf);
    }
    return acc / (b - a);
}

/* the committed time of the windowed scheme: the previous step's midpoint (the same
 * expression in advance() and compute(), so the comparison is exact) */
static double hm_mid_time(const mjModel *m, const mjData *d)
{
    return d->time - 0.5 * m->opt.timestep;
}

/* a not-started element: 1 if this evaluation is a later RK4 stage of the step that
 * began at the recorded (u_start, t_start) (stage times t_start + h/2 and t_start + h,
 * as MuJoCo's mj_RungeKutta sets them), else it is a step's start: recorded, 0 */
static int hm_start(const mjModel *m, const mjData *d, hm_inst_t *I, double u)
{
    double h = m->opt.timestep;
    if (m->opt.integrator == mjINT_RK4 && I->has_start
        && (d->time == I->t_start + 0.5 * h || d->time == I->t_start + h))
        return 1;
    I->has_start = 1;
    I->u_start = u;
    I->t_start = d->time;
    return 0;
}

/* RK4 and a law with a fast transient (a mean kernel): MuJoCo's RK4 weighs its stage
 * forces at t, t + h/2 (twice) and t + h by 1/6, 1/3, 1/3, 1/6, i.e. it integrates
 * the force over the step by Simpson's rule. When the law relaxes faster than the step
 * (stiffness y·h/w > 1 over the stage's window; LuGre sliding at v: σ0|v|h/g(v) > 1)
 * no point value stands for the step: each stage hands over the exact mean over its
 * share of the step, [0, h/6], [h/6, 5h/6], [5h/6, h] (the weights times h; stages 2
 * and 3 share the middle one), starting where the chord from the committed point to
 * the stage's point is at the window's start and going on at the stage's velocity; the
 * shares add up to the step's impulse along the trial path. A slow transient (y·h/w <=
 * 1, e.g. sticking) keeps RK4's point values and its fourth order. NAN: not a stage
 * (or a slow transient): the pointwise force applies. */
static double hm_rk4_mean(const mjModel *m, const mjData *d, hm_inst_t *I, const mjtNum *s,
                          double uc, double tc, double u, double v)
{
    double h = m->opt.timestep, w0, w1, ua, F, y, dt, vs;
    if (d->time == tc) { w0 = 0.0; w1 = h / 6.0; }
    else if (d->time == tc + 0.5 * h) { w0 = h / 6.0; w1 = 5.0 * h / 6.0; }
    else if (d->time == tc + h) { w0 = 5.0 * h / 6.0; w1 = h; }
    else return NAN;
    memcpy(I->xt, s, sizeof(double) * I->nx);
    ua = w0 == 0.0 ? uc : uc + (u - uc) * (w0 / (d->time - tc));
    if (w0 > 0.0) {
        hm_segment(uc, tc, ua, tc + w0, v, &dt, &vs);
        hm_adv(I, I->xt, uc, ua, dt, vs);
    }
    if (v == 0.0) return NAN;
    F = hm_mean_force(I, I->xt, ua, ua + (w1 - w0) * v, w1 - w0, v, v, &y);
    hm_check_fail(I);
    return y * h / (w1 - w0) > 1.0 ? F : NAN;
}

/* β/h of the element's joint: Σ_k |(M⁻¹)_jk|, the row of M⁻¹ for the joint's DOF j in
 * the current configuration, from the L'·D·L factor of the inertia MuJoCo made at the
 * position stage (before the passive forces; m->M_rowadr/M_colind: each row holds its
 * ancestors' columns ascending, the diagonal last); 0 on a tendon. The solve is
 * mj_solveLD's for the one right-hand side e_j, written out so that it starts at row j
 * (the rows below j of L⁻ᵀ·e_j are zero) and runs the back substitution as one plain
 * loop: 29 % of a 20-hinge chain's instructions went to MuJoCo's general solve. The
 * order of the sums may differ from mj_solveM's (round-off). */
static double hm_minv(const mjModel *m, mjData *d, hm_inst_t *I)
{
    const int *rnz = m->M_rownnz, *radr = m->M_rowadr, *col = m->M_colind;
    const double *L = d->qLD, *Di = d->qLDiagInv;
    double *x, r, xi;
    int nv = m->nv, i, a, e, lo;
    if (I->kind != 0 || !I->ej || I->nv != nv) return 0.0;
    if (nv == 1) return d->qLDiagInv[0];
    x = I->ej;
    memset(x, 0, sizeof(double) * nv);
    x[I->dadr] = 1.0;
    lo = I->dadr;
    for (i = I->dadr; i > 0; i--) {             /* x <- L^-T x */
        if (!(xi = x[i])) continue;
        for (a = radr[i], e = a + rnz[i] - 1; a < e; a++) {
            x[col[a]] -= L[a] * xi;
            if (col[a] < lo) lo = col[a];
        }
    }
    for (i = lo; i < nv; i++) x[i] *= Di[i];     /* x <- D^-1 x (zero below lo) */
    r = fabs(x[lo]);
    for (i = lo + 1; i < nv; i++) {              /* x <- L^-1 x */
        double sm = 0.0;
        for (a = radr[i], e = a + rnz[i] - 1; a < e; a++) sm += L[a] * x[col[a]];
        x[i] -= sm;
        r += fabs(x[i]);
    }
    return r > 0.0 && isfinite(r) ? r : 0.0;
}

/* the step force of a fast-transient law if the front half of the window [t, t + h/2]
 * (whole: the step [t, t + h]) is travelled at the velocity w from the trial state xs
 * at u; Fb the back half's mean (NAN: none) */
static double hm_step_force(const hm_inst_t *I, const double *xs, double u, double w,
                            double hf, double Fb, int whole, double *D)
{
    double y, Ff, T = whole ? 2.0 * hf : hf, d = NAN;
    if (I->nx == 1) I->xt[0] = xs[0];
    else memcpy(I->xt, xs, sizeof(double) * I->nx);
    if (I->nparts == 1 && I->law[0]->mean) {
        /* hm_piece's one-part case without its loop (3-4 evaluations a step): the same
           call, the same sum from 0.0, so the same number */
        hm_budget = HM_MJ_BUDGET;
        Ff = 0.0;
        Ff += I->law[0]->mean(I->xt, u, u + T * w, T, w, w, I->p, I->rtol, &y, D ? &d : NULL);
        hm_budget = -1;
    } else {
        Ff = hm_piece(I, I->xt, u, u + T * w, T, w, w, &y);
    }
    if (D) *D = whole ? d : 0.5 * d;      /* dF/dw of the step force (NAN: not known) */
    return whole ? Ff : 0.5 * (Fb + Ff);
}

/* Passive step force of a fast-transient law (LuGre's bristles) on a joint, under the
 * semi-implicit integrators: the force F(w) of the step travelled at the velocity w the
 * joint reaches under it, w = v − β·F(w), β = h·(M⁻¹)_jj (the joint's own response;
 * the other forces and joints stay explicit, as MuJoCo's implicit damping takes its
 * velocity derivative). At the step's start velocity (F(v), explicit) a sticking
 * bristle is a spring of stiffness σ0 with ω·h up to ~35 on a light link, which the
 * explicit force overshoots every step, and the saturated friction flips sign with the
 * velocity: the joint chatters and gains energy. The root of w (bracketed between v
 * and the explicit prediction v − β·F(v), then Illinois regula falsi) is the backward
 * Euler step of the element's own degree of freedom: a sticking bristle is then the
 * spring through the step's mean displacement, unconditionally stable, and a slipping
 * contact never reverses the joint by itself (F·w >= 0 when F is monotone in w: the
 * element only takes energy out). Stribeck's negative slope may give several roots: the
 * first one from v towards the explicit prediction is taken. xs: the trial state at u
 * (copied to xt + nx, the iteration's base). */
static double hm_implicit_step(hm_inst_t *I, const double *xs, double u, double v0,
                               double e, double hf, double Fb, int whole, double beta,
                               int gate)
{
    double *base = I->xt + I->nx, w0, w1, w2, F0, F1, F2, G0, G1, G2, tol, D0, D1;
    double v = v0 + e;
    int k;
    if (xs != base) memcpy(base, xs, sizeof(double) * I->nx);
    I->w_pred = v0;
    /* from the joint's velocity now: of several roots (Stribeck) the one the motion
       continues on, not the slip branch the prediction v may point into */
    w0 = v0;
    F0 = hm_step_force(I, base, u, w0, hf, Fb, whole, &D0);
    G0 = w0 - v + beta * F0;
    if (!(beta > 0.0) || !isfinite(F0)) return F0;
    /* gate: where the element is not stiff on this step (its force changes by less
       than itself over the explicit step's own velocity change β·F: β·dF/dw < 1, e.g.
       1 kg sliding at the default step, or a sticking bristle with ω·h < 1.4) the
       explicit force is stable: RK4 (gate 1, NAN) resolves it by its stages to fourth
       order, the semi-implicit integrators (gate 2) take F(v) (no iteration) */
    if (gate) {
        F1 = hm_step_force(I, base, u, v0 - beta * F0, hf, Fb, whole, NULL);
        if (!(fabs(F1 - F0) >= fabs(F0))) {
            I->w_pred = v0 - beta * F0;
            return gate == 1 ? NAN : F0;
        }
    }
    /* converged: G within 1e-12 of the velocities involved (the force then within
       1e-12·(|v| + β|F|)/β of the root's, far below what the step's O(h) share moves) */
    tol = 1e-12 * (fabs(v) + fabs(w0) + beta * fabs(F0)) + 1e-300;
    if (fabs(G0) <= tol) return F0;
    /* Newton's step where the law gives dF/dw (LuGre, Dahl; G' = 1 + β·dF/dw > 0: G
       increasing there), else the explicit prediction; a sticking joint's G is
       nearly linear: converged at the next evaluation */
    w1 = isfinite(D0) && 1.0 + beta * D0 > 0.0 ? w0 - G0 / (1.0 + beta * D0) : v - beta * F0;
    if (w1 == w0) return F0;
    if (w0 * w1 < 0.0) {
        /* the explicit prediction crosses w = 0, where the laws' rates kink (|w|): a
           sticking joint's root lies within rounding of it, and the secant across the
           kink crawled (4-5 evaluations a step). w = 0 first: converged there, or it
           closes the bracket on one smooth side, or it becomes the bracket's start */
        F2 = hm_step_force(I, base, u, 0.0, hf, Fb, whole, NULL);
        G2 = -v + beta * F2;
        if (fabs(G2) <= 1e-12 * (fabs(v) + beta * fabs(F2)) + 1e-300) {
            I->w_pred = -(v - v0);
            return F2;
        }
        if (G0 * G2 <= 0.0) { w1 = 0.0; F1 = F2; G1 = G2; goto bracketed; }
        w0 = 0.0; F0 = F2; G0 = G2;
    }
    F1 = hm_step_force(I, base, u, w1, hf, Fb, whole, &D1);
    G1 = w1 - v + beta * F1;
    if (fabs(G1) <= 1e-12 * (fabs(v) + fabs(w1) + beta * fabs(F1)) + 1e-300) goto done;
    if (G0 * G1 > 0.0 && isfinite(D1) && 1.0 + beta * D1 > 0.0) {
        /* Newton again from w1 (short of the root on the same side) */
        w2 = w1 - G1 / (1.0 + beta * D1);
        F2 = hm_step_force(I, base, u, w2, hf, Fb, whole, NULL);
        G2 = w2 - v + beta * F2;
        w0 = w1; F0 = F1; G0 = G1;
        w1 = w2; F1 = F2; G1 = G2;
        if (fabs(G1) <= 1e-12 * (fabs(v) + fabs(w1) + beta * fabs(F1)) + 1e-300) goto done;
    }
    for (k = 0; k < 40 && G0 * G1 > 0.0 && isfinite(G1); k++) {   /* widen the bracket */
        w2 = w1 + 2.0 * (w1 - w0);
        w0 = w1; F0 = F1; G0 = G1;
        w1 = w2;
        F1 = hm_step_force(I, base, u, w1, hf, Fb, whole, NULL);
        G1 = w1 - v + beta * F1;
    }
    if (!(G0 * G1 <= 0.0)) return hm_step_force(I, base, u, v, hf, Fb, whole, NULL);
bracketed:
    for (k = 0; k < 100 && G1 != 0.0; k++) {
        /* converged (as above; a linear G, a sticking bristle, is solved by the first
           secant step) or the bracket closed */
        tol = 1e-12 * (fabs(v) + fabs(w1) + beta * fabs(F1)) + 1e-300;
        if (fabs(G1) <= tol || fabs(w1 - w0) <= tol) break;
        w2 = w1 - G1 * (w1 - w0) / (G1 - G0);
        if (!(w2 != w1 && w2 != w0 && (w2 - w0) * (w2 - w1) < 0.0)) w2 = 0.5 * (w0 + w1);
        F2 = hm_step_force(I, base, u, w2, hf, Fb, whole, NULL);
        G2 = w2 - v + beta * F2;
        if (G2 * G1 < 0.0) { w0 = w1; F0 = F1; G0 = G1; }
        else G0 *= 0.5;                    /* Illinois: the kept end's value halved */
        w1 = w2; F1 = F2; G1 = G2;
    }
done:
    (void)F0;
    /* the committed path is MuJoCo's: advance() follows the velocity it computes */
    I->w_pred = w1 - (v - v0);             /* the element's own share of the change */
    return F1;
}

HM_HOT void hm_commit_to(hm_inst_t *I, double *x, double uc, double tc, double u, double t,
                         double v);

/* after the integration: what the last implicit step did not predict of the joint's
 * velocity (the other forces and joints), for the next step's prediction; 0 when the
 * last step was not an implicit one */
HM_HOT void hm_note_velocity(const mjModel *m, const mjData *d, hm_inst_t *I, mjtNum *s)
{
    double w;
    if (!I->has_e || isnan(I->w_t)) return;    /* noted already (generic fallback) */
    w = d->qvel[I->dadr];
    /* RK4: the chord of the step from its start (committed there) */
    if (m->opt.integrator == mjINT_RK4 && I->kind == 0)
        w = (d->qpos[I->qadr] - I->ref - s[I->nx]) / (d->time - s[I->nx + 1]);
    s[I->nx + 2] = I->w_t == d->time && isfinite(w) ? w - I->w_pred : 0.0;
    I->w_t = NAN;
}

/* 1 where the step force is taken at the joint's implicit velocity (hm_implicit_step) */
HM_HOT int hm_implicit(const mjModel *m, const hm_inst_t *I)
{
    return I->has_e && m->opt.integrator != mjINT_RK4;
}

/* the element's force at the current configuration (trial state: a copy of the
 * committed state advanced from (u_c, t_c) to (u, t)); NAN when the instance is
 * unusable. Windowed (switch laws under the semi-implicit integrators): the committed
 * point is the previous step's midpoint, so the trial's segment u_c -> u is the back
 * half of this step's window [t - h/2, t + h/2]; its mean force is taken (cut at the
 * switch points) when a switch lies in it, and the front half u -> u + h·v/2 likewise */
static __attribute__((noinline)) double hm_eval(const mjModel *m, mjData *d, int instance,
                                                hm_inst_t *I, double *v_out)
{
    mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];
    const double *xs = s;
    double u, v, dt, vs, F, uc, tc, Fb = NAN, y;
    int win;
    hm_guard(m, d, instance, I, s);
    hm_target(m, d, I, &u, &v);
    *v_out = v;
    if (!isfinite(u) || !isfinite(v)) return NAN;      /* MuJoCo resets a bad qpos/qvel */
    uc = s[I->nx]; tc = s[I->nx + 1];
    win = hm_windowed(m, I);
    /* not started (u_c = nan): the initial state at the current u, whatever it is (a
       position set after mj_forward and before the first step included); nothing is
       written to plugin_state here, the first advance() commits. RK4's later stages of
       that first step advance the initial state from the step's start like every
       other step's stages (else the first step's stage forces would hold x0: a
       second-order error) */
    if (isnan(uc) && hm_start(m, d, I, u)) {
        uc = I->u_start;
        tc = I->t_start;
    }
    if (I->has_e && m->opt.integrator == mjINT_RK4) {
        /* RK4 and a fast-transient law stiff on this step (a sticking bristle: ω·h up to
           ~35 on a light link, beyond RK4's stability limit 2.8): at the step's first
           stage, the implicit step force over [t, t + h] (hm_implicit_step), handed over
           at every stage, so that RK4's weights add up to its impulse; not stiff: RK4's
           stage forces below */
        double h = m->opt.timestep;
        if (isnan(uc) || d->time == tc) {
            const double *x1 = s;
            if (!isnan(uc) && u != uc) {
                memcpy(I->xt + I->nx, s, sizeof(double) * I->nx);
                hm_commit_to(I, I->xt + I->nx, uc, tc, u, d->time, v);
                x1 = I->xt + I->nx;
            }
            /* RK4 with a constant stage force moves along the chord (v + v+)/2 = v − β/2·F:
               the implicit midpoint rule for the element's own degree of freedom */
            I->rk_F = hm_implicit_step(I, x1, u, v, s[I->nx + 2], 0.5 * h, NAN, 1,
                                       0.5 * h * hm_minv(m, d, I), 1);
            I->w_t = isnan(I->rk_F) ? -INFINITY : d->time + h;
            hm_check_fail(I);
            I->rk_t = d->time;
            I->rk_ok = 1;
            if (!isnan(I->rk_F)) return I->rk_F;
        } else if (I->rk_ok && tc == I->rk_t && !isnan(I->rk_F)
                   && (d->time == tc + 0.5 * h || d->time == tc + h)) {
            return I->rk_F;
        }
    }
    if (I->has_mean && m->opt.integrator == mjINT_RK4) {
        /* a fresh element's first stage: the step starts here */
        double Fm = isnan(uc) ? hm_rk4_mean(m, d, I, s, u, d->time, u, v)
                              : hm_rk4_mean(m, d, I, s, uc, tc, u, v);
        if (!isnan(Fm)) return Fm;
    }
    if (!isnan(uc) && (u != uc || d->time != tc)) {
        memcpy(I->xt, s, sizeof(double) * I->nx);
        hm_segment(uc, tc, u, d->time, v, &dt, &vs);
        if (win && u != uc && tc == hm_mid_time(m, d)) {
            double dir = u > uc ? 1.0 : -1.0;
            if (I->has_mean || hm_inside(hm_switch(I, s, uc, dir), uc, u, dir))
                Fb = hm_mean_force(I, I->xt, uc, u, dt, vs, v, &y);
            else
                hm_adv(I, I->xt, uc, u, dt, vs);
        } else {
            hm_adv(I, I->xt, uc, u, dt, vs);
        }
        hm_check_fail(I);
        xs = I->xt;
    }
    if (hm_implicit(m, I)) {
        hm_check_fail(I);
        F = hm_implicit_step(I, xs, u, v, s[I->nx + 2], 0.5 * m->opt.timestep, Fb, isnan(Fb),
                             m->opt.timestep * hm_minv(m, d, I), 0);
        I->w_t = d->time + m->opt.timestep;
        hm_check_fail(I);
        return F;
    }
    F = hm_force(I, xs, u, v);
    if (win) {
        double dir = v > 0.0 ? 1.0 : -1.0, uf = u + 0.5 * m->opt.timestep * v;
        int fwd = v != 0.0 && (I->has_mean || hm_inside(hm_switch(I, xs, u, dir), u, uf, dir));
        if (fwd || !isnan(Fb)) {
            double Ff = F, hf = 0.5 * m->opt.timestep;
            /* no back half (a fresh element, which starts at this step, or a committed
               point off the window) and a fast transient: the mean over the step ahead,
               [t, t + h] (its pointwise force would stand for half the window) */
            int whole = isnan(Fb) && I->has_mean;
            if (whole) hf *= 2.0;
            if (v != 0.0) {
                if (xs != I->xt) memcpy(I->xt, xs, sizeof(double) * I->nx);
                Ff = hm_mean_force(I, I->xt, u, u + hf * v, hf, v, v, &y);
                hm_check_fail(I);
            }
            F = whole ? Ff : 0.5 * ((isnan(Fb) ? F : Fb) + Ff);
        }
    }
    return F;
}

/* add the element's force F at velocity v to qfrc_passive (a non-finite F, from a state
 * or configuration MuJoCo is about to reset, is not applied) */
HM_HOT void hm_apply(const mjModel *m, mjData *d, const hm_inst_t *I, double F, double v)
{
    if (!isfinite(F)) return;
    F -= I->cimp * v;          /* the part MuJoCo applies implicitly as joint damping */
    if (I->kind == 0) {
        d->qfrc_passive[I->dadr] -= F;
    } else {
        int t = I->id, k, adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
        for (k = 0; k < nnz; k++) {
            int c = m->ten_J_colind[adr + k];
            if (c >= 0 && c < m->nv) d->qfrc_passive[c] -= F * d->ten_J[adr + k];
        }
    }
}

static double hm_force_now(const mjModel *m, const mjData *d, int instance, int own_tv);

/* the sensor capability: every <sensor><plugin instance="..."/> of this instance reads
 * [F, x] — the element's force at the current u and velocity (hm_mj_force, the Python
 * element_force) and its committed law state (element_state); nan when the instance is
 * unusable. Stage: positions (see hm_register). */
static int hm_nsensordata(const mjModel *m, int instance, int sensor_id)
{
    hm_inst_t I;
    char msg[600];
    int n;
    (void)sensor_id;
    if (hm_configure(m, instance, &I, msg, sizeof msg)) return 1;
    n = 1 + I.nx;
    free(I.p); free(I.x0); free(I.xt); free(I.xb);
    return n;
}

static void hm_sensor(const mjModel *m, mjData *d, int instance)
{
    const hm_inst_t *I = HM_INST(d, instance);
    int k, j, dim, have = 0;
    double F = NAN;
    for (k = 0; k < m->nsensor; k++) {
        mjtNum *out;
        if (m->sensor_type[k] != mjSENS_PLUGIN || m->sensor_plugin[k] != instance) continue;
        if (!have && I) F = hm_force_now(m, d, instance, 1);
        have = 1;
        out = d->sensordata + m->sensor_adr[k];
        dim = m->sensor_dim[k];
        if (dim > 0) out[0] = F;
        for (j = 1; j < dim; j++)
            out[j] = I && j - 1 < I->nx ? d->plugin_state[m->plugin_stateadr[instance] + j - 1]
                                        : NAN;
    }
}

static void hm_compute(const mjModel *m, mjData *d, int instance, int capability_bit)
{
    hm_inst_t *I = HM_INST(d, instance);
    double v, F;
    if (capability_bit & mjPLUGIN_SENSOR) { hm_sensor(m, d, instance); return; }
    if (!(capability_bit & mjPLUGIN_PASSIVE) || !I) return;
    F = hm_eval(m, d, instance, I, &v);
    hm_apply(m, d, I, F, v);
}

/* commit x along the linear input segment (uc, tc) -> (u, t) */
HM_HOT void hm_commit_to(hm_inst_t *I, double *x, double uc, double tc, double u, double t,
                         double v)
{
    double dt, vs;
    if (u == uc && t == tc) return;
    hm_segment(uc, tc, u, t, v, &dt, &vs);
    hm_adv(I, x, uc, u, dt, vs);
}

/* once per step, after the integration (qpos, qvel and time of the new step; tendon
 * lengths not recomputed yet: still the step's initial ones). Commits the law state to
 * the new u, or, windowed, along the committed point -> the step's initial u -> the
 * step's midpoint (semi-implicit integrators: q+ = q + h·v+, a straight line at v+) */
static void hm_advance(const mjModel *m, mjData *d, int instance)
{
    hm_inst_t *I = HM_INST(d, instance);
    mjtNum *s;
    double u, v, u0, uc, tc, h = m->opt.timestep;
    if (!I) return;
    s = d->plugin_state + m->plugin_stateadr[instance];
    hm_note_velocity(m, d, I, s);
    s = d->plugin_state + m->plugin_stateadr[instance];
    if (hm_bad_state(I, s)) { hm_guard(m, d, instance, I, s); return; }
    uc = s[I->nx]; tc = s[I->nx + 1];
    if (I->kind == 0) {
        u = d->qpos[I->qadr] - I->ref;
        v = d->qvel[I->dadr];
        u0 = u - h * v;
    } else {
        int t = I->id, k, adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
        v = 0.0;
        for (k = 0; k < nnz; k++) {
            int c = m->ten_J_colind[adr + k];
            if (c >= 0 && c < m->nv) v += d->ten_J[adr + k] * d->qvel[c];
        }
        u0 = d->ten_length[I->id] - I->ref;
        u = NAN;
    }
    if (isnan(uc)) {
        /* the first step: the element starts at the step's initial u, recorded at its
           first evaluation (else, e.g. a state set between mj_step1 and mj_step2, the
           straight path back at the final velocity) */
        if (I->has_start && I->t_start < d->time && d->time - I->t_start <= h * (1.0 + 1e-9))
            u0 = I->u_start;
        uc = u0;
        tc = d->time - h;
    }
    if (hm_windowed(m, I)) {
        double um = I->kind == 0 ? u - 0.5 * h * v : u0 + 0.5 * h * v, tm = hm_mid_time(m, d);
        if (!isfinite(u0) || !isfinite(v) || !isfinite(uc)) return;
        hm_commit_to(I, s, uc, tc, u0, d->time - h, v);
        hm_commit_to(I, s, u0, d->time - h, um, tm, v);
        hm_check_fail(I);
        s[I->nx] = um;
        s[I->nx + 1] = tm;
        return;
    }
    if (I->kind == 1) u = uc + (d->time - tc) * v;
    if (!isfinite(u) || !isfinite(v) || !isfinite(uc)) return;
    hm_commit_to(I, s, uc, tc, u, d->time, v);
    hm_check_fail(I);
    s[I->nx] = u;
    s[I->nx + 1] = d->time;
}

/* -- the common case of a plain law, with its kernels called directly ------------------
 * A law without switch points and without a state check ("plain": its instance is
 * I->nx = NX states, one part, never windowed) gets its own compute/advance callbacks:
 * the generic ones' common case with the law's kernels called directly (inlinable) and
 * NX a constant, the rest handed to the generic callbacks. Common case: everything
 * finite (the committed block [x, u_c, t_c], u, v; u_c finite: the element has
 * started); compute() at its committed point (the semi-implicit integrators evaluate
 * the state that advance() just committed, at this very u and time), advance() on a
 * joint. There the generic callbacks do exactly this: same kernels, same arguments,
 * same order. */

/* 1 if the NX + 2 doubles of s and u, v are all finite (x·0 is 0 for a finite x and
 * NaN for ±inf or NaN) and the law state is inside its range xb */
HM_HOT int hm_all_finite(int NX, const mjtNum *s, double u, double v, const double *xb)
{
    double z = u * 0.0 + v * 0.0;
    int i, in = 1;
    for (i = 0; i < NX + 2; i++) z += s[i] * 0.0;
    for (i = 0; i < NX; i++) in &= fabs(s[i]) <= xb[i];
    return z == 0.0 && in;
}

#define HM_PLAIN_CALLBACKS(P, NX)                                                        \
static void hm_compute_##P(const mjModel *m, mjData *d, int instance, int capability_bit)\
{                                                                                        \
    hm_inst_t *I = HM_INST(d, instance);                                                 \
    if (!(capability_bit & mjPLUGIN_PASSIVE) && !m->nsensor) return;  /* no sensor */    \
    if ((capability_bit & mjPLUGIN_PASSIVE) && I && I->nparts == 1 && I->law[0]->force == P##_force) { \
        const mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];                \
        double u, v;                                                                     \
        hm_target(m, d, I, &u, &v);                                                      \
        if (u == s[NX] && d->time == s[NX + 1] && hm_all_finite(NX, s, u, v, I->xb)) {          \
            hm_apply(m, d, I, P##_force(s, u, v, I->p), v);                              \
            return;                                                                      \
        }                                                                                \
    }                                                                                    \
    hm_compute(m, d, instance, capability_bit);                                          \
}                                                                                        \
static void hm_advance_##P(const mjModel *m, mjData *d, int instance)                    \
{                                                                                        \
    hm_inst_t *I = HM_INST(d, instance);                                                 \
    if (I && I->kind == 0 && I->nparts == 1 && I->law[0]->force == P##_force) {      \
        mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];                      \
        double u = d->qpos[I->qadr] - I->ref, v = d->qvel[I->dadr], dt, vs;              \
        if (hm_all_finite(NX, s, u, v, I->xb)) {                                                \
            if (u != s[NX] || d->time != s[NX + 1]) {                                    \
                hm_segment(s[NX], s[NX + 1], u, d->time, v, &dt, &vs);                   \
                hm_budget = HM_MJ_BUDGET;                                                \
                P##_advance(s, s[NX], u, dt, vs, I->p, I->rtol);                         \
                hm_budget = -1;                                                          \
                hm_check_fail(I);                                                        \
            }                                                                            \
            s[NX] = u;                                                                   \
            s[NX + 1] = d->time;                                                         \
            return;                                                                      \
        }                                                                                \
    }                                                                                    \
    hm_advance(m, d, instance);                                                          \
}
/* A law with a mean kernel and no switch points or state check (LuGre), one part, on a
 * joint, under the semi-implicit integrators, started, everything finite and in range,
 * committed at the last step's midpoint and moving: the generic callbacks' windowed case
 * (hm_eval: the back half's mean from the committed midpoint, then the front half's;
 * hm_advance: commit along the step to its midpoint) with the law's kernels called
 * directly — the same calls in the same order, so the same numbers bit for bit. */
#define HM_MEAN_CALLBACKS(P, NX)                                                         \
static void hm_compute_##P(const mjModel *m, mjData *d, int instance, int capability_bit)\
{                                                                                        \
    hm_inst_t *I = HM_INST(d, instance);                                                 \
    if (!(capability_bit & mjPLUGIN_PASSIVE) && !m->nsensor) return;  /* no sensor */    \
    if ((capability_bit & mjPLUGIN_PASSIVE) && I && I->kind == 0 && I->nparts == 1       \
        && I->law[0]->force == P##_force && m->opt.integrator != mjINT_RK4) {            \
        const mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];                \
        double u, v, dt, vs, Fb, Ff, y, hf = 0.5 * m->opt.timestep;                      \
        hm_target(m, d, I, &u, &v);                                                      \
        if (s[NX + 1] == hm_mid_time(m, d) && u != s[NX] && v != 0.0                     \
            && hm_all_finite(NX, s, u, v, I->xb) && (!I->has_e || isfinite(s[NX + 2]))) {\
            memcpy(I->xt, s, sizeof(double) * NX);                                       \
            hm_segment(s[NX], s[NX + 1], u, d->time, v, &dt, &vs);                       \
            Fb = P##_mean(I->xt, s[NX], u, dt, vs, v, I->p, I->rtol, &y, NULL);          \
            if (NX == 1 && dt > 0.0) {   /* the back half's end: advance() reuses it */   \
                I->c_x0 = s[0]; I->c_uc = s[NX]; I->c_tc = s[NX + 1];                   \
                I->c_u = u; I->c_t = d->time; I->c_x = I->xt[0]; I->c_ok = 1;           \
            }                                                                            \
            if (hm_implicit(m, I)) {                                                     \
                Ff = hm_implicit_step(I, I->xt, u, v, s[NX + 2], hf, Fb, 0,              \
                                      m->opt.timestep * hm_minv(m, d, I), 0);            \
                I->w_t = d->time + m->opt.timestep;                                      \
                hm_check_fail(I);                                                        \
                hm_apply(m, d, I, Ff, v);                                                \
                return;                                                                  \
            }                                                                            \
            Ff = P##_mean(I->xt, u, u + hf * v, hf, v, v, I->p, I->rtol, &y, NULL);      \
            hm_apply(m, d, I, 0.5 * (Fb + Ff), v);                                       \
            return;                                                                      \
        }                                                                                \
    }                                                                                    \
    hm_compute(m, d, instance, capability_bit);                                          \
}                                                                                        \
static void hm_advance_##P(const mjModel *m, mjData *d, int instance)                    \
{                                                                                        \
    hm_inst_t *I = HM_INST(d, instance);                                                 \
    if (I) hm_note_velocity(m, d, I, d->plugin_state + m->plugin_stateadr[instance]);    \
    if (I && I->kind == 0 && I->nparts == 1 && I->law[0]->force == P##_force             \
        && m->opt.integrator != mjINT_RK4) {                                             \
        mjtNum *s = d->plugin_state + m->plugin_stateadr[instance];                      \
        double h = m->opt.timestep, u = d->qpos[I->qadr] - I->ref, v = d->qvel[I->dadr]; \
        double u0 = u - h * v, um = u - 0.5 * h * v, tm = hm_mid_time(m, d), dt, vs;     \
        if (hm_all_finite(NX, s, u, v, I->xb) && isfinite(u0)) {                         \
            hm_budget = HM_MJ_BUDGET;                                                    \
            if (NX == 1 && I->c_ok && u0 == I->c_u && d->time - h == I->c_t              \
                && s[0] == I->c_x0 && s[NX] == I->c_uc && s[NX + 1] == I->c_tc) {        \
                s[0] = I->c_x;   /* compute()'s back half: the same call's result */     \
            } else if (u0 != s[NX] || d->time - h != s[NX + 1]) {                        \
                hm_segment(s[NX], s[NX + 1], u0, d->time - h, v, &dt, &vs);              \
                P##_advance(s, s[NX], u0, dt, vs, I->p, I->rtol);                        \
            }                                                                            \
            if (um != u0 || tm != d->time - h) {                                         \
                hm_segment(u0, d->time - h, um, tm, v, &dt, &vs);                        \
                P##_advance(s, u0, um, dt, vs, I->p, I->rtol);                           \
            }                                                                            \
            hm_budget = -1;                                                              \
            hm_check_fail(I);                                                            \
            s[NX] = um;                                                                  \
            s[NX + 1] = tm;                                                              \
            return;                                                                      \
        }                                                                                \
    }                                                                                    \
    hm_advance(m, d, instance);                                                          \
}
#define HM_NO_CALLBACKS(P)
HM_LAW_LIST(HM_PLAIN_CALLBACKS, HM_NO_CALLBACKS, HM_MEAN_CALLBACKS)

/* each law's callbacks, in the order of hm_laws */
typedef struct {
    void (*compute)(const mjModel *m, mjData *d, int instance, int capability_bit);
    void (*advance)(const mjModel *m, mjData *d, int instance);
} hm_callbacks_t;
#define HM_PLAIN_ENTRY(P, NX) {hm_compute_##P, hm_advance_##P},
#define HM_GENERIC_ENTRY(P) {hm_compute, hm_advance},
#define HM_MEAN_ENTRY(P, NX) {hm_compute_##P, hm_advance_##P},
static const hm_callbacks_t hm_callbacks[HM_NLAWS] = {HM_LAW_LIST(HM_PLAIN_ENTRY,
                                                                  HM_GENERIC_ENTRY,
                                                                  HM_MEAN_ENTRY)};

/* -- readers for the Python front end (hystmech.plugins.mujoco) ------------------- */
/* 1 if the plugin instance is a hystmech element with a live instance */
HM_EXPORT int hm_mj_is_element(const mjModel *m, const mjData *d, int instance)
{
    int ours;
    if (instance < 0 || instance >= m->nplugin) return 0;
    hm_law_at_slot(m->plugin[instance], &ours);
    return ours && HM_INST(d, instance) != NULL;
}

HM_EXPORT int hm_mj_nx(const mjData *d, int instance)
{
    const hm_inst_t *I = HM_INST(d, instance);
    return I ? I->nx : -1;
}

HM_EXPORT long hm_mj_failures(const mjData *d, int instance)
{
    const hm_inst_t *I = HM_INST(d, instance);
    return I ? I->failures : -1;
}

HM_EXPORT double hm_mj_reference(const mjData *d, int instance)
{
    const hm_inst_t *I = HM_INST(d, instance);
    return I ? I->ref : NAN;
}

/* force at the current u and velocity, from the committed state advanced to the
 * current u along a straight segment (pointwise: no window mean) */
static double hm_force_now(const mjModel *m, const mjData *d, int instance, int own_tv)
{
    hm_inst_t *I = HM_INST(d, instance);
    const mjtNum *s;
    double u, v, F;
    if (!I) return NAN;
    s = d->plugin_state + m->plugin_stateadr[instance];
    if (hm_bad_state(I, s)) return NAN;
    hm_target(m, d, I, &u, &v);
    if (own_tv && I->kind == 1) {        /* the sensor stage comes before ten_velocity */
        int t = I->id, k, adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
        v = 0.0;
        for (k = 0; k < nnz; k++) v += d->ten_J[adr + k] * d->qvel[m->ten_J_colind[adr + k]];
    }
    memcpy(I->xt, s, sizeof(double) * I->nx);
    if (!isnan(s[I->nx])) hm_commit_to(I, I->xt, s[I->nx], s[I->nx + 1], u, d->time, v);
    F = hm_force(I, I->xt, u, v);
    hm_fail = NULL;
    return F;
}

HM_EXPORT double hm_mj_force(const mjModel *m, const mjData *d, int instance)
{
    return hm_force_now(m, d, instance, 0);
}

/* the MuJoCo header version the library was built against */
HM_EXPORT int hm_mj_version(void) { return mjVERSION_HEADER; }

/* -- registration ------------------------------------------------------------------ */
static const char *const hm_common[] = {"joint", "tendon", "rtol", "ref", "implicit_damping"};
#define HM_NCOMMON 5

static void hm_register(const char *name, int nattr, const char *const *attr, int index)
{
    mjpPlugin plugin;
    mjp_defaultPlugin(&plugin);
    plugin.name = name;
    plugin.nattribute = nattr;
    hm_nattr[index] = nattr;
    plugin.attributes = attr;
    plugin.capabilityflags = mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR;
    /* the position stage: MuJoCo prepares nothing for it (at the velocity stage it
       computes the subtree velocities for every sensor plugin, +15 % of a one-hinge
       step); qvel is the state, a tendon's velocity is summed here */
    plugin.needstage = mjSTAGE_POS;
    plugin.nsensordata = hm_nsensordata;
    plugin.nstate = hm_nstate;
    plugin.init = hm_init;
    plugin.destroy = hm_destroy;
    plugin.copy = hm_copy;
    plugin.reset = hm_reset;
    plugin.compute = index < HM_NLAWS ? hm_callbacks[index].compute : hm_compute;
    plugin.advance = index < HM_NLAWS ? hm_callbacks[index].advance : hm_advance;
    hm_slots[index] = mjp_registerPlugin(&plugin);
}

static char hm_names[HM_NLAWS][48];
static char hm_pads[HM_FP_BASE + HM_NLAWS][12];

mjPLUGIN_LIB_INIT(hystmech)
{
    int i, k, n, j, slot;
    for (i = 0; i <= HM_NLAWS; i++) hm_slots[i] = -1;
    /* another build of this library registered the names already (MuJoCo refuses a
       name twice): leave them to it */
    if (mjp_getPlugin("hystmech.Sum", &slot)) return;
    for (i = 0; i < HM_NLAWS; i++) {
        const hm_law_t *L = &hm_laws[i];
        /* HM_FP_BASE + i attributes: the law's keys, the common ones, unused pads */
        hm_attrs[i] = (const char **)malloc(sizeof(char *) * (HM_FP_BASE + i));
        for (k = 0; k < L->nkey; k++) hm_attrs[i][k] = L->key[k].name;
        for (k = 0; k < HM_NCOMMON; k++) hm_attrs[i][L->nkey + k] = hm_common[k];
        for (k = L->nkey + HM_NCOMMON; k < HM_FP_BASE + i; k++) {
            snprintf(hm_pads[k], sizeof hm_pads[k], "_hm_fp%d", k);
            hm_attrs[i][k] = hm_pads[k];
        }
        snprintf(hm_names[i], sizeof hm_names[i], "hystmech.%s", L->name);
        hm_register(hm_names[i], HM_FP_BASE + i, hm_attrs[i], i);
    }
    /* the sum: "parts", then part<i>.<key> for every key any law has */
    n = 1 + HM_NCOMMON + HM_MAX_PARTS * HM_NALLKEYS;
    hm_attrs[HM_NLAWS] = (const char **)malloc(sizeof(char *) * n);
    j = 0;
    hm_attrs[HM_NLAWS][j++] = "parts";
    for (k = 0; k < HM_NCOMMON; k++) hm_attrs[HM_NLAWS][j++] = hm_common[k];
    for (i = 0; i < HM_MAX_PARTS; i++)
        for (k = 0; k < HM_NALLKEYS; k++) {
            size_t len = strlen(hm_allkeys[k]) + 8;
            char *a = (char *)malloc(len);
            snprintf(a, len, "part%d.%s", i, hm_allkeys[k]);
            hm_attrs[HM_NLAWS][j++] = a;
        }
    hm_register("hystmech.Sum", j, hm_attrs[HM_NLAWS], HM_NLAWS);
}
