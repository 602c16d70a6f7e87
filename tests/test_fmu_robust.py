"""FMUs that never crash their host and never lie (issue 11 item 3), portable binaries
(item 5). Everything that could crash runs in a child process driving the FMU's C
entry points through plain ctypes, so a segfault is a failed test, not a dead pytest."""
import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hystmech.fmu import export_fmu
from test_fmu_cases import available

CASES = available()

CHILD = textwrap.dedent(r'''
    import ctypes, json, math, random, struct, sys, threading, time
    from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double, c_int,
                        c_size_t, c_uint, c_void_p, c_char)

    so, guid, task = sys.argv[1], sys.argv[2], sys.argv[3]
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    lib = ctypes.CDLL(so)
    LOG = []
    # the logger is variadic (message "%s", then the text): read the first vararg
    LOGGER = CFUNCTYPE(None, c_void_p, c_char_p, c_int, c_char_p, c_char_p, c_char_p)
    ALLOC = CFUNCTYPE(c_void_p, c_size_t, c_size_t)
    FREE = CFUNCTYPE(None, c_void_p)
    libc = ctypes.CDLL(None)
    libc.calloc.restype = c_void_p
    libc.calloc.argtypes = [c_size_t, c_size_t]
    libc.free.argtypes = [c_void_p]

    class CB(Structure):
        _fields_ = [("logger", LOGGER), ("allocateMemory", ALLOC), ("freeMemory", FREE),
                    ("stepFinished", c_void_p), ("componentEnvironment", c_void_p)]

    def _log(env, name, status, cat, fmt, msg):
        LOG.append((status, (msg or b"").decode(errors="replace"), name))

    cb = CB(LOGGER(_log), ALLOC(lambda n, s: libc.calloc(n, s)), FREE(lambda p: libc.free(p)),
            None, None)
    D = POINTER(c_double)
    U = POINTER(c_uint)
    for name, res, argt in [
            ("fmi2Instantiate", c_void_p, [c_char_p, c_int, c_char_p, c_char_p, POINTER(CB), c_int, c_int]),
            ("fmi2SetupExperiment", c_int, [c_void_p, c_int, c_double, c_double, c_int, c_double]),
            ("fmi2EnterInitializationMode", c_int, [c_void_p]),
            ("fmi2ExitInitializationMode", c_int, [c_void_p]),
            ("fmi2Terminate", c_int, [c_void_p]), ("fmi2Reset", c_int, [c_void_p]),
            ("fmi2FreeInstance", None, [c_void_p]),
            ("fmi2SetReal", c_int, [c_void_p, U, c_size_t, D]),
            ("fmi2GetReal", c_int, [c_void_p, U, c_size_t, D]),
            ("fmi2DoStep", c_int, [c_void_p, c_double, c_double, c_int]),
            ("fmi2GetRealStatus", c_int, [c_void_p, c_int, D]),
            ("fmi2GetFMUstate", c_int, [c_void_p, POINTER(c_void_p)]),
            ("fmi2SetFMUstate", c_int, [c_void_p, c_void_p]),
            ("fmi2FreeFMUstate", c_int, [c_void_p, POINTER(c_void_p)]),
            ("fmi2SerializedFMUstateSize", c_int, [c_void_p, c_void_p, POINTER(c_size_t)]),
            ("fmi2SerializeFMUstate", c_int, [c_void_p, c_void_p, POINTER(c_char), c_size_t]),
            ("fmi2DeSerializeFMUstate", c_int, [c_void_p, POINTER(c_char), c_size_t, POINTER(c_void_p)]),
            ("fmi2SetTime", c_int, [c_void_p, c_double]),
            ("fmi2EnterEventMode", c_int, [c_void_p]),
            ("fmi2EnterContinuousTimeMode", c_int, [c_void_p]),
            ("fmi2GetDerivatives", c_int, [c_void_p, D, c_size_t]),
            ("fmi2SetRealInputDerivatives", c_int, [c_void_p, U, c_size_t, POINTER(c_int), D])]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, argt

    def arr(t, vals):
        return (t * len(vals))(*vals)

    def new(cosim=True, name=b"x"):
        c = lib.fmi2Instantiate(name, 1 if cosim else 0, guid.encode(), b"", byref(cb), 0, 0)
        assert c
        return c

    def set_(c, vr, vals):
        return lib.fmi2SetReal(c, arr(c_uint, vr), len(vr), arr(c_double, vals))

    def get(c, vr):
        out = (c_double * len(vr))()
        st = lib.fmi2GetReal(c, arr(c_uint, vr), len(vr), out)
        return st, list(out)

    def start(c, u=0.0, v=0.0, params=(), tol=None):
        assert lib.fmi2SetupExperiment(c, tol is not None, tol or 0.0, 0.0, 0, 0.0) == 0
        assert lib.fmi2EnterInitializationMode(c) == 0
        for vr, val in params:
            assert set_(c, [vr], [val]) == 0, LOG
        assert set_(c, [1, 2], [u, v]) == 0
        assert lib.fmi2ExitInitializationMode(c) == 0

    def snap(c):
        s = c_void_p()
        assert lib.fmi2GetFMUstate(c, byref(s)) == 0
        return s

    def blob(c, s):
        n = c_size_t()
        assert lib.fmi2SerializedFMUstateSize(c, s, byref(n)) == 0
        b = (c_char * n.value)()
        assert lib.fmi2SerializeFMUstate(c, s, b, n.value) == 0
        return bytearray(b.raw)

    def deser(c, data):
        b = (c_char * len(data)).from_buffer_copy(bytes(data)) if data else (c_char * 1)()
        s = c_void_p()
        st = lib.fmi2DeSerializeFMUstate(c, b, len(data), byref(s))
        return st, s

    out = {}
    A, H, VX = args.get("amp", 1e-3), args.get("h", 1e-3), 100000
    if task == "machine":
        c = new(cosim=True)
        out["step_before_init"] = lib.fmi2DoStep(c, 0.0, 1e-3, 1)
        out["F_unchanged"] = get(c, [3])
        out["exit_before_enter"] = lib.fmi2ExitInitializationMode(c)
        start(c, 0.0, A)
        out["setup_when_running"] = lib.fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0)
        out["me_call_on_cs"] = lib.fmi2EnterEventMode(c)
        out["param_when_running"] = set_(c, [4], [1e-6])  # rtol: a fixed parameter
        out["step"] = lib.fmi2DoStep(c, 0.0, 1e-3, 1)
        out["terminate"] = lib.fmi2Terminate(c)
        F_term = get(c, [3])
        out["step_after_terminate"] = lib.fmi2DoStep(c, 1e-3, 1e-3, 1)
        out["set_after_terminate"] = set_(c, [1], [0.5])
        out["F_after_terminate"] = [F_term, get(c, [3])]
        out["reset"] = lib.fmi2Reset(c)
        start(c, 0.0, A)
        out["step_after_reset"] = lib.fmi2DoStep(c, 0.0, 1e-3, 1)
        lib.fmi2DoStep(c, 1e-3, 1e-3, 1)
        out["step_back"] = lib.fmi2DoStep(c, 0.0, 1e-3, 1)  # no state restored: warned
        out["step_on"] = lib.fmi2DoStep(c, 1e-3, 1e-3, 1)
        lib.fmi2FreeInstance(c)
        m = new(cosim=False)
        out["me_settime_before_init"] = lib.fmi2SetTime(m, 0.1)
        start(m, 0.0, A)
        out["me_dostep"] = lib.fmi2DoStep(m, 0.0, 1e-3, 1)
        out["me_contmode_twice"] = [lib.fmi2EnterContinuousTimeMode(m),
                                    lib.fmi2EnterContinuousTimeMode(m)]
        lib.fmi2FreeInstance(m)
    elif task == "nonfinite":
        res = []
        for cosim in (True, False):
            for bad_vr, bad in ((1, math.nan), (2, math.inf), (1, -math.inf), (2, math.nan)):
                c = new(cosim=cosim)
                start(c, 0.0, A)
                if cosim:
                    for k in range(5):
                        set_(c, [1, 2], [A * k * H, A])
                        assert lib.fmi2DoStep(c, k * H, H, 1) == 0
                else:
                    lib.fmi2EnterContinuousTimeMode(c)
                    lib.fmi2SetTime(c, 5 * H)
                    set_(c, [1, 2], [5 * A * H, A])
                xs = list(range(VX, VX + args["nx"]))
                before = get(c, [3] + xs)
                s = snap(c)
                st = set_(c, [bad_vr], [bad])
                after = get(c, [3] + xs)
                restored = lib.fmi2SetFMUstate(c, s)
                again = get(c, [3] + xs)
                res.append([cosim, bad_vr, st, before, after, restored, again])
                lib.fmi2FreeFMUstate(c, byref(s))
                lib.fmi2FreeInstance(c)
            c = new(cosim=True)
            start(c, 0.0, A)
            res.append(["step_nan_h", lib.fmi2DoStep(c, 0.0, math.nan, 1),
                        lib.fmi2DoStep(c, 0.0, -1.0, 1)])
            lib.fmi2FreeInstance(c)
        out["res"] = res
    elif task == "blob":
        c = new(cosim=True)
        start(c, 0.0, A)
        for k in range(40):   # a memory with several reversals
            uk = A * math.sin(0.9 * k) * (1 + 0.3 * math.sin(2.7 * k))
            set_(c, [1, 2], [uk, 0.0])
            assert lib.fmi2DoStep(c, k * H, H, 1) == 0, LOG
        s = snap(c)
        good = blob(c, s)
        st, s2 = deser(c, good)
        out["roundtrip"] = st
        rng = random.Random(args.get("seed", 0))
        counts = {}
        n = len(good)
        cases = []
        # every 8-byte slot set to garbage doubles, then random byte flips and sizes
        for off in range(0, n - 7, 8):
            for val in (math.nan, math.inf, -1.0, 0.5, 1e300, 3.0, 2.0 ** 31, -2.0 ** 31):
                d = bytearray(good); d[off:off + 8] = struct.pack("d", val); cases.append(d)
            d = bytearray(good); d[off:off + 8] = struct.pack("q", rng.randrange(-2**63, 2**63)); cases.append(d)
        for k in range(args.get("n", 3000)):
            d = bytearray(good)
            for _ in range(rng.randint(1, 8)):
                d[rng.randrange(n)] = rng.randrange(256)
            cases.append(d)
        cases += [good[:-1], good + b"\0", bytearray(), bytearray(8)]
        t0 = time.time()
        for d in cases:
            st, s3 = deser(c, d)
            key = str(st)
            if st == 0:   # accepted: it must be usable
                a = lib.fmi2SetFMUstate(c, s3)
                g = get(c, [3])
                set_(c, [1, 2], [A * 0.3, A])
                b = lib.fmi2DoStep(c, 40 * H, H, 1)
                key += f"/set{a}/get{g[0]}/step{b}"
                lib.fmi2SetFMUstate(c, s)  # back to a good state (also leaves error mode)
                lib.fmi2FreeFMUstate(c, byref(s3))
            counts[key] = counts.get(key, 0) + 1
        out["counts"] = counts
        out["n_cases"] = len(cases)
        out["messages"] = sorted({m for st, m, _ in LOG if "corrupted" in m})[:20]
    elif task == "budget":
        c = new(cosim=True)
        start(c, 0.0, args["v"], params=[(4, args["rtol"])])
        s_before = get(c, [3, VX])
        t0 = time.process_time()      # CPU time: the budget bounds work, not wall time
        st = lib.fmi2DoStep(c, 0.0, args["h_long"], 1)
        out["elapsed"] = time.process_time() - t0
        out["status"] = st
        last = c_double(-1.0)
        out["last_status"] = lib.fmi2GetRealStatus(c, 2, byref(last))  # fmi2LastSuccessfulTime
        out["last"] = last.value
        out["state"] = [s_before, get(c, [3, VX])]
        out["log"] = [m for st_, m, _ in LOG if st_ == 2][:1]
        # the importer retries from the same state with a step that fits the budget
        out["after"] = lib.fmi2DoStep(c, 0.0, args["h_short"], 1)
        out["state_after"] = get(c, [3, VX])
    elif task == "threads":
        # instance A overflows its Preisach memory (an error) over and over while
        # instance B steps normally in another thread: B must never see A's error
        stop = time.time() + args.get("seconds", 1.5)
        bad = {"A_errors": 0, "B_errors": 0, "B_steps": 0}

        def run_a():
            c = new(name=b"A")
            while time.time() < stop:
                lib.fmi2Reset(c)
                start(c, 0.0, 0.0)
                k = 0
                while True:
                    set_(c, [1, 2], [A * (1 - 2 * (k % 2)) * (1.0 - 0.9 * k / 50), 0.0])
                    if lib.fmi2DoStep(c, k * H, H, 1) != 0:
                        bad["A_errors"] += 1
                        break
                    k += 1
                    if k > 60:
                        break

        def run_b():
            c = new(name=b"B")
            start(c, 0.0, 0.0)
            k = 0
            while time.time() < stop:
                set_(c, [1, 2], [A * 0.5 * (k % 50) / 50.0, 0.0])  # a sawtooth: depth <= 3
                if lib.fmi2DoStep(c, k * H, H, 1) != 0:
                    bad["B_errors"] += 1
                    break
                bad["B_steps"] += 1
                k += 1

        ts = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        out.update(bad)
        out["B_log"] = [m for st_, m, who in LOG if who == b"B"][:3]
    print("RESULT " + json.dumps(out))
''')


