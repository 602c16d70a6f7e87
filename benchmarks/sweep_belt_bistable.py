"""Long stepped up/down sweeps of the belt rig with the modified Dahl tensioner: the
independent (brute-force) bistable windows the fold curve of the continuation is checked
against (issue 21).

    python benchmarks/sweep_belt_bistable.py [OUT.csv] [--om LO HI] [--step DW] [f1 ...]

For each f1 [N] (Bastien et al. (2007), eq. (59b), f(t) = f1·cos(Ωt)) the rig is swept up
and down over Ω ∈ [26, 30.5] rad/s in steps of 0.02 rad/s, DWELL forcing periods per step
with continuous forcing phase (hystmech.systems.periodic.stepped_sweep), RK45 at rtol 1e-8. Writes
OUT.csv (model, f1, direction, omega, T_amplitude, settle) and prints the window where
the two sweeps disagree (two coexisting stable responses) with its edges, and the CPU time.
"""
import sys
import time

import numpy as np

DWELL = 400
STEP = 0.02
OM = (26.0, 30.5)
F1 = (300.0, 305.0, 310.0, 312.5, 315.0, 317.5, 320.0, 325.0, 330.0, 340.0)


def sweep_level(f1, dwell=DWELL, step=STEP, om=OM):
    """(up sweep, down sweep, bistable window or None) of the rig at f1 [N]."""
    from hystmech.systems.periodic.frf_continuation import rig_at, tension_amplitude_of
    from hystmech.systems.periodic.stepped_sweep import bistable_window, stepped_sweep

    grid = np.round(np.arange(om[0], om[1] + 0.5 * step, step), 10)
    build = rig_at("mdm", f1)
    up = stepped_sweep(build, grid, dwell=dwell, measure=tension_amplitude_of)
    dn = stepped_sweep(build, grid[::-1], dwell=dwell, measure=tension_amplitude_of)
    return up, dn, bistable_window(up, dn)


def main(argv=()):
    argv = list(argv)
    out = argv.pop(0) if argv and argv[0].endswith(".csv") else None
    om, step = OM, STEP
    if "--om" in argv:
        i = argv.index("--om")
        om = (float(argv[i + 1]), float(argv[i + 2]))
        del argv[i:i + 3]
    if "--step" in argv:
        i = argv.index("--step")
        step = float(argv[i + 1])
        del argv[i:i + 2]
    f1s = [float(a) for a in argv] or list(F1)
    rows = ["model,f1,direction,omega,T_amplitude,settle"]
    tot = 0.0
    for f1 in f1s:
        up, dn, win = sweep_level(f1, step=step, om=om)
        tot += up["cpu_s"] + dn["cpu_s"]
        for name, s in (("up", up), ("down", dn)):
            for w, a, st in zip(s["omega"], s["measure"], s["settle"]):
                rows.append(f"mdm,{f1!r},{name},{float(w)!r},{float(a)!r},{float(st)!r}")
        bad = max(float(up["settle"].max()), float(dn["settle"].max()))
        print(f"f1 = {f1:g} N: bistable window {win} rad/s (grid {step} rad/s, {DWELL} "
              f"periods per step; worst settle {bad:.1e}); CPU {up['cpu_s'] + dn['cpu_s']:.1f} s",
              flush=True)
        if out:
            with open(out, "w") as fh:
                fh.write("\n".join(rows) + "\n")
    print(f"total CPU {tot:.1f} s")
    return True


if __name__ == "__main__":
    raise SystemExit(0 if main(sys.argv[1:]) else 1)
