"""Cost per step of a hystmech element in Exudyn (issue 19): the forced 1-DOF rig, one
element, against Exudyn's built-in CoordinateSpringDamper (the target's baseline:
≤ 3× for smooth laws, ≤ 5× for Masing/Preisach) and a bare Python k·u spring-force
user function (the floor of any Python user function), under RK44 and
GeneralizedAlpha, measured in the same run (CPU time of this process, best of 3).

    python benchmarks/run.py exudyn
"""
import math
import time

TARGET = {"smooth": 3.0, "other": 5.0}


def main(n=5000):
    import exudyn as exu
    from exudyn.itemInterface import CoordinateSpringDamper

    from hystmech.components import get_element_class
    from hystmech.plugins import exudyn as hex
    from hystmech.systems import Assembly

    laws = {"Dahl (smooth)": get_element_class("Dahl")(rho=300.0, Fc=0.5, w0=0.0),
            "Masing": get_element_class("Masing")(k=200.0, k0=0.0, alpha=1.0)}

    def build(variant):
        a = Assembly()
        # free vibration from 10 mm (no Python load function in any variant)
        a.add_dof("m", mass=1.0, x0=0.01)
        a.add_spring("m", "ground", k=2000.0)
        if variant in laws:
            a.add_element("e", laws[variant], "m", "ground")
        SC, mbs, nodes = hex.from_assembly(a)
        if variant == "built-in":
            mbs.AddObject(CoordinateSpringDamper(markerNumbers=[0, 1], stiffness=10.0,
                                                 damping=0.1))
        elif variant == "python k·u":
            mbs.AddObject(CoordinateSpringDamper(
                markerNumbers=[0, 1],
                springForceUserFunction=lambda mbs, t, i, u, v, k, d, o: 10.0 * u))
        return SC, mbs

    variants = ["built-in", "python k·u", *laws]
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
            line = f"  {v:<14s} {best[v] / n * 1e6:7.1f} µs/step  {r:5.1f}× built-in"
            if v in laws:
                tgt = TARGET["smooth" if laws[v].kind == "smooth" else "other"]
                ok &= r <= tgt
                line += f"  (target ≤ {tgt:g}×: {'met' if r <= tgt else 'MISSED'})"
            print(line)
    return ok


if __name__ == "__main__":
    main()
