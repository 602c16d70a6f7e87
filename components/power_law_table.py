"""Tabulated arc length of the power-law ODE: the fast path of power_law_map for long runs.

On a side of y = 0 the state w = |y| of dy/ds = q0 − q1 sgn(y)|y|^m − q2|y|^m obeys
dw/ds = ±(a − b w^m); with w = λτ, λ = (a/|b|)^(1/m), and s = (λ/a)σ this is
dτ/dσ = ±(1 ∓ τ^m), the same for every parameter set with the same m. Its arc-length
coordinate

    σ = F(τ) = ∫ dt/(1 − t^m)   (b > 0: "S" below the saturation τ = 1 from 0, "A"
                                  above it from τ = 2)
    σ = G(τ) = ∫_0^τ dt/(1 + t^m)   (b < 0: "G", the growing/return branch)

turns a segment of arc length s into a shift: σ_end = σ_start ± (a/λ)s, τ_end = F⁻¹(σ_end),
the switch at y = 0 where σ_end reaches 0 on a return branch (at its exact arc length,
as in the series map). F, G and their inverses are tabulated once per m as piecewise
polynomials (degree 9, Estrin's scheme, uniform cells of the argument or, where the
function spans decades, a fixed number of cells per octave) in the variables in which
they are analytic, so that a table costs no power: F = τΦ(τ^m) near 0 (one power: rare,
a state near 0), F = R(τ) − ln(1 − τ)/m towards the saturation (one logarithm),
F⁻¹ tabulated in σ up to where 1 − τ falls below 2^−50 (then τ = 1). Node values come
from the convergent series of the arc length (S, G) and Gauss–Legendre quadrature of
the regularised integrand (A); the inverses from Newton on the forward tables; every
table is refined (cells doubled) until it meets 3e-14 relative between the nodes.

The kernel vector (``table_kernel_p``) also carries a one-entry memo: the σ of the
state the last call ended in, keyed by the caller's exact state (e.g. z, or the force
and input of the modified Dahl law) and q0. A sample that continues in the same
direction (every sample of a smooth input) then costs one table evaluation, a reversal
(every other sample of a noisy one) two. The memo only returns the σ the previous call
computed for that very state (more accurate than re-deriving it from the rounded y),
so a run's result does not depend on what ran before it; a kernel vector serves one
loop at a time (``drive`` builds one per call).

The C twins keep the series map of power_law_map, with which the tables agree to about
1e-14 relative to the saturation value. States outside the tables' range (beyond a
return branch's unstable point, x = τ^m beyond 4 (m > 1) or 64 (m < 1) on a growing
branch, x beyond 64 (m < 1) or 2 (m > 1) above the saturation) and rtol < 1e-11 take the series map.
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic

DEG = 9
NC = DEG + 1
_TAU_S = 1.0 / 16.0     # below: F = τΦ(τ^m) (the branch point at 0)
_TAU_L = 0.5            # S above: F = R(τ) − ln(1 − τ)/m
_XG = 4.0               # G covers x = τ^m ≤ 4 (m > 1) or ≤ 64 (m < 1)
_XA = 64.0              # A covers x ≤ 64
_EDGE = 2.0 ** -50      # 1 − τ (S) or τ − 1 (A) below which τ is the saturation value
_TOL = 3e-14
RTOL_MIN = 1e-11        # tables serve rtol ≥ this (their error is ~1e-14)
_MEMO = 5               # memo slots: key1, key2, q0, σ, region
_PAIR = 5               # per (a, b) pair: a, b, λ, a/λ, 1/λ
# table slots (offsets in the head)
(S_PHI, S_MID, S_R, S_PSI, S_INV, G_PHI, G_MID, G_PSI, G_INV, A_R, A_FAR, A_INV) = range(12)
_NT = 12
# head: m, τ_s,S, σ_s,S, σ_max,S, τ_s,G, σ_s,G, τ_max,G, σ_max,G, τ_max,A, σ_min,A,
# σ_max,A, then the 12 table offsets
_H = 11
_UNI, _OCT, _NOCT = 0.0, 1.0, 2.0


# -- series for the node values (build time only) ------------------------------------------
@njit(cache=True)
def _phi_sat(x, m):
    # Σ_j x^j/(jm + 1), x ≤ 1/2
    tot = 0.0
    t = 1.0
    for j in range(400):
        term = t / (j * m + 1.0)
        tot += term
        if term < 1e-18 * tot:
            break
        t *= x
    return tot


@njit(cache=True)
def _g_series(tau, m):
    # ∫_0^τ dt/(1 + t^m) = (1/m) y^p Σ_k (p)_k/k! y^k/(p + k), y = x/(1 + x), x = τ^m
    p = 1.0 / m
    x = tau ** m
    y = x / (1.0 + x)
    tot = 0.0
    c = 1.0
    yk = 1.0
    for k in range(20000):
        term = c * yk / (p + k)
        tot += term
        if term < 1e-18 * tot and k > p:
            break
        c *= (p + k) / (k + 1.0)
        yk *= y
    return y ** p * tot / m


@njit(cache=True)
def _r_sat(t, m, bh):
    # F(τ) + ln(1 − τ)/m for τ in [1/2, 1]: F = (−ln(1 − x) + H(x))/m, x = τ^m, with
    # 1 − x = −expm1(m ln τ) from the exact 1 − τ (x itself rounds off what matters)
    e = 1.0 - t
    if e <= 0.0:
        # the limit τ → 1: −ln(1 − x) + ln(1 − τ) → −ln m
        return (_h_sat_eps(0.0, m, bh) - math.log(m)) / m
    ex = -math.expm1(m * math.log1p(-e))
    if ex >= 0.5:
        f = t * _phi_sat(1.0 - ex, m)
        return f + math.log1p(-t) / m
    return (-math.log(ex / e) + _h_sat_eps(ex, m, bh)) / m


@njit(cache=True)
def _h_sat_eps(eps, m, bh):
    # H(x) = B(x; 1/m, 0) + ln(1 − x) on [1/2, 1], from ε = 1 − x:
    # B(1/2) − ln 2 + Σ d_k (2^−k − ε^k)/k, d_k = Π_{i ≤ k} (i − p)/i
    p = 1.0 / m
    tot = bh - math.log(2.0)
    d = 1.0
    for k in range(1, 400):
        d *= (k - p) / k
        term = d * (0.5 ** k - eps ** k) / k
        tot += term
        if abs(term) < 1e-18 * max(abs(tot), 1.0) and k > 2:
            break
    return tot


_GLX, _GLW = np.polynomial.legendre.leggauss(40)


def _quad(g, a, b):
    """∫_a^b g (vectorised over the arrays a, b) by 40-point Gauss–Legendre: g analytic
    on each [a, b]."""
    a = np.asarray(a, float)[..., None]
    b = np.asarray(b, float)[..., None]
    t = 0.5 * (a + b) + 0.5 * (b - a) * _GLX
    return 0.5 * (b - a)[..., 0] * (g(t) @ _GLW)


def _g_above(m):
    # 1/(1 − t^m) + 1/(m (t − 1)): analytic through t = 1. With ε = t − 1,
    # t^m − 1 = mε(1 + δ), δ = Σ_{k≥2} C(m, k) ε^(k−1)/m, and g = δ/(mε(1 + δ)): the
    # binomial series for |ε| < 1/4 (no cancellation), the direct form beyond
    def g(t):
        e = t - 1.0
        small = np.abs(e) < 0.25
        es = np.where(small, 0.5, e)
        out = -1.0 / np.expm1(m * np.log1p(es)) + 1.0 / (m * es)
        ee = np.where(small, e, 0.0)
        dq = np.zeros_like(ee)           # δ/ε
        c = 1.0                           # C(m, k)/m at k = 1
        ek = np.ones_like(ee)             # ε^(k−2)
        for k in range(2, 60):
            c *= (m - k + 1.0) / k
            dq += c * ek
            ek = ek * ee
        delta = dq * ee
        return np.where(small, dq / (m * (1.0 + delta)), out)
    return g


def _octave_integral(f, base, v):
    """∫_base^v f for v ≥ base (an array; base a power of 2, f analytic on [base, ∞)):
    whole octaves cumulated plus the last part."""
    lb = math.log2(base)
    k = np.floor(np.log2(v)).astype(int)
    kmax = int(k.max()) if k.size else int(lb)
    edges = 2.0 ** np.arange(lb, kmax + 2)
    cum = np.concatenate([[0.0], np.cumsum(_quad(f, edges[:-1], edges[1:]))])
    k = np.clip(k, int(lb), kmax)
    return cum[k - int(lb)] + _quad(f, 2.0 ** k, v)


def _a_values(m, v, which):
    """R_A(τ) = F_A(τ) + ln(τ − 1)/m on (1, 2] ('R'), F_A(τ) = −∫_2^τ dt/(t^m − 1) for
    τ ≥ 2 ('F')."""
    if which == "R":
        return _quad(_g_above(m), np.full(v.shape, 2.0), v)
    return _octave_integral(lambda t: -1.0 / np.expm1(m * np.log(t)), 2.0, v)


def _g_values(m, v):
    """G(τ) = ∫_0^τ dt/(1 + t^m) for τ ≥ 1 (the series at τ = 1, quadrature beyond)."""
    return _g_series(1.0, m) + _octave_integral(lambda t: 1.0 / (1.0 + t ** m), 1.0, v)


# -- piecewise polynomials ---------------------------------------------------------------------
def _from_r(r, mode, lo, sc):
    if mode == _UNI:
        return lo + r / sc
    pos = lo + r / sc
    e = np.floor(pos)
    v = (1.0 + (pos - e)) * 2.0 ** (e - 1.0)
    return v if mode == _OCT else -v


def _piece(fn, lo_v, hi_v, mode, n0=4):
    """Cells of degree-DEG Chebyshev interpolants of fn on [lo_v, hi_v] (uniform in v, or
    K cells per octave of ±v with octave-aligned ends), doubled until the error between
    the nodes is below _TOL relative to max(|f|, 1): (hi, mode, lo, scale, n, coefs)."""
    k = np.arange(NC)
    z = np.cos(np.pi * (k + 0.5) / NC)
    zc = np.cos(np.pi * (np.arange(DEG) + 1.0) / NC)
    if mode == _UNI:
        lo = lo_v
        span = hi_v - lo_v
    else:
        a, b = (lo_v, hi_v) if mode == _OCT else (-hi_v, -lo_v)
        ea, eb = np.frexp(a)[1], np.frexp(b)[1]
        lo = float(ea)                                  # a = 2^(ea − 1)
        span = float(eb - ea) + (0.0 if b == 2.0 ** (eb - 1) else 1.0)
        n0 *= int(span)                 # whole cells per octave: none straddles a kink
    n = n0
    while True:
        sc = n / span
        c0 = np.arange(n) + 0.5
        vals = fn(_from_r((c0[:, None] + 0.5 * z).ravel(), mode, lo, sc)).reshape(n, -1)
        chk = fn(_from_r((c0[:, None] + 0.5 * zc).ravel(), mode, lo, sc)).reshape(n, -1)
        V = np.polynomial.chebyshev.chebvander(z, DEG)
        coefs = np.linalg.solve(V, vals.T).T            # Chebyshev coefficients per cell
        mono = np.array([np.pad(np.polynomial.chebyshev.cheb2poly(c), (0, NC))[:NC]
                         for c in coefs])
        got = np.polynomial.polynomial.polyval(zc, mono.T)   # (n, DEG)
        worst = float(np.max(np.abs(got - chk) / np.maximum(np.abs(chk), 1.0)))
        if worst <= _TOL:
            return [hi_v, mode, lo, sc, n], mono.ravel()
        if n >= 4096:
            raise ArithmeticError(f"table piece [{lo_v:g}, {hi_v:g}] does not converge "
                                  f"({worst:.1e} at {n} cells)")
        n *= 2


def _table(pieces):
    """[npieces, (hi, mode, lo, scale, n, offset)·npieces, coefficients...] with offsets
    relative to the table's start."""
    head = [float(len(pieces))]
    body = []
    off = 1 + 6 * len(pieces)
    for desc, coefs in pieces:
        head += desc + [float(off)]
        body.append(coefs)
        off += coefs.size
    return np.concatenate([head] + body)


