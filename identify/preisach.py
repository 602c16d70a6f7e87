"""Identification of a Preisach kernel by least squares, Manfredo, Dörlich, Linn & Arnold
(2023), §4, eqs. (13)-(19).

Discretisation. The input is rounded to a grid of tolerance ``d`` (g_k = k·d). In the
switching thresholds (α, β) = (s + r, s − r) of the relays R_{s−r, s+r}, every grid
square [g_i, g_i+1] × [g_j, g_j+1] (j < i) is split along its anti-diagonal into two
triangles, and the squares on the diagonal β = α are half-squares (one triangle): in
(r, s) this is a triangulation of the triangle of eq. (14) whose edges carry every
memory curve of a rounded input (eq. (10)) and the initial curve s = 0. Only the
triangles that change state during the record ("the part of the Preisach plane swept
by the memory curve") are unknowns; those that never switch add a constant, fitted as
one offset.

Assembly. Row i of Δ (eq. (17)) is δ_i^m = ±1 (below/above the memory curve). Δ is
dense in ±1, but its row differences are sparse (only the triangles that switch between
two samples change), so Δ = Δ_0 + L·D with D sparse (scipy CSR) and L the cumulative
sum; it is used as a scipy LinearOperator and never formed.

Solution of eq. (19): the minimum-norm least-squares solution of Δx ≈ y (what the
paper's SVD reduction computes) by scipy.sparse.linalg.lsmr from x = 0; options:
non-negative kernel (scipy.optimize.lsq_linear, bounds x ≥ 0) and Tikhonov smoothing
of the kernel values between neighbouring triangles (an augmented sparse system).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from . import metrics


# -- triangulation -----------------------------------------------------------------------------
@dataclass
class PreisachMesh:
    """Triangles of the threshold grid: integer square indices (i, j), kind 0 = lower,
    1 = upper half of a square (split along its anti-diagonal), 2 = diagonal half-square;
    grid g_k = k·d [input units]."""

    d: float
    i: np.ndarray
    j: np.ndarray
    kind: np.ndarray

    @property
    def n(self) -> int:
        return int(self.i.size)

    def vertices_ab(self) -> np.ndarray:
        """(n, 3, 2) triangle vertices in (α, β)."""
        d = self.d
        a0, b0 = self.i * d, self.j * d
        a1, b1 = a0 + d, b0 + d
        V = np.empty((self.n, 3, 2))
        lo, up, dg = self.kind == 0, self.kind == 1, self.kind == 2
        # lower: corners (a0,b0), (a1,b0), (a0,b1); upper: (a1,b1), (a1,b0), (a0,b1)
        V[lo] = np.stack([np.c_[a0, b0], np.c_[a1, b0], np.c_[a0, b1]], axis=1)[lo]
        V[up] = np.stack([np.c_[a1, b1], np.c_[a1, b0], np.c_[a0, b1]], axis=1)[up]
        # diagonal cell β ≤ α in [a0, a1]²: corners (a0,a0), (a1,a0), (a1,a1)
        V[dg] = np.stack([np.c_[a0, b0], np.c_[a1, b0], np.c_[a1, b1]], axis=1)[dg]
        return V

    def vertices_rs(self) -> np.ndarray:
        """(n, 3, 2) triangle vertices in the Preisach plane (r, s)."""
        V = self.vertices_ab()
        return np.stack([(V[..., 0] - V[..., 1]) / 2, (V[..., 0] + V[..., 1]) / 2], axis=-1)

    def area_rs(self) -> np.ndarray:
        """Triangle areas in (r, s) (the (α, β) area times 1/2)."""
        return np.where(self.kind == 2, 0.25, 0.25) * self.d ** 2

    def centroid_ab(self) -> np.ndarray:
        return self.vertices_ab().mean(axis=1)


def full_mesh(d: float, kmin: int, kmax: int) -> PreisachMesh:
    """All triangles with thresholds in [kmin·d, kmax·d] (the triangle of eq. (14))."""
    I, J, K = [], [], []
    for i in range(kmin, kmax):
        for j in range(kmin, i):
            I += [i, i]
            J += [j, j]
            K += [0, 1]
        I.append(i)
        J.append(i)
        K.append(2)
    return PreisachMesh(float(d), np.asarray(I, np.int64), np.asarray(J, np.int64),
                        np.asarray(K, np.int64))


@njit(cache=True)
def _switching(ci, cj, init, idx):
    """Cell states along the rounded input (grid indices idx). Returns the initial
    states after the first sample, and COO (time, cell, change) of later switches."""
    n = ci.size
    st = init.copy()
    T = idx.size
    cap = 1024
    rows = np.empty(cap, np.int64)
    cols = np.empty(cap, np.int64)
    vals = np.empty(cap, np.float64)
    nnz = 0
    for k in range(T):
        v = idx[k]
        for m in range(n):
            new = st[m]
            if v >= ci[m] + 1:        # reached the up-threshold g_{i+1}
                new = 1.0
            elif v <= cj[m]:          # reached the down-threshold g_j
                new = -1.0
            if new != st[m]:
                if k == 0:
                    st[m] = new
                    continue
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
        if k == 0:
            init = st.copy()
    return init, rows[:nnz], cols[:nnz], vals[:nnz]


def _initial_states(mesh: PreisachMesh, initial="demagnetized") -> np.ndarray:
    # "demagnetized": ψ(0) = 0 of eq. (10), relays with s < 0 are +1; or all -1 / +1
    if initial in (-1, 1):
        return np.full(mesh.n, float(initial))
    if initial != "demagnetized":
        raise ValueError(f"initial must be 'demagnetized', -1 or +1 (got {initial!r})")
    s = mesh.centroid_ab().sum(axis=1) / 2
    return np.where(s < 0, 1.0, -1.0)


@dataclass
class DeltaOperator:
    """Δ of eqs. (17)-(18) as Δ_i = Δ_0 + Σ_{k ≤ i} D_k (D sparse CSR, T × n), with an
    optional last column of ones (the offset of the triangles that never switch)."""

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
        out = self.delta0 * float(np.sum(y)) + self.D.T @ rc
        return np.r_[out, np.sum(y)] if self.offset else out

    def linear_operator(self):
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec, dtype=float)

    def dense(self) -> np.ndarray:
        """Δ as a dense array (small problems, tests, the benchmark's baseline)."""
        M = self.delta0[None, :] + np.cumsum(self.D.toarray(), axis=0)
        return np.c_[M, np.ones(M.shape[0])] if self.offset else M


def assemble(v, d: float, mesh: PreisachMesh | None = None, swept_only: bool = True,
             offset: bool = True, initial="demagnetized"):
    """Round the input v to the grid of tolerance d, triangulate and assemble Δ.

    Returns (mesh, DeltaOperator). With swept_only, the mesh keeps the triangles that
    switch at least once after the first sample (eq. (15) sets restricted to the part
    swept by the memory curve); mesh may be given to reuse a triangulation.
    """
    from scipy.sparse import coo_matrix

    v = np.asarray(v, dtype=float)
    d = float(d)
    if not (np.isfinite(d) and d > 0):
        raise ValueError(f"rounding tolerance d must be in (0, inf) (got {d!r})")
    idx = np.rint(v / d).astype(np.int64)
    if mesh is None:
        m = int(max(abs(idx.min()), abs(idx.max())))     # eq. (14): m = max |v|
        mesh = full_mesh(d, -m, m)
        if mesh.n > 2_000_000:
            raise ValueError(f"d = {d:g} gives {mesh.n} triangles; use a larger tolerance d")
    init = _initial_states(mesh, initial)
    st0, r, c, val = _switching(mesh.i, mesh.j, init, idx)
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
    """Sparse differences between triangles sharing an edge (see module docstring)."""
    from scipy.sparse import coo_matrix

    key = {(int(i), int(j), int(k)): m for m, (i, j, k) in enumerate(zip(mesh.i, mesh.j, mesh.kind))}
    pairs = []
    for (i, j, k), m in key.items():
        if k == 0:
            cand = [(i, j, 1), (i - 1, j, 1) if j < i - 1 else (i - 1, i - 1, 2), (i, j - 1, 1)]
        elif k == 2:
            cand = [(i, i - 1, 1)]
        else:
            continue
        for c in cand:
            if c in key:
                pairs.append((m, key[c]))
    if not pairs:
        return coo_matrix((0, mesh.n)).tocsr()
    p = np.asarray(pairs)
    rows = np.repeat(np.arange(len(pairs)), 2)
    cols = p.ravel()
    vals = np.tile([1.0, -1.0], len(pairs))
    return coo_matrix((vals, (rows, cols)), shape=(len(pairs), mesh.n)).tocsr()


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
        """Kernel value ω on each triangle: x / area in (r, s)."""
        return self.x / self.mesh.area_rs()

    def predict(self, v_history) -> np.ndarray:
        """Output for an input history v (starting from the demagnetised state, like the
        data fitted; pass the whole history so that the memory is right). Triangles of
        the plane not identified contribute only through the offset."""
        v = np.asarray(v_history, dtype=float)
        idx = np.rint(v / self.mesh.d).astype(np.int64)
        init = _initial_states(self.mesh, self.initial)
        st0, r, c, val = _switching(self.mesh.i, self.mesh.j, init, idx)
        from scipy.sparse import coo_matrix

        D = coo_matrix((val, (r, c)), shape=(v.size, self.mesh.n)).tocsr()
        return DeltaOperator(st0, D, True).matvec(np.r_[self.x, self.offset])

    def relays(self):
        """(a1, a2, weight): one relay per triangle, thresholds at its centroid
        (a1 = β < a2 = α), weight = x, for hystmech.components.Preisach.from_relays."""
        c = self.mesh.centroid_ab()
        return c[:, 1], c[:, 0], self.x.copy()

    def element(self):
        """A hystmech.components.Preisach with these relays and offset (initial −1/+1
        fits only: the element has one initial state for all relays)."""
        from ..components import get_element_class

        if self.initial not in (-1, 1):
            raise ValueError("a Preisach element needs a fit with initial = -1 or +1")
        a1, a2, w = self.relays()
        return get_element_class("Preisach")(a1=a1, a2=a2, weights=w, initial=int(self.initial),
                                             offset=self.offset)

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
            polys = [np.c_[tri, np.full(3, wv)] for tri, wv in zip(V, w)]
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
        fig.suptitle(title or f"Preisach kernel, {self.mesh.n} triangles, d = {self.mesh.d:g}")
        return fig


def fit_preisach(v, y, d: float, *, nonnegative: bool = False, smoothing: float = 0.0,
                 atol: float = 1e-10, btol: float = 1e-10, maxiter: int | None = None,
                 initial="demagnetized") -> PreisachFit:
    """Identify the Preisach kernel from an input history v and output y (equal-length
    arrays, e.g. curvature [1/m] and moment [N·m]) with rounding tolerance d
    (Manfredo et al. (2023), eqs. (13)-(19)).

    Default: the minimum-norm least-squares solution (scipy lsmr on the sparse Δ).
    nonnegative=True: kernel ≥ 0 (scipy.optimize.lsq_linear). smoothing > 0: Tikhonov
    penalty smoothing²·Σ(x_a − x_b)² over triangles a, b sharing an edge.
    initial: the relays' state before the record, "demagnetized" (ψ(0) = 0, eq. (10))
    or −1 / +1 for all relays (as hystmech.components.Preisach(initial=...)).
    """
    from scipy.sparse import hstack, vstack, csr_matrix
    from scipy.sparse.linalg import LinearOperator, lsmr

    v = np.asarray(v, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if v.size != y.size:
        raise ValueError(f"input and output must have equal lengths (got {v.size} and {y.size})")
    if v.size < 3 or not (np.all(np.isfinite(v)) and np.all(np.isfinite(y))):
        raise ValueError("input and output must hold at least 3 finite samples")
    mesh, op = assemble(v, d, initial=initial)
    A = op.linear_operator()
    n1 = op.shape[1]
    if smoothing < 0:
        raise ValueError(f"smoothing must be in [0, inf) (got {smoothing!r})")
    rhs = y
    if smoothing > 0:
        G = _smoothing_matrix(mesh)
        G = hstack([G, csr_matrix((G.shape[0], 1))]).tocsr() * float(smoothing)
        base = A
        A = LinearOperator((op.shape[0] + G.shape[0], n1),
                           matvec=lambda x: np.r_[base.matvec(x), G @ x],
                           rmatvec=lambda z: base.rmatvec(z[:op.shape[0]]) + G.T @ z[op.shape[0]:],
                           dtype=float)
        rhs = np.r_[y, np.zeros(G.shape[0])]
    maxiter = maxiter or 20 * n1
    if nonnegative:
        from scipy.optimize import lsq_linear

        lb = np.r_[np.zeros(mesh.n), -np.inf]
        sol = lsq_linear(A, rhs, bounds=(lb, np.full(n1, np.inf)), lsq_solver="lsmr",
                         tol=1e-10, max_iter=200)
        x = sol.x
    else:
        x = lsmr(A, rhs, atol=atol, btol=btol, maxiter=maxiter)[0]
    fitted = op.matvec(x)
    res = fitted - y
    return PreisachFit(mesh=mesh, x=x[:mesh.n], offset=float(x[mesh.n]),
                       merit=metrics.summary(np.arange(y.size, dtype=float), y, fitted),
                       v=v, y=y, fitted=fitted, residual_norm=float(np.linalg.norm(res)),
                       initial=initial)
