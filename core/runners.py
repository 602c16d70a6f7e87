"""Scenario runners: which ones exist, what each accepts, and what a run costs.

A scenario file is data, so its ``runner`` names a registered runner; it never imports
a module of its own choosing. Three places define runners:

* :data:`REGISTRY` below, hystmech's own: name -> "module:function" (imported only when
  that runner runs). Adding a runner is one line here (plus its schema in
  :data:`SCHEMAS`). A scenario may give the name or the registered import path.
* installed packages, through the entry-point group ``hystmech.runners``
  (``[project.entry-points."hystmech.runners"] my-case = "mypkg.cases:run"``); the
  function may carry its schema as a ``SCHEMA`` attribute ({table: Spec}) and its work
  estimate as ``WORK`` (config -> {quantity: (value, sentence)}), else neither is checked.
* ``module:function`` with a module file beside the scenario file, run only when the
  user says they trust the file (``hystmech run --trust-runner``).

:data:`SCHEMAS` declares each runner's tables and key types (vocabulary in
:mod:`hystmech.schema`); :data:`WORK` estimates a run's steps and stored samples from
the config before anything is allocated (see :mod:`hystmech.limits`).
"""
from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from importlib import metadata
from pathlib import Path
from typing import Callable

from .limits import size_words
from .runner_io import ScenarioError
from .schema import (BOOL, COUNT, ELEMENT, FILE_STEM, INT, REAL, STR, ArrayOf, Element, List, MapOf,
                     Required, Str, Table)

ENTRY_POINT_GROUP = "hystmech.runners"

# name -> "module:function" (imported lazily)
REGISTRY: dict[str, str] = {
    "drive": "hystmech.scenario:run_drive",
    "belt-tensioner": "hystmech.systems.rigs.belt_tensioner_cases:run",
    "belt-tensioner-frf": "hystmech.systems.periodic.sweep:run",
    "belt-tensioner-frf-continuation": "hystmech.systems.periodic.frf_continuation:run",
    "belt-tensioner-cosim": "hystmech.fmu.cases:run",
    "cable-cantilever-cyclic": "hystmech.systems.rigs.rod_cases:run_cantilever_cyclic",
    "cable-dynamic": "hystmech.systems.rigs.rod_cases:run_dynamic",
    "cable-pure-bending": "hystmech.systems.rigs.rod_cases:run_pure_bending",
    "lugre-example-1": "hystmech.analysis.cases_loops:run_example1",
    "lugre-convergence": "hystmech.analysis.cases_loops:run_convergence",
    "lugre-minor-loops": "hystmech.analysis.cases_loops:run_minor_loops",
    "mr-damper-fig11": "hystmech.analysis.cases_loops:run_mr_damper_fig11",
    "masing-loop": "hystmech.analysis.cases_nonsmooth:run_masing_loop",
    "maxwell-slip-loops": "hystmech.analysis.cases_nonsmooth:run_maxwell_slip_loops",
    "preisach-cable-protocol": "hystmech.analysis.cases_nonsmooth:run_preisach_cable_protocol",
    "maxwell-slip-oscillator": "hystmech.systems.rigs.maxwell_slip_oscillator:run",
    "mr-damper-real-data": "hystmech.identify.real_data:run",
    "mr-damper-rig": "hystmech.systems.rigs.mr_damper:run",
    "bouc-wen-benchmark": "hystmech.systems.rigs.bouc_wen_benchmark:run",
    "noel-schoukens-identification": "hystmech.identify.noel_schoukens:run",
}

# -- schemas: {table: Spec} per runner ---------------------------------------------------------
_INPUT = Table({
    "type": Str("piecewise_linear", "sine", "two_harmonic"),
    "knots_u": List(REAL, 2), "knots_t": List(REAL, 2), "periods": COUNT, "gamma": REAL,
    "samples_per_unit": REAL, "amplitude": REAL, "omega": REAL, "duration": REAL,
    "offset": REAL, "phase": REAL, "n": COUNT, "t0": REAL, "A1": REAL, "A2": REAL,
}, required=("type",))
_ROD = Table({"N": COUNT, "L": REAL, "EA": REAL, "GA": REAL, "rhoA": REAL, "rhoI": REAL})
_CABLE_LAW = Table({"type": Str("preisach", "stops"), "EI_el": REAL, "M_h": REAL, "m": REAL,
                    "levels": COUNT, "r0": REAL, "s0": REAL, "continuous": BOOL,
                    "k_stops": List(REAL), "K_yield": List(REAL)})
