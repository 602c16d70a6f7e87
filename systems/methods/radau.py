"""Compiled Radau IIA (order 5) integrator for stiff smooth systems.

The three-stage Radau IIA collocation method of Hairer & Wanner (1996), *Solving
Ordinary Differential Equations II*, §IV.8 (RADAU5), in the form of scipy's
``scipy.integrate.Radau``, all in numba:

- the collocation system is solved by simplified Newton iterations in the
  eigenbasis of the Butcher matrix A = T Λ T⁻¹: one real LU of (γ/h·I − J) and one
  complex LU of ((α − iβ)/h·I − J) per step size, reused while h and J are kept
  (Hairer & Wanner (1996), §IV.8, "Implementation");
- the Newton iteration stops on its observed contraction rate with the
  tolerance max(10·eps/rtol, min(0.03, √rtol));
- the local error is estimated with the embedded third-order formula filtered by the
  real LU (§IV.8, error estimation), repeated once from the perturbed point after a
  rejection;
- the step size follows Gustafsson's predictive controller (§IV.8) with safety
  0.9·(2·6 + 1)/(2·6 + n_newton); the Jacobian is re-evaluated only when Newton
  converged slowly (rate > 1e-3 after more than two iterations); h (and the LUs with
  it) is kept unless it can grow by 20 % or J was re-evaluated;
- dense output is the collocation polynomial of each step (cubic), which also
  gives the starting guess of the next Newton iteration.

The core is generic: the right-hand side and the Jacobian are compiled callables
``fun(t, y, args, out)`` and ``jac(t, y, args, J)`` (``args`` any numba value, e.g.
a tuple of arrays; ``J`` dense, (nd, nd)). The first ``nd`` components of y are
the differential state (Newton, error control); trailing components ``y[nd:]`` are
quadratures (their rates may depend on y[:nd] but nothing depends on them: energy
integrals): they are integrated by the same collocation formula, with a zero
Jacobian block and no error control.

Error norm (scipy's, which the step-size controller above is tuned for): RMS over the
controlled components of e_i / (atol_i + rtol·max(|y_i|, |ŷ_i|)). (The Dormand–Prince
stepper of ``components/_ode.py`` uses a maximum norm.)
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, types
from numba.extending import register_jitable

from ...components._ode import dp45_dense

S6 = 6.0 ** 0.5
RADAU_C = np.array([(4.0 - S6) / 10.0, (4.0 + S6) / 10.0, 1.0])
RADAU_E = np.array([-13.0 - 7.0 * S6, -13.0 + 7.0 * S6, -1.0]) / 3.0
# eigenvalues of A⁻¹: one real, one complex pair (Hairer & Wanner (1996), IV.8)
MU_REAL = 3.0 + 3.0 ** (2.0 / 3.0) - 3.0 ** (1.0 / 3.0)
MU_COMPLEX = (3.0 + 0.5 * (3.0 ** (1.0 / 3.0) - 3.0 ** (2.0 / 3.0))
              - 0.5j * (3.0 ** (5.0 / 6.0) + 3.0 ** (7.0 / 6.0)))
RADAU_T = np.array([
    [0.09443876248897524, -0.14125529502095421, 0.03002919410514742],
    [0.25021312296533332, 0.20412935229379994, -0.38294211275726192],
    [1.0, 1.0, 0.0]])
RADAU_TI = np.array([
    [4.17871859155190428, 0.32768282076106237, 0.52337644549944951],
    [-4.17871859155190428, -0.32768282076106237, 0.47662355450055044],
    [0.50287263494578682, -2.57192694985560522, 0.59603920482822492]])
# dense output: y(t_old + x·h) = y_old + Σ_k Q[:, k] x^(k+1), Q = Zᵀ P
RADAU_P = np.array([
    [13.0 / 3.0 + 7.0 * S6 / 3.0, -23.0 / 3.0 - 22.0 * S6 / 3.0, 10.0 / 3.0 + 5.0 * S6],
    [13.0 / 3.0 - 7.0 * S6 / 3.0, -23.0 / 3.0 + 22.0 * S6 / 3.0, 10.0 / 3.0 - 5.0 * S6],
    [1.0 / 3.0, -8.0 / 3.0, 10.0 / 3.0]])

NEWTON_MAXITER = 6
MIN_FACTOR = 0.2
MAX_FACTOR = 10.0
EPS = 2.220446049250313e-16

# slots of the float state vector ``rs`` of one Radau integration
R_H, R_HOLD, R_EOLD, R_CURJAC, R_LUOK, R_HAVESOL, R_TOLD, R_HSOL, R_NTOL = range(9)
# slots of the counters ``cnt``
C_NFEV, C_NJEV, C_NLU, C_NSTEP, C_NREJ = range(5)

STATUS_MESSAGES = {0: "the end of the time span was reached",
                   1: "step size fell below machine resolution",
                   2: "non-finite state",
                   3: "too many steps (max_steps)",
                   6: "stopped by a signal"}


# -- dense linear algebra for the small systems of lumped rigs ----------------------------

@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def lu_factor(A, piv):
    """In-place LU with partial pivoting (real or complex A); False when singular."""
    n = A.shape[0]
    for k in range(n):
        p = k
        amax = abs(A[k, k])
        for i in range(k + 1, n):
            a = abs(A[i, k])
            if a > amax:
                amax = a
                p = i
        piv[k] = p
        if not amax > 0.0:   # zero pivot or NaN
            return False
        if p != k:
            for j in range(n):
                tmp = A[k, j]
                A[k, j] = A[p, j]
                A[p, j] = tmp
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            lik = A[i, k] * inv
            A[i, k] = lik
            if lik != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= lik * A[k, j]
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def lu_solve(A, piv, b):
    """Solve (LU) x = b in place on b with the factors of :func:`lu_factor`."""
    n = A.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= A[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= A[i, j] * b[j]
        b[i] = acc / A[i, i]


# -- shared pieces -------------------------------------------------------------------------

@register_jitable
def initial_step(fun, t0, y0, f0, args, t_bound, max_step, order, rtol, atol, nd, work,
                 fwork):
    """Hairer, Nørsett & Wanner (1993), §II.4 starting step (as scipy's
    ``select_initial_step``) over the controlled components; costs one evaluation."""
    d0 = 0.0
    d1 = 0.0
    for i in range(nd):
        sc = atol[i] + rtol * abs(y0[i])
        d0 += (y0[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = math.sqrt(d0 / nd)
    d1 = math.sqrt(d1 / nd)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, t_bound - t0, max_step)
    for i in range(y0.size):
        work[i] = y0[i] + h0 * f0[i]
    fun(t0 + h0, work, args, fwork)
    d2 = 0.0
    for i in range(nd):
        sc = atol[i] + rtol * abs(y0[i])
        d2 += ((fwork[i] - f0[i]) / sc) ** 2
    d2 = math.sqrt(d2 / nd) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1))
    return min(100.0 * h0, h1, t_bound - t0, max_step)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def radau_dense(Q, y_old, x, out):
    """Collocation polynomial of the last step at t_old + x·h (0 ≤ x ≤ 1)."""
    for i in range(y_old.size):
        out[i] = y_old[i] + x * (Q[i, 0] + x * (Q[i, 1] + x * Q[i, 2]))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _predict(Z, t, y, h, Q, yold, rs, ytmp):
    # starting guess of the collocation increments from the previous step's polynomial
    n = y.size
    if rs[R_HAVESOL] > 0.0:
        for s in range(3):
            radau_dense(Q, yold, (t + h * RADAU_C[s] - rs[R_TOLD]) / rs[R_HSOL], ytmp)
            for j in range(n):
                Z[s, j] = ytmp[j] - y[j]
    else:
        for s in range(3):
            for j in range(n):
                Z[s, j] = 0.0


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _predict_factor(h_abs, h_abs_old, err, err_old):
    # Gustafsson's predictive controller, Hairer & Wanner (1996), §IV.8
    if err_old < 0.0 or h_abs_old < 0.0 or err == 0.0:
        mult = 1.0
    else:
        mult = h_abs / h_abs_old * (err_old / err) ** 0.25
    if err == 0.0:
        return MAX_FACTOR
    return min(1.0, mult) * err ** -0.25


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _factor_lus(J, h, nd, LUr, pr, LUc, pc):
    mr = MU_REAL / h
    mc = MU_COMPLEX / h
    for i in range(nd):
        for j in range(nd):
            LUr[i, j] = -J[i, j]
            LUc[i, j] = -J[i, j]
        LUr[i, i] += mr
        LUc[i, i] += mc
    return lu_factor(LUr, pr) and lu_factor(LUc, pc)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _to_eigenbasis(Z, W):
    # W = T⁻¹ Z: the collocation increments in the eigenbasis of A
    for k in range(3):
        for j in range(Z.shape[1]):
            W[k, j] = (RADAU_TI[k, 0] * Z[0, j] + RADAU_TI[k, 1] * Z[1, j]
                       + RADAU_TI[k, 2] * Z[2, j])


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _all_finite_2d(F):
    for s in range(F.shape[0]):
        for j in range(F.shape[1]):
            if not math.isfinite(F[s, j]):
                return False
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _newton_increment(F, W, dW, fr, fc, LUr, pr, LUc, pc, scale, mr, mc, nd):
    """One simplified Newton increment dW of the collocation system from the stage
    rates F (real LU for the real eigenvalue, complex LU for the pair); returns its
    scaled RMS norm."""
    n = W.shape[1]
    for j in range(n):
        fr[j] = (F[0, j] * RADAU_TI[0, 0] + F[1, j] * RADAU_TI[0, 1]
                 + F[2, j] * RADAU_TI[0, 2]) - mr * W[0, j]
        fc[j] = (F[0, j] * (RADAU_TI[1, 0] + 1j * RADAU_TI[2, 0])
                 + F[1, j] * (RADAU_TI[1, 1] + 1j * RADAU_TI[2, 1])
                 + F[2, j] * (RADAU_TI[1, 2] + 1j * RADAU_TI[2, 2])) \
            - mc * (W[1, j] + 1j * W[2, j])
    lu_solve(LUr, pr, fr[:nd])
    lu_solve(LUc, pc, fc[:nd])
    for j in range(nd, n):      # quadratures: zero Jacobian block
        fr[j] = fr[j] / mr
        fc[j] = fc[j] / mc
    acc = 0.0
    for j in range(n):
        dW[0, j] = fr[j]
        dW[1, j] = fc[j].real
        dW[2, j] = fc[j].imag
    for j in range(nd):
        acc += (dW[0, j] / scale[j]) ** 2 + (dW[1, j] / scale[j]) ** 2 \
            + (dW[2, j] / scale[j]) ** 2
    return math.sqrt(acc / (3 * nd))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _newton_update(W, dW, Z):
    # W += dW, Z = T W
    n = W.shape[1]
    for k in range(3):
        for j in range(n):
            W[k, j] += dW[k, j]
    for k in range(3):
        for j in range(n):
            Z[k, j] = (RADAU_T[k, 0] * W[0, j] + RADAU_T[k, 1] * W[1, j]
                       + RADAU_T[k, 2] * W[2, j])


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _newton_iteration(F, W, dW, Z, fr, fc, LUr, pr, LUc, pc, scale, mr, mc, nd, tol, it,
                      norm_old, rate):
    """The arithmetic of one simplified Newton iteration after its stage rates F: the
    increment, the contraction rate, the update of W and Z. Returns (code, norm, rate):
    code -1 stop unconverged (non-finite rates or diverging: norm and rate as they
    stand), 1 converged, 0 go on (the norm is then the next iteration's old norm). One
    call per iteration: a helper cached on disk is linked as machine code, so each call
    costs a call (about 0.1 µs), and one per iteration keeps that small."""
    if not _all_finite_2d(F):
        return -1, norm_old, rate
    dw_norm = _newton_increment(F, W, dW, fr, fc, LUr, pr, LUc, pc, scale, mr, mc, nd)
    if norm_old >= 0.0:
        rate = dw_norm / norm_old
    if rate >= 0.0 and (rate >= 1.0 or
                        rate ** (NEWTON_MAXITER - it) / (1.0 - rate) * dw_norm > tol):
        return -1, dw_norm, rate
    _newton_update(W, dW, Z)
    if dw_norm == 0.0 or (rate >= 0.0 and rate / (1.0 - rate) * dw_norm < tol):
        return 1, dw_norm, rate
    return 0, dw_norm, rate


@register_jitable
def _collocation(fun, t, y, h, Z, scale, tol, LUr, pr, LUc, pc, args, nd, F, W, dW, fr, fc,
                 ytmp, cnt):
    """Simplified Newton on the collocation system; Z (3, n) holds the starting guess
    on entry and the solution on return. Returns (converged, n_iter, rate).

    (The structure-free arithmetic is in compiled helpers cached on disk once per
    install: a structure's module compiles only this control flow around its
    right-hand side.)"""
    n = y.size
    mr = MU_REAL / h
    mc = MU_COMPLEX / h
    _to_eigenbasis(Z, W)
    norm_old = -1.0
    rate = -1.0
    converged = False
    it = 0
    for it in range(NEWTON_MAXITER):
        for s in range(3):
            for j in range(n):
                ytmp[j] = y[j] + Z[s, j]
            fun(t + RADAU_C[s] * h, ytmp, args, F[s])
        cnt[C_NFEV] += 3
        code, norm_old, rate = _newton_iteration(F, W, dW, Z, fr, fc, LUr, pr, LUc, pc,
                                                 scale, mr, mc, nd, tol, it, norm_old, rate)
        if code != 0:
            converged = code > 0
            break
    return converged, it + 1, rate


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _newton_scale(y, atol, rtol, nd, scale):
    for j in range(nd):
        scale[j] = atol[j] + rtol * abs(y[j])      # Newton scale


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _filtered_norm(err, LUr, pr, y, ynew, atol, rtol, nd):
    """err filtered by the real LU (in place), and its RMS norm scaled by
    atol + rtol·max(|y|, |ŷ|) (Hairer & Wanner (1996), §IV.8, error estimation)."""
    lu_solve(LUr, pr, err[:nd])
    acc = 0.0
    for j in range(nd):
        sc = atol[j] + rtol * max(abs(y[j]), abs(ynew[j]))
        acc += (err[j] / sc) ** 2
    return math.sqrt(acc / nd)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _error_estimate(Z, y, ynew, f, fr, err, LUr, pr, atol, rtol, h, nd):
    """ynew = y + Z[2]; the embedded error estimate filtered by the real LU (Hairer &
    Wanner, §IV.8) in err, ZE kept in fr for a second estimate; returns its RMS norm."""
    n = y.size
    for j in range(n):
        ynew[j] = y[j] + Z[2, j]
    for j in range(nd):
        ze = (Z[0, j] * RADAU_E[0] + Z[1, j] * RADAU_E[1] + Z[2, j] * RADAU_E[2]) / h
        fr[j] = ze                      # keep ZE for the second estimate
        err[j] = f[j] + ze
    return _filtered_norm(err, LUr, pr, y, ynew, atol, rtol, nd)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _perturbed(y, err, ytmp, nd):
    # the point y + err (controlled components) of the second estimate after a rejection
    for j in range(y.size):
        ytmp[j] = y[j] + err[j] if j < nd else y[j]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _error_refined(F0, fr, err, LUr, pr, y, ynew, atol, rtol, nd):
    """The second error estimate from the rate F0 at the perturbed point; its norm."""
    for j in range(nd):
        err[j] = F0[j] + fr[j]
    return _filtered_norm(err, LUr, pr, y, ynew, atol, rtol, nd)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _advance_dense(Z, Q, yold, y, ynew):
    # dense output of the accepted step (Q = Zᵀ P), then y_old = y, y = y_new
    for j in range(y.size):
        for k in range(3):
            Q[j, k] = Z[0, j] * RADAU_P[0, k] + Z[1, j] * RADAU_P[1, k] \
                + Z[2, j] * RADAU_P[2, k]
        yold[j] = y[j]
        y[j] = ynew[j]


@register_jitable
def radau_step(fun, jac, t, y, t_bound, args, rtol, atol, nd, max_step,
               f, J, LUr, pr, LUc, pc, Z, F, W, dW, fr, fc, ynew, ytmp, err, Q, yold,
               rs, cnt):
    """One accepted Radau IIA step from (t, y) towards t_bound (scipy's
    ``Radau._step_impl``). On success returns (True, t_new) with y, f (= fun(t_new, y)),
    yold, Q (dense output) and the controller state rs updated in place; returns
    (False, t) when the step size fell below the resolution of t.

    f must hold fun(t, y) and J a Jacobian (recent, not necessarily at (t, y)) on
    entry; rs[R_CURJAC] says whether J was evaluated at (t, y)."""
    min_step = 10.0 * EPS * max(abs(t), 1e-290)
    h_abs = rs[R_H]
    h_abs_old = rs[R_HOLD]
    err_old = rs[R_EOLD]
    if h_abs > max_step:
        h_abs = max_step
        h_abs_old = -1.0
        err_old = -1.0
    elif h_abs < min_step:
        h_abs = min_step
        h_abs_old = -1.0
        err_old = -1.0
    tol = rs[R_NTOL]
    rejected = False
    n_iter = 0
    rate = -1.0
    err_norm = 0.0
    safety = 0.9
    t_new = t
    while True:
        if h_abs < min_step:
            return False, t
        t_new = t + h_abs
        if t_new > t_bound:
            t_new = t_bound
        h = t_new - t
        h_abs = h
        _predict(Z, t, y, h, Q, yold, rs, ytmp)
        _newton_scale(y, atol, rtol, nd, err)
        converged = False
        while not converged:
            if rs[R_LUOK] == 0.0:
                ok = _factor_lus(J, h, nd, LUr, pr, LUc, pc)
                cnt[C_NLU] += 2
                rs[R_LUOK] = 1.0 if ok else 0.0
                if not ok:
                    break
            converged, n_iter, rate = _collocation(fun, t, y, h, Z, err, tol, LUr, pr, LUc,
                                                   pc, args, nd, F, W, dW, fr, fc, ytmp,
                                                   cnt)
            if not converged:
                if rs[R_CURJAC] > 0.0:
                    break
                jac(t, y, args, J)
                cnt[C_NJEV] += 1
                rs[R_CURJAC] = 1.0
                rs[R_LUOK] = 0.0
                _predict(Z, t, y, h, Q, yold, rs, ytmp)
        if not converged:
            h_abs *= 0.5
            rs[R_LUOK] = 0.0
            continue
        err_norm = _error_estimate(Z, y, ynew, f, fr, err, LUr, pr, atol, rtol, h, nd)
        safety = 0.9 * (2 * NEWTON_MAXITER + 1) / (2 * NEWTON_MAXITER + n_iter)
        if rejected and not err_norm <= 1.0:
            _perturbed(y, err, ytmp, nd)
            fun(t, ytmp, args, F[0])
            cnt[C_NFEV] += 1
            err_norm = _error_refined(F[0], fr, err, LUr, pr, y, ynew, atol, rtol, nd)
        if not err_norm <= 1.0:      # also NaN
            if math.isfinite(err_norm):
                fac = _predict_factor(h_abs, h_abs_old, err_norm, err_old)
                h_abs *= max(MIN_FACTOR, safety * fac)
            else:
                h_abs *= MIN_FACTOR
            rs[R_LUOK] = 0.0
            rejected = True
            cnt[C_NREJ] += 1
        else:
            break
    recompute_jac = n_iter > 2 and rate > 1e-3
    factor = _predict_factor(h_abs, h_abs_old, err_norm, err_old)
    factor = min(MAX_FACTOR, safety * factor)
    if not recompute_jac and factor < 1.2:
        factor = 1.0
    else:
        rs[R_LUOK] = 0.0
    # dense output of this step, then advance
    _advance_dense(Z, Q, yold, y, ynew)
    fun(t_new, y, args, f)
    cnt[C_NFEV] += 1
    if recompute_jac:
        jac(t_new, y, args, J)
        cnt[C_NJEV] += 1
        rs[R_CURJAC] = 1.0
    else:
        rs[R_CURJAC] = 0.0
    rs[R_HOLD] = h_abs
    rs[R_EOLD] = err_norm
    rs[R_H] = h_abs * factor
    rs[R_TOLD] = t
    rs[R_HSOL] = h_abs
    rs[R_HAVESOL] = 1.0
    cnt[C_NSTEP] += 1
    return True, t_new


@register_jitable
def all_finite(a):
    """True when every entry of a is finite (the solvers stop with status 2 otherwise)."""
    for i in range(a.size):
        if not math.isfinite(a[i]):
            return False
    return True


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def radau_workspace(n, nd):
    """Work arrays of :func:`radau_step` for n components (nd controlled)."""
    return (np.empty(n), np.zeros((nd, nd)), np.empty((nd, nd)),
            np.empty(nd, np.int64), np.empty((nd, nd), np.complex128),
            np.empty(nd, np.int64), np.zeros((3, n)), np.empty((3, n)), np.empty((3, n)),
            np.empty((3, n)), np.empty(n), np.empty(n, np.complex128), np.empty(n),
            np.empty(n), np.empty(n), np.zeros((n, 3)), np.empty(n), np.zeros(9),
            np.zeros(5, np.int64))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def radau_reset(rs, h, rtol):
    """Controller state for a (re)start at step size h: no history, no valid LU."""
    rs[R_H] = h
    rs[R_HOLD] = -1.0
    rs[R_EOLD] = -1.0
    rs[R_CURJAC] = 1.0
    rs[R_LUOK] = 0.0
    rs[R_HAVESOL] = 0.0
    rs[R_NTOL] = max(10.0 * EPS / rtol, min(0.03, rtol ** 0.5))


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def grow(Tout, Yout, nout):
    """Twice the capacity, first nout rows kept (output recorded at every step)."""
    cap = 2 * Tout.size
    T2 = np.empty(cap)
    Y2 = np.empty((cap, Yout.shape[1]))
    for i in range(nout):
        T2[i] = Tout[i]
        copy_row(Y2, i, Yout[i])
    return T2, Y2


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def copy_row(Y, i, y):
    """Y[i, :] = y, element by element: an array assigned to a slice makes numba
    compile its shape-mismatch message (string formatting, seconds of compile once per
    process)."""
    for j in range(y.size):
        Y[i, j] = y[j]


# Output recording of the compiled cores (radau_solve, auto.auto_solve), one
# implementation for both methods.

@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def out_start(t0, y, t_eval):
    """Output buffers (T, Y, nout, ie) of a run from (t0, y): every step is recorded
    when t_eval is empty (starting with t0), else the points of t_eval (those ≤ t0
    take y)."""
    n = y.size
    cap = 1024 if t_eval.size == 0 else t_eval.size
    Tout = np.empty(cap)
    Yout = np.empty((cap, n))
    nout = 0
    ie = 0
    if t_eval.size == 0:
        Tout[0] = t0
        copy_row(Yout, 0, y)
        nout = 1
    else:
        while ie < t_eval.size and t_eval[ie] <= t0:
            Tout[nout] = t_eval[ie]
            copy_row(Yout, nout, y)
            nout += 1
            ie += 1
    return Tout, Yout, nout, ie


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def out_step(Tout, Yout, nout, ie, t_eval, t, t_new, y_new, dp, Q, yold, K, y, h):
    """Record the accepted step (t, t_new]: its end (t_new, y_new) when t_eval is
    empty, else the points of t_eval it covers, from the dense output of the method
    that took it: the collocation polynomial (Q, yold) of a Radau step, or with dp the
    Dormand–Prince interpolant (K, y, h). Returns the (possibly grown) buffers and
    counters."""
    if t_eval.size == 0:
        if nout == Tout.size:
            Tout, Yout = grow(Tout, Yout, nout)
        Tout[nout] = t_new
        copy_row(Yout, nout, y_new)
        nout += 1
    else:
        while ie < t_eval.size and t_eval[ie] <= t_new:
            if dp:
                dp45_dense(K, y, h, (t_eval[ie] - t) / h, Yout[nout])
            else:
                radau_dense(Q, yold, (t_eval[ie] - t) / (t_new - t), Yout[nout])
            Tout[nout] = t_eval[ie]
            nout += 1
            ie += 1
    return Tout, Yout, nout, ie


@njit(cache=False)  # takes the right-hand side as an argument: compiled per system
def radau_solve(fun, jac, t0, t1, y0, nd, args, rtol, atol, first_step, max_step, t_eval,
                max_steps, irq):
    """Integrate y' = fun(t, y, args, out) over [t0, t1] with Radau IIA order 5.

    fun, jac: numba callables (see the module docstring); y0 (n,); nd ≤ n controlled
    components; atol (nd,); first_step 0 for automatic; t_eval increasing output
    times in [t0, t1] (dense output) or empty for every step.
    Returns (status, t_reached, T, Y, counters [nfev, njev, nlu, nsteps, nrejected]);
    status: 0 done, 1 step size too small, 2 non-finite state, 3 max_steps, 6 stopped
    by a signal (irq[0] != 0, uint8 array of hystmech.interrupt.watching, polled every
    step: one step of a large system can take milliseconds, and a load per step costs
    nothing beside its LU work).
    """
    n = y0.size
    (f, J, LUr, pr, LUc, pc, Z, F, W, dW, fr, fc, ynew, ytmp, err, Q, yold, rs,
     cnt) = radau_workspace(n, nd)
    y = y0.copy()
    t = t0
    fun(t, y, args, f)
    cnt[C_NFEV] += 1
    Tout, Yout, nout, ie = out_start(t0, y, t_eval)
    if not all_finite(f):
        return 2, t, Tout[:nout], Yout[:nout], cnt
    if first_step > 0.0:
        h = min(first_step, max_step)
    else:
        h = initial_step(fun, t0, y, f, args, t1, max_step, 3, rtol, atol, nd, ynew, ytmp)
        cnt[C_NFEV] += 1
    radau_reset(rs, h, rtol)
    jac(t, y, args, J)
    cnt[C_NJEV] += 1
    status = 0
    while t < t1:
        if cnt[C_NSTEP] >= max_steps:
            status = 3
            break
        if irq[0] != 0:
            status = 6
            break
        ok, t_new = radau_step(fun, jac, t, y, t1, args, rtol, atol, nd, max_step, f, J, LUr,
                               pr, LUc, pc, Z, F, W, dW, fr, fc, ynew, ytmp, err, Q, yold,
                               rs, cnt)
        if not ok:
            status = 1
            break
        finite = all_finite(y) and all_finite(f)
        Tout, Yout, nout, ie = out_step(Tout, Yout, nout, ie, t_eval, t, t_new, y, False, Q,
                                        yold, F, y, 0.0)
        t = t_new
        if not finite:
            status = 2
            break
    return status, t, Tout[:nout], Yout[:nout], cnt


# -- one compiled core for every system of one args type -------------------------------------

_DISK: dict = {}
_ENTRIES: dict = {}


def signatures(args_type):
    """numba signatures of ``fun(t, y, args, out)`` and ``jac(t, y, args, J)``."""
    fun_sig = types.void(types.float64, types.float64[::1], args_type, types.float64[::1])
    jac_sig = types.void(types.float64, types.float64[::1], args_type,
                         types.float64[:, ::1])
    return fun_sig, jac_sig


def specialise(solver, args):
    """Entry point of a core (:func:`radau_solve`, ``auto.auto_solve``) compiled for
    first-class ``fun``/``jac`` of the signatures of :func:`signatures` over the type of
    ``args``: compiled once for every system with that args type and cached on disk
    (a core called with plain dispatchers is compiled per system and cannot be
    cached). Call it as ``entry(fun, jac, t0, t1, y0, nd, args, rtol, atol,
    first_step, max_step, t_eval, max_steps[, irq])`` with fun, jac compiled for
    ``signatures(numba.typeof(args))`` and irq the uint8 array of
    :func:`hystmech.interrupt.watching` (default: never interrupted).

    numba validates a cached core against the time stamp of the file defining it
    only: after editing radau.py or components/_ode.py in a source checkout, touch
    auto.py (or clear its __pycache__) so auto_solve is recompiled."""
    args_type = numba.typeof(args)
    key = (solver.py_func, args_type)
    if key not in _ENTRIES:
        disp = _DISK.setdefault(solver.py_func, njit(cache=True)(solver.py_func))
        fun_sig, jac_sig = signatures(args_type)
        f64, a1 = types.float64, types.float64[::1]
        sig = (types.FunctionType(fun_sig), types.FunctionType(jac_sig), f64, f64, a1,
               types.int64, args_type, f64, a1, f64, f64, a1, types.int64,
               types.Array(types.uint8, 1, "C"))
        disp.compile(sig)
        ep = disp.overloads[sig].entry_point

        def entry(*a, irq=None, ep=ep):
            return ep(*a, np.zeros(8, np.uint8) if irq is None else irq)
        _ENTRIES[key] = entry
    return _ENTRIES[key]
