"""Protocol conformance of every law in the registry (components/__init__.py):
declared p layout, jac = finite differences of rate/force, advance = scipy's
integral of rate, C twin's p = Python's p, stored energy = work on a closed elastic
path, initial_tangent = a finite difference of the driven force."""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hystmech import drive
from hystmech.components import REGISTRY, get_element_class

MD = dict(Lambda=117355.0, mu=0.37, a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2)


def _mk(name, **kw):
    return lambda: get_element_class(name)(**kw)


# one representative per registered law: (constructor, displacement amplitude [m])
SAMPLES = {
    "Dahl": (_mk("Dahl", rho=200.0, Fc=2.0, w0=0.1), 0.02),
    "LuGre": (_mk("LuGre", sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                  sigma2=0.4, x0=1e-5), 0.002),
    "Duhem": (_mk("Duhem", A=60.0, hu=lambda u: 1.0 + 20.0 * u + math.sin(30.0 * u),
                  hl=lambda u: -1.0 + 20.0 * u, F0=0.2), 0.05),
    "ModifiedDahl": (_mk("ModifiedDahl", **MD, F0=600.0), 0.01),
    "ViscousDahl": (_mk("ViscousDahl", kx=1e3, kw=50.0, rho=500.0, w0=0.2), 0.01),
    "AsymmetricViscousDahl": (_mk("AsymmetricViscousDahl", kx1=1.6e5, kw1=5.3e4, kx2=1.3e5,
                                  kw2=6.3e4, rho=768.73), 0.01),
    "NaiveAsymmetricViscousDahl": (_mk("NaiveAsymmetricViscousDahl", kx1=1.6e5, kw1=5.3e4,
                                       kx2=1.3e5, kw2=6.3e4, rho=768.73), 0.01),
    "BoucWen": (_mk("BoucWen", A=1e4, beta=2.0, gamma=0.5, n=1.5, k_el=100.0, z0=5.0), 0.05),
    "Masing": (_mk("Masing", k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=0.0, w0=1e-4), 0.002),
    "MaxwellSlip": (_mk("MaxwellSlip", k=[1e4, 2e4, 3e4], delta=[1e-4, 2e-4, 0.0],
                        z0=[0.0, 1e-4, 0.0]), 5e-4),
    "Relay": (_mk("Relay", a1=-0.001, a2=0.002, initial=1), 0.003),
    "Preisach": (_mk("Preisach", a1=np.array([-0.004, -0.002, 0.0]),
                     a2=np.array([-0.001, 0.003, 0.002]), weights=np.array([3.0, 5.0, 2.0]),
                     initial=-1, k0=200.0, offset=0.5, max_depth=16), 0.004),
    "PrandtlIshlinskii": (_mk("PrandtlIshlinskii", r=np.array([0.001, 0.002]),
                              weights=np.array([100.0, 50.0]), u_bound=0.005, h=0.0005),
                          0.004),
    "LinearSpring": (_mk("LinearSpring", k=30.0, u0=1e-3), 0.02),
    "LinearDamper": (_mk("LinearDamper", c=5.0), 0.02),
    "SpringDamper": (_mk("SpringDamper", k=1e3, c=5.0, u0=1e-3), 0.01),
    "SumElement": (lambda: get_element_class("Dahl")(rho=200.0, Fc=2.0, w0=0.1)
                   + get_element_class("BoucWen")(A=1e4, beta=2.0, gamma=0.5, n=1.5)
                   + get_element_class("LinearSpring")(k=30.0), 0.02),
}
NAMES = sorted(SAMPLES)


def _trajectory(el, amp, n=401):
    t = np.linspace(0.0, 1.0, n)
    u = amp * (np.sin(2 * np.pi * 2 * t) + 0.3 * np.sin(2 * np.pi * 7.4 * t + 0.4))
    X = np.empty((n, el.n_states))
    x = el.x0.copy()
    X[0] = x
    for k in range(1, n):
        el.advance(x, u[k - 1], u[k], t[k] - t[k - 1], (u[k] - u[k - 1]) / (t[k] - t[k - 1]),
                   el.p, 1e-10)
        X[k] = x
    return t, u, X


