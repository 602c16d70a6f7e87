"""Closed-form loop of the Masing model with viscous damping and the identification of
its parameters from a measured loop (and back).

Bastien, Michon, Manin & Dufour (2007), J. Sound Vib. 302, §2.2.3-2.2.4:
corners A, B, C, D and branches (eqs. (21), (25)), identification (eqs. (26a)-(26f)),
viscous energy (eqs. (28)-(30)) and the frequency rescaling of c (eq. (31)).

Typical use: measured steady loop -> :func:`identify_masing_loop` -> parameters ->
:class:`hystmech.components.Masing` or :func:`masing_loop` -> predicted loop.
"""
from __future__ import annotations

import math

import numpy as np

from ..components.base import check_array, check_finite, check_nonnegative, check_positive

__all__ = ["masing_corners", "masing_loop", "masing_sine_loop", "identify_masing",
           "loop_area", "viscous_energy", "damping_from_energy", "damping_at_frequency",
           "masing_loop_points", "identify_masing_loop"]


def _check_amplitude(u_min, u_max, eta):
    if not u_max - u_min > 2.0 * eta:
        raise ValueError(f"u_max - u_min must be in (2*eta, inf) = ({2 * eta:g}, inf) m for the "
                         f"loop to have slip corners B and D (got {u_max - u_min!r})")


def masing_corners(*, k, k0, alpha, F0, u_min, u_max) -> dict:
    """Corners A, B, C, D of the steady loop for an input oscillating in [u_min, u_max] [m].

    Dry skeleton (and damped loop at A and C, where u̇ = 0): eqs. (21)-(22), (25);
    u_B = u_A + 2η, u_D = u_C − 2η; forces in N. Also returns the one-sided slopes at B
    of the dry skeleton, p_B^- = k + k0 and p_B^+ = k0 [N/m] (eq. (23) with c = 0).
    Needs u_max − u_min > 2η (η = alpha/k) so that the element slips.
    """
    k = check_positive("k", k)
    k0 = check_nonnegative("k0", k0)
    alpha = check_positive("alpha", alpha)
    F0 = check_finite("F0", F0)
    u_min = check_finite("u_min", u_min)
    u_max = check_finite("u_max", u_max)
    eta = alpha / k
    _check_amplitude(u_min, u_max, eta)
    uA, uC = u_min, u_max
    uB, uD = uA + 2 * eta, uC - 2 * eta
    FA = k0 * uA - k * eta - F0           # eq. (22a)
    FC = k0 * uC + k * eta - F0           # eq. (22b)
    FB = k0 * uB + k * eta - F0           # eq. (21b) at u_B
    FD = k0 * uD - k * eta - F0           # eq. (25b) at u_D
    return dict(u_A=uA, u_B=uB, u_C=uC, u_D=uD, F_A=FA, F_B=FB, F_C=FC, F_D=FD,
                pB_minus=k + k0, pB_plus=k0, eta=eta)


def masing_loop(*, k, k0, alpha, F0, c=0.0, u, udot):
    """Steady periodic force F(u) [N] and its dry skeleton F_ep [N], eqs. (21) and (25).

    u [m], udot [m/s]: samples of one τ-periodic input with one minimum u_A and one
    maximum u_C per period (assumption (14b)); the loop is evaluated at these samples:
    increasing part w = min(u − u_A − η, η), decreasing part w = max(u − u_C + η, −η),
    F_ep = k·w + k0·u − F0 (eq. (18)), F = F_ep + c·u̇ (eqs. (21), (25)).
    Returns (F, F_ep).
    """
    k = check_positive("k", k)
    k0 = check_nonnegative("k0", k0)
    alpha = check_positive("alpha", alpha)
    F0 = check_finite("F0", F0)
    c = check_nonnegative("c", c)
    u = check_array("u", u)
    udot = check_array("udot", udot)
    if udot.size != u.size:
        raise ValueError(f"udot must have the same length as u ({u.size}) (got {udot.size})")
    eta = alpha / k
    uA, uC = float(u.min()), float(u.max())
    _check_amplitude(uA, uC, eta)
    w_up = np.minimum(u - uA - eta, eta)
    w_dn = np.maximum(u - uC + eta, -eta)
    w = np.where(udot > 0, w_up, np.where(udot < 0, w_dn,
                                          np.where(u - uA < uC - u, -eta, eta)))
    F_ep = k * w + k0 * u - F0
    return F_ep + c * udot, F_ep


