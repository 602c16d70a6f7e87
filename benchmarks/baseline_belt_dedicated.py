"""BASELINE for benchmarks/bench_assembly.py: a frozen copy of the dedicated belt-tensioner
loops of systems/belt_tensioner.py at commit 05f8a1f (before issue 10 moved every rig onto
the generic Assembly path and deleted these loops). Not part of the library; do not edit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from hystmech.components.base import ForceElement, check_finite, check_nonnegative, check_positive, is_compiled

# rig = [m1, m2, K, C, g, T0, f0, f1, Omega0, phi, Fpre]
RIG = dict(m1=73.84, m2=0.15, K=560000.0, C=160.0, g=9.81)          # eq. (39)
FORCING = dict(f0=3.5, f1=122.1, Omega0=73.15, phi=0.40)               # eq. (53)
T_START = 1.6e-3                                                        # eq. (40b)
H_PAPER = 1e-5                                                          # eq. (57)

# identified tensioner values, Bastien et al. (2007), eqs. (33)-(36)
MDM_PARAMS = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)
MASING_PARAMS = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2)
C_IDENT = 1.93e4           # c [N s/m], eq. (36c), identified at
OMEGA_IDENT = 9.4          # Ω [rad/s], eq. (32)

METHODS = ("projection", "rk45", "bdf")

_NOBS = 17
# obs = [win_max, win_min, blk_max, blk_min, blk_end, prev_amp, prev_max, prev_min,
#        n_ok, blk_len, tol, n_confirm, detect, t_stop, n_blocks, t_win0, t_detect0]


def masing_damping(Omega: float, c: float = C_IDENT, Omega_ident: float = OMEGA_IDENT) -> float:
    """Viscous coefficient c0 [N s/m] at pulsation Omega [rad/s], keeping c·Ω constant.

    Bastien et al. (2007), eq. (31): c0 = c·Ω_ident/Ω (eq. (56): 2.48e3 N s/m at 73.15 rad/s).
    """
    Omega = check_positive("Omega", Omega)
    return check_positive("c", c) * check_positive("Omega_ident", Omega_ident) / Omega


def paper_tensioner(model: str, *, Omega0: float = FORCING["Omega0"]) -> ForceElement:
    """The identified tensioner of Bastien et al. (2007): ``"mdm"`` (modified Dahl,
    eqs. (33)-(35)) or ``"masing"`` (Masing with viscous damping, eq. (36), c0 by eq. (31)
    at the forcing pulsation Omega0 [rad/s], w0 = 0 by eq. (54)).

    The initial force / offset are set later by the static initialisation (eq. (51)).
    """
    model = str(model).lower()
    if model in ("mdm", "modified_dahl", "modifieddahl"):
        from hystmech.components.modified_dahl import ModifiedDahl

        return ModifiedDahl(**MDM_PARAMS)
    if model in ("masing", "mm"):
        from hystmech.components.masing import Masing

        return Masing(**MASING_PARAMS, c=masing_damping(Omega0), w0=0.0)
    raise ValueError(f"model must be one of 'mdm', 'masing' (got {model!r})")


# -- numba kernels ---------------------------------------------------------------------------
@njit(cache=True)
def _observe(obs, t, T):
    """Track max/min of T over the window t >= t_win0 and, by blocks of a few forcing
    periods from t_detect0 on, detect a periodic steady state. Returns True to stop."""
    if t >= obs[15]:
        if T > obs[0]:
            obs[0] = T
        if T < obs[1]:
            obs[1] = T
    if obs[12] == 0.0 or t < obs[16]:
        return False
    if T > obs[2]:
        obs[2] = T
    if T < obs[3]:
        obs[3] = T
    if t < obs[4]:
        return False
    # a block of n forcing periods has ended: compare its extremes with the previous block
    amp = obs[2] - obs[3]
    tol = obs[10] * max(amp, 1e-300)
    if (obs[14] > 0 and abs(amp - obs[5]) <= tol and abs(obs[2] - obs[6]) <= tol
            and abs(obs[3] - obs[7]) <= tol):
        obs[8] += 1.0
    else:
        obs[8] = 0.0
    obs[5] = amp
    obs[6] = obs[2]
    obs[7] = obs[3]
    obs[14] += 1.0
    obs[2] = -1e300
    obs[3] = 1e300
    obs[4] += obs[9]
    if obs[8] >= obs[11]:
        obs[13] = t
        return True
    return False


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _rig_rhs(t, y, rate, force, p, rig, xd, dy):
    """Right-hand side of eqs. (38) with the tensioner state in y[4:]."""
    u1 = y[0]
    v1 = y[1]
    u2 = y[2]
    v2 = y[3]
    x = y[4:]
    T = rig[2] * (u1 - u2) + rig[3] * (v1 - v2) + rig[5]
    F = force(x, u2, v2, p) + rig[10]
    f = rig[6] + rig[7] * math.cos(rig[8] * t + rig[9])
    dy[0] = v1
    dy[1] = (f - T) / rig[0] + rig[4]
    dy[2] = v2
    dy[3] = (T - F) / rig[1] + rig[4]
    rate(x, u2, v2, p, xd)
    for i in range(xd.size):
        dy[4 + i] = xd[i]
    return T, F


@njit(cache=True)
def _record(rec, j, t, y, T, F, n_x):
    rec[j, 0] = t
    for i in range(4):
        rec[j, 1 + i] = y[i]
    rec[j, 5] = T
    rec[j, 6] = F
    for i in range(n_x):
        rec[j, 7 + i] = y[4 + i]


@njit(cache=True)
def _no_rate(x, u, v, p, out):
    pass


@njit(cache=True)
def _no_advance(x, u0, u1, dt, v, p, rtol):
    pass


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _rig_projection(rate, force, p, box_lo, box_hi, y0, rig, t0, h, n_steps, stride,
                    t_rec0, n_rec, n_x_rec, obs, advance, is_op, rtol):
    """Bastien et al. (2007), eq. (A.9) for the rig, eq. (47):
    Y^{p+1} = P_Q(Y^p + h·H(t_p, Y^p)), P_Q = projection of the tensioner state on its box.
    An operator tensioner (is_op; e.g. a co-simulation FMU) is advanced by its own
    ``advance`` over the step's input segment u2 -> u2 + h·v2 instead.
    Records every ``stride``-th step from t_rec0 on (at most n_rec rows). Returns
    (records, number of rows, final state, last time)."""
    n = y0.size
    nx = n - 4
    y = y0.copy()
    xd = np.empty(nx)
    x = y0[4:].copy()
    rec = np.empty((n_rec, 7 + n_x_rec))
    j = 0
    m1 = rig[0]
    m2 = rig[1]
    K = rig[2]
    C = rig[3]
    g = rig[4]
    T0 = rig[5]
    f0 = rig[6]
    f1 = rig[7]
    Om = rig[8]
    phi = rig[9]
    Fpre = rig[10]
    # cos(Ωt + φ) by a rotation recurrence, re-anchored every 1024 steps (saves a cos per step)
    cr = math.cos(Om * h)
    sr = math.sin(Om * h)
    cs = 1.0
    sn = 0.0
    t_obs = obs[15]
    if obs[12] != 0.0 and obs[16] < t_obs:
        t_obs = obs[16]
    # first step index at or after t_obs / t_rec0 (integer tests in the loop)
    k_obs = n_steps + 1
    if t_obs <= t0 + n_steps * h:
        k_obs = max(0, int(math.ceil((t_obs - t0) / h - 1e-9)))
    k_rec = n_steps + 1
    if t_rec0 <= t0 + n_steps * h:
        k_rec = max(0, int(math.ceil((t_rec0 - t0) / h - 1e-9)))
    u1 = y[0]
    v1 = y[1]
    u2 = y[2]
    v2 = y[3]
    t = t0
    for k in range(n_steps + 1):
        if (k & 1023) == 0:
            t = t0 + k * h
            cs = math.cos(Om * t + phi)
            sn = math.sin(Om * t + phi)
        T = K * (u1 - u2) + C * (v1 - v2) + T0
        F = force(x, u2, v2, p) + Fpre
        if k == k_rec and j < n_rec:
            y[0] = u1
            y[1] = v1
            y[2] = u2
            y[3] = v2
            for i in range(nx):
                y[4 + i] = x[i]
            _record(rec, j, t0 + k * h, y, T, F, n_x_rec)
            j += 1
            k_rec += stride
        if k >= k_obs:
            if _observe(obs, t0 + k * h, T):
                t = t0 + k * h
                break
        if k == n_steps:
            t = t0 + k * h
            break
        f = f0 + f1 * cs
        if is_op:
            advance(x, u2, u2 + h * v2, h, v2, p, rtol)
        else:
            rate(x, u2, v2, p, xd)
        u1n = u1 + h * v1
        v1 = v1 + h * ((f - T) / m1 + g)
        u1 = u1n
        u2n = u2 + h * v2
        v2 = v2 + h * ((T - F) / m2 + g)
        u2 = u2n
        for i in range(nx if not is_op else 0):
            z = x[i] + h * xd[i]
            if z < box_lo[i]:
                z = box_lo[i]
            elif z > box_hi[i]:
                z = box_hi[i]
            x[i] = z
        c_new = cs * cr - sn * sr
        sn = sn * cr + cs * sr
        cs = c_new
    y[0] = u1
    y[1] = v1
    y[2] = u2
    y[3] = v2
    for i in range(nx):
        y[4 + i] = x[i]
    return rec, j, y, t


from hystmech.components._ode import (_A21, _A31, _A32, _A41, _A42, _A43, _A51, _A52,  # noqa: E402,F401
                               _A53, _A54, _A61, _A62, _A63, _A64, _A65, _B1, _B3, _B4, _B5,
                               _B6, _C2, _C3, _C4, _C5, _E1, _E3, _E4, _E5, _E6, _E7)


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _dopri_to(t, t_next, h, h_max, y, yt, yn, k1, k2, k3, k4, k5, k6, k7, xd, yscale, rtol,
              rate, force, p, rig):
    """Adaptive Dormand-Prince 5(4) steps from t to exactly t_next (k1 = rate at t on
    entry and at t_next on exit). Returns (t, next step size, steps, T, F) or steps < 0
    on a non-finite state."""
    n = y.size
    steps = 0
    T = 0.0
    F = 0.0
    while t < t_next:
        last = False
        hh = h
        if t + hh >= t_next - 1e-12 * hh:
            hh = t_next - t
            last = True
        for i in range(n):
            yt[i] = y[i] + hh * _A21 * k1[i]
        _rig_rhs(t + _C2 * hh, yt, rate, force, p, rig, xd, k2)
        for i in range(n):
            yt[i] = y[i] + hh * (_A31 * k1[i] + _A32 * k2[i])
        _rig_rhs(t + _C3 * hh, yt, rate, force, p, rig, xd, k3)
        for i in range(n):
            yt[i] = y[i] + hh * (_A41 * k1[i] + _A42 * k2[i] + _A43 * k3[i])
        _rig_rhs(t + _C4 * hh, yt, rate, force, p, rig, xd, k4)
        for i in range(n):
            yt[i] = y[i] + hh * (_A51 * k1[i] + _A52 * k2[i] + _A53 * k3[i] + _A54 * k4[i])
        _rig_rhs(t + _C5 * hh, yt, rate, force, p, rig, xd, k5)
        for i in range(n):
            yt[i] = y[i] + hh * (_A61 * k1[i] + _A62 * k2[i] + _A63 * k3[i]
                                 + _A64 * k4[i] + _A65 * k5[i])
        _rig_rhs(t + hh, yt, rate, force, p, rig, xd, k6)
        for i in range(n):
            yn[i] = y[i] + hh * (_B1 * k1[i] + _B3 * k3[i] + _B4 * k4[i] + _B5 * k5[i]
                                 + _B6 * k6[i])
        T, F = _rig_rhs(t + hh, yn, rate, force, p, rig, xd, k7)
        err = 0.0
        for i in range(n):
            e = hh * (_E1 * k1[i] + _E3 * k3[i] + _E4 * k4[i] + _E5 * k5[i]
                      + _E6 * k6[i] + _E7 * k7[i])
            r = abs(e) / (rtol * max(abs(y[i]), abs(yn[i]), yscale[i]))
            if r > err:
                err = r
        if not (err == err):       # NaN in the trial step: shrink hard
            err = 1e10
        if err <= 1.0:
            t = t_next if last else t + hh
            for i in range(n):
                y[i] = yn[i]
                k1[i] = k7[i]
            steps += 1
            fac = 5.0 if err == 0.0 else min(5.0, 0.9 * err ** -0.2)
            # a step shortened to land on t_next does not limit the next one
            h = min(h_max, max(h, hh * fac)) if last else min(h_max, hh * fac)
        else:
            h = hh * max(0.1, 0.9 * err ** -0.2)
            if h < 1e-14 * max(abs(t), 1.0):
                return t, h, -steps - 1, T, F
    return t, h, steps, T, F


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _rig_dopri(rate, force, p, y0, yscale, rig, t0, t_end, t_grid0, dt_out, rtol, h_max,
               t_rec0, n_rec, n_x_rec, obs):
    """Adaptive Dormand-Prince 5(4) for the rig with a smooth tensioner: free steps up to
    t_grid0, then the solution is sampled on the grid t_grid0 + k·dt_out (steps land on
    it), where T is observed and recorded. Returns (records, rows, final state, time
    reached, steps; steps < 0 if the step size collapsed)."""
    n = y0.size
    nx = n - 4
    y = y0.copy()
    yt = np.empty(n)
    yn = np.empty(n)
    k1 = np.empty(n); k2 = np.empty(n); k3 = np.empty(n); k4 = np.empty(n)
    k5 = np.empty(n); k6 = np.empty(n); k7 = np.empty(n)
    xd = np.empty(nx)
    rec = np.empty((n_rec, 7 + n_x_rec))
    j = 0
    t = t0
    T, F = _rig_rhs(t, y, rate, force, p, rig, xd, k1)
    h = min(h_max, 1e-5)
    steps = 0
    if t_grid0 > t0:
        t, h, st, T, F = _dopri_to(t, t_grid0, h, h_max, y, yt, yn, k1, k2, k3, k4, k5, k6,
                                   k7, xd, yscale, rtol, rate, force, p, rig)
        if st < 0:
            return rec, j, y, t, st - steps
        steps += st
    if t >= t_rec0 and j < n_rec:
        _record(rec, j, t, y, T, F, n_x_rec)
        j += 1
    if _observe(obs, t, T):
        return rec, j, y, t, steps
    n_out = int(math.floor((t_end - t) / dt_out + 0.5))
    tg = t
    hm = min(h_max, dt_out)
    for kout in range(1, n_out + 1):
        t_next = tg + kout * dt_out
        if kout == n_out:
            t_next = t_end
        t, h, st, T, F = _dopri_to(t, t_next, h, hm, y, yt, yn, k1, k2, k3, k4, k5, k6,
                                   k7, xd, yscale, rtol, rate, force, p, rig)
        if st < 0:
            return rec, j, y, t, st - steps
        steps += st
        if t >= t_rec0 and j < n_rec:
            _record(rec, j, t, y, T, F, n_x_rec)
            j += 1
        if _observe(obs, t, T):
            break
    return rec, j, y, t, steps


# -- Python API ----------------------------------------------------------------------------
@dataclass
class BeltResult:
    """Result of :func:`simulate_belt`: sampled signals and the initialisation used.

    t [s], u1, u2 [m], v1, v2 [m/s], T (belt tension) and F (tensioner force) [N],
    state (n, n_states) of the tensioner; T0 [N] and F_t0 [N] of eq. (51), preload [N]
    (constant added to the element's force to reach F(t0), see :func:`static_init`);
    T_max/T_min over the observation window, t_stop [s] when steady-state detection
    stopped the run early (else NaN).
    """

    t: np.ndarray
    u1: np.ndarray
    v1: np.ndarray
    u2: np.ndarray
    v2: np.ndarray
    T: np.ndarray
    F: np.ndarray
    state: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def T_amplitude(self) -> float:
        """max(T) − min(T) [N] over the observation window."""
        return self.info["T_max"] - self.info["T_min"]

    def signals(self) -> dict:
        out = {"t": self.t, "u1": self.u1, "v1": self.v1, "u2": self.u2, "v2": self.v2,
               "T": self.T, "F": self.F}
        names = self.info.get("state_names", ())
        for i in range(self.state.shape[1]):
            out[names[i] if i < len(names) else f"x{i}"] = self.state[:, i]
        return out


def forcing(t, f0: float = FORCING["f0"], f1: float = FORCING["f1"],
            Omega0: float = FORCING["Omega0"], phi: float = FORCING["phi"]):
    """Shaker force f(t) = f0 + f1·cos(Ω0·t + φ) [N], Bastien et al. (2007), eq. (52)."""
    return f0 + f1 * np.cos(Omega0 * np.asarray(t, dtype=float) + phi)


def static_init(element: ForceElement, *, t0: float, m1: float, m2: float, g: float,
                f_t0: float):
    """Static initialisation of Bastien et al. (2007), eq. (51), with u = u̇ = 0 at t0.

    Returns (x0, preload, F_t0, T0): F(t0) = f(t0) + (m1 + m2)·g, T0 = f(t0) + m1·g.
    If the element's single state IS its force (modified Dahl: F(t0) = 𝓕_0, eq. (42)) that
    state is set to F(t0); otherwise the element keeps its initial state and a constant
    preload F(t0) − F_el(x0, 0, 0) is added to its force (for Masing this is exactly the
    offset 𝓕_0 of eq. (43c) chosen so that eq. (51a) holds).
    """
    F_t0 = f_t0 + (m1 + m2) * g
    T0 = f_t0 + m1 * g
    x0 = element.x0.copy()
    if element.n_states == 1:
        probe = np.array([F_t0])
        if abs(element.force_of(probe, 0.0, 0.0) - F_t0) <= 1e-12 * abs(F_t0) and \
                abs(element.force_of(probe + 1.0, 0.0, 0.0) - (F_t0 + 1.0)) <= 1e-9 * abs(F_t0):
            return probe, 0.0, F_t0, T0
    pre = F_t0 - element.force_of(x0, 0.0, 0.0)
    return x0, pre, F_t0, T0


def _rig_vector(m1, m2, K, C, g, T0, f0, f1, Omega0, phi, pre):
    return np.array([m1, m2, K, C, g, T0, f0, f1, Omega0, phi, pre], dtype=np.float64)


def _y_scale(el) -> np.ndarray:
    # natural sizes for error control: 1 mm, 1 cm/s for the masses, the element's x_scale
    xs = np.broadcast_to(np.asarray(el.x_scale, dtype=float),
                         (el.n_states,))
    return np.ascontiguousarray(np.concatenate([[1e-3, 1e-2, 1e-3, 1e-2], xs]))


def _check_element(element) -> None:
    if not isinstance(element, ForceElement):
        raise ValueError(f"tensioner must be a hystmech force element "
                         f"(got {type(element).__name__})")
    if element.rate is None and (element.kind != "operator" or element.advance is None):
        raise ValueError(f"tensioner {element.name} has neither a state rate nor, as an "
                         f"operator, its own advance")


def _obs_array(t_win0, detect, Omega, n_periods, tol, n_confirm, t_detect0):
    obs = np.zeros(_NOBS)
    obs[0], obs[1], obs[2], obs[3] = -1e300, 1e300, -1e300, 1e300
    blk = n_periods * 2.0 * math.pi / Omega
    obs[4] = t_detect0 + blk
    obs[16] = t_detect0
    obs[9] = blk
    obs[10] = tol
    obs[11] = n_confirm
    obs[12] = 1.0 if detect else 0.0
    obs[13] = math.nan
    obs[15] = t_win0
    return obs


def simulate_belt(tensioner: ForceElement, *, t_end: float = 3.3, t0: float = T_START,
                  method: str = "projection", h: float = H_PAPER, rtol: float = 1e-8,
                  h_max: float = 1e-3, m1: float = RIG["m1"], m2: float = RIG["m2"],
                  K: float = RIG["K"], C: float = RIG["C"], g: float = RIG["g"],
                  f0: float = FORCING["f0"], f1: float = FORCING["f1"],
                  Omega0: float = FORCING["Omega0"], phi: float = FORCING["phi"],
                  record_from: float | None = None, dt_out: float | None = None,
                  record: bool = True, window: float | None = None,
                  steady_state: bool = False, ss_periods: int = 3, ss_tol: float = 2e-4,
                  ss_confirm: int = 3, ss_from: float | None = None) -> BeltResult:
    """Simulate the belt–tensioner–mass rig, Bastien et al. (2007), eqs. (38)-(58).

    tensioner: any smooth or inclusion force element seeing (u2, u̇2). Times in s, masses
    kg, K N/m, C N s/m, g m/s², f0 and f1 N, Omega0 rad/s, phi rad. Initial state by
    eq. (51) (see :func:`static_init`).

    method: "projection" (eq. (A.9), step h), "rk45" (adaptive, rtol, steps ≤ h_max),
    "bdf" (scipy). Signals are sampled every dt_out (default h for projection, 1e-4 s
    otherwise) from record_from (default t0) on; record=False keeps only the window stats.
    window: T_max/T_min are taken over t >= window (default: record_from).
    steady_state: stop once ss_confirm consecutive blocks of ss_periods forcing periods
    (counted from ss_from, default the window start) have extremes of T equal within
    ss_tol·amplitude; info["ss_amplitude"] is then the last block's max(T) − min(T).
    """
    _check_element(tensioner)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (got {method!r})")
    if tensioner.kind in ("inclusion", "operator") and method != "projection":
        raise ValueError(f"method must be 'projection' for the {tensioner.kind} "
                         f"{tensioner.name} (got {method!r})")
    m1 = check_positive("m1", m1)
    m2 = check_positive("m2", m2)
    K = check_nonnegative("K", K)
    C = check_nonnegative("C", C)
    g = check_finite("g", g)
    f0 = check_finite("f0", f0)
    f1 = check_finite("f1", f1)
    Omega0 = check_positive("Omega0", Omega0)
    phi = check_finite("phi", phi)
    t0 = check_finite("t0", t0)
    t_end = check_finite("t_end", t_end)
    if t_end <= t0:
        raise ValueError(f"t_end must be in ({t0:g}, inf) (got {t_end!r})")
    h = check_positive("h", h)
    if not 0.0 < rtol < 1.0:
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    h_max = check_positive("h_max", h_max)
    rec0 = t0 if record_from is None else check_finite("record_from", record_from)
    win0 = rec0 if window is None else check_finite("window", window)
    if not 0.0 < ss_tol < 1.0:
        raise ValueError(f"ss_tol must be in (0, 1) (got {ss_tol!r})")
    if int(ss_periods) < 1 or int(ss_confirm) < 1:
        raise ValueError("ss_periods and ss_confirm must be >= 1")

    f_t0 = f0 + f1 * math.cos(Omega0 * t0 + phi)
    x0, pre, F_t0, T0 = static_init(tensioner, t0=t0, m1=m1, m2=m2, g=g, f_t0=f_t0)
    rig = _rig_vector(m1, m2, K, C, g, T0, f0, f1, Omega0, phi, pre)
    nx = tensioner.n_states
    n_x_rec = min(nx, tensioner.n_report_states)
    y0 = np.concatenate([np.zeros(4), x0])
    ss0 = win0 if ss_from is None else check_finite("ss_from", ss_from)
    obs = _obs_array(win0, steady_state, Omega0, int(ss_periods), float(ss_tol),
                     int(ss_confirm), ss0)
    p = tensioner.p
    is_op = tensioner.kind == "operator"
    compiled = is_compiled(tensioner.advance if is_op else tensioner.rate) and \
        is_compiled(tensioner.force)
    info = dict(method=method, T0=T0, F_t0=F_t0, preload=pre, f_t0=f_t0, t0=t0,
                element=repr(tensioner), state_names=tuple(tensioner.state_names))

    if method == "projection":
        n_steps = int(round((t_end - t0) / h))
        if dt_out is None:
            stride = 1
        else:
            stride = max(1, int(round(check_positive("dt_out", dt_out) / h)))
        skip = max(0, int((rec0 - t0) / h))
        n_rec = max(1, (n_steps - min(skip, n_steps)) // stride + 2) if record else 1
        if tensioner.kind == "inclusion":
            lo = np.ascontiguousarray(tensioner.box_lo, dtype=np.float64)
            hi = np.ascontiguousarray(tensioner.box_hi, dtype=np.float64)
        else:
            lo = np.full(nx, -np.inf)
            hi = np.full(nx, np.inf)
        fn = _rig_projection if compiled else _rig_projection.py_func
        rec, j, y, t_last = fn(_no_rate if is_op else tensioner.rate, tensioner.force, p, lo,
                               hi, y0, rig, t0, h, n_steps, stride,
                               rec0 if record else math.inf, n_rec, n_x_rec, obs,
                               tensioner.advance if is_op else _no_advance, is_op, rtol)
        info.update(h=h, n_steps=int(round((t_last - t0) / h)))
    elif method == "rk45":
        dto = 1e-4 if dt_out is None else check_positive("dt_out", dt_out)
        tg0 = min(max(t0, min(rec0 if record else math.inf, win0)), t_end)
        n_out = int(math.floor((t_end - tg0) / dto + 0.5))
        n_rec = max(1, n_out + 2) if record else 1
        yscale = _y_scale(tensioner)
        fn = _rig_dopri if compiled else _uncompiled(_rig_dopri)
        rec, j, y, t_last, steps = fn(tensioner.rate, tensioner.force, p, y0, yscale, rig, t0,
                                      t_end, tg0, dto, rtol, h_max,
                                      rec0 if record else math.inf, n_rec, n_x_rec, obs)
        if steps < 0:
            raise FloatingPointError(f"rk45: step size collapsed (non-finite or too stiff) at "
                                     f"t = {t_last:.6g} s; try method='bdf'")
        info.update(rtol=rtol, n_steps=int(steps), dt_out=dto)
    else:
        rec, j, y, t_last = _run_bdf(tensioner, rig, y0, t0, t_end, rtol,
                                     1e-4 if dt_out is None else dt_out, rec0 if record else math.inf,
                                     n_x_rec, obs)
        info.update(rtol=rtol)
    rec = rec[:j]
    if record and j and not np.all(np.isfinite(rec)):
        k = int(np.flatnonzero(~np.all(np.isfinite(rec), axis=1))[0])
        raise FloatingPointError(f"belt rig: non-finite values at t = {rec[k, 0]:.6g} s "
                                 f"({tensioner.name}, method {method}); reduce h")
    if not np.all(np.isfinite(y)):
        raise FloatingPointError(f"belt rig: non-finite state by t = {t_last:.6g} s "
                                 f"({tensioner.name}, method {method}); reduce h")
    info.update(T_max=float(obs[0]), T_min=float(obs[1]), t_stop=float(obs[13]),
                ss_amplitude=float(obs[5]) if obs[14] > 0 else math.nan,
                t_reached=float(t_last), window_start=win0, final_state=y.copy())
    return BeltResult(t=rec[:, 0].copy(), u1=rec[:, 1].copy(), v1=rec[:, 2].copy(),
                      u2=rec[:, 3].copy(), v2=rec[:, 4].copy(), T=rec[:, 5].copy(),
                      F=rec[:, 6].copy(), state=rec[:, 7:].copy(), info=info)


def _uncompiled(fn):
    """The Python version of a rig loop with its kernel-calling helpers (_rig_rhs,
    _dopri_to) also in Python, for tensioners whose kernels numba cannot call."""
    import types

    g = dict(fn.py_func.__globals__)
    g["_rig_rhs"] = _rig_rhs.py_func
    g["_dopri_to"] = types.FunctionType(_dopri_to.py_func.__code__, g, "_dopri_to")
    return types.FunctionType(fn.py_func.__code__, g, fn.py_func.__name__)


def _run_bdf(el, rig, y0, t0, t_end, rtol, dt_out, rec0, n_x_rec, obs):
    """scipy BDF on the compiled right-hand side (reference, the paper's Gear method)."""
    from scipy.integrate import solve_ivp

    nx = el.n_states
    xd = np.empty(nx)
    rate, force, p = el.rate, el.force, el.p
    rhs = _rig_rhs if is_compiled(rate) and is_compiled(force) else _rig_rhs.py_func

    def fun(t, y):
        dy = np.empty_like(y)
        rhs(t, np.ascontiguousarray(y), rate, force, p, rig, xd, dy)
        return dy

    n_out = int(math.floor((t_end - t0) / dt_out + 0.5))
    t_eval = t0 + dt_out * np.arange(n_out + 1)
    t_eval[-1] = min(t_eval[-1], t_end)
    atol = rtol * _y_scale(el)
    sol = solve_ivp(fun, (t0, t_end), y0, method="BDF", t_eval=t_eval, rtol=rtol, atol=atol,
                    max_step=1e-3)
    if not sol.success:
        raise RuntimeError(f"BDF failed at t = {sol.t[-1] if sol.t.size else t0:.6g} s: "
                           f"{sol.message}")
    keep = sol.t >= rec0
    rec = np.empty((int(keep.sum()), 7 + n_x_rec))
    j = 0
    dy = np.empty(y0.size)
    for i in range(sol.t.size):
        yi = np.ascontiguousarray(sol.y[:, i])
        T, F = rhs(sol.t[i], yi, rate, force, p, rig, xd, dy)
        if keep[i]:
            _record(rec, j, sol.t[i], yi, T, F, n_x_rec)
            j += 1
        if _observe(obs, sol.t[i], T):
            break
    return rec, j, sol.y[:, -1].copy(), float(sol.t[-1])


def linear_tension_amplitude(Omega, *, k_t: float, c_t: float, m1: float = RIG["m1"],
                             m2: float = RIG["m2"], K: float = RIG["K"], C: float = RIG["C"],
                             f1: float = 1.0) -> np.ndarray:
    """Steady peak-to-peak amplitude max(T) − min(T) [N] of the rig with a LINEAR tensioner
    (spring k_t [N/m], damper c_t [N s/m]) under f1·cos(Ω·t): the 2-DOF frequency response
    of eqs. (38) solved in closed form. In the stuck regime the Masing tensioner is such a
    tensioner with k_t = k + k0, c_t = c (Bastien et al. (2007), eq. (21a))."""
    Om = np.atleast_1d(np.asarray(Omega, dtype=float))
    out = np.empty(Om.size)
    for i, w in enumerate(Om):
        s = 1j * w
        Kb = K + C * s
        Kt = k_t + c_t * s
        A = np.array([[m1 * s * s + Kb, -Kb], [-Kb, m2 * s * s + Kb + Kt]])
        U = np.linalg.solve(A, np.array([f1, 0.0], dtype=complex))
        out[i] = 2.0 * abs(Kb * (U[0] - U[1]))
    return out if np.ndim(Omega) else out[0]


def belt_assembly(tensioner: ForceElement, *, t0: float = T_START, m1: float = RIG["m1"],
                  m2: float = RIG["m2"], K: float = RIG["K"], C: float = RIG["C"],
                  g: float = RIG["g"], f0: float = FORCING["f0"], f1: float = FORCING["f1"],
                  Omega0: float = FORCING["Omega0"], phi: float = FORCING["phi"]):
    """The same rig as a generic :class:`hystmech.systems.assembly.Assembly` (DOFs "m1",
    "m2"; belt spring+damper with preload T0; tensioner "tensioner" between m2 and ground;
    shaker force on m1), statically initialised by Bastien et al. (2007), eq. (51).
    Returns (assembly, info) with info = {"T0", "F_t0", "preload"}."""
    from hystmech.systems.assembly import Assembly, Harmonic

    _check_element(tensioner)
    f_t0 = f0 + f1 * math.cos(Omega0 * t0 + phi)
    x0, pre, F_t0, T0 = static_init(tensioner, t0=t0, m1=m1, m2=m2, g=g, f_t0=f_t0)
    a = Assembly(gravity=g)
    a.add_dof("m1", mass=m1)
    a.add_dof("m2", mass=m2)
    a.add_spring("m1", "m2", k=K, preload=T0, name="belt")
    a.add_damper("m1", "m2", c=C, name="belt_damping")
    a.add_element("tensioner", tensioner, "m2", "ground", x0=x0)
    a.add_force("m1", Harmonic(f0, f1, Omega0, phi), name="shaker")
    if pre != 0.0:
        # the tensioner's constant offset of eq. (51a) (F acts as −F on m2)
        a.add_force("m2", -pre, name="tensioner_preload")
    return a, dict(T0=T0, F_t0=F_t0, preload=pre)
