"""Compiled (numba) kernels of an imported FMU: the FMI 2.0 (or 3.0) C functions called
directly.

An :class:`~hystmech.fmu.element.FMUElement` whose FMU binary is loaded with ctypes
exposes the addresses of its C entry points (fmi2SetReal, fmi2DoStep, ...). The kernels
here call them through function pointers (numba intrinsics emitting an indirect call),
so that ``drive`` and the assembly solvers keep their compiled loops with an FMU inside:
no Python between two communication steps.

Everything an FMU instance needs is in two small blocks owned by the element, an int64
block ``ci`` (component pointer, function addresses, value references, flags) and a
float64 block ``cf`` (FMU time, saved-state time, input/output slots, parameters). The
element's parameter vector holds only their addresses, ``p = [addr(ci), addr(cf)]``,
so the same compiled kernels serve every FMU (one compilation per process, cached on
disk: no address is baked into the code) and an assembly's copy of p still points at
the element's blocks.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core.extending import intrinsic, overload

from ..components._pointers import f64_ptr, i64_ptr
from . import me_events
from .me_events import advance_segment

# -- layout of the int64 block ci ------------------------------------------------------------
CI_COMP = 0          # fmi2Component (0 once freed)
CI_SET = 1           # fmi2SetReal
CI_GET = 2           # fmi2GetReal
CI_STEP = 3          # fmi2DoStep (cs)
CI_GETST = 4         # fmi2GetFMUstate
CI_SETST = 5         # fmi2SetFMUstate
CI_RESET = 6         # fmi2Reset
CI_SETUP = 7         # fmi2SetupExperiment
CI_ENTER = 8         # fmi2EnterInitializationMode
CI_EXIT = 9          # fmi2ExitInitializationMode
CI_SETX = 10         # fmi2SetContinuousStates (me)
CI_GETDX = 11        # fmi2GetDerivatives (me)
CI_SNAP = 12         # fmi2FMUstate slot written by fmi2GetFMUstate
CI_NIN = 13          # number of inputs set (1: u, 2: u and v)
CI_ROLLBACK = 14     # keep a saved state before each step
CI_NPAR = 15         # parameters set at (re-)initialisation
CI_NX = 16           # continuous states (me)
CI_HAVE_SNAP = 17    # CI_SNAP holds the state at cf[CF_TSNAP]
CI_FRESH = 18        # initialised, no step taken yet
CI_VR = 19           # address of the uint32 value references [u, v, F, params...]
CI_CF = 20           # address of cf
CI_KEY = 21          # element key (for error messages)
CI_ME_READY = 22     # me: the FMU is initialised and in continuous-time mode
CI_TIME = 23         # fmi2SetTime (me with a time state x[nx] = t; 0: no time state)
CI_VER = 24          # FMI version of the entry points: 2, or 3 (fmi3SetFloat64, fmi3DoStep...)
# model exchange with events (the FMI host of fmu/me_events.py compiled in)
CI_NZ = 25           # event indicators
CI_GETZ = 26         # fmi2GetEventIndicators
CI_COMPLETED = 27    # fmi2CompletedIntegratorStep
CI_ENTER_EV = 28     # fmi2EnterEventMode
CI_NEWDISC = 29      # fmi2NewDiscreteStates (fmi3UpdateDiscreteStates)
CI_ENTER_CT = 30     # fmi2EnterContinuousTimeMode
CI_GETX = 31         # fmi2GetContinuousStates
CI_HAS_LAST = 32     # cf's z_last holds the indicators at the end of the last segment
CI_HAS_LAST_SNAP = 33
CI_NEVENTS = 34      # events handled (a counter)
NCI = 35

# -- layout of the float64 block cf -----------------------------------------------------------
CF_T = 0             # FMU time [s]
CF_TSNAP = 1         # time of the saved state
CF_U0 = 2            # inputs of the last initialisation
CF_V0 = 3
CF_U = 4             # input slots handed to fmi2SetReal (u, v contiguous)
CF_V = 5
CF_OUT = 6           # output slot of fmi2GetReal
CF_STEP = 7          # communication step (0: one step per input segment)
CF_F0 = 8            # output right after the last initialisation
CF_TSET = 9          # me: time last given to fmi2SetTime (NaN: unknown)
CF_DOSTEP_OUT = 10   # FMI 3: fmi3DoStep's three fmi3Boolean outputs (bytes of cf[10..12])
CF_LAST_T = 13       # FMI 3: fmi3DoStep's lastSuccessfulTime
CF_TEVENT = 14       # me events: pending time event [s] (inf: none)
CF_HLAST = 15        # me events: last accepted step of the host [s]
CF_TEVENT_SNAP = 16  # the two above at the saved state
CF_HLAST_SNAP = 17
CF_EVINFO = 18       # fmi2EventInfo (5 ints, then nextEventTime at cf[21]); FMI 3: bytes
CF_FLAGS = 22        # fmi2CompletedIntegratorStep's two fmi2Boolean outputs (int32 each)
CF_PAR = 24          # parameter values, scratch for x and dx (me), z_last, z_snap, x_scale

# error codes raised from the kernels (FMUKernelError(code, key))
(ERR_CLOSED, ERR_SET, ERR_GET, ERR_STEP, ERR_STATE, ERR_BACK, ERR_INIT, ERR_DERIV,
 ERR_TIME, ERR_EVENT, ERR_TERM, ERR_CHATTER) = range(12)
ERR_TEXT = {
    ERR_CLOSED: "the FMU instance is closed",
    ERR_SET: "fmi2SetReal of the inputs failed",
    ERR_GET: "fmi2GetReal of the output failed",
    ERR_STEP: "fmi2DoStep failed",
    ERR_STATE: "fmi2GetFMUstate/fmi2SetFMUstate failed",
    ERR_BACK: "cannot go back to an earlier time (rollback is off, or the state is older "
              "than the last step)",
    ERR_INIT: "re-initialisation (fmi2Reset ... fmi2ExitInitializationMode) failed",
    ERR_DERIV: "fmi2SetContinuousStates/fmi2GetDerivatives failed",
    ERR_TIME: "fmi2SetTime failed",
    ERR_EVENT: "an event-handling call (event indicators, completed integrator step, event "
               "mode, new discrete states, continuous-time mode) failed",
    ERR_TERM: "the FMU requested termination",
    ERR_CHATTER: "more than 10000 events in one input segment (chattering)",
}


class FMUError(ValueError):
    """A missing/malformed FMU, an unusable variable, or an FMU that reported an error."""


class FMUKernelError(FMUError):
    """Raised from a compiled FMU kernel; the message names the FMU file (looked up by
    key) and relays the FMU's last error message."""

    lookup = None  # set by element.py: key -> (tag, latest FMU error text)

    def __init__(self, code, key=-1):
        what = ERR_TEXT.get(int(code), f"FMU call {code}")
        tag, detail = ("an imported FMU", "")
        if FMUKernelError.lookup is not None:
            tag, detail = FMUKernelError.lookup(int(key))
        super().__init__(f"{tag}: {what}" + (f": {detail}" if detail else ""))


