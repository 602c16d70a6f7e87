"""Numba kernels of the planar discrete Cosserat rod (see rod.py for the model).

Unknowns, interleaved so that the tangent stiffness is banded (4 sub-, 4 super-diagonals):

    q = [θ_0, x_0, y_0, θ_1, x_1, y_1, ..., θ_N, x_N, y_N, θ_{N+1}]

θ_j at 3j (j = 0..N+1): θ_1..θ_N are the frame angles of the N segments, θ_0 and
θ_{N+1} the frames of the two end cross-sections; (x_j, y_j) at 3j+1, 3j+2 (j = 0..N)
are the N+1 centreline nodes. Segment i (1..N) joins r_{i-1} and r_i, so its dofs are
the contiguous block 3i-2 .. 3i+2.

Strains (Manfredo, Dörlich, Linn & Arnold (2023), §2, Γ = Rᵀ·∂s r, K = Rᵀ·κ):
    Γ_i = R(θ_i)ᵀ (r_i − r_{i-1})/h,   extension ε = Γ_i·e_t − 1, shear γ = Γ_i·e_n,
    K_j = (θ_{j+1} − θ_j)/ℓ_j  at vertex j, ℓ_j = h inside, h/2 at the two ends.
Forces: eq. (1), F = diag(GA, EA)·(Γ − Γ_0); moments M_j = M̂[K_j] (eqs. (2)-(3)), one
force element per vertex with its own memory.
"""
import weakref

import numpy as np
from numba import njit

BW = 4  # half bandwidth of the tangent stiffness


@njit(cache=True)
def curvatures(q, N, h, K):
    """K_j = (θ_{j+1} − θ_j)/ℓ_j for the N+1 vertices j = 0..N."""
    for j in range(N + 1):
        ell = h if (0 < j < N) else 0.5 * h
        K[j] = (q[3 * j + 3] - q[3 * j]) / ell


@njit(cache=False)  # specialised per law (its kernels are arguments): not cacheable
def eval_moments(K, K_prev, X_prev, X_trial, advance, force, slope, has_slope, p,
                 dK_fd, M, S):
    """Trial moments M_j and tangents S_j = dM_j/dK_j at curvatures K.

    Each vertex starts from its committed memory X_prev[j] at K_prev[j] and moves along
    the straight curvature path to K[j] (one pseudo-time unit, so v = ΔK); X_prev is
    left untouched. Without a slope kernel the tangent is a one-sided difference in the
    direction of travel (the active branch).
    """
    nn = K.size
    for j in range(nn):
        xj = X_trial[j]
        # element by element: a slice assignment compiles numba's shape-mismatch message
        # (string formatting, 3 s per compile)
        for i in range(xj.size):
            xj[i] = X_prev[j, i]
        dk = K[j] - K_prev[j]
        advance(xj, K_prev[j], K[j], 1.0, dk, p, 1e-10)
        M[j] = force(xj, K[j], dk, p)
        if has_slope:
            S[j] = slope(xj, K[j], dk, p)
        else:
            sg = 1.0 if dk >= 0.0 else -1.0
            d = sg * dK_fd * (1.0 + abs(K[j]))
            xt = xj.copy()
            advance(xt, K[j], K[j] + d, 1.0, d, p, 1e-10)
            S[j] = (force(xt, K[j] + d, d, p) - M[j]) / d


# eval_moments for one law, from the generated-code cache (systems/compile_cache.py): with
# the kernels as arguments it was compiled again for every law object and process (a
# new sum's exec'd kernels are new types: 12 compiles, 19 s of the README suite); the
# module binds the kernels by name (a sum's source over its parts' kernels, or the
# law's own module-level kernels) and numba caches it once per install
_MOMENTS = """from numba import njit

from hystmech.systems.compile_cache import resolve
from {rk} import eval_moments as _generic

{names}

{source}

_body = njit(inline="always")(_generic.py_func)


@njit(cache=True)
def moments(K, K_prev, X_prev, X_trial, has_slope, p, dK_fd, M, S):
    _body(K, K_prev, X_prev, X_trial, _adv, _frc, _slp, has_slope, p, dK_fd, M, S)
"""
_KERNELS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _moments_source(law, slope):
    from ..compile_cache import kernel_ref

    own = {"_adv": law.advance, "_frc": law.force, "_slp": slope}
    refs = {k: kernel_ref(f) for k, f in own.items()}
    if all(r is not None for r in refs.values()):
        return refs, ""
    gen = law.kernel_source(("advance", "force", "slope") if slope is law.slope
                            else ("advance", "force"))
    if gen is None:
        return None
    source, names = gen
    refs = {k: kernel_ref(f) for k, f in names.items()}
    if any(r is None for r in refs.values()):
        return None
    bind = ["_adv = njit(advance)", "_frc = njit(force)",
            "_slp = njit(slope)" if slope is law.slope else "_slp = _frc"]
    return refs, source + "\n\n" + "\n".join(bind)