def _extract(path, d):
    with zipfile.ZipFile(path) as zf:
        zf.extractall(d)
    md = (Path(d) / "modelDescription.xml").read_text()
    guid = re.search(r'guid="([^"]+)"', md).group(1)
    so = next((Path(d) / "binaries" / "linux64").glob("*.so"))
    return str(so), guid


def _child(tmp_path, path, task, timeout=600, **args):
    d = tmp_path / f"x_{task}_{Path(path).stem}"
    so, guid = _extract(path, d)
    return _run_child(tmp_path, so, guid, task, timeout, **args)


def _run_child(tmp_path, so, guid, task, timeout=600, **args):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    r = subprocess.run([sys.executable, str(script), so, guid, task, json.dumps(args)],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"child crashed or failed (rc {r.returncode}):\n{r.stderr[-3000:]}"
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[7:])


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("robust")
    return {n: export_fmu(c[0](), d / f"{n}.fmu") for n, c in CASES.items()}


OK, DISCARD, ERROR = 0, 2, 3


@pytest.mark.parametrize("name", ["Dahl", "Preisach"])
def test_state_machine_is_enforced(tmp_path, fmus, name):
    r = _child(tmp_path, fmus[name], "machine", amp=CASES[name][1])
    assert r["step_before_init"] == ERROR
    assert r["exit_before_enter"] == ERROR
    assert r["setup_when_running"] == ERROR and r["me_call_on_cs"] == ERROR
    assert r["param_when_running"] == ERROR
    assert r["reset"] == OK and r["step_after_reset"] == OK
    assert r["step_back"] == 1 and r["step_on"] == OK  # fmi2Warning: the path restarts
    assert r["terminate"] == OK
    assert r["step_after_terminate"] == ERROR and r["set_after_terminate"] == ERROR
    (st1, F1), (st2, F2) = r["F_after_terminate"]
    assert st1 == st2 == OK and F1 == F2  # the refused step did not advance anything
    assert r["me_settime_before_init"] == ERROR and r["me_dostep"] == ERROR
    assert r["me_contmode_twice"] == [OK, ERROR]