# -- indirect C calls -------------------------------------------------------------------------
# argument kinds: p = pointer (given as int64 address), z = size_t, i = int (fmi2Boolean),
# d = double; every FMI 2.0 function returns an int status (widened to int64)
_NB = {"p": types.int64, "z": types.int64, "i": types.int64, "d": types.float64}


def _codegen(kinds):
    def codegen(context, builder, sig, args):
        i8p = ir.IntType(8).as_pointer()
        lt = {"p": i8p, "z": ir.IntType(64), "i": ir.IntType(32), "d": ir.DoubleType()}
        fnty = ir.FunctionType(ir.IntType(32), [lt[k] for k in kinds])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        vals = []
        for k, a in zip(kinds, args[1:]):
            if k == "p":
                vals.append(builder.inttoptr(a, i8p))
            elif k == "i":
                vals.append(builder.trunc(a, ir.IntType(32)))
            else:
                vals.append(a)
        return builder.sext(builder.call(fn, vals), ir.IntType(64))
    return codegen


def _sig(kinds):
    return types.int64(types.int64, *[_NB[k] for k in kinds])


@intrinsic
def c_p(typingctx, fn, a):
    """int fn(void*)"""
    return _sig("p"), _codegen("p")


@intrinsic
def c_pp(typingctx, fn, a, b):
    """int fn(void*, void*)"""
    return _sig("pp"), _codegen("pp")


