"""(Helper module, no tests.) The forced 1-DOF mass–spring rig shared by the plugin
tests: each law of test_fmu_cases in parallel with a spring, and its tight reference in
hystmech's own Assembly."""
import numpy as np

from hystmech.systems import Assembly, Harmonic, simulate

from test_fmu_cases import available, make_input

CASES = available()
FN, FF = 1.0, 0.4          # natural / forcing frequency [Hz]


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


def reference(name, T, n_out=50):
    """(element, (m, k, F0, w), output times, x(t)) of the rig in hystmech's Assembly:
    compiled RK45 at rtol 1e-11 for smooth laws, the event-driven solver for
    inclusions, the projection scheme at h = 1e-6 for operators."""
    if (name, T, n_out) in _REF:
        return _REF[name, T, n_out]
    ctor, A, _ = CASES[name]
    el = ctor()
    m, k, F0, w = rig(el, A)
    a = Assembly()
    a.add_dof("m", mass=m)
    a.add_spring("m", "ground", k=k)
    a.add_element("e", el, "m", "ground")
    a.add_force("m", Harmonic(amplitude=F0, omega=w, phase=-np.pi / 2))
    te = np.linspace(T / n_out, T, n_out)
    if el.kind == "smooth":
        r = simulate(a, (0, T), method="RK45", t_eval=te, rtol=1e-11, atol=1e-15, energy=False)
    elif el.kind == "inclusion":
        r = simulate(a, (0, T), method="event", t_eval=te, energy=False)
    else:
        r = simulate(a, (0, T), method="projection", t_eval=te, h=1e-6, energy=False)
    _REF[name, T, n_out] = (el, (m, k, F0, w), te, r.x("m"))
    return _REF[name, T, n_out]
