"""Checks on a compiled assembly model shared by several test files."""
import numpy as np


def assert_jacobian_matches_fd(m, t, y, rtol=1e-5):
    """The model's analytic Jacobian at (t, y) against central differences of its
    right-hand side, through the compiled protocol the implicit methods call:
    jac(t, y, prm, J, w, V) and the right-hand side with the inputs at t, w a work
    vector and V = scratch(prm). The code the model runs on: the generic engine
    (``inputs`` then ``core``) when it runs there, else its generated module (``fun``) —
    a model on the engine builds no module of its own for this check (a compile per
    structure; the two Jacobians are equal bit for bit, tests/test_engine_stiff.py)."""
    y = np.ascontiguousarray(y, dtype=float)
    eng = m.engine()
    code = eng or m.code
    w = np.zeros(m.layout.n_work)
    V = code.scratch(m.prm)
    J = np.zeros((m.N, m.N))
    code.jac(t, y, m.prm, J, w, V)

    def f(yy):
        dy = np.empty(m.N)
        if eng is not None:
            eng.inputs(t, m.prm, w)
            eng.core(t, yy, m.prm, dy, w, V)
        else:
            m.code.fun(t, yy, m.prm, dy, w, V)
        return dy
    Jfd = np.empty_like(J)
    for j in range(m.N):
        d = 1e-7 * max(1e-3, abs(y[j]))
        yp, ym = y.copy(), y.copy()
        yp[j] += d
        ym[j] -= d
        Jfd[:, j] = (f(yp) - f(ym)) / (2 * d)
    np.testing.assert_allclose(J, Jfd, rtol=rtol, atol=rtol * np.abs(Jfd).max())
