/* Relay and discrete Preisach operators in C, the mirror of preisach.py (same p, same
 * fixed-size state with the memory stack). Manfredo, Dörlich, Linn & Arnold (2023),
 * eqs. (4)-(12).
 *
 * Relay:    p = [a1, a2]; q = [a1, a2, initial]; x = [R]
 * Preisach: p = [n2, n1, D, W, k0, offset, LO, HI, dslope, A2[n2], A1[n1],
 *                T[(n2+1)*(n1+1)]] (the Everett function on the threshold grid);
 *           q = [a1[N], a2[N], weights[N], initial, k0, offset, max_depth, slope_width];
 *           x = [c, n, type of stack[0], stack[D], prefix sums[D]] with D = max_depth
 *           fixed when the FMU is built (the stack lives in the state vector).
 */
#include <stdlib.h>
#include "hm_law.h"

/* ------------------------------------------------------------------ relay ---- */
void relay_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                   double rtol)
{
    /* a monotone segment: only its end values can switch the relay (eq. (6)) */
    double us[2];
    int i;
    (void)dt; (void)v; (void)rtol;
    us[0] = u0; us[1] = u1;
    for (i = 0; i < 2; i++) {
        if (us[i] >= p[1]) x[0] = 1.0;
        else if (us[i] <= p[0]) x[0] = -1.0;
    }
}

double relay_force(const double *x, double u, double v, const double *p)
{
    (void)v;
    if (u >= p[1]) return 1.0;
    if (u <= p[0]) return -1.0;
    return x[0];
}

const char *relay_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    HM_CHECK(nq == 3 && np == 2 && nx == 1, "Relay: wrong vector sizes");
    HM_CHECK(isfinite(q[0]), "a1 must be finite (got %g)", q[0]);
    HM_CHECK(q[1] > q[0], "a2 must be in (a1, inf) = (%g, inf) (got %g)", q[0], q[1]);
    HM_CHECK(q[2] == -1.0 || q[2] == 1.0, "initial must be -1 or +1 (got %g)", q[2]);
    p[0] = q[0]; p[1] = q[1];
    x0[0] = q[2];
    return NULL;
}

/* --------------------------------------------------------------- Preisach ---- */
#define PR_HEAD 9

static double preisach_everett(const double *p, double alpha, double beta)
{
    int n2 = (int)p[0], n1 = (int)p[1], o2 = PR_HEAD, o1 = PR_HEAD + n2, oT = PR_HEAD + n2 + n1;
    int lo = 0, hi = n2, i2, i1;
    while (lo < hi) {                    /* i2 = #{A2 <= alpha} */
        int mid = (lo + hi) >> 1;
        if (p[o2 + mid] <= alpha) lo = mid + 1; else hi = mid;
    }
    i2 = lo;
    lo = 0; hi = n1;
    while (lo < hi) {                    /* #{A1 < beta} */
        int mid = (lo + hi) >> 1;
        if (p[o1 + mid] < beta) lo = mid + 1; else hi = mid;
    }
    i1 = n1 - lo;
    return p[oT + i2 * (n1 + 1) + i1];
}

static int preisach_is_max(const double *x, int j)
{
    return x[2] > 0.0 ? (j % 2 == 0) : (j % 2 == 1);
}

static void preisach_push(double *x, const double *p, double val, int is_max)
{
    int D = (int)p[2], n = (int)x[1];
    double top;
    if (n >= D) {
        hm_fail = "Preisach memory stack overflow: more nested input reversals than "
                  "max_depth; export the operator with a larger max_depth";
        return;
    }
    top = x[3 + n - 1];
    if (is_max) x[3 + D + n] = x[3 + D + n - 1] + preisach_everett(p, val, top);
    else x[3 + D + n] = x[3 + D + n - 1] - preisach_everett(p, top, val);
    x[3 + n] = val;
    x[1] = n + 1;
}

