"""The one Dormand-Prince 5(4) integrator of hystmech's Python/numba code.

Dormand & Prince (1980), in the form of Hairer, Nørsett & Wanner (1993), *Solving
Ordinary Differential Equations I*, §II.4-II.5: the tableau (``DP_A``, ``DP_C``,
``DP_B``), the embedded error weights ``DP_E`` (5th minus 4th order) and the free
4th-order continuous extension ``DP_P`` (scipy's RK45 uses the same). The C kernels
need no adaptive integrator: every exportable law has an exact segment map (Bouc-Wen
and modified Dahl: components/power_law_map.py, C mirror ``hm_power_law_advance``).

``dp45_step`` does ONE step of y' = fun(t, y, args, out) for any state: the scalar
state of a law along an input segment or a whole assembly state. ``dp45_solve`` is
the adaptive driver used by the laws (``rk_advance`` drives a law's ``rate`` kernel
over one input segment with it).

The error norm (the one norm of every adaptive integrator built on this module)::

    err = max_{i<n} |e_i| / max(atol_i, rtol·max(|y_i|, |ŷ_i|))

with e = h Σ_j DP_E[j] K[j] the embedded error estimate, y the state at the start
of the step, ŷ the 5th-order result and n = ``n_err`` the number of leading
components that are controlled (an assembly leaves its energy quadratures out).
A step is accepted when err ≤ 1: every component's local error is below rtol
relative to its size, or below atol_i where the component is small (a maximum
norm, as in Hairer, Nørsett & Wanner (1993), §II.4, with max instead of sum in the
scale). Laws use atol_i = rtol·x_scale_i (the state's natural size, so a state
passing through zero is still controlled relative to its size). A non-finite ŷ
gives err = inf.

Every function here is ``register_jitable``: it runs as plain Python when called
from Python (e.g. with a Python callable ``fun``, for user laws numba cannot
compile) and is compiled into the caller when called from numba code.
"""
import math
import warnings
import weakref

import numpy as np
from numba import njit
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.extending import register_jitable

# rk_advance passes the law's rate kernel inside a tuple (a first-class function in
# numba); that feature is marked experimental but is stable for this use.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning,
                        message=".*[Ff]irst-class function type.*")

# Dormand & Prince (1980) coefficients; Hairer, Nørsett & Wanner (1993), Table 5.2.
# Scalars for the compiled step (numba cannot cache functions reading global arrays);
# the same numbers as arrays for hosts that loop over stages.
_C2, _C3, _C4, _C5 = 1 / 5, 3 / 10, 4 / 5, 8 / 9
_A21 = 1 / 5
_A31, _A32 = 3 / 40, 9 / 40
_A41, _A42, _A43 = 44 / 45, -56 / 15, 32 / 9
_A51, _A52, _A53, _A54 = 19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729
_A61, _A62, _A63, _A64, _A65 = 9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656
_B1, _B3, _B4, _B5, _B6 = 35 / 384, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84
# 5th-order minus embedded 4th-order weights (the 4th-order solution uses the FSAL stage)
_E1, _E3, _E4, _E5, _E6, _E7 = (71 / 57600, -71 / 16695, 71 / 1920, -17253 / 339200,
                                22 / 525, -1 / 40)
DP_C = np.array([0.0, _C2, _C3, _C4, _C5, 1.0, 1.0])
DP_A = np.array([
    [0, 0, 0, 0, 0, 0],
    [_A21, 0, 0, 0, 0, 0],
    [_A31, _A32, 0, 0, 0, 0],
    [_A41, _A42, _A43, 0, 0, 0],
    [_A51, _A52, _A53, _A54, 0, 0],
    [_A61, _A62, _A63, _A64, _A65, 0],
    [_B1, 0, _B3, _B4, _B5, _B6]])
DP_B = np.array([_B1, 0, _B3, _B4, _B5, _B6, 0.0])
DP_E = np.array([_E1, 0, _E3, _E4, _E5, _E6, _E7])
# free 4th-order continuous extension: y(t + θh) = y + h Σ_j K[j] Σ_k DP_P[j, k] θ^(k+1)
DP_P = np.array([
    [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0, 0, 0, 0],
    [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]])
_P = tuple(tuple(float(c) for c in row) for row in DP_P)  # a constant for numba
DP_ORDER = 5  # order of the propagated solution; the controller uses 1/DP_ORDER