_RIG = Table({"m1": REAL, "m2": REAL, "K": REAL, "C": REAL, "g": REAL})
_FORCING = Table({"f0": REAL, "f1": REAL, "Omega0": REAL, "phi": REAL})
_CONV_RUN = Table({"knots_u": List(REAL, 3), "periods": COUNT, "gammas": List(REAL),
                   "k_max": COUNT, "samples_per_unit": REAL, "rtol": REAL,
                   "figures": List(FILE_STEM, 3, 3)})

SCHEMAS: dict[str, dict] = {
    "drive": {"element": Required(ELEMENT), "input": Required(_INPUT),
              "solver": Table({"rtol": REAL})},
    "belt-tensioner": {
        "tensioner": Element({"model": Str("mdm", "masing")}),
        "rig": _RIG, "forcing": _FORCING,
        "solver": Table({"method": STR, "h": REAL, "rtol": REAL, "t_end": REAL, "t0": REAL,
                         "dt_out": REAL}),
        "output": Table({"plot_window": List(REAL, 2, 2), "metric_window": List(REAL, 2, 2)}),
    },
    "belt-tensioner-frf": {
        "grid": Table({"models": List(Str("mdm", "masing")), "f1": List(REAL),
                       "omega_min": REAL, "omega_max": REAL, "n_omega": COUNT,
                       "reduced": BOOL, "reduced_f1": List(REAL), "reduced_n_omega": COUNT}),
        "simulation": Table({"t_window": List(REAL, 2, 2), "h": REAL, "rtol": REAL,
                             "mdm_method": STR}),
        "sweep": Table({"workers": COUNT, "steady_state": BOOL, "ss_tol": REAL,
                        "ss_periods": COUNT, "ss_confirm": COUNT}),
    },
    "belt-tensioner-frf-continuation": {
        "branches": Table({"models": List(Str("mdm", "masing")), "f1": List(REAL),
                           "omega_min": REAL, "omega_max": REAL}),
        "continuation": Table({"ds": REAL, "ds_max": REAL, "state_weight": REAL,
                               "mdm_tol": REAL, "masing_tol": REAL, "jacobian_every": COUNT,
                               "max_points": COUNT, "n_samples": COUNT,
                               "max_measure_step": REAL}),
        "solver": Table({"mdm_rtol": REAL, "masing_h": REAL}),
        "overlay": Table({"frf_csv": STR, "reduced_n_omega": COUNT}),
        "fold_curves": Table({"from_f1": REAL, "f1_min": REAL, "f1_max": REAL,
                              "omega_min": REAL, "omega_max": REAL, "max_points": COUNT,
                              "sweep_csv": STR}),
        "coexisting": Table({"models": List(Str("mdm", "masing")), "f1": List(REAL),
                             "near": REAL, "max_sites": COUNT, "amplitudes": List(REAL),
                             "max_points": COUNT}),
    },
    "belt-tensioner-cosim": {
        "simulation": Table({"t_end": REAL, "window": REAL, "H": REAL, "rtol": REAL}),
    },
    "cable-cantilever-cyclic": {
        "rod": _ROD, "law": _CABLE_LAW,
        "load": Table({"P_max": REAL, "cycles": COUNT, "steps_per_quarter": COUNT}),
    },
    "cable-dynamic": {
        "rod": _ROD, "law": _CABLE_LAW,
        "load": Table({"P_release": REAL, "steps": COUNT}),
        "solver": Table({"periods": REAL, "steps_per_period": REAL, "damping": REAL,
                         "newmark_gamma": REAL}),
    },
    "cable-pure-bending": {
        "rod": _ROD, "law": _CABLE_LAW,
        "protocol": Table({"levels": List(REAL), "cycles_per_level": COUNT,
                           "points_per_cycle": COUNT}),
    },
    "lugre-example-1": {
        "run": Table({"gammas": List(REAL), "periods": COUNT, "samples_per_period": COUNT,
                      "rtol": REAL}),
    },
    "lugre-convergence": {"element": Required(ELEMENT), "run": _CONV_RUN},
    "lugre-minor-loops": {
        "element": Required(ELEMENT),
        # a case overrides element parameters (checked by the element's constructor)
        "cases": ArrayOf(Table({"label": STR, "figure": FILE_STEM, "knots_u": List(REAL, 3)},
                               extra=REAL)),
        "simulation": Table({"gamma": REAL, "periods": COUNT, "samples_per_unit": REAL,
                             "rtol": REAL}),
    },
    "mr-damper-fig11": {
        "element": Required(ELEMENT),
        "input": Table({"x_min": REAL, "x_max": REAL, "period": REAL, "rise_time": REAL,
                        "ripple": REAL, "periods": COUNT, "dt": REAL}),
    },
    "masing-loop": {
        "masing": Required(Table({"k": REAL, "k0": REAL, "alpha": REAL, "F0": REAL, "c": REAL},
                        required=("k", "k0", "alpha", "F0"))),
        "input": Required(Table({"x0": REAL, "x1": REAL, "Omega": REAL, "phi": REAL,
                                 "periods": COUNT, "samples_per_period": COUNT},
                                required=("x0", "x1", "Omega"))),
        "rig": Table({"Omega0": REAL}),
    },
    "maxwell-slip-loops": {
        "element": Required(Element(type_required=False,
                                    params=("kt", "kn", "mu", "d", "heights"))),
        "input": Required(Table({"A1": REAL, "A2": REAL, "omega": REAL, "n_per_segment": COUNT},
                                required=("A1", "A2", "omega"))),
    },
    "preisach-cable-protocol": {
        "protocol": Table({"levels": List(REAL), "cycles_per_level": COUNT,
                           "points_per_cycle": COUNT, "snapshot_samples": List(COUNT)}),
        "kernel": Table({"amplitude": REAL, "r0": REAL, "s0": REAL, "n": COUNT, "k0": REAL}),
    },
    "bouc-wen-benchmark": {
        "system": Table({"m": REAL, "c": REAL, "k": REAL, "alpha": REAL, "beta": REAL,
                         "gamma": REAL, "delta": REAL, "nu": REAL}),
        "signals": Table({"fs": REAL, "N": COUNT, "upsample": COUNT, "rms": REAL,
                          "f_min": REAL, "f_max": REAL, "seed": INT,
                          "multisine_periods": COUNT, "B": REAL, "f0": REAL, "f1": REAL,
                          "rate": REAL}),
        "solver": Table({"method": STR, "rtol": REAL}),
    },
    "noel-schoukens-identification": {
        "fit": Table({"periods": COUNT, "substeps": COUNT, "starts": COUNT, "free": List(STR)}),
        "start": Table({k: REAL for k in ("y.m", "damper.c", "spring.k", "hysteresis.A",
                                          "hysteresis.beta", "hysteresis.gamma",
                                          "hysteresis.n")}),
    },
    "maxwell-slip-oscillator": {
        "oscillator": Table({"m": REAL, "K": REAL, "c": REAL}),
        "cases": MapOf(Table({"excitation": Str("free", "force", "base"), "x0": REAL,
                              "v0": REAL, "amplitude": REAL, "omega": REAL, "t_end": REAL})),
        "solver": Table({"method": STR, "h": REAL, "rtol": REAL, "atol": REAL}),
    },
    "mr-damper-real-data": {
        "data": Table({"fit": STR, "validate": STR, "t_max": REAL, "decimate_bouc_wen": COUNT,
                       "n_starts": COUNT}),
    },
    "mr-damper-rig": {
        "rig": Table({"m": REAL, "Kp": REAL, "Kd": REAL, "Xmin": REAL, "Xmax": REAL,
                      "period": REAL, "beta": REAL, "w0": REAL}),
        "sampling": Table({"periods": COUNT, "fs": REAL, "noise_F": REAL, "noise_x": REAL,
                           "seed": INT, "rtol": REAL}),
    },
}


