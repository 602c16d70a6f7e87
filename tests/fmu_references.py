"""Independent references for a force law driven by u(t) = A sin(om t), v = du/dt, from
the state the law starts in: written from the papers' equations (closed forms on the
monotone pieces of u for Dahl, the Masing stop operator and the Preisach relays; DOP853
at rtol 1e-12 for LuGre and Bouc-Wen), no hystmech code. Used to check FMUs in the
importers' own simulation loops (PyFMI, fmpy through hystmech.fmu.simulate_me)."""
import numpy as np
from scipy.integrate import solve_ivp


def turning_times(A, om, t_end):
    k = np.arange(0, int(om * t_end / np.pi) + 2)
    tk = (np.pi / 2 + k * np.pi) / om
    return tk[tk < t_end]


def monotone_pieces(t, A, om):
    """The turning points (t_k, u_k) of u up to max(t)."""
    tk = turning_times(A, om, t.max() + 1e-12)
    return tk, A * np.sin(om * tk)


def dahl(t, A, om, rho, Fc, w0=0.0):
    """Dahl: on a monotone piece (sign s of du) w = s - (s - w_a) exp(-rho |u - u_a|)."""
    tk, uk = monotone_pieces(t, A, om)
    out = np.empty_like(t)
    for i, ti in enumerate(t):
        w, ua, s = w0, 0.0, 1.0
        for tj, uj in zip(tk, uk):
            if tj >= ti:
                break
            w = s - (s - w) * np.exp(-rho * abs(uj - ua)); ua = uj; s = -s
        out[i] = s - (s - w) * np.exp(-rho * abs(A * np.sin(om * ti) - ua))
    return Fc * out


def masing(t, A, om, k, k0, alpha, F0, c, w0=0.0):
    """Masing (stop operator on w, |w| <= eta = alpha/k): on a monotone piece
    w = clip(w_a + u - u_a, -eta, eta); F = k w + k0 u + c du/dt - F0."""
    eta = alpha / k
    tk, uk = monotone_pieces(t, A, om)
    out = np.empty_like(t)
    for i, ti in enumerate(t):
        w, ua = w0, 0.0
        for tj, uj in zip(tk, uk):
            if tj >= ti:
                break
            w = np.clip(w + uj - ua, -eta, eta); ua = uj
        u = A * np.sin(om * ti)
        w = np.clip(w + u - ua, -eta, eta)
        out[i] = k * w + k0 * u + c * A * om * np.cos(om * ti) - F0
    return out


def preisach(t, A, om, a1, a2, weights, initial, k0, offset):
    """Sum of relays: +1 once u >= a2, -1 once u <= a1, else unchanged; the state on a
    monotone piece depends only on the extreme value reached there."""
    tk, uk = monotone_pieces(t, A, om)
    out = np.empty_like(t)
    for i, ti in enumerate(t):
        r = np.full(len(a1), float(initial))
        u0 = 0.0
        r[u0 >= a2] = 1.0; r[u0 <= a1] = -1.0
        pts = [uj for tj, uj in zip(tk, uk) if tj < ti] + [A * np.sin(om * ti)]
        for up in pts:
            r[up >= a2] = 1.0
            r[up <= a1] = -1.0
        out[i] = offset + k0 * pts[-1] + np.dot(weights, r)
    return out


def lugre(t, A, om, sigma0, sigma1, Fc, Fs, vs, beta, sigma2, x0=0.0):
    """LuGre, dx/dt = v - sigma0 |v| x / g(v), F = sigma0 x + sigma1 dx/dt + sigma2 v,
    g = Fc + (Fs - Fc) exp(-|v/vs|^beta): DOP853 at rtol 1e-12."""
    v = lambda s: A * om * np.cos(om * s)
    g = lambda vv: Fc + (Fs - Fc) * np.exp(-abs(vv / vs) ** beta)
    rhs = lambda s, x: [v(s) - sigma0 * abs(v(s)) * x[0] / g(v(s))]
    sol = solve_ivp(rhs, (0.0, t[-1]), [x0], method="DOP853", rtol=1e-12, atol=1e-16,
                    dense_output=True)
    x = sol.sol(t)[0]
    vt = v(t)
    return sigma0 * x + sigma1 * (vt - sigma0 * np.abs(vt) * x / g(vt)) + sigma2 * vt


def bouc_wen(t, A, om, Aw, beta, gamma, n, k_el, z0=0.0):
    """Bouc-Wen, dz/dt = Aw v - beta |v| |z|^(n-1) z - gamma v |z|^n, F = k_el u + z
    (Ikhouane & Rodellar's normalisation with the force in z): DOP853 at rtol 1e-12."""
    v = lambda s: A * om * np.cos(om * s)

    def rhs(s, z):
        vv, zz = v(s), z[0]
        return [Aw * vv - beta * abs(vv) * abs(zz) ** (n - 1) * zz - gamma * vv * abs(zz) ** n]
    sol = solve_ivp(rhs, (0.0, t[-1]), [z0], method="DOP853", rtol=1e-12, atol=1e-14,
                    dense_output=True)
    return k_el * A * np.sin(om * t) + sol.sol(t)[0]
