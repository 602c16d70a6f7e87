"""The plugin libraries (plugins/_build.py) are built once per cache: two builds of the
same library at once (the suite's two xdist workers) compile it once, the second
waiting for the first and loading its result."""
import threading

import pytest


def test_concurrent_builds_of_one_library_compile_it_once(tmp_path, monkeypatch):
    from hystmech.plugins import _build as hb

    try:
        from hystmech.fmu.export import find_compiler
        find_compiler(None)
    except Exception as e:          # no C compiler on this machine
        pytest.skip(f"no C compiler: {e}")
    src = tmp_path / "k.c"
    src.write_text("double hm_twice(double x) { return 2.0 * x; }\n")
    monkeypatch.setenv("HYSTMECH_PLUGIN_CACHE", str(tmp_path / "cache"))
    runs = []
    real = hb.subprocess.run

    def counting(cmd, **kw):
        runs.append(cmd)
        threading.Event().wait(1.0)      # a build that takes a while: the other overlaps
        return real(cmd, **kw)

    monkeypatch.setattr(hb.subprocess, "run", counting)
    start = threading.Barrier(2)
    out = [None, None]

    def build(i):
        start.wait()
        out[i] = hb.build_shared("hm-lock-test", [src])

    threads = [threading.Thread(target=build, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out[0] == out[1] and out[0].exists()
    assert len(runs) == 1, runs
    import ctypes
    lib = ctypes.CDLL(str(out[0]))
    lib.hm_twice.restype = ctypes.c_double
    lib.hm_twice.argtypes = [ctypes.c_double]
    assert lib.hm_twice(1.25) == 2.5