@pytest.mark.parametrize("name", sorted(CASES))
def test_nonfinite_inputs_are_refused_with_the_state_untouched(tmp_path, fmus, name):
    el = CASES[name][0]()
    r = _child(tmp_path, fmus[name], "nonfinite", amp=CASES[name][1], nx=el.n_states)["res"]
    for row in r:
        if row[0] == "step_nan_h":
            assert row[1:] == [ERROR, ERROR]
            continue
        cosim, vr, st, before, after, restored, again = row
        assert st == ERROR, row
        assert before[0] == OK and after[0] == OK and again[0] == OK
        assert after[1] == before[1] and again[1] == before[1], row  # F and every state
        assert np.all(np.isfinite(before[1]))
        assert restored == OK


@pytest.mark.parametrize("name", ["Preisach", "PreisachContinuous", "CableLaw", "Masing"])
def test_corrupted_serialized_states_never_crash(tmp_path, fmus, name):
    """Every 8-byte field set to NaN/inf/garbage, 3000 random byte corruptions, wrong
    sizes: deserialisation refuses what is invalid; what it accepts can be set and
    stepped (and the child process never crashes)."""
    r = _child(tmp_path, fmus[name], "blob", timeout=900, amp=CASES[name][1], n=3000)
    assert r["roundtrip"] == OK
    refused = sum(v for k, v in r["counts"].items() if k.startswith(str(ERROR)))
    accepted = {k: v for k, v in r["counts"].items() if k.startswith("0")}
    assert refused > 1000  # (fields that do not matter, e.g. unused stack slots, may change)
    # an accepted state is a valid one: it sets, evaluates and steps
    for k in accepted:
        assert k.startswith("0/set0/get0/step"), k
    assert any("corrupted state" in m for m in r["messages"])


