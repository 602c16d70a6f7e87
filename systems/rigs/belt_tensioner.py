"""The belt–tensioner–mass rig of Bastien, Michon, Manin & Dufour (2007), §4: physics.

Two masses hang on a belt (spring-damper K, C) wrapped over the idler pulley of a
tensioner; a shaker pushes the lower mass down with f(t) = f0 + f1·cos(Ω0·t + φ):

    T      = K(u1 − u2) + C(u̇1 − u̇2) + T0                      eq. (38a)
    m2·ü2  = T − F + m2·g                                        eq. (38b)
    m1·ü1  = −T + f(t) + m1·g                                    eq. (38c)
    F      = tensioner force, any hystmech force element driven by (u2, u̇2)   eq. (38e)

u1, u2 [m] positive downward, F [N] positive upward. Static initialisation, eq. (51):
u = u̇ = 0 at t0 and F(t0) = f(t0) + (m1 + m2)·g, T0 = f(t0) + m1·g.

The rig is an :class:`~hystmech.systems.Assembly` (:func:`belt_assembly`) run by the
generic :func:`~hystmech.systems.simulate`; :func:`simulate_belt` is a thin wrapper
returning the rig's named signals, with the belt tension T observed inside the loop
(window extrema, steady-state stop). The scenario runner and the plots are in
``hystmech.systems.belt_tensioner``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...components.base import ForceElement, check_finite, check_nonnegative, check_positive
from ..assembly import Assembly, Harmonic
from ..observers import Observe
from ..methods import canonical as canonical_method
from ..simulate import simulate

RIG = dict(m1=73.84, m2=0.15, K=560000.0, C=160.0, g=9.81)          # eq. (39)
FORCING = dict(f0=3.5, f1=122.1, Omega0=73.15, phi=0.40)               # eq. (53)
T_START = 1.6e-3                                                        # eq. (40b)
H_PAPER = 1e-5                                                          # eq. (57)

# identified tensioner values, Bastien et al. (2007), eqs. (33)-(36)
MDM_PARAMS = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)
MASING_PARAMS = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2)
C_IDENT = 1.93e4           # c [N s/m], eq. (36c), identified at
OMEGA_IDENT = 9.4          # Ω [rad/s], eq. (32)

METHODS = ("projection", "RK45", "BDF")      # of simulate(); any case (methods.canonical)


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
        from ...components.modified_dahl import ModifiedDahl

        return ModifiedDahl(**MDM_PARAMS)
    if model in ("masing", "mm"):
        from ...components.masing import Masing

        return Masing(**MASING_PARAMS, c=masing_damping(Omega0), w0=0.0)
    raise ValueError(f"model must be one of 'mdm', 'masing' (got {model!r})")


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


def _y_scale(el) -> np.ndarray:
    # natural sizes for error control, in the assembly's state order (u1, u2, v1, v2, x):
    # 1 mm, 1 cm/s for the masses, the element's x_scale
    xs = np.broadcast_to(np.asarray(el.x_scale, dtype=float), (el.n_states,))
    return np.ascontiguousarray(np.concatenate([[1e-3, 1e-3, 1e-2, 1e-2], xs]))


def _check_element(element) -> None:
    if not isinstance(element, ForceElement):
        raise ValueError(f"tensioner must be a hystmech force element "
                         f"(got {type(element).__name__})")
    if element.rate is None and (element.kind != "operator" or element.advance is None):
        raise ValueError(f"tensioner {element.name} has neither a state rate nor, as an "
                         f"operator, its own advance")


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
    Returns (assembly, info) with info = {"T0", "F_t0", "preload", "f_t0"}.

    The tensioner's constant preload of eq. (51a), if any, is the force
    "tensioner_preload" on m2."""
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
    return a, dict(T0=T0, F_t0=F_t0, preload=pre, f_t0=f_t0)


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

    method (any case): "projection" (eq. (A.9), step h), "RK45" (adaptive, rtol, steps
    ≤ h_max), "BDF" (scipy). Signals are sampled every dt_out (default h for projection, 1e-4 s
    otherwise) from record_from (default t0) on; record=False keeps only the window stats.
    window: T_max/T_min are taken over t >= window (default: record_from).
    steady_state: stop once ss_confirm consecutive blocks of ss_periods forcing periods
    (counted from ss_from, default the window start) have extremes of T equal within
    ss_tol·amplitude; info["ss_amplitude"] is then the last block's max(T) − min(T).
    With RK45 the stop samples T every dt_out from ss_from on, with free steps (≤ h_max)
    throughout; without it, steps are at most dt_out on the recorded/observed grid.
    """
    _check_element(tensioner)
    method = canonical_method(method, METHODS)
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

    ss0 = win0 if ss_from is None else check_finite("ss_from", ss_from)
    asm, init = belt_assembly(tensioner, t0=t0, m1=m1, m2=m2, K=K, C=C, g=g, f0=f0, f1=f1,
                              Omega0=Omega0, phi=phi)
    obs = Observe(("belt", "belt_damping"), window=win0, steady_state=steady_state,
                  block=int(ss_periods) * 2.0 * math.pi / Omega0, tol=float(ss_tol),
                  confirm=int(ss_confirm), start=ss0)
    nx = tensioner.n_states
    n_x_rec = min(nx, tensioner.n_report_states)
    info = dict(method=method, T0=init["T0"], F_t0=init["F_t0"], preload=init["preload"],
                f_t0=init["f_t0"], t0=t0, element=repr(tensioner),
                state_names=tuple(tensioner.state_names))
    if method == "projection":
        stride = 1 if dt_out is None else max(1, int(round(check_positive("dt_out", dt_out) / h)))
        r = simulate(asm, (t0, t_end), method="projection", h=h, rtol=rtol, energy=False,
                     observe=obs, stride=stride, record_from=rec0 if record else math.inf)
        info.update(h=h, n_steps=int(r.stats["nsteps"]))
    else:
        # output grid of dt_out from the first time anything is recorded or observed
        dto = 1e-4 if dt_out is None else check_positive("dt_out", dt_out)
        # (with the steady-state stop the grid starts where the stop starts watching: the
        # run then usually ends long before the window)
        tg0 = t0 if method == "BDF" else \
            min(max(t0, min(rec0 if record else math.inf, win0,
                            ss0 if steady_state else math.inf)), t_end)
        n_out = int(math.floor((t_end - tg0) / dto + 0.5))
        grid = tg0 + dto * np.arange(n_out + 1)
        grid[-1] = t_end
        grid = grid[grid <= t_end]
        atol = rtol * _y_scale(tensioner)
        if method == "RK45":
            # free steps (<= h_max) up to the grid, then steps of at most dt_out on it;
            # with the steady-state stop free steps throughout (the T samples on the
            # grid come from the 4th-order dense output either way)
            steps, x_g = 0, None
            if tg0 > t0:
                # (observing nothing, but the same signal: the same compiled structure)
                r0 = simulate(asm, (t0, tg0), method="RK45", rtol=rtol, atol=atol,
                              max_step=h_max, energy=False, record_from=math.inf,
                              observe=Observe(("belt", "belt_damping"), window=math.inf))
                steps, x_g = r0.stats["nsteps"], r0.y_last
            r = simulate(asm, (tg0, t_end), x_g, method="RK45", t_eval=grid, rtol=rtol,
                         atol=atol, max_step=h_max if steady_state else min(h_max, dto),
                         energy=False, observe=obs,
                         record_from=rec0 if record else math.inf)
            info.update(rtol=rtol, n_steps=int(steps + r.stats["nsteps"]), dt_out=dto)
        else:
            r = simulate(asm, (t0, t_end), method="BDF", t_eval=grid, rtol=rtol, atol=atol,
                         max_step=1e-3, energy=False, observe=obs)
            info.update(rtol=rtol)
    keep = r.t >= rec0 - 1e-12 if record else np.zeros(r.t.size, dtype=bool)
    if keep.any():
        sig = {k: v[keep] for k, v in (("t", r.t), ("u1", r.x("m1")), ("v1", r.v("m1")),
                                       ("u2", r.x("m2")), ("v2", r.v("m2")),
                                       ("T", r.force("belt") + r.force("belt_damping")),
                                       ("F", r.force("tensioner") + init["preload"]))}
        state = r.state("tensioner")[keep, :n_x_rec]
    else:
        sig = {k: np.zeros(0) for k in ("t", "u1", "v1", "u2", "v2", "T", "F")}
        state = np.zeros((0, n_x_rec))
    seen = r.observed
    y = r.y_last
    final = np.concatenate([[y[0], y[2], y[1], y[3]], y[4:]])   # (u1, v1, u2, v2, x)
    info.update(T_max=seen["max"], T_min=seen["min"], t_stop=seen["t_stop"],
                ss_amplitude=seen["ss_amplitude"], t_reached=float(r.t_reached),
                window_start=win0, final_state=final)
    return BeltResult(state=state, info=info, **sig)
