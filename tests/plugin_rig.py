"""(Helper module, no tests.) The forced 1-DOF mass–spring rig shared by the plugin
tests: each law of test_fmu_cases in parallel with a spring, and its tight reference in
hystmech's own Assembly; for the relay laws (force jumps) an independent event-driven
reference."""
import numpy as np
from scipy.integrate import solve_ivp

from hystmech.systems import Assembly, Harmonic, simulate

from test_fmu_cases import available, make_input

CASES = available()
FN, FF = 1.0, 0.4          # natural / forcing frequency [Hz]
# the laws every host checks against its Assembly reference in the default suite: a
# smooth Stribeck law, the power-law map, an operator, a memory stack, a relay and a sum
# (each Assembly reference compiles for ~10 s on a fresh machine); the other laws run
# in .ci/run's slow step
DEFAULT_LAWS = {"LuGre", "BoucWen", "MaxwellSlip", "Preisach", "Relay", "SumDahlSpring"}


def law_params(names):
    """pytest parameters over law names: DEFAULT_LAWS as they are, the others slow."""
    import pytest

    return [n if n in DEFAULT_LAWS else pytest.param(n, marks=pytest.mark.slow)
            for n in names]


def rig(el, A):
    """Mass, spring, force amplitude, forcing pulsation for a 1-DOF rig in which the
    element moves by about A: spring as stiff as the element's secant at A, natural
    frequency FN, forcing 1.5× the element's force scale at FF (starting from rest with
    zero force, so semi-implicit Euler starts without an O(h) velocity offset)."""
    import hystmech

    t, u = make_input(A, 1.0, n=401)
    Fs = max(float(np.max(np.abs(hystmech.drive(el, t, u).force))), 1e-9)
    k = Fs / A
    m = (k + max(el.initial_tangent(), 0.0)) / (2 * np.pi * FN) ** 2
    return m, k, 1.5 * Fs, 2 * np.pi * FF


_REF = {}


def one_dof(el, m, k, F0, w, *, x0=0.0, v0=0.0):
    """The forced 1-DOF rig in hystmech's Assembly: a mass m [kg] (dof "m", started at
    x0 [m] with v0 [m/s]) on a spring k [N/m] to ground in parallel with the element
    ``el`` ("e"), forced by F0·sin(w·t) [N] (w [rad/s])."""
    a = Assembly()
    a.add_dof("m", mass=m, x0=x0, v0=v0)
    a.add_spring("m", "ground", k=k)
    a.add_element("e", el, "m", "ground")
    a.add_force("m", Harmonic(amplitude=F0, omega=w, phase=-np.pi / 2))
    return a


def _case_assembly(name):
    """(element, (m, k, F0, w), Assembly) of the forced 1-DOF rig with CASES[name]."""
    ctor, A, _ = CASES[name]
    el = ctor()
    m, k, F0, w = rig(el, A)
    return el, (m, k, F0, w), one_dof(el, m, k, F0, w)


def reference(name, T, n_out=50):
    """(element, (m, k, F0, w), output times, x(t)) of the rig in hystmech's Assembly:
    compiled RK45 at rtol 1e-11 for smooth laws, the event-driven solver for
    inclusions, the projection scheme at h = 1e-6 for operators."""
    if (name, T, n_out) in _REF:
        return _REF[name, T, n_out]
    el, (m, k, F0, w), a = _case_assembly(name)
    te = np.linspace(T / n_out, T, n_out)
    if el.kind == "smooth":
        r = simulate(a, (0, T), method="RK45", t_eval=te, rtol=1e-11, atol=1e-15, energy=False)
    elif el.kind == "inclusion":
        r = simulate(a, (0, T), method="event", t_eval=te, energy=False)
    else:
        r = simulate(a, (0, T), method="projection", t_eval=te, h=1e-6, energy=False)
    _REF[name, T, n_out] = (el, (m, k, F0, w), te, r.x("m"))
    return _REF[name, T, n_out]