def moments_kernel(law, slope):
    """``moments(K, K_prev, X_prev, X_trial, has_slope, p, dK_fd, M, S)``: eval_moments
    for ``law``'s kernels (``slope``: law.slope, or law.force when it has none), from the
    generated-code cache when its kernels are importable, else eval_moments with them
    as arguments (compiled per process)."""
    per = _KERNELS.setdefault(law.advance, {})
    fn = per.get((law.force, slope))
    if fn is None:
        from .. import compile_cache

        got = _moments_source(law, slope)
        mod = None
        if got is not None:
            refs, source = got
            names = "\n".join(f"{k} = resolve({m!r}, {q!r})" for k, (m, q) in sorted(refs.items()))
            src = _MOMENTS.format(rk=__name__, names=names, source=source)
            mod, _ = compile_cache.load(src, sorted({__name__} | {m for m, _ in refs.values()}))
        if mod is not None:
            fn = mod.moments
        else:
            def fn(K, K_prev, X_prev, X_trial, has_slope, p, dK_fd, M, S,
                   _a=law.advance, _f=law.force, _s=slope):
                eval_moments(K, K_prev, X_prev, X_trial, _a, _f, _s, has_slope, p, dK_fd,
                             M, S)
        per[(law.force, slope)] = fn
    return fn


@njit(cache=True)
def segment_energy(q, N, h, EA, GA):
    """Stored energy of extension and shear, Σ h(½EA ε² + ½GA γ²) [J]."""
    e = 0.0
    for i in range(1, N + 1):
        c = np.cos(q[3 * i]); s = np.sin(q[3 * i])
        dx = q[3 * i + 1] - q[3 * i - 2]
        dy = q[3 * i + 2] - q[3 * i - 1]
        eps = (dx * c + dy * s) / h - 1.0
        gam = (-dx * s + dy * c) / h
        e += h * (0.5 * EA * eps * eps + 0.5 * GA * gam * gam)
    return e


@njit(cache=True)
def assemble(q, N, h, EA, GA, M, S, g, ab):
    """Internal generalized forces g(q) and banded tangent stiffness ab (LAPACK layout
    for scipy.linalg.solve_banded((4, 4), ab, ·): ab[4 + r − c, c] = ∂g_r/∂q_c).

    Segments: potential h(½EA ε² + ½GA γ²) (eq. (1)); vertices: virtual work
    Σ ℓ_j M_j δK_j = Σ M_j (δθ_{j+1} − δθ_j), tangent S_j/ℓ_j.
    """
    g[:] = 0.0
    ab[:, :] = 0.0
    H = np.empty((5, 5))
    for i in range(1, N + 1):
        b0 = 3 * i - 2
        th = q[3 * i]
        t0 = np.cos(th); t1 = np.sin(th)
        n0 = -t1; n1 = t0
        dx = q[3 * i + 1] - q[3 * i - 2]
        dy = q[3 * i + 2] - q[3 * i - 1]
        a = dx * t0 + dy * t1          # d·t
        b = dx * n0 + dy * n1          # d·n
        eps = a / h - 1.0
        gam = b / h
        f0 = EA * eps * t0 + GA * gam * n0
        f1 = EA * eps * t1 + GA * gam * n1
        gth = (EA - GA) * a * b / h - EA * b
        g[b0] -= f0; g[b0 + 1] -= f1
        g[b0 + 2] += gth
        g[b0 + 3] += f0; g[b0 + 4] += f1
        # second derivatives w.r.t. d = r_i − r_{i-1} and θ_i
        cA = EA / h; cG = GA / h
        hxx = cA * t0 * t0 + cG * n0 * n0
        hxy = cA * t0 * t1 + cG * n0 * n1
        hyy = cA * t1 * t1 + cG * n1 * n1
        cdt = (EA - GA) * b / h
        cdn = (EA - GA) * a / h - EA
        hxt = cdt * t0 + cdn * n0
        hyt = cdt * t1 + cdn * n1
        htt = (EA - GA) * (b * b - a * a) / h + EA * a
        # local order: x_{i-1}, y_{i-1}, θ_i, x_i, y_i ; d = r_i − r_{i-1}
        sg = np.array([-1.0, -1.0, 0.0, 1.0, 1.0])
        for r in range(5):
            for c in range(5):
                H[r, c] = 0.0
        for r in (0, 1, 3, 4):
            for c in (0, 1, 3, 4):
                hv = hxx if (r % 3 == 0 and c % 3 == 0) else (
                    hyy if (r % 3 == 1 and c % 3 == 1) else hxy)
                H[r, c] = sg[r] * sg[c] * hv
            hvt = hxt if r % 3 == 0 else hyt
            H[r, 2] = sg[r] * hvt
            H[2, r] = sg[r] * hvt
        H[2, 2] = htt
        for r in range(5):
            for c in range(5):
                ab[BW + r - c, b0 + c] += H[r, c]
    for j in range(N + 1):
        ell = h if (0 < j < N) else 0.5 * h
        i0 = 3 * j
        i1 = 3 * j + 3
        g[i0] -= M[j]
        g[i1] += M[j]
        k = S[j] / ell
        ab[BW, i0] += k
        ab[BW, i1] += k
        ab[BW + i0 - i1, i1] -= k
        ab[BW + i1 - i0, i0] -= k


@njit(cache=True)
def fix_rows(ab, idx):
    """Replace the rows idx of the banded matrix by unit rows (prescribed dofs)."""
    n = ab.shape[1]
    for k in range(idx.size):
        r = idx[k]
        for c in range(max(0, r - BW), min(n, r + BW + 1)):
            ab[BW + r - c, c] = 0.0
        ab[BW, r] = 1.0


@njit(cache=True)
def commit(K, K_prev, X_trial, X_prev):
    K_prev[:] = K
    X_prev[:, :] = X_trial