@intrinsic
def c_ppz(typingctx, fn, a, b, c):
    """int fn(void*, void*, size_t)"""
    return _sig("ppz"), _codegen("ppz")


@intrinsic
def c_ppzp(typingctx, fn, a, b, c, d):
    """int fn(void*, const unsigned*, size_t, double*): fmi2SetReal / fmi2GetReal"""
    return _sig("ppzp"), _codegen("ppzp")


@intrinsic
def c_ppzpz(typingctx, fn, a, b, c, d, e):
    """int fn(void*, const unsigned*, size_t, double*, size_t): fmi3Set/GetFloat64"""
    return _sig("ppzpz"), _codegen("ppzpz")


@intrinsic
def c_pddipppp(typingctx, fn, a, b, c, d, e, f, g, h):
    """int fn(void*, double, double, bool, bool*, bool*, bool*, double*): fmi3DoStep"""
    return _sig("pddipppp"), _codegen("pddipppp")


@intrinsic
def c_pipp(typingctx, fn, a, b, c, d):
    """int fn(void*, int, int*, int*): fmi2/fmi3CompletedIntegratorStep"""
    return _sig("pipp"), _codegen("pipp")


@intrinsic
def c_ppppppp(typingctx, fn, a, b, c, d, e, f, g):
    """int fn(void*, bool*, bool*, bool*, bool*, bool*, double*): fmi3UpdateDiscreteStates"""
    return _sig("ppppppp"), _codegen("ppppppp")


@intrinsic
def c_pd(typingctx, fn, a, b):
    """int fn(void*, double): fmi2SetTime"""
    return _sig("pd"), _codegen("pd")


@intrinsic
def c_pddi(typingctx, fn, a, b, c, d):
    """int fn(void*, double, double, int): fmi2DoStep"""
    return _sig("pddi"), _codegen("pddi")


@intrinsic
def c_piddid(typingctx, fn, a, b, c, d, e, f):
    """int fn(void*, int, double, double, int, double): fmi2SetupExperiment"""
    return _sig("piddid"), _codegen("piddid")


@intrinsic
def _byte(typingctx, addr):
    """The byte at an address (an fmi3Boolean output), as int64."""
    sig = types.int64(types.int64)

    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(8).as_pointer())
        return builder.zext(builder.load(ptr), ir.IntType(64))
    return sig, codegen


@njit(cache=True)
def blocks(p):
    """(ci, cf) views of the element's blocks from p = [addr(ci), addr(cf)]."""
    if p.size != 2:
        raise FMUKernelError(ERR_CLOSED, -1)   # not an FMUElement's p: never dereference
    ci = carray(i64_ptr(np.int64(p[0])), NCI)
    cf = carray(f64_ptr(ci[CI_CF]), CF_PAR + ci[CI_NPAR] + 3 * ci[CI_NX] + 2 * ci[CI_NZ])
    return ci, cf


