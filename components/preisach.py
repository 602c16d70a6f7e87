"""Relay, Preisach and Prandtl-Ishlinskii hysteresis operators.

Relay R_{a1,a2} (Manfredo, Dörlich, Linn & Arnold (2023), eqs. (4)-(6)): output +1 once
the input has reached a2 from below, −1 once it has reached a1 from above, its
initial value ξ in between.

Preisach operator (eqs. (7), (12)), discretised: M = offset + k0·u + Σ_i w_i R_i[u] over
relays (a1_i, a2_i) (in the (r, s) plane of eq. (7): r = (a2 − a1)/2, s = (a2 + a1)/2).
It is evaluated from the memory curve (eqs. (9)-(10)): the stack of alternating dominant
input extrema left after wiping-out, and the Everett function

    E(α, β) = Σ { w_i : β <= a1_i, a2_i <= α }   (weight of the triangle below α, above β)

    Σ+ = Σ_pairs ±E(max, min) along the stack,   M = offset + k0·u + 2·Σ+ − W,  W = Σ w_i

so that one input sample costs O(1) Everett look-ups (amortised; binary searches in
the threshold lists), independent of the number of relays. The Prandtl-Ishlinskii
operator (weighted plays) is the special case of relays on lines r = const.

Two modes on the triangle of eq. (14) cut into n levels per side (from_kernel,
from_everett):
* discrete (default): one relay per cell (eqs. (16)-(18)); the output is a staircase.
* continuous (``continuous=True``): the kernel is constant on each cell and E(α, β) is
  its exact integral over the cells, bilinear in (α, β) on an off-diagonal cell pair and
  quadratic on a diagonal one (_everett_c). The output is then continuous and piecewise
  smooth in the input, and ``slope`` is its exact one-sided derivative, 2·∂E at the
  current stack top (k0 right at a reversal) — what a Newton solver needs. Same memory
  stack, same state layout, same cost per sample; p differs only by the flag p[8] = 0
  and the node grid in place of the relay thresholds.

State layout (fixed size, mirrored in C by the FMU exporter), D = max_depth:
    x[0]          c, the last input value (the current, open extremum)
    x[1]          n, number of stack entries (1 <= n <= D)
    x[2]          type of stack[0]: −1 = a minimum (the sentinel LO, negative saturation),
                  +1 = a maximum (the sentinel HI, positive saturation)
    x[3:3+D]      stack of dominant extrema; types alternate from stack[0]; maxima decrease
                  and minima increase towards the top, c lies between the top two
    x[3+D:3+2D]   prefix sums P[j] = Σ+ of the sequence stack[0..j]
Exceeding D nested reversals raises (numba ValueError "Preisach memory stack overflow").
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .base import ForceElement, Param, check_array, check_finite

# p = [n2, n1, D, W, k0, offset, LO, HI, dslope, A2[0..n2-1], A1[0..n1-1], T[(n2+1)*(n1+1)]]
#   dslope > 0: discrete mode, width of the secant that slope() takes across the relay
#     staircase; dslope == 0: continuous mode (the flag; same layout, see below),
#   A2: sorted distinct up-thresholds a2, A1: sorted distinct down-thresholds a1,
#   T[i2*(n1+1) + i1] = Σ w over relays whose a2 is among the i2 smallest A2 and whose
#   a1 is among the i1 largest A1 (the Everett function on the threshold grid).
#   Continuous mode: A2 = A1 = the n+1 uniform grid nodes t_k = −m + k·h of eq. (14)
#   (n2 = n1 = n + 1) and T holds E at the nodes, T[(j+1)*(n+2) + n+1−i] = E(t_j, t_i);
#   between nodes E is the exact integral of the cellwise constant density (_everett_c).
_HEAD = 9


# -- relay ------------------------------------------------------------------------------
# p = [a1, a2]
@njit(cache=True)
def relay_advance(x, u0, u1, dt, v, p, rtol):
    # monotone segment: only its end values can switch the relay (eq. (6))
    for u in (u0, u1):
        if u >= p[1]:
            x[0] = 1.0
        elif u <= p[0]:
            x[0] = -1.0


@njit(cache=True)
def relay_force(x, u, v, p):
    if u >= p[1]:
        return 1.0
    if u <= p[0]:
        return -1.0
    return x[0]


@njit(cache=True)
def relay_force_tan(x, S, u, du, p, DP, out):
    # a relay's output is ±1: flat in u between its thresholds, no parameter to fit
    for k in range(out.size):
        out[k] = 0.0
    return 0


@njit(cache=True)
def relay_advance_tan(x, S, u0, u1, du0, du1, p, DP):
    relay_advance(x, u0, u1, 1.0, 0.0, p, 0.0)
    return 0


@njit(cache=True)
def relay_resum(x, p, S, DP):
    return 0


def _check_initial(initial, name="initial"):
    # True/False are not the signs -1/+1 (True would silently become +1)
    if isinstance(initial, (str, bool, np.bool_)) or np.asarray(initial).dtype.kind not in "iuf":
        raise ValueError(f"{name} must be -1 or +1 (got {initial!r})")
    arr = np.asarray(initial, dtype=float)
    if arr is None or not np.all(np.isfinite(arr)) or not np.all(np.isin(arr, (-1.0, 1.0))):
        raise ValueError(f"{name} must be -1 or +1 (got {initial!r})")
    vals = np.unique(arr)
    if vals.size != 1:
        raise ValueError(f"{name} must be -1 or +1 for all relays alike (the memory-curve "
                         f"evaluation starts from a saturated state; got mixed values)")
    return float(vals[0])


class Relay(ForceElement):
    """Relay operator R_{a1,a2}[u, ξ] ∈ {−1, +1}, Manfredo et al. (2023), eqs. (4)-(6).

    a1 < a2 thresholds [input units], initial ξ = −1 or +1 (used while a1 < u(0) < a2).
    """

    kind = "operator"
    p_layout = ('a1', 'a2')
    param_info = (
        Param('a1', 'input', meaning='lower switching threshold (down-switch)',
              range='any real'),
        Param('a2', 'input', meaning='upper switching threshold (up-switch)',
              range='> a1 (in (a1, inf))'),
        Param('initial', '1', meaning='initial output while a1 < u(0) < a2',
              range='-1 or +1'),
    )
    state_names = ("R",)
    citation = "Manfredo, Dörlich, Linn & Arnold (2023), eqs. (4)-(6)"
    advance = staticmethod(relay_advance)
    # forward sensitivities (identify/assembly.py): a relay has no weight to fit
    force_tan = staticmethod(relay_force_tan)
    advance_tan = staticmethod(relay_advance_tan)
    resum = staticmethod(relay_resum)

    def zero_direction(self):
        """∂p/∂θ for a parameter that is not this relay's (its tangent reads none)."""
        return np.zeros(self.p.size)

    def tangent_directions(self, name):
        """A relay has no parameter fit_assembly can free (see Preisach)."""
        raise ValueError(_threshold_msg(name, "Relay", "none (a relay has no weight; fit "
                                        "weights with relays inside a Preisach operator)"))
    force = staticmethod(relay_force)

    def __init__(self, *, a1, a2, initial=-1):
        a1 = check_finite("a1", a1)
        a2 = check_finite("a2", a2)
        if not a1 < a2:
            raise ValueError(f"a2 must be in (a1, inf) = ({a1:g}, inf) (got {a2!r})")
        xi = _check_initial(initial)
        self._setup(dict(a1=a1, a2=a2, initial=xi), [a1, a2], [xi])
        self.x_scale = np.ones(1)


