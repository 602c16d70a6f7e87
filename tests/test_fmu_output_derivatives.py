"""Co-simulation output derivatives (issue 20 item 5): maxOutputDerivativeOrder = 1 and
fmi2GetRealOutputDerivatives, read with fmpy after each doStep of a smooth two-harmonic
input u(t) (v = u̇, no input derivatives given), against dF/dt of an independent
reference: the law's rate integrated by scipy DOP853 at rtol 1e-12 and F differentiated
centrally (smooth laws), or hystmech.drive differentiated centrally
(inclusions/operators, on a 2.5e-6 s grid). The FMU's derivative is that of its
predicted input path: second order in the step where F depends on the state and u only,
first order where F depends on v (the path's v is linear over the step, so its v̇ is the
step's mean)."""
import zipfile

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import hystmech
from hystmech.fmu import export_fmu

from fmu_probe import open_fmi2
from test_fmu_cases import available

CASES = available()
# law -> least convergence ratio of the error when h halves (4: second order, 2: first)
ORDER = {"Dahl": 3.5, "ModifiedDahl": 3.5, "BoucWen": 3.5, "SpringDamper": 1.8,
         "LuGre": 1.8, "Masing": 3.0, "PreisachContinuous": 3.5}


def _input(amp, freq):
    w = 2 * np.pi * freq
    return (lambda t: amp * (np.sin(w * t) + 0.3 * np.sin(3.7 * w * t + 0.4)),
            lambda t: amp * w * (np.cos(w * t) + 1.11 * np.cos(3.7 * w * t + 0.4)))


def _fmu_dF(path, amp, freq, h, T):
    u, ud = _input(amp, freq)
    _, f = open_fmi2(path, "od")
    out = []
    for k in range(int(round(T / h))):
        t = k * h
        f.setReal([1, 2], [u(t), ud(t)])
        f.doStep(t, h)
        out.append((t + h, f.getRealOutputDerivatives([3], [1])[0]))
    f.terminate()
    f.freeInstance()
    return np.array(out)


def _reference(el, amp, freq, T):
    u, ud = _input(amp, freq)
    if el.kind == "smooth":
        def rhs(t, x):
            out = np.zeros(el.n_states)
            el.rate(x, u(t), ud(t), el.p, out)
            return out

        s = solve_ivp(rhs, (0.0, T + 1e-3), np.asarray(el.x0, float), method="DOP853",
                      rtol=1e-12, atol=1e-14, dense_output=True)

        def F(t):
            return el.force(s.sol(t) if el.n_states else np.zeros(0), u(t), ud(t), el.p)

        d = 1e-6
        return lambda t: (F(t + d) - F(t - d)) / (2 * d)
    dt = 2.5e-6  # divides the communication steps: every output time is a grid point
    tf = np.arange(int(round((T + 1e-2) / dt)) + 1) * dt
    Ff = hystmech.drive(el, tf, u(tf)).force
    # drive's v is the chord slope; the law's c·v term is differentiated exactly
    c = el.p[4] if type(el).__name__ == "Masing" else 0.0

    def dF(t):
        i = int(round(t / dt))
        fd = (Ff[i + 1] - Ff[i - 1]) / (tf[i + 1] - tf[i - 1])
        return fd - c * (ud(tf[i + 1]) - ud(tf[i - 1])) / (tf[i + 1] - tf[i - 1]) + c * (
            (ud(t + 1e-6) - ud(t - 1e-6)) / 2e-6)
    return dF


FAST = ("Dahl", "LuGre", "Masing")  # one of each kind in the default suite; the rest slow


@pytest.mark.parametrize("name", [n if n in FAST else pytest.param(n, marks=pytest.mark.slow)
                                  for n in ORDER if n in CASES])
def test_output_derivative_converges_to_dF_dt(tmp_path, name):
    make, amp, freq = CASES[name]
    el = make()
    path = export_fmu(el, tmp_path / f"{name}.fmu", platforms="native")
    md = zipfile.ZipFile(path).read("modelDescription.xml").decode()
    assert 'maxOutputDerivativeOrder="1"' in md
    T = (0.2 if el.kind == "smooth" else 0.5) / freq
    ref = _reference(el, amp, freq, T)
    errs = []
    for h in (2e-3 / freq, 1e-3 / freq):
        a = _fmu_dF(path, amp, freq, h, T)
        r = np.array([ref(t) for t in a[:, 0]])
        errs.append(np.abs(a[2:, 1] - r[2:]).max() / np.abs(r).max())
    assert errs[1] <= 0.02 and errs[0] / errs[1] >= ORDER[name], errs


def test_output_derivative_bad_calls(tmp_path):
    """Order 2, a variable other than F, or a call after new inputs: fmi2Error; a law
    without derivatives (a mixed sum) declares order 0 and refuses."""
    from fmpy.fmi1 import FMICallException

    make, amp, _ = CASES["Dahl"]
    path = export_fmu(make(), tmp_path / "D.fmu", platforms="native")
    _, f = open_fmi2(path, "b")
    with pytest.raises(FMICallException):  # before any step: no predicted path yet
        f.getRealOutputDerivatives([3], [1])
    f.setReal([1, 2], [0.0, 0.05])
    f.doStep(0.0, 1e-3)
    for vr, order in (([3], [2]), ([1], [1])):
        with pytest.raises(FMICallException):
            f.getRealOutputDerivatives(vr, order)
    f.setReal([1, 2], [5e-5, 0.05])
    with pytest.raises(FMICallException):
        f.getRealOutputDerivatives([3], [1])
    f.freeInstance()
    mixed = export_fmu(CASES["Masing"][0]() + make(), tmp_path / "MD.fmu", platforms="native")
    assert 'maxOutputDerivativeOrder="0"' in zipfile.ZipFile(mixed).read(
        "modelDescription.xml").decode()