@register_jitable
def dp45_norm(K, y, y_new, h, atol, rtol, n_err):
    """The error norm of the module docstring for the step whose stages are in K."""
    err = 0.0
    for i in range(n_err):
        if not math.isfinite(y_new[i]):
            return math.inf
        e = abs(h * (_E1 * K[0, i] + _E3 * K[2, i] + _E4 * K[3, i] + _E5 * K[4, i]
                     + _E6 * K[5, i] + _E7 * K[6, i]))
        sc = max(atol[i], rtol * max(abs(y[i]), abs(y_new[i])))
        if sc > 0.0:
            r = e / sc
        elif e == 0.0:
            r = 0.0
        else:
            return math.inf
        if r > err:
            err = r
    if not math.isfinite(err):
        return math.inf
    return err


@register_jitable
def dp45_step(fun, t, y, h, args, K, y_new, atol, rtol, n_err):
    """One Dormand-Prince 5(4) step of y' = fun(t, y, args, out) from (t, y), step h.

    K: work array (7, m) with K[0] = fun(t, y) on entry (first same as last); on
    return K[1..5] hold the stages and K[6] = fun(t + h, y_new). y_new (m,) receives
    the 5th-order solution. Returns the error norm of the module docstring over the
    first n_err components (err ≤ 1: accept; the caller then copies K[6] into K[0]).
    """
    m = y.size
    for i in range(m):
        y_new[i] = y[i] + h * _A21 * K[0, i]
    fun(t + _C2 * h, y_new, args, K[1])
    for i in range(m):
        y_new[i] = y[i] + h * (_A31 * K[0, i] + _A32 * K[1, i])
    fun(t + _C3 * h, y_new, args, K[2])
    for i in range(m):
        y_new[i] = y[i] + h * (_A41 * K[0, i] + _A42 * K[1, i] + _A43 * K[2, i])
    fun(t + _C4 * h, y_new, args, K[3])
    for i in range(m):
        y_new[i] = y[i] + h * (_A51 * K[0, i] + _A52 * K[1, i] + _A53 * K[2, i]
                               + _A54 * K[3, i])
    fun(t + _C5 * h, y_new, args, K[4])
    for i in range(m):
        y_new[i] = y[i] + h * (_A61 * K[0, i] + _A62 * K[1, i] + _A63 * K[2, i]
                               + _A64 * K[3, i] + _A65 * K[4, i])
    fun(t + h, y_new, args, K[5])
    for i in range(m):
        y_new[i] = y[i] + h * (_B1 * K[0, i] + _B3 * K[2, i] + _B4 * K[3, i]
                               + _B5 * K[4, i] + _B6 * K[5, i])
    fun(t + h, y_new, args, K[6])
    return dp45_norm(K, y, y_new, h, atol, rtol, n_err)


@register_jitable
def dp45_dense(K, y, h, theta, out):
    """The free 4th-order continuous extension at t + θh (0 ≤ θ ≤ 1) of the last step."""
    m = y.size
    for i in range(m):
        q = 0.0
        for k in range(4):
            pk = 0.0
            for j in range(7):
                pk += K[j, i] * _P[j][k]
            q += pk * theta ** (k + 1)
        out[i] = y[i] + h * q


@register_jitable
def dp45_factor(err):
    """Step-size factor after a step with error norm err: 0.9·err^(−1/5) within
    [0.1, 5] (Hairer, Nørsett & Wanner (1993), eq. (4.13))."""
    if err == 0.0:
        return 5.0
    if not math.isfinite(err):
        return 0.1
    return min(5.0, max(0.1, 0.9 * err ** (-1.0 / DP_ORDER)))


