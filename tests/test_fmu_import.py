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

from fmu_hosts import build_pythonfmu

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
    build_pythonfmu(PYFMU_SCRIPT, "spring_damper.py", d)
    return d / "PySpringDamper.fmu"


@pytest.fixture(scope="module", params=[2, 3], ids=["fmi2", "fmi3"])
def dahl_fmu(tmp_path_factory, request):
    """hystmech's Dahl exported as FMI 2.0 and as FMI 3.0: FMUElement imports both."""
    from hystmech.components import Dahl

    return export_fmu(Dahl(rho=200.0, Fc=2.0, w0=0.1),
                      tmp_path_factory.mktemp("dahl") / f"Dahl{request.param}.fmu",
                      fmi_version=request.param)


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
                                dict(mode="me"), dict(mode="me", compiled=False),
                                dict(mode="cs", step=1e-4, compiled=False)])
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
    with pytest.raises(FMUError, match=r"Dahl\d\.fmu.*'rho'.*rho must be in \(0, inf\)"):
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


def test_pyfmi_backend_refused_cleanly_where_absent(dahl_fmu, monkeypatch):
    """Without PyFMI the backend is refused with a message saying how to get it (the
    numbers of the backend are checked in test_fmu_import_pyfmi.py)."""
    import builtins

    real = builtins.__import__

    def no_pyfmi(name, *a, **k):
        if name == "pyfmi" or name.startswith("pyfmi."):
            raise ImportError("no pyfmi")
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_pyfmi)
    with pytest.raises(FMUError, match="conda-forge"):
        FMUElement(dahl_fmu, backend="pyfmi")


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
    shutil.copy(ex.TEMPLATES / "fmi2_model.c", src / "fmi2_model.c")
    tpl = (ex.TEMPLATES / "hm_fmu.h").read_text()  # the FMI core: record fmi2SetTime/start
    for old in ("    c->s.time = t;", "c->s.time = c->s.t_c = t0;"):
        assert old in tpl
        tpl = tpl.replace(old, old + " forced_time = " + old.split("= ")[-1])
    (src / "hm_fmu.h").write_text(tpl)
    (root / "binaries" / "linux64").mkdir(parents=True)
    ex._compile(src, "fmi2_model.c", root / "binaries" / "linux64" / "Forced.so",
                ex.find_compiler())
    md = ex._model_description_2(spec, guid, "Forced", 1e-8)
    (root / "modelDescription.xml").write_text(
        re.sub(r'generationTool="hystmech[^"]*"', 'generationTool="hand-written test"', md))
    path = d / "Forced.fmu"
    ex._zip_tree(root, path)
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


