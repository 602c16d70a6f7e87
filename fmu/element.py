"""An FMU as a force element: ``FMUElement(path, inputs=("u", "v"), output="F")``.

Wraps an FMI 2.0 or 3.0 FMU (fmpy's low-level classes underneath; FMI 3.0 through
fmu/fmi3_adapter.py, which maps the FMI 2.0 calls below to their FMI 3.0 counterparts)
so that it can be driven by ``hystmech.drive`` and sit in assemblies like any law:

- co-simulation (``mode="cs"``): an ``"operator"`` element; ``advance`` is a small
  co-simulation master that steps the FMU over the input segment at the
  communication step ``step`` [s], giving it u at each communication point and the
  segment velocity v (first-order input extrapolation u(t) = u_k + v (t − t_k)).
  The element state is ``x = [t_fmu, F_end]`` (F_end: output at the end of the last
  step, with the segment's end input): when a solver re-advances from an earlier
  state (a rejected step) the FMU is rolled back with fmi2SetFMUstate. With
  ``error_control=True`` every communication step is checked by step doubling
  (one step h against two of h/2, the FMU rolled back between them) and halved
  until the force agrees to ``tol``.
- model exchange (``mode="me"``): a ``"smooth"`` element whose state is the FMU's
  continuous-state vector, rate = fmi2GetDerivatives, so that an assembly joins it
  to its own state and integrates everything monolithically. The force-element
  protocol has no time argument, so a foreign FMU (whose derivatives or output may
  depend on time) gets one more state, its time t [s] with rate 1: the kernels call
  fmi2SetTime(t) before fmi2GetDerivatives/fmi2GetReal whenever t changed
  (``time_state``; off for hystmech's own FMUs, whose laws are autonomous).
- model exchange with event indicators (inclusions, operators, laws with non-Lipschitz
  points, foreign FMUs with state or time events): an ``"operator"`` element that is
  its own FMI host over each input segment the solver hands it (fmu/me_events.py: the
  continuous states integrated by the one Dormand-Prince stepper, sign changes of the
  indicators located on the dense output, event mode and new discrete states there,
  fmi2CompletedIntegratorStep after every accepted step, time events honoured). The
  assembly methods that take operators ("projection", "auto") run it; the others
  refuse it and name "projection". State ``x = [t_fmu, continuous states, F_end]``.
  ``me_host`` overrides the choice (see the class docstring).

Kernels: by default (``compiled=None``) the element's kernels are the numba functions
of :mod:`hystmech.fmu.native`, which call the FMU's C entry points through their
addresses, so ``drive`` and the assembly solvers keep their compiled loops (co-simulation:
state ``x = [t_fmu, F_end]``, F_end the output at the end of the last step, used for
past communication points). With ``error_control=True`` or ``compiled=False`` the
kernels are Python methods making ctypes calls (same state), and the solvers
run their Python loops: correct, about 10 µs more per step.
"""
from __future__ import annotations

import atexit
import ctypes
import itertools
import sys
import math
import os
import shutil
import tempfile
import weakref
from ctypes import POINTER, byref, c_double, c_uint, c_void_p
from pathlib import Path

import numpy as np

from ..components.base import ForceElement, Param


from .native import FMUError, FMUKernelError  # noqa: E402 - FMUError is defined beside the kernels


# fmpy's native logger proxy (which formats the FMU's variadic messages) keeps ONE global
# Python logger: it is installed once, here, for the life of the process, and dispatches
# by instance name to the FMUElement that owns the instance (anything else is printed
# as fmpy prints it). A per-element callback would leave the proxy pointing at a freed
# callback once that element is gone.
_STORES: dict = {}
_CALLBACKS = None


def _dispatch_logger(env, name, status, category, message):
    store = _STORES.get(name)
    text = (message or b"").decode("utf-8", "replace")
    if store is None:
        label = ["OK", "WARNING", "DISCARD", "ERROR", "FATAL", "PENDING"][status] \
            if 0 <= status < 6 else str(status)
        print(f"[{label}] {text}")
        return
    store.append((int(status), text))
    del store[:-20]


def _callbacks():
    global _CALLBACKS
    if _CALLBACKS is None:
        from fmpy import calloc, free
        from fmpy.fmi2 import (fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                               fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)

        cb = fmi2CallbackFunctions()
        cb.logger = fmi2CallbackLoggerTYPE(_dispatch_logger)
        cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        try:
            from fmpy.logging import addLoggerProxy

            addLoggerProxy(byref(cb))
        except Exception:  # noqa: BLE001 - without the proxy messages are unformatted
            pass
        _CALLBACKS = (cb, cb.logger)
    return _CALLBACKS[0]


_KEY_COUNTER = itertools.count(1)
_ELEMENTS: dict = {}
_LIVE: "weakref.WeakSet" = weakref.WeakSet()


@atexit.register
def _close_all():
    # Free every FMU instance while the interpreter is still whole: an FMU that embeds
    # Python (pythonfmu) and is freed from __del__ during interpreter finalisation can
    # corrupt the heap ("corrupted double-linked list" seen once at exit).
    for el in list(_LIVE):
        try:
            el.close()
        except Exception:  # noqa: BLE001
            pass


def _kernel_error_lookup(key):
    """(tag naming the FMU file, the FMU's latest error messages) for FMUKernelError."""
    ref = _ELEMENTS.get(key)
    el = ref() if ref is not None else None
    if el is None:
        return "an imported FMU", ""
    msg = "; ".join(m for s, m in el._log if s >= 2)
    el._log.clear()
    # numba builds the exception object twice (once to check it, once to raise it): the
    # second construction must get the FMU's text the first one took from the log
    if msg:
        el._kernel_msg = msg
    else:
        msg, el._kernel_msg = el._kernel_msg, ""
    return el._tag, msg


FMUKernelError.lookup = staticmethod(_kernel_error_lookup)


def _generated_by_hystmech(md) -> bool:
    """The FMU was written by hystmech's exporter (generationTool "hystmech <version>";
    plain "hystmech" before versions were recorded): its laws are autonomous."""
    tool = (md.generationTool or "").strip()
    return tool == "hystmech" or tool.startswith("hystmech ")


