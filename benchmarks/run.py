"""Run every benchmark (benchmarks/bench_*.py) and print its ratios.

    python benchmarks/run.py            # all
    python benchmarks/run.py drive      # those whose file name contains "drive"
    python benchmarks/run.py first-result   # bench_first_result.py ("-" matches "_")

Each bench_*.py has a main() that measures a baseline and hystmech in the same run and
prints the ratio against the issue's target.
"""
import importlib.util
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    here = Path(__file__).resolve().parent
    files = sorted(here.glob("bench_*.py"))
    if argv:
        files = [f for f in files if any(a.replace("-", "_") in f.stem for a in argv)]
    failed = 0
    for f in files:
        print(f"=== {f.stem}", flush=True)
        spec = importlib.util.spec_from_file_location(f.stem, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        t0 = time.perf_counter()
        ok = mod.main()
        print(f"--- {f.stem}: {'target met' if ok is not False else 'TARGET MISSED'} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
        failed += ok is False
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
