"""(Helper module, no tests.) Exportable laws with realistic parameters and a drive input for the FMU tests:
name -> (constructor, displacement amplitude [m], frequency [Hz])."""
import numpy as np

from hystmech.components import get_element_class


def _mk(cls, **kw):
    return lambda: get_element_class(cls)(**kw)


CASES = {
    "Dahl": (_mk("Dahl", rho=200.0, Fc=2.0, w0=0.1), 0.02, 2.0),
    "LuGre": (_mk("LuGre", sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                  sigma2=0.4, x0=1e-5), 0.002, 1.0),
    "ModifiedDahl": (_mk("ModifiedDahl", Lambda=117355.0, mu=0.37, a=7.146e4, b=9.596e2,
                         d=5.322e4, e=3.972e2, F0=600.0), 0.01, 5.0),
    "ViscousDahl": (_mk("ViscousDahl", kx=1e3, kw=50.0, rho=500.0, w0=0.2), 0.01, 2.0),
    "AsymmetricViscousDahl": (_mk("AsymmetricViscousDahl", kx1=1.6299e5, kw1=5.2620e4,
                                  kx2=1.3352e5, kw2=6.2986e4, rho=768.73), 0.01, 1.0),
    "BoucWen": (_mk("BoucWen", A=1e4, beta=2.0, gamma=0.5, n=1.5, k_el=100.0, z0=5.0),
                0.05, 1.0),
    "Masing": (_mk("Masing", k=1e5, k0=1e3, alpha=50.0, F0=1.0, c=10.0, w0=1e-4), 0.002, 2.0),
    "MaxwellSlip": (_mk("MaxwellSlip", k=[1e4, 2e4, 3e4], delta=[1e-4, 2e-4, 0.0],
                        z0=[0.0, 1e-4, 0.0]), 5e-4, 2.0),
    "Preisach": (lambda: get_element_class("Preisach")(
        a1=np.array([-0.004, -0.002, -0.003, 0.0, 0.001]),
        a2=np.array([-0.001, 0.003, 0.001, 0.002, 0.004]),
        weights=np.array([3.0, 5.0, 2.0, 4.0, 1.5]), initial=-1, k0=200.0, offset=0.5,
        max_depth=16), 0.004, 2.0),
    # continuous mode: cellwise constant kernel, exact Everett integral (p[8] == 0); the
    # input (|u| up to 1.3 amp) also leaves the triangle |u| <= m = 0.005
    "PreisachContinuous": (lambda: get_element_class("Preisach").from_kernel(
        lambda r, s: 4e5 * np.exp(-r / 0.002) * np.exp(-(s / 0.003) ** 2), 0.005, 12,
        continuous=True, k0=200.0, offset=0.5, max_depth=32), 0.004, 2.0),
    "Relay": (_mk("Relay", a1=-0.001, a2=0.002, initial=1), 0.003, 2.0),
    # parallel sums (components/combine.py) export as one generated C law
    "SumDahlSpring": (lambda: get_element_class("Dahl")(rho=200.0, Fc=2.0, w0=0.1)
                      + get_element_class("LinearSpring")(k=30.0, u0=1e-3), 0.02, 2.0),
    "CableLaw": (lambda: _cable(), 20.0, 2.0),
    "SpringDamper": (_mk("SpringDamper", k=1e3, c=5.0, u0=1e-3), 0.01, 2.0),
}


# each case's element kind, for parametrizing at collection without building the laws
# (tests/test_fmu_jacobian.py checks it against the built laws)
KIND = {"Dahl": "smooth", "LuGre": "smooth", "ModifiedDahl": "smooth", "ViscousDahl": "smooth",
        "AsymmetricViscousDahl": "smooth", "BoucWen": "smooth", "Masing": "inclusion",
        "MaxwellSlip": "inclusion", "Preisach": "operator", "PreisachContinuous": "operator",
        "Relay": "operator", "SumDahlSpring": "smooth", "CableLaw": "operator",
        "SpringDamper": "smooth"}


def _cable():
    """The rod's cable moment law EI_el·K + (κ·K − P[K]) (continuous Preisach, small
    kernel), input a curvature [1/m], output a moment [N·m]."""
    from hystmech.systems.rigs.rod_cases import cable_preisach

    return cable_preisach({"levels": 10})[0]


def available():
    """Every case (a copy of :data:`CASES`): each law ships. The laws are built by the
    tests that use them, not here: this runs at collection in every worker, where
    building them all compiled the Preisach kernels (5.5 s per worker on fresh
    caches)."""
    return dict(CASES)


def make_input(amp, freq, T=1.0, n=2001):
    """Two-harmonic displacement u(t) [m] with a minor loop in each period."""
    t = np.linspace(0.0, T, n)
    u = amp * (np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(2 * np.pi * 3.7 * freq * t + 0.4))
    return t, u