class FMUElement(ForceElement):
    """An FMU used as a force element.

    path: the .fmu file. inputs: FMU input variable names receiving the displacement
    u [m] and the velocity v [m/s], as ``("u", "v")``, ``{"u": name, "v": name}`` or a
    single name (displacement only). output: name of the force output [N].
    mode: "cs" (co-simulation) or "me" (model exchange); default: co-simulation if
    the FMU offers it. step: communication step [s] (default: each input segment in
    one step). parameters: {name: value} start values set before initialisation (an FMI
    3.0 structural parameter, e.g. ``n_elements``, first, in Configuration Mode).
    rollback: keep an FMU state so that a solver may repeat a step (default: when the
    FMU can get/set its state). error_control, tol: step-doubling error control of the
    communication step (needs rollback). backend: "fmpy" (default) or "pyfmi" (FMI 2.0
    co-simulation and model exchange, FMI 3.0 model exchange, through PyFMI's low-level
    calls, fmu/pyfmi_backend.py; Python kernels). compiled:
    numba kernels calling the FMU's C functions directly (default: yes, except with
    error_control and with backend="pyfmi", which stay in Python, and for model exchange
    with event indicators, where compiled=True opts in: the compiled host takes a
    one-time numba compile of about a minute, cached on disk, then ~10 µs per assembly
    step instead of ~1.6 ms).
    Model exchange with event indicators (inclusions, operators, foreign FMUs with state
    events) makes an ``"operator"`` element that is its own FMI host over each input
    segment (fmu/me_events.py: event location, event mode, completed integrator steps,
    time events): assemblies run it with method "projection" (or "auto"); the smooth-only
    methods and "event" refuse it and name "projection". Its state is [t_fmu, continuous
    states, F_end]. me_host: None (default) = that host when the FMU declares event
    indicators or reports a time event at initialisation; True = always (e.g. a foreign
    FMU that needs fmi2CompletedIntegratorStep after every step); False = never: a
    "smooth" element integrated monolithically by the assembly methods, which then call
    neither event mode nor fmi2CompletedIntegratorStep and ignore the event indicators.
    Right only when the events carry no discrete state, e.g. indicators that merely mark
    non-Lipschitz points of a smooth law (hystmech's ModifiedDahl, Bouc-Wen); WRONG for
    inclusions and operators (Masing, Preisach ...), whose memory moves only at events.
    Refused for FMUs with time events.
    time_state (model exchange): append the FMU time t [s] (rate 1, starting at 0) to
    the state and set it with fmi2SetTime before every derivative/output evaluation;
    default None = yes unless the FMU was generated by hystmech (autonomous laws).
    """

    kind = "operator"
    param_info = (Param("path", "", "FMU file"),)

    def __init__(self, path, *, inputs=("u", "v"), output="F", mode=None, step=None,
                 parameters=None, rollback=None, error_control=False, tol=1e-6,
                 backend="fmpy", instance_name=None, compiled=None, time_state=None,
                 me_host=None):
        if backend not in ("fmpy", "pyfmi"):
            raise FMUError(f"backend must be 'fmpy' or 'pyfmi' (got {backend!r})")
        if backend == "pyfmi":
            from .pyfmi_backend import available

            if not available():
                raise FMUError("backend='pyfmi' needs pyfmi, which is not installed "
                               "(conda-forge's pyfmi, or a wheel built from its sources); "
                               "use backend='fmpy'")
            if compiled:
                raise FMUError("backend='pyfmi' runs the Python kernels: use compiled=None "
                               "or False (compiled kernels need backend='fmpy')")
            compiled = False
        self.backend = backend
        self.path = Path(path)
        self._tag = f"FMU {str(self.path)!r}"
        if not self.path.is_file():
            raise FMUError(f"FMU file not found: {str(self.path)!r}")
        import fmpy
        from fmpy import read_model_description

        try:
            md = read_model_description(str(self.path), validate=False)
        except Exception as e:  # noqa: BLE001 - zip, XML or schema errors alike
            raise FMUError(f"{self._tag} is not a valid FMU: {str(e).splitlines()[0]}") from None
        if md.fmiVersion not in ("2.0", "3.0"):
            raise FMUError(f"{self._tag}: FMI {md.fmiVersion} FMUs are not supported as "
                           f"elements (FMI 2.0 and 3.0)")
        self.md = md
        self.fmi3 = md.fmiVersion == "3.0"
        has_cs, has_me = md.coSimulation is not None, md.modelExchange is not None
        if mode is None:  # PyFMI imports FMI 3.0 model exchange only
            mode = "cs" if has_cs and not (self.fmi3 and backend == "pyfmi") else "me"
        if self.fmi3 and backend == "pyfmi" and mode == "cs":
            raise FMUError(f"{self._tag}: backend='pyfmi' runs FMI 3.0 FMUs in model "
                           f"exchange only (PyFMI does not import FMI 3.0 co-simulation); "
                           f"use mode='me' or backend='fmpy'")
        if mode not in ("cs", "me"):
            raise FMUError(f"mode must be 'cs' or 'me' (got {mode!r})")
        if (mode == "cs" and not has_cs) or (mode == "me" and not has_me):
            raise FMUError(f"{self._tag} does not support "
                           f"{'co-simulation' if mode == 'cs' else 'model exchange'}")
        self.mode = mode
        plats = fmpy.supported_platforms(str(self.path))
        here = fmpy.platform       # fmpy names FMI 3.0's x86_64-linux linux64 too
        if here not in plats:
            raise FMUError(f"{self._tag} has no binary for this platform ({here}); "
                           f"it has: {', '.join(plats) or 'none'}")
        self.variables = {v.name: v for v in md.modelVariables}
        if isinstance(inputs, str):
            inputs = {"u": inputs}
        elif isinstance(inputs, dict):
            inputs = dict(inputs)
        else:
            inputs = dict(zip(("u", "v"), inputs))
        unknown = [k for k in inputs if k not in ("u", "v")]
        if unknown or "u" not in inputs:
            raise FMUError("inputs must name the FMU inputs for 'u' (and optionally 'v')")
        self.inputs = {k: n for k, n in inputs.items() if n is not None}
        for role, name in self.inputs.items():
            self._check_var(name, ("input",), f"input {role}")
        self._check_var(output, ("output", "local"), "output")
        self.output = output
        self._vr_in = (c_uint * len(self.inputs))(
            *[self.variables[self.inputs[k]].valueReference for k in ("u", "v") if k in self.inputs])
        self._has_v = "v" in self.inputs
        self._val_in = (c_double * len(self.inputs))()
        self._vr_out = (c_uint * 1)(self.variables[output].valueReference)
        self._val_out = (c_double * 1)()
        self.parameters = dict(parameters or {})
        # FMI 3.0 structural parameters (array lengths, fmu/fmi3_structural.py): set in
        # Configuration Mode right after instantiation, before the other parameters
        self.structural = {}
        for name in [n for n, x in self.parameters.items() if getattr(
                self.variables.get(n), "causality", None) == "structuralParameter"]:
            val = self.parameters.pop(name)
            if isinstance(val, (bool, np.bool_)) or not isinstance(val, (int, np.integer)) \
                    or val < 1:
                raise FMUError(f"{self._tag}: structural parameter {name!r} must be an "
                               f"integer >= 1 (got {val!r})")
            if backend == "pyfmi":
                raise FMUError(f"{self._tag}: structural parameter {name!r} is set through "
                               f"backend='fmpy' only")
            self.structural[name] = int(val)
        for name in self.parameters:
            v = self._check_var(name, ("parameter", "input", "local", "calculatedParameter"),
                                "parameter")
            if v.type not in ("Real", "Float64"):
                raise FMUError(f"{self._tag}: parameter {name!r} is {v.type}; only Real "
                               f"(Float64) parameters can be set")
        if step is not None and not (isinstance(step, (int, float)) and step > 0
                                     and math.isfinite(step)):
            raise FMUError(f"step must be in (0, inf) s (got {step!r})")
        self.step = step
        if not (isinstance(tol, (int, float)) and 0 < tol < 1):
            raise FMUError(f"tol must be in (0, 1) (got {tol!r})")
        self.tol = float(tol)
        self._unzip = tempfile.mkdtemp(prefix="hystmech-fmu-")
        try:
            fmpy.extract(str(self.path), unzipdir=self._unzip)
        except Exception as e:  # noqa: BLE001
            raise FMUError(f"{self._tag} cannot be extracted: {e}") from None
        self._log: list = []
        self._kernel_msg = ""
        self._cb = _callbacks()
        cap = md.coSimulation if mode == "cs" else md.modelExchange
        can_state = bool(getattr(cap, "canGetAndSetFMUstate", False))
        self.rollback = can_state if rollback is None else bool(rollback)
        if self.rollback and not can_state:
            raise FMUError(f"{self._tag} cannot get/set its state: rollback is impossible")
        self.error_control = bool(error_control)
        if self.error_control and not can_state:
            raise FMUError(f"{self._tag} cannot get/set its state: error_control needs rollback")
        self._instance_name = instance_name or f"{cap.modelIdentifier}_{id(self):x}"
        _STORES[self._instance_name.encode()] = self._log
        self._fmu = None
        self._open(cap.modelIdentifier)
        self._start()
        if compiled and self.error_control:
            raise FMUError("error_control runs in Python: use compiled=False or None")
        # model exchange with event indicators or time events: the element is its own FMI
        # host over each input segment (fmu/me_events.py), an "operator" for assemblies
        self.nz = md.numberOfEventIndicators if mode == "me" else 0
        if me_host not in (None, True, False):
            raise FMUError(f"me_host must be None, True or False (got {me_host!r})")
        needs_host = mode == "me" and (self.nz > 0 or math.isfinite(self._t_event))
        if me_host is False and mode == "me" and math.isfinite(self._t_event):
            raise FMUError(f"{self._tag} has time events: it cannot be integrated as a "
                           f"smooth right-hand side (me_host=False); use me_host=None or True")
        self.me_events = mode == "me" and (me_host is True or (needs_host and me_host is None))
        self.nx = md.numberOfContinuousStates if mode == "me" else 0
        arrays = [k for k, val in self.parameters.items() if np.ndim(val) > 0]
        arrays += list(self.structural)  # a restart must configure again: Python
        if compiled and arrays:
            raise FMUError(f"{self._tag}: the array parameter {arrays[0]!r} (FMI 3.0 array) "
                           f"is set by the Python kernels: use compiled=None or False")
        if arrays:
            compiled = False
        if compiled is None:
            # the compiled event host costs a one-time numba compile of ~1 min (cached on
            # disk after): opt-in, for long runs (~10 µs instead of ~1.6 ms per step)
            compiled = not self.error_control and not self.me_events
        if time_state is None:
            time_state = mode == "me" and not _generated_by_hystmech(md)
        self.time_state = bool(time_state) and mode == "me" and not self.me_events
        self.compiled = bool(compiled) and (mode == "cs" or self.me_events or
                                            md.numberOfContinuousStates > 0 or self.time_state)
        self._ci = self._cf = None
        if self.compiled:
            self._native_setup()
        if mode == "cs" and self.compiled:
            from . import native

            self.kind = "operator"
            x0 = [0.0, float(self._cf[native.CF_F0])]
            self.state_names = ("t_fmu", "F_end")
            self.advance, self.force, self.rate = native.cs_advance, native.cs_force, None
        elif mode == "cs":
            self.kind = "operator"
            x0 = [0.0, self._get_output()]
            self.state_names = ("t_fmu", "F_end")
            self.advance, self.force, self.rate = self._cs_advance, self._force, None
        elif self.me_events:
            self.kind = "operator"
            self.nx = md.numberOfContinuousStates
            self._xbuf = np.zeros(self.nx)
            self._dx = np.zeros(self.nx)
            self._zbuf = np.zeros(self.nz)
            self._xscale_c = self._nominals()
            self.state_names = ("t_fmu",) + self._cont_names() + ("F_end",)
            self.x_scale = np.concatenate([[1.0], self._xscale_c, [1.0]])
            x0 = np.concatenate([[0.0], self._get_states(), [self._get_output()]])
            self._me_reset_host()
            self.advance, self.force, self.rate = self._me_event_advance, self._force, None
            if self.compiled:
                from . import native

                self.advance, self.force = native.ev_advance, native.ev_force
        else:
            self.kind = "smooth"
            self.nx = md.numberOfContinuousStates
            self._xbuf = np.zeros(self.nx)
            self._dx = np.zeros(self.nx)
            x0 = self._get_states()
            self.state_names = self._cont_names()
            self.x_scale = self._nominals()
            if self.time_state:
                x0 = np.append(x0, 0.0)
                self.state_names = self.state_names + ("time",)
                self.x_scale = np.append(self.x_scale, 1.0)
            self.advance, self.force, self.rate = self._me_advance, self._force, self._rate
            if self.compiled:
                from . import native

                self.force, self.rate = native.me_force, native.me_rate
        self.jac = None
        p = np.zeros(0)
        if self.compiled:
            p = np.array([float(self._ci.ctypes.data), float(self._cf.ctypes.data)])
        self._setup(dict(path=str(self.path), mode=mode, step=step), p, x0)

    # -- set-up ------------------------------------------------------------------------
    def _native_setup(self):
        """The blocks read by the compiled kernels (fmu/native.py): C entry points of
        the loaded binary, component, value references, parameters, FMU time."""
        from . import native as nv

        dll = self._fmu.dll

        def addr(name):
            try:
                return nv.address(getattr(dll, name))
            except AttributeError:
                return 0

        npar = len(self.parameters)
        nx = self.md.numberOfContinuousStates if self.mode == "me" else 0
        nz = self.nz if self.me_events else 0
        ci = np.zeros(nv.NCI, dtype=np.int64)
        cf = np.zeros(nv.CF_PAR + npar + 3 * nx + 2 * nz)
        vr = np.zeros(3 + npar, dtype=np.uint32)
        vr[0] = self._vr_in[0]
        vr[1] = self._vr_in[1] if self._has_v else 0
        vr[2] = self._vr_out[0]
        for i, (name, val) in enumerate(self.parameters.items()):
            vr[3 + i] = self.variables[name].valueReference
            cf[nv.CF_PAR + i] = float(val)
        comp = self._fmu.component
        comp = getattr(comp, "value", comp)
        names = {nv.CI_SET: "fmi2SetReal", nv.CI_GET: "fmi2GetReal", nv.CI_STEP: "fmi2DoStep",
                 nv.CI_GETST: "fmi2GetFMUstate", nv.CI_SETST: "fmi2SetFMUstate",
                 nv.CI_RESET: "fmi2Reset", nv.CI_SETUP: "fmi2SetupExperiment",
                 nv.CI_ENTER: "fmi2EnterInitializationMode",
                 nv.CI_EXIT: "fmi2ExitInitializationMode",
                 nv.CI_SETX: "fmi2SetContinuousStates", nv.CI_GETDX: "fmi2GetDerivatives",
                 nv.CI_TIME: "fmi2SetTime", nv.CI_GETZ: "fmi2GetEventIndicators",
                 nv.CI_COMPLETED: "fmi2CompletedIntegratorStep",
                 nv.CI_ENTER_EV: "fmi2EnterEventMode", nv.CI_NEWDISC: "fmi2NewDiscreteStates",
                 nv.CI_ENTER_CT: "fmi2EnterContinuousTimeMode",
                 nv.CI_GETX: "fmi2GetContinuousStates"}
        if self.fmi3:
            from .fmi3_adapter import NATIVE

            names = {nv.CI_SET: NATIVE["set"], nv.CI_GET: NATIVE["get"],
                     nv.CI_STEP: NATIVE["step"], nv.CI_GETST: NATIVE["getst"],
                     nv.CI_SETST: NATIVE["setst"], nv.CI_RESET: NATIVE["reset"],
                     nv.CI_SETUP: NATIVE["setup"], nv.CI_ENTER: NATIVE["enter"],
                     nv.CI_EXIT: NATIVE["exit"], nv.CI_SETX: NATIVE["setx"],
                     nv.CI_GETDX: NATIVE["getdx"], nv.CI_TIME: NATIVE["time"],
                     nv.CI_GETZ: NATIVE["getz"], nv.CI_COMPLETED: NATIVE["completed"],
                     nv.CI_ENTER_EV: NATIVE["enter_ev"], nv.CI_NEWDISC: NATIVE["newdisc"],
                     nv.CI_ENTER_CT: NATIVE["enter_ct"], nv.CI_GETX: NATIVE["getx"]}
        for slot, name in names.items():
            ci[slot] = addr(name)
        ci[nv.CI_VER] = 3 if self.fmi3 else 2
        need = [nv.CI_SET, nv.CI_GET] + ([nv.CI_STEP, nv.CI_RESET, nv.CI_SETUP, nv.CI_ENTER,
                                          nv.CI_EXIT] if self.mode == "cs" else
                                         [nv.CI_SETX, nv.CI_GETDX])
        if self.me_events:
            need += [nv.CI_TIME, nv.CI_GETZ, nv.CI_COMPLETED, nv.CI_ENTER_EV, nv.CI_NEWDISC,
                     nv.CI_ENTER_CT, nv.CI_GETX, nv.CI_RESET, nv.CI_SETUP, nv.CI_ENTER,
                     nv.CI_EXIT]
        elif self.time_state:
            need.append(nv.CI_TIME)
        else:
            ci[nv.CI_TIME] = 0                # the kernels set no time
        if self.rollback:
            need += [nv.CI_GETST, nv.CI_SETST]
        missing = [names[k] for k in need if not ci[k]]
        if missing:
            raise FMUError(f"{self._tag}: its binary does not export {', '.join(missing)}")
        ci[nv.CI_COMP] = int(comp or 0)
        ci[nv.CI_NIN] = len(self._vr_in)
        ci[nv.CI_ROLLBACK] = int(self.rollback)
        ci[nv.CI_NPAR] = npar
        ci[nv.CI_NX] = nx
        ci[nv.CI_NZ] = nz
        ci[nv.CI_FRESH] = 1
        if self.me_events:
            cf[nv.CF_TEVENT] = self._t_event
            cf[nv.CF_PAR + npar + 2 * nx + 2 * nz:] = self._nominals()
        ci[nv.CI_VR] = vr.ctypes.data
        ci[nv.CI_CF] = cf.ctypes.data
        key = next(_KEY_COUNTER)
        ci[nv.CI_KEY] = key
        _ELEMENTS[key] = weakref.ref(self)
        cf[nv.CF_STEP] = self.step or 0.0
        cf[nv.CF_TSET] = math.nan             # FMU time unknown to the kernels
        # p carries the two block addresses as floats: exact below 2**53
        if max(ci.ctypes.data, cf.ctypes.data) >= 2 ** 53:
            raise FMUError(f"{self._tag}: addresses beyond 2**53; use compiled=False")
        self._ci, self._cf, self._vr = ci, cf, vr
        if self.mode == "cs":
            cf[nv.CF_F0] = self._get_output()

    def _native_reset(self):
        from . import native as nv

        if self.me_events:
            nv.ev_restart(self._ci, self._cf, 0.0, 0.0)
        else:
            nv.restart(self._ci, self._cf, 0.0, 0.0)

    def _check_var(self, name, causalities, role):
        v = self.variables.get(name)
        if v is None:
            known = ", ".join(n for n, x in self.variables.items() if x.causality in causalities)
            raise FMUError(f"{self._tag} has no variable {name!r} (for the {role}); "
                           f"candidates: {known or 'none'}")
        if v.causality not in causalities:
            raise FMUError(f"{self._tag}: variable {name!r} has causality {v.causality!r}, "
                           f"cannot be the {role}")
        if v.type not in ("Real", "Float64"):
            raise FMUError(f"{self._tag}: variable {name!r} is {v.type}, not Real/Float64 "
                           f"({role})")
        return v

    def _open(self, ident):
        from fmpy.fmi2 import FMU2Model, FMU2Slave

        cls = FMU2Slave if self.mode == "cs" else FMU2Model
        try:
            if self.backend == "pyfmi":
                from .pyfmi_backend import PyFMI

                self._fmu = PyFMI(self.mode, self.path, self._log, self._unzip, self.fmi3)
            elif self.fmi3:
                from .fmi3_adapter import Fmi3

                self._fmu = Fmi3(self.mode, self.md.guid, self._unzip, ident,
                                 self._instance_name, self._log)
            else:
                self._fmu = cls(guid=self.md.guid, unzipDirectory=self._unzip,
                                modelIdentifier=ident, instanceName=self._instance_name)
        except Exception as e:  # noqa: BLE001
            raise FMUError(f"{self._tag}: cannot load its binary: {e}") from None
        _LIVE.add(self)
        if self.fmi3 or self.backend == "pyfmi":  # adapters: FMI 2.0 C signatures
            a = self._fmu
            self._c_set, self._c_get = a.c_set, a.c_get
            if self.mode == "cs":
                self._c_step = a.c_step
            else:
                self._c_setx, self._c_getdx, self._c_time = a.c_setx, a.c_getdx, a.c_time
            return
        dll = self._fmu.dll
        # raw C entry points (no Python status wrapper) for the per-step calls
        self._c_set = dll.fmi2SetReal
        self._c_set.argtypes = [c_void_p, POINTER(c_uint), ctypes.c_size_t, POINTER(c_double)]
        self._c_get = dll.fmi2GetReal
        self._c_get.argtypes = [c_void_p, POINTER(c_uint), ctypes.c_size_t, POINTER(c_double)]
        if self.mode == "cs":
            self._c_step = dll.fmi2DoStep
            self._c_step.argtypes = [c_void_p, c_double, c_double, ctypes.c_int]
        else:
            self._c_setx = dll.fmi2SetContinuousStates
            self._c_setx.argtypes = [c_void_p, POINTER(c_double), ctypes.c_size_t]
            self._c_getdx = dll.fmi2GetDerivatives
            self._c_getdx.argtypes = [c_void_p, POINTER(c_double), ctypes.c_size_t]
            self._c_time = dll.fmi2SetTime
            self._c_time.argtypes = [c_void_p, c_double]
        for f in (self._c_set, self._c_get):
            f.restype = ctypes.c_int

    def _call(self, what, fn, *args):
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - fmpy raises plain exceptions
            raise self._error(what, str(e)) from None

    def _error(self, what, detail=""):
        msg = "; ".join(m for s, m in self._log if s >= 2) or detail
        self._log.clear()
        return FMUError(f"{self._tag}: {what} failed" + (f": {msg}" if msg else ""))

    def _start(self, u0=0.0, v0=0.0):
        f = self._fmu
        self._call("fmi2Instantiate", f.instantiate, False, self._cb)
        self._configure()
        self._call("fmi2SetupExperiment", f.setupExperiment, None, 0.0)
        self._call("fmi2EnterInitializationMode", f.enterInitializationMode)
        for name, val in self.parameters.items():
            vr = self.variables[name].valueReference
            try:
                # an FMI 3.0 array parameter takes all its values in one call
                f.setReal([vr], [float(x) for x in np.ravel(val)])
            except Exception as e:  # noqa: BLE001
                raise self._error(f"setting parameter {name!r} = {val!r}", str(e)) from None
        self._set_inputs(u0, v0)
        self._call("fmi2ExitInitializationMode", f.exitInitializationMode)
        self._t_event = math.inf
        if self.mode == "me":
            self._t_event = self._event_iteration()
            self._call("fmi2EnterContinuousTimeMode", f.enterContinuousTimeMode)
        self._t = 0.0
        self._forget_time()
        self._snap = {}
        self._snap_order = []
        self._fresh = (u0, v0)  # inputs of the initialisation, until the first step
        self._hist = {}         # t -> (u, v, F) at past communication points

    def _configure(self):
        """FMI 3.0: the structural parameters in Configuration Mode (after instantiation
        and after a reset, which restores their start values)."""
        for name, n in self.structural.items():
            self._call(f"setting structural parameter {name!r} = {n}", self._fmu.configure,
                       self.variables[name].valueReference, n)

    def _event_iteration(self):
        """fmi2NewDiscreteStates until no more is needed; the next time event [s] (inf
        if none)."""
        f = self._fmu
        while True:
            more, terminate, _, _, defined, t_next = self._call("fmi2NewDiscreteStates",
                                                                f.newDiscreteStates)
            if terminate:
                raise FMUError(f"{self._tag}: the FMU requested termination")
            if not more:
                return float(t_next) if defined and math.isfinite(t_next) else math.inf

    def _restart(self, u0=0.0, v0=0.0):
        """Back to t = 0 with the initial state (a new drive() starting over); the
        inputs at t = 0 are set during initialisation, as an FMI master does."""
        f = self._fmu
        self._free_snaps()
        self._hist = {}
        self._call("fmi2Reset", f.reset)
        self._configure()
        self._call("fmi2SetupExperiment", f.setupExperiment, None, 0.0)
        self._call("fmi2EnterInitializationMode", f.enterInitializationMode)
        for name, val in self.parameters.items():
            f.setReal([self.variables[name].valueReference], [float(x) for x in np.ravel(val)])
        self._set_inputs(u0, v0)
        self._call("fmi2ExitInitializationMode", f.exitInitializationMode)
        if self.mode == "me":
            self._t_event = self._event_iteration()
            self._call("fmi2EnterContinuousTimeMode", f.enterContinuousTimeMode)
        self._t = 0.0
        self._forget_time()
        self._fresh = (u0, v0)
        if self.me_events:
            self._me_reset_host()

    def _initial_inputs(self, u, v):
        """At t = 0 before any step: re-initialise with the actual initial inputs so
        that the FMU's start state sees u(0) (not a jump from 0)."""
        if self._fresh is not None and self._fresh != (u, v) and self._t == 0.0:
            self._restart(u, v)

    def _set_inputs(self, u, v):
        self._val_in[0] = u
        if self._has_v:
            self._val_in[1] = v
        st = self._c_set(self._fmu.component, self._vr_in, len(self._val_in), self._val_in)
        if st > 1:
            raise self._error(f"fmi2SetReal of input {self.inputs['u']!r} = {u!r}")

    def _get_output(self):
        st = self._c_get(self._fmu.component, self._vr_out, 1, self._val_out)
        if st > 1:
            raise self._error(f"fmi2GetReal of output {self.output!r}")
        return self._val_out[0]

    # -- state saving (rollback) ---------------------------------------------------------
    def _save(self, t):
        if t in self._snap:
            st = self._snap[t]
            self._call("fmi2GetFMUstate", self._fmu.fmi2GetFMUstate, self._fmu.component,
                       byref(st))
            return
        st = c_void_p()
        self._call("fmi2GetFMUstate", self._fmu.fmi2GetFMUstate, self._fmu.component, byref(st))
        self._snap[t] = st
        self._snap_order.append(t)
        if len(self._snap_order) > 4:  # solvers only ever go back one step or two
            old = self._snap_order.pop(0)
            s = self._snap.pop(old)
            self._fmu.fmi2FreeFMUstate(self._fmu.component, byref(s))

    def _restore(self, t):
        self._call("fmi2SetFMUstate", self._fmu.fmi2SetFMUstate, self._fmu.component,
                   self._snap[t])
        self._t = t
        if self.me_events:
            self._forget_time()
            self._z_last, self._t_event, self._h_last = self._host_snap[t]

    def _free_snaps(self):
        for s in self._snap.values():
            try:
                self._fmu.fmi2FreeFMUstate(self._fmu.component, byref(s))
            except Exception:  # noqa: BLE001
                pass
        self._snap.clear()
        self._snap_order.clear()

    def _sync(self, t0):
        """Bring the FMU to time t0 (the state a solver hands back)."""
        if t0 == self._t:
            return
        if t0 in self._snap:
            self._restore(t0)
        elif t0 == 0.0:
            self._restart()
        else:
            raise FMUError(f"{self._tag}: cannot go back to t = {t0!r} s (FMU at "
                           f"t = {self._t!r} s; rollback={'on' if self.rollback else 'off'})")

    # -- kernels: co-simulation --------------------------------------------------------
    def _do_step(self, t, h):
        st = self._c_step(self._fmu.component, t, h, 1)
        if st > 1:
            raise self._error(f"fmi2DoStep(t = {t!r}, h = {h!r})")

    def _cs_advance(self, x, u0, u1, dt, v, p, rtol):
        t0 = float(x[0])
        self._sync(t0)
        if t0 == 0.0:
            self._initial_inputs(u0, v)
        self._fresh = None
        if self.rollback:
            self._save(t0)
        n = 1 if self.step is None else max(1, int(math.ceil(dt / self.step - 1e-9)))
        h = dt / n
        t = t0
        if self.error_control:
            t = self._controlled(t0, dt, u0, v, h)
        else:
            for i in range(n):
                self._set_inputs(u0 + v * (t - t0), v)
                self._do_step(t, h)
                t = t0 + (i + 1) * h
        self._t = t
        x[0] = t
        if x.size > 1:
            self._set_inputs(u1, v)
            x[1] = self._get_output()

    def _controlled(self, t0, dt, u0, v, h):
        """Step doubling with rollback: accept a step when one step of h and two of
        h/2 give forces within tol (relative to the force scale seen so far)."""
        t, end = t0, t0 + dt
        tmp = c_void_p()
        f = self._fmu
        self._call("fmi2GetFMUstate", f.fmi2GetFMUstate, f.component, byref(tmp))
        try:
            while t < end - 1e-15 * max(1.0, abs(end)):
                h = min(h, end - t)
                self._call("fmi2GetFMUstate", f.fmi2GetFMUstate, f.component, byref(tmp))
                self._set_inputs(u0 + v * (t - t0), v)
                self._do_step(t, h)
                F1 = self._get_output()
                self._call("fmi2SetFMUstate", f.fmi2SetFMUstate, f.component, tmp)
                self._set_inputs(u0 + v * (t - t0), v)
                self._do_step(t, 0.5 * h)
                self._set_inputs(u0 + v * (t + 0.5 * h - t0), v)
                self._do_step(t + 0.5 * h, 0.5 * h)
                F2 = self._get_output()
                self._Fscale = max(getattr(self, "_Fscale", 0.0), abs(F2))
                err = abs(F1 - F2) / (self.tol * max(self._Fscale, 1e-300))
                if err <= 1.0 or h <= 1e-12 * dt:
                    t += h
                    if err < 0.25 and self.step is None:
                        h *= 2.0
                else:
                    self._call("fmi2SetFMUstate", f.fmi2SetFMUstate, f.component, tmp)
                    h *= 0.5
        finally:
            f.fmi2FreeFMUstate(f.component, byref(tmp))
        return end

    def _force(self, x, u, v, p):
        if self.me_events:
            t = float(x[0])
            if t == 0.0 and self._fresh is not None:
                self._initial_inputs(u, v)
            elif t != self._t:
                # a past point (results evaluated after the run): the output the host
                # got there, else the one stored at the end of the segment
                rec = self._hist.get(t)
                return rec[2] if rec is not None and rec[:2] == (u, v) else float(x[-1])
            self.put(t, x[1:1 + self.nx], u, v)
            F = self._get_output()
            self._hist[t] = (u, v, F)
            return F
        if self.mode == "me":
            if self._fresh is not None:
                self._initial_inputs(u, v)
            self._put_states(x)
            self._set_inputs(u, v)
            return self._get_output()
        t = float(x[0])
        if t != self._t:
            rec = self._hist.get(t)
            if rec is not None and (rec[0] == u and rec[1] == v or t != 0.0):
                # a past communication point (solvers evaluate stored states after the
                # run): the output the FMU gave there
                return rec[2]
            self._sync(t)
        if t == 0.0 and self._fresh is not None:
            self._initial_inputs(u, v)
        self._set_inputs(u, v)
        F = self._get_output()
        self._hist[t] = (u, v, F)
        return F

    # -- kernels: model exchange ---------------------------------------------------------
    def _cont_names(self):
        names = tuple(v.derivative.name for v in self.md.modelVariables
                      if v.derivative is not None)
        return names if len(names) == self.nx else tuple(f"x{i}" for i in range(self.nx))

    def _nominals(self):
        nom = np.ones(self.nx)
        if self.nx:
            try:
                self._fmu.getNominalsOfContinuousStates(
                    nom.ctypes.data_as(POINTER(c_double)), self.nx)
            except Exception:  # noqa: BLE001 - nominals are optional advice
                nom = np.ones(self.nx)
        return np.abs(nom)

    def _get_states(self):
        x = np.zeros(self.nx)
        if self.nx:
            self._call("fmi2GetContinuousStates", self._fmu.getContinuousStates,
                       x.ctypes.data_as(POINTER(c_double)), self.nx)
        return x

    def _forget_time(self):
        # after (re-)initialisation: the next evaluation sets the time again
        self._t_set = math.nan
        if getattr(self, "_cf", None) is not None:
            from .native import CF_TSET

            self._cf[CF_TSET] = math.nan

    def _set_time(self, t):
        """fmi2SetTime(t) when t differs from the time last set (kept in the compiled
        kernels' block too, so both paths skip redundant calls alike)."""
        if t != self._t_set:
            if self._c_time(self._fmu.component, t) > 1:
                raise self._error(f"fmi2SetTime({t!r})")
            self._t_set = t
            if self._cf is not None:
                from .native import CF_TSET

                self._cf[CF_TSET] = t

    def _put_states(self, x):
        if self.time_state:
            self._set_time(float(x[self.nx]))
        if self.nx:
            self._xbuf[:] = x[:self.nx]
            st = self._c_setx(self._fmu.component, self._xbuf.ctypes.data_as(POINTER(c_double)),
                              self.nx)
            if st > 1:
                raise self._error("fmi2SetContinuousStates")

    def _rate(self, x, u, v, p, out):
        self._put_states(x)
        self._set_inputs(u, v)
        if self.nx:
            st = self._c_getdx(self._fmu.component, self._dx.ctypes.data_as(POINTER(c_double)),
                               self.nx)
            if st > 1:
                raise self._error("fmi2GetDerivatives")
            out[:self.nx] = self._dx
        if self.time_state:
            out[self.nx] = 1.0

    def _me_advance(self, x, u0, u1, dt, v, p, rtol):
        from ..components._ode import rk_advance

        if self._fresh is not None:
            self._initial_inputs(u0, v)
            self._fresh = None
        t0 = float(x[self.nx]) if self.time_state else self._t
        if self.n_states and self.compiled:
            from .native import me_rate

            rk_advance(me_rate, x, u0, dt, v, self.p, rtol, self.x_scale)
        elif self.n_states:
            rk_advance.py_func(self._rate, x, u0, dt, v, p, rtol, self.x_scale)
        self._t = t0 + dt
        if self.time_state:
            x[self.nx] = self._t
        self._set_time(self._t)
        self._put_states(x)
        self._set_inputs(u1, v)
        if getattr(self.md.modelExchange, "needsCompletedIntegratorStep", True):
            enter, term = self._call("fmi2CompletedIntegratorStep",
                                     self._fmu.completedIntegratorStep)
            if term:
                raise FMUError(f"{self._tag}: the FMU requested termination")
            if enter:
                f = self._fmu
                self._call("fmi2EnterEventMode", f.enterEventMode)
                self._event_iteration()
                self._call("fmi2EnterContinuousTimeMode", f.enterContinuousTimeMode)
                x[:self.nx] = self._get_states()

    # -- kernels: model exchange with events (an "operator": fmu/me_events.py) ---------------
    # The FMU is its own memory: x = [t_fmu, continuous states, F_end] records where it
    # is; the host record (indicators at the end of the last segment, pending time
    # event, last step) travels with every saved FMU state.
    def _me_reset_host(self):
        self._z_last = None
        self._h_last = 0.0
        self._host_snap = {}

    def put(self, t, xc, u, v):
        """FMU time t [s], continuous states xc and inputs (u [m], v [m/s])."""
        self._set_time(t)
        if self.nx:
            self._xbuf[:] = xc
            if self._c_setx(self._fmu.component, self._xbuf.ctypes.data_as(POINTER(c_double)),
                            self.nx) > 1:
                raise self._error("fmi2SetContinuousStates")
        self._set_inputs(u, v)

    def derivatives(self, out):
        """ẋ of the continuous states at what put() set."""
        if self._c_getdx(self._fmu.component, self._dx.ctypes.data_as(POINTER(c_double)),
                         self.nx) > 1:
            raise self._error("fmi2GetDerivatives")
        out[:] = self._dx

    def indicators(self, out):
        """The event indicators at what put() set."""
        self._call("fmi2GetEventIndicators", self._fmu.getEventIndicators,
                   self._zbuf.ctypes.data_as(POINTER(c_double)), self.nz)
        out[:] = self._zbuf

    def states(self, out):
        out[:] = self._get_states()

    def completed(self):
        """fmi2CompletedIntegratorStep; True when the FMU asks for an event now."""
        enter, term = self._call("fmi2CompletedIntegratorStep",
                                 self._fmu.completedIntegratorStep)
        if term:
            raise FMUError(f"{self._tag}: the FMU requested termination")
        return bool(enter)

    def event(self):
        """Event mode, new discrete states until none is needed, continuous-time mode;
        returns the next time event [s] (inf if none)."""
        f = self._fmu
        self._call("fmi2EnterEventMode", f.enterEventMode)
        t_next = self._event_iteration()
        self._call("fmi2EnterContinuousTimeMode", f.enterContinuousTimeMode)
        self._n_events += 1
        return t_next

    _n_events = 0

    @property
    def n_events(self) -> int:
        """Events handled so far (event mode entered by the model-exchange host)."""
        from .native import CI_NEVENTS

        return self._n_events + (int(self._ci[CI_NEVENTS]) if self._ci is not None else 0)

    def _me_event_advance(self, x, u0, u1, dt, v, p, rtol):
        from .me_events import CHATTER, MAX_EVENTS_PER_SEGMENT, advance_segment

        t0 = float(x[0])
        self._sync(t0)
        if t0 == 0.0 and self._fresh is not None:
            self._initial_inputs(u0, v)
        self._fresh = None
        if self.rollback:
            self._save(t0)
            self._host_snap[t0] = (None if self._z_last is None else self._z_last.copy(),
                                   self._t_event, self._h_last)
            for old in [k for k in self._host_snap if k not in self._snap]:
                del self._host_snap[old]
        xc = np.array(x[1:1 + self.nx], dtype=float)
        z = np.empty(self.nz)
        has = self._z_last is not None
        self._t_event, self._h_last, ev = advance_segment(
            self, t0, xc, u0, v, dt, rtol, self._xscale_c, z,
            self._z_last if has else z, has, self._t_event, self._h_last)
        if ev == CHATTER:
            raise FMUError(f"{self._tag}: more than {MAX_EVENTS_PER_SEGMENT} events in the "
                           f"segment [{t0!r}, {t0 + dt!r}] s (chattering)")
        self._z_last = z
        t1 = t0 + dt
        self._t = t1
        x[0] = t1
        x[1:1 + self.nx] = xc
        self.put(t1, xc, u1, v)
        x[1 + self.nx] = self._get_output()

    def reset(self):
        """Back to the FMU's initial state at t = 0 (needed between runs of a
        model-exchange FMU with discrete states, which are not part of x)."""
        if self.compiled and (self.mode == "cs" or self.me_events):
            self._native_reset()
        else:
            self._restart()

    # -- clean-up ------------------------------------------------------------------------
    def close(self):
        """Free the FMU instance and its extracted files."""
        try:
            self._free_instance()
        finally:
            # also for an element whose constructor refused an option after extracting
            # (its other attributes may not exist): the folder must not outlive it
            unzip = getattr(self, "_unzip", None)
            if unzip:
                shutil.rmtree(unzip, ignore_errors=True)
                self._unzip = None

    def _free_instance(self):
        if getattr(self, "_fmu", None) is not None:
            if getattr(self, "_ci", None) is not None:
                from . import native as nv

                comp = self._ci[nv.CI_COMP]
                self._ci[nv.CI_COMP] = 0      # compiled kernels refuse from now on
                if self._ci[nv.CI_SNAP]:
                    try:
                        self._fmu.fmi2FreeFMUstate(comp, byref(c_void_p(int(self._ci[nv.CI_SNAP]))))
                    except Exception:  # noqa: BLE001
                        pass
                    self._ci[nv.CI_SNAP] = 0
            try:
                self._free_snaps()
                self._fmu.terminate()
            except Exception:  # noqa: BLE001
                pass
            try:
                # free the instance but keep the library loaded: unloading a binary that
                # embeds an interpreter (pythonfmu) or registered callbacks can crash later
                self._fmu.fmi2FreeInstance(self._fmu.component)
            except Exception:  # noqa: BLE001
                pass
            self._fmu = None
        name = getattr(self, "_instance_name", None)
        if name is not None:
            _STORES.pop(name.encode(), None)
        if getattr(self, "_ci", None) is not None:
            _ELEMENTS.pop(int(self._ci[21]), None)  # native.CI_KEY

    def __del__(self):
        if sys.is_finalizing():  # atexit already closed it; calling FMUs now is unsafe
            return
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __repr__(self):
        return f"FMUElement({str(self.path)!r}, mode={self.mode!r})"
