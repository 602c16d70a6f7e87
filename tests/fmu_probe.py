"""fmpy as the host of an exported FMU, shared by the FMU test files: an instance opened,
set up at t = 0 and taken through initialization mode (FMI 2.0 co-simulation or model
exchange, FMI 3.0 model exchange), the event iteration into continuous-time mode, and
one model-exchange evaluation (der(x), F) at given states and inputs."""
from ctypes import POINTER, c_double

import numpy as np


def open_fmi2(path, name="t", *, me=False, start=None, tolerance=None, unzip=None):
    """(model description, instance): fmpy's FMU2Slave (FMU2Model when ``me``) of the FMI
    2.0 FMU at ``path``, instantiated, set up at t = 0 [s] (relative ``tolerance`` when
    given) and through initialization mode, where the variables named in ``start``
    ({name: value}, in that order) are set. ``unzip``: the folder it is extracted to."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    md = read_model_description(str(path))
    cls, kind = (FMU2Model, md.modelExchange) if me else (FMU2Slave, md.coSimulation)
    f = cls(guid=md.guid, unzipDirectory=unzip or extract(str(path)),
            modelIdentifier=kind.modelIdentifier, instanceName=name)
    f.instantiate()
    f.setupExperiment(tolerance=tolerance, startTime=0.0)
    f.enterInitializationMode()
    if start:
        vr = {v.name: v.valueReference for v in md.modelVariables}
        f.setReal([vr[k] for k in start], [float(x) for x in start.values()])
    f.exitInitializationMode()
    return md, f


def to_continuous_time(f):
    """Model exchange after initialization: the event iteration to its end
    (fmi2NewDiscreteStates until no further iteration is asked for), then
    continuous-time mode."""
    while f.newDiscreteStates()[0]:
        pass
    f.enterContinuousTimeMode()


def open_fmi3_me(path, name="t", *, u, v):
    """(model description, instance): fmpy's FMU3Model of the FMI 3.0 FMU at ``path``,
    initialised at t = 0 [s] with the inputs u [m], v [m/s] (value references 1, 2), in
    continuous-time mode."""
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Model

    md = read_model_description(str(path))
    f = FMU3Model(guid=md.guid, unzipDirectory=extract(str(path)),
                  modelIdentifier=md.modelExchange.modelIdentifier, instanceName=name)
    f.instantiate()
    f.enterInitializationMode(startTime=0.0)
    f.setFloat64([1, 2], [u, v])
    f.exitInitializationMode()
    f.enterContinuousTimeMode()
    return md, f


def me_eval(f, x, u, v):
    """(der(x), F) of an FMI 2.0 model-exchange instance at the continuous states ``x``
    and the inputs u [m], v [m/s] (value references 1, 2; F is 3)."""
    nx = len(x)
    if nx:
        xb = np.ascontiguousarray(x, dtype=float)
        f.setContinuousStates(xb.ctypes.data_as(POINTER(c_double)), nx)
    f.setReal([1, 2], [u, v])
    dx = np.zeros(nx)
    if nx:
        f.getDerivatives(dx.ctypes.data_as(POINTER(c_double)), nx)
    return dx, f.getReal([3])[0]