# -- evaluation (the kernels) ----------------------------------------------------------------
# The kernels read the vector through its address P (an int64), not as an array: an
# array handed down the branches of table_advance costs an atomic reference-count update
# per branch taken (numba's pruning does not see through them), several per sample, more
# than a table cell; and table_advance is compiled once (cached), not inlined into every
# host loop (the inlined version took a minute to compile per loop).
def _address(a, writable):
    if not (isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim == 1
            and a.layout == "C"):
        return None
    if writable and not a.mutable:
        raise TypingError("the table vector must be writable (table_vector)")

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.ptrtoint(ary.data, ir.IntType(64))
    return types.int64(a), codegen


@intrinsic
def _addr(typingctx, a):
    """The address of a float64 vector's data."""
    return _address(a, False)


@intrinsic
def _waddr(typingctx, a):
    """The address of a writable float64 vector's data (the memo is written)."""
    return _address(a, True)


@intrinsic
def _ld(typingctx, P, i):
    """P[i] for the address P of a float64 vector."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.DoubleType().as_pointer())
        return builder.load(builder.gep(ptr, [args[1]], inbounds=True))
    return types.float64(types.int64, types.int64), codegen


@intrinsic
def _st(typingctx, P, i, v):
    """P[i] = v for the address P of a float64 vector."""
    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.DoubleType().as_pointer())
        builder.store(args[2], builder.gep(ptr, [args[1]], inbounds=True))
        return context.get_dummy_value()
    return types.void(types.int64, types.int64, types.float64), codegen


@intrinsic
def _bits(typingctx, x):
    """The IEEE-754 bits of a float64 as an int64 (a register move, no memory)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, n):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


