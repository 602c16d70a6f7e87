/* Relay and discrete Preisach operators in C, the mirror of preisach.py (same p, same
 * fixed-size state with the memory stack). Manfredo, Dörlich, Linn & Arnold (2023),
 * eqs. (4)-(12).
 *
 * Relay:    p = [a1, a2]; q = [a1, a2, initial]; x = [R]
 * Preisach: p = [n2, n1, D, W, k0, offset, LO, HI, dslope, A2[n2], A1[n1],
 *                T[(n2+1)*(n1+1)]] (the Everett function on the threshold grid);
 *           q = [a1[N], a2[N], weights[N], initial, k0, offset, max_depth, slope_width]
 *           (discrete mode), or the same followed by grid[0] = m, grid[1] = n (continuous
 *           mode: dslope = p[8] = 0 is the flag, A2 = A1 = the n + 1 grid nodes and T
 *           holds E at the nodes; between them E is the exact integral of the cellwise
 *           constant density, preisach_everett_c = _everett_c in preisach.py);
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
    HM_CHECK(q[2] == -1.0 || q[2] == 1.0, "initial must be -1 or +1 (got %.17g)", q[2]);
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

/* E(t_j, t_i) at the grid nodes (continuous mode), j, i in 0..n (_node_E) */
static double preisach_node_E(const double *p, int j, int i)
{
    int n1 = (int)p[1];
    return p[PR_HEAD + 2 * n1 + (j + 1) * (n1 + 1) + n1 - i];
}

/* continuous mode: E(α, β) for a density constant on each cell of the triangulated
 * plane (Manfredo et al. (2023), eqs. (14), (16)), bilinear on a square cell pair,
 * quadratic on a diagonal one; the arithmetic of _everett_c in preisach.py, with
 * ∂E/∂α, ∂E/∂β in *da, *db when they are not NULL */
static double preisach_everett_cg(const double *p, double alpha, double beta, double *da,
                                  double *db)
{
    int n1 = (int)p[1], n = n1 - 1, j, i, ca = 0, cb = 0;
    double t0 = p[PR_HEAD], tn = p[PR_HEAD + n], h = (tn - t0) / n;
    double fa, gb, G0, wjj, wii, Gj1, Gi, scol, srow, wij;
    if (da) *da = 0.0;
    if (db) *db = 0.0;
    /* beyond the triangle: E no longer depends on α (β) */
    if (alpha >= tn) { alpha = tn; ca = 1; }
    if (beta <= t0) { beta = t0; cb = 1; }
    if (alpha <= beta) return 0.0;
    j = (int)((alpha - t0) / h);
    if (j > n - 1) j = n - 1;
    if (j < 0) j = 0;
    i = (int)((beta - t0) / h);
    if (i > n - 1) i = n - 1;
    if (i < 0) i = 0;
    if (i > j) i = j;                     /* rounding at a node: α and β in the same cell */
    fa = (alpha - p[PR_HEAD + j]) / h;
    gb = (p[PR_HEAD + i + 1] - beta) / h;
    if (i == j) {
        double w = preisach_node_E(p, i + 1, i), d = (alpha - beta) / h;
        if (da && !ca) *da = 2.0 * w * d / h;
        if (db && !cb) *db = -2.0 * w * d / h;
        return w * d * d;
    }
    G0 = preisach_node_E(p, j, i + 1);
    wjj = preisach_node_E(p, j + 1, j);
    wii = preisach_node_E(p, i + 1, i);
    Gj1 = preisach_node_E(p, j + 1, i + 1);
    Gi = preisach_node_E(p, j, i);
    scol = Gj1 - G0 - wjj;
    srow = Gi - G0 - wii;
    wij = preisach_node_E(p, j + 1, i) - Gj1 - Gi + G0;
    if (da && !ca) *da = (scol + 2.0 * fa * wjj + gb * wij) / h;
    if (db && !cb) *db = -(srow + 2.0 * gb * wii + fa * wij) / h;
    return G0 + fa * (scol + fa * wjj) + gb * (srow + gb * wii) + fa * gb * wij;
}

static double preisach_everett_c(const double *p, double alpha, double beta)
{
    return preisach_everett_cg(p, alpha, beta, NULL, NULL);
}

