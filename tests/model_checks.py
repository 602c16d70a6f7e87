"""Checks on a compiled assembly model shared by several test files."""
import numpy as np


def assert_jacobian_matches_fd(m, t, y, rtol=1e-5):
    """The model's analytic Jacobian at (t, y) against central differences of its
    right-hand side, through the compiled protocol the implicit methods call:
    fun(t, y, prm, dy, w, V) and jac(t, y, prm, J, w, V), w a work vector and
    V = scratch(prm)."""
    y = np.ascontiguousarray(y, dtype=float)
    w = np.zeros(m.layout.n_work)
    V = m.code.scratch(m.prm)
    J = np.zeros((m.N, m.N))
    m.code.jac(t, y, m.prm, J, w, V)

    def f(yy):
        dy = np.empty(m.N)
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
