"""The rod's vertex-moment kernel (systems/rigs/rod_kernels.py) for a law is compiled once
per install: a generated module in the generated-code cache binds the law's kernels by
name (the cable law is a sum: its generated source over its parts' kernels), so a new
process loads it; it computes bit for bit what eval_moments with the kernels as
arguments (the old path, compiled for every law object and process) computes."""
import numpy as np

from _rigs import in_a_new_process

_CASE = r"""
import numpy as np
from hystmech.systems.rigs.rod_cases import cable_preisach
law = cable_preisach({"levels": 10})[0]
rng = np.random.default_rng(11)
nn = 9
X0 = np.tile(law.x0, (nn, 1))
K_prev = np.zeros(nn)
# curvature paths with reversals: each step from the committed memory of the last
steps = [rng.normal(0.0, 0.4, nn) for _ in range(6)]
"""

_NEW_PROCESS = _CASE + r"""
from hystmech.systems.rigs import rod_kernels as rk
out = []
for has_slope in (True, False):
    fn = rk.moments_kernel(law, law.slope if has_slope else law.force)
    Xp, Kp = X0.copy(), K_prev.copy()
    for K in steps:
        M, S, Xt = np.empty(nn), np.empty(nn), np.empty_like(Xp)
        fn(K, Kp, Xp, Xt, has_slope, law.p, 1e-7, M, S)
        out.append([M.tolist(), S.tolist()])
        Kp, Xp = K.copy(), Xt.copy()
OUT = out
"""


def _old_path(ns):
    # eval_moments with the law's kernels as arguments
    from hystmech.systems.rigs import rod_kernels as rk

    law, nn = ns["law"], ns["nn"]
    out = []
    for has_slope in (True, False):
        Xp, Kp = ns["X0"].copy(), ns["K_prev"].copy()
        for K in ns["steps"]:
            M, S, Xt = np.empty(nn), np.empty(nn), np.empty_like(Xp)
            rk.eval_moments(K, Kp, Xp, Xt, law.advance, law.force,
                            law.slope if has_slope else law.force, has_slope, law.p,
                            1e-7, M, S)
            out.append([M, S])
            Kp, Xp = K.copy(), Xt.copy()
    return out


def test_cable_law_moments_load_from_disk_in_a_new_process_and_equal_the_argument_path(
        tmp_path, monkeypatch):
    monkeypatch.setenv("HYSTMECH_CACHE", str(tmp_path))
    ns = {}
    exec(_CASE, ns)
    ref = _old_path(ns)
    # this process compiles and caches the module ...
    from hystmech.systems.rigs import rod_kernels as rk

    law, nn = ns["law"], ns["nn"]
    got = []
    for has_slope in (True, False):
        fn = rk.moments_kernel(law, law.slope if has_slope else law.force)
        Xp, Kp = ns["X0"].copy(), ns["K_prev"].copy()
        for K in ns["steps"]:
            M, S, Xt = np.empty(nn), np.empty(nn), np.empty_like(Xp)
            fn(K, Kp, Xp, Xt, has_slope, law.p, 1e-7, M, S)
            got.append([M, S])
            Kp, Xp = K.copy(), Xt.copy()
    assert list(tmp_path.glob("asm_*.py"))
    # ... a new process loads it
    compiled, new = in_a_new_process(_NEW_PROCESS, timeout=600)
    assert [c for c in compiled if "rod_kernels" in c or "_hystmech_asm_" in c] == [], compiled
    for run in (got, new):
        for (M, S), (Mr, Sr) in zip(run, ref):
            assert np.array_equal(np.array(M), Mr) and np.array_equal(np.array(S), Sr)
    # the Preisach part switched: the tangent left its elastic value somewhere
    S_all = np.array([s for _, s in ref])
    assert np.ptp(S_all) > 0.0