@njit(cache=True)
def _set_inputs(ci, u, v):
    cf_addr = ci[CI_CF]
    cf = carray(f64_ptr(cf_addr), CF_PAR)
    cf[CF_U] = u
    cf[CF_V] = v
    if ci[CI_VER] == 3:
        st = c_ppzpz(ci[CI_SET], ci[CI_COMP], ci[CI_VR], ci[CI_NIN], cf_addr + 8 * CF_U,
                     ci[CI_NIN])
    else:
        st = c_ppzp(ci[CI_SET], ci[CI_COMP], ci[CI_VR], ci[CI_NIN], cf_addr + 8 * CF_U)
    if st > 1:
        raise FMUKernelError(ERR_SET, ci[CI_KEY])


@njit(cache=True)
def _get_output(ci):
    cf_addr = ci[CI_CF]
    if ci[CI_VER] == 3:
        st = c_ppzpz(ci[CI_GET], ci[CI_COMP], ci[CI_VR] + 8, 1, cf_addr + 8 * CF_OUT, 1)
    else:
        st = c_ppzp(ci[CI_GET], ci[CI_COMP], ci[CI_VR] + 8, 1, cf_addr + 8 * CF_OUT)
    if st > 1:
        raise FMUKernelError(ERR_GET, ci[CI_KEY])
    return carray(f64_ptr(cf_addr), CF_PAR)[CF_OUT]


@njit(cache=True)
def restart(ci, cf, u, v):
    """Back to t = 0: fmi2Reset, parameters and the inputs (u, v) set during a new
    initialisation (as an FMI master starts a run)."""
    comp = ci[CI_COMP]
    if comp == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    if c_p(ci[CI_RESET], comp) > 1:
        raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    if ci[CI_VER] == 3:
        # fmi3EnterInitializationMode(instance, toleranceDefined, tolerance, startTime,
        # stopTimeDefined, stopTime) takes what fmi2SetupExperiment took
        if c_piddid(ci[CI_ENTER], comp, 0, 0.0, 0.0, 0, 0.0) > 1:
            raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    elif c_piddid(ci[CI_SETUP], comp, 0, 0.0, 0.0, 0, 0.0) > 1 or c_p(ci[CI_ENTER], comp) > 1:
        raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    n = ci[CI_NPAR]
    if n > 0:
        if ci[CI_VER] == 3:
            st = c_ppzpz(ci[CI_SET], comp, ci[CI_VR] + 12, n, ci[CI_CF] + 8 * CF_PAR, n)
        else:
            st = c_ppzp(ci[CI_SET], comp, ci[CI_VR] + 12, n, ci[CI_CF] + 8 * CF_PAR)
        if st > 1:
            raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    _set_inputs(ci, u, v)
    if c_p(ci[CI_EXIT], comp) > 1:
        raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    cf[CF_T] = 0.0
    cf[CF_U0] = u
    cf[CF_V0] = v
    ci[CI_FRESH] = 1
    ci[CI_HAVE_SNAP] = 0
    cf[CF_F0] = _get_output(ci)