def masing_sine_loop(*, k, k0, alpha, F0, c=0.0, x0, x1, Omega, phi=0.0, n=2001):
    """One period of the steady loop for u = x0 + x1·sin(Ωt + φ) (eq. (29)).

    x0 [m], x1 [m] > 0, Omega [rad/s] > 0, phi [rad]; n samples over t ∈ [0, 2π/Ω].
    Returns t [s], u [m], F [N], F_ep [N] (eqs. (21), (25)).
    """
    x1 = check_positive("x1", x1)
    Omega = check_positive("Omega", Omega)
    x0 = check_finite("x0", x0)
    phi = check_finite("phi", phi)
    t = np.linspace(0.0, 2 * math.pi / Omega, int(n))
    u = x0 + x1 * np.sin(Omega * t + phi)
    udot = x1 * Omega * np.cos(Omega * t + phi)
    F, Fep = masing_loop(k=k, k0=k0, alpha=alpha, F0=F0, c=c, u=u, udot=udot)
    return t, u, F, Fep


def identify_masing(*, u_A, u_B, u_C, F_A, F_C, pB_minus, pB_plus) -> dict:
    """Parameters from the loop's geometry, Bastien et al. (2007), eqs. (26a)-(26f).

    u_A, u_B, u_C [m] abscissae of the corners A (minimum), B (stick -> slip on the
    increasing branch), C (maximum); F_A, F_C [N]; pB_minus, pB_plus [N/m] the left and
    right slopes dF/du at B. Returns u_min, u_max [m], k [N/m], alpha [N], k0 [N/m],
    F0 [N] and eta = alpha/k [m].
    """
    u_A = check_finite("u_A", u_A)
    u_B = check_finite("u_B", u_B)
    u_C = check_finite("u_C", u_C)
    F_A = check_finite("F_A", F_A)
    F_C = check_finite("F_C", F_C)
    pm = check_finite("pB_minus", pB_minus)
    pp = check_finite("pB_plus", pB_plus)
    if not u_A < u_B < u_C:
        raise ValueError(f"corners must satisfy u_A < u_B < u_C (got {u_A!r}, {u_B!r}, {u_C!r})")
    k = pm - pp                                   # (26c)
    if not k > 0:
        raise ValueError(f"pB_minus - pB_plus must be in (0, inf) (it is k, eq. (26c)) "
                         f"(got {k!r})")
    alpha = 0.5 * k * (u_B - u_A)                 # (26d)
    k0 = (F_C - F_A - 2 * alpha) / (u_C - u_A)    # (26e)
    F0 = k0 * u_A - alpha - F_A                   # (26f)
    return dict(u_min=u_A, u_max=u_C, k=k, alpha=alpha, k0=k0, F0=F0, eta=alpha / k)


def loop_area(u, F) -> float:
    """∮F du [J] over the closed path (u, F) (trapezoidal rule, the path is closed
    between its last and first samples). Positive when the loop is run clockwise,
    i.e. the energy dissipated per cycle."""
    u = check_array("u", u, min_len=3)
    F = check_array("F", F, min_len=3)
    if F.size != u.size:
        raise ValueError(f"F must have the same length as u ({u.size}) (got {F.size})")
    uu = np.append(u, u[0])
    FF = np.append(F, F[0])
    return float(np.sum(0.5 * (FF[1:] + FF[:-1]) * np.diff(uu)))


def viscous_energy(*, c, x1, Omega) -> float:
    """Energy [J] dissipated per period by c·u̇ for u = x0 + x1 sin(Ωt + φ): π·x1²·Ω·c
    (Bastien et al. (2007), eq. (30))."""
    c = check_nonnegative("c", c)
    x1 = check_positive("x1", x1)
    Omega = check_positive("Omega", Omega)
    return math.pi * x1 ** 2 * Omega * c


def damping_from_energy(*, E, x1, Omega) -> float:
    """c [N·s/m] from the viscous energy E [J] per period of a sine input, eq. (30)."""
    E = check_nonnegative("E", E)
    x1 = check_positive("x1", x1)
    Omega = check_positive("Omega", Omega)
    return E / (math.pi * x1 ** 2 * Omega)


def damping_at_frequency(*, c, Omega, Omega0) -> float:
    """c0 = c·Ω/Ω0 [N·s/m]: damping identified at Ω used at Ω0 (cΩ constant), eq. (31)."""
    c = check_nonnegative("c", c)
    Omega = check_positive("Omega", Omega)
    Omega0 = check_positive("Omega0", Omega0)
    return c * Omega / Omega0