def _weight_indices(name, br, rest, N):
    """The weight indices a free-parameter name selects: "weights" → all N, "weights[i]"
    → [i]; a bad index is refused naming the parameter and the range."""
    if not br:
        return range(N)
    try:
        i = int(rest.rstrip("]"))
    except ValueError:
        i = -1
    if not (rest.endswith("]") and 0 <= i < N):
        raise ValueError(f"free parameter {name!r}: the index must be an integer "
                         f"in [0, {N - 1}]")
    return [i]


# -- Preisach kernels --------------------------------------------------------------------
@njit(cache=True)
def everett(p, alpha, beta):
    """E(α, β): total weight of the relays with β <= a1 and a2 <= α (table look-up)."""
    n2 = int(p[0])
    n1 = int(p[1])
    o2 = _HEAD
    o1 = _HEAD + n2
    oT = _HEAD + n2 + n1
    lo = 0
    hi = n2
    while lo < hi:                      # i2 = #{A2 <= alpha}
        mid = (lo + hi) >> 1
        if p[o2 + mid] <= alpha:
            lo = mid + 1
        else:
            hi = mid
    i2 = lo
    lo = 0
    hi = n1
    while lo < hi:                      # #{A1 < beta}
        mid = (lo + hi) >> 1
        if p[o1 + mid] < beta:
            lo = mid + 1
        else:
            hi = mid
    i1 = n1 - lo
    return p[oT + i2 * (n1 + 1) + i1]


@register_jitable
def _node_E(p, j, i):
    # E(t_j, t_i) at grid nodes (continuous mode), j, i in 0..n
    n1 = int(p[1])
    return p[_HEAD + 2 * n1 + (j + 1) * (n1 + 1) + n1 - i]


@register_jitable
def _everett_c(p, alpha, beta, grad):
    """Continuous mode: E(α, β) = ∫∫_{β <= a1 < a2 <= α} ρ(a1, a2) da1 da2 for a density ρ
    constant on each cell of the triangulated plane (Manfredo et al. (2023), eqs. (14),
    (16)): bilinear in (α, β) on a square cell pair, quadratic on a diagonal one.
    Returns (E, ∂E/∂α, ∂E/∂β); the derivatives only when grad is True."""
    n1 = int(p[1])
    n = n1 - 1
    t0 = p[_HEAD]
    tn = p[_HEAD + n]
    h = (tn - t0) / n
    ca = False
    cb = False
    if alpha >= tn:
        alpha = tn
        ca = True                 # beyond the triangle: E no longer depends on α
    if beta <= t0:
        beta = t0
        cb = True
    if alpha <= beta:
        return 0.0, 0.0, 0.0
    j = int((alpha - t0) / h)
    if j > n - 1:
        j = n - 1
    if j < 0:
        j = 0
    i = int((beta - t0) / h)
    if i > n - 1:
        i = n - 1
    if i < 0:
        i = 0
    if i > j:                     # rounding at a node: α and β in the same cell
        i = j
    fa = (alpha - p[_HEAD + j]) / h
    gb = (p[_HEAD + i + 1] - beta) / h
    if i == j:
        w = _node_E(p, i + 1, i)
        d = (alpha - beta) / h
        E = w * d * d
        if not grad:
            return E, 0.0, 0.0
        dE = 2.0 * w * d / h
        return E, 0.0 if ca else dE, 0.0 if cb else -dE
    G0 = _node_E(p, j, i + 1)
    wjj = _node_E(p, j + 1, j)
    wii = _node_E(p, i + 1, i)
    Gj1 = _node_E(p, j + 1, i + 1)
    Gi = _node_E(p, j, i)
    scol = Gj1 - G0 - wjj
    srow = Gi - G0 - wii
    wij = _node_E(p, j + 1, i) - Gj1 - Gi + G0
    E = G0 + fa * (scol + fa * wjj) + gb * (srow + gb * wii) + fa * gb * wij
    if not grad:
        return E, 0.0, 0.0
    da = 0.0 if ca else (scol + 2.0 * fa * wjj + gb * wij) / h
    db = 0.0 if cb else -(srow + 2.0 * gb * wii + fa * wij) / h
    return E, da, db


@register_jitable
def _E(p, alpha, beta):
    # the Everett function of either mode
    if p[8] == 0.0:
        return _everett_c(p, alpha, beta, False)[0]
    return everett(p, alpha, beta)


@register_jitable
def _is_max(x, j):
    # stack[j] is a maximum iff (stack[0] is a maximum) xor (j odd)
    if x[2] > 0.0:
        return j % 2 == 0
    return j % 2 == 1


@njit(cache=True)
def _push(x, p, val, is_max):
    D = int(p[2])
    n = int(x[1])
    if n >= D:
        raise ValueError("Preisach memory stack overflow: more nested input reversals than "
                         "max_depth; build the operator with a larger max_depth")
    top = x[3 + n - 1]
    if is_max:
        x[3 + D + n] = x[3 + D + n - 1] + _E(p, val, top)
    else:
        x[3 + D + n] = x[3 + D + n - 1] - _E(p, top, val)
    x[3 + n] = val
    x[1] = n + 1


@njit(cache=True)
def _reset(x, p, high):
    # the input went beyond every threshold: saturated state with a sentinel bottom
    D = int(p[2])
    x[1] = 1.0
    if high:
        x[2] = 1.0
        x[3] = p[7]
        x[3 + D] = p[3]
    else:
        x[2] = -1.0
        x[3] = p[6]
        x[3 + D] = 0.0


