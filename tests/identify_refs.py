"""Independent reference data for the identification tests: each law's own right-hand
side written here from its paper equation and integrated by scipy's DOP853 at rtol 1e-11
(or an exact operator), never by hystmech. Inputs are analytic, u(t) = A sin(2π f t)."""
import numpy as np
from scipy.integrate import solve_ivp


def sine(A=0.01, f=1.0, periods=3, fs=2000.0):
    """t [s], u [m], u̇ [m/s] of u = A sin(2π f t), fs samples per second."""
    t = np.arange(int(round(periods / f * fs)) + 1) / fs
    w = 2 * np.pi * f
    return t, A * np.sin(w * t), A * w * np.cos(w * t), (A, w)


def _integrate(rhs, t, x0):
    sol = solve_ivp(rhs, (t[0], t[-1]), np.atleast_1d(np.asarray(x0, float)), method="DOP853",
                    t_eval=t, rtol=1e-11, atol=1e-13, max_step=(t[1] - t[0]) * 20)
    assert sol.success, sol.message
    return sol.y


def _uv(Aw):
    A, w = Aw
    return (lambda s: A * np.sin(w * s)), (lambda s: A * w * np.cos(w * s))


def viscous_dahl(t, Aw, kx1, kw1, kx2, kw2, rho, w0=0.0):
    """Eqs. (27)-(33) of the viscous + Dahl paper: ẇ = ρ(u̇ − |u̇|w),
    F = κx1·u̇ (u̇ ≥ 0) / κx2·u̇, + κw1·w (w ≥ 0) / κw2·w."""
    _, ud = _uv(Aw)
    w = _integrate(lambda s, x: [rho * (ud(s) - abs(ud(s)) * x[0])], t, [w0])[0]
    v = ud(t)
    return np.where(v >= 0, kx1 * v, kx2 * v) + np.where(w >= 0, kw1 * w, kw2 * w)


def dahl(t, Aw, rho, Fc, w0=0.0):
    return viscous_dahl(t, Aw, 0.0, Fc, 0.0, Fc, rho, w0)


def bouc_wen(t, Aw, A, beta, gamma, n, k_el=0.0, z0=0.0):
    """ż = A u̇ − β|u̇||z|^(n−1)z − γ u̇|z|^n, F = k_el u + z."""
    u, ud = _uv(Aw)

    def rhs(s, x):
        z, v = x[0], ud(s)
        return [A * v - beta * abs(v) * abs(z) ** (n - 1) * z - gamma * v * abs(z) ** n]
    z = _integrate(rhs, t, [z0])[0]
    return k_el * u(t) + z


def modified_dahl(t, Aw, Lambda, mu, a, b, d, e, F0=0.0):
    """Bastien et al. (2007) eqs. (3)-(4): Ḟ = Λu̇ sgn(h_u − F)|h_u − F|^μ (u̇ ≥ 0),
    −Λu̇ sgn(h_l − F)|h_l − F|^μ (u̇ < 0), h_u = a u + b, h_l = d u + e."""
    u, ud = _uv(Aw)

    def rhs(s, x):
        F, v, us = x[0], ud(s), u(s)
        h = a * us + b if v >= 0 else d * us + e
        g = h - F
        return [(1 if v >= 0 else -1) * Lambda * v * np.sign(g) * abs(g) ** mu]
    return _integrate(rhs, t, [F0])[0]


def lugre(t, Aw, sigma0, sigma1, Fc, Fs, vs, beta=1.0, sigma2=0.0, x0=0.0):
    """Canudas de Wit et al.: ż = u̇ − σ0|u̇|z/g(u̇), g = Fc + (Fs − Fc)exp(−|u̇/vs|^β),
    F = σ0 z + σ1 ż + σ2 u̇."""
    _, ud = _uv(Aw)

    def zdot(s, z):
        v = ud(s)
        g = Fc + (Fs - Fc) * np.exp(-abs(v / vs) ** beta)
        return v - sigma0 * abs(v) * z / g
    z = _integrate(lambda s, x: [zdot(s, x[0])], t, [x0])[0]
    v = ud(t)
    zd = np.array([zdot(s, zz) for s, zz in zip(t, z)])
    return sigma0 * z + sigma1 * zd + sigma2 * v


def play(u, eta, w0=0.0):
    """Exact play (stop) operator along a piecewise-linear u: w ← clip(w + Δu, −η, η)."""
    w = np.empty(u.size)
    w[0] = w0
    for k in range(u.size - 1):
        w[k + 1] = min(max(w[k] + u[k + 1] - u[k], -eta), eta)
    return w


def masing(t, Aw, k, k0, alpha, F0=0.0, c=0.0, w0=0.0):
    """Bastien et al. (2007) eq. (11): F = k w + k0 u + c u̇ − F0, w the play operator of
    half-width η = α/k (exact for the sampled, piecewise-linear input)."""
    u, ud = _uv(Aw)
    us = u(t)
    return k * play(us, alpha / k, w0) + k0 * us + c * ud(t) - F0


def maxwell_slip(t, Aw, k, delta):
    """Σ_i k_i w_i, w_i the play operator of half-width δ_i (elasto-slip elements, each
    slipping at force k_i δ_i), exact for the sampled input."""
    u, _ = _uv(Aw)
    us = u(t)
    return sum(ki * play(us, di) for ki, di in zip(k, delta))


def dahl_exact(u, rho, Fc, w0=0.0):
    """Dahl force along a sampled u taken piecewise linear: the exact segment solution
    w ← s + (w − s) exp(−ρ|Δu|), s = sgn Δu (Ikhouane et al. §1), F = Fc w."""
    w = np.empty(u.size)
    w[0] = w0
    for k in range(u.size - 1):
        du = u[k + 1] - u[k]
        s = 1.0 if du > 0 else -1.0
        w[k + 1] = s + (w[k] - s) * np.exp(-rho * abs(du)) if du != 0 else w[k]
    return Fc * w


def duhem(t, Aw, A, cu, cl, F0=0.0):
    """Bastien et al. (2007) eq. (2): Ḟ = A u̇ (h_u(u) − F) (u̇ ≥ 0), −A u̇ (h_l(u) − F)
    (u̇ < 0), polynomial envelopes h = Σ c_i u^i."""
    u, ud = _uv(Aw)

    def rhs(s, x):
        v, us = ud(s), u(s)
        h = np.polynomial.polynomial.polyval(us, cu if v >= 0 else cl)
        return [A * abs(v) * (h - x[0])]
    return _integrate(rhs, t, [F0])[0]