def test_every_registered_law_has_a_sample():
    assert set(REGISTRY) == set(SAMPLES)


@pytest.mark.parametrize("name", NAMES)
def test_declared_p_layout(name):
    el = SAMPLES[name][0]()
    assert type(el).declares_p_layout()
    names = el.p_names()
    assert len(names) == el.p.size and len(set(names)) == len(names)
    np.testing.assert_array_equal(el.check_p(el.p), el.p)
    with pytest.raises(ValueError, match="slots"):
        el.check_p(np.append(el.p, 1.0))
    bad = el.p.copy()
    bad[-1] = np.nan
    with pytest.raises(ValueError, match=r"must be finite"):
        el.check_p(bad)
    # a fixed layout names the constructor's own parameters where they are kept verbatim
    for i, nm in enumerate(names):
        if nm in el.params and np.ndim(el.params[nm]) == 0 and not callable(el.params[nm]):
            assert el.p[i] == pytest.approx(float(el.params[nm]))


@pytest.mark.parametrize("name", NAMES)
def test_jac_matches_finite_differences(name):
    el, amp = SAMPLES[name][0](), SAMPLES[name][1]
    if el.jac is None or el.rate is None:
        pytest.skip(f"{name} declares no jac/rate")
    n = el.n_states
    t, u, X = _trajectory(el, amp)
    rng = np.random.default_rng(5)
    vmax = amp * 2 * np.pi * 8
    checked = 0
    for k in rng.integers(1, t.size, 25):
        x = X[k].copy()
        v = rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 1.0) * vmax
        uk = u[k]
        J = np.zeros((n + 1, n + 2))
        el.jac(x, uk, v, el.p, J)

        def f(z):
            out = np.empty(n + 1)
            if n:
                el.rate(z[:n].copy(), z[n], z[n + 1], el.p, out[:n])
            out[n] = el.force(z[:n].copy(), z[n], z[n + 1], el.p)
            return out

        z0 = np.r_[x, uk, v]
        scale = np.r_[np.maximum(np.abs(x), el.x_scale if n else 1.0), max(abs(uk), amp), abs(v)]
        Jfd = np.empty_like(J)
        for j in range(n + 2):
            dz = 1e-6 * scale[j]
            zp, zm = z0.copy(), z0.copy()
            zp[j] += dz
            zm[j] -= dz
            fp, fm = f(zp), f(zm)
            Jfd[:, j] = (fp - fm) / (2 * dz)
            # skip columns that straddle a kink (sign switches of the state or gap)
            if not np.all(np.isfinite(Jfd[:, j])):
                continue
            f0 = f(z0)
            one_sided = (fp - f0) / dz
            if not np.allclose(one_sided, Jfd[:, j], rtol=1e-3, atol=1e-9 * np.max(np.abs(f0)) + 1e-12):
                Jfd[:, j] = J[:, j]  # kink within ±dz: no derivative to compare with
        tol = 1e-5 * (np.abs(Jfd) + np.max(np.abs(Jfd), axis=1, keepdims=True)) + 1e-9
        assert np.all(np.abs(J - Jfd) <= tol), (name, k, J, Jfd)
        checked += 1
    assert checked