# -- a foreign FMI 3.0 FMU, hand-written in C (no hystmech boilerplate) --------------------
FORCED3_C = r'''/* FMI 3.0 model exchange + co-simulation, written by hand for the tests:
 * x' = -x/tau + A sin(w t),  F = x + B cos(w t) + k u  (value references: 0 time, 1 u,
 * 2 v, 3 F, 10..14 tau A w B k, 20 x, 21 der(x)); doStep is the exact solution. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#define API __attribute__((visibility("default")))
typedef struct { double t, x, u, v, q[5]; } inst;
static const double Q0[5] = {0.2, 3.0, 7.0, 0.5, 10.0};
static void *mk(void) { inst *m = calloc(1, sizeof(inst)); if (m) memcpy(m->q, Q0, sizeof Q0); return m; }
static double F(const inst *m) { return m->x + m->q[3] * cos(m->q[2] * m->t) + m->q[4] * m->u; }
static double dx(const inst *m) { return -m->x / m->q[0] + m->q[1] * sin(m->q[2] * m->t); }
static double part(const inst *m, double t)   /* a particular solution */
{ double a = 1.0 / m->q[0], w = m->q[2]; return m->q[1] / (a * a + w * w) * (a * sin(w * t) - w * cos(w * t)); }
API const char *fmi3GetVersion(void) { return "3.0"; }
API void *fmi3InstantiateModelExchange(const char *n, const char *tok, const char *r, bool vis,
    bool log, void *env, void *cb) { (void)n; (void)tok; (void)r; (void)vis; (void)log; (void)env; (void)cb; return mk(); }
API void *fmi3InstantiateCoSimulation(const char *n, const char *tok, const char *r, bool vis,
    bool log, bool ev, bool early, const unsigned *req, size_t nreq, void *env, void *cb, void *iu)
{ (void)n; (void)tok; (void)r; (void)vis; (void)log; (void)ev; (void)early; (void)req; (void)nreq; (void)env; (void)cb; (void)iu; return mk(); }
API void fmi3FreeInstance(void *c) { free(c); }
API int fmi3EnterInitializationMode(void *c, bool td, double tol, double t0, bool sd, double st)
{ inst *m = c; (void)td; (void)tol; (void)sd; (void)st; m->t = t0; m->x = 0.0; return 0; }
API int fmi3ExitInitializationMode(void *c) { (void)c; return 0; }
API int fmi3EnterEventMode(void *c) { (void)c; return 0; }
API int fmi3EnterContinuousTimeMode(void *c) { (void)c; return 0; }
API int fmi3Terminate(void *c) { (void)c; return 0; }
API int fmi3Reset(void *c) { inst *m = c; memset(m, 0, sizeof *m); memcpy(m->q, Q0, sizeof Q0); return 0; }
API int fmi3GetFloat64(void *c, const unsigned *vr, size_t n, double *val, size_t nv)
{
    inst *m = c; size_t i; (void)nv;
    for (i = 0; i < n; i++) {
        unsigned r = vr[i];
        if (r == 0) val[i] = m->t; else if (r == 1) val[i] = m->u; else if (r == 2) val[i] = m->v;
        else if (r == 3) val[i] = F(m); else if (r >= 10 && r < 15) val[i] = m->q[r - 10];
        else if (r == 20) val[i] = m->x; else if (r == 21) val[i] = dx(m); else return 3;
    }
    return 0;
}
API int fmi3SetFloat64(void *c, const unsigned *vr, size_t n, const double *val, size_t nv)
{
    inst *m = c; size_t i; (void)nv;
    for (i = 0; i < n; i++) {
        unsigned r = vr[i];
        if (r == 1) m->u = val[i]; else if (r == 2) m->v = val[i];
        else if (r >= 10 && r < 15) m->q[r - 10] = val[i]; else return 3;
    }
    return 0;
}
API int fmi3GetFMUState(void *c, void **s) { if (!*s) *s = malloc(sizeof(inst)); if (!*s) return 3; memcpy(*s, c, sizeof(inst)); return 0; }
API int fmi3SetFMUState(void *c, void *s) { if (!s) return 3; memcpy(c, s, sizeof(inst)); return 0; }
API int fmi3FreeFMUState(void *c, void **s) { (void)c; if (s) { free(*s); *s = NULL; } return 0; }
API int fmi3UpdateDiscreteStates(void *c, bool *a, bool *b, bool *d, bool *e, bool *f, double *g)
{ (void)c; *a = *b = *d = *e = *f = false; *g = 0.0; return 0; }
API int fmi3CompletedIntegratorStep(void *c, bool no, bool *ev, bool *term) { (void)c; (void)no; *ev = *term = false; return 0; }
API int fmi3SetTime(void *c, double t) { ((inst *)c)->t = t; return 0; }
API int fmi3SetContinuousStates(void *c, const double *x, size_t n) { if (n != 1) return 3; ((inst *)c)->x = x[0]; return 0; }
API int fmi3GetContinuousStates(void *c, double *x, size_t n) { if (n != 1) return 3; x[0] = ((inst *)c)->x; return 0; }
API int fmi3GetContinuousStateDerivatives(void *c, double *d, size_t n) { if (n != 1) return 3; d[0] = dx(c); return 0; }
API int fmi3GetNominalsOfContinuousStates(void *c, double *x, size_t n) { (void)c; if (n != 1) return 3; x[0] = 1.0; return 0; }
API int fmi3GetNumberOfContinuousStates(void *c, size_t *n) { (void)c; *n = 1; return 0; }
API int fmi3GetNumberOfEventIndicators(void *c, size_t *n) { (void)c; *n = 0; return 0; }
API int fmi3DoStep(void *c, double t, double h, bool no, bool *ev, bool *term, bool *early, double *last)
{
    inst *m = c; (void)no;
    m->t = t;
    m->x = part(m, t + h) + (m->x - part(m, t)) * exp(-h / m->q[0]);
    m->t = t + h;
    *ev = *term = *early = false; *last = m->t;
    return 0;
}
'''

FORCED3_XML = '''<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="Forced3" instantiationToken="{f0rced30-0000-4000-8000-000000000003}"
  generationTool="hand-written test">
  <ModelExchange modelIdentifier="Forced3" canGetAndSetFMUState="true" needsCompletedIntegratorStep="false"/>
  <CoSimulation modelIdentifier="Forced3" canGetAndSetFMUState="true" canHandleVariableCommunicationStepSize="true"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="u" valueReference="1" causality="input" variability="continuous" start="0"/>
    <Float64 name="v" valueReference="2" causality="input" variability="continuous" start="0"/>
    <Float64 name="F" valueReference="3" causality="output" variability="continuous"/>
    <Float64 name="tau" valueReference="10" causality="parameter" variability="fixed" start="0.2"/>
    <Float64 name="A" valueReference="11" causality="parameter" variability="fixed" start="3"/>
    <Float64 name="w" valueReference="12" causality="parameter" variability="fixed" start="7"/>
    <Float64 name="B" valueReference="13" causality="parameter" variability="fixed" start="0.5"/>
    <Float64 name="k" valueReference="14" causality="parameter" variability="fixed" start="10"/>
    <Float64 name="x" valueReference="20" causality="local" variability="continuous" initial="exact" start="0"/>
    <Float64 name="der(x)" valueReference="21" causality="local" variability="continuous" derivative="20"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="3"/>
    <ContinuousStateDerivative valueReference="21"/>
    <InitialUnknown valueReference="3"/>
    <InitialUnknown valueReference="21"/>
  </ModelStructure>
</fmiModelDescription>
'''