@njit(cache=True)
def _step(x, p, v):
    # memory-curve update for a monotone move of the input from x[0] to v (eq. (10))
    c = x[0]
    n = int(x[1])
    rising = not _is_max(x, n - 1)
    if rising:
        if v < c:
            _push(x, p, c, True)
            rising = False
            n += 1
    else:
        if v > c:
            _push(x, p, c, False)
            rising = True
            n += 1
    x[0] = v
    # wiping-out: a new extremum beyond an older one of its kind erases both of the
    # older pair (stack[n-2] is the previous extremum of the same kind as the move)
    if rising:
        while n >= 2 and v >= x[3 + n - 2]:
            n -= 2
    else:
        while n >= 2 and v <= x[3 + n - 2]:
            n -= 2
    if n == 0:
        _reset(x, p, rising)
    else:
        x[1] = n


@register_jitable
def _anchor(x, p, u):
    # (P, anchor, rising) with Σ+(u) = P + E(u, anchor) if rising else P − E(anchor, u),
    # for the input moved from x[0] to u, without changing x
    D = int(p[2])
    c = x[0]
    n = int(x[1])
    rising = not _is_max(x, n - 1)
    virt = False              # a virtual entry c pushed at index n
    Pv = 0.0
    if rising and u < c:
        Pv = x[3 + D + n - 1] + _E(p, c, x[3 + n - 1])
        virt = True
        rising = False
        n += 1
    elif (not rising) and u > c:
        Pv = x[3 + D + n - 1] - _E(p, x[3 + n - 1], c)
        virt = True
        rising = True
        n += 1
    if rising:
        while n >= 2 and u >= x[3 + n - 2]:
            n -= 2
    else:
        while n >= 2 and u <= x[3 + n - 2]:
            n -= 2
    if n == 0:
        if rising:
            return p[3], p[7], False      # positive saturation
        return 0.0, p[6], True            # negative saturation
    j = n - 1
    if virt and j == int(x[1]):
        return Pv, c, rising
    return x[3 + D + j], x[3 + j], rising


@njit(cache=True)
def preisach_advance(x, u0, u1, dt, v, p, rtol):
    if u0 != x[0]:
        _step(x, p, u0)
    _step(x, p, u1)


@njit(cache=True)
def preisach_state_copy(src, dst, p):
    # the live memory: c, n, the type of stack[0], the n stack entries and their n
    # prefix sums (the kernels never read past n; a host's trial copy costs O(n), not
    # O(max_depth))
    D = int(p[2])
    n = int(src[1])
    for k in range(3 + n):
        dst[k] = src[k]
    for k in range(3 + D, 3 + D + n):
        dst[k] = src[k]


@njit(cache=True)
def preisach_state_commit(src, dst, p):
    # commit a trial src that is dst advanced by ONE preisach_advance (at most two _step
    # moves): a move pushes at the stack's current length, then only pops, and a reset
    # writes entry 0, so the live entries it can have written are 0, the committed
    # length n_c and the new top n − 1; the rest of the live stack is dst's already
    # (O(1) per commit instead of O(n): an AC-demagnetised memory holds ~30 levels)
    D = int(p[2])
    nc = int(dst[1])
    n = int(src[1])
    dst[0] = src[0]
    dst[1] = src[1]
    dst[2] = src[2]
    for j in (0, nc, n - 1):
        if j < n:
            dst[3 + j] = src[3 + j]
            dst[3 + D + j] = src[3 + D + j]


@njit(cache=True)
def preisach_force(x, u, v, p):
    P, a, rising = _anchor(x, p, u)
    if rising:
        s = P + _E(p, u, a)
    else:
        s = P - _E(p, a, u)
    return p[5] + p[4] * u + 2.0 * s - p[3]


@njit(cache=True)
def preisach_slope(x, u, v, p):
    # dM/du on the branch the input follows from u in the direction of v (the current
    # branch if v == 0). Continuous mode: the exact derivative of the output. Discrete
    # mode: k0 plus the secant of the relay staircase over one grid width dslope
    # centred at u (the discrete operator itself is piecewise constant)
    n = int(x[1])
    if v > 0.0:
        up = True
    elif v < 0.0:
        up = False
    else:
        up = not _is_max(x, n - 1)
    P, a, rising = _anchor(x, p, u)
    if rising != up:
        a = u            # reversing at u: the new branch starts from u itself
    if p[8] == 0.0:
        # continuous mode: the exact tangent, 2·∂E at the anchor (zero right at a
        # reversal, where the new branch starts with the reversible slope k0)
        if up:
            return p[4] + 2.0 * _everett_c(p, u, a, True)[1]
        return p[4] - 2.0 * _everett_c(p, a, u, True)[2]
    h = 0.5 * p[8]
    if up:
        lo = u - h if u - h > a else a
        dE = _E(p, u + h, a) - _E(p, lo, a)
        width = u + h - lo
    else:
        hi = u + h if u + h < a else a
        dE = _E(p, a, u - h) - _E(p, a, hi)
        width = hi - (u - h)
    if width <= 0.0:
        return p[4]
    return p[4] + 2.0 * dE / width


# -- forward sensitivities (identify/assembly.py's fit_assembly) ---------------------------
# p is affine in the operator's linear parameters θ (weights, k0, offset: the slots W, k0,
# offset and the Everett table T), so E(α, β) is linear in them and its derivative along
# θ_c is E itself evaluated with DP[c] = ∂p/∂θ_c (DP[c] keeps p's thresholds and mode
# slots, so the same look-up serves). The memory's prefix sums are sums of ±E at the
# stored extrema; their derivative rows S (states × θ) follow the same updates as the
# memory itself (_step), plus ∂E/∂α·dα + ∂E/∂β·dβ for extrema that move with θ
# (continuous mode: the exact gradient of _everett_c; discrete mode: the relay
# staircase is flat between thresholds, so its gradient is zero almost everywhere).
@register_jitable
def _E3(p, alpha, beta):
    # (E, ∂E/∂α, ∂E/∂β) of either mode
    if p[8] == 0.0:
        return _everett_c(p, alpha, beta, True)
    return everett(p, alpha, beta), 0.0, 0.0