static void preisach_reset(double *x, const double *p, int high)
{
    int D = (int)p[2];
    x[1] = 1.0;
    if (high) { x[2] = 1.0; x[3] = p[7]; x[3 + D] = p[3]; }
    else { x[2] = -1.0; x[3] = p[6]; x[3 + D] = 0.0; }
}

/* memory-curve update for a monotone move of the input from x[0] to v (eq. (10)) */
static void preisach_step(double *x, const double *p, double v)
{
    double c = x[0];
    int n = (int)x[1];
    int rising = !preisach_is_max(x, n - 1);
    if (rising) {
        if (v < c) { preisach_push(x, p, c, 1); rising = 0; n++; }
    } else {
        if (v > c) { preisach_push(x, p, c, 0); rising = 1; n++; }
    }
    if (hm_fail) return;
    x[0] = v;
    /* wiping-out of the older pair beyond which the new extremum goes */
    if (rising) { while (n >= 2 && v >= x[3 + n - 2]) n -= 2; }
    else { while (n >= 2 && v <= x[3 + n - 2]) n -= 2; }
    if (n == 0) preisach_reset(x, p, rising);
    else x[1] = n;
}

void preisach_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                      double rtol)
{
    (void)dt; (void)v; (void)rtol;
    if (u0 != x[0]) preisach_step(x, p, u0);
    preisach_step(x, p, u1);
}

double preisach_force(const double *x, double u, double v, const double *p)
{
    /* Σ+ for the input moved from x[0] to u without changing x (_anchor in Python) */
    int D = (int)p[2], n = (int)x[1], virt = 0, j, rising;
    double c = x[0], Pv = 0.0, P, a, s;
    (void)v;
    rising = !preisach_is_max(x, n - 1);
    if (rising && u < c) {
        Pv = x[3 + D + n - 1] + preisach_everett(p, c, x[3 + n - 1]);
        virt = 1; rising = 0; n++;
    } else if (!rising && u > c) {
        Pv = x[3 + D + n - 1] - preisach_everett(p, x[3 + n - 1], c);
        virt = 1; rising = 1; n++;
    }
    if (rising) { while (n >= 2 && u >= x[3 + n - 2]) n -= 2; }
    else { while (n >= 2 && u <= x[3 + n - 2]) n -= 2; }
    if (n == 0) {
        if (rising) { P = p[3]; a = p[7]; rising = 0; }
        else { P = 0.0; a = p[6]; rising = 1; }
    } else {
        j = n - 1;
        if (virt && j == (int)x[1]) { P = Pv; a = c; }
        else { P = x[3 + D + j]; a = x[3 + j]; }
    }
    s = rising ? P + preisach_everett(p, u, a) : P - preisach_everett(p, a, u);
    return p[5] + p[4] * u + 2.0 * s - p[3];
}

static int preisach_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorted distinct values of v[0..n-1] into out; returns their number */
static int preisach_unique(const double *v, int n, double *out)
{
    int i, m = 0;
    memcpy(out, v, sizeof(double) * n);
    qsort(out, n, sizeof(double), preisach_cmp);
    for (i = 0; i < n; i++)
        if (m == 0 || out[i] != out[m - 1]) out[m++] = out[i];
    return m;
}

static int preisach_search(const double *A, int n, double v)  /* first index with A >= v */
{
    int lo = 0, hi = n;
    while (lo < hi) { int mid = (lo + hi) >> 1; if (A[mid] < v) lo = mid + 1; else hi = mid; }
    return lo;
}

