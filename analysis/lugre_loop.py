"""Closed-form slow-input limit and steady hysteresis loop of the LuGre / Dahl models.

Ikhouane, Mañosa & Pujol, *Minor loops of the Dahl and LuGre models*:
Theorem 2 (eqs. (4)-(8)), the normalized input (eqs. (9)-(10)), Theorem A
(eqs. (11)-(15)) and its multimodal generalisation (end of §3.2.3).

In the limit of slow inputs only σ0 and g(0) enter (Theorem 2): with a = σ0/g(0),
along a leg of ψ_u of direction s = ±1 (eq. (6) integrated on one leg)

    y(ϱ) = s·g(0) + (y(ϱ_i) − s·g(0))·exp(−a (ϱ − ϱ_i)),   ϱ ∈ [ϱ_i, ϱ_{i+1}],

and the steady loop is the periodic solution, y°(0) = y°(ϱ_T) (eq. (8)).
For the Dahl model σ0 = ρ·Fc and g(0) = Fc.

Minor loops (Theorem A (b) generalised). Take one period of the extrema sequence of
ψ_u, started at its first global minimum (as u_min,1 in Definition 1), and pair the reversals with the
four-point rainflow rule: for consecutive stacked reversals A, B, C, D, the pair
(B, C) is a minor loop when |C − B| ≤ |B − A| and |C − B| ≤ |D − C|, i.e. the
excursion B → C lies inside the excursion A → D; B and C are then removed and the
rule is applied again (so nested loops are found innermost first). The minor loop
opens at the reversal ϱ_B and closes at ϱ_close, the first ϱ > ϱ_C at which ψ_u
comes back to ψ_u(ϱ_B). Its arc is {(ψ_u(ϱ), y°(ϱ)), ϱ ∈ [ϱ_B, ϱ_close]}: it is
closed in u (ψ_u(ϱ_close) = ψ_u(ϱ_B)) but not in force, as in Fig. 15 of the paper.
What remains after all pairs are removed is the major loop (global min ↔ global max).
Ties (equal extrema) are resolved as in Theorem A: the pair that opens first wins.
For a bimodal input of Definition 1 this gives exactly one minor loop,
[ϱ_1, ϱ_5] with ϱ_5 = ϱ_2 + u_max,1 − u_min,2, as in Theorem A (b).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..components.base import check_array, check_positive
from .variation import turning_points


# -- model parameters of the slow-input limit ---------------------------------------------
def slow_params(model) -> tuple[float, float]:
    """(σ0 [N/m], g(0) [N]) of the slow-input limit (Theorem 2).

    ``model`` is a LuGre element (σ0, g(0)), a Dahl element (σ0 = ρ·Fc, g(0) = Fc), a
    viscous + Dahl element with a symmetric dry part (σ0 = ρ·κw, g(0) = κw), or a
    mapping with keys ``sigma0`` and ``g0`` (or ``rho`` and ``Fc``).
    """
    if isinstance(model, dict):
        p = model
        if "sigma0" in p and "g0" in p:
            return check_positive("sigma0", p["sigma0"]), check_positive("g0", p["g0"])
        if "rho" in p and "Fc" in p:
            rho, Fc = check_positive("rho", p["rho"]), check_positive("Fc", p["Fc"])
            return rho * Fc, Fc
        raise ValueError("model must give sigma0 and g0 (or rho and Fc)")
    params = getattr(model, "params", None)
    if params is None:
        raise ValueError(f"model must be a LuGre/Dahl element or a dict with sigma0 and g0 "
                         f"(got {type(model).__name__})")
    if "sigma0" in params:
        g0 = model.g0() if hasattr(model, "g0") else params["Fc"]
        return float(params["sigma0"]), float(g0)
    if "rho" in params and "Fc" in params:
        return params["rho"] * params["Fc"], float(params["Fc"])
    if "rho" in params and "kw" in params:
        return params["rho"] * params["kw"], float(params["kw"])
    raise ValueError(f"model {type(model).__name__} has no LuGre/Dahl slow-input limit; "
                     f"give a dict with sigma0 and g0")


def _legs(knots_u):
    """Turning knots of a piecewise-linear path: (ϱ knots, ψ knots, directions)."""
    ku = np.asarray(knots_u, dtype=float)
    idx = turning_points(ku)
    psi = ku[idx]
    rho = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(psi)))])
    s = np.sign(np.diff(psi))
    return rho, psi, s


def _propagate(y0, L, s, a, g0):
    """y at the end of each leg of length L [m] and direction s from y0 (eq. (6))."""
    y = np.empty(L.size + 1)
    y[0] = y0
    for i in range(L.size):
        y[i + 1] = s[i] * g0 + (y[i] - s[i] * g0) * math.exp(-a * L[i])
    return y


# -- closed-form outputs at samples -----------------------------------------------------------
def lugre_slow_limit(model, u, y0=None) -> np.ndarray:
    """y*_u at every sample of u [N]: the γ → ∞ limit of the LuGre output (eq. (4)).

    u [m] samples joined by straight lines (only their values matter: the limit is
    rate independent). y0 = y*_u(0) = σ0·x0 [N]; default: the element's initial state
    (σ0·x0 for LuGre, Fc·w0 for Dahl), 0 for a dict model.
    """
    sigma0, g0 = slow_params(model)
    u = check_array("u", u, min_len=1)
    if y0 is None:
        prm = getattr(model, "params", {}) if not isinstance(model, dict) else model
        if "x0" in prm:
            y0 = sigma0 * prm["x0"]
        elif "w0" in prm:
            y0 = g0 * prm["w0"]
        else:
            y0 = 0.0
    d = np.diff(u)
    return _propagate(float(y0), np.abs(d), np.sign(d), sigma0 / g0, g0)


def lugre_steady_output(model, u) -> np.ndarray:
    """y°_u at every sample of one period of a periodic input [N] (eqs. (6), (8)).

    u [m]: samples of one period, u[-1] == u[0] (to 1e-9 of the range), joined by
    straight lines.
    """
    sigma0, g0 = slow_params(model)
    u = check_array("u", u, min_len=2)
    _check_periodic(u, "u")
    u = u.copy()
    u[-1] = u[0]
    d = np.diff(u)
    a = sigma0 / g0
    L, s = np.abs(d), np.sign(d)
    c = _propagate(0.0, L, s, a, g0)[-1]
    y0 = c / (-math.expm1(-a * L.sum()))
    return _propagate(y0, L, s, a, g0)


def _check_periodic(ku, name):
    span = float(np.max(ku) - np.min(ku))
    if abs(ku[-1] - ku[0]) > 1e-9 * span:
        raise ValueError(f"{name} must describe one period: its last value must equal its "
                         f"first ({float(ku[-1])!r} != {float(ku[0])!r})")
    if np.all(ku == ku[0]):
        raise ValueError(f"{name} must not be constant (the loop of a constant input is a point)")


# -- the steady loop ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MinorLoop:
    """One minor loop: it opens at the reversal ϱ_open (value u_open), turns at the
    reversal ϱ_turn (value u_turn) and closes at ϱ_close where ψ_u = u_open again.
    ϱ values in [0, 2·period); values beyond ``period`` wrap into the next period."""

    varrho_open: float
    varrho_turn: float
    varrho_close: float
    u_open: float
    u_turn: float


@dataclass
class LoopResult:
    """Steady hysteresis loop G°_u = {(ψ_u(ϱ), y°(ϱ)), ϱ ∈ [0, ϱ_T]} (eq. (15)).

    varrho [m], u = ψ_u(varrho) [m] and F = y°(varrho) [N]: dense samples of one period
    (every knot included). knots_*: the turning points of ψ_u and y° there.
    minor_loops: see the module docstring for the definition.
    """

    varrho: np.ndarray
    u: np.ndarray
    F: np.ndarray
    knots_varrho: np.ndarray
    knots_u: np.ndarray
    knots_F: np.ndarray
    sigma0: float
    g0: float
    minor_loops: list = field(default_factory=list)

    @property
    def period(self) -> float:
        """ϱ_T = ρ_u(T) [m], the total variation of one period."""
        return float(self.knots_varrho[-1])

    def _leg(self, varrho):
        r = np.mod(np.asarray(varrho, dtype=float), self.period)
        i = np.clip(np.searchsorted(self.knots_varrho, r, side="right") - 1, 0,
                    self.knots_varrho.size - 2)
        s = np.sign(np.diff(self.knots_u))[i]
        return r, i, s

    def psi_at(self, varrho) -> np.ndarray:
        """ψ_u(ϱ) [m] (periodic in ϱ)."""
        r, i, s = self._leg(varrho)
        return self.knots_u[i] + s * (r - self.knots_varrho[i])

    def F_at(self, varrho) -> np.ndarray:
        """y°(ϱ) [N], exact (eqs. (11)-(14) generalised; periodic in ϱ)."""
        r, i, s = self._leg(varrho)
        a = self.sigma0 / self.g0
        return s * self.g0 + (self.knots_F[i] - s * self.g0) * np.exp(-a * (r - self.knots_varrho[i]))

    def arc(self, j: int, n_per_unit: float = 400.0):
        """(varrho, u, F) of minor loop ``j``, densely sampled (knots included)."""
        m = self.minor_loops[j]
        return self._arc(m.varrho_open, m.varrho_close, n_per_unit)

    def _arc(self, r0, r1, n_per_unit):
        P = self.period
        ks = np.concatenate([self.knots_varrho, self.knots_varrho[1:] + P])
        inner = ks[(ks > r0) & (ks < r1)]
        n = max(2, int(math.ceil((r1 - r0) * n_per_unit)) + 1)
        r = np.unique(np.concatenate([np.linspace(r0, r1, n), inner]))
        # exact knot values: evaluate on the leg that starts at the knot
        return r, self.psi_at(r), self.F_at(r)

    def energy(self, r0: float | None = None, r1: float | None = None) -> float:
        """∫ y° dψ_u [J] over ϱ ∈ [r0, r1] [m] (default: one period, i.e. the energy
        dissipated per cycle, > 0), exact. Over a minor loop's [ϱ_open, ϱ_close] this is
        the area it encloses (its closing chord is vertical and adds nothing)."""
        r0 = 0.0 if r0 is None else float(r0)
        r1 = self.period if r1 is None else float(r1)
        P = self.period
        nwrap = int(math.floor(r1 / P)) + 2
        ks = np.concatenate([self.knots_varrho[:-1] + k * P for k in range(nwrap)])
        pts = np.concatenate([[r0], ks[(ks > r0) & (ks < r1)], [r1]])
        a = self.sigma0 / self.g0
        total = 0.0
        for lo, hi in zip(pts[:-1], pts[1:]):
            s = float(self._leg(0.5 * (lo + hi))[2])
            y_lo = float(self.F_at(lo))          # y° is continuous: any leg gives it
            L = hi - lo
            # ∫_0^L (s g0 + (y_lo − s g0) e^{−aτ}) s dτ
            total += self.g0 * L + s * (y_lo - s * self.g0) * (-math.expm1(-a * L)) / a
        return total


def _rainflow_pairs(psi):
    """Four-point rainflow pairing of a reversal sequence psi[0..m] (psi[0] = psi[m]
    = global minimum). Returns (open_index, turn_index) pairs in order of removal."""
    stack: list[int] = []
    pairs = []
    for k in range(psi.size):
        stack.append(k)
        while len(stack) >= 4:
            A, B, C, D = (psi[i] for i in stack[-4:])
            Y = abs(C - B)
            if Y <= abs(B - A) and Y <= abs(D - C):
                pairs.append((stack[-3], stack[-2]))
                del stack[-3:-1]
            else:
                break
    return pairs


def lugre_steady_loop(model, knots_u, *, n_per_unit: float = 200.0) -> LoopResult:
    """Steady hysteresis loop of the LuGre / Dahl model for a periodic piecewise-linear
    input (Ikhouane, Mañosa & Pujol, Theorem 2 eqs. (6), (8); Theorem A and its
    multimodal generalisation, §3.2.3), with its minor loops (module docstring).

    model: LuGre or Dahl element, or {"sigma0": N/m, "g0": N} (see :func:`slow_params`).
    knots_u [m]: the input's values at its knots over one period, last == first
    (e.g. [0, 1, 0.5, 1.5, 0] for Example 4); only the values matter, the loop is
    rate independent. Knots that are not reversals and repeated values are allowed.
    ϱ = 0 is the first knot. n_per_unit: dense samples per metre of ϱ in the arrays.
    """
    sigma0, g0 = slow_params(model)
    ku = check_array("knots_u", knots_u, min_len=2)
    _check_periodic(ku, "knots_u")
    ku = ku.copy()
    ku[-1] = ku[0]
    n_per_unit = check_positive("n_per_unit", n_per_unit)
    kv, kpsi, s = _legs(ku)
    a = sigma0 / g0
    L = np.diff(kv)
    P = float(kv[-1])
    c = _propagate(0.0, L, s, a, g0)[-1]
    kF = _propagate(c / (-math.expm1(-a * P)), L, s, a, g0)
    kF[-1] = kF[0]
    res = LoopResult(np.empty(0), np.empty(0), np.empty(0), kv, kpsi, kF, sigma0, g0)
    n = max(2, int(math.ceil(P * n_per_unit)) + 1)
    r = np.unique(np.concatenate([np.linspace(0.0, P, n), kv]))
    res.varrho, res.u, res.F = r, res.psi_at(r), res.F_at(r)
    res.u[-1], res.F[-1] = kpsi[-1], kF[-1]
    # reversals of the periodic input, one period started at the first global minimum
    rev = list(range(1, kv.size - 1))
    if s[0] != s[-1]:
        rev.insert(0, 0)                  # the start (= end) knot is itself a reversal
    rr = np.array([kv[i] for i in rev])
    rp = np.array([kpsi[i] for i in rev])
    j0 = int(np.argmin(rp))
    rr = np.concatenate([rr[j0:], rr[:j0] + P, [rr[j0] + P]])
    rp = np.concatenate([rp[j0:], rp[:j0], [rp[j0]]])
    for ob, tc in _rainflow_pairs(rp):
        # first return of ψ to ψ(open) after the turn (legs between reversals are monotone)
        r_close = None
        for j in range(tc + 1, rp.size):
            if (rp[j] - rp[ob]) * (rp[tc] - rp[ob]) <= 0.0:
                r_close = rr[j - 1] + abs(rp[j - 1] - rp[ob])
                break
        o = rr[ob] % P
        res.minor_loops.append(MinorLoop(float(o), float(o + rr[tc] - rr[ob]),
                                         float(o + r_close - rr[ob]),
                                         float(rp[ob]), float(rp[tc])))
    res.minor_loops.sort(key=lambda m: m.varrho_open)
    return res


# -- Theorem A: explicit bimodal formulas ----------------------------------------------------------
def theorem_a(sigma0, g0, u_min1, u_min2, u_max1, u_max2, varrho):
    """Explicit steady loop of Theorem A for a bimodal input of Definition 1
    (Ikhouane, Mañosa & Pujol, eqs. (10)-(14)).

    Returns (psi, y, knots) with psi = ψ_u(ϱ) [m], y = y°(ϱ) [N] at ``varrho`` ∈ [0, ϱ_4]
    and knots = (ϱ_1, ϱ_2, ϱ_3, ϱ_4, ϱ_5) [m]; [ϱ_1, ϱ_5] is the minor loop (b).
    """
    sigma0 = check_positive("sigma0", sigma0)
    g0 = check_positive("g0", g0)
    if not (u_min1 <= u_min2 < u_max1 <= u_max2) or (u_min1 == u_min2 and u_max1 == u_max2):
        raise ValueError("the extrema must satisfy u_min1 <= u_min2 < u_max1 <= u_max2 with "
                         "u_min1 != u_min2 or u_max1 != u_max2 (Definition 1)")
    r1 = u_max1 - u_min1
    r2 = r1 + u_max1 - u_min2
    r3 = r2 + u_max2 - u_min2
    r4 = r3 + u_max2 - u_min1
    r5 = u_max1 - u_min2 + r2
    k = sigma0 / g0
    E = math.exp
    y0 = g0 * E(-k * r4) / (1 - E(-k * r4)) * (2 * E(k * r1) - 2 * E(k * r2) + 2 * E(k * r3)
                                               - E(k * r4) - 1)            # eq. (11)
    y1 = E(-k * r1) * (y0 + g0 * (E(k * r1) - 1))
    y2 = E(-k * (r2 - r1)) * (y1 - g0 * (E(k * (r2 - r1)) - 1))            # eq. (12)
    y3 = E(-k * (r3 - r2)) * (y2 + g0 * (E(k * (r3 - r2)) - 1))            # eq. (13)
    r = np.asarray(varrho, dtype=float)
    y = np.where(r <= r1, np.exp(-k * r) * (y0 + g0 * (np.exp(k * r) - 1)),
        np.where(r <= r2, np.exp(-k * (r - r1)) * (y1 - g0 * (np.exp(k * (r - r1)) - 1)),
        np.where(r <= r3, np.exp(-k * (r - r2)) * (y2 + g0 * (np.exp(k * (r - r2)) - 1)),
                 np.exp(-k * (r - r3)) * (y3 - g0 * (np.exp(k * (r - r3)) - 1)))))  # eq. (14)
    p = np.where(r <= r1, r + u_min1, np.where(r <= r2, -r + r1 + u_max1,
        np.where(r <= r3, r - r2 + u_min2, -r + r3 + u_max2)))               # eq. (10)
    return p, y, (r1, r2, r3, r4, r5)
