"""Cost per step of a hystmech element in Exudyn (issue 19): the 1-DOF rig in free
vibration, one element (the compiled host, plugins/exudyn_host.cpp), against Exudyn's
built-in CoordinateSpringDamper (the target's baseline: ≤ 3× for the smooth laws Dahl,
LuGre, Bouc-Wen, ≤ 5× for Masing and Preisach) and a bare Python k·u spring-force user
function (the floor of any Python user function), under RK44 and GeneralizedAlpha,
measured in the same run (CPU time of this process, best of 3). The element through
Python user functions (the fallback without a C++ compiler) is reported for Dahl.

    python benchmarks/run.py exudyn
"""
import math
import time

TARGET = {"smooth": 3.0, "other": 5.0}


def main(n=10000):
    import exudyn as exu
    from exudyn.itemInterface import CoordinateSpringDamper

    from hystmech.components import get_element_class
    from hystmech.plugins import exudyn as hex
    from hystmech.systems import Assembly

    import numpy as np

    from hystmech.plugins import exudyn_build

    G = get_element_class
    laws = {"Dahl": G("Dahl")(rho=300.0, Fc=0.5, w0=0.0),
            "LuGre": G("LuGre")(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, beta=2.0,
                                sigma2=0.4),
            "BoucWen": G("BoucWen")(A=1e4, beta=2.0, gamma=0.5, n=1.5, k_el=100.0),
            "Masing": G("Masing")(k=200.0, k0=0.0, alpha=1.0),
            "Preisach": G("Preisach")(a1=np.array([-0.004, -0.002, -0.003, 0.0, 0.001]),
                                      a2=np.array([-0.001, 0.003, 0.001, 0.002, 0.004]),
                                      weights=np.array([3.0, 5.0, 2.0, 4.0, 1.5]),
                                      initial=-1, k0=200.0, offset=0.5, max_depth=16)}
    PY = "Dahl via Python"
    native = exudyn_build.host_module()

    def build(variant):
        a = Assembly()
        # free vibration from 10 mm (no Python load function in any variant)
        a.add_dof("m", mass=1.0, x0=0.01)
        a.add_spring("m", "ground", k=2000.0)
        if variant in laws or variant == PY:
            a.add_element("e", laws.get(variant, laws["Dahl"]), "m", "ground")
        # the Python user-function route: the compiled host switched off while building
        exudyn_build._MODULE["mod"] = None if variant == PY else native
        try:
            SC, mbs, nodes = hex.from_assembly(a)
        finally:
            exudyn_build._MODULE["mod"] = native
        if variant == "built-in":
            mbs.AddObject(CoordinateSpringDamper(markerNumbers=[0, 1], stiffness=10.0,
                                                 damping=0.1))
        elif variant == "python k·u":
            mbs.AddObject(CoordinateSpringDamper(
                markerNumbers=[0, 1],
                springForceUserFunction=lambda mbs, t, i, u, v, k, d, o: 10.0 * u))
        return SC, mbs

    variants = ["built-in", "python k·u", *laws, PY]
    ok = True
    for solver in ("RK44", "GeneralizedAlpha"):
        best = {v: math.inf for v in variants}
        for _ in range(3):
            for v in variants:
                SC, mbs = build(v)
                t0 = time.process_time()
                hex.simulate(SC, mbs, n * 1e-4, 1e-4, solver=solver)
                best[v] = min(best[v], time.process_time() - t0)
        base = best["built-in"]
        print(f"Exudyn 1-DOF, {n} {solver} steps: built-in CoordinateSpringDamper "
              f"{base / n * 1e6:.1f} µs/step")
        for v in variants[1:]:
            r = best[v] / base
            line = f"  {v:<16s} {best[v] / n * 1e6:7.1f} µs/step  {r:5.1f}× built-in"
            if v in laws:
                tgt = TARGET["smooth" if laws[v].kind == "smooth" else "other"]
                if native is None:
                    line += "  (no compiled host: Python user functions)"
                ok &= r <= tgt
                line += f"  (target ≤ {tgt:g}×: {'met' if r <= tgt else 'MISSED'})"
            print(line)
    return ok


if __name__ == "__main__":
    main()