# -- work estimates: {quantity: (value, how)} per runner ----------------------------------------
# Each reads the config with the runner's defaults and returns the steps a solver takes
# and the samples it stores, with the sentence that explains the number.
def _t(cfg, name):
    return cfg.get(name, {}) if isinstance(cfg.get(name, {}), dict) else {}


def _path_length(knots) -> float:
    try:
        return float(sum(abs(float(b) - float(a)) for a, b in zip(knots[:-1], knots[1:])))
    except (TypeError, ValueError):
        return 0.0


def _steps(h, span, what="steps", name="h"):
    h, span = float(h), float(span)
    if not (h > 0 and span > 0):
        return None
    return (span / h, f"{name} = {h:g} s over {span:g} s is {span / h:.3g} {what}")


def _knot_samples(knots, spu) -> float:
    # samples of one period of signals.piecewise_linear: every segment has at least one
    # (each knot is a sample), more where it is long
    try:
        k = [float(x) for x in knots]
    except (TypeError, ValueError):
        return 0.0
    return float(sum(max(1.0, math.ceil(abs(b - a) * spu)) for a, b in zip(k[:-1], k[1:])))


def _work_drive(cfg):
    inp = _t(cfg, "input")
    kind = inp.get("type")
    if kind in ("sine", "two_harmonic"):
        n = float(inp.get("n", 20001))
        return {"samples": (n, f"input.n = {n:.3g} samples")}
    if kind == "piecewise_linear":
        per = float(inp.get("periods", 1))
        spu = float(inp.get("samples_per_unit", 200))
        n = per * _knot_samples(inp.get("knots_u", []), spu)
        return {"samples": (n, f"{per:g} period(s) of {len(inp.get('knots_u', []))} knots at "
                               f"{spu:g} samples per unit of input path is {n:.3g} samples")}
    return {}


