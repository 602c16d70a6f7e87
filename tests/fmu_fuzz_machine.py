"""(Helper module, no tests.) A hypothesis state machine over the FMI 2.0 calls of one
FMU, run as a script in a subprocess by tests/test_fmu_fuzz.py so that a crash of the
host (segfault, abort) or a hang shows as a test failure instead of killing pytest:

    python fmu_fuzz_machine.py FMU_PATH cs|me MAX_EXAMPLES STEPS [strict|crash]

Calls go straight to the binary through ctypes (no wrapper that raises), in any order,
with any values: call order (stepping before initialisation, after terminate),
NaN/inf/huge inputs and step sizes, wrong value references, parameters set after
initialisation, states saved/restored, serialised states corrupted before
deserialisation. Properties checked after every call:

- the call returns an FMI status (0..4), never crashes or hangs (the parent process);
- an output read with status OK is finite (F, and the derivatives in model exchange);
- after an error status the instance is usable again: restoring a state saved before
  the error (fmi2SetFMUstate) or fmi2Reset + a new initialisation, then a sane step,
  returns OK with a finite output (FMI 2.0 §2.1.3 on fmi2Error).

With ``crash`` only the first property is checked (so that a non-finite output does
not end the search before a crash or a hang is found). Exit status 0: no counterexample; 1: a property failed (the falsifying call sequence
is printed by hypothesis); a signal (negative return code): the FMU crashed the host.
"""
from __future__ import annotations

import ctypes
import math
import os
import sys
import tempfile
import zipfile
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_size_t, c_uint, c_void_p

OK, WARNING, DISCARD, ERROR, FATAL = range(5)
VALUES = [0.0, 1e-3, -1e-3, 0.02, -0.5, 3.0, 1e300, -1e300, 5e-324, math.nan, math.inf,
          -math.inf]
STEPS = [1e-4, 1e-3, 0.05, 0.0, -1e-3, math.nan, math.inf, 1e3]


def trace(msg):
    """One line per call, written before the call: when the FMU crashes the process, the
    tail of stderr is the call sequence that crashed it."""
    os.write(2, (msg + "\n").encode())


def load(path):
    """(library, model description root, guid, identifier, unzip dir)."""
    import xml.etree.ElementTree as ET

    # unpacked beside the FMU (the test's tmp folder, which pytest rotates): a folder in
    # the system's /tmp would outlive every run, and a crashing child cannot clean up
    d = tempfile.mkdtemp(prefix="hm-fuzz-", dir=os.path.dirname(os.path.abspath(path)))
    with zipfile.ZipFile(path) as zf:
        zf.extractall(d)
    root = ET.parse(os.path.join(d, "modelDescription.xml")).getroot()
    ident = root.find("CoSimulation").get("modelIdentifier")
    lib = ctypes.CDLL(os.path.join(d, "binaries", "linux64", ident + ".so"))
    return lib, root, root.get("guid"), ident, d