# -- co-simulation: x = [t_fmu, F at the end of the last step] ------------------------------------
@njit(cache=True)
def _enter_segment(ci, cf, comp, t0, u0, v, events):
    """Start of a segment from state time t0: roll the FMU back to the saved state (or
    re-initialise at t = 0, with the segment's inputs u(0), v), then save the state for
    a solver that repeats the step. events: the model-exchange host, whose record
    (pending time event, last step, indicators) travels with the saved state."""
    nz = ci[CI_NZ]
    zo = CF_PAR + ci[CI_NPAR] + 2 * ci[CI_NX]
    if t0 != cf[CF_T]:
        if ci[CI_HAVE_SNAP] != 0 and t0 == cf[CF_TSNAP]:
            if c_pp(ci[CI_SETST], comp, ci[CI_SNAP]) > 1:
                raise FMUKernelError(ERR_STATE, ci[CI_KEY])
            cf[CF_T] = t0
            if events:
                cf[CF_TSET] = np.nan
                cf[CF_TEVENT] = cf[CF_TEVENT_SNAP]
                cf[CF_HLAST] = cf[CF_HLAST_SNAP]
                ci[CI_HAS_LAST] = ci[CI_HAS_LAST_SNAP]
                for i in range(nz):
                    cf[zo + i] = cf[zo + nz + i]
        elif t0 == 0.0:
            _restart_any(ci, cf, u0, v, events)
        else:
            raise FMUKernelError(ERR_BACK, ci[CI_KEY])
    if t0 == 0.0 and ci[CI_FRESH] != 0 and (u0 != cf[CF_U0] or v != cf[CF_V0]):
        _restart_any(ci, cf, u0, v, events)   # the start state must see u(0), not a jump
    ci[CI_FRESH] = 0
    if ci[CI_ROLLBACK] != 0:
        # fmi2GetFMUstate writes the state handle into ci[CI_SNAP] (reused when set)
        if c_pp(ci[CI_GETST], comp, np.int64(ci.ctypes.data) + 8 * CI_SNAP) > 1:
            raise FMUKernelError(ERR_STATE, ci[CI_KEY])
        cf[CF_TSNAP] = t0
        ci[CI_HAVE_SNAP] = 1
        if events:
            cf[CF_TEVENT_SNAP] = cf[CF_TEVENT]
            cf[CF_HLAST_SNAP] = cf[CF_HLAST]
            ci[CI_HAS_LAST_SNAP] = ci[CI_HAS_LAST]
            for i in range(nz):
                cf[zo + nz + i] = cf[zo + i]


@njit(cache=True)
def _restart_any(ci, cf, u, v, events):
    if events:
        ev_restart(ci, cf, u, v)
    else:
        restart(ci, cf, u, v)


@njit(cache=True)
def cs_advance(x, u0, u1, dt, v, p, rtol):
    """Co-simulation master over one input segment: the FMU stepped from t = x[0] over
    dt in communication steps ≤ cf[CF_STEP], input u(t) = u0 + v (t − t0) (first-order
    extrapolation, v held), rolled back first if x is the state saved before the last
    step. x[1] = output at the end with inputs (u1, v)."""
    ci, cf = blocks(p)
    comp = ci[CI_COMP]
    if comp == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    t0 = x[0]
    _enter_segment(ci, cf, comp, t0, u0, v, False)
    n = 1
    if cf[CF_STEP] > 0.0:
        n = max(1, int(np.ceil(dt / cf[CF_STEP] - 1e-9)))
    h = dt / n
    t = t0
    for i in range(n):
        _set_inputs(ci, u0 + v * (t - t0), v)
        if ci[CI_VER] == 3:
            o = ci[CI_CF] + 8 * CF_DOSTEP_OUT
            cf[CF_DOSTEP_OUT] = 0.0   # clears the three bool outputs
            st = c_pddipppp(ci[CI_STEP], comp, t, h, 1, o, o + 1, o + 2,
                            ci[CI_CF] + 8 * CF_LAST_T)
            # terminate or early return (bytes 1, 2): the step did not cover h
            if st <= 1 and (_byte(o + 1) != 0 or _byte(o + 2) != 0):
                st = 3
        else:
            st = c_pddi(ci[CI_STEP], comp, t, h, 1)
        if st > 1:
            raise FMUKernelError(ERR_STEP, ci[CI_KEY])
        t = t0 + (i + 1) * h
    cf[CF_T] = t
    x[0] = t
    _set_inputs(ci, u1, v)
    x[1] = _get_output(ci)


@njit(cache=True)
def cs_force(x, u, v, p):
    """Output for state x: computed by the FMU with inputs (u, v) when x is its current
    state, the stored end-of-step output x[1] for a past communication point."""
    ci, cf = blocks(p)
    if ci[CI_COMP] == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    t = x[0]
    if t == 0.0 and (cf[CF_T] != 0.0 or ci[CI_FRESH] != 0):
        if u == cf[CF_U0] and v == cf[CF_V0]:
            if cf[CF_T] != 0.0:
                return cf[CF_F0]
        else:
            restart(ci, cf, u, v)
    elif t != cf[CF_T]:
        return x[1]
    _set_inputs(ci, u, v)
    return _get_output(ci)