def _rod_memory(cfg):
    # per vertex: the law's memory state (3 + 2·max_depth floats for the Preisach law,
    # max_depth 256) and the solver's vectors, kept for the trial and committed states
    # and the output; plus the Preisach plane of law.levels (Preisach.grid)
    n = float(_t(cfg, "rod").get("N", 40)) + 1.0
    lv = float(_t(cfg, "law").get("levels", 100))
    b = 8.0 * n * (3 + 2 * 256 + 32) * 3 + 48.0 * lv * lv
    return (b, f"a rod of rod.N = {n - 1:.3g} elements with a Preisach law of law.levels = "
               f"{lv:.3g} takes {size_words(b)}")


def _work_belt(cfg):
    sol = _t(cfg, "solver")
    t0, t_end = float(sol.get("t0", 1.6e-3)), float(sol.get("t_end", 3.3))
    out = {}
    method = sol.get("method", "projection" if _t(cfg, "tensioner").get("model") == "masing"
                     else "RK45")
    if str(method).casefold() == "projection" or "h" in sol:
        s = _steps(sol.get("h", 1e-5), t_end - t0)
        if s:
            out["steps"] = s
    s = _steps(sol.get("dt_out", 1e-5), t_end - t0, "output samples", "dt_out")
    if s:
        out["samples"] = s
    return out


def _work_frf(cfg):
    g, s = _t(cfg, "grid"), _t(cfg, "simulation")
    reduced = bool(g.get("reduced", False))
    f1 = g.get("reduced_f1", [13, 67, 120, 200, 300]) if reduced else g.get("f1", [0] * 16)
    n_om = float(g.get("reduced_n_omega", 24) if reduced else g.get("n_omega", 116))
    n_pts = len(g.get("models", ["mdm", "masing"])) * len(f1) * n_om
    out = {"points": (n_pts, f"{n_pts:.3g} grid points")}
    tw = s.get("t_window", [17.0, 20.0])
    st = _steps(s.get("h", 1e-5), float(tw[-1]) if tw else 20.0, "steps per point")
    if st:
        out["steps"] = st
    return out


def _work_frf_continuation(cfg):
    b, c = _t(cfg, "branches"), _t(cfg, "continuation")
    n = len(b.get("models", ["mdm", "masing"])) * len(b.get("f1", [13, 120, 300]))
    pts = float(n) * float(c.get("max_points", 500))
    return {"points": (pts, f"{n} branches of at most {c.get('max_points', 500)} orbits")}


def _work_cosim(cfg):
    s = _t(cfg, "simulation")
    st = _steps(s.get("H", 1e-5), float(s.get("t_end", 3.3)), "communication steps", "H")
    return {"steps": st} if st else {}


def _work_cantilever(cfg):
    lc = _t(cfg, "load")
    n = 4.0 * float(lc.get("cycles", 2)) * float(lc.get("steps_per_quarter", 25))
    return {"steps": (n, f"{n:.3g} load steps"), "memory": _rod_memory(cfg)}


def _work_dynamic(cfg):
    sc = _t(cfg, "solver")
    n = float(sc.get("periods", 8)) * float(sc.get("steps_per_period", 400))
    return {"steps": (n, f"solver.periods x solver.steps_per_period is {n:.3g} steps"),
            "memory": _rod_memory(cfg)}


