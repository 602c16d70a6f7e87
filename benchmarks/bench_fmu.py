"""FMU overhead (issue 7): per communication step, measured in one run.

1. An exported FMU driven through fmpy's C-level entry points (ctypes calls to
   fmi2SetReal / fmi2DoStep / fmi2GetReal): µs per communication step, against the same
   law's C kernel called once per step through ctypes (the bare cost of one call).
2. An imported co-simulation FMU in an assembly (mass on the modified Dahl tensioner,
   projection scheme, h = communication step = 1e-5 s) against the native element in the
   same assembly: µs per step and the overhead (FMU − native).
3. The rig master of scenario belt-tensioner-cosim (Python RK4 on the masses + FMU
   calls) against the compiled native rig (projection, same step).
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
    from hystmech.components import Dahl, ModifiedDahl
    from hystmech.fmu import FMUElement, export_fmu
    from hystmech.fmu.ckernels import CKernels
    from hystmech.systems import Assembly, simulate
    from hystmech.systems.belt_tensioner import MDM_PARAMS, paper_tensioner, simulate_belt

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

    # 2. assembly: native element vs imported co-simulation FMU, same scheme and step
    mdm = ModifiedDahl(**MDM_PARAMS, F0=1000.0)
    mfmu = export_fmu(mdm, tmp / "mdm.fmu")
    T = 0.05

    def asm_with(e):
        return Assembly(gravity=9.81).add_dof("m", mass=0.15, x0=0.0).add_element("t", e, "m") \
            .add_force("m", lambda t: 1000.0 + 50.0 * np.cos(73.15 * t))

    simulate(asm_with(mdm), (0.0, 0.001), method="projection", h=h)   # compile first

    def native():
        simulate(asm_with(mdm), (0.0, T), method="projection", h=h, energy=False)
        return int(round(T / h))

    def fmu_asm():
        e = FMUElement(mfmu, mode="cs", rollback=False)
        simulate(asm_with(e), (0.0, T), method="projection", h=h, energy=False)
        e.close()
        return int(round(T / h))

    us_nat = _best(native)
    us_asm = _best(fmu_asm, repeat=1)
    print(f"assembly (projection, h = 1e-5 s): native ModifiedDahl {us_nat:.2f} µs/step, "
          f"imported co-simulation FMU {us_asm:.1f} µs/step -> overhead "
          f"{us_asm - us_nat:.1f} µs per communication step (the assembly loop itself runs "
          f"as Python when an element has Python kernels)")

    # 3. rig master vs compiled native rig at the same step
    from hystmech.fmu.cases import rig_cosim, tensioner_fmu

    tf = tensioner_fmu(tmp / "tensioner.fmu")
    Tr = 0.1

    def rig_native():
        simulate_belt(paper_tensioner("mdm"), method="projection", h=h, t_end=Tr + 1.6e-3,
                      record_from=Tr)
        return int(round(Tr / h))

    def rig_fmu():
        rig_cosim(tf, t_end=Tr + 1.6e-3, H=h, record_from=Tr)
        return int(round(Tr / h))

    rig_native()
    us_rn = _best(rig_native)
    us_rf = _best(rig_fmu, repeat=1)
    print(f"belt rig, step 1e-5 s: compiled native {us_rn:.2f} µs/step, co-simulation master "
          f"with the FMU {us_rf:.1f} µs/step -> overhead {us_rf - us_rn:.1f} µs/step")
    overhead = us_asm - us_nat
    ok = overhead < TARGET_US
    print(f"imported co-simulation FMU in an assembly: overhead {overhead:.1f} µs per "
          f"communication step vs target < {TARGET_US} µs: {'met' if ok else 'MISSED'} "
          f"(the FMI calls themselves cost {us_fmu:.2f} µs/step, {us_fmu - us_call:.2f} µs "
          f"more than one bare ctypes call; the rest is the Python-driven loop)")
    fe.close()
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
