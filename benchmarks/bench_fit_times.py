"""Fit times of every law on the issue 30 training record (10 mm at 1 Hz, 3 periods,
2 kHz, data from the independent references of tests/identify_refs.py with 1 % white
noise), and of a 200-level Preisach kernel (d = 2e-4 on ±20 mm, 2e4 samples).

Baselines measured in the same run: for each law, one simulation of the fitted element
on the record (hystmech.drive), so the ratio is the fit's cost in simulations; for the
Preisach fit, scipy lsmr with the BLAS threads left as they are (the previous
implementation, > 150 s on a loaded 2-core machine), only with --baseline-preisach.
Targets: every law fitted in under 60 s; the 200-level Preisach fit in under 20 s and
at least 3x faster than its baseline when measured.

    python benchmarks/run.py fit_times [--baseline-preisach]
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def _record(ref, **p):
    import identify_refs as R

    t, u, v, Aw = R.sine()
    F = ref(t, Aw, **p)
    F = F + 0.01 * np.std(F) * np.random.default_rng(0).standard_normal(F.size)
    return t, u, v, F


def _laws():
    import identify_refs as R

    from hystmech.identify import fit_masing, fit_modified_dahl, fit_viscous_dahl, laws

    md = dict(a=7.146e4, b=9.596e2, d=5.322e4, e=3.972e2, Lambda=117355.0, mu=0.37)
    ms = dict(k=4.84e5, k0=2.34e5, alpha=1.63e2, F0=-5.73e2, c=1.93e4)
    return [
        ("Dahl (fit_element)", laws.fit_dahl, R.dahl, dict(rho=800.0, Fc=50.0)),
        ("LuGre (fit_element)", laws.fit_lugre, R.lugre,
         dict(sigma0=1e4, sigma1=30.0, Fc=1.0, Fs=1.5, vs=0.01, sigma2=5.0)),
        ("Bouc-Wen (fit_element)", laws.fit_bouc_wen, R.bouc_wen,
         dict(A=2e4, beta=50.0, gamma=20.0, n=1.3)),
        ("Maxwell-slip, 3 elements", laws.fit_maxwell_slip, R.maxwell_slip,
         dict(k=[1e4, 2e4, 5e3], delta=[1e-3, 3e-3, 6e-3])),
        ("viscous + Dahl, asymmetric", fit_viscous_dahl, R.viscous_dahl,
         dict(kx1=1.6e3, kw1=520.0, kx2=1.3e3, kw2=630.0, rho=500.0)),
        ("modified Dahl", fit_modified_dahl, R.modified_dahl, dict(F0=700.0, **md)),
        ("Masing", fit_masing, R.masing, ms),
    ]


def main() -> bool:
    import hystmech
    from hystmech.identify import Dataset

    ok = True
    print(f"{'law':<28} {'fit [s]':>8} {'1 sim [s]':>10} {'ratio':>7}  fit %")
    for name, fit, ref, p in _laws():
        t, u, v, F = _record(ref, **p)
        ds = Dataset(t=t, u=u, force=F, v=v)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:                                  # compile outside the timing
                fit(ds.window(None, 0.3))
            except ValueError:
                pass
            t0 = time.perf_counter()
            r = fit(ds)
            dt = time.perf_counter() - t0
        el = r.element()
        hystmech.drive(el, ds.t[:50], ds.u[:50], ds.v[:50])      # compile
        t0 = time.perf_counter()
        hystmech.drive(el, ds.t, ds.u, ds.v)
        sim = time.perf_counter() - t0
        print(f"{name:<28} {dt:8.2f} {sim:10.4f} {dt / sim:7.0f}  {r.merit['fit_percent']:.2f}")
        ok &= dt < 60.0
    ok &= _preisach("--baseline-preisach" in sys.argv)
    return ok


def _preisach(baseline: bool) -> bool:
    import hystmech
    from hystmech.components import BoucWen
    from hystmech.identify.preisach import fit_preisach

    t = np.arange(0, 10, 1 / 2000.0)
    u = 0.02 * np.sin(2 * np.pi * t) * (0.3 + 0.7 * np.abs(np.sin(2 * np.pi * 0.1 * t)))
    y = hystmech.drive(BoucWen(A=2e4, beta=50.0, gamma=20.0, n=1.3), t, u).force
    fit_preisach(u[:200], y[:200], 2e-4, initial=-1)          # compile
    t0 = time.perf_counter()
    f = fit_preisach(u, y, 2e-4, initial=-1)
    dt = time.perf_counter() - t0
    print(f"Preisach, 200 levels ({f.mesh.n} cells, {u.size} samples): {dt:.2f} s "
          f"(target < 20 s)")
    ok = dt < 20.0
    if baseline:
        import contextlib

        import hystmech.identify.preisach as P

        saved = P._one_blas_thread
        P._one_blas_thread = contextlib.nullcontext
        try:
            t0 = time.perf_counter()
            fit_preisach(u, y, 2e-4, initial=-1)
            base = time.perf_counter() - t0
        finally:
            P._one_blas_thread = saved
        print(f"  baseline (BLAS threads as they are): {base:.2f} s, ratio {base / dt:.1f}x "
              f"(target >= 3x on a loaded machine)")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