@pytest.mark.parametrize("name", [n for n in NAMES])
def test_advance_is_the_integral_of_rate(name):
    el, amp = SAMPLES[name][0](), SAMPLES[name][1]
    if el.kind != "smooth" or el.n_states == 0:
        pytest.skip(f"{name}: {el.kind} law without a smooth state")
    t = np.linspace(0.0, 0.5, 31)
    u = amp * np.sin(2 * np.pi * 1.3 * t + 0.2)
    x = el.x0.copy()
    xr = el.x0.copy()
    for k in range(t.size - 1):
        dt = t[k + 1] - t[k]
        v = (u[k + 1] - u[k]) / dt

        def f(s, z, u0=u[k], v=v):
            out = np.empty(el.n_states)
            el.rate(np.ascontiguousarray(z), u0 + v * s, v, el.p, out)
            return out

        xr = solve_ivp(f, (0.0, dt), xr, method="DOP853", rtol=1e-12,
                       atol=1e-13 * np.maximum(el.x_scale, 1e-300)).y[:, -1]
        el.advance(x, u[k], u[k + 1], dt, v, el.p, 1e-10)
    scale = np.maximum(np.abs(xr), el.x_scale)
    assert np.all(np.abs(x - xr) <= 1e-7 * scale), (x, xr)


@pytest.mark.parametrize("name", NAMES)
def test_c_twin_has_the_python_layout(name):
    from hystmech.fmu.ckernels import CKernels
    from hystmech.fmu.export import FMUExportError

    el = SAMPLES[name][0]()
    try:
        ck = CKernels(el)
    except FMUExportError as exc:  # not exportable, or no C compiler
        pytest.skip(str(exc).splitlines()[0])
    p, x0 = ck.setup()
    assert p.size == len(el.p_names())
    np.testing.assert_array_equal(p, el.p)
    np.testing.assert_array_equal(x0, el.x0)


def _elastic_sum():
    M, S = get_element_class("Masing"), get_element_class("LinearSpring")
    return M(k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=0.0, w0=1e-4) + S(k=30.0, u0=1e-3)


@pytest.mark.parametrize("name", NAMES + ["Masing+LinearSpring"])
def test_stored_energy_is_the_work_on_an_elastic_path(name):
    el = _elastic_sum() if name == "Masing+LinearSpring" else SAMPLES[name][0]()
    if el.stored_energy(el.x0[None, :], np.zeros(1)) is None:
        pytest.skip(f"{name} reports no stored energy")
    if any(p.stored_energy(p.x0[None, :], np.zeros(1)) is None for p in el.parts):
        pytest.skip(f"{name}: a part stores no energy it reports (not elastic)")
    # a path small enough to stay elastic (inside every stick box), open then closed
    box = 0.3 * min([1e-3] + ([float(np.min(el.box_hi - el.box_lo)) / 2]
                               if el.box_lo is not None and el.n_states else []))
    t = np.linspace(0.0, 1.0, 4001)
    u = box * np.sin(2 * np.pi * t) ** 2 + 0.5 * box * np.sin(2 * np.pi * t)
    r = drive(el, t, u, v=np.zeros_like(u))  # v = 0: velocity terms do no work
    X = r.state if r.state.shape[1] == el.n_states else None
    if X is None:
        pytest.skip("states not reported")
    E = el.stored_energy(X, u)
    W = np.concatenate([[0.0], np.cumsum(0.5 * (r.force[1:] + r.force[:-1]) * np.diff(u))])
    scale = np.max(np.abs(r.force)) * np.max(np.abs(u)) + 1e-300
    assert np.max(np.abs((E - E[0]) - W)) <= 1e-6 * scale
    assert abs(W[-1]) <= 1e-6 * scale  # closed path: no net work


@pytest.mark.parametrize("name", NAMES)
def test_initial_tangent_is_a_finite_difference(name):
    el, amp = SAMPLES[name][0](), SAMPLES[name][1]
    k0 = el.initial_tangent()
    if el.kind == "operator":
        # a relay staircase has no pointwise tangent: operators declare a secant
        assert math.isfinite(k0)
        pytest.skip(f"{name}: rate-independent staircase, initial_tangent is a secant")
    du = 1e-6 * amp
    x = el.x0.copy()
    F0 = el.force(x.copy(), 0.0, du, el.p)
    el.advance(x, 0.0, du, 1.0, du, el.p, 1e-12)
    k_fd = (el.force(x, du, du, el.p) - F0) / du
    assert k0 == pytest.approx(k_fd, rel=1e-4, abs=1e-6 * (abs(k_fd) + 1.0))
