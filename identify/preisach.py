"""Identification of a Preisach kernel by least squares, Manfredo, Dörlich, Linn & Arnold
(2023), §4, eqs. (13)-(19).

Discretisation. The input is rounded to a grid of tolerance ``d`` (g_k = k·d). In the
switching thresholds (α, β) = (s + r, s − r) of the relays R_{s−r, s+r}, the cells are
the grid squares [g_i, g_i+1] × [g_j, g_j+1] (j < i; diamonds in (r, s)) and the
half-squares on the diagonal β = α (triangles at r = 0): the cells of the triangle of
eq. (14) cut into n = 2m/d levels per side, exactly those of
``hystmech.components.Preisach.grid(m, n)``. Every memory curve of a rounded input
(eq. (10)) runs along their edges, so each cell is wholly below or above it and its
entry of Δ (eq. (17)) is ±1. (The paper's triangulation splits each square into two
triangles along its anti-diagonal; both halves always switch together, so they are
merged here.)

Initial memory. "demagnetized" is the state left by an alternating input of decreasing
amplitude ±m, ∓(m − d/2), ..., ending at 0 (AC demagnetisation; the limit ψ(0) = 0 of
eq. (10) as the step goes to 0): its memory curve zig-zags about s = 0 through the
middle of the squares on the anti-diagonal α + β = 0, so those squares are half up,
half down (entry 0 for a kernel constant on the cell) until the input sweeps them,
cells with s < 0 are +1 and with s > 0 are −1. Also −1 / +1 for every cell
(saturation): then the relays with one threshold beyond the input's range still switch,
once (from −1: every relay with β below the input's minimum goes up when the input
reaches its α and never comes down), so the mesh has one more row of cells below the
triangle, j = −m − 1 (from +1: above it, i = m): the strip cell (i, −m − 1) carries the
total weight of the relays with α in [g_i, g_i+1] and any β < g_−m (from +1, (m, j) those
with β in [g_j, g_j+1] and any α > g_m). With the input on the grid and every relay
inside a cell (as those of ``Preisach.grid``), the cell model is then exact for a relay
array over any plane: its output is reproduced, and the weight of each cell (or strip)
that the record distinguishes is recovered, to the solver's tolerance.

Exact export. With a kernel constant on each cell, the identified model IS the
continuous Preisach element (``Preisach(..., grid=(m, n))``, Everett function the
exact integral of the cellwise constant kernel) started from that memory:
:meth:`PreisachFit.element` returns it; driven with the rounded input its output equals
:meth:`PreisachFit.predict` to rounding. Driven with the raw input it evaluates the
same kernel without rounding (``predict(v, rounded=False)``).

Assembly. Only the cells that change state during the record ("the part of the
Preisach plane swept by the memory curve") are unknowns; those that never switch add a
constant, fitted as one offset. Δ is dense in ±1, but its row differences are sparse
(only the cells that switch between two samples change), so Δ = Δ_0 + L·D with D
sparse (scipy CSR) and L the cumulative sum. Consecutive samples with the same rounded
state give equal rows: the least-squares problem is solved on the distinct rows
weighted by √(count) with the group means of y — the same normal equations, so the
same solutions and a residual that differs only by the constant within-group scatter.

Solution of eq. (19): the minimum-norm least-squares solution of Δx ≈ y (what the
paper's SVD reduction computes) by scipy.sparse.linalg.lsmr from x = 0 on the
compressed system. Options, on the compressed system as a dense array (R × n, R the
number of distinct rows): non-negative kernel (the free offset projected out, then
scipy.optimize.nnls, the Lawson-Hanson active-set method); Tikhonov smoothing of the
kernel between cells sharing an edge (the normal equations of the augmented system,
scipy Cholesky); both together (nnls on the Cholesky-factored normal equations).
Beyond DENSE_LIMIT entries: scipy lsq_linear (trf, lsmr) / lsmr on the compressed
operator (slower).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from . import metrics

# the constrained solvers use the compressed Δ (R × n) and the normal matrix (n × n) as
# dense float64 arrays up to this many entries each, scipy's iterative solvers beyond
DENSE_LIMIT = 25_000_000


# -- cells ---------------------------------------------------------------------------------
@dataclass
class PreisachMesh:
    """Cells of the threshold grid g_k = k·d [input units]: integer indices (i, j) of
    α ∈ [g_i, g_i+1], β ∈ [g_j, g_j+1]; kind 0 = square (j < i), 2 = diagonal half-square
    (j = i, β <= α)."""

    d: float
    i: np.ndarray
    j: np.ndarray
    kind: np.ndarray

    @property
    def n(self) -> int:
        return int(self.i.size)

    def vertices_ab(self) -> np.ndarray:
        """(n, 4, 2) cell corners in (α, β); a diagonal cell repeats its last corner."""
        d = self.d
        a0, b0 = self.i * d, self.j * d
        a1, b1 = a0 + d, b0 + d
        V = np.stack([np.c_[a0, b0], np.c_[a1, b0], np.c_[a1, b1], np.c_[a0, b1]], axis=1)
        dg = self.kind == 2
        V[dg, 3] = V[dg, 2]
        return V

    def vertices_rs(self) -> np.ndarray:
        """(n, 4, 2) cell corners in the Preisach plane (r, s)."""
        V = self.vertices_ab()
        return np.stack([(V[..., 0] - V[..., 1]) / 2, (V[..., 0] + V[..., 1]) / 2], axis=-1)

    def area_rs(self) -> np.ndarray:
        """Cell areas in (r, s) [input units²] (the (α, β) area times 1/2)."""
        return np.where(self.kind == 2, 0.25, 0.5) * self.d ** 2

    def centroid_ab(self) -> np.ndarray:
        c = np.c_[self.i + 0.5, self.j + 0.5] * self.d
        dg = self.kind == 2
        c[dg, 0] += self.d / 6
        c[dg, 1] -= self.d / 6
        return c


def full_mesh(d: float, kmin: int, kmax: int) -> PreisachMesh:
    """All cells with thresholds in [kmin·d, kmax·d] (the triangle of eq. (14))."""
    i, j = np.tril_indices(kmax - kmin)
    return PreisachMesh(float(d), (i + kmin).astype(np.int64), (j + kmin).astype(np.int64),
                        np.where(i == j, 2, 0).astype(np.int64))


@njit(cache=True)
def _switching(ci, cj, init, idx, kmin, kmax):
    """Cell states along the rounded input (grid indices idx). A cell (i, j) is +1 once the
    input has reached g_{i+1}, −1 once it has reached g_j (eqs. (5)-(6) for every relay in
    it). Returns the states after the first sample, and COO (time, cell, change) of the
    later switches; only the cells whose α (rising) or β (falling) lies in the band the
    input crossed are visited."""
    n = ci.size
    nb = kmax - kmin + 1
    # cells bucketed by i and by j (indices relative to kmin)
    cnt_i = np.zeros(nb + 1, np.int64)
    cnt_j = np.zeros(nb + 1, np.int64)
    for m in range(n):
        cnt_i[ci[m] - kmin + 1] += 1
        cnt_j[cj[m] - kmin + 1] += 1
    pi = np.cumsum(cnt_i)
    pj = np.cumsum(cnt_j)
    by_i = np.empty(n, np.int64)
    by_j = np.empty(n, np.int64)
    fi = pi[:-1].copy()
    fj = pj[:-1].copy()
    for m in range(n):
        a = ci[m] - kmin
        b = cj[m] - kmin
        by_i[fi[a]] = m
        fi[a] += 1
        by_j[fj[b]] = m
        fj[b] += 1
    st = init.copy()
    v0 = idx[0]
    for m in range(n):
        if v0 >= ci[m] + 1:
            st[m] = 1.0
        elif v0 <= cj[m]:
            st[m] = -1.0
    first = st.copy()
    cap = 1024
    rows = np.empty(cap, np.int64)
    cols = np.empty(cap, np.int64)
    vals = np.empty(cap, np.float64)
    nnz = 0
    for k in range(1, idx.size):
        a = idx[k - 1]
        b = idx[k]
        if b == a:
            continue
        if b > a:          # cells with a < i + 1 <= b go up
            lo, hi, new, ptr, lst = a, b - 1, 1.0, pi, by_i
        else:              # cells with b <= j < a go down
            lo, hi, new, ptr, lst = b, a - 1, -1.0, pj, by_j
        lo = max(lo, kmin) - kmin
        hi = min(hi, kmax) - kmin
        for q in range(lo, hi + 1):
            for t in range(ptr[q], ptr[q + 1]):
                m = lst[t]
                if st[m] != new:
                    if nnz == cap:
                        cap *= 2
                        r2 = np.empty(cap, np.int64)
                        c2 = np.empty(cap, np.int64)
                        v2 = np.empty(cap, np.float64)
                        r2[:nnz] = rows[:nnz]
                        c2[:nnz] = cols[:nnz]
                        v2[:nnz] = vals[:nnz]
                        rows, cols, vals = r2, c2, v2
                    rows[nnz] = k
                    cols[nnz] = m
                    vals[nnz] = new - st[m]
                    nnz += 1
                    st[m] = new
    return first, rows[:nnz], cols[:nnz], vals[:nnz]


def _check_initial(initial):
    if isinstance(initial, str) and initial == "demagnetized":
        return initial
    if isinstance(initial, (int, float, np.integer, np.floating)) and not isinstance(initial, bool) \
            and initial in (-1, 1):
        return int(initial)
    raise ValueError(f"initial must be 'demagnetized', -1 or +1 (got {initial!r})")


def _initial_states(mesh: PreisachMesh, initial="demagnetized") -> np.ndarray:
    # "demagnetized": the zig-zag memory about s = 0 (module docstring): squares on the
    # anti-diagonal i + j = −1 half up, half down (0); s < 0 up, s > 0 down
    initial = _check_initial(initial)
    if initial != "demagnetized":
        return np.full(mesh.n, float(initial))
    k = mesh.i + mesh.j                       # s at a square's centre: (k + 1)·d/2
    sq = np.where(k <= -2, 1.0, np.where(k >= 0, -1.0, 0.0))
    return np.where(mesh.kind == 2, np.where(mesh.i <= -1, 1.0, -1.0), sq)


def _states(mesh: PreisachMesh, idx: np.ndarray, initial):
    if mesh.n == 0:
        z = np.zeros(0)
        return z, np.zeros(0, np.int64), np.zeros(0, np.int64), z
    kmin, kmax = int(mesh.j.min()), int(mesh.i.max())
    return _switching(mesh.i, mesh.j, _initial_states(mesh, initial), idx, kmin, kmax)


@dataclass
class DeltaOperator:
    """Δ of eqs. (17)-(18) as Δ_i = Δ_0 + Σ_{k <= i} D_k (D sparse CSR, T × n), with an
    optional last column of ones (the offset of the cells that never switch)."""

    delta0: np.ndarray
    D: object
    offset: bool = True

    @property
    def shape(self):
        return (self.D.shape[0], self.D.shape[1] + int(self.offset))

    def matvec(self, x):
        n = self.D.shape[1]
        y = float(self.delta0 @ x[:n]) + np.cumsum(self.D @ x[:n])
        if self.offset:
            y = y + x[n]
        return y

    def rmatvec(self, y):
        rc = np.cumsum(y[::-1])[::-1]
        if getattr(self, "_DT", None) is None:
            # Dᵀ as its own CSR once: D.T (a CSC view) per product cost 40 % of lsmr's time
            self._DT = self.D.T.tocsr()
        out = self.delta0 * float(np.sum(y)) + self._DT @ rc
        return np.r_[out, np.sum(y)] if self.offset else out

    def linear_operator(self):
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec, dtype=float)

    def dense(self) -> np.ndarray:
        """Δ as a dense array (small problems, tests, the benchmark's baseline)."""
        M = self.delta0[None, :] + np.cumsum(self.D.toarray(), axis=0)
        return np.c_[M, np.ones(M.shape[0])] if self.offset else M

    def compressed(self):
        """(Δ_c, counts, starts): the distinct consecutive rows of Δ (a DeltaOperator
        with one row per run of samples without a switch), the run lengths and the
        first sample of each run."""
        T = self.D.shape[0]
        starts = np.r_[0, np.flatnonzero(np.diff(self.D.indptr)[1:] > 0) + 1]
        counts = np.diff(np.r_[starts, T])
        return DeltaOperator(self.delta0, self.D[starts], self.offset), counts, starts


def assemble(v, d: float, mesh: PreisachMesh | None = None, swept_only: bool = True,
             offset: bool = True, initial="demagnetized"):
    """Round the input v to the grid of tolerance d, cut the plane into cells and
    assemble Δ (Manfredo et al. (2023), eqs. (14)-(18)).

    Returns (mesh, DeltaOperator). With swept_only, the mesh keeps the cells that switch
    at least once after the first sample (eq. (15) sets restricted to the part swept by
    the memory curve); mesh may be given to reuse a cell set.
    """
    from scipy.sparse import coo_matrix

    v = np.asarray(v, dtype=float)
    d = float(d)
    if not (np.isfinite(d) and d > 0):
        raise ValueError(f"rounding tolerance d must be in (0, inf) (got {d!r})")
    idx = np.rint(v / d).astype(np.int64)
    if mesh is None:
        m = max(int(max(abs(idx.min()), abs(idx.max()))), 1)    # eq. (14): m = max |v|
        if 2 * m * m > 2_000_000:
            raise ValueError(f"d = {d:g} gives {m * (2 * m + 1)} cells; use a larger "
                             f"tolerance d (d in [{np.max(np.abs(v)) / 1000:g}, inf))")
        # from saturation (initial = ∓1) the relays with one threshold beyond the
        # input's range still switch, once: one row of strip cells below (β < −m·d) or
        # above (α > m·d) the triangle carries them (module docstring, "Initial memory")
        init = _check_initial(initial)
        mesh = full_mesh(d, -m - (init == -1), m + (init == 1))
    st0, r, c, val = _states(mesh, idx, initial)
    if swept_only:
        keep = np.zeros(mesh.n, bool)
        keep[c] = True
        if not keep.any():
            raise ValueError("the input never switches a relay: it must vary by more than d")
        newid = -np.ones(mesh.n, np.int64)
        newid[keep] = np.arange(int(keep.sum()))
        mesh = PreisachMesh(mesh.d, mesh.i[keep], mesh.j[keep], mesh.kind[keep])
        c = newid[c]
        st0 = st0[keep]
    D = coo_matrix((val, (r, c)), shape=(v.size, mesh.n)).tocsr()
    return mesh, DeltaOperator(st0, D, offset)


def _smoothing_matrix(mesh: PreisachMesh):
    """Sparse differences of the kernel ω = x/area between cells sharing an edge, scaled
    by a square's area (rows x_a − x_b between squares, x_a − 2·x_diag next to the
    diagonal), so that a constant kernel is not penalised."""
    from scipy.sparse import coo_matrix

    if mesh.n == 0:
        return coo_matrix((0, 0)).tocsr()
    lo = int(mesh.j.min())
    N = int(mesh.i.max()) - lo + 2
    key = (mesh.i - lo) * N + (mesh.j - lo)
    order = np.argsort(key)
    skey = key[order]
    sq = np.flatnonzero(mesh.kind == 0)
    # left edge α = g_i: neighbour (i−1, j); top edge β = g_j+1: neighbour (i, j+1)
    # (a diagonal cell when i−1 = j or j+1 = i)
    cand = np.r_[(mesh.i[sq] - 1 - lo) * N + (mesh.j[sq] - lo),
                 (mesh.i[sq] - lo) * N + (mesh.j[sq] + 1 - lo)]
    a = np.r_[sq, sq]
    pos = np.clip(np.searchsorted(skey, cand), 0, skey.size - 1)
    hit = skey[pos] == cand
    a, b = a[hit], order[pos[hit]]
    scale = 0.5 * mesh.d ** 2 / mesh.area_rs()
    rows = np.repeat(np.arange(a.size), 2)
    cols = np.c_[a, b].ravel()
    vals = np.c_[scale[a], -scale[b]].ravel()
    return coo_matrix((vals, (rows, cols)), shape=(a.size, mesh.n)).tocsr()


# -- solvers on the compressed system --------------------------------------------------------
class _Weighted:
    """√c·Δ_c: the compressed Δ with its rows weighted by √(run length), behind a
    LinearOperator (``op``) and as a dense array (``dense``, when small enough)."""

    def __init__(self, op: DeltaOperator, counts):
        from scipy.sparse.linalg import LinearOperator

        w = self.w = np.sqrt(counts.astype(float))
        self.shape = op.shape
        self._opc = op
        # the cumulative-sum form is cheaper per product than a dense matrix (lsmr)
        self.op = LinearOperator(op.shape, matvec=lambda x: w * op.matvec(x),
                                 rmatvec=lambda z: op.rmatvec(w * z), dtype=float)

    @property
    def dense(self) -> np.ndarray:
        return self._opc.dense() * self.w[:, None]


def _solve_minnorm(A: _Weighted, b, atol, btol, maxiter):
    from scipy.sparse.linalg import lsmr

    with _one_blas_thread():
        return lsmr(A.op, b, atol=atol, btol=btol, maxiter=maxiter)[0]


def _one_blas_thread():
    """lsmr makes thousands of vector norms/dots of 1e4-1e5 entries: a multi-threaded
    BLAS spends far longer synchronising its threads than computing them (measured:
    30 ms instead of 0.1 ms per norm of 2e4 entries on a loaded 2-core machine, 151 s
    instead of 15 s for a 200-level fit), so BLAS runs on one thread here."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


# -- result ----------------------------------------------------------------------------------
@dataclass
class PreisachFit:
    """Identified Preisach kernel: cell integrals x [output units] on ``mesh`` (input
    units), the offset, the fitted/predicted output and figures of merit."""

    mesh: PreisachMesh
    x: np.ndarray
    offset: float
    merit: dict = field(default_factory=dict)
    v: np.ndarray | None = field(default=None, repr=False)
    y: np.ndarray | None = field(default=None, repr=False)
    fitted: np.ndarray | None = field(default=None, repr=False)
    residual_norm: float = float("nan")
    initial: object = "demagnetized"

    @property
    def kernel(self) -> np.ndarray:
        """Kernel value ω on each cell: x / area in (r, s)."""
        return self.x / self.mesh.area_rs()

    @property
    def grid(self) -> tuple:
        """(m, n): the triangle of eq. (14) with half-size m = K·d [input units] and
        n = 2K levels per side whose cells (Preisach.grid(m, n)) are this fit's cells."""
        K = max(int(self.mesh.i.max()) + 1, -int(self.mesh.j.min()), 1)
        return K * self.mesh.d, 2 * K

    def rounded(self, v) -> np.ndarray:
        """The input rounded to the grid g_k = k·d, as the identification sees it."""
        return np.rint(np.asarray(v, dtype=float) / self.mesh.d) * self.mesh.d

    def predict(self, v_history, rounded: bool = True) -> np.ndarray:
        """Output for an input history v from the initial memory of the fit (pass the whole
        history so that the memory is right). rounded=True: the identification model,
        input rounded to the grid (eqs. (16)-(17)); rounded=False: the same cellwise
        constant kernel integrated exactly under the memory curve of the raw input
        (:meth:`element` driven by v). Cells not identified contribute only through the
        offset."""
        v = np.asarray(v_history, dtype=float).ravel()
        if not rounded:
            return self.drive(v).force
        from scipy.sparse import coo_matrix

        idx = np.rint(v / self.mesh.d).astype(np.int64)
        st0, r, c, val = _states(self.mesh, idx, self.initial)
        D = coo_matrix((val, (r, c)), shape=(v.size, self.mesh.n)).tocsr()
        return DeltaOperator(st0, D, True).matvec(np.r_[self.x, self.offset])

    def drive(self, v_history):
        """hystmech.drive of :meth:`element` (memory stack deep enough for any history
        of this length) under the raw input v, from the fit's initial memory; returns
        the DriveResult (``.force``, ``.state[:, 1]`` the stack depth)."""
        from ..drive import drive

        v = np.asarray(v_history, dtype=float).ravel()
        el = self.element(max_depth=max(256, self.grid[1] + v.size + 16))
        return drive(el, np.arange(v.size, dtype=float), v, x0=el.x0)

    def element_weights(self) -> np.ndarray:
        """Weights of the cells of Preisach.grid(*self.grid) (0 where not identified)."""
        m, n = self.grid
        K = n // 2
        W = np.zeros((n, n))
        W[self.mesh.j + K, self.mesh.i + K] = self.x      # [a1 level, a2 level]
        return W[np.triu_indices(n)]

    def element(self, max_depth: int | None = None):
        """The identified model as a continuous hystmech.components.Preisach
        (``grid = self.grid``, kernel constant on each cell, offset), its initial state
        ``x0`` the fit's initial memory (the AC-demagnetised state of the module docstring,
        or all −1 / +1). Driven with :meth:`rounded` input it reproduces :meth:`predict`
        to rounding; with the raw input it gives ``predict(v, rounded=False)``."""
        from ..components.preisach import Preisach

        m, n = self.grid
        a1, a2, *_ = Preisach.grid(m, n)
        D = max(256, n + 16) if max_depth is None else max_depth
        xi = -1 if self.initial == "demagnetized" else int(self.initial)
        el = Preisach(a1=a1, a2=a2, weights=self.element_weights(), initial=xi,
                      offset=self.offset, max_depth=D, grid=(m, n))
        if self.initial == "demagnetized":
            el.x0 = el.demagnetized_state(amplitude=m, step=0.5 * self.mesh.d)
        return el

    def relays(self):
        """(a1, a2, weight): one relay per cell at its centroid (a1 = β < a2 = α),
        weight = x, for the discrete hystmech.components.Preisach.from_relays — an
        approximation of the identified model (a staircase with the steps moved by up
        to d/2); :meth:`element` is exact."""
        c = self.mesh.centroid_ab()
        return c[:, 1], c[:, 0], self.x.copy()

    def plot_kernel(self, title: str = ""):
        """Kernel over the (r, s) triangle from two angles, and the output against the
        input, measured and fitted (as Manfredo et al. (2023), Figs. 6, 8-11)."""
        import matplotlib.pyplot as plt
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        fig = plt.figure(figsize=(13, 4.2))
        V = self.mesh.vertices_rs()
        w = self.kernel
        norm = plt.Normalize(np.min(w), np.max(w) if np.max(w) > np.min(w) else np.min(w) + 1)
        cmap = plt.get_cmap("viridis")
        for p, (elev, azim) in enumerate(((30, -60), (20, 30))):
            ax = fig.add_subplot(1, 3, p + 1, projection="3d")
            polys = [np.c_[cell, np.full(4, wv)] for cell, wv in zip(V, w)]
            ax.add_collection3d(Poly3DCollection(polys, facecolors=cmap(norm(w)), edgecolor="none"))
            ax.set_xlim(V[..., 0].min(), V[..., 0].max())
            ax.set_ylim(V[..., 1].min(), V[..., 1].max())
            ax.set_zlim(min(0.0, w.min()), w.max() if w.max() > 0 else 1.0)
            ax.set_xlabel("r")
            ax.set_ylabel("s")
            ax.set_zlabel("ω(r, s)")
            ax.view_init(elev, azim)
        ax = fig.add_subplot(1, 3, 3)
        if self.v is not None:
            ax.plot(self.v, self.y, lw=0.8, label="measured")
            ax.plot(self.v, self.fitted, lw=0.8, ls="--", label="Preisach fit")
            ax.set_xlabel("input")
            ax.set_ylabel("output")
            ax.legend()
        fig.suptitle(title or f"Preisach kernel, {self.mesh.n} cells, d = {self.mesh.d:g}")
        return fig


def fit_preisach(v, y, d: float, *, nonnegative: bool = False, smoothing: float = 0.0,
                 atol: float = 1e-10, btol: float = 1e-10, maxiter: int | None = None,
                 initial="demagnetized") -> PreisachFit:
    """Identify the Preisach kernel from an input history v and output y (equal-length
    arrays, e.g. curvature [1/m] and moment [N·m]) with rounding tolerance d [input
    units] (Manfredo et al. (2023), eqs. (13)-(19)).

    Default: the minimum-norm least-squares solution (scipy lsmr, tolerances atol, btol,
    at most maxiter iterations). nonnegative=True: kernel >= 0 (scipy.optimize.nnls).
    smoothing > 0 (dimensionless): Tikhonov penalty smoothing²·Σ(ω_a − ω_b)²·A² over
    cells a, b sharing an edge (ω the kernel, A a square's area in (r, s)). Both may be
    combined.
    initial: the relays' state before the record, "demagnetized" (AC-demagnetised, the
    zig-zag about ψ = 0 of eq. (10), module docstring) or −1 / +1 for all relays.
    """
    v = np.asarray(v, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if v.size != y.size:
        raise ValueError(f"input and output must have equal lengths (got {v.size} and {y.size})")
    if v.size < 3 or not (np.all(np.isfinite(v)) and np.all(np.isfinite(y))):
        raise ValueError("input and output must hold at least 3 finite samples")
    if not (np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(f"smoothing must be in [0, inf) (got {smoothing!r})")
    initial = _check_initial(initial)
    mesh, op = assemble(v, d, initial=initial)
    opc, counts, starts = op.compressed()
    A = _Weighted(opc, counts)
    b = A.w * (np.add.reduceat(y, starts) / counts)
    n1 = op.shape[1]
    maxiter = maxiter or 20 * n1
    if nonnegative or smoothing > 0:
        G = _smoothing_matrix(mesh) * float(smoothing) if smoothing > 0 else None
        x = _solve_constrained(A, b, G, nonnegative)
    else:
        x = _solve_minnorm(A, b, atol, btol, maxiter)
    fitted = op.matvec(x)
    return PreisachFit(mesh=mesh, x=x[:mesh.n], offset=float(x[mesh.n]),
                       merit=metrics.summary(np.arange(y.size, dtype=float), y, fitted),
                       v=v, y=y, fitted=fitted, residual_norm=float(np.linalg.norm(fitted - y)),
                       initial=initial)



def _nnls(M, rhs):
    from scipy.optimize import nnls

    try:
        return nnls(M, rhs, maxiter=10 * M.shape[1])[0]
    except RuntimeError as e:            # iteration limit of the active-set method
        raise ValueError(f"the non-negative Preisach fit did not converge ({e}); try a "
                         f"larger tolerance d or smoothing > 0") from None


def _solve_constrained(A: _Weighted, b, G, nonnegative: bool):
    """min ||A x − b||² + ||G x||² (G None: no smoothing) over the cell integrals x and
    the free offset (last entry), with x >= 0 when nonnegative.

    x >= 0 without smoothing: the offset is eliminated by projecting out its column and
    scipy.optimize.nnls (Lawson-Hanson active set) solves the compressed dense problem.
    Smoothing: the normal equations N = AᵀA + GᵀG (n × n, dense) by Cholesky; with
    x >= 0 as well, nnls on the equivalent square problem ||Lᵀx − L⁻¹Aᵀb||² (N = LLᵀ).
    """
    from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular

    R, n1 = A.shape
    if R * n1 > DENSE_LIMIT or (G is not None and n1 * n1 > DENSE_LIMIT):
        return _solve_constrained_iterative(A, b, G, nonnegative)
    M = A.dense
    u = M[:, -1]
    K = M[:, :-1]
    if nonnegative:
        # offset o = uᵀ(b − Kx)/uᵀu at the optimum: project it out
        P = K - np.outer(u, u @ K) / (u @ u)
        pb = b - u * (u @ b) / (u @ u)
        if G is None:
            x = _nnls(P, pb)
        else:
            N = P.T @ P + (G.T @ G).toarray()
            try:
                L = np.linalg.cholesky(N)
            except LinAlgError:
                raise ValueError("smoothing too small for a unique non-negative fit; use "
                                 "smoothing in [1e-6, inf) relative to the data") from None
            x = _nnls(L.T.copy(), solve_triangular(L, P.T @ pb, lower=True))
        return np.r_[x, u @ (b - K @ x) / (u @ u)]
    from scipy.sparse import csr_matrix, hstack

    Gx = hstack([G, csr_matrix((G.shape[0], 1))]).tocsr()
    N = M.T @ M + (Gx.T @ Gx).toarray()
    try:
        return cho_solve(cho_factor(N), M.T @ b)
    except LinAlgError:
        raise ValueError("smoothing too small for a unique fit; use a larger smoothing") from None


def _solve_constrained_iterative(A: _Weighted, b, G, nonnegative: bool):
    # too big for dense matrices: scipy's iterative solvers on the compressed operator
    # (lsq_linear trf with lsmr for x >= 0, lsmr on the augmented system for smoothing)
    from scipy.optimize import lsq_linear
    from scipy.sparse import csr_matrix, hstack
    from scipy.sparse.linalg import LinearOperator, lsmr

    R, n1 = A.shape
    op, rhs = A.op, b
    if G is not None:
        Gx = hstack([G, csr_matrix((G.shape[0], 1))]).tocsr()
        op = LinearOperator((R + Gx.shape[0], n1),
                            matvec=lambda x: np.r_[A.op.matvec(x), Gx @ x],
                            rmatvec=lambda z: A.op.rmatvec(z[:R]) + Gx.T @ z[R:], dtype=float)
        rhs = np.r_[b, np.zeros(Gx.shape[0])]
    with _one_blas_thread():
        if not nonnegative:
            return lsmr(op, rhs, atol=1e-10, btol=1e-10, maxiter=20 * n1)[0]
        lb = np.r_[np.zeros(n1 - 1), -np.inf]
        sol = lsq_linear(op, rhs, bounds=(lb, np.full(n1, np.inf)), lsq_solver="lsmr",
                         tol=1e-10, max_iter=200)
        return sol.x
