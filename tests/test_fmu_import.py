"""FMUElement: FMUs (exported by hystmech or built by another toolchain) as force
elements in drive and in assemblies, with clear errors."""
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hystmech
from hystmech.fmu import FMUElement, FMUError, export_fmu

BIN = Path(sys.executable).parent

PYFMU_SCRIPT = '''
from pythonfmu import Fmi2Causality, Fmi2Variability, Fmi2Slave, Real


class PySpringDamper(Fmi2Slave):
    """Linear spring-damper F = k x + c xdot (a foreign FMU built by pythonfmu)."""

    author = "hystmech tests"
    description = "linear spring-damper"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.k = 1000.0
        self.c = 2.0
        self.x = 0.0
        self.xdot = 0.0
        for name in ("k", "c"):
            self.register_variable(Real(name, causality=Fmi2Causality.parameter,
                                        variability=Fmi2Variability.tunable))
        self.register_variable(Real("x", causality=Fmi2Causality.input))
        self.register_variable(Real("xdot", causality=Fmi2Causality.input))
        self.register_variable(Real("force", causality=Fmi2Causality.output,
                                    getter=lambda: self.k * self.x + self.c * self.xdot))

    def do_step(self, current_time, step_size):
        return True
'''


@pytest.fixture(scope="module")
def pyfmu(tmp_path_factory):
    d = tmp_path_factory.mktemp("pythonfmu")
    (d / "spring_damper.py").write_text(PYFMU_SCRIPT)
    r = subprocess.run([str(BIN / "pythonfmu"), "build", "-f", "spring_damper.py"], cwd=d,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return d / "PySpringDamper.fmu"


@pytest.fixture(scope="module")
def dahl_fmu(tmp_path_factory):
    from hystmech.components import Dahl

    return export_fmu(Dahl(rho=200.0, Fc=2.0, w0=0.1),
                      tmp_path_factory.mktemp("dahl") / "Dahl.fmu")


def test_foreign_fmu_in_assembly_gives_analytic_free_vibration(pyfmu):
    """Mass m on the pythonfmu spring-damper (k, c), released from x0: the damped
    free vibration x(t) = x0 e^(−ζω0 t)(cos ωd t + ζω0/ωd sin ωd t)."""
    from hystmech.systems import Assembly, simulate

    m, k, c, x0 = 1.0, 1000.0, 2.0, 0.01
    fe = FMUElement(pyfmu, inputs=("x", "xdot"), output="force", parameters={"k": k, "c": c})
    assert fe.kind == "operator"
    asm = Assembly().add_dof("m", mass=m, x0=x0).add_element("sd", fe, "m")
    T = 0.2
    res = simulate(asm, (0.0, T), method="projection", h=1e-5,
                   t_eval=np.linspace(0.0, T, 201))
    w0 = np.sqrt(k / m)
    z = c / (2 * np.sqrt(k * m))
    wd = w0 * np.sqrt(1 - z * z)
    t = res.t
    x = x0 * np.exp(-z * w0 * t) * (np.cos(wd * t) + z * w0 / wd * np.sin(wd * t))
    # first-order scheme at h = 1e-5 s: error O(ω0 h) per radian travelled
    assert np.max(np.abs(res.x("m") - x)) <= 2e-3 * x0
    F = res.force("sd")
    np.testing.assert_allclose(F, k * res.x("m") + c * res.v("m"), atol=5e-3 * k * x0)
    fe.close()


def test_foreign_fmu_in_drive(pyfmu):
    fe = FMUElement(pyfmu, inputs={"u": "x", "v": "xdot"}, output="force",
                    parameters={"k": 50.0, "c": 3.0})
    t = np.linspace(0.0, 0.5, 501)
    u = 0.01 * np.sin(7 * t)
    r = hystmech.drive(fe, t, u)
    v = np.r_[(u[1] - u[0]) / (t[1] - t[0]), np.diff(u) / np.diff(t)]
    np.testing.assert_allclose(r.force, 50.0 * u + 3.0 * v, rtol=0, atol=1e-12)
    fe.close()


@pytest.mark.parametrize("kw", [dict(mode="cs", step=1e-4), dict(mode="cs", rollback=True),
                                dict(mode="cs", step=1e-3, error_control=True, tol=1e-9),
                                dict(mode="me")])
def test_exported_fmu_round_trip_in_drive(dahl_fmu, kw):
    """Our own FMU imported back: the same force as the native Dahl element, in
    co-simulation (any communication step: Dahl's update is exact) and in model
    exchange (to the integrator's tolerance); a second drive restarts from t = 0."""
    from hystmech.components import Dahl

    el = Dahl(rho=200.0, Fc=2.0, w0=0.1)
    t = np.linspace(0.0, 0.5, 501)
    u = 0.02 * np.sin(2 * np.pi * 2 * t) + 0.004 * np.sin(2 * np.pi * 9 * t)
    ref = hystmech.drive(el, t, u)
    fe = FMUElement(dahl_fmu, **kw)
    for _ in range(2):
        r = hystmech.drive(fe, t, u, rtol=1e-10)
        assert np.max(np.abs(r.force - ref.force)) <= 1e-8 * 2.0
    fe.close()


def test_rollback_repeats_a_step_exactly(dahl_fmu):
    fe = FMUElement(dahl_fmu, mode="cs", rollback=True)
    x = fe.x0.copy()
    fe.advance(x, 0.0, 0.001, 0.01, 0.1, fe.p, 1e-8)
    x_mid = x.copy()
    fe.advance(x, 0.001, 0.003, 0.01, 0.2, fe.p, 1e-8)
    F1 = fe.force(x, 0.003, 0.2, fe.p)
    fe.advance(x_mid, 0.001, 0.003, 0.01, 0.2, fe.p, 1e-8)   # a solver rejects and retries
    assert fe.force(x_mid, 0.003, 0.2, fe.p) == F1
    fe2 = FMUElement(dahl_fmu, mode="cs", rollback=False)
    y = fe2.x0.copy()
    fe2.advance(y, 0.0, 0.001, 0.01, 0.1, fe2.p, 1e-8)
    y_mid = y.copy()
    fe2.advance(y, 0.001, 0.003, 0.01, 0.2, fe2.p, 1e-8)
    with pytest.raises(FMUError, match="cannot go back"):
        fe2.advance(y_mid, 0.001, 0.003, 0.01, 0.2, fe2.p, 1e-8)


def test_clear_errors(dahl_fmu, tmp_path, pyfmu):
    with pytest.raises(FMUError, match="not found"):
        FMUElement(tmp_path / "missing.fmu")
    bad = tmp_path / "bad.fmu"
    bad.write_bytes(b"not a zip")
    with pytest.raises(FMUError, match="bad.fmu.*not a valid FMU"):
        FMUElement(bad)
    with pytest.raises(FMUError, match="no variable 'x'.*candidates: u, v"):
        FMUElement(dahl_fmu, inputs=("x", "v"))
    with pytest.raises(FMUError, match="no variable 'G'"):
        FMUElement(dahl_fmu, output="G")
    # the FMU's own error message is relayed, naming file and variable
    with pytest.raises(FMUError, match=r"Dahl.fmu.*'rho'.*rho must be in \(0, inf\)"):
        FMUElement(dahl_fmu, parameters={"rho": -1.0})
    # no binary for this platform
    nobin = tmp_path / "nobin.fmu"
    with zipfile.ZipFile(dahl_fmu) as zi, zipfile.ZipFile(nobin, "w") as zo:
        for it in zi.infolist():
            if not it.filename.startswith("binaries/"):
                zo.writestr(it, zi.read(it))
    with pytest.raises(FMUError, match="nobin.fmu.*no binary for this platform"):
        FMUElement(nobin)
    with pytest.raises(FMUError, match="model exchange"):
        FMUElement(pyfmu, inputs=("x", "xdot"), output="force", mode="me")


def test_pyfmi_backend_only_where_installed(dahl_fmu):
    try:
        import pyfmi  # noqa: F401
    except ImportError:
        with pytest.raises(FMUError, match="pyfmi"):
            FMUElement(dahl_fmu, backend="pyfmi")
        pytest.skip("pyfmi is not installed (it needs the FMI Library, which no reachable "
                    "registry provides); the import path uses fmpy")


FORCED_C = r'''/* a foreign model-exchange law whose rate and output depend on time:
 * xdot = -x/tau + A sin(w t),  F = x + B cos(w t) + k u;  q = p = [tau, A, w, B, k] */
#include "hm_law.h"
static double forced_time = 0.0;   /* the FMU time, set by fmi2SetTime */
void forced_rate(const double *x, double u, double v, const double *p, double *out)
{ (void)u; (void)v; out[0] = -x[0] / p[0] + p[1] * sin(p[2] * forced_time); }
void forced_advance(double *x, double u0, double u1, double dt, double v, const double *p,
                    double rtol) { (void)x; (void)u0; (void)u1; (void)dt; (void)v; (void)p; (void)rtol; }
double forced_force(const double *x, double u, double v, const double *p)
{ (void)v; return x[0] + p[3] * cos(p[2] * forced_time) + p[4] * u; }
const char *forced_setup(const double *q, int nq, double *p, int np, double *x0, int nx)
{ int i; (void)nq; (void)nx; for (i = 0; i < np; i++) p[i] = q[i]; x0[0] = 0.0; return NULL; }
'''


@pytest.fixture(scope="module")
def forced_fmu(tmp_path_factory):
    """A time-dependent model-exchange FMU not generated by hystmech: the FMI 2.0
    boilerplate with a law reading the FMU time (fmi2SetTime patched to record it)."""
    from hystmech.fmu import export as ex

    d = tmp_path_factory.mktemp("forced")
    src, root = d / "src", d / "fmu"
    src.mkdir()
    (src / "forced.c").write_text(FORCED_C)
    spec = ex.LawSpec("Forced", "forced", src / "forced.c", "smooth",
                      ["tau", "A", "w", "B", "k"], [0.2, 3.0, 7.0, 0.5, 10.0], ["s"] + [""] * 4,
                      [""] * 5, 5, 1, ["x"], [1.0])
    guid = "{4f0c2b5e-0000-4000-8000-00000000f0ce}"
    comp = Path(ex.__file__).resolve().parent.parent / "components"
    shutil.copy(comp / "hm_law.h", src / "hm_law.h")
    (src / "hm_config.h").write_text(ex._config_h(spec, guid, 1e-8))
    tpl = (ex.TEMPLATES / "fmi2_model.c").read_text()
    for old in ("((hm_inst *)c)->s.time = t;", "m->s.time = m->s.t_last = t0;"):
        assert old in tpl
        tpl = tpl.replace(old, old + " forced_time = " + old.split("= ")[-1])
    (src / "fmi2_model.c").write_text(tpl)
    (root / "binaries" / "linux64").mkdir(parents=True)
    ex._compile(src, "fmi2_model.c", root / "binaries" / "linux64" / "Forced.so",
                ex.find_compiler())
    md = ex._model_description_2(spec, guid, "Forced", 1e-8)
    (root / "modelDescription.xml").write_text(
        re.sub(r'generationTool="hystmech[^"]*"', 'generationTool="hand-written test"', md))
    path = d / "Forced.fmu"
    with zipfile.ZipFile(path, "w") as zf:
        for f in sorted(root.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(root).as_posix())
    return path


def _forced_exact(t, u, tau=0.2, A=3.0, w=7.0, B=0.5, k=10.0):
    # x' = -x/tau + A sin(w t), x(0) = 0
    a = 1.0 / tau
    x = A / (a * a + w * w) * (a * np.sin(w * t) - w * np.cos(w * t) + w * np.exp(-a * t))
    return x + B * np.cos(w * t) + k * u


@pytest.mark.parametrize("compiled", [True, False])
def test_model_exchange_sets_the_fmu_time(forced_fmu, compiled):
    """A foreign model-exchange FMU whose derivative and output depend on time gives the
    closed-form solution: the element carries the time as its last state (rate 1) and
    calls fmi2SetTime before each evaluation (without it the FMU would integrate at a
    frozen time: x stays 0 in an assembly)."""
    fe = FMUElement(forced_fmu, mode="me", compiled=compiled)
    assert fe.time_state and fe.n_states == 2 and fe.state_names[-1] == "time"
    t = np.linspace(0.0, 1.5, 301)
    u = 0.01 * np.sin(3.0 * t)
    r = hystmech.drive(fe, t, u, rtol=1e-10)
    exact = _forced_exact(t, u)
    assert np.max(np.abs(r.force - exact)) <= 1e-7 * np.max(np.abs(exact))
    fe.close()


def test_model_exchange_time_in_an_assembly(forced_fmu):
    """The time-dependent FMU in an assembly (its state and time joined to the assembly
    state, integrated monolithically by the compiled RK45): mass m on it,
    m u'' = -(x + B cos(w t) + k u), x' = -x/tau + A sin(w t), against scipy's DOP853
    at rtol 1e-12 on the same equations."""
    from scipy.integrate import solve_ivp

    from hystmech.systems import Assembly, simulate

    fe = FMUElement(forced_fmu, mode="me")
    x = fe.x0.copy()
    out = np.zeros(2)
    x[1] = 0.3                       # a rate at t = 0.3 s sees that time
    fe.rate(x, 0.0, 0.0, fe.p, out)
    assert out[0] == pytest.approx(3.0 * np.sin(7.0 * 0.3), rel=1e-14) and out[1] == 1.0
    assert fe.force(x, 0.0, 0.0, fe.p) == pytest.approx(0.5 * np.cos(7.0 * 0.3), rel=1e-14)
    m, T = 0.05, 1.0
    asm = Assembly().add_dof("m", mass=m, x0=0.0).add_element("f", fe, "m")
    te = np.linspace(0.0, T, 101)
    res = simulate(asm, (0.0, T), method="RK45", t_eval=te, rtol=1e-10, energy=False)

    def rhs(t, y):
        xf, u, v = y
        return [-xf / 0.2 + 3.0 * np.sin(7.0 * t), v,
                -(xf + 0.5 * np.cos(7.0 * t) + 10.0 * u) / m]

    ref = solve_ivp(rhs, (0.0, T), [0.0, 0.0, 0.0], method="DOP853", t_eval=te, rtol=1e-12,
                    atol=1e-14)
    scale = np.max(np.abs(ref.y[1]))
    assert scale > 0.01
    assert np.max(np.abs(res.x("m") - ref.y[1])) <= 1e-6 * scale
    fe.close()
