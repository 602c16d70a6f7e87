"""FMU overhead (issue 7): per communication step, measured in one run.

1. An exported FMU driven through fmpy's C-level entry points (ctypes calls to
   fmi2SetReal / fmi2DoStep / fmi2GetReal): µs per communication step, against the same
   law's C kernel called once per step through ctypes (the bare cost of one call).
2. An imported co-simulation FMU in an assembly (mass on the modified Dahl tensioner,
   projection scheme, h = communication step = 1e-5 s) against the native element in the
   same assembly: µs per step and the overhead (FMU − native). The FMU element's
   kernels are compiled calls into its binary (fmu/native.py), so the assembly loop
   stays compiled; the Python-kernel fallback (compiled=False) is shown for reference.
3. The belt rig of scenario belt-tensioner-cosim (simulate_belt, projection at the same
   step) with the co-simulation FMU tensioner against the native tensioner.
4. Model-exchange import in an assembly (issue 20): per step against the native element
   in the same run, (a) a smooth law without event indicators (Dahl: compiled rate
   kernels, integrated monolithically) and (b) an inclusion with event indicators
   (Masing: the element is its own FMI host per step, fmu/me_events.py, compiled into
   the loop; the Python-kernel fallback for reference); then
   every exportable law's ME FMU in the same assembly against the native law (the x
   error of the mass, relative; the laws and inputs of tests/test_fmu_cases.py).
Target: overhead < 5 µs per communication step (co-simulation).
"""
import tempfile
import time
from ctypes import POINTER, c_double
from pathlib import Path

import numpy as np

TARGET_US = 5.0