def _work_protocol(default_points, rod=False):
    def work(cfg):
        pc = _t(cfg, "protocol")
        lv = pc.get("levels", [0] * 9)
        n = (len(lv) if isinstance(lv, list) else 9) * float(pc.get("cycles_per_level", 3)) \
            * float(pc.get("points_per_cycle", default_points))
        out = {"samples": (n, f"{n:.3g} protocol samples")}
        if rod:
            m = _rod_memory(cfg)
            out["memory"] = (m[0] + n * 8.0 * 16, m[1])
        return out
    return work


def _work_example1(cfg):
    r = _t(cfg, "run")
    n = len(r.get("gammas", [0] * 3)) * float(r.get("periods", 6)) \
        * float(r.get("samples_per_period", 2000))
    return {"samples": (n, f"{n:.3g} samples")}


def _work_convergence(cfg):
    r = _t(cfg, "run")
    n = float(r.get("periods", 4)) * _path_length(r.get("knots_u", [0.0, 1.0, 0.0])) \
        * float(r.get("samples_per_unit", 200))
    return {"samples": (n, f"{n:.3g} samples per gamma")}


def _work_minor(cfg):
    s = _t(cfg, "simulation")
    cases = cfg.get("cases", []) if isinstance(cfg.get("cases"), list) else []
    L = max([_path_length(c.get("knots_u", [])) for c in cases if isinstance(c, dict)] or [0.0])
    n = float(s.get("periods", 6)) * L * float(s.get("samples_per_unit", 100))
    return {"samples": (n, f"{n:.3g} samples per case")}


def _work_fig11(cfg):
    i = _t(cfg, "input")
    st = _steps(i.get("dt", 1e-3), float(i.get("periods", 4)) * float(i.get("period", 5.0)),
                "samples", "dt")
    return {"samples": st} if st else {}


def _work_masing(cfg):
    i = _t(cfg, "input")
    n = float(i.get("periods", 3)) * float(i.get("samples_per_period", 20000))
    return {"samples": (n, f"input.periods x input.samples_per_period is {n:.3g} samples")}


def _work_mslip_loops(cfg):
    n = 12.0 * float(_t(cfg, "input").get("n_per_segment", 400))
    return {"samples": (n, f"{n:.3g} samples")}


def _work_oscillator(cfg):
    h = float(_t(cfg, "solver").get("h", 1e-6))
    cases = cfg.get("cases", {}) if isinstance(cfg.get("cases"), dict) else {}
    worst = None
    for c in cases.values():
        if isinstance(c, dict):
            st = _steps(h, float(c.get("t_end", 0.5)))
            if st and (worst is None or st[0] > worst[0]):
                worst = st
    return {"steps": worst} if worst else {}


def _work_mr_rig(cfg):
    s, r = _t(cfg, "sampling"), _t(cfg, "rig")
    span = float(s.get("periods", 4)) * float(r.get("period", 5.0))
    fs = float(s.get("fs", 1000.0))
    st = _steps(1.0 / fs if fs > 0 else 0.0, span, "samples", "1/fs")
    return {"samples": st} if st else {}


def _work_bouc_wen(cfg):
    g = _t(cfg, "signals")
    fs = float(g.get("fs", 750.0))
    n_ms = float(g.get("N", 8192)) * float(g.get("multisine_periods", 2))
    rate = float(g.get("rate", 10.0)) / 60.0
    n_sw = fs * abs(float(g.get("f1", 50.0)) - float(g.get("f0", 20.0))) / rate if rate > 0 else 0.0
    n = n_ms + n_sw
    return {"samples": (n, f"signals.N x multisine_periods + fs x sweep duration is "
                           f"{n:.3g} samples")}


def _work_noel_schoukens(cfg):
    n = 8192.0 * float(_t(cfg, "fit").get("periods", 10)) + 8192 * 2 + 135001
    return {"samples": (n, f"fit.periods x 8192 training + 151385 test samples is {n:.3g}")}


WORK: dict[str, Callable[[dict], dict]] = {
    "drive": _work_drive,
    "noel-schoukens-identification": _work_noel_schoukens,
    "bouc-wen-benchmark": _work_bouc_wen,
    "belt-tensioner": _work_belt,
    "belt-tensioner-frf": _work_frf,
    "belt-tensioner-frf-continuation": _work_frf_continuation,
    "belt-tensioner-cosim": _work_cosim,
    "cable-cantilever-cyclic": _work_cantilever,
    "cable-dynamic": _work_dynamic,
    "cable-pure-bending": _work_protocol(80, rod=True),
    "lugre-example-1": _work_example1,
    "lugre-convergence": _work_convergence,
    "lugre-minor-loops": _work_minor,
    "mr-damper-fig11": _work_fig11,
    "masing-loop": _work_masing,
    "maxwell-slip-loops": _work_mslip_loops,
    "preisach-cable-protocol": _work_protocol(200),
    "maxwell-slip-oscillator": _work_oscillator,
    "mr-damper-rig": _work_mr_rig,
}