# -- model exchange: x = the FMU's continuous states (then its time, with CI_TIME) ------------
@njit(cache=True)
def _put_states(ci, cf, x):
    nx = ci[CI_NX]
    if ci[CI_TIME] != 0:
        # the protocol has no time argument: the time is the state after the FMU's own;
        # set only when it changed (a rate evaluation per stage, a force per sample)
        t = x[nx]
        if t != cf[CF_TSET]:
            if c_pd(ci[CI_TIME], ci[CI_COMP], t) > 1:
                raise FMUKernelError(ERR_TIME, ci[CI_KEY])
            cf[CF_TSET] = t
    if x.strides[0] == 8:
        addr = np.int64(x.ctypes.data)
    else:
        o = CF_PAR + ci[CI_NPAR]
        for i in range(nx):
            cf[o + i] = x[i]
        addr = ci[CI_CF] + 8 * o
    if c_ppz(ci[CI_SETX], ci[CI_COMP], addr, nx) > 1:
        raise FMUKernelError(ERR_DERIV, ci[CI_KEY])


@njit(cache=True)
def me_rate(x, u, v, p, out):
    """ẋ = fmi2GetDerivatives at states x and inputs (u, v)."""
    ci, cf = blocks(p)
    if ci[CI_COMP] == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    nx = ci[CI_NX]
    _put_states(ci, cf, x)
    _set_inputs(ci, u, v)
    if out.strides[0] == 8:
        st = c_ppz(ci[CI_GETDX], ci[CI_COMP], np.int64(out.ctypes.data), nx)
    else:
        o = CF_PAR + ci[CI_NPAR] + nx
        st = c_ppz(ci[CI_GETDX], ci[CI_COMP], ci[CI_CF] + 8 * o, nx)
        for i in range(nx):
            out[i] = cf[o + i]
    if st > 1:
        raise FMUKernelError(ERR_DERIV, ci[CI_KEY])
    if ci[CI_TIME] != 0:
        out[nx] = 1.0


@njit(cache=True)
def me_force(x, u, v, p):
    """Output at states x and inputs (u, v)."""
    ci, cf = blocks(p)
    if ci[CI_COMP] == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    _put_states(ci, cf, x)
    _set_inputs(ci, u, v)
    return _get_output(ci)


# -- model exchange with events: x = [t_fmu, continuous states, F_end] ---------------------------
# The six calls of the FMI host (fmu/me_events.py), the context being p.
@njit(cache=True)
def ev_put(p, t, xc, u, v):
    ci, cf = blocks(p)
    if t != cf[CF_TSET]:
        if c_pd(ci[CI_TIME], ci[CI_COMP], t) > 1:
            raise FMUKernelError(ERR_TIME, ci[CI_KEY])
        cf[CF_TSET] = t
    nx = ci[CI_NX]
    if nx > 0:
        o = CF_PAR + ci[CI_NPAR]
        for i in range(nx):
            cf[o + i] = xc[i]
        if c_ppz(ci[CI_SETX], ci[CI_COMP], ci[CI_CF] + 8 * o, nx) > 1:
            raise FMUKernelError(ERR_DERIV, ci[CI_KEY])
    _set_inputs(ci, u, v)


@njit(cache=True)
def _read_vector(p, slot, err, out):
    # fmi2GetDerivatives / fmi2GetContinuousStates into the dx scratch of cf, then out
    ci, cf = blocks(p)
    nx = ci[CI_NX]
    o = CF_PAR + ci[CI_NPAR] + nx
    if c_ppz(ci[slot], ci[CI_COMP], ci[CI_CF] + 8 * o, nx) > 1:
        raise FMUKernelError(err, ci[CI_KEY])
    for i in range(nx):
        out[i] = cf[o + i]