_MANT = (1 << 52) - 1
_ONE = 1023 << 52


@njit(cache=True, inline="always")
def _octpos(v):
    # e + f for v = (1 + f)·2^(e − 1), f in [0, 1) (v > 0 normal): the position of v in
    # octaves, frexp's e + 2·mant − 1 from the bits directly (frexp is a library call)
    b = _bits(v)
    return float((b >> 52) - 1022) + (_from_bits((b & _MANT) | _ONE) - 1.0)


@njit(cache=True, inline="always")
def _pp(P, o, v):
    """The piecewise polynomial at P[o:] at v (inside its range)."""
    q = o + 1
    for _ in range(int(_ld(P, o)) - 1):
        if v <= _ld(P, q):
            break
        q += 6
    mode = _ld(P, q + 1)
    if mode == 0.0:
        r = (v - _ld(P, q + 2)) * _ld(P, q + 3)
    else:
        r = (_octpos(v if mode == 1.0 else -v) - _ld(P, q + 2)) * _ld(P, q + 3)
    n = int(_ld(P, q + 4))
    i = int(r)
    if i >= n:
        i = n - 1
    elif i < 0:
        i = 0
    z = 2.0 * (r - i) - 1.0
    c = o + int(_ld(P, q + 5)) + i * NC
    z2 = z * z
    z4 = z2 * z2
    a01 = _ld(P, c) + _ld(P, c + 1) * z
    a23 = _ld(P, c + 2) + _ld(P, c + 3) * z
    a45 = _ld(P, c + 4) + _ld(P, c + 5) * z
    a67 = _ld(P, c + 6) + _ld(P, c + 7) * z
    a89 = _ld(P, c + 8) + _ld(P, c + 9) * z
    return (a01 + a23 * z2) + (a45 + a67 * z2) * z4 + a89 * (z4 * z4)