# -- resolution --------------------------------------------------------------------------------
class Runner:
    """A resolved runner: its name, the callable, its schema (or None) and work estimate."""

    def __init__(self, name: str, fn: Callable, schema: dict | None,
                 work: Callable | None = None):
        self.name, self.fn, self.schema, self.work = name, fn, schema, work

    def __call__(self, cfg, out, progress):
        return self.fn(cfg, out, progress)


def _import(spec: str) -> Callable:
    mod, fn = spec.split(":", 1)
    return getattr(importlib.import_module(mod), fn)


def _entry_points() -> dict:
    try:
        return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:  # noqa: BLE001 - a broken distribution must not break `run`
        return {}


def known_runners() -> list[str]:
    return sorted(set(REGISTRY) | set(_entry_points()))


def resolve(spec, scenario_path: str | None = None, *, trust: bool = False) -> Runner:
    """The runner a scenario's ``runner = ...`` names (see the module docstring).

    A ``module:function`` that is neither registered nor declared by an installed package
    is refused (ScenarioError, exit 2) unless ``trust`` is set, and even then only a
    module file in the scenario file's own directory is loaded."""
    if not isinstance(spec, str) or not spec:
        raise ScenarioError(f"runner must be a string naming a registered runner (got {spec!r})")
    by_path = {v: k for k, v in REGISTRY.items()}
    name = spec if spec in REGISTRY else by_path.get(spec)
    if name is not None:
        try:
            fn = _import(REGISTRY[name])
        except (ImportError, AttributeError) as e:
            raise ScenarioError(f"runner {name!r} is not available in this build: {e}") from None
        return Runner(name, fn, SCHEMAS.get(name), WORK.get(name))
    eps = _entry_points()
    ep = eps.get(spec) or next((e for e in eps.values() if e.value == spec), None)
    if ep is not None:
        try:
            fn = ep.load()
        except Exception as e:  # noqa: BLE001 - a plugin that fails to import is reported
            raise ScenarioError(f"runner {ep.name!r} (from an installed package) failed to "
                                f"load: {type(e).__name__}: {e}") from None
        return Runner(ep.name, fn, getattr(fn, "SCHEMA", None), getattr(fn, "WORK", None))
    if ":" not in spec:
        raise ScenarioError(f"unknown runner {spec!r}; known: {', '.join(known_runners())}")
    if not trust:
        raise ScenarioError(f"runner {spec!r} is not a registered runner; a scenario file is "
                            "data and may not import code (pass --trust-runner to run a "
                            "module that sits beside the scenario file)")
    return _local_runner(spec, scenario_path)


def _local_runner(spec: str, scenario_path: str | None) -> Runner:
    mod, fn = spec.split(":", 1)
    if scenario_path is None:
        raise ScenarioError(f"runner {spec!r}: a trusted module runner needs a scenario file")
    base = Path(scenario_path).resolve().parent
    parts = mod.split(".")
    if not mod or not all(p.isidentifier() for p in parts) or not fn.isidentifier():
        raise ScenarioError(f"runner {spec!r} must be module:function with Python identifiers")
    file = base.joinpath(*parts).with_suffix(".py")
    try:
        file.resolve().relative_to(base)
    except ValueError:
        raise ScenarioError(f"runner {spec!r}: module is outside the scenario's directory") from None
    if not file.is_file():
        raise ScenarioError(f"runner {spec!r}: no module file {file.name} in {base} (a trusted "
                            "runner is loaded only from the scenario file's directory)")
    uname = f"_hystmech_local_runner_{abs(hash(str(file)))}"
    loader = importlib.util.spec_from_file_location(uname, file)
    module = importlib.util.module_from_spec(loader)
    sys.modules[uname] = module
    try:
        loader.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001
        sys.modules.pop(uname, None)
        raise ScenarioError(f"runner {spec!r}: importing {file.name} failed: "
                            f"{type(e).__name__}: {e}") from None
    f = getattr(module, fn, None)
    if not callable(f):
        raise ScenarioError(f"runner {spec!r}: {file.name} has no function {fn!r}")
    return Runner(spec, f, getattr(f, "SCHEMA", None), getattr(f, "WORK", None))