def declare(lib):
    P, D, Z, I, U = c_void_p, c_double, c_size_t, c_int, POINTER(c_uint)
    sigs = {
        "fmi2Instantiate": (P, [c_char_p, I, c_char_p, c_char_p, P, I, I]),
        "fmi2FreeInstance": (None, [P]),
        "fmi2SetupExperiment": (I, [P, I, D, D, I, D]),
        "fmi2EnterInitializationMode": (I, [P]),
        "fmi2ExitInitializationMode": (I, [P]),
        "fmi2Terminate": (I, [P]),
        "fmi2Reset": (I, [P]),
        "fmi2SetReal": (I, [P, U, Z, POINTER(D)]),
        "fmi2GetReal": (I, [P, U, Z, POINTER(D)]),
        "fmi2DoStep": (I, [P, D, D, I]),
        "fmi2GetFMUstate": (I, [P, POINTER(P)]),
        "fmi2SetFMUstate": (I, [P, P]),
        "fmi2FreeFMUstate": (I, [P, POINTER(P)]),
        "fmi2SerializedFMUstateSize": (I, [P, P, POINTER(Z)]),
        "fmi2SerializeFMUstate": (I, [P, P, c_char_p, Z]),
        "fmi2DeSerializeFMUstate": (I, [P, c_char_p, Z, POINTER(P)]),
        "fmi2SetTime": (I, [P, D]),
        "fmi2SetContinuousStates": (I, [P, POINTER(D), Z]),
        "fmi2GetDerivatives": (I, [P, POINTER(D), Z]),
        "fmi2GetContinuousStates": (I, [P, POINTER(D), Z]),
        "fmi2EnterEventMode": (I, [P]),
        "fmi2EnterContinuousTimeMode": (I, [P]),
        "fmi2CompletedIntegratorStep": (I, [P, I, POINTER(I), POINTER(I)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    lib.fmi2NewDiscreteStates.restype = I
    lib.fmi2NewDiscreteStates.argtypes = [P, c_void_p]


def machine(path, mode, strict=True):
    from fmpy import calloc, free
    from fmpy.fmi2 import (fmi2CallbackAllocateMemoryTYPE, fmi2CallbackFreeMemoryTYPE,
                           fmi2CallbackFunctions, fmi2CallbackLoggerTYPE)
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    lib, root, guid, ident, unzip = load(path)
    declare(lib)
    vr = {v.get("name"): int(v.get("valueReference")) for v in root.find("ModelVariables")}
    params = [vr[v.get("name")] for v in root.find("ModelVariables")
              if v.get("causality") == "parameter"]
    nx = len(root.findall("ModelStructure/Derivatives/Unknown"))
    known = sorted(vr.values())
    bad = [0, 5, 99, 100 + len(params) + 7, 100000 + 10 ** 4, 2 ** 31, 2 ** 32 - 1]

    cb = fmi2CallbackFunctions()
    cb.logger = fmi2CallbackLoggerTYPE(lambda *a: None)
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    uri = ("file://" + unzip + "/resources").encode()

    def status(s, what):
        assert 0 <= s <= FATAL, f"{what} returned {s}, not an FMI status"
        return s

    class FMIMachine(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.c = None
            self.t = 0.0
            self.errored = False
            self.fatal = False
            self.good = None          # a state saved while no error had occurred
            self.good_ready = False
            self.in_init = False      # in initialisation mode (as far as the calls said)
            self.ready = False        # initialised: step mode (cs) / event or continuous (me)

        # -- life cycle ---------------------------------------------------------------
        @initialize()
        def instantiate(self):
            trace("--- example: instantiate()")
            self.c = lib.fmi2Instantiate(b"fuzz", 1 if mode == "cs" else 0, guid.encode(),
                                         uri, byref(cb), 0, 0)
            assert self.c, "fmi2Instantiate returned NULL"

        def teardown(self):
            if self.c:
                if self.good is not None:
                    lib.fmi2FreeFMUstate(self.c, byref(self.good))
                lib.fmi2FreeInstance(self.c)
                self.c = None

        def _note(self, s):
            if s >= ERROR:
                self.errored = True
            if s == FATAL:
                self.fatal = True
            return s

        @precondition(lambda self: not self.fatal)
        @rule(t0=st.sampled_from([0.0, 0.0, 1.0, -1.0, math.nan]))
        def setup(self, t0):
            trace(f"setup(t0={t0!r})")
            s = status(lib.fmi2SetupExperiment(self.c, 0, 0.0, t0, 0, 0.0), "fmi2SetupExperiment")
            if s <= WARNING and math.isfinite(t0):
                self.t = t0
            self._note(s)

        @precondition(lambda self: not self.fatal)
        @rule()
        def enter_init(self):
            trace("enter_init()")
            if self._note(status(lib.fmi2EnterInitializationMode(self.c),
                                 "fmi2EnterInitializationMode")) <= WARNING:
                self.in_init, self.ready = True, False

        @precondition(lambda self: not self.fatal)
        @rule()
        def exit_init(self):
            trace("exit_init()")
            if self._note(status(lib.fmi2ExitInitializationMode(self.c),
                                 "fmi2ExitInitializationMode")) <= WARNING and self.in_init:
                self.in_init, self.ready = False, True

        @precondition(lambda self: not self.fatal)
        @rule()
        def terminate(self):
            trace("terminate()")
            if self._note(status(lib.fmi2Terminate(self.c), "fmi2Terminate")) <= WARNING:
                self.ready = self.in_init = False

        @precondition(lambda self: not self.fatal)
        @rule()
        def reset(self):
            trace("reset()")
            if status(lib.fmi2Reset(self.c), "fmi2Reset") <= WARNING:
                self.t = 0.0
                self.ready = self.in_init = False

        # -- values ---------------------------------------------------------------------
        def _set(self, r, val):
            a = (c_uint * 1)(r)
            b = (c_double * 1)(val)
            return self._note(status(lib.fmi2SetReal(self.c, a, 1, b), "fmi2SetReal"))

        def _get(self, r):
            a = (c_uint * 1)(r)
            b = (c_double * 1)(math.nan)
            s = self._note(status(lib.fmi2GetReal(self.c, a, 1, b), "fmi2GetReal"))
            return s, b[0]

        @precondition(lambda self: not self.fatal)
        @rule(which=st.sampled_from(["u", "v"]), val=st.sampled_from(VALUES))
        def set_input(self, which, val):
            trace(f"set_input(which={which!r}, val={val!r})")
            self._set(vr[which], val)

        @precondition(lambda self: not self.fatal and bool(params))
        @rule(i=st.integers(0, 10 ** 6), val=st.sampled_from(VALUES))
        def set_parameter(self, i, val):
            trace(f"set_parameter(i={i!r}, val={val!r})")
            self._set(params[i % len(params)], val)

        @precondition(lambda self: not self.fatal)
        @rule(r=st.sampled_from(bad), val=st.sampled_from(VALUES))
        def set_wrong_reference(self, r, val):
            trace(f"set_wrong_reference(r={r!r}, val={val!r})")
            self._set(r, val)

        @precondition(lambda self: not self.fatal)
        @rule(r=st.sampled_from(known + bad))
        def get_any(self, r):
            trace(f"get_any(r={r!r})")
            self._get(r)

        @invariant()
        def output_finite_when_ok(self):
            if self.c is None or self.fatal or not strict:
                return
            s, F = self._get(vr["F"])
            assert s > WARNING or math.isfinite(F), f"F = {F!r} returned with status {s}"

        # -- stepping ---------------------------------------------------------------------
        @precondition(lambda self: not self.fatal and mode == "cs")
        @rule(h=st.sampled_from(STEPS), wrong_t=st.booleans())
        def do_step(self, h, wrong_t):
            trace(f"do_step(h={h!r}, wrong_t={wrong_t!r})")
            t = self.t + (0.5 if wrong_t else 0.0)
            s = self._note(status(lib.fmi2DoStep(self.c, t, h, 1), "fmi2DoStep"))
            if s <= WARNING and math.isfinite(h):
                self.t = t + h

        @precondition(lambda self: not self.fatal and mode == "me")
        @rule(t=st.sampled_from([0.0, 1e-3, 0.5, -1.0, math.nan, math.inf]))
        def set_time(self, t):
            trace(f"set_time(t={t!r})")
            self._note(status(lib.fmi2SetTime(self.c, t), "fmi2SetTime"))

        @precondition(lambda self: not self.fatal and mode == "me" and nx > 0)
        @rule(val=st.sampled_from(VALUES))
        def set_states(self, val):
            trace(f"set_states(val={val!r})")
            x = (c_double * nx)(*([val] * nx))
            self._note(status(lib.fmi2SetContinuousStates(self.c, x, nx),
                              "fmi2SetContinuousStates"))

        @precondition(lambda self: not self.fatal and mode == "me" and nx > 0)
        @rule()
        def get_derivatives(self):
            trace("get_derivatives()")
            dx = (c_double * nx)()
            s = self._note(status(lib.fmi2GetDerivatives(self.c, dx, nx), "fmi2GetDerivatives"))
            assert not strict or s > WARNING or all(math.isfinite(d) for d in dx), \
                f"derivatives {list(dx)} returned with status {s}"

        @precondition(lambda self: not self.fatal and mode == "me")
        @rule()
        def completed_step(self):
            trace("completed_step()")
            e, t = c_int(0), c_int(0)
            self._note(status(lib.fmi2CompletedIntegratorStep(self.c, 1, byref(e), byref(t)),
                              "fmi2CompletedIntegratorStep"))

        @precondition(lambda self: not self.fatal and mode == "me")
        @rule()
        def event_mode(self):
            trace("event_mode()")
            self._note(status(lib.fmi2EnterEventMode(self.c), "fmi2EnterEventMode"))

        @precondition(lambda self: not self.fatal and mode == "me")
        @rule()
        def new_discrete_states(self):
            trace("new_discrete_states()")
            buf = ctypes.create_string_buffer(64)   # fmi2EventInfo: 5 fmi2Boolean + a double
            self._note(status(lib.fmi2NewDiscreteStates(self.c, buf), "fmi2NewDiscreteStates"))

        @precondition(lambda self: not self.fatal and mode == "me")
        @rule()
        def continuous_time_mode(self):
            trace("continuous_time_mode()")
            self._note(status(lib.fmi2EnterContinuousTimeMode(self.c),
                              "fmi2EnterContinuousTimeMode"))

        # -- states ---------------------------------------------------------------------
        # (strict: only states saved before any error count as good ones to recover to)
        @precondition(lambda self: not self.fatal and not (strict and self.errored))
        @rule()
        def save_state(self):
            trace("save_state()")
            h = c_void_p(self.good.value if self.good is not None else None)
            if status(lib.fmi2GetFMUstate(self.c, byref(h)), "fmi2GetFMUstate") <= WARNING:
                self.good = h
                self.good_t = self.t
                self.good_ready = self.ready

        @precondition(lambda self: not self.fatal and self.good is not None)
        @rule()
        def restore_state(self):
            trace("restore_state()")
            if self._note(status(lib.fmi2SetFMUstate(self.c, self.good),
                                 "fmi2SetFMUstate")) <= WARNING:
                self.t = self.good_t

        @precondition(lambda self: not self.fatal and self.good is not None)
        @rule(pos=st.integers(0, 10 ** 9), byte=st.integers(0, 255),
              how=st.sampled_from(["flip", "truncate", "extend", "nan", "huge", "fill"]))
        def deserialize_corrupted(self, pos, byte, how):
            trace(f"deserialize_corrupted(pos={pos!r}, byte={byte!r}, how={how!r})")
            self._corrupt(pos, byte, how)

        def _corrupt(self, pos, byte, how):
            n = c_size_t(0)
            if status(lib.fmi2SerializedFMUstateSize(self.c, self.good, byref(n)),
                      "fmi2SerializedFMUstateSize") > WARNING or n.value == 0:
                return
            buf = ctypes.create_string_buffer(n.value)
            if status(lib.fmi2SerializeFMUstate(self.c, self.good, buf, n.value),
                      "fmi2SerializeFMUstate") > WARNING:
                return
            data = bytearray(buf.raw)
            k = pos % len(data)
            if how == "flip":
                data[k] ^= byte or 1
            elif how == "truncate":
                data = data[:k]
            elif how == "extend":
                data += bytes([byte]) * 8
            elif how == "fill":  # every byte from k on: sizes, counters and values alike
                data[k:] = bytes([byte]) * (len(data) - k)
            else:  # write a NaN or a huge double over an 8-byte-aligned field
                k -= k % 8
                import struct

                data[k:k + 8] = struct.pack("<d", math.nan if how == "nan" else 1e300)[
                    :len(data) - k]
            h = c_void_p(None)
            s = status(lib.fmi2DeSerializeFMUstate(self.c, bytes(data), len(data), byref(h)),
                       "fmi2DeSerializeFMUstate")
            if s <= WARNING and h.value:
                s2 = self._note(status(lib.fmi2SetFMUstate(self.c, h), "fmi2SetFMUstate"))
                lib.fmi2FreeFMUstate(self.c, byref(h))
                if s2 <= WARNING and mode == "cs":
                    self._note(status(lib.fmi2DoStep(self.c, self.t, 1e-3, 1), "fmi2DoStep"))

        @precondition(lambda self: not self.fatal and self.good is not None)
        @rule(pos=st.integers(0, 10 ** 9), byte=st.sampled_from([0x00, 0x41, 0x7F, 0xC1, 0xFF]))
        def deserialize_garbage(self, pos, byte):
            # a blob overwritten from a random offset on (a second rule: corrupted blobs
            # are the likeliest way to crash a host, so they get more of the search)
            trace(f"deserialize_garbage(pos={pos!r}, byte={byte!r})")
            self._corrupt(pos, byte, "fill")

        # -- recovery after an error ------------------------------------------------------
        @precondition(lambda self: strict and self.errored and not self.fatal)
        @rule(via_state=st.booleans())
        def recover(self, via_state):
            trace(f"recover(via_state={via_state!r})")
            # a restored state brings back values, not the position in the state machine
            # (the instance returns to the mode it had before the error): recover by a
            # state only when both were initialised, else by reset + initialisation
            if via_state and self.good is not None and self.good_ready and self.ready:
                assert lib.fmi2SetFMUstate(self.c, self.good) <= WARNING, \
                    "fmi2SetFMUstate of a state saved before the error failed"
                self.t = self.good_t
            else:
                assert lib.fmi2Reset(self.c) <= WARNING, "fmi2Reset after an error failed"
                assert lib.fmi2SetupExperiment(self.c, 0, 0.0, 0.0, 0, 0.0) <= WARNING
                assert lib.fmi2EnterInitializationMode(self.c) <= WARNING
                assert self._set(vr["u"], 0.0) <= WARNING and self._set(vr["v"], 0.0) <= WARNING
                assert lib.fmi2ExitInitializationMode(self.c) <= WARNING, \
                    "re-initialisation after fmi2Reset failed"
                self.t = 0.0
                self.ready, self.in_init = True, False
                if mode == "me":
                    buf = ctypes.create_string_buffer(64)
                    assert lib.fmi2NewDiscreteStates(self.c, buf) <= WARNING
                    assert lib.fmi2EnterContinuousTimeMode(self.c) <= WARNING
            self.errored = False
            for name in ("u", "v"):
                assert self._set(vr[name], 1e-3) <= WARNING, f"setting {name} after recovery"
            if mode == "cs":
                s = lib.fmi2DoStep(self.c, self.t, 1e-3, 1)
                assert s <= WARNING, f"a sane step after recovery returned {s}"
                self.t += 1e-3
            s, F = self._get(vr["F"])
            assert s <= WARNING and math.isfinite(F), f"F = {F!r} (status {s}) after recovery"

    return FMIMachine


def main(argv):
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    path, mode, n_ex, n_steps = argv[1], argv[2], int(argv[3]), int(argv[4])
    M = machine(path, mode, strict=(argv[5] if len(argv) > 5 else "strict") == "strict")
    run_state_machine_as_test(
        M, settings=settings(max_examples=n_ex, stateful_step_count=n_steps, deadline=None,
                             derandomize=True, database=None, print_blob=False,
                             # shrinking costs seconds per failure; the traced calls
                             # already name the sequence (HM_FUZZ_SHRINK=1 to shrink)
                             phases=[Phase.generate] + ([Phase.shrink] if os.environ.get(
                                 "HM_FUZZ_SHRINK") == "1" else []),
                             suppress_health_check=list(HealthCheck)))
    print("no counterexample")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