@njit(cache=True)
def preisach_force_tan(x, S, u, du, p, DP, out):
    """out[c] = dF/dθ_c of :func:`preisach_force` for the memory x (its derivative rows
    S, states × θ), the input u (its derivative du) and ∂p/∂θ_c = DP[c]."""
    D = int(p[2])
    ns = du.size
    c = x[0]
    n0 = int(x[1])
    n = n0
    rising = not _is_max(x, n - 1)
    virt = False
    if rising and u < c:
        virt = True
        rising = False
        n += 1
    elif (not rising) and u > c:
        virt = True
        rising = True
        n += 1
    if rising:
        while n >= 2 and u >= x[3 + n - 2]:
            n -= 2
    else:
        while n >= 2 and u <= x[3 + n - 2]:
            n -= 2
    # the anchor (value a, prefix sum P) and the case it comes from (see _anchor)
    case = 0
    j = n - 1
    a = 0.0
    top = 0.0
    Ea1 = 0.0
    Eb1 = 0.0
    if n == 0:
        if rising:
            case = 2                 # positive saturation: P = W, a = HI, falling
            rising = False
            a = p[7]
        else:
            case = 3                 # negative saturation: P = 0, a = LO, rising
            rising = True
            a = p[6]
    elif virt and j == n0:
        case = 1                     # the current input c pushed virtually
        a = c
    else:
        a = x[3 + j]
    if case == 1:
        top = x[3 + n0 - 1]
        if rising:                   # virtual minimum: Pv = P_top − E(top, c)
            _, Ea1, Eb1 = _E3(p, top, c)
        else:                        # virtual maximum: Pv = P_top + E(c, top)
            _, Ea1, Eb1 = _E3(p, c, top)
    if rising:
        _, Ea, Eb = _E3(p, u, a)
    else:
        _, Ea, Eb = _E3(p, a, u)
    for k in range(ns):
        dp = DP[k]
        if case == 0:
            dP = S[3 + D + j, k]
            da = S[3 + j, k]
        elif case == 1:
            da = S[0, k]
            dtop = S[3 + n0 - 1, k]
            if rising:
                dP = S[3 + D + n0 - 1, k] - (_E(dp, top, c) + Ea1 * dtop + Eb1 * da)
            else:
                dP = S[3 + D + n0 - 1, k] + _E(dp, c, top) + Ea1 * da + Eb1 * dtop
        elif case == 2:
            dP = dp[3]
            da = 0.0
        else:
            dP = 0.0
            da = 0.0
        if rising:
            ds = dP + _E(dp, u, a) + Ea * du[k] + Eb * da
        else:
            ds = dP - (_E(dp, a, u) + Ea * da + Eb * du[k])
        out[k] = dp[5] + dp[4] * u + p[4] * du[k] + 2.0 * ds - dp[3]
    return 0


@register_jitable
def _step_tan(x, S, p, DP, v, dv):
    # the derivative rows of the memory update _step(x, p, v), then the update itself
    D = int(p[2])
    ns = dv.size
    c = x[0]
    n = int(x[1])
    rising = not _is_max(x, n - 1)
    if n < D and ((rising and v < c) or ((not rising) and v > c)):
        top = x[3 + n - 1]
        if rising:                   # c pushed as a maximum: P += E(c, top)
            _, Ea, Eb = _E3(p, c, top)
            for k in range(ns):
                S[3 + D + n, k] = (S[3 + D + n - 1, k] + _E(DP[k], c, top)
                                   + Ea * S[0, k] + Eb * S[3 + n - 1, k])
                S[3 + n, k] = S[0, k]
        else:                        # c pushed as a minimum: P −= E(top, c)
            _, Ea, Eb = _E3(p, top, c)
            for k in range(ns):
                S[3 + D + n, k] = (S[3 + D + n - 1, k] - _E(DP[k], top, c)
                                   - Ea * S[3 + n - 1, k] - Eb * S[0, k])
                S[3 + n, k] = S[0, k]
    for k in range(ns):
        S[0, k] = dv[k]
    _step(x, p, v)
    # stack[0] is the saturation sentinel (a constant) with P = 0 (LO) or W (HI)
    for k in range(ns):
        S[3, k] = 0.0
        S[3 + D, k] = DP[k, 3] if x[2] > 0.0 else 0.0


@njit(cache=True)
def preisach_advance_tan(x, S, u0, u1, du0, du1, p, DP):
    """:func:`preisach_advance` (x in place) and the derivative rows S of the memory."""
    if u0 != x[0]:
        _step_tan(x, S, p, DP, u0, du0)
    _step_tan(x, S, p, DP, u1, du1)
    return 0


@njit(cache=True)
def preisach_resum(x, p, S, DP):
    """The prefix sums of the memory x recomputed with the table of p (the weights
    changed, the stored extrema not), and their derivative rows S along DP (the
    extrema's rows zero: they are past inputs)."""
    D = int(p[2])
    n = int(x[1])
    ns = S.shape[1]
    for k in range(ns):
        for i in range(x.size):
            S[i, k] = 0.0
    x[3 + D] = p[3] if x[2] > 0.0 else 0.0
    for k in range(ns):
        S[3 + D, k] = DP[k, 3] if x[2] > 0.0 else 0.0
    for j in range(1, n):
        top = x[3 + j - 1]
        val = x[3 + j]
        if _is_max(x, j):
            x[3 + D + j] = x[3 + D + j - 1] + _E(p, val, top)
            for k in range(ns):
                S[3 + D + j, k] = S[3 + D + j - 1, k] + _E(DP[k], val, top)
        else:
            x[3 + D + j] = x[3 + D + j - 1] - _E(p, top, val)
            for k in range(ns):
                S[3 + D + j, k] = S[3 + D + j - 1, k] - _E(DP[k], top, val)
    return 0


def _threshold_msg(name, law, allowed):
    return (f"free parameter {name!r}: {law}'s {name.partition('[')[0]} is not a weight: "
            f"thresholds (a1, a2, r, h, u_bound, grid) set where relays switch, so the "
            f"operator's output jumps (or its slope jumps) as they move across an input "
            f"level: not a differentiable parameter (fit them with hystmech identify / "
            f"fit_preisach); free parameters of {law}: {allowed}")


# -- user API -------------------------------------------------------------------------------
def _everett_table(a1, a2, w):
    A2 = np.unique(a2)
    A1 = np.unique(a1)
    n2, n1 = A2.size, A1.size
    j2 = np.searchsorted(A2, a2)
    j1d = n1 - 1 - np.searchsorted(A1, a1)      # rank of a1 from the top
    H = np.zeros((n2, n1))
    np.add.at(H, (j2, j1d), w)
    T = np.zeros((n2 + 1, n1 + 1))
    T[1:, 1:] = np.cumsum(np.cumsum(H, axis=0), axis=1)
    return A2, A1, T


