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
Target: overhead < 5 µs per communication step.
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
    overhead = us_asm - us_nat
    ok = overhead < TARGET_US
    print(f"imported co-simulation FMU in an assembly: overhead {overhead:.2f} µs per "
          f"communication step vs target < {TARGET_US} µs: {'met' if ok else 'MISSED'} "
          f"(from Python, the same three FMI calls cost {us_fmu:.2f} µs/step)")
    for e in (fe, fmu_c, fmu_py, rig_fe):
        e.close()
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
