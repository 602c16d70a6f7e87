"""What `export_fmu` costs a user (issue 29/34), measured in one run, warm cache:

1. export of a Dahl FMU (FMI 2.0 and 3.0) with the compiled binary cached: total wall
   time, and the part spent drawing model.png from the law's loop (fmu/icon.py: stepping
   the binary, then matplotlib), as a ratio of the export;
2. the default (native: linux64 only) against --platforms all (five binaries, zig cc),
   both after one warm-up export so that compiler caches are hot: the ratio is what the
   old default (all, whenever ziglang was installed) cost every export.
Run: python benchmarks/bench_fmu_export.py
"""
import tempfile
import time
import zipfile
from pathlib import Path


def _best(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    import importlib.util

    from hystmech.components import Dahl
    from hystmech.fmu import export_fmu
    from hystmech.fmu.icon import law_loop, write_icon

    el = Dahl(rho=200.0, Fc=2.0)
    d = Path(tempfile.mkdtemp(prefix="bench-fmu-export-"))
    for v in (2, 3):
        path = d / f"dahl{v}.fmu"
        export_fmu(el, path, fmi_version=v, platforms="native")   # warm: compile cached
        t_exp = _best(lambda: export_fmu(el, path, fmi_version=v, platforms="native"))
        root = d / f"x{v}"
        with zipfile.ZipFile(path) as zf:
            zf.extractall(root)
        ident = "hystmech_Dahl"
        t_icon = _best(lambda: write_icon(*law_loop(root, v, ident), d / "icon.png"))
        print(f"FMI {v}.0 export (native, cached binary): {t_exp * 1e3:7.1f} ms; "
              f"icon {t_icon * 1e3:6.1f} ms = {t_icon / t_exp:.2f} of the export")
    if importlib.util.find_spec("ziglang") is None:
        print("ziglang not installed: --platforms all not measured")
        return
    path = d / "all.fmu"
    export_fmu(el, path, platforms="all")   # warm (the first win64 build takes minutes)
    t_all = _best(lambda: export_fmu(el, path, platforms="all"), repeat=1)
    t_nat = _best(lambda: export_fmu(el, d / "nat.fmu", platforms="native"))
    print(f"native {t_nat * 1e3:.1f} ms, all {t_all * 1e3:.1f} ms (cached): "
          f"all/native = {t_all / t_nat:.1f}")


if __name__ == "__main__":
    main()
