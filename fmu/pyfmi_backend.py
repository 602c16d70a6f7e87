"""PyFMI as the FMU backend of :class:`~hystmech.fmu.element.FMUElement` (``backend="pyfmi"``).

FMUElement drives an FMU through a small set of FMI 2.0 calls (fmpy's ``FMU2Slave`` /
``FMU2Model`` method names plus the per-step calls ``c_set``/``c_get``/``c_step``/
``c_setx``/``c_getdx``/``c_time`` with C signatures; see fmu/fmi3_adapter.py for the
same idea for FMI 3.0). :class:`PyFMI` gives those calls through PyFMI's low-level API
(Modelon's FMI Library underneath): ``load_fmu(kind="CS" | "ME")``, ``set_real`` /
``get_real``, ``do_step``, ``continuous_states``, ``get_derivatives``,
``get_event_indicators``, ``enter_event_mode`` / ``event_update`` / ``get_event_info``,
``completed_integrator_step``, ``get_fmu_state`` / ``set_fmu_state`` /
``free_fmu_state``. The FMU's error messages (PyFMI's log) reach FMUElement's errors.
FMI 3.0 model exchange goes through PyFMI's ``FMUModelME3`` (``set_float64`` /
``get_float64``, ``enter_initialization_mode`` taking the start time and tolerance that
FMI 2.0 gives to ``setup_experiment``); PyFMI itself refuses FMI 3.0 co-simulation
("not yet supported"), so that combination is an error naming ``backend="fmpy"``.

Getting PyFMI: ``conda install -c conda-forge pyfmi``, or a wheel built from the public
sources (FMI Library + PyFMI with its Assimulo interface; the recipe is in the
project's shared wheels README; ``pip install pyfmi-*.whl`` pulls assimulo-testing);
PyPI's pyfmi 2.5 does not build on Python 3.11. This backend uses PyFMI's FMI calls, not
its ``simulate()``. The compiled (numba) kernels need the binary's C entry points, so
with this backend the element runs its Python kernels.
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np

_HANDLES = itertools.count(1)


def available() -> bool:
    """True when PyFMI can be imported."""
    try:
        import pyfmi  # noqa: F401
    except ImportError:
        return False
    return True


def _arr(ptr, n):
    # a ctypes array / pointer of n doubles as a NumPy view (no copy)
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_double)), (n,))


class PyFMI:
    """A PyFMI model (``FMUModelCS2`` / ``FMUModelME2``) with the calls FMUElement makes.
    ``store`` receives (status, message) of the FMU's error log; PyFMI's log file goes
    to ``log_dir``."""

    def __init__(self, mode, path, store, log_dir, fmi3=False):
        import os

        from pyfmi import load_fmu

        self.mode = mode
        self.fmi3 = fmi3
        self._t0, self._tol = 0.0, None
        # PyFMI writes its log to a file (default: in the working directory): the
        # element's own temporary directory instead
        self._m = load_fmu(str(path), kind="CS" if mode == "cs" else "ME", log_level=2,
                           log_file_name=os.path.join(log_dir, "pyfmi_log.txt"))
        self._store = store
        self._states: dict = {}
        self._seen = 0
        self.component = self       # a handle the element passes back to the calls below

    # -- errors: PyFMI raises, FMUElement expects statuses and messages in its store --------
    def _take_log(self):
        log = self._m.get_log()
        for line in log[self._seen:]:
            text = str(line)
            if "Error" in text or "Fatal" in text or "Discard" in text:
                self._store.append((3, text.rsplit("] ", 1)[-1].strip()))
                del self._store[:-20]
        self._seen = len(log)

    def _do(self, fn, *args):
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 - pyfmi.fmi.FMUException and friends
            self._take_log()
            raise RuntimeError(str(e)) from None
        return out

    def _st(self, fn, *args):
        # a C-style status for the per-step calls
        try:
            fn(*args)
        except Exception:  # noqa: BLE001
            self._take_log()
            return 3
        return 0

    # -- life cycle ----------------------------------------------------------------------
    def instantiate(self, visible=False, callbacks=None):
        """load_fmu has instantiated the model already."""

    def setupExperiment(self, tolerance=None, startTime=0.0, stopTime=None):
        if self.fmi3:  # FMI 3.0: start time and tolerance go with fmi3EnterInitializationMode
            self._t0, self._tol = float(startTime), tolerance
            return None
        return self._do(self._m.setup_experiment, False, 0.0, float(startTime))

    def enterInitializationMode(self):
        if self.fmi3:
            return self._do(self._m.enter_initialization_mode, self._tol is not None,
                            float(self._tol) if self._tol is not None else 0.0, self._t0,
                            False, self._t0)
        return self._do(self._m.enter_initialization_mode)

    def exitInitializationMode(self):
        return self._do(self._m.exit_initialization_mode)

    def _set_values(self, vr, values):
        (self._m.set_float64 if self.fmi3 else self._m.set_real)(vr, values)

    def _get_values(self, vr):
        return (self._m.get_float64 if self.fmi3 else self._m.get_real)(vr)

    def setReal(self, vr, values):
        return self._do(self._set_values, np.asarray(vr, dtype=np.uint32),
                        np.asarray(values, dtype=float))

    def getReal(self, vr):
        return list(self._do(self._get_values, np.asarray(vr, dtype=np.uint32)))

    def newDiscreteStates(self):
        self._do(self._m.event_update, True)
        ei = self._m.get_event_info()
        return (bool(ei.newDiscreteStatesNeeded), bool(ei.terminateSimulation),
                bool(ei.nominalsOfContinuousStatesChanged),
                bool(ei.valuesOfContinuousStatesChanged), bool(ei.nextEventTimeDefined),
                float(ei.nextEventTime))

    def enterContinuousTimeMode(self):
        return self._do(self._m.enter_continuous_time_mode)

    def enterEventMode(self):
        return self._do(self._m.enter_event_mode)

    def completedIntegratorStep(self):
        enter, term = self._do(self._m.completed_integrator_step, True)
        return bool(enter), bool(term)

    def reset(self):
        self._seen = 0
        return self._do(self._m.reset)

    def terminate(self):
        return self._do(self._m.terminate)

    def getContinuousStates(self, x, nx):
        _arr(x, nx)[:] = self._do(lambda: self._m.continuous_states)

    def getNominalsOfContinuousStates(self, x, nx):
        _arr(x, nx)[:] = self._do(lambda: self._m.nominal_continuous_states)

    def getEventIndicators(self, z, nz):
        _arr(z, nz)[:] = self._do(self._m.get_event_indicators)

    # -- FMU states, behind the FMI 2.0 names FMUElement calls (the handle written into
    #    the caller's c_void_p is a key of this adapter's table) ---------------------------
    def fmi2GetFMUstate(self, comp, ref):
        slot = ref._obj
        key = slot.value
        if key in self._states:
            self._do(self._m.free_fmu_state, self._states.pop(key))
        key = next(_HANDLES)
        self._states[key] = self._do(self._m.get_fmu_state)
        slot.value = key
        return 0

    def fmi2SetFMUstate(self, comp, state):
        key = state.value if isinstance(state, ctypes.c_void_p) else state
        self._do(self._m.set_fmu_state, self._states[key])
        return 0

    def fmi2FreeFMUstate(self, comp, ref):
        key = ref._obj.value
        st = self._states.pop(key, None)
        if st is not None:
            self._do(self._m.free_fmu_state, st)
        ref._obj.value = None
        return 0

    def fmi2FreeInstance(self, comp):
        self._states.clear()
        self._m.free_instance()

    # -- per-step calls with the signatures of the FMI 2.0 C functions ------------------------
    def c_set(self, comp, vr, n, values):
        return self._st(self._set_values, np.ctypeslib.as_array(vr, (n,)).astype(np.uint32),
                        np.ctypeslib.as_array(values, (n,)).copy())

    def c_get(self, comp, vr, n, values):
        try:
            out = self._get_values(np.ctypeslib.as_array(vr, (n,)).astype(np.uint32))
        except Exception:  # noqa: BLE001
            self._take_log()
            return 3
        np.ctypeslib.as_array(values, (n,))[:] = out
        return 0

    def c_step(self, comp, t, h, no_prior):
        try:
            st = self._m.do_step(float(t), float(h), bool(no_prior))
        except Exception:  # noqa: BLE001
            self._take_log()
            return 3
        if st > 1:
            self._take_log()
        return int(st)

    def c_setx(self, comp, x, nx):
        return self._st(self._put_x, _arr(x, nx).copy())

    def c_getdx(self, comp, dx, nx):
        try:
            d = self._m.get_derivatives()
        except Exception:  # noqa: BLE001
            self._take_log()
            return 3
        _arr(dx, nx)[:] = d
        return 0

    def c_time(self, comp, t):
        return self._st(self._put_t, float(t))

    def _put_x(self, x):
        self._m.continuous_states = x

    def _put_t(self, t):
        self._m.time = t