@njit(cache=True, inline="always")
def _tab(P, o, k):
    return o + int(_ld(P, o + _H + k))


# the three functions of a vector: S (below the saturation), G (growing/return), A (above)
_FS, _FG, _FA = 0, 1, 2


@njit(cache=True, inline="always")
def _fwd(P, o, f, t):
    """σ = F(τ) of function f (_FS: 0 ≤ τ < 1; _FG, _FA: NaN beyond the table).

    Each function is up to three tables; the branches only pick the table, its argument
    and the closed-form part, so that a caller inlines _pp once however many functions
    it evaluates (21 inlined copies made table_advance a 20 s compilation)."""
    m = _ld(P, o)
    post = 0                # σ = pp (0), τ·pp (1), pp − lg/m (2)
    lg = 0.0
    if f == _FS:
        if t <= _ld(P, o + 1):
            k, v, post = S_PHI, t ** m, 1
        elif t <= _TAU_L:
            k, v = S_MID, t
        else:
            k, v, post, lg = S_R, t, 2, math.log1p(-t)
    elif f == _FG:
        if t <= _ld(P, o + 4):
            k, v, post = G_PHI, t ** m, 1
        elif t <= _ld(P, o + 6):
            k, v = G_MID, t
        else:
            return np.nan
    else:
        if t <= 2.0:
            k, v, post, lg = A_R, t, 2, math.log(t - 1.0)
        elif t <= _ld(P, o + 8):
            k, v = A_FAR, t
        else:
            return np.nan
    r = _pp(P, _tab(P, o, k), v)
    if post == 1:
        return t * r
    if post == 2:
        return r - lg / m
    return r