@register_jitable
def dp45_solve(fun, t0, t1, y, args, atol, rtol, h0, K, y_new):
    """Integrate y' = fun(t, y, args, out) from t0 to t1 in place with adaptive steps.

    Work arrays K (7, m) and y_new (m,); h0 is the first trial step (t1 − t0 when the
    caller has no better guess). Steps are accepted when the error norm is ≤ 1 or the
    step has shrunk to 1e-14·(t1 − t0) (a law's right-hand side may be merely
    continuous; the step is then taken rather than stalling). Returns the number of
    accepted steps.
    """
    m = y.size
    span = t1 - t0
    if span <= 0.0:
        return 0
    t = t0
    h = min(h0, span) if h0 > 0.0 else span
    hmin = span * 1e-14
    steps = 0
    fun(t, y, args, K[0])
    while t < t1:
        last = t + h >= t1
        if last:
            h = t1 - t
        err = dp45_step(fun, t, y, h, args, K, y_new, atol, rtol, m)
        if err <= 1.0 or h <= hmin:
            t = t1 if last else t + h
            for i in range(m):
                y[i] = y_new[i]
                K[0, i] = K[6, i]
            steps += 1
        if t < t1:
            # the next step's size (none after the last: a pow less per segment)
            h = h * dp45_factor(err)
    return steps


@register_jitable
def _segment_rhs(s, x, args, out):
    # a law's rate along one input segment: u = u0 + v·s
    rate, u0, v, p = args
    rate(x, u0 + v * s, v, p, out)


@register_jitable
def rk_segment(rhs, args, x, dt, rtol, xscale):
    """Integrate x' = rhs(s, x, args, out) for s in [0, dt], in place, with
    ``dp45_solve`` (atol = rtol·xscale). Returns the number of accepted steps."""
    n = x.size
    if dt <= 0.0 or n == 0:
        return 0
    K = np.empty((7, n))
    xn = np.empty(n)
    atol = np.empty(n)
    for i in range(n):
        atol[i] = rtol * xscale[i]
    return dp45_solve(rhs, 0.0, dt, x, args, atol, rtol, dt, K, xn)


def _rk_advance(rate, x, u0, dt, v, p, rtol, xscale):
    """Integrate ẋ = rate(x, u0 + v·s, v, p) for s in [0, dt], in place, with
    ``dp45_solve`` (atol = rtol·xscale). Returns the number of accepted steps."""
    return rk_segment(_segment_rhs, (rate, u0, v, p), x, dt, rtol, xscale)


# _rk_advance for one module-level rate kernel, a generated module in the generated-code
# cache (systems/compile_cache.py): with the kernel as an argument numba cannot cache it
# (core/drive.py), so it was compiled in every process (3-4 s per rate kernel). The
# right-hand side binds the kernel and is registered, not jitted: a jitted function
# handed to dp45_solve is a dynamic global (bouc_wen_isotropic.py)
_CACHED_RK = """from numba import njit
from numba.extending import register_jitable

from {ode} import rk_segment
from hystmech.systems.compile_cache import resolve

_rate = resolve({m!r}, {q!r})


@register_jitable
def _rhs(s, x, args, out):
    # _segment_rhs with the kernel bound: the rate along the segment, u = u0 + v·s
    u0, v, p = args
    _rate(x, u0 + v * s, v, p, out)


@njit(cache=True)
def rk_advance(x, u0, dt, v, p, rtol, xscale):
    return rk_segment(_rhs, (u0, v, p), x, dt, rtol, xscale)
"""


class _RkAdvance:
    """``rk_advance(rate, x, u0, dt, v, p, rtol, xscale)``: _rk_advance compiled for the
    numba kernel ``rate``, once per install for a module-level kernel (the disk cache),
    once per process for others; ``rk_advance.py_func`` runs Python callables."""

    py_func = staticmethod(_rk_advance)

    def __init__(self):
        self._per = weakref.WeakKeyDictionary()
        self._generic = njit(cache=False)(_rk_advance)

    def __call__(self, rate, x, u0, dt, v, p, rtol, xscale):
        fn = self._per.get(rate)
        if fn is None:
            fn = self._per[rate] = self._compiled(rate)
        return fn(x, u0, dt, v, p, rtol, xscale)

    def _compiled(self, rate):
        # imported here: importing a law loads no systems module
        from ..systems import compile_cache

        ref = compile_cache.kernel_ref(rate)
        if ref is not None:
            src = _CACHED_RK.format(ode=__name__, m=ref[0], q=ref[1])
            mod, _ = compile_cache.load(src, sorted({__name__, ref[0]}))
            if mod is not None:
                return mod.rk_advance
        generic = self._generic

        def run(x, u0, dt, v, p, rtol, xscale):
            return generic(rate, x, u0, dt, v, p, rtol, xscale)
        return run


rk_advance = _RkAdvance()