class Preisach(ForceElement):
    """Discrete Preisach operator, Manfredo et al. (2023), eqs. (7)-(12).

    M = offset + k0·u + Σ_i w_i·R_{a1_i, a2_i}[u] [output units, e.g. N or N·m].

    a1, a2: 1-D arrays of relay thresholds [input units] with a1 < a2 elementwise;
    weights: 1-D array w_i (finite, any sign); initial: −1 or +1, the state of every
    relay before the input enters its switching interval (eq. (5));
    k0: reversible linear part [output/input]; offset [output units];
    max_depth: number of nested dominant extrema the memory stack can hold;
    slope_width [input units]: width of the secant :func:`preisach_slope` takes across the
    relay staircase (default: twice the mean spacing of the distinct thresholds; the
    grid step h for from_kernel / from_everett);
    grid: None (relays) or (m, n) for the continuous mode, in which case a1, a2 must be
    the cells of :meth:`grid` (m, n) and weights the cells' kernel integrals (normally
    built by ``from_kernel(..., continuous=True)`` / ``from_everett``).
    Also built by :meth:`from_relays`, :meth:`from_kernel`, :meth:`from_everett`.
    Evaluation via the memory curve and the Everett function (module docstring); drive()
    stores only (last input, stack depth) per sample (n_report_states = 2).

    Orientation: a relay's ascending branch lies below its descending one, so with
    positive weights the (u, M) loops run counterclockwise and ∮M du < 0 — a play-type
    operator that would feed energy into a mechanism. A dissipative force or moment
    law is stop-type, e.g. M = κ·u − P[u] with κ at least the largest branch slope of P
    (the cable law of hystmech.systems.rigs.rod_cases), or negative weights with k0 > 0.
    """

    kind = "operator"
    def p_names(self) -> tuple[str, ...]:
        """p = [n2, n1, D, W, k0, offset, LO, HI, dslope, A2[0..n2-1], A1[0..n1-1],
        T[(n2+1)·(n1+1)]] (see the layout comment at the top of this module)."""
        n2, n1 = int(self.p[0]), int(self.p[1])
        return (("n2", "n1", "D", "W", "k0", "offset", "LO", "HI", "dslope")
                + tuple(f"A2[{i}]" for i in range(n2)) + tuple(f"A1[{i}]" for i in range(n1))
                + tuple(f"T[{i}]" for i in range((n2 + 1) * (n1 + 1))))

    param_info = (
        Param('a1', 'input', meaning='lower thresholds of the relays (1-D array)',
              range='any real, a1 < a2 elementwise'),
        Param('a2', 'input', meaning='upper thresholds of the relays (1-D array, length of a1)',
              range='> a1 elementwise'),
        Param('weights', 'output', meaning='relay weights w_i (1-D array, length of a1)',
              range='any real'),
        Param('initial', '1', meaning='state of every relay before the input enters its switching interval',
              range='-1 or +1'),
        Param('k0', 'output/input', meaning='reversible linear part k0·u',
              range='any real'),
        Param('offset', 'output', meaning='constant output offset',
              range='any real'),
        Param('max_depth', '1', meaning='capacity of the memory stack (nested dominant extrema)',
              range='>= 2 (an integer)'),
        Param('slope_width', 'input', meaning='width of the secant the tangent takes across the relay staircase (None: twice the mean threshold spacing)',
              range='None or a positive width (> 0)'),
        Param('grid', '1', meaning='(m, n) cells of the continuous mode, or None (relays)',
              range='None or a pair of integers (m, n)'),
    )
    citation = "Manfredo, Dörlich, Linn & Arnold (2023), eqs. (4)-(12)"
    n_report_states = 2

    advance = staticmethod(preisach_advance)
    force = staticmethod(preisach_force)
    state_copy = staticmethod(preisach_state_copy)
    state_commit = staticmethod(preisach_state_commit)
    # forward sensitivities in the linear parameters (identify/assembly.py's fit_assembly)
    force_tan = staticmethod(preisach_force_tan)
    advance_tan = staticmethod(preisach_advance_tan)
    resum = staticmethod(preisach_resum)

    def _direction(self, wdir=None, W=0.0, k0=0.0, offset=0.0, unit=None):
        # ∂p/∂θ for θ moving the relay weights by wdir (or one unit relay/cell), k0, offset
        n2, n1 = int(self.p[0]), int(self.p[1])
        oT = _HEAD + n2 + n1
        dp = self.p.copy()
        dp[3], dp[4], dp[5] = W, k0, offset
        dp[oT:] = 0.0
        if unit is not None:
            r0, c0 = unit          # the unit's table is 1 on rows >= r0 and columns >= c0
            T = np.zeros((n2 + 1, n1 + 1))
            T[r0:, c0:] = 1.0
            dp[oT:] = T.ravel()
        elif wdir is not None:
            dp[oT:] = _everett_table(self.a1, self.a2, wdir)[2].ravel()
        return dp

    def zero_direction(self):
        """∂p/∂θ for a parameter that is not this operator's: its thresholds and mode as
        p (the look-ups need them), its linear slots zero."""
        return self._direction()

    def _unit(self, i):
        # where relay/cell i enters the Everett table (see _everett_table, _init_continuous)
        if self.continuous:
            m, n = self.params["grid"]
            _, _, ii, jj, _ = self.grid(m, n)
            return int(jj[i]) + 2, n - int(ii[i]) + 1    # H[j + 1, n − i] in T[1:, 1:]
        A2 = self.p[_HEAD:_HEAD + int(self.p[0])]
        A1 = self.p[_HEAD + int(self.p[0]):_HEAD + int(self.p[0]) + int(self.p[1])]
        j2 = int(np.searchsorted(A2, self.a2[i]))
        j1d = A1.size - 1 - int(np.searchsorted(A1, self.a1[i]))
        return j2 + 1, j1d + 1

    def _free_names(self):
        N = self.weights.size
        return (f"weights (all {N} relay weights, as weights[0..{N - 1}]), weights[i] "
                f"(i in [0, {N - 1}]), k0, offset")

    def tangent_directions(self, name):
        """[(label, value, ∂p/∂θ)] of the linear parameter(s) ``name`` ("weights" = every
        weight, "weights[i]", "k0", "offset"): p is affine in them, so these directions
        are exact (identify/assembly.py). Thresholds are refused (ValueError)."""
        base, br, rest = name.partition("[")
        if base == "k0":
            return [("k0", float(self.p[4]), self._direction(k0=1.0))]
        if base == "offset":
            return [("offset", float(self.p[5]), self._direction(offset=1.0))]
        if base != "weights":
            raise ValueError(_threshold_msg(name, type(self).__name__, self._free_names()))
        idx = _weight_indices(name, br, rest, self.weights.size)
        return [(f"weights[{i}]", float(self.weights[i]),
                 self._direction(W=1.0, unit=self._unit(i))) for i in idx]
    slope = staticmethod(preisach_slope)

    MAX_TABLE = 50_000_000

    def __init__(self, *, a1, a2, weights, initial=-1, k0=0.0, offset=0.0, max_depth=256,
                 slope_width=None, grid=None):
        a1 = check_array("a1", a1)
        a2 = check_array("a2", a2)
        w = check_array("weights", weights)
        if a2.size != a1.size:
            raise ValueError(f"a2 must have the same length as a1 ({a1.size}) (got {a2.size})")
        if w.size != a1.size:
            raise ValueError(f"weights must have the same length as a1 ({a1.size}) "
                             f"(got {w.size})")
        bad = ~(a1 < a2)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"a2 must be in (a1, inf) elementwise, i.e. a1 < a2 "
                             f"(got a1[{i}] = {a1[i]!r}, a2[{i}] = {a2[i]!r})")
        xi = _check_initial(initial)
        k0 = check_finite("k0", k0)
        offset = check_finite("offset", offset)
        if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) \
                or max_depth < 2:
            raise ValueError(f"max_depth must be an integer in [2, inf) (got {max_depth!r})")
        D = int(max_depth)
        if grid is not None:
            return self._init_continuous(a1, a2, w, xi, k0, offset, D, slope_width, grid)
        A2, A1, T = _everett_table(a1, a2, w)
        if T.size > self.MAX_TABLE:
            raise ValueError(f"a1, a2 must have at most ~{int(math.sqrt(self.MAX_TABLE))} distinct "
                             f"values each (Everett table of {T.size} entries); put the "
                             f"thresholds on a grid (from_kernel / from_everett)")
        W = float(w.sum())
        if slope_width is None:
            thr = np.unique(np.concatenate([A1, A2]))
            slope_width = 2.0 * float(thr[-1] - thr[0]) / max(thr.size - 1, 1)
        slope_width = check_finite("slope_width", slope_width)
        if not slope_width > 0:
            raise ValueError(f"slope_width must be in (0, inf) (got {slope_width!r})")
        span = max(float(A2[-1] - A1[0]), 1.0)
        LO = float(A1[0]) - span     # below every a1: all relays off after reaching it
        HI = float(A2[-1]) + span    # above every a2
        p = np.concatenate([[A2.size, A1.size, D, W, k0, offset, LO, HI, slope_width], A2, A1,
                            T.ravel()])
        x0 = np.zeros(3 + 2 * D)
        if xi < 0:
            x0[0], x0[1], x0[2], x0[3], x0[3 + D] = LO, 1, -1, LO, 0.0
        else:
            x0[0], x0[1], x0[2], x0[3], x0[3 + D] = HI, 1, 1, HI, W
        self._setup(dict(a1=a1.copy(), a2=a2.copy(), weights=w.copy(), initial=xi, k0=k0,
                         offset=offset, max_depth=D, slope_width=slope_width), p, x0)
        self.a1, self.a2, self.weights = a1.copy(), a2.copy(), w.copy()
        self.max_depth = D
        self.continuous = False
        self.state_names = ("u_last", "depth", "bottom")
        self.x_scale = np.ones(self.n_states)

    def _init_continuous(self, a1, a2, w, xi, k0, offset, D, slope_width, grid):
        # continuous mode: cell weights w of Preisach.grid(m, n), density ρ = w/area
        # constant on each cell; p holds the node grid and E at the nodes (module top)
        try:
            m, n = grid
        except (TypeError, ValueError):
            raise ValueError(f"grid must be None or a pair (m, n) (got {grid!r})") from None
        a1g, a2g, i, j, _ = self.grid(m, n)
        m, n = float(m), int(n)
        if a1.size != a1g.size or not (np.allclose(a1, a1g, rtol=0, atol=1e-12 * m)
                                       and np.allclose(a2, a2g, rtol=0, atol=1e-12 * m)):
            raise ValueError(f"with grid = (m, n) = ({m:g}, {n}), a1 and a2 must be the "
                             f"{a1g.size} cell thresholds of Preisach.grid(m, n)")
        h = 2.0 * m / n
        t = -m + h * np.arange(n + 1)
        H = np.zeros((n + 1, n + 1))
        H[j + 1, n - i] = w                # a cell counts in E(t_j', t_i') iff j < j', i >= i'
        T = np.zeros((n + 2, n + 2))
        T[1:, 1:] = np.cumsum(np.cumsum(H, axis=0), axis=1)
        W = float(w.sum())
        span = max(2.0 * m, 1.0)
        LO, HI = -m - span, m + span
        p = np.concatenate([[n + 1, n + 1, D, W, k0, offset, LO, HI, 0.0], t, t, T.ravel()])
        x0 = np.zeros(3 + 2 * D)
        if xi < 0:
            x0[0], x0[1], x0[2], x0[3], x0[3 + D] = LO, 1, -1, LO, 0.0
        else:
            x0[0], x0[1], x0[2], x0[3], x0[3 + D] = HI, 1, 1, HI, W
        self._setup(dict(a1=a1.copy(), a2=a2.copy(), weights=w.copy(), initial=xi, k0=k0,
                         offset=offset, max_depth=D, slope_width=slope_width,
                         grid=(m, n)), p, x0)
        self.a1, self.a2, self.weights = a1.copy(), a2.copy(), w.copy()
        self.max_depth = D
        self.continuous = True
        self.state_names = ("u_last", "depth", "bottom")
        self.x_scale = np.ones(self.n_states)

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def from_relays(cls, a1, a2, weights, initial=-1, **kw):
        """Preisach operator from explicit relays (arrays a1 < a2, weights, initial ±1)."""
        return cls(a1=a1, a2=a2, weights=weights, initial=initial, **kw)

    @staticmethod
    def grid(m, n):
        """Relay thresholds of the triangle of eq. (14), r ∈ [0, m], |s| <= m − r, cut into n
        levels per side (cell size h = 2m/n in a1, a2): one relay per square cell at its
        centre and per diagonal half-cell at its centroid; n(n+1)/2 relays.

        Returns a1, a2, i, j (cell indices, i <= j) and the cells' areas in the (r, s)
        plane [input units²]."""
        m = check_finite("m", m)
        if not m > 0:
            raise ValueError(f"m must be in (0, inf) (got {m!r})")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an integer in [1, inf) (got {n!r})")
        from ..limits import check_memory

        # the n(n+1)/2 relays' index, threshold and area arrays, then the (n+2)² Everett
        # table and its cumulative sums: about 48 bytes per cell of the n x n plane
        check_memory(48.0 * float(n) ** 2, f"a Preisach plane of n = {n} levels",
                     "use fewer levels")
        h = 2.0 * m / n
        i, j = np.triu_indices(n)
        t = -m + h * np.arange(n)
        diag = i == j
        a1 = np.where(diag, t[i] + h / 3.0, t[i] + 0.5 * h)
        a2 = np.where(diag, t[j] + 2.0 * h / 3.0, t[j] + 0.5 * h)
        area = np.where(diag, 0.25 * h * h, 0.5 * h * h)   # |∂(r,s)/∂(a1,a2)| = 1/2
        return a1, a2, i, j, area

    @classmethod
    def from_kernel(cls, omega, m, n, continuous=False, **kw):
        """Discretised Preisach operator of a kernel ω(r, s) on the triangle of eq. (14).

        omega: a callable ω(r, s) (numpy-vectorised or scalar) [output/input²], or an
        array of shape (n, n) whose entry [i, j] (i <= j) is ω on the cell with a1 in the
        i-th and a2 in the j-th of the n levels; m [input units] > 0 half-size of the
        triangle (m = max|input| in eq. (14)); n levels per side. Each cell's weight is
        ω at the cell's centre (centroid for the diagonal half-cells) times its area.

        continuous=False (default, the relay model of eqs. (16)-(18)): one relay per cell
        carries its weight; the output is a staircase in the input.
        continuous=True: ω is constant on each cell (eqs. (13)-(16) with a cellwise
        constant kernel) and the output is the exact integral (12) over the cells cut by
        the memory curve: continuous, piecewise smooth in the input, with the exact
        tangent as ``slope`` — the form to use inside Newton solvers (systems.rigs.rod).
        Both modes agree whenever the input's extrema lie on the grid nodes.
        """
        a1, a2, i, j, area = cls.grid(m, n)
        if callable(omega):
            r = 0.5 * (a2 - a1)
            s = 0.5 * (a2 + a1)
            try:
                vals = np.asarray(omega(r, s), dtype=float)
                if vals.shape != r.shape:
                    vals = np.broadcast_to(vals, r.shape).astype(float)
            except Exception:  # noqa: BLE001 - a scalar-only callable
                vals = np.array([float(omega(ri, si)) for ri, si in zip(r, s)])
        else:
            arr = np.asarray(omega, dtype=float)
            if arr.shape != (n, n):
                raise ValueError(f"omega must be a callable or an array of shape ({n}, {n}) "
                                 f"(got shape {arr.shape})")
            vals = arr[i, j]
        if not np.all(np.isfinite(vals)):
            raise ValueError("omega must be finite on the triangle of eq. (14)")
        kw.setdefault("slope_width", 2.0 * m / n)
        if continuous:
            kw["grid"] = (m, n)
        return cls(a1=a1, a2=a2, weights=vals * area, **kw)

    @classmethod
    def from_everett(cls, E, m, n, continuous=False, **kw):
        """Discretised Preisach operator of an Everett function E(α, β) [output units]:
        E(α, β) = ∫∫ ω(r, s) dr ds over {β <= s − r, s + r <= α}, with E(α, β) = 0 for
        α <= β. Cell weights are the exact integrals of ω over the cells of
        :meth:`grid` (inclusion-exclusion of E at the cell corners), so the operator
        equals the one of E whenever the input's extrema lie on the grid
        t_k = −m + 2mk/n. continuous: as in :meth:`from_kernel` (default False, relays;
        True: E is interpolated between the nodes by the cellwise-constant density)."""
        a1c, a2c, i, j, area = cls.grid(m, n)
        h = 2.0 * m / n
        t = -m + h * np.arange(n + 1)

        def Ev(al, be):
            al = np.asarray(al, dtype=float)
            be = np.asarray(be, dtype=float)
            try:
                out = np.asarray(E(al, be), dtype=float)
                if out.shape != al.shape:
                    out = np.broadcast_to(out, al.shape).astype(float)
            except Exception:  # noqa: BLE001
                out = np.array([float(E(a, b)) for a, b in zip(al.ravel(), be.ravel())])
            return np.where(al > be, out.reshape(al.shape), 0.0)

        sq = i != j
        wgt = np.empty(i.size)
        ii, jj = i[sq], j[sq]
        wgt[sq] = (Ev(t[jj + 1], t[ii]) - Ev(t[jj], t[ii]) - Ev(t[jj + 1], t[ii + 1])
                   + Ev(t[jj], t[ii + 1]))
        d = ~sq
        wgt[d] = Ev(t[i[d] + 1], t[i[d]])
        if not np.all(np.isfinite(wgt)):
            raise ValueError("E must be finite on the triangle of eq. (14)")
        kw.setdefault("slope_width", h)
        if continuous:
            kw["grid"] = (m, n)
        return cls(a1=a1c, a2=a2c, weights=wgt, **kw)

    # -- memory ---------------------------------------------------------------------------
    def state_after(self, history, x=None) -> np.ndarray:
        """State after the input has gone through the values ``history`` (each joined to
        the next by a straight line), starting from ``x`` (default: the initial state)."""
        h = check_array("history", history)
        xs = (self.x0 if x is None else np.asarray(x, dtype=float)).copy()
        for k in range(h.size):
            self.advance(xs, xs[0], h[k], 1.0, 0.0, self.p, 1e-8)
        return xs

    def demagnetized_state(self, amplitude=None, step=None) -> np.ndarray:
        """State after an alternating input of decreasing amplitude, ±amplitude,
        ∓(amplitude − step), ... down to 0 (AC demagnetisation): the memory curve then
        zig-zags about s = 0 with teeth of size step/2, so a kernel symmetric in s gives
        M(0) = offset. amplitude [input units] default: the largest |threshold| (m of
        eq. (14)); step [input units] default: half a grid cell (continuous mode) or
        the mean threshold spacing. Needs max_depth >= 2·amplitude/step + 3."""
        A = np.concatenate([self.p[_HEAD:_HEAD + int(self.p[0]) + int(self.p[1])]])
        if amplitude is None:
            amplitude = float(np.max(np.abs(A)))
        if step is None:
            thr = np.unique(A)
            step = (0.5 if self.continuous else 1.0) * float(thr[-1] - thr[0]) / max(thr.size - 1, 1)
        amplitude = check_finite("amplitude", amplitude)
        step = check_finite("step", step)
        if not amplitude > 0:
            raise ValueError(f"amplitude must be in (0, inf) (got {amplitude!r})")
        if not 0 < step <= amplitude:
            raise ValueError(f"step must be in (0, amplitude] = (0, {amplitude:g}] (got {step!r})")
        k = int(math.ceil(amplitude / step))
        need = k + 3
        if need > self.max_depth:
            raise ValueError(f"step must be in [{amplitude / (self.max_depth - 3):g}, "
                             f"{amplitude:g}] for max_depth = {self.max_depth} (got {step!r}); "
                             f"or build the operator with max_depth >= {need}")
        amps = amplitude - step * np.arange(k)
        hist = np.append(amps * np.where(np.arange(k) % 2 == 0, 1.0, -1.0), 0.0)
        return self.state_after(hist)

    def stack(self, x) -> np.ndarray:
        """The memory stack (dominant extrema, oldest first, sentinel included) followed
        by the current input, for a state x."""
        x = np.asarray(x, dtype=float)
        n = int(x[1])
        return np.append(x[3:3 + n], x[0])

    def memory_curve(self, x, r) -> np.ndarray:
        """Memory curve s = ψ(r) of eq. (10) for the state x at half-widths r >= 0:
        relays (r, s) below it are +1, above it −1 (eq. (8))."""
        r = np.asarray(r, dtype=float)
        seq = self.stack(x)
        x = np.asarray(x, dtype=float)
        psi = seq[0] - r if x[2] < 0 else seq[0] + r
        for v in seq[1:]:
            psi = np.maximum(v - r, np.minimum(v + r, psi))
        return psi

    def relay_states(self, x) -> np.ndarray:
        """±1 state of each relay (constructor order) for the state x: the relays driven
        through the stored extrema (O(n_relays · depth), for inspection and tests)."""
        seq = self.stack(x)
        x = np.asarray(x, dtype=float)
        R = np.full(self.a1.size, -1.0 if x[2] < 0 else 1.0)
        for v in seq:
            R = np.where(v >= self.a2, 1.0, np.where(v <= self.a1, -1.0, R))
        return R