@njit(cache=True, inline="always")
def _inv(P, o, f, s):
    """τ = F⁻¹(σ) of function f (_FS, _FG: σ ≥ 0; NaN beyond the table for _FG, _FA)."""
    post = False            # τ = σ·pp
    if f == _FS:
        if s <= _ld(P, o + 2):
            if not (s > 0.0):
                return 0.0
            k, v, post = S_PSI, s ** _ld(P, o), True
        elif s < _ld(P, o + 3):
            k, v = S_INV, s
        else:
            return 1.0
    elif f == _FG:
        if s <= _ld(P, o + 5):
            if not (s > 0.0):
                return 0.0
            k, v, post = G_PSI, s ** _ld(P, o), True
        elif s <= _ld(P, o + 7):
            k, v = G_INV, s
        else:
            return np.nan
    else:
        if s >= _ld(P, o + 10):
            return 1.0
        if s >= _ld(P, o + 9):
            k, v = A_INV, s
        else:
            return np.nan
    r = _pp(P, _tab(P, o, k), v)
    return s * r if post else r


# the tables of a vector T at T[o:], by name (building, tests)
@njit(cache=True)
def f_sat(T, o, t):
    """σ = ∫_0^τ dt/(1 − t^m), 0 ≤ τ < 1 (inf at τ = 1)."""
    return _fwd(_addr(T), o, _FS, t)


@njit(cache=True)
def inv_sat(T, o, s):
    """τ with f_sat(τ) = σ ≥ 0."""
    return _inv(_addr(T), o, _FS, s)


@njit(cache=True)
def f_grow(T, o, t):
    """σ = ∫_0^τ dt/(1 + t^m), NaN beyond the table (x = τ^m > 4)."""
    return _fwd(_addr(T), o, _FG, t)


@njit(cache=True)
def inv_grow(T, o, s):
    """τ with f_grow(τ) = σ ≥ 0, NaN beyond the table."""
    return _inv(_addr(T), o, _FG, s)


@njit(cache=True)
def f_above(T, o, t):
    """σ = ∫_2^τ dt/(1 − t^m) for τ > 1 (+inf at 1), NaN beyond x = τ^m > 64."""
    return _fwd(_addr(T), o, _FA, t)


@njit(cache=True)
def inv_above(T, o, s):
    """τ > 1 with f_above(τ) = σ, NaN below the table's σ."""
    return _inv(_addr(T), o, _FA, s)


# -- building ------------------------------------------------------------------------------------
@njit(cache=True, error_model="numpy")
def _newton_inv(T, o, which, sig, lo, hi):
    """τ in [lo, hi] with the forward table ``which`` (0 sat, 1 grow, 2 above) = σ,
    for every σ of ``sig`` (safeguarded Newton; the table's slope is exact)."""
    m = T[o]
    out = np.empty(sig.size)
    for i in range(sig.size):
        s = sig[i]
        a, b = lo, hi
        t = 0.5 * (a + b)
        for _ in range(400):
            if which == 0:
                f = f_sat(T, o, t) - s
                d = 1.0 / (1.0 - t ** m)
            elif which == 1:
                f = f_grow(T, o, t) - s
                d = 1.0 / (1.0 + t ** m)
            else:
                f = f_above(T, o, t) - s
                d = 1.0 / (1.0 - t ** m)
            # F increases in τ (S, G) or decreases (A): the root is below t when f
            # and the slope have the same sign
            if (f > 0.0) == (d > 0.0):
                b = min(b, t)
            else:
                a = max(a, t)
            tn = t - f / d
            if not (a <= tn <= b):
                tn = 0.5 * (a + b)
            if abs(tn - t) <= 1e-16 * abs(t):
                t = tn
                break
            t = tn
        out[i] = t
    return out


def _forward_sat(m, tabs, head):
    """S below the saturation: τΦ(τ^m) near 0, uniform cells to 1/2, R(τ) beyond."""
    ts = _TAU_S
    bh = m * 0.5 ** (1.0 / m) * _phi_sat(0.5, m)     # B(1/2; 1/m, 0)
    vec = np.vectorize
    tabs[S_PHI] = _table([_piece(vec(lambda x: _phi_sat(x, m)), 0.0, ts ** m, _UNI)])
    tabs[S_MID] = _table([_piece(vec(lambda t: t * _phi_sat(t ** m, m) if t ** m <= 0.5 else
                                     (-math.log1p(-t ** m) + _h_sat_eps(1.0 - t ** m, m, bh)) / m),
                                 ts, _TAU_L, _UNI)])
    tabs[S_R] = _table([_piece(vec(lambda t: _r_sat(t, m, bh)), _TAU_L, 1.0, _UNI)])
    head[1] = ts