@njit(cache=True)
def ev_derivatives(p, out):
    _read_vector(p, CI_GETDX, ERR_DERIV, out)


@njit(cache=True)
def ev_indicators(p, out):
    ci, cf = blocks(p)
    if c_ppz(ci[CI_GETZ], ci[CI_COMP], np.int64(out.ctypes.data), out.size) > 1:
        raise FMUKernelError(ERR_EVENT, ci[CI_KEY])


@njit(cache=True)
def ev_states(p, out):
    _read_vector(p, CI_GETX, ERR_EVENT, out)


@njit(cache=True)
def ev_completed(p):
    ci, cf = blocks(p)
    a = ci[CI_CF] + 8 * CF_FLAGS
    cf[CF_FLAGS] = 0.0
    if c_pipp(ci[CI_COMPLETED], ci[CI_COMP], 1, a, a + 4) > 1:
        raise FMUKernelError(ERR_EVENT, ci[CI_KEY])
    if _byte(a + 4) != 0:
        raise FMUKernelError(ERR_TERM, ci[CI_KEY])
    return _byte(a) != 0


@njit(cache=True)
def _event_iteration(ci, cf):
    """New discrete states until none is needed; the next time event (inf if none)."""
    comp = ci[CI_COMP]
    a = ci[CI_CF] + 8 * CF_EVINFO
    for _ in range(10_000):
        for k in range(4):
            cf[CF_EVINFO + k] = 0.0
        if ci[CI_VER] == 3:
            st = c_ppppppp(ci[CI_NEWDISC], comp, a, a + 1, a + 2, a + 3, a + 4,
                           a + 8 * 3)
            more, term, defined = _byte(a), _byte(a + 1), _byte(a + 4)
        else:
            st = c_pp(ci[CI_NEWDISC], comp, a)
            more, term, defined = _byte(a), _byte(a + 4), _byte(a + 16)
        if st > 1:
            raise FMUKernelError(ERR_EVENT, ci[CI_KEY])
        if term != 0:
            raise FMUKernelError(ERR_TERM, ci[CI_KEY])
        if more == 0:
            t = cf[CF_EVINFO + 3]
            return t if defined != 0 and np.isfinite(t) else np.inf
    raise FMUKernelError(ERR_CHATTER, ci[CI_KEY])


@njit(cache=True)
def ev_event(p):
    ci, cf = blocks(p)
    comp = ci[CI_COMP]
    if c_p(ci[CI_ENTER_EV], comp) > 1:
        raise FMUKernelError(ERR_EVENT, ci[CI_KEY])
    t_next = _event_iteration(ci, cf)
    if c_p(ci[CI_ENTER_CT], comp) > 1:
        raise FMUKernelError(ERR_EVENT, ci[CI_KEY])
    ci[CI_NEVENTS] += 1
    return t_next


# me_events' FMU calls for a context that is p (an array): the C entry points above
@overload(me_events.fmu_put)
def _ol_put(ctx, t, xc, u, v):
    if isinstance(ctx, types.Array):
        return lambda ctx, t, xc, u, v: ev_put(ctx, t, xc, u, v)


@overload(me_events.fmu_derivatives)
def _ol_derivatives(ctx, out):
    if isinstance(ctx, types.Array):
        return lambda ctx, out: ev_derivatives(ctx, out)


@overload(me_events.fmu_indicators)
def _ol_indicators(ctx, out):
    if isinstance(ctx, types.Array):
        return lambda ctx, out: ev_indicators(ctx, out)


@overload(me_events.fmu_completed)
def _ol_completed(ctx):
    if isinstance(ctx, types.Array):
        return lambda ctx: ev_completed(ctx)