def relays_reference(name, T, n_out=50):
    """(element, (m, k, F0, w), output times, x(t)) of the rig for a Relay or a discrete
    Preisach operator M = offset + k0·u + Σ w_i·R_i[u] (Manfredo et al. (2023), eqs.
    (4)–(7)), independent of hystmech: between switches the system is linear and smooth
    (plain-Python RHS, DOP853 at rtol 1e-12), and each relay switches exactly where x
    crosses its threshold (a solve_ivp event: up at a2_i, down at a1_i)."""
    key = ("relays", name, T, n_out)
    if key in _REF:
        return _REF[key]
    ctor, A, _ = CASES[name]
    el = ctor()
    m, k, F0, w = rig(el, A)
    prm = el.params
    a1 = np.atleast_1d(np.asarray(prm["a1"], float))
    a2 = np.atleast_1d(np.asarray(prm["a2"], float))
    wts = np.atleast_1d(np.asarray(prm.get("weights", 1.0), float))
    k0, off = float(prm.get("k0", 0.0)), float(prm.get("offset", 0.0))
    R = np.full(a1.size, float(prm["initial"]))
    R[0.0 >= a2] = 1.0            # the initial input u = 0 already switches these
    R[0.0 <= a1] = -1.0

    def rhs(t, y):
        return [y[1], (F0 * np.sin(w * t) - (k + k0) * y[0] - off - wts @ R) / m]

    def crossing(i):
        def f(t, y):
            return y[0] - (a2[i] if R[i] < 0 else a1[i])
        f.terminal = True
        f.direction = 1.0 if R[i] < 0 else -1.0
        return f

    te = np.linspace(T / n_out, T, n_out)
    t0, y0, x = 0.0, [0.0, 0.0], np.empty(n_out)
    while t0 < T:
        sol = solve_ivp(rhs, (t0, T), y0, method="DOP853", rtol=1e-12, atol=1e-16,
                        events=[crossing(i) for i in range(R.size)], dense_output=True)
        sel = (te >= t0) & (te <= sol.t[-1])
        x[sel] = sol.sol(te[sel])[0]
        for i, tev in enumerate(sol.t_events):
            if tev.size:
                R[i] = -R[i]
        t0, y0 = sol.t[-1], sol.y[:, -1]
    _REF[key] = (el, (m, k, F0, w), te, x)
    return _REF[key]


def relay_switches(el, x):
    """How many times the relays of a Relay or discrete Preisach element ``el`` switch
    along the sampled input path x (up at a2_i, down at a1_i, from its initial state
    set by x[0] as in relays_reference): a check that a horizon exercises the jumps."""
    prm = el.params
    a1 = np.atleast_1d(np.asarray(prm["a1"], float))
    a2 = np.atleast_1d(np.asarray(prm["a2"], float))
    x = np.asarray(x, float)
    n = 0
    for lo, hi in zip(a1, a2):
        mark = np.where(x >= hi, 1, np.where(x <= lo, -1, 0))
        start = mark[0] if mark[0] != 0 else int(np.sign(float(prm["initial"])))
        mark = np.concatenate([[start], mark[mark != 0]])
        n += int(np.count_nonzero(np.diff(mark)))
    return n


def extrapolated_reference(name, T, n_out=50):
    """(element, (m, k, F0, w), output times, x(t), halving ratio) of the rig for an
    operator: hystmech's first-order projection scheme at h = 2e-6 and 1e-6, Richardson-
    extrapolated (2·x_h/2 − x_h, second order). The ratio of the successive differences
    (h = 4e-6 → 2e-6 → 1e-6) should be ≈ 2 for the extrapolation to hold."""
    key = ("extrapolated", name, T, n_out)
    if key in _REF:
        return _REF[key]
    el, (m, k, F0, w), a = _case_assembly(name)
    te = np.linspace(T / n_out, T, n_out)
    x4, x2, x1 = (simulate(a, (0, T), method="projection", t_eval=te, h=h,
                           energy=False).x("m") for h in (4e-6, 2e-6, 1e-6))
    ratio = float(np.max(np.abs(x4 - x2)) / np.max(np.abs(x2 - x1)))
    _REF[key] = (el, (m, k, F0, w), te, 2 * x1 - x2, ratio)
    return _REF[key]