def _forward_grow(m, tabs, head):
    """G, the growing/return branch. For m < 1 it grows like τ^(1 − m) (the modified
    Dahl gap after an envelope switch lands far out on it): x ≤ 64 in octaves; for m > 1
    its arc length is bounded and τ(σ) has a pole at its end: x ≤ 4."""
    p = 1.0 / m
    ts = _TAU_S
    tg = (_XG if m > 1.0 else _XA) ** p
    vec = np.vectorize
    tabs[G_PHI] = _table([_piece(vec(lambda x: _g_series(x ** p, m) / x ** p if x > 0 else 1.0),
                                 0.0, ts ** m, _UNI)])
    tabs[G_MID] = _table([_piece(vec(lambda t: _g_series(t, m)), ts, 1.0, _UNI)]
                         + ([_piece(lambda v: _g_values(m, v), 1.0, tg,
                                    _UNI if m > 1.0 else _OCT)] if tg > 1.0 else []))
    head[4], head[6] = ts, tg


def _forward_above(m, tabs, head):
    """A above the saturation. For m < 1 τ(σ) grows like |σ|^(1/(1 − m)) (x ≤ 64 in
    octaves); for m > 1 it has a pole at the arc length to infinity: x ≤ 2."""
    ta = (_XA if m < 1.0 else 2.0) ** (1.0 / m)
    tabs[A_R] = _table([_piece(lambda v: _a_values(m, v, "R"), 1.0, 2.0, _UNI)])
    tabs[A_FAR] = (_table([_piece(lambda v: _a_values(m, v, "F"), 2.0, ta, _OCT)])
                   if ta > 2.0 else _table([([2.0, _UNI, 2.0, 1.0, 1], np.zeros(NC))]))
    head[8] = ta


def _inverter(T0, which, lo, hi):
    return lambda s: _newton_inv(T0, 0, which, np.ravel(s), lo, hi).reshape(np.shape(s))


def _scaled_inverse(inv, p):
    # τ(σ)/σ as a function of y = σ^m near σ = 0 (τ = σΨ(σ^m), the branch point)
    return lambda y: np.where(y > 0, inv(np.maximum(y, 1e-300) ** p)
                              / np.maximum(y, 1e-300) ** p, 1.0)


def _inverse_sat(m, T0, tabs, head):
    ss = float(f_sat(T0, 0, np.float64(_TAU_S)))
    smax = float(f_sat(T0, 0, 1.0 - _EDGE))
    inv_s = _inverter(T0, 0, 0.0, 1.0)
    tabs[S_PSI] = _table([_piece(_scaled_inverse(inv_s, 1.0 / m), 0.0, ss ** m, _UNI)])
    # towards the saturation τ(σ) is smooth on cells of width ~1/m; nearer to σ = 0
    # (its branch point) cells of a fixed number per octave
    top = 2.0 ** math.floor(math.log2(max(smax / 2.0, 2.0)))
    tabs[S_INV] = _table([_piece(inv_s, ss, 1.0, _UNI), _piece(inv_s, 1.0, top, _OCT),
                          _piece(inv_s, top, smax, _UNI)])
    head[2], head[3] = ss, smax


def _inverse_grow(m, T0, tabs, head):
    tg = head[6]
    sgs = float(f_grow(T0, 0, np.float64(_TAU_S)))
    sgmax = float(f_grow(T0, 0, np.float64(tg)))
    inv_g = _inverter(T0, 1, 0.0, tg)
    tabs[G_PSI] = _table([_piece(_scaled_inverse(inv_g, 1.0 / m), 0.0, sgs ** m, _UNI)])
    gcut = min(1.0, sgmax)
    if m < 1.0 and sgmax > 2.0:
        # whole octaves inside the table (beyond the last one: the series map)
        sgmax = 2.0 ** math.floor(math.log2(sgmax))
    tabs[G_INV] = _table([_piece(inv_g, sgs, gcut, _UNI)]
                         + ([_piece(inv_g, gcut, sgmax, _UNI if m > 1.0 else _OCT)]
                            if sgmax > gcut else []))
    head[5], head[7] = sgs, sgmax


