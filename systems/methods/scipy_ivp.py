"""method="BDF", "Radau", "LSODA": scipy.integrate.solve_ivp on the assembly's compiled
right-hand side, with the analytic Jacobian assembled from the elements' jac kernels
(or a sparse finite-difference Jacobian when an element has none).

Options: rtol (1e-8), atol (see :func:`~hystmech.systems.methods.rk45.default_atol`),
and any other solve_ivp option (max_step, first_step, jac, ...). Python-driven: the
observers run on the output samples after the integration.
"""
from __future__ import annotations

import numpy as np

from . import MethodResult
from .rk45 import default_atol

NAME = "BDF"
OPTIONS = None          # any solve_ivp option
SMOOTH_ONLY = True
COMPILED = False


class _NonFinite(Exception):
    def __init__(self, t):
        self.t = t


def jac_sparsity(model):
    """Sparsity of ∂ẏ/∂y: ẋ = v, accelerations may depend on anything, element states
    on the DOFs and on themselves."""
    N, nq = model.N, model.nq
    S = np.zeros((N, N), dtype=bool)
    for i in range(nq):
        S[i, nq + i] = True
    S[nq:2 * nq, :N] = True
    for o, n in zip(model.eo, model.sizes):
        S[o:o + n, :2 * nq] = True
        S[o:o + n, o:o + n] = True
    return S


def rhs_python(model, energy):
    """(fun(t, z), last) for solve_ivp: the compiled core with inputs from Python;
    raises _NonFinite on a non-finite derivative. last[0] is the last time evaluated."""
    N, nquad = model.N, model.nquad
    # the generic engine's core when the model can run there (no compile for a new
    # structure; the inputs come from Python either way), else the generated one
    code, prm = model.engine() or model.code, model.prm
    L = model.layout
    nf, nb = L.nf, L.nb
    dy = np.empty(N)
    w = np.zeros(L.n_work)
    V = code.scratch(prm)
    pw = np.empty(nquad)
    nq_ = nquad if energy else 0
    last = [None]

    def fun(t, z):
        fext, ub, vb = model.forcing_at(t)
        w[:nf] = fext
        w[nf:nf + nb] = ub
        w[nf + nb:nf + 2 * nb] = vb
        y = np.ascontiguousarray(z[:N])
        code.core(t, y, prm, dy, w, V)
        out = np.empty(N + nq_)
        out[:N] = dy
        if energy:
            code.powers(y, w, prm, pw, 0)
            out[N:] = pw
        if not np.all(np.isfinite(out)):
            raise _NonFinite(t)
        last[0] = t
        return out
    return fun, last


def run(model, t0, t1, y0, t_eval, energy, obs, options, method=NAME) -> MethodResult:
    """solve_ivp(method=method) on the assembly (see the module docstring)."""
    from scipy.integrate import solve_ivp

    from ..result import SimulationError

    N, nquad = model.N, model.nquad
    nq_ = nquad if energy else 0
    fun, last = rhs_python(model, energy)
    last[0] = t0
    opts = dict(options)
    opts.pop("record_from", None)
    if method in ("BDF", "Radau", "LSODA") and "jac" not in opts:
        # the generic engine's analytic Jacobian when the model runs there (no module
        # built for a new structure; methods/engine.py), else the generated one
        code = model.engine() or model.code
        if code.jac is not None:
            Jd = np.zeros((N, N))

            L = model.layout
            wj = np.zeros(L.n_work)
            Vj = code.scratch(model.prm)

            def jac(t, z):
                fext, ub, vb = model.forcing_at(t)
                wj[:L.nf] = fext
                wj[L.nf:L.nf + L.nb] = ub
                wj[L.nf + L.nb:L.nf + 2 * L.nb] = vb
                code.jac_core(t, np.ascontiguousarray(z[:N]), model.prm, Jd, wj, Vj)
                J = np.zeros((N + nq_, N + nq_))
                J[:N, :N] = Jd
                return J
            opts["jac"] = jac
        else:
            S = np.zeros((N + nq_, N + nq_), dtype=bool)
            S[:N, :N] = jac_sparsity(model)
            S[N:, :N] = True
            opts["jac_sparsity"] = S
    rtol = opts.pop("rtol", 1e-8)
    atol = opts.pop("atol", None)
    if atol is None:
        atol = default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (N,)).copy()
    if energy:
        atol = np.concatenate([atol, np.full(nquad, 1e30)])  # quadratures: no error control
    z0 = np.concatenate([y0, np.zeros(nq_)])
    try:
        sol = solve_ivp(fun, (t0, t1), z0, method=method, t_eval=t_eval, rtol=rtol, atol=atol,
                        **opts)
    except _NonFinite as e:
        raise SimulationError(f"{method}: non-finite state derivative at t = {e.t!r} s "
                              f"(reached t = {last[0]!r} s); check the parameters",
                              last[0]) from None
    Y = sol.y[:N].T
    Q = sol.y[N:].T if energy else None
    stats = {"nfev": int(sol.nfev), "njev": int(sol.njev), "nlu": int(sol.nlu)}
    T = sol.t
    stopped = False
    if obs is not None and T.size:
        k = model.observe_samples(obs, T, Y)
        if k < T.size:
            T, Y, Q, stopped = T[:k], Y[:k], None if Q is None else Q[:k], True
    t_r = float(T[-1]) if len(T) else t0
    return MethodResult(T, Y, Q, stats, sol.status == 0, sol.message, t_r, stopped)
