"""Run the compiled stiff cores (``radau5``, ``auto``) on a Model of systems/solvers.py.

What the cores need from a Model (everything else stays generic):
- ``model.core(t, y, ub, vb, fext, *model.args(), dy, Fel, Uel, Vel, fnode)``: the
  compiled right-hand side of the N dynamic states (``model.N``);
- ``model.forcing_compiled()``: numba ``forcing(t, HF, HU, HV, fext, ub, vb)`` (None
  when a user input cannot be compiled) with ``model.HF/HU/HV``;
- ``model.jac_fn(t, y, ub, vb, fext, *model.args(), J)``: the analytic (N, N)
  Jacobian from the elements' ``jac`` kernels (None: a compiled forward-difference
  Jacobian of the right-hand side is used);
- energy integrands ``_powers`` (``model.nquad`` trailing quadrature components,
  integrated without error control, as in the RK45 loop);
- ``_default_atol(model, rtol)`` for the default absolute tolerances.
The right-hand side and Jacobian are wrapped once per model structure into callables
``fun(t, z, args, out)``, ``jac(t, z, args, J)`` of ONE fixed signature, so each core
is compiled once per process for every assembly (numba first-class functions) and
loaded from numba's disk cache afterwards.
"""
from __future__ import annotations

import numpy as np
import numba
from numba import njit

from .auto import auto_solve
from .radau import STATUS_MESSAGES, radau_solve, signatures, specialise

_WRAPPERS: dict = {}
_SOLVERS = {"radau5": radau_solve, "auto": auto_solve}

OPTIONS = ("rtol", "atol", "max_step", "first_step", "max_steps")


def _wrappers(model, args_type):
    from ..solvers import _rhs_full

    core = model.core
    forcing = model.forcing_compiled()
    jac_fn = model.jac_fn
    key = (id(core), id(forcing), id(jac_fn), args_type)
    if key in _WRAPPERS:
        return _WRAPPERS[key]
    fun_sig, jac_sig = signatures(args_type)

    @njit(fun_sig)
    def fun(t, z, a, out):
        (margs, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel, fnode, pw, ysc) = a
        N = dy.size
        _rhs_full(core, forcing, t, z, margs, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel,
                  fnode, pw, out, N, z.size > N)

    if jac_fn is not None:
        @njit(jac_sig)
        def jac(t, z, a, J):
            (margs, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel, fnode, pw, ysc) = a
            mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, ea, eb, eo, po, P = margs
            forcing(t, HF, HU, HV, fext, ub, vb)
            jac_fn(t, z[:dy.size], ub, vb, fext, mass, sa, sb, sk, su0, spre, da, db, dc,
                   fdof, grav, ea, eb, eo, po, P, J)
    else:
        @njit(jac_sig)
        def jac(t, z, a, J):
            # forward differences, step √eps relative to max(|y|, atol/rtol)
            ysc = a[13]
            N = J.shape[0]
            f0 = np.empty(z.size)
            f1 = np.empty(z.size)
            zz = z.copy()
            fun(t, z, a, f0)
            for j in range(N):
                d = 1.4901161193847656e-08 * max(abs(z[j]), ysc[j])
                zz[j] = z[j] + d
                d = zz[j] - z[j]
                fun(t, zz, a, f1)
                for i in range(N):
                    J[i, j] = (f1[i] - f0[i]) / d
                zz[j] = z[j]

    _WRAPPERS[key] = (fun, jac)
    return fun, jac


def args_template():
    """An ``args`` value of the type run_stiff passes to the cores (the Model's
    arguments, forcing rows, work arrays, difference scales), with empty arrays: code
    that calls the cores with this type shares their compiled, cached code."""
    f, i = np.zeros(0), np.zeros(0, np.int64)
    H = np.zeros((0, 4))
    return ((f, i, i, f, f, f, i, i, f, i, 0.0, i, i, i, i, f), H, H, H, f, f, f, f, f, f,
            f, f, f, f)


def run_stiff(model, method, t0, t1, y0, t_eval, energy, opts):
    """Integrate the model with ``method`` "radau5" or "auto" (compiled).

    Returns (T, Y, Q, stats, ok, message, t_reached) like the other runners, or None
    when the inputs cannot be compiled (the caller then falls back to scipy)."""
    from ..solvers import _default_atol

    forcing = model.forcing_compiled()
    if forcing is None or not model.compiled:
        if method == "auto":
            return None
        raise ValueError(f"method={method!r} (compiled) needs numba-compilable forces, "
                         "imposed motions and element kernels; use Harmonic inputs or "
                         "method='Radau' (scipy)")
    opts = dict(opts)
    bad = [k for k in opts if k not in OPTIONS]
    if bad:
        raise ValueError(f"unknown option {bad[0]!r} for method {method!r}; allowed: "
                         f"{', '.join(OPTIONS)}")
    rtol = float(opts.get("rtol", 1e-8))
    if not (1e-14 <= rtol < 1):
        raise ValueError(f"rtol must be in [1e-14, 1) (got {rtol!r})")
    N = model.N
    atol = opts.get("atol")
    atol = _default_atol(model, rtol) if atol is None else atol
    try:
        atol = np.ascontiguousarray(np.broadcast_to(np.asarray(atol, float), (N,)))
    except ValueError:
        raise ValueError(f"atol must be a number or {N} numbers (got shape "
                         f"{np.shape(atol)})") from None
    if not np.all(np.isfinite(atol) & (atol >= 0)) or not np.all(atol + rtol > 0):
        raise ValueError("atol must be finite and >= 0")
    max_step = float(opts.get("max_step", np.inf))
    if not max_step > 0:
        raise ValueError(f"max_step must be > 0 (got {max_step!r})")
    first_step = float(opts.get("first_step", 0.0) or 0.0)
    if not (first_step >= 0 and np.isfinite(first_step)):
        raise ValueError(f"first_step must be >= 0 s (got {first_step!r})")
    max_steps = int(opts.get("max_steps", 50_000_000))
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1 (got {max_steps!r})")

    nquad = model.nquad if energy else 0
    ysc = np.maximum(atol / rtol, 1e-300)
    args = (model.args(), np.ascontiguousarray(model.HF), np.ascontiguousarray(model.HU),
            np.ascontiguousarray(model.HV), np.zeros(len(model.f_funcs)), np.zeros(model.nb),
            np.zeros(model.nb), np.zeros(N), np.zeros(model.ne), np.zeros(model.ne),
            np.zeros(model.ne), np.zeros(model.nq + model.nb), np.zeros(model.nquad), ysc)
    args_type = numba.typeof(args)
    fun, jac = _wrappers(model, args_type)
    z0 = np.ascontiguousarray(np.concatenate([y0, np.zeros(nquad)]), dtype=float)
    te = np.zeros(0) if t_eval is None else np.ascontiguousarray(t_eval, dtype=float)
    call = (float(t0), float(t1), z0, int(N), args, rtol, atol, first_step, max_step, te,
            max_steps)
    entry = specialise(_SOLVERS[method], args)
    status, t_r, T, Z, cnt = entry(fun, jac, *call)
    stats = {"nfev": int(cnt[0]), "njev": int(cnt[1]), "nlu": int(cnt[2]),
             "nsteps": int(cnt[3]), "nrejected": int(cnt[4])}
    if method == "auto":
        stats.update(steps_explicit=int(cnt[5]), steps_implicit=int(cnt[6]),
                     switches=int(cnt[7]))
    return (T, Z[:, :N], (Z[:, N:] if energy else None), stats, status == 0,
            STATUS_MESSAGES[int(status)], float(t_r))