def _inverse_above(m, T0, tabs, head):
    ta = head[8]
    samin = float(f_above(T0, 0, np.float64(ta)))
    samax = float(f_above(T0, 0, 1.0 + _EDGE))
    inv_a = _inverter(T0, 2, 1.0 + 0.5 * _EDGE, ta)
    # σ below −1: octaves of −σ (τ grows like |σ|^(1/(1 − m)) for m < 1), whole octaves
    # inside the table (the range ends at the last one: beyond, the series map)
    if samin < -2.0:
        samin = -2.0 ** math.floor(math.log2(-samin))
        pieces = [_piece(inv_a, samin, -1.0, _NOCT), _piece(inv_a, -1.0, samax, _UNI)]
    else:
        pieces = [_piece(inv_a, samin, min(samin + 1.0, samax), _UNI)]
        if samin + 1.0 < samax:
            pieces.append(_piece(inv_a, samin + 1.0, samax, _UNI))
    tabs[A_INV] = _table(pieces)
    head[9], head[10] = samin, samax


def _assemble(head, tabs):
    offs, parts, off = [], [], _H + _NT
    for t in tabs:
        offs.append(off)
        parts.append(t if t is not None else np.zeros(0))
        off += parts[-1].size
    return np.concatenate([head, np.array(offs, float)] + parts)


def _build(m: float) -> np.ndarray:
    """The forward tables of the three branches, then their inverses by Newton on a
    vector holding the forward ones."""
    tabs = [None] * _NT
    head = np.zeros(_H)
    head[0] = m
    for forward in (_forward_sat, _forward_grow, _forward_above):
        forward(m, tabs, head)
    T0 = _assemble(head, tabs)
    # read-only like the tables handed out: f_sat & co. compile for one array type
    T0.flags.writeable = False
    for inverse in (_inverse_sat, _inverse_grow, _inverse_above):
        inverse(m, T0, tabs, head)
    out = _assemble(head, tabs)
    out.flags.writeable = False
    return out


_TABLES: dict = {}


def power_law_table(m: float) -> np.ndarray:
    """The tables of exponent m > 0, m ≠ 1, as one read-only float64 vector (kept per
    m in this process); ArithmeticError for an exponent whose tables do not reach their
    accuracy (the series map then serves it)."""
    m = float(m)
    if m in _TABLES and _TABLES[m] is None:
        raise ArithmeticError(f"no tables for m = {m:g}")
    tab = _TABLES.get(m)
    if tab is None:
        if len(_TABLES) >= 64:
            _TABLES.pop(next(iter(_TABLES)))
        tab = _TABLES[m] = _build(m)
    return tab


# building the tables of one m takes a fraction of a second, what the series map spends
# on about 5e5 rough samples: used for runs of that size (built once per m and process)
BUILD_WORK = 500_000


def table_vector(m: float, pairs=()) -> np.ndarray:
    """The vector ``table_advance`` reads at its offset: the memo, the scales of the
    (a, |b|) pairs (λ = (a/|b|)^(1/m), a/λ, 1/λ) and the tables of m (a fresh, writable
    vector: the memo is written)."""
    head = [np.nan] * _MEMO + [float(len(pairs))]
    for a, b in pairs:
        lam = (a / b) ** (1.0 / m)
        head += [a, b, lam, a / lam, 1.0 / lam]
    return np.concatenate([head, power_law_table(m)])


def table_kernel_p(p, m: float, work: int, pairs=()) -> np.ndarray:
    """p followed by ``table_vector(m, pairs)`` for runs of ``work`` ≥ BUILD_WORK segments
    (else p itself, as for an exponent whose tables do not reach their accuracy)."""
    if work < BUILD_WORK:
        return p
    try:
        return np.concatenate([p, table_vector(m, pairs)])
    except ArithmeticError:
        _TABLES[float(m)] = None
        return p


@njit(cache=True, inline="always")
def memo_key(T, c, k1, k2):
    """Record the caller's key of the state the last table_advance ended in."""
    T[c] = k1
    T[c + 1] = k2


@njit(cache=True, inline="always")
def _scale(P, c, a, b, m):
    # (λ, a/λ, 1/λ) from table_vector's list when (a, b) is there
    for j in range(int(_ld(P, c + _MEMO))):
        k = c + _MEMO + 1 + _PAIR * j
        if _ld(P, k) == a and _ld(P, k + 1) == b:
            return _ld(P, k + 2), _ld(P, k + 3), _ld(P, k + 4)
    lam = (a / b) ** (1.0 / m)
    return lam, a / lam, 1.0 / lam