/* the Everett function of either mode (_E) */
static double preisach_E(const double *p, double alpha, double beta)
{
    if (p[8] == 0.0) return preisach_everett_c(p, alpha, beta);
    return preisach_everett(p, alpha, beta);
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
    if (is_max) x[3 + D + n] = x[3 + D + n - 1] + preisach_E(p, val, top);
    else x[3 + D + n] = x[3 + D + n - 1] - preisach_E(p, top, val);
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

/* (P, anchor a, rising) with Σ+(u) = P + E(u, a) if rising else P − E(a, u), for the
 * input moved from x[0] to u, without changing x (_anchor in preisach.py) */
static int preisach_anchor(const double *x, const double *p, double u, double *P, double *a)
{
    int D = (int)p[2], n = (int)x[1], virt = 0, j, rising;
    double c = x[0], Pv = 0.0;
    rising = !preisach_is_max(x, n - 1);
    if (rising && u < c) {
        Pv = x[3 + D + n - 1] + preisach_E(p, c, x[3 + n - 1]);
        virt = 1; rising = 0; n++;
    } else if (!rising && u > c) {
        Pv = x[3 + D + n - 1] - preisach_E(p, x[3 + n - 1], c);
        virt = 1; rising = 1; n++;
    }
    if (rising) { while (n >= 2 && u >= x[3 + n - 2]) n -= 2; }
    else { while (n >= 2 && u <= x[3 + n - 2]) n -= 2; }
    if (n == 0) {
        if (rising) { *P = p[3]; *a = p[7]; return 0; }
        *P = 0.0; *a = p[6];
        return 1;
    }
    j = n - 1;
    if (virt && j == (int)x[1]) { *P = Pv; *a = c; }
    else { *P = x[3 + D + j]; *a = x[3 + j]; }
    return rising;
}

double preisach_force(const double *x, double u, double v, const double *p)
{
    double P, a, s;
    int rising = preisach_anchor(x, p, u, &P, &a);
    (void)v;
    s = rising ? P + preisach_E(p, u, a) : P - preisach_E(p, a, u);
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

/* Σ a[0..n-1] in numpy's pairwise order (np.sum), so that W is bit-equal to Python's */
static double preisach_sum(const double *a, int n)
{
    double r[8], res;
    int i, j;
    if (n < 8) {
        res = 0.0;
        for (i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        for (j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (j = 0; j < 8; j++) r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    i = n / 2;
    i -= i % 8;
    return preisach_sum(a, i) + preisach_sum(a + i, n - i);
}

static void preisach_x0(double *x0, int nx, int D, double initial, double LO, double HI, double W)
{
    int i;
    for (i = 0; i < nx; i++) x0[i] = 0.0;
    if (initial < 0) { x0[0] = LO; x0[1] = 1; x0[2] = -1; x0[3] = LO; x0[3 + D] = 0.0; }
    else { x0[0] = HI; x0[1] = 1; x0[2] = 1; x0[3] = HI; x0[3 + D] = W; }
}

/* continuous mode (_init_continuous in preisach.py): the cells of Preisach.grid(m, n)
 * in np.triu_indices order, density = weight / area; p gets the node grid and E at the
 * nodes, T[1:, 1:] = cumsum(cumsum(H, 0), 1) with H[j + 1, n - i] = w of cell (i, j) */
static const char *preisach_setup_c(const double *q, int N, double *p, int np, double *x0,
                                    int nx, int D)
{
    const double *a1 = q, *a2 = q + N, *w = q + 2 * N;
    double initial = q[3 * N], k0 = q[3 * N + 1], offset = q[3 * N + 2];
    double m = q[3 * N + 5], nn = q[3 * N + 6], h, span, LO, HI, W;
    int n, i, j, k, s, oT;
    HM_CHECK(isfinite(m) && m > 0.0, "m must be in (0, inf) (got %g)", m);
    HM_CHECK(nn >= 1.0 && nn == floor(nn) && nn < 1e6,
             "n must be an integer in [1, inf) (got %.17g)", nn);
    n = (int)nn;
    HM_CHECK(N == n * (n + 1) / 2 && np == PR_HEAD + 2 * (n + 1) + (n + 2) * (n + 2),
             "with grid = (m, n) = (%g, %d), a1 and a2 must be the %d cell thresholds of "
             "Preisach.grid(m, n) (the number of cells is fixed when the FMU is built)",
             m, n, n * (n + 1) / 2);
    h = 2.0 * m / n;
    k = 0;
    for (i = 0; i < n; i++) {           /* np.triu_indices(n): rows i, columns j >= i */
        double ti = -m + h * i;
        for (j = i; j < n; j++, k++) {
            double tj = -m + h * j, g1, g2;
            if (i == j) { g1 = ti + h / 3.0; g2 = tj + 2.0 * h / 3.0; }
            else { g1 = ti + 0.5 * h; g2 = tj + 0.5 * h; }
            HM_CHECK(fabs(a1[k] - g1) <= 1e-12 * m && fabs(a2[k] - g2) <= 1e-12 * m,
                     "with grid = (m, n) = (%g, %d), a1 and a2 must be the %d cell thresholds "
                     "of Preisach.grid(m, n) (a1[%d] = %g, a2[%d] = %g)", m, n, N, k, a1[k],
                     k, a2[k]);
        }
    }
    for (k = 0; k <= n; k++) p[PR_HEAD + k] = p[PR_HEAD + n + 1 + k] = -m + h * k;
    oT = PR_HEAD + 2 * (n + 1);
    s = n + 2;
    for (k = 0; k < s * s; k++) p[oT + k] = 0.0;
    k = 0;
    for (i = 0; i < n; i++)
        for (j = i; j < n; j++, k++) p[oT + (j + 2) * s + (n - i) + 1] = w[k];
    for (i = 2; i < s; i++)
        for (j = 1; j < s; j++) p[oT + i * s + j] += p[oT + (i - 1) * s + j];
    for (i = 1; i < s; i++)
        for (j = 2; j < s; j++) p[oT + i * s + j] += p[oT + i * s + j - 1];
    W = preisach_sum(w, N);
    span = fmax(2.0 * m, 1.0);
    LO = -m - span;
    HI = m + span;
    p[0] = n + 1; p[1] = n + 1; p[2] = D; p[3] = W; p[4] = k0; p[5] = offset; p[6] = LO;
    p[7] = HI; p[8] = 0.0;
    preisach_x0(x0, nx, D, initial, LO, HI, W);
    return NULL;
}

const char *preisach_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{
    /* the Everett table of the relays, built as _everett_table in preisach.py; with two
     * more parameters grid = (m, n), the continuous mode */
    int cont = nq >= 7 && (nq - 7) % 3 == 0;
    int N = cont ? (nq - 7) / 3 : (nq - 5) / 3, D = (nx - 3) / 2, n1, n2, i, j, o2, o1, oT;
    const double *a1 = q, *a2 = q + N, *w = q + 2 * N;
    double initial = q[3 * N], k0 = q[3 * N + 1], offset = q[3 * N + 2];
    double max_depth = q[3 * N + 3], slope_width = q[3 * N + 4], W = 0.0, span, LO, HI;
    double *A2, *A1, *H;
    HM_CHECK(N >= 1 && nq == 3 * N + (cont ? 7 : 5) && nx == 3 + 2 * D,
             "Preisach: wrong vector sizes");
    for (i = 0; i < 3 * N; i++) HM_CHECK(isfinite(q[i]), "a1, a2, weights must be finite");
    for (i = 0; i < N; i++)
        HM_CHECK(a1[i] < a2[i], "a2 must be in (a1, inf) elementwise, i.e. a1 < a2 "
                 "(got a1[%d] = %g, a2[%d] = %g)", i, a1[i], i, a2[i]);
    HM_CHECK(initial == -1.0 || initial == 1.0, "initial must be -1 or +1 (got %.17g)", initial);
    HM_CHECK(isfinite(k0), "k0 must be finite (got %g)", k0);
    HM_CHECK(isfinite(offset), "offset must be finite (got %g)", offset);
    HM_CHECK(max_depth == (double)D, "max_depth is fixed when the FMU is built: it must be %d (got %.17g)",
             D, max_depth);
    if (cont) return preisach_setup_c(q, N, p, np, x0, nx, D);
    HM_CHECK(slope_width > 0.0 && isfinite(slope_width),
             "slope_width must be in (0, inf) (got %g)", slope_width);
    A2 = (double *)malloc(sizeof(double) * N);
    A1 = (double *)malloc(sizeof(double) * N);
    if (!A2 || !A1) { free(A2); free(A1); return "Preisach: out of memory"; }
    n2 = preisach_unique(a2, N, A2);
    n1 = preisach_unique(a1, N, A1);
    /* p has room for the exported number of distinct thresholds (FMI 3.0: for the
     * capacity, fmu/fmi3_structural.py); fewer (merged values) need less */
    if (np < PR_HEAD + n2 + n1 + (n2 + 1) * (n1 + 1)) {
        free(A2); free(A1);
        HM_CHECK(0, "Preisach: more distinct thresholds than the FMU was built for "
                 "(changed a1/a2 values split thresholds)");
    }
    H = (double *)calloc((size_t)n2 * n1, sizeof(double));
    if (!H) { free(A2); free(A1); return "Preisach: out of memory"; }
    for (i = 0; i < N; i++) {
        int j2 = preisach_search(A2, n2, a2[i]);
        int j1d = n1 - 1 - preisach_search(A1, n1, a1[i]);
        H[j2 * n1 + j1d] += w[i];
    }
    W = preisach_sum(w, N);
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
    preisach_x0(x0, nx, D, initial, LO, HI, W);
    free(A2); free(A1); free(H);
    return NULL;
}

/* ------------------------------------------- model exchange and state checks ---- */
/* The next input value in the direction dir (±1) from u at which the relay switches
 * (a jump of F), or dir·inf. */
double relay_switch(const double *x, double u, double dir, const double *p)
{
    if (dir > 0.0 && x[0] < 0.0 && u < p[1]) return p[1];
    if (dir < 0.0 && x[0] > 0.0 && u > p[0]) return p[0];
    return dir * INFINITY;
}

const char *relay_check(const double *x, const double *p)
{
    (void)p;
    return (x[0] == 1.0 || x[0] == -1.0) ? NULL : "Relay: state must be -1 or +1";
}

/* The next input value in the direction dir from u where F jumps or has a kink: a
 * threshold of the discrete operator (A2 rising, A1 falling), a node of the continuous
 * grid, or the memory corner where wiping-out sets in; dir·inf if none. */
double preisach_switch(const double *x, double u, double dir, const double *p)
{
    int n2 = (int)p[0], n1 = (int)p[1], n = (int)x[1], k, rising;
    double best = dir * INFINITY, cand;
    if (p[8] == 0.0) {                      /* continuous: the uniform node grid */
        double t0 = p[PR_HEAD], tn = p[PR_HEAD + n1 - 1], h = (tn - t0) / (n1 - 1);
        if (dir > 0.0 && u < tn) {
            k = (int)floor((u - t0) / h) + 1;
            if (k < 0) k = 0;
            cand = t0 + h * k;
            if (cand <= u) cand = t0 + h * (k + 1);
            best = fmin(cand, tn) > u ? fmin(cand, tn) : best;
        } else if (dir < 0.0 && u > t0) {
            k = (int)ceil((u - t0) / h) - 1;
            if (k > n1 - 1) k = n1 - 1;
            cand = t0 + h * k;
            if (cand >= u) cand = t0 + h * (k - 1);
            best = fmax(cand, t0) < u ? fmax(cand, t0) : best;
        }
    } else if (dir > 0.0) {                 /* first A2 > u */
        int lo = 0, hi = n2;
        while (lo < hi) { int mid = (lo + hi) >> 1; if (p[PR_HEAD + mid] <= u) lo = mid + 1; else hi = mid; }
        if (lo < n2) best = p[PR_HEAD + lo];
    } else {                                /* last A1 < u */
        int lo = 0, hi = n1;
        while (lo < hi) { int mid = (lo + hi) >> 1; if (p[PR_HEAD + n2 + mid] < u) lo = mid + 1; else hi = mid; }
        if (lo > 0) best = p[PR_HEAD + n2 + lo - 1];
    }
    /* memory corner: moving on in the last direction wipes the older extremum
     * stack[n − 2]; reversing first stores c and then wipes stack[n − 1] */
    rising = !preisach_is_max(x, n - 1);
    if ((dir > 0.0) == rising) cand = n >= 2 ? x[3 + n - 2] : dir * INFINITY;
    else cand = x[3 + n - 1];
    if (dir > 0.0 ? (cand > u && cand < best) : (cand < u && cand > best)) best = cand;
    return best;
}

/* a memory from outside (deserialised FMU state): stack depth, branch type and
 * extrema checked before any kernel indexes with them */
const char *preisach_check(const double *x, const double *p)
{
    int D = (int)p[2], j;
    double n = x[1];
    if (!(n >= 1.0 && n <= (double)D && n == floor(n)))
        return "Preisach: memory depth outside [1, max_depth]";
    if (x[2] != 1.0 && x[2] != -1.0) return "Preisach: type of stack[0] must be -1 or +1";
    for (j = 0; j < 3 + 2 * D; j++)
        if (!isfinite(x[j])) return "Preisach: non-finite memory entry";
    return NULL;
}

/* Model exchange derivatives, d[0] = dF/du on the branch the input follows from u in
 * the direction dir (±1), d[1] = ∂F/∂v = 0. Relay: 0 between its thresholds. Preisach:
 * continuous mode k0 ± 2·∂E at the branch's anchor (the exact tangent of
 * preisach_slope; a reversal at u starts the new branch at u, where ∂E = 0); discrete
 * mode k0, the exact derivative of the staircase between thresholds (preisach_slope
 * takes a secant across it instead, for Newton solvers). */
void relay_dforce(const double *x, double u, double v, double dir, const double *p,
                  double *d)
{
    (void)x; (void)u; (void)v; (void)dir; (void)p;
    d[0] = 0.0;
    d[1] = 0.0;
}

void preisach_dforce(const double *x, double u, double v, double dir, const double *p,
                     double *d)
{
    double P, a, da, db;
    int up = dir > 0.0, rising = preisach_anchor(x, p, u, &P, &a);
    (void)v;
    d[1] = 0.0;
    d[0] = p[4];
    if (p[8] != 0.0) return;
    if (rising != up) a = u;
    if (up) {
        preisach_everett_cg(p, u, a, &da, NULL);
        d[0] = p[4] + 2.0 * da;
    } else {
        preisach_everett_cg(p, a, u, NULL, &db);
        d[0] = p[4] - 2.0 * db;
    }
}
