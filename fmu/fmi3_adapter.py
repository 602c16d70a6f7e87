"""An FMI 3.0 FMU behind the FMI 2.0 calls that FMUElement makes.

FMUElement (fmu/element.py) drives an FMU through a small set of FMI 2.0 calls (fmpy's
``FMU2Slave``/``FMU2Model`` methods plus raw C entry points for the per-step calls).
``Fmi3`` wraps fmpy's ``FMU3Slave``/``FMU3Model`` so that the same calls reach the FMI 3.0
functions: fmi2SetupExperiment + fmi2EnterInitializationMode become one
fmi3EnterInitializationMode, fmi2NewDiscreteStates is fmi3UpdateDiscreteStates,
fmi2SetReal/GetReal are fmi3SetFloat64/GetFloat64 (nValues = nvr: scalar variables),
fmi2DoStep is fmi3DoStep with its extra outputs (event handling needed, terminate,
early return, last successful time) read and acted on, fmi2GetDerivatives is
fmi3GetContinuousStateDerivatives. The compiled kernels (fmu/native.py) call the
FMI 3.0 functions themselves (``NATIVE`` gives the symbol of each slot).
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, byref, c_bool, c_double, c_int, c_size_t, c_uint, c_void_p

# the slot -> FMI 3.0 symbol of each C entry point the compiled kernels call (native.CI_*)
NATIVE = {"set": "fmi3SetFloat64", "get": "fmi3GetFloat64", "step": "fmi3DoStep",
          "getst": "fmi3GetFMUState", "setst": "fmi3SetFMUState", "reset": "fmi3Reset",
          "setup": "fmi3EnterInitializationMode", "enter": "fmi3EnterInitializationMode",
          "exit": "fmi3ExitInitializationMode", "setx": "fmi3SetContinuousStates",
          "getdx": "fmi3GetContinuousStateDerivatives", "time": "fmi3SetTime",
          "getz": "fmi3GetEventIndicators", "completed": "fmi3CompletedIntegratorStep",
          "enter_ev": "fmi3EnterEventMode", "newdisc": "fmi3UpdateDiscreteStates",
          "enter_ct": "fmi3EnterContinuousTimeMode", "getx": "fmi3GetContinuousStates"}


class Fmi3:
    """fmpy's FMU3Slave (mode "cs") or FMU3Model ("me") with the FMI 2.0 method names
    FMUElement uses. ``store`` receives (status, message) of the FMU's log."""

    def __init__(self, mode, guid, unzip, ident, instance_name, store):
        from fmpy.fmi3 import FMU3Model, FMU3Slave

        cls = FMU3Slave if mode == "cs" else FMU3Model
        self.mode = mode
        self._f = cls(guid=guid, unzipDirectory=unzip, modelIdentifier=ident,
                      instanceName=instance_name)
        self.dll = self._f.dll
        self._store = store
        dll = self.dll
        for name, args in (
                ("fmi3SetFloat64", [c_void_p, POINTER(c_uint), c_size_t, POINTER(c_double),
                                    c_size_t]),
                ("fmi3GetFloat64", [c_void_p, POINTER(c_uint), c_size_t, POINTER(c_double),
                                    c_size_t]),
                ("fmi3GetFMUState", [c_void_p, POINTER(c_void_p)]),
                ("fmi3SetFMUState", [c_void_p, c_void_p]),
                ("fmi3FreeFMUState", [c_void_p, POINTER(c_void_p)]),
                ("fmi3FreeInstance", [c_void_p])):
            fn = getattr(dll, name)
            fn.argtypes = args
            fn.restype = c_int if name != "fmi3FreeInstance" else None
        self._set, self._get = dll.fmi3SetFloat64, dll.fmi3GetFloat64
        if mode == "cs":
            self._step = dll.fmi3DoStep
            self._step.argtypes = [c_void_p, c_double, c_double, c_bool, POINTER(c_bool),
                                   POINTER(c_bool), POINTER(c_bool), POINTER(c_double)]
            self._step.restype = c_int
            self._ev, self._term, self._early = c_bool(), c_bool(), c_bool()
            self._last = c_double()
        else:
            for name in ("fmi3SetContinuousStates", "fmi3GetContinuousStateDerivatives"):
                fn = getattr(dll, name)
                fn.argtypes = [c_void_p, POINTER(c_double), c_size_t]
                fn.restype = c_int
            dll.fmi3SetTime.argtypes = [c_void_p, c_double]
            dll.fmi3SetTime.restype = c_int

    @property
    def component(self):
        return self._f.component

    # -- life cycle ----------------------------------------------------------------------
    def instantiate(self, visible=False, callbacks=None):
        store = self._store

        def log(env, status, category, message):
            store.append((int(status), (message or b"").decode("utf-8", "replace")))
            del store[:-20]

        self._f.instantiate(visible=visible, loggingOn=False, logMessage=log)

    def setupExperiment(self, tolerance=None, startTime=0.0, stopTime=None):
        self._t0, self._tol = startTime, tolerance   # given to fmi3EnterInitializationMode

    def enterInitializationMode(self):
        return self._f.enterInitializationMode(tolerance=getattr(self, "_tol", None),
                                               startTime=getattr(self, "_t0", 0.0))

    def exitInitializationMode(self):
        return self._f.exitInitializationMode()

    def configure(self, vr, n):
        """A structural parameter (UInt64) set in Configuration Mode."""
        self._f.enterConfigurationMode()
        self._f.setUInt64([vr], [int(n)])
        return self._f.exitConfigurationMode()

    def setReal(self, vr, values):
        return self._f.setFloat64(vr, values)

    def getReal(self, vr):
        return self._f.getFloat64(vr)

    def newDiscreteStates(self):
        return self._f.updateDiscreteStates()

    def enterContinuousTimeMode(self):
        return self._f.enterContinuousTimeMode()

    def enterEventMode(self):
        return self._f.enterEventMode()

    def completedIntegratorStep(self):
        return self._f.completedIntegratorStep(True)

    def reset(self):
        return self._f.reset()

    def terminate(self):
        return self._f.terminate()

    def getContinuousStates(self, x, nx):
        return self._f.getContinuousStates(x, nx)

    def getEventIndicators(self, z, nz):
        return self._f.getEventIndicators(z, nz)

    def getNominalsOfContinuousStates(self, x, nx):
        return self._f.getNominalsOfContinuousStates(x, nx)

    # -- FMI 2.0 names of the state and instance functions (raw, status returned) ---------
    def fmi2GetFMUstate(self, comp, ref):
        st = self.dll.fmi3GetFMUState(comp, ref)
        if st > 1:
            raise RuntimeError(f"fmi3GetFMUState failed with status {st}")
        return st

    def fmi2SetFMUstate(self, comp, state):
        st = self.dll.fmi3SetFMUState(comp, state)
        if st > 1:
            raise RuntimeError(f"fmi3SetFMUState failed with status {st}")
        return st

    def fmi2FreeFMUstate(self, comp, ref):
        return self.dll.fmi3FreeFMUState(comp, ref)

    def fmi2FreeInstance(self, comp):
        self.dll.fmi3FreeInstance(comp)

    # -- per-step calls with the signatures of the FMI 2.0 ones ------------------------------
    def c_set(self, comp, vr, n, values):
        return self._set(comp, vr, n, values, n)

    def c_get(self, comp, vr, n, values):
        return self._get(comp, vr, n, values, n)

    def c_step(self, comp, t, h, no_prior):
        st = self._step(comp, t, h, bool(no_prior), byref(self._ev), byref(self._term),
                        byref(self._early), byref(self._last))
        if st <= 1 and (self._term.value or self._early.value):
            # a step ended early or asked to terminate: not a step of h, report an error
            self._store.append((3, f"fmi3DoStep returned early at t = {self._last.value!r} "
                                   f"(terminate = {self._term.value})"))
            return 3
        return st

    def c_setx(self, comp, x, nx):
        return self.dll.fmi3SetContinuousStates(comp, x, nx)

    def c_getdx(self, comp, dx, nx):
        return self.dll.fmi3GetContinuousStateDerivatives(comp, dx, nx)

    def c_time(self, comp, t):
        return self.dll.fmi3SetTime(comp, t)


def address(dll, name) -> int:
    try:
        return ctypes.cast(getattr(dll, name), c_void_p).value or 0
    except AttributeError:
        return 0