@njit(cache=True, inline="always")
def _end(P, c, q0, s, reg):
    # the memo of the state a call ends in (the caller adds its key)
    _st(P, c + 2, q0)
    _st(P, c + 3, s)
    _st(P, c + 4, reg)


# regions of the memo: the side (away from 0 / towards 0) and the function
_AS, _AA, _AG, _TS, _TG = 0.0, 1.0, 2.0, 3.0, 4.0


@njit(cache=True)
def table_advance(y, L, q0, q1, q2, m, rtol, T, c, k1, k2):
    """power_law_advance(y, L, q0, q1, q2, m, rtol, ·) from ``table_vector`` at T[c:]
    (q0 ≠ 0, L > 0), or NaN where a state leaves the tables (the caller then takes the
    series map). (k1, k2): the caller's exact key of the state y (a memo hit skips the
    start's table evaluation); after a finite result the caller records the key of the
    new state with memo_key."""
    # the address of T[c]: one compiled _advance for every offset (a constant offset
    # would be a literal type, and each caller's its own 17 s compilation)
    return _advance(y, L, q0, q1, q2, m, rtol, _waddr(T) + 8 * c, k1, k2)


@njit(cache=True)
def _advance(y, L, q0, q1, q2, m, rtol, P, k1, k2):
    c = 0           # the memo starts the vector at P
    hit = _ld(P, c) == k1 and _ld(P, c + 1) == k2 and _ld(P, c + 2) == q0
    # invalid until this call stores an end (q0) and the caller records its key: every
    # return without a stored end leaves it so
    _st(P, c, np.nan)
    _st(P, c + 2, np.nan)
    if not (L > 0.0):
        # the identity (an unconditional update is cheaper for the caller than a test)
        if hit:
            _st(P, c + 2, q0)
        return y
    if not (rtol >= RTOL_MIN and L < np.inf):
        return np.nan
    o = c + _MEMO + 1 + _PAIR * int(_ld(P, c + _MEMO))
    sa = 1.0 if q0 > 0.0 else -1.0
    a = abs(q0)
    ba = sa * (q1 + q2 if sa > 0.0 else q2 - q1)     # away from 0: dw/ds = a − ba·w^m
    bb = sa * (q2 - q1 if sa > 0.0 else q1 + q2)     # towards 0: dw/ds = −(a − bb·w^m)
    if hit:
        reg = _ld(P, c + 4)
        s = _ld(P, c + 3)
        toward = reg >= _TS
    else:
        toward = y * sa < 0.0
    if toward:
        if bb == 0.0:
            # a linear return branch (no memo: nothing to save)
            w = abs(y)
            if a * L < w:
                return y + sa * a * L
            L -= w / a
        else:
            lam, al, il = _scale(P, c, a, abs(bb), m)
            if not hit:
                t = abs(y) * il
                if bb > 0.0:
                    if not (t < 1.0):
                        return np.nan      # at or beyond the return branch's unstable point
                    reg = _TS
                else:
                    reg = _TG
                s = _fwd(P, o, _FS if reg == _TS else _FG, t)
                if s != s:
                    return np.nan          # beyond G's table (S is finite for τ < 1)
            s1 = s - L * al
            if s1 > 0.0:
                t1 = _inv(P, o, _FS if reg == _TS else _FG, s1)
                _end(P, c, q0, s1, reg)
                return -sa * lam * t1
            # 0 reached: the rest of the segment from 0 on the other side
            L = -s1 / al
        if ba == 0.0:
            return sa * a * L
        reg = _AS if ba > 0.0 else _AG
        s = 0.0
        lam, al, il = _scale(P, c, a, abs(ba), m)
    else:
        if ba == 0.0:
            return y + sa * a * L
        lam, al, il = _scale(P, c, a, abs(ba), m)
        if not hit:
            t = abs(y) * il
            if ba < 0.0:
                reg = _AG
            elif t > 1.0:
                reg = _AA
            else:
                reg = _AS
            if reg == _AS and not (t < 1.0):
                s = np.inf                 # at the saturation value
            else:
                s = _fwd(P, o, _FG if reg == _AG else (_FA if reg == _AA else _FS), t)
                if s != s:
                    return np.nan          # beyond G's or A's table
    s1 = s + L * al
    t1 = _inv(P, o, _FS if reg == _AS else (_FA if reg == _AA else _FG), s1)
    if reg == _AG and t1 != t1:
        return np.nan
    _end(P, c, q0, s1, reg)
    return sa * lam * t1