@pytest.fixture(scope="module")
def forced3_fmu(tmp_path_factory):
    """A foreign FMI 3.0 FMU (model exchange and co-simulation) built from hand-written
    C; fmpy binds every fmi3 function at load, so the unused ones are stubs that fail."""
    import fmpy.fmi3 as f3

    from hystmech.fmu.export import find_compiler, _zip_tree

    d = tmp_path_factory.mktemp("forced3")
    done = set(re.findall(r"\b(fmi3\w+)\(", FORCED3_C))
    names = {n for cls in (f3.FMU3Model, f3.FMU3Slave) for n in dir(cls) if n.startswith("fmi3")}
    stubs = "".join(f"API int {n}(void) {{ return 3; }}\n" for n in sorted(names - done))
    (d / "forced3.c").write_text(FORCED3_C + stubs)
    root = d / "fmu"
    (root / "binaries" / "x86_64-linux").mkdir(parents=True)
    r = subprocess.run([find_compiler(), "-shared", "-fPIC", "-O2", "-fvisibility=hidden",
                        str(d / "forced3.c"), "-o",
                        str(root / "binaries" / "x86_64-linux" / "Forced3.so"), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (root / "modelDescription.xml").write_text(FORCED3_XML)
    path = d / "Forced3.fmu"
    _zip_tree(root, path)
    return path


@pytest.mark.parametrize("kw", [dict(mode="me"), dict(mode="me", compiled=False),
                                dict(mode="cs", step=1e-3),
                                dict(mode="cs", step=1e-3, compiled=False)])
def test_foreign_fmi3_fmu_gives_the_closed_form(forced3_fmu, kw):
    """The foreign FMI 3.0 FMU through FMUElement: model exchange (time as the last state,
    fmi3SetTime before each evaluation) and co-simulation (fmi3DoStep, exact inside the
    FMU) give the closed-form solution of x' = -x/tau + A sin(w t), F = x + B cos(w t) + k u."""
    fe = FMUElement(forced3_fmu, **kw)
    assert fe.fmi3 and (fe.time_state or kw["mode"] == "cs")
    t = np.linspace(0.0, 1.5, 301)
    u = 0.01 * np.sin(3.0 * t)
    r = hystmech.drive(fe, t, u, rtol=1e-10)
    exact = _forced_exact(t, u)
    assert np.max(np.abs(r.force - exact)) <= 1e-7 * np.max(np.abs(exact))
    r2 = hystmech.drive(fe, t, u, rtol=1e-10)      # a second run restarts from t = 0
    assert np.max(np.abs(r2.force - r.force)) <= 1e-12 * np.max(np.abs(exact))
    fe.close()


def test_fmi3_laws_round_trip(tmp_path):
    """FMI 3.0 exports of an inclusion, an operator and a smooth law imported back, in
    co-simulation (compiled kernels) and model exchange: drive's force."""
    import test_fmu_cases as tc

    for name in ("Masing", "Preisach", "BoucWen"):
        ctor, amp, freq = tc.CASES[name]
        el = ctor()
        path = export_fmu(el, tmp_path / f"{name}.fmu", fmi_version=3)
        t, u = tc.make_input(amp, freq, T=0.2, n=401)
        ref = hystmech.drive(el, t, u, rtol=1e-10)
        for mode in ("cs", "me"):
            fe = FMUElement(path, mode=mode)
            r = hystmech.drive(fe, t, u, rtol=1e-10)
            assert np.max(np.abs(r.force - ref.force)) <= 1e-6 * np.max(np.abs(ref.force)), \
                (name, mode)
            fe.close()


def test_a_refused_or_closed_import_leaves_no_extracted_folder(dahl_fmu, tmp_path,
                                                               monkeypatch):
    """FMUElement extracts the FMU into a temporary folder: a constructor that refuses an
    option after extracting (an invalid me_host, compiled with error_control), and a
    closed element, leave none behind (each refusal used to leave one in /tmp)."""
    import gc
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def left():
        gc.collect()
        return sorted(p.name for p in tmp_path.glob("hystmech-fmu-*"))

    for kw in (dict(me_host="yes", mode="me"), dict(compiled=True, error_control=True),
               dict(step=-1.0)):
        with pytest.raises(FMUError):
            FMUElement(dahl_fmu, **kw)
        assert left() == [], kw
    fe = FMUElement(dahl_fmu)
    assert len(left()) == 1           # the live element's binary is loaded from there
    fe.close()
    assert left() == []