def _bouc_wen_z(z0, v, h, A, beta, gamma, n):
    """Independent truth: the Bouc-Wen law dz/dt = A v - beta |v| |z|^(n-1) z - gamma v |z|^n
    (components/bouc_wen.py) at constant v, by scipy's Radau at rtol 1e-12."""
    from scipy.integrate import solve_ivp

    def rhs(t, z):
        return [A * v - beta * abs(v) * abs(z[0]) ** (n - 1) * z[0] - gamma * v * abs(z[0]) ** n]
    sol = solve_ivp(rhs, (0.0, h), [z0], method="Radau", rtol=1e-12, atol=1e-12)
    return sol.y[0, -1]


def test_long_step_returns_discard_with_the_state_untouched(tmp_path):
    """Bounded work per doStep (fmu/templates/hm_fmu.h, HM_MAX_INTERNAL_STEPS): the
    Bouc-Wen FMU's sources built with a budget of 4 internal steps; a 1 s step that
    crosses z = 0 (n = 1.5: |z|^n is not analytic there, the segment map takes short
    steps) and runs into saturation at rtol 1e-12 needs more: fmi2DoStep returns fmi2Discard,
    fmi2LastSuccessfulTime is the step's start and the state is as before. The retry
    with h = 10 ms (still across z = 0) fits the budget and returns fmi2OK with z equal
    to an independent ODE solution."""
    from hystmech.fmu.export import find_compiler, fmi_headers_dir

    make, _, _ = CASES["BoucWen"]
    el = make()
    path = export_fmu(el, tmp_path / "BW.fmu")
    d = tmp_path / "bw"
    _, guid = _extract(path, d)
    so = tmp_path / "bw_budget20.so"
    r = subprocess.run([find_compiler(), "-shared", "-fPIC", "-O1", "-std=c99",
                        "-D_POSIX_C_SOURCE=200809L", "-DHM_MAX_INTERNAL_STEPS=4L",
                        f"-I{d / 'sources'}", f"-I{fmi_headers_dir()}",
                        str(d / "sources" / "fmi2_model.c"), "-o", str(so), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    v, h_long, h_short = -0.1, 1.0, 0.01
    r = _run_child(tmp_path, str(so), guid, "budget", v=v, h_long=h_long, h_short=h_short,
                   rtol=1e-12)
    assert r["status"] == DISCARD and r["elapsed"] < 10.0
    assert r["last_status"] == OK and r["last"] == 0.0
    assert r["state"][0] == r["state"][1] == [OK, [5.0, 5.0]]  # F = z0 + k_el u, z = z0
    assert "more than 4 internal steps" in r["log"][0]
    assert r["after"] == OK
    A, beta, gamma, n, k_el = (el.p[i] for i in range(5))
    z = _bouc_wen_z(5.0, v, h_short, A, beta, gamma, n)
    assert z < 0.0  # the retried step crossed z = 0 too
    st, (F, z_fmu) = r["state_after"]
    assert st == OK
    assert z_fmu == pytest.approx(z, rel=1e-8)
    assert F == pytest.approx(z + k_el * v * h_short, rel=1e-8)


def test_error_state_is_per_instance_across_threads(tmp_path):
    """Two instances of one Preisach FMU in two threads: A runs into memory-stack
    overflow errors again and again, B steps normally and never sees A's error."""
    from hystmech.components import get_element_class

    el = get_element_class("Preisach")(a1=[-0.004, -0.002, 0.0], a2=[-0.001, 0.003, 0.002],
                                       weights=[3.0, 5.0, 2.0], initial=-1, max_depth=4)
    p = export_fmu(el, tmp_path / "P.fmu")
    r = _child(tmp_path, p, "threads", amp=0.004, seconds=1.5)
    assert r["A_errors"] > 0 and r["B_steps"] > 100
    assert r["B_errors"] == 0, r["B_log"]


def test_source_fmus_link_into_one_program(tmp_path):
    """Three source-code FMUs (Dahl twice under two model identifiers, and a Preisach +
    Dahl sum) compiled with FMI2_FUNCTION_PREFIX link into one program: every global
    symbol carries the model identifier (no "multiple definition of dahl_advance")."""
    from hystmech.components import get_element_class
    from hystmech.fmu.export import find_compiler, fmi_headers_dir

    cc = find_compiler()
    Dahl = get_element_class("Dahl")
    P = get_element_class("Preisach")
    fmus = {"DahlA": Dahl(rho=200.0, Fc=2.0), "DahlB": Dahl(rho=100.0, Fc=1.0),
            "Mix": P(a1=[-1.0, 0.0], a2=[0.5, 1.0], weights=[1.0, 2.0]) + Dahl(rho=5.0, Fc=1.0)}
    objs = []
    for ident, el in fmus.items():
        path = export_fmu(el, tmp_path / f"{ident}.fmu", model_identifier=ident)
        d = tmp_path / ident
        with zipfile.ZipFile(path) as zf:
            zf.extractall(d)
        o = tmp_path / f"{ident}.o"
        r = subprocess.run([cc, "-c", "-std=c99", "-O1", f"-DFMI2_FUNCTION_PREFIX={ident}_",
                            f"-I{d / 'sources'}", f"-I{fmi_headers_dir()}",
                            str(d / "sources" / "fmi2_model.c"), "-o", str(o)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        glob = subprocess.run(["nm", "-g", "--defined-only", str(o)], capture_output=True,
                              text=True).stdout.split()[2::3]
        # the kernels carry the identifier; the fmi2 API gets it from the importer's
        # fmi2Functions.h (FMI2_FUNCTION_PREFIX; fmpy's copy of the header ignores it,
        # so apply it to the object here)
        api = [g for g in glob if g.startswith("fmi2")]
        assert len(api) > 40
        assert all(g.startswith(f"{ident}__") for g in glob if g not in api), glob
        subprocess.run(["objcopy", *[f"--redefine-sym={g}={ident}_{g}" for g in api], str(o)],
                       check=True)
        objs.append(str(o))
    main = tmp_path / "main.c"
    main.write_text("#include <stdio.h>\n"
                    + "".join(f"const char *{i}_fmi2GetVersion(void);\n" for i in fmus)
                    + "int main(void) {\n"
                    + "".join(f'    printf("%s\\n", {i}_fmi2GetVersion());\n' for i in fmus)
                    + "    return 0;\n}\n")
    exe = tmp_path / "prog"
    r = subprocess.run([cc, str(main), *objs, "-o", str(exe), "-lm"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300).stdout
    assert out.split() == ["2.0"] * 3


CHILD3 = textwrap.dedent(r'''
    import json, math, struct, sys
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Slave

    path = sys.argv[1]
    md = read_model_description(path)
    f = FMU3Slave(guid=md.guid, unzipDirectory=extract(path),
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="r")
    msgs = []
    f.instantiate(logMessage=lambda env, st, cat, msg: msgs.append(msg.decode()))
    out = {}

    def call(fn, *a):
        try:
            fn(*a)
            return "ok"
        except Exception:
            return "error"

    out["step_before_init"] = call(f.doStep, 0.0, 1e-3)
    f.enterInitializationMode(startTime=0.0)
    f.setFloat64([1, 2], [0.0, 2e-3])
    f.exitInitializationMode()
    for k in range(20):
        f.setFloat64([1, 2], [2e-3 * math.sin(0.5 * k), 1e-3 * math.cos(0.5 * k)])
        f.doStep(k * 1e-3, 1e-3)
    F = f.getFloat64([3])[0]
    s = f.getFMUState()
    blob = bytearray(f.serializeFMUState(s))
    out["nan_input"] = call(f.setFloat64, [1], [math.nan])
    out["F_untouched"] = f.getFloat64([3])[0] == F
    f.setFMUState(s)
    out["step_after_restore"] = call(f.doStep, 20e-3, 1e-3)
    bad = 0
    for off in range(0, len(blob) - 7, 8):
        d = bytearray(blob)
        d[off:off + 8] = struct.pack("d", math.nan)
        if call(f.deserializeFMUState, bytes(d)) == "error":
            bad += 1
    out["refused_nan_fields"] = bad
    out["fields"] = len(blob) // 8
    f.terminate()
    out["step_after_terminate"] = call(f.doStep, 21e-3, 1e-3)
    out["messages"] = msgs[-3:]
    print("RESULT " + json.dumps(out))
''')


def test_fmi3_state_machine_nan_and_corrupted_states(tmp_path):
    """The FMI 3.0 FMU (same core): fmi3DoStep before initialisation or after
    fmi3Terminate fails, a NaN input is refused with F unchanged, a state with any
    double field set to NaN is refused by fmi3DeserializeFMUState (child process)."""
    from hystmech.components import get_element_class

    el = get_element_class("Preisach")(a1=[-0.004, -0.002, 0.0], a2=[-0.001, 0.003, 0.002],
                                       weights=[3.0, 5.0, 2.0], initial=-1, max_depth=8)
    path = export_fmu(el, tmp_path / "P3.fmu", fmi_version=3)
    script = tmp_path / "child3.py"
    script.write_text(CHILD3)
    r = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert out["step_before_init"] == "error" and out["step_after_terminate"] == "error"
    assert out["nan_input"] == "error" and out["F_untouched"]
    assert out["step_after_restore"] == "ok"
    # every double of the blob is checked (the integer header fields are not doubles)
    assert out["refused_nan_fields"] >= out["fields"] - 8, out
    assert any("not allowed in terminated" in m for m in out["messages"]), out["messages"]