@overload(me_events.fmu_event)
def _ol_event(ctx):
    if isinstance(ctx, types.Array):
        return lambda ctx: ev_event(ctx)


@overload(me_events.fmu_states)
def _ol_states(ctx, out):
    if isinstance(ctx, types.Array):
        return lambda ctx, out: ev_states(ctx, out)


@njit(cache=True)
def ev_restart(ci, cf, u, v):
    """Back to t = 0 as the element's start does: initialisation with (u, v), event
    iteration, continuous-time mode, the host record cleared."""
    restart(ci, cf, u, v)
    cf[CF_TEVENT] = _event_iteration(ci, cf)
    if c_p(ci[CI_ENTER_CT], ci[CI_COMP]) > 1:
        raise FMUKernelError(ERR_INIT, ci[CI_KEY])
    cf[CF_TSET] = np.nan
    cf[CF_HLAST] = 0.0
    ci[CI_HAS_LAST] = 0


@njit(cache=True)
def ev_advance(x, u0, u1, dt, v, p, rtol):
    """The FMU's own FMI host over one input segment (fmu/me_events.py), compiled;
    x = [t_fmu, continuous states, F_end], rolled back first if x is the saved state."""
    ci, cf = blocks(p)
    comp = ci[CI_COMP]
    if comp == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    nx, nz = ci[CI_NX], ci[CI_NZ]
    zo = CF_PAR + ci[CI_NPAR] + 2 * nx
    t0 = x[0]
    _enter_segment(ci, cf, comp, t0, u0, v, True)
    xc = np.empty(nx)
    xs = np.empty(nx)
    for i in range(nx):
        xc[i] = x[1 + i]
        xs[i] = cf[zo + 2 * nz + i]
    z = np.empty(nz)
    zl = np.empty(nz)
    for i in range(nz):
        zl[i] = cf[zo + i]
    t_next, h_last, ev = advance_segment(p, t0, xc, u0, v, dt, rtol, xs, z, zl,
                                         ci[CI_HAS_LAST] != 0, cf[CF_TEVENT], cf[CF_HLAST])
    if ev < 0:
        raise FMUKernelError(ERR_CHATTER, ci[CI_KEY])
    cf[CF_TEVENT] = t_next
    cf[CF_HLAST] = h_last
    for i in range(nz):
        cf[zo + i] = z[i]
    ci[CI_HAS_LAST] = 1
    t1 = t0 + dt
    cf[CF_T] = t1
    x[0] = t1
    for i in range(nx):
        x[1 + i] = xc[i]
    ev_put(p, t1, xc, u1, v)
    x[1 + nx] = _get_output(ci)


@njit(cache=True)
def ev_force(x, u, v, p):
    """Output for state x = [t_fmu, xc, F_end]: computed by the FMU with inputs (u, v)
    when x is its current state, F_end for a past one (the output at t = 0 after a
    re-initialisation with those inputs)."""
    ci, cf = blocks(p)
    if ci[CI_COMP] == 0:
        raise FMUKernelError(ERR_CLOSED, ci[CI_KEY])
    nx = ci[CI_NX]
    t = x[0]
    if t == 0.0 and (cf[CF_T] != 0.0 or ci[CI_FRESH] != 0):
        if u == cf[CF_U0] and v == cf[CF_V0]:
            if cf[CF_T] != 0.0:
                return cf[CF_F0]
        else:
            if cf[CF_T] != 0.0:
                return x[1 + nx]
            ev_restart(ci, cf, u, v)
    elif t != cf[CF_T]:
        return x[1 + nx]
    xc = np.empty(nx)
    for i in range(nx):
        xc[i] = x[1 + i]
    ev_put(p, t, xc, u, v)
    return _get_output(ci)


def address(fn) -> int:
    """Address of a ctypes function (0 if absent)."""
    import ctypes

    if fn is None:
        return 0
    return ctypes.cast(fn, ctypes.c_void_p).value or 0