const char *preisach_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    /* the Everett table of the relays, built as _everett_table in preisach.py */
    int N = (nq - 5) / 3, D = (nx - 3) / 2, n1, n2, i, j, o2, o1, oT;
    const double *a1 = q, *a2 = q + N, *w = q + 2 * N;
    double initial = q[3 * N], k0 = q[3 * N + 1], offset = q[3 * N + 2];
    double max_depth = q[3 * N + 3], slope_width = q[3 * N + 4], W = 0.0, span, LO, HI;
    double *A2, *A1, *H;
    HM_CHECK(N >= 1 && nq == 3 * N + 5 && nx == 3 + 2 * D, "Preisach: wrong vector sizes");
    for (i = 0; i < 3 * N; i++) HM_CHECK(isfinite(q[i]), "a1, a2, weights must be finite");
    for (i = 0; i < N; i++)
        HM_CHECK(a1[i] < a2[i], "a2 must be in (a1, inf) elementwise, i.e. a1 < a2 "
                 "(got a1[%d] = %g, a2[%d] = %g)", i, a1[i], i, a2[i]);
    HM_CHECK(initial == -1.0 || initial == 1.0, "initial must be -1 or +1 (got %g)", initial);
    HM_CHECK(isfinite(k0), "k0 must be finite (got %g)", k0);
    HM_CHECK(isfinite(offset), "offset must be finite (got %g)", offset);
    HM_CHECK(max_depth == (double)D, "max_depth is fixed when the FMU is built: %d (got %g)",
             D, max_depth);
    HM_CHECK(slope_width > 0.0 && isfinite(slope_width),
             "slope_width must be in (0, inf) (got %g)", slope_width);
    A2 = (double *)malloc(sizeof(double) * N);
    A1 = (double *)malloc(sizeof(double) * N);
    if (!A2 || !A1) { free(A2); free(A1); return "Preisach: out of memory"; }
    n2 = preisach_unique(a2, N, A2);
    n1 = preisach_unique(a1, N, A1);
    if (np != PR_HEAD + n2 + n1 + (n2 + 1) * (n1 + 1)) {
        free(A2); free(A1);
        HM_CHECK(0, "Preisach: the number of distinct thresholds is fixed when the FMU is "
                 "built (changed a1/a2 values merged or split thresholds)");
    }
    H = (double *)calloc((size_t)n2 * n1, sizeof(double));
    if (!H) { free(A2); free(A1); return "Preisach: out of memory"; }
    for (i = 0; i < N; i++) {
        int j2 = preisach_search(A2, n2, a2[i]);
        int j1d = n1 - 1 - preisach_search(A1, n1, a1[i]);
        H[j2 * n1 + j1d] += w[i];
        W += w[i];
    }
    o2 = PR_HEAD; o1 = PR_HEAD + n2; oT = PR_HEAD + n2 + n1;
    /* T[1:, 1:] = cumsum(cumsum(H, axis=0), axis=1), same summation order as numpy */
    for (i = 1; i < n2; i++)
        for (j = 0; j < n1; j++) H[i * n1 + j] += H[(i - 1) * n1 + j];
    for (i = 0; i < n2; i++)
        for (j = 1; j < n1; j++) H[i * n1 + j] += H[i * n1 + j - 1];
    for (i = 0; i <= n2; i++)
        for (j = 0; j <= n1; j++)
            p[oT + i * (n1 + 1) + j] = (i == 0 || j == 0) ? 0.0 : H[(i - 1) * n1 + (j - 1)];
    for (i = 0; i < n2; i++) p[o2 + i] = A2[i];
    for (i = 0; i < n1; i++) p[o1 + i] = A1[i];
    span = fmax(A2[n2 - 1] - A1[0], 1.0);
    LO = A1[0] - span;
    HI = A2[n2 - 1] + span;
    p[0] = n2; p[1] = n1; p[2] = D; p[3] = W; p[4] = k0; p[5] = offset; p[6] = LO; p[7] = HI;
    p[8] = slope_width;
    for (i = 0; i < nx; i++) x0[i] = 0.0;
    if (initial < 0) { x0[0] = LO; x0[1] = 1; x0[2] = -1; x0[3] = LO; x0[3 + D] = 0.0; }
    else { x0[0] = HI; x0[1] = 1; x0[2] = 1; x0[3] = HI; x0[3 + D] = W; }
    free(A2); free(A1); free(H);
    return NULL;
}