def _best(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def main() -> bool:
    import hystmech
    from hystmech.components import Dahl, ModifiedDahl
    from hystmech.fmu import FMUElement, export_fmu
    from hystmech.fmu.ckernels import CKernels
    from hystmech.systems import Assembly, simulate
    from hystmech.systems.rigs.belt_tensioner import MDM_PARAMS, paper_tensioner, simulate_belt

    tmp = Path(tempfile.mkdtemp(prefix="bench-fmu-"))
    el = Dahl(rho=200.0, Fc=2.0, w0=0.1)
    fe = FMUElement(export_fmu(el, tmp / "Dahl.fmu"), mode="cs", rollback=False)
    N = 100_000
    h = 1e-5

    def fmu_steps():
        t = 0.0
        for k in range(N):
            fe._set_inputs(0.01 * k * h, 0.01)
            fe._do_step(t, h)
            fe._get_output()
            t += h
        return N

    ck = CKernels(el)
    x = np.zeros(1)
    p = np.ascontiguousarray(el.p)
    xp, pp = x.ctypes.data_as(POINTER(c_double)), p.ctypes.data_as(POINTER(c_double))
    adv = ck._adv

    def kernel_calls():
        for k in range(N):
            adv(xp, 0.0, 1e-7, h, 0.01, pp, 1e-8)
        return N

    us_fmu = _best(fmu_steps)
    us_call = _best(kernel_calls)
    print(f"exported Dahl FMU, C-level calls (set u,v + doStep + get F): {us_fmu:.2f} µs/step; "
          f"one bare ctypes kernel call: {us_call:.2f} µs -> FMI overhead "
          f"{us_fmu - us_call:.2f} µs/step over the bare call (3 calls per step)")

    # the same FMU under hystmech.drive: compiled loop, compiled FMU kernels
    fd = FMUElement(fe.path, mode="cs", rollback=False)
    tt = np.arange(N) * h
    uu = 0.02 * np.sin(2 * np.pi * 5 * tt)
    hystmech.drive(fd, tt[:100], uu[:100])
    us_drive = _best(lambda: (hystmech.drive(fd, tt, uu), N)[1])
    us_dnat = _best(lambda: (hystmech.drive(el, tt, uu), N)[1])
    fd.close()
    print(f"hystmech.drive, {N} samples: Dahl FMU (compiled FMI calls) {us_drive:.2f} µs/sample, "
          f"native Dahl {us_dnat:.3f} µs/sample")

    # 2. assembly: native element vs imported co-simulation FMU, same scheme and step
    mdm = ModifiedDahl(**MDM_PARAMS, F0=1000.0)
    mfmu = export_fmu(mdm, tmp / "mdm.fmu")
    T = 0.1

    def asm_with(e):
        return Assembly(gravity=9.81).add_dof("m", mass=0.15, x0=0.0).add_element("t", e, "m") \
            .add_force("m", lambda t: 1000.0 + 50.0 * np.cos(73.15 * t))

    fmu_c = FMUElement(mfmu, mode="cs", rollback=False)           # compiled kernels
    fmu_py = FMUElement(mfmu, mode="cs", rollback=False, compiled=False)
    for e in (mdm, fmu_c):                                          # compile first
        simulate(asm_with(e), (0.0, 0.001), method="projection", h=h)

    def run_asm(e, T=T):
        def f():
            simulate(asm_with(e), (0.0, T), method="projection", h=h, energy=False)
            return int(round(T / h))
        return f

    us_nat = _best(run_asm(mdm), repeat=5)
    us_asm = _best(run_asm(fmu_c), repeat=5)
    us_py = _best(run_asm(fmu_py, T=0.02), repeat=1)
    print(f"assembly (projection, h = 1e-5 s, {int(T / h)} steps): native ModifiedDahl "
          f"{us_nat:.2f} µs/step, imported co-simulation FMU with compiled kernels "
          f"{us_asm:.2f} µs/step -> overhead {us_asm - us_nat:.2f} µs per communication step "
          f"(Python-kernel fallback, compiled=False: {us_py:.1f} µs/step)")

    # 3. the belt rig (scenario belt-tensioner-cosim): native vs co-simulation FMU
    from hystmech.fmu.cases import tensioner_fmu

    tf = tensioner_fmu(tmp / "tensioner.fmu")
    Tr = 0.3
    rig_fe = FMUElement(tf, mode="cs", rollback=False)

    def rig(el):
        def f():
            simulate_belt(el, method="projection", h=h, t_end=Tr + 1.6e-3, record_from=Tr)
            return int(round(Tr / h))
        return f

    rig(paper_tensioner("mdm"))()
    rig(rig_fe)()
    us_rn = _best(rig(paper_tensioner("mdm")))
    us_rf = _best(rig(rig_fe))
    print(f"belt rig, projection h = 1e-5 s: native {us_rn:.2f} µs/step, co-simulation FMU "
          f"tensioner {us_rf:.2f} µs/step -> overhead {us_rf - us_rn:.2f} µs/step")
    same = me_rows(tmp)
    overhead = us_asm - us_nat
    ok = overhead < TARGET_US and same
    print(f"imported co-simulation FMU in an assembly: overhead {overhead:.2f} µs per "
          f"communication step vs target < {TARGET_US} µs: {'met' if ok else 'MISSED'} "
          f"(from Python, the same three FMI calls cost {us_fmu:.2f} µs/step)")
    for e in (fe, fmu_c, fmu_py, rig_fe):
        e.close()
    return ok


def _me_rig(e, amp, w, ks, m):
    from hystmech.systems import Assembly, Harmonic

    return (Assembly().add_dof("m", mass=m)
            .impose("b", Harmonic(0.0, amp, w, -np.pi / 2), Harmonic(0.0, amp * w, w, 0.0))
            .add_spring("b", "m", k=ks).add_damper("m", "ground", c=0.2 * np.sqrt(ks * m))
            .add_element("e", e, "m"))


def me_rows(tmp):
    """Section 4 of the module docstring."""
    import sys

    import hystmech
    from hystmech.fmu import FMUElement, export_fmu
    from hystmech.systems import simulate

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_fmu_cases import available
    from test_fmu_import_me_assembly import segments   # drive's loop over the kernels

    cases = available()
    h = 1e-5
    for name, T, compiled in (("Dahl", 0.05, None), ("Masing", 0.05, True),
                              ("Masing", 0.005, False)):
        ctor, amp, freq = cases[name]
        el = ctor()
        fe = FMUElement(export_fmu(el, tmp / f"{name}_me.fmu"), mode="me", compiled=compiled)
        w = 2 * np.pi * freq
        for e in (el, fe):
            simulate(_me_rig(e, amp, w, 1e4, 1.0), (0.0, 0.001), method="projection", h=h)

        def run(e):
            def f():
                simulate(_me_rig(e, amp, w, 1e4, 1.0), (0.0, T), method="projection", h=h,
                         energy=False)
                return int(round(T / h))
            return f
        us_n = _best(run(el), repeat=3)
        us_f = _best(run(fe), repeat=3 if fe.compiled else 1)
        how = ("monolithic" if fe.kind == "smooth" else "own FMI host per step") + \
            (", compiled kernels" if fe.compiled else ", Python kernels")
        print(f"ME import in an assembly (projection, h = 1e-5 s): {name} native "
              f"{us_n:.2f} µs/step, ME FMU ({how}) {us_f:.2f} µs/step -> overhead "
              f"{us_f - us_n:.2f} µs/step ({us_f / us_n:.1f}x)")
        fe.close()
    # the compiled event host (fmu/native.py) against the Python one (the same
    # fmu/me_events.py source): bitwise the same forces and events, u(0) != 0 included
    same = True
    for name in ("Masing", "MasingLuGre"):
        if name == "MasingLuGre":
            ctor = (lambda: cases["Masing"][0]() + cases["LuGre"][0]())
            amp, freq = cases["Masing"][1:]
        else:
            ctor, amp, freq = cases[name]
        path = export_fmu(ctor(), tmp / f"{name}_host.fmu")
        t = np.linspace(0.0, 0.5 / freq, 201)
        u = 0.75 * amp + amp * np.sin(2 * np.pi * freq * t)
        runs = []
        for compiled in (False, True):
            fe = FMUElement(path, mode="me", compiled=compiled)
            runs.append((segments(fe, t, u), fe.n_events))
            fe.close()
        ok = runs[0][1] == runs[1][1] and np.array_equal(runs[0][0], runs[1][0])
        same &= ok
        print(f"  {name}: compiled ME event host {'=' if ok else '!='} Python host "
              f"(max |dF| {np.max(np.abs(runs[0][0] - runs[1][0])):.1e} N, "
              f"{runs[1][1]} events)")
    # every law: the ME FMU in the assembly against the native law, same method and step
    for name, (ctor, amp, freq) in sorted(cases.items()):
        t = np.linspace(0.0, 1.0 / freq, 401)
        fs = float(np.max(np.abs(hystmech.drive(ctor(), t, amp * np.sin(2 * np.pi * freq * t))
                                 .force)))
        w = 2 * np.pi * freq
        ks = 3.0 * fs / amp
        m = ks / (2 * np.pi * 8 * freq) ** 2
        T = 0.5 / freq
        fe = FMUElement(export_fmu(ctor(), tmp / f"{name}_all.fmu"), mode="me")
        kw = (dict(method="projection", h=T / 400) if fe.kind == "operator"
              else dict(method="RK45", rtol=1e-9))
        te = np.linspace(0.0, T, 101)
        xs = [simulate(_me_rig(e, amp, w, ks, m), (0.0, T), t_eval=te, energy=False,
                       **kw).x("m") for e in (ctor(), fe)]
        err = np.max(np.abs(xs[1] - xs[0])) / np.max(np.abs(xs[0]))
        print(f"  {name:22s} ME FMU ({fe.kind}, {kw['method']}, {fe.n_events} events) "
              f"x error vs native {err:.1e}")
        fe.close()
    return same


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