class PrandtlIshlinskii(Preisach):
    """Prandtl-Ishlinskii operator: M = offset + k0·u + Σ_j c_j·p_{r_j}[u], with play
    operators p_r of half-widths r_j >= 0 whose outputs start at 0 for u = 0 (stops
    s_r = u − p_r give the stop form: k0 = Σ c_j, weights −c_j).

    It is the Preisach operator of eq. (7) with its kernel on the lines r = r_j
    (density c_j/2 along s); here the lines carry relays every h [input units] in s,
    over |s| <= u_bound + r_j. The result equals the continuous operator exactly when
    every input sample and every 2·r_j is a multiple of h (relay thresholds then sit
    half-way between input levels), and within h·Σ|c_j|/2 otherwise.

    r [input units] 1-D array of play half-widths (> 0), weights c_j (finite),
    u_bound [input units] > 0 the largest |u| the operator must handle exactly,
    h [input units] > 0 the grid step.
    """

    param_info = (
        Param('r', 'input', meaning='half-widths r_j of the play operators (1-D array)',
              range='in (0, inf) elementwise'),
        Param('weights', 'output/input', meaning='weights c_j of the play operators (1-D array, length of r)',
              range='any real'),
        Param('h', 'input', meaning='relay spacing along each play line',
              range='in (0, inf)'),
        Param('u_bound', 'input', meaning='largest |u| the operator is built for',
              range='in (0, inf)'),
        Param('k0', 'output/input', meaning='reversible linear part k0·u',
              range='any real'),
        Param('offset', 'output', meaning='constant output offset',
              range='any real'),
        Param('max_depth', '1', meaning='capacity of the memory stack',
              range='>= 2 (an integer)'),
    )

    def __init__(self, *, r, weights, h, u_bound, k0=0.0, offset=0.0, max_depth=256):
        r = check_array("r", r)
        c = check_array("weights", weights)
        if c.size != r.size:
            raise ValueError(f"weights must have the same length as r ({r.size}) (got {c.size})")
        if np.any(r <= 0):
            raise ValueError(f"r must be in (0, inf) elementwise (got {r.min()!r})")
        h = check_finite("h", h)
        u_bound = check_finite("u_bound", u_bound)
        if not h > 0:
            raise ValueError(f"h must be in (0, inf) (got {h!r})")
        if not u_bound > 0:
            raise ValueError(f"u_bound must be in (0, inf) (got {u_bound!r})")
        a1s, a2s, ws = [], [], []
        for rj, cj in zip(r, c):
            N = int(math.ceil((u_bound + rj) / h))
            s = h * (np.arange(-N, N) + 0.5)         # symmetric: Σ R·h/2 = p_r − 0
            a1s.append(s - rj)
            a2s.append(s + rj)
            ws.append(np.full(s.size, 0.5 * cj * h))
        super().__init__(a1=np.concatenate(a1s), a2=np.concatenate(a2s),
                         weights=np.concatenate(ws), initial=-1, k0=k0, offset=offset,
                         max_depth=max_depth, slope_width=h)
        # plays at 0 for u = 0: the alternating history ±r_max, ∓..., ±r_min, 0
        rs = np.sort(r)[::-1]
        hist = [rs[i] * (1 if i % 2 == 0 else -1) for i in range(rs.size)] + [0.0]
        self.x0 = self.state_after(hist)
        self.params = dict(r=r.copy(), weights=c.copy(), h=h, u_bound=u_bound, k0=k0,
                           offset=offset, max_depth=self.max_depth)
        self.r, self.c = r.copy(), c.copy()
        self._play = np.repeat(np.arange(r.size), [a.size for a in a1s])

    def _free_names(self):
        N = self.c.size
        return (f"weights (all {N} play weights c_j, as weights[0..{N - 1}]), weights[j] "
                f"(j in [0, {N - 1}]), k0, offset")

    def tangent_directions(self, name):
        """As Preisach.tangent_directions, the weights being the plays' c_j (each moves
        the relays of its play line by h/2); r, h, u_bound are refused."""
        base, br, rest = name.partition("[")
        if base != "weights":
            return super().tangent_directions(name)
        idx = _weight_indices(name, br, rest, self.c.size)
        h = self.params["h"]
        out = []
        for j in idx:
            wd = np.where(self._play == j, 0.5 * h, 0.0)
            out.append((f"weights[{j}]", float(self.c[j]),
                        self._direction(wdir=wd, W=float(wd.sum()))))
        return out

    def play_outputs(self, x) -> np.ndarray:
        """Outputs p_{r_j} [input units] of the plays for the state x (memory curve at r_j)."""
        return self.memory_curve(x, self.r)