def _side_fit(x, y, x_at, deg=2):
    co = np.polyfit(x - x_at, y, deg)
    return float(np.polyval(co, 0.0)), float(np.polyval(np.polyder(co), 0.0))


def masing_loop_points(u, F, window: int = 12) -> dict:
    """Geometric data of a steady loop (one period of samples u [m], F [N]) as used by
    eqs. (26): u_A, F_A at the minimum of u, u_C, F_C at its maximum, and the kink B of
    the increasing branch with its one-sided slopes pB_minus, pB_plus [N/m].

    B is located at the most negative second difference of F along the increasing
    branch (sample order), then refined by intersecting quadratic fits over ``window`` samples on each
    side, whose derivatives at B give p_B^- and p_B^+ (eq. (23)). Meant for densely
    sampled, low-noise loops; with noisy data, pass hand-picked values to
    :func:`identify_masing`.
    """
    u = check_array("u", u, min_len=8)
    F = check_array("F", F, min_len=8)
    if F.size != u.size:
        raise ValueError(f"F must have the same length as u ({u.size}) (got {F.size})")
    window = int(window)
    iA, iC = int(np.argmin(u)), int(np.argmax(u))
    # increasing branch from A to C (the period may wrap around)
    idx = np.arange(iA, iC + 1) if iC >= iA else np.r_[np.arange(iA, u.size), np.arange(0, iC + 1)]
    ub, Fb = u[idx], F[idx]
    keep = np.r_[True, np.diff(ub) > 0]
    ub, Fb = ub[keep], Fb[keep]
    if ub.size < 2 * window + 3:
        raise ValueError(f"the increasing branch needs at least {2 * window + 3} samples "
                         f"(got {ub.size}); sample the loop more densely")
    # the kink shows as the most negative second difference along the branch (taken in
    # sample order: near A and C dF/du of the damped loop is singular, dF/dt is not)
    d2 = Fb[2:] - 2 * Fb[1:-1] + Fb[:-2]
    lo, hi = window, d2.size - window
    if hi <= lo:
        raise ValueError("the increasing branch is too short to locate the kink B")
    j = lo + int(np.argmin(d2[lo:hi]))       # kink at sample j+1 (or next to it)
    left = slice(j + 1 - window, j + 1)
    right = slice(j + 2, j + 2 + window)
    uB = float(ub[j + 1])
    for _ in range(3):
        fl, pl = _side_fit(ub[left], Fb[left], uB)
        fr, pr = _side_fit(ub[right], Fb[right], uB)
        if pl != pr:
            uB = uB - (fl - fr) / (pl - pr)   # Newton step on the intersection
    _, pm = _side_fit(ub[left], Fb[left], uB)
    _, pp = _side_fit(ub[right], Fb[right], uB)
    return dict(u_A=float(u[iA]), F_A=float(F[iA]), u_C=float(u[iC]), F_C=float(F[iC]),
                u_B=uB, pB_minus=pm, pB_plus=pp)


def identify_masing_loop(u, F, t=None, window: int = 12) -> dict:
    """Masing parameters from one period of a measured steady loop (u [m], F [N]).

    Corners and slopes by :func:`masing_loop_points`, then eqs. (26a)-(26f). If the
    sample times t [s] are given, the viscous part is identified too: the energy of
    c·u̇ is the loop area minus the dry-skeleton area 2α(u_C − u_A − 2η) (eqs. (13),
    (28)) and c = E / ∫u̇² dt over the period (eq. (28); π x1² Ω for a sine, eq. (30)).
    Returns the dict of :func:`identify_masing` plus the points, and E_total, E_viscous
    [J] and c [N·s/m] when t is given.
    """
    pts = masing_loop_points(u, F, window=window)
    par = identify_masing(**{k: pts[k] for k in ("u_A", "u_B", "u_C", "F_A", "F_C",
                                                  "pB_minus", "pB_plus")})
    out = dict(pts)
    out.update(par)
    if t is not None:
        t = check_array("t", t)
        if t.size != np.asarray(u).size:
            raise ValueError(f"t must have the same length as u ({np.asarray(u).size})")
        u = np.asarray(u, dtype=float)
        E_total = loop_area(u, F)
        E_dry = 2 * par["alpha"] * (par["u_max"] - par["u_min"] - 2 * par["eta"])
        # ∫u̇² dt = ∮u̇ du with the velocity of each sampling interval
        du = np.diff(u)
        dt = np.diff(t)
        int_v2 = float(np.sum(du * du / dt))
        out.update(E_total=E_total, E_viscous=E_total - E_dry,
                   c=max(E_total - E_dry, 0.0) / int_v2)
    return out
