"""Honest uncertainty of a least-squares fit: covariance, confidence intervals,
residual tests and identifiability, from the residuals and the Jacobian at the optimum.

Given residuals r (n,) and their Jacobian J = ∂r/∂θ (n, p) at the optimum θ̂:

* classic covariance  σ̂² (JᵀJ)⁻¹, σ̂² = rᵀr / (n − p)  (white, homoscedastic noise only);
* sandwich / HAC covariance  (JᵀJ)⁻¹ S (JᵀJ)⁻¹ · n/(n − p), S the long-run covariance of
  the scores g_t = J_t r_t: Newey & West (1987) Bartlett weights with the automatic
  bandwidth of Andrews (1991, AR(1) plug-in, eq. (6.2)) after AR(1) prewhitening
  (Andrews & Monahan, 1992). It holds under coloured (autocorrelated) noise;
* sandwich (JᵀJ)⁻¹ Jᵀ Σ̂ J (JᵀJ)⁻¹ with Σ̂ the Toeplitz covariance of an AR(q) model of
  the residuals (Yule–Walker, q by AIC: an AR sieve for stationary noise independent
  of the input) — the default ("ar"): it uses every sample to estimate the noise
  autocovariance where Newey–West estimates the scores' own;
* residual moving-block bootstrap (linearised: θ* − θ̂ = (JᵀJ)⁻¹Jᵀ r*, r* the residuals
  resampled in blocks, Künsch 1989), an alternative that also holds under coloured noise;
* 95 % confidence intervals θ̂ ± z₀.₉₇₅·SE, the correlation matrix;
* Ljung–Box whiteness test of the residuals (Ljung & Box 1978) and an input–residual
  cross-correlation test (Bartlett's variance of a sample cross-correlation, as
  MATLAB's ``resid``);
* identifiability from the SVD of the column-scaled Jacobian J·diag(|θ̂|): each (nearly)
  null right singular vector v is a direction in log-parameter space along which the
  residuals do not change, i.e. the product Π θ_i^{v_i} is not determined; it is
  reported as such ("only rho*Fc is determined, rho/Fc is not");
* a warning for every parameter that ends on a bound.

:func:`analyse` returns an :class:`Uncertainty` with a readable ``summary()``.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

METHODS = ("ar", "hac", "classic", "bootstrap")


@dataclass
class Uncertainty:
    """Uncertainty of fitted parameters.

    names, values: the parameters and their estimates; cov: the covariance used (by
    ``method``), cov_classic: σ̂²(JᵀJ)⁻¹ for comparison; se: standard errors (inf for a
    parameter in a non-identifiable combination); ci: (p, 2) 95 % intervals (``level``);
    corr: correlation matrix; whiteness / cross: residual tests (dicts); identifiability:
    list of dicts (direction, singular value, message); warnings: the messages emitted.
    """

    names: list
    values: np.ndarray
    cov: np.ndarray
    cov_classic: np.ndarray
    se: np.ndarray
    se_classic: np.ndarray
    ci: np.ndarray
    corr: np.ndarray
    method: str
    level: float = 0.95
    dof: int = 0
    sigma: float = float("nan")
    bandwidth: float = 0.0
    whiteness: dict = field(default_factory=dict)
    cross: dict = field(default_factory=dict)
    identifiability: list = field(default_factory=list)
    on_bound: list = field(default_factory=list)
    singular_values: np.ndarray | None = None
    warnings: list = field(default_factory=list)
    inputs_: dict = field(default_factory=dict, repr=False)

    def redo(self, **kw) -> "Uncertainty":
        """The same analysis with some options changed (e.g. method="classic")."""
        args = dict(self.inputs_)
        args.update(kw)
        args.setdefault("warn", False)
        r, J = args.pop("residuals"), args.pop("jacobian")
        return analyse(r, J, **args)

    def stderr(self) -> dict:
        """name -> standard error (of the chosen method)."""
        return {k: float(s) for k, s in zip(self.names, self.se)}

    def intervals(self) -> dict:
        """name -> (lo, hi) confidence interval."""
        return {k: (float(a), float(b)) for k, (a, b) in zip(self.names, self.ci)}

    def contains(self, truth: dict) -> dict:
        """name -> whether the interval holds truth[name] (names missing in truth skipped)."""
        return {k: bool(a <= truth[k] <= b) for k, (a, b) in self.intervals().items() if k in truth}

    def to_dict(self) -> dict:
        return {"method": self.method, "level": self.level, "dof": self.dof, "sigma": self.sigma,
                "bandwidth": self.bandwidth,
                "params": {k: {"value": float(v), "se": float(s), "se_classic": float(sc),
                               "ci": [float(a), float(b)]}
                           for k, v, s, sc, (a, b) in zip(self.names, self.values, self.se,
                                                          self.se_classic, self.ci)},
                "names": list(self.names), "cov": self.cov.tolist(),
                "corr": self.corr.tolist(), "whiteness": self.whiteness, "cross": self.cross,
                "identifiability": [d["message"] for d in self.identifiability],
                "on_bound": self.on_bound, "warnings": list(self.warnings)}

    def summary(self) -> str:
        """A readable table: value, SE, interval, relative SE per parameter, then the
        residual tests and the warnings."""
        pct = int(round(100 * self.level))
        w = max([len(str(k)) for k in self.names] + [9])
        head = (f"{'parameter':<{w}} {'value':>12} {'SE':>11} {'SE white':>11} "
                f"{f'{pct} % interval':>27} {'rel. SE':>8}")
        lines = [f"parameter uncertainty ({_METHOD_TEXT[self.method]}; n - p = {self.dof})", head,
                 "-" * len(head)]
        for k, v, s, sc, (a, b) in zip(self.names, self.values, self.se, self.se_classic, self.ci):
            rel = f"{100 * s / abs(v):7.2f}%" if v != 0 and np.isfinite(s) else "      - "
            lines.append(f"{k:<{w}} {v:12.6g} {s:11.4g} {sc:11.4g} [{a:12.6g}, {b:12.6g}] {rel}")
        if len(self.names) > 1:
            big = [(self.names[i], self.names[j], self.corr[i, j])
                   for i in range(len(self.names)) for j in range(i)
                   if np.isfinite(self.corr[i, j]) and abs(self.corr[i, j]) > 0.9]
            for a, b, c in big:
                lines.append(f"correlation {a}-{b} = {c:+.3f}")
        if self.whiteness:
            wt = self.whiteness
            lines.append(f"residual whiteness (Ljung-Box, {wt['lags']} lags): Q = {wt['Q']:.4g}, "
                         f"p = {wt['p_value']:.3g} -> {'white' if wt['white'] else 'NOT white'}")
        if self.cross:
            c = self.cross
            lines.append(f"input-residual cross-correlation ({c['lags']} lags each side): max "
                         f"|r|/bound = {c['max_ratio']:.3g} -> "
                         f"{'uncorrelated' if c['uncorrelated'] else 'CORRELATED'}")
        for m in self.warnings:
            lines.append(f"warning: {m}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


_METHOD_TEXT = {"ar": "sandwich with an AR-sieve model of the residual noise",
                "hac": "sandwich/HAC, Newey-West prewhitened, automatic bandwidth",
                "classic": "classic s^2 (J^T J)^-1, white noise assumed",
                "bootstrap": "residual moving-block bootstrap"}


# -- residual tests --------------------------------------------------------------------------------
def _acf(x, nlags):
    x = np.asarray(x, float) - np.mean(x)
    n = x.size
    nfft = 1 << int(math.ceil(math.log2(2 * n)))
    f = np.fft.rfft(x, nfft)
    c = np.fft.irfft(f * np.conj(f), nfft)[: nlags + 1]
    return c / c[0] if c[0] > 0 else np.zeros(nlags + 1)


def ljung_box(r, lags: int | None = None, *, alpha: float = 0.05) -> dict:
    """Ljung–Box portmanteau test of whiteness: Q = n(n+2) Σ_{k=1..h} ρ_k²/(n−k),
    χ²(h) under white residuals (Ljung & Box 1978). h defaults to min(20, n/5).
    Returns Q, p_value, lags, white (p >= alpha) and the autocorrelation ρ_0..ρ_h."""
    from scipy.stats import chi2

    r = np.asarray(r, float).ravel()
    n = r.size
    h = int(lags) if lags is not None else max(1, min(20, n // 5))
    if not 1 <= h < n:
        raise ValueError(f"lags must be in [1, {n - 1}] (got {h})")
    rho = _acf(r, h)
    k = np.arange(1, h + 1)
    Q = float(n * (n + 2) * np.sum(rho[1:] ** 2 / (n - k)))
    p = float(chi2.sf(Q, h))
    return {"Q": Q, "p_value": p, "lags": h, "white": bool(p >= alpha), "acf": rho.tolist()}


def cross_correlation_test(u, r, lags: int | None = None, *, alpha: float = 0.01) -> dict:
    """Test that the residuals r are uncorrelated with the input u: the sample
    cross-correlations ρ_ur(k), |k| <= lags (default min(25, n/5)), against their
    standard deviation under independence, Bartlett's √(Σ_m ρ_uu(m) ρ_rr(m) / n) (so a
    smooth, non-white input is allowed), at level alpha per lag with a Bonferroni
    correction over the 2·lags + 1 lags. Returns the correlations, the bound, max_ratio
    = max |ρ_ur(k)| / bound(k), uncorrelated (max_ratio < 1)."""
    from scipy.stats import norm

    u = np.asarray(u, float).ravel()
    r = np.asarray(r, float).ravel()
    n = r.size
    if u.size != n:
        raise ValueError(f"input has {u.size} samples, the residuals {n}")
    M = int(lags) if lags is not None else max(1, min(25, n // 5))
    a = u - u.mean()
    b = r - r.mean()
    sa, sb = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    if sa == 0 or sb == 0:
        return {"lags": M, "ccf": [], "bound": [], "max_ratio": 0.0, "uncorrelated": True}
    nfft = 1 << int(math.ceil(math.log2(2 * n)))
    c = np.fft.irfft(np.conj(np.fft.rfft(a, nfft)) * np.fft.rfft(b, nfft), nfft) / (sa * sb)
    ks = np.arange(-M, M + 1)
    ccf = c[ks % nfft]
    # Bartlett: var ρ_ur(k) ≈ (1/n) Σ_m ρ_uu(m) ρ_rr(m) under independence (all k)
    L = min(n - 1, max(4 * M, int(10 * math.log10(n)) + 1, 200))
    raa, rbb = _acf(a, L), _acf(b, L)
    var = (1.0 + 2.0 * float(np.sum(raa[1:] * rbb[1:]))) / n
    z = float(norm.ppf(1.0 - alpha / (2.0 * ks.size)))
    bound = z * math.sqrt(max(var, 1.0 / n))
    ratio = float(np.max(np.abs(ccf)) / bound)
    return {"lags": M, "ccf": ccf.tolist(), "bound": bound, "max_ratio": ratio,
            "uncorrelated": bool(ratio < 1.0)}


# -- long-run covariance of the scores ---------------------------------------------------------------
def _segment_mask(seg_id, lag):
    return None if seg_id is None else (seg_id[lag:] == seg_id[:-lag])


def _andrews_bandwidth(G, seg_id=None):
    """Andrews (1991) eq. (6.2)-(6.4) AR(1) plug-in bandwidth S_T for the Bartlett kernel:
    1.1447 (α(1) T)^(1/3), α(1) from an AR(1) fit to every column of G."""
    n = G.shape[0]
    num = den = 0.0
    mask = _segment_mask(seg_id, 1)
    for a in range(G.shape[1]):
        x = G[:, a]
        x0, x1 = x[:-1], x[1:]
        if mask is not None:
            x0, x1 = x0[mask], x1[mask]
        d = float(x0 @ x0)
        if d <= 0:
            continue
        rho = min(max(float(x0 @ x1) / d, -0.97), 0.97)
        s2 = float(np.mean((x1 - rho * x0) ** 2))
        num += 4.0 * rho ** 2 * s2 ** 2 / ((1 - rho) ** 6 * (1 + rho) ** 2)
        den += s2 ** 2 / (1 - rho) ** 4
    if den <= 0:
        return 1.0
    return float(1.1447 * (num / den * n) ** (1.0 / 3.0))


def _bartlett_sum(G, bw, seg_id=None):
    """Σ_{|l| < bw} (1 − |l|/bw) Γ_l, Γ_l = Σ_t g_t g_{t−l}ᵀ (lags within one segment)."""
    S = G.T @ G
    L = int(math.ceil(bw)) - 1
    for l in range(1, min(L, G.shape[0] - 1) + 1):
        w = 1.0 - l / bw
        if w <= 0:
            break
        a, b = G[l:], G[:-l]
        m = _segment_mask(seg_id, l)
        if m is not None:
            a, b = a[m], b[m]
        Gl = a.T @ b
        S += w * (Gl + Gl.T)
    return S


def long_run_covariance(G, *, prewhiten: bool = True, bandwidth: float | None = None,
                        segments=None):
    """Long-run covariance Σ_t Σ_s E[g_t g_sᵀ] of the score series G (n, p): Bartlett
    (Newey–West) weights, Andrews (1991) automatic bandwidth, AR(1) prewhitening with
    recolouring (Andrews & Monahan 1992, with one coefficient for all components,
    capped at 0.97).
    segments: lengths of independent records concatenated in G (no lag crosses them).
    Returns (S, bandwidth)."""
    G = np.asarray(G, float)
    n, p = G.shape
    seg_id = None
    if segments is not None:
        lens = [int(s) for s in segments]
        if sum(lens) != n or min(lens) < 1:
            raise ValueError(f"segments must be positive lengths summing to {n} (got {lens})")
        seg_id = np.repeat(np.arange(len(lens)), lens)
    A = None
    E = G
    if prewhiten and n > 4 * p + 4:
        m = _segment_mask(seg_id, 1)
        X, Y = G[:-1], G[1:]
        if m is not None:
            X, Y = X[m], Y[m]
        # one AR(1) coefficient for all score components: a full VAR(1) fit is
        # ill-conditioned when the Jacobian's columns are nearly collinear (common in
        # nonlinear fits), and (I − A)⁻¹ then inflates the covariance many times over
        a = float(np.sum(X * Y) / max(np.sum(X * X), 1e-300))
        A = min(max(a, -0.97), 0.97) * np.eye(p)
        E = G.copy()
        E[1:] = G[1:] - G[:-1] @ A.T
        if seg_id is not None:
            starts = np.r_[0, np.cumsum(lens)[:-1]]
            E[starts] = G[starts]
    bw = _andrews_bandwidth(E, seg_id) if bandwidth is None else float(bandwidth)
    bw = max(bw, 1.0)
    S = _bartlett_sum(E, bw, seg_id)
    if A is not None:
        Ik = np.linalg.inv(np.eye(p) - A)
        S = Ik @ S @ Ik.T
    return 0.5 * (S + S.T), bw


def ar_autocovariance(r, max_order: int | None = None, tol: float = 1e-6):
    """Autocovariance γ(0..L) of the AR(q) model fitted to r by Yule–Walker (Levinson),
    order q <= max_order (default min(40, n/10)) chosen by AIC (a sieve for any stationary
    noise); L is where |γ(l)| falls below tol·γ(0) (at most n − 1). Returns (γ, q, a)."""
    from scipy.linalg import solve_toeplitz

    r = np.asarray(r, float) - np.mean(r)
    n = r.size
    Q = int(max_order) if max_order is not None else max(1, min(40, n // 10))
    nfft = 1 << int(math.ceil(math.log2(2 * n)))
    f = np.fft.rfft(r, nfft)
    c = np.fft.irfft(f * np.conj(f), nfft)[: Q + 1] / n
    if c[0] <= 0:
        return np.zeros(1), 0, np.zeros(0)
    best = (math.log(c[0]), 0, np.zeros(0))
    for q in range(1, Q + 1):
        a = solve_toeplitz(c[:q], c[1:q + 1])
        s2 = c[0] - float(a @ c[1:q + 1])
        if s2 <= 0:
            break
        aic = math.log(s2) + 2.0 * q / n
        if aic < best[0]:
            best = (aic, q, a)
    _, q, a = best
    s2 = c[0] - (float(a @ c[1:q + 1]) if q else 0.0)
    # the model's autocovariance: impulse response h of 1/(1 − Σ a_k z^-k), γ(l) = s2 Σ h_j h_{j+l}
    from scipy.signal import lfilter

    L = n - 1
    h = lfilter([1.0], np.r_[1.0, -a], np.r_[1.0, np.zeros(min(L, 1 << 16))])
    keep = np.flatnonzero(np.abs(h) > 1e-9 * np.max(np.abs(h)))
    h = h[: keep[-1] + 1]
    g = s2 * np.correlate(h, h, "full")[h.size - 1:]
    big = np.flatnonzero(np.abs(g) > tol * g[0])
    g = g[: min(big[-1] + 1, L + 1)]
    return g, q, a


def _stationary_noise_S(J, gamma, segments=None):
    """S = Jᵀ Σ J, Σ_ts = γ(|t − s|) (Toeplitz, within each independent segment): the
    scores' covariance for stationary noise of autocovariance γ independent of the
    regressors. Σ J by FFT convolution of every column with the two-sided γ."""
    from scipy.signal import fftconvolve

    n, p = J.shape
    lens = [n] if segments is None else [int(q) for q in segments]
    S = np.zeros((p, p))
    g2 = np.r_[gamma[:0:-1], gamma]                     # γ(−L..L)
    L = gamma.size - 1
    start = 0
    for m in lens:
        Jm = J[start:start + m]
        Y = fftconvolve(Jm, g2[:, None], mode="full", axes=0)[L:L + m]
        S += Jm.T @ Y
        start += m
    return 0.5 * (S + S.T)


def _block_bootstrap(r, Jpinv, n_boot, block, seed, segments=None):
    """Linearised moving-block bootstrap: draws of Jpinv @ r*, r* the residual series
    rebuilt from randomly chosen blocks of ``block`` consecutive residuals (Künsch 1989)."""
    rng = np.random.default_rng(seed)
    n = r.size
    block = int(min(max(block, 1), n))
    nb = int(math.ceil(n / block))
    out = np.empty((n_boot, Jpinv.shape[0]))
    rc = r - r.mean()
    for b in range(n_boot):
        st = rng.integers(0, n - block + 1, nb)
        idx = (st[:, None] + np.arange(block)[None, :]).ravel()[:n]
        out[b] = Jpinv @ rc[idx]
    return out


# -- identifiability ------------------------------------------------------------------------------
def _nice_exponent(x):
    for q in (1, 2, 3, 4):
        k = round(x * q)
        if abs(x * q - k) < 0.06 * q and k != 0:
            return k, q
    return None


def _power(name, e):
    ex = _nice_exponent(abs(e))
    if ex is None:
        return f"{name}^{abs(e):.2g}"
    k, q = ex
    if q == 1:
        return name if k == 1 else f"{name}^{k}"
    return f"{name}^({k}/{q})"


def _product(names, exps):
    """'a*b/c' for exponents (1, 1, −1); exponents rescaled so that the smallest is ±1
    when they are then whole numbers (a^2*b rather than a*b^(1/2))."""
    exps = np.asarray(exps, float)
    m = np.min(np.abs(exps))
    if m > 0 and np.all(np.abs(exps / m - np.round(exps / m)) < 0.06 * np.abs(exps / m)):
        exps = np.round(exps / m)
    else:
        exps = exps / np.max(np.abs(exps))
    num = [_power(n, e) for n, e in zip(names, exps) if e > 0]
    den = [_power(n, e) for n, e in zip(names, exps) if e < 0]
    s = "*".join(num) if num else "1"
    if den:
        s += "/" + ("/".join(den) if len(den) == 1 else "(" + "*".join(den) + ")")
    return s


def describe_direction(names, v, logscale, tol=0.1, weak: bool = False) -> dict:
    """A null direction v of the scaled Jacobian in words. In log-parameter space (all
    parameters involved positive) v says Π θ_i^{v_i} is not determined; with two
    parameters the determined combination is the orthogonal one (v = (1, −1): only
    θ1·θ2 is determined, θ1/θ2 is not)."""
    v = np.asarray(v, float)
    v = v / np.max(np.abs(v))
    sup = [i for i in range(v.size) if abs(v[i]) >= tol]
    nm = [names[i] for i in sup]
    if len(sup) == 1:
        return {"params": nm, "undetermined": nm[0], "determined": None,
                "message": f"the data do not determine {nm[0]} (the residuals do not depend on it)"}
    if all(logscale[i] for i in sup):
        ex = [v[i] for i in sup]
        if ex[0] < 0:
            ex = [-e for e in ex]
        undet = _product(nm, ex)
        if len(sup) == 2:
            det = _product(nm, [ex[1], -ex[0]] if ex[1] > 0 else [-ex[1], ex[0]])
            if weak:
                return {"params": nm, "undetermined": undet, "determined": det,
                        "message": f"only {det} is well determined, {undet} poorly"}
            return {"params": nm, "undetermined": undet, "determined": det,
                    "message": f"only {det} is determined ({undet} is not): the parameters "
                               f"{' and '.join(nm)} are not separately identifiable"}
        return {"params": nm, "undetermined": undet, "determined": None,
                "message": f"the combination {undet} is {'poorly' if weak else 'not'} "
                           f"determined: the parameters "
                           f"{', '.join(nm)} are not separately identifiable"}
    terms = " ".join(f"{'+' if v[i] >= 0 else '-'} {abs(v[i]):.2g}·Δ{names[i]}"
                     + ("/" + names[i] if logscale[i] else "") for i in sup)
    return {"params": nm, "undetermined": terms.lstrip("+ "), "determined": None,
            "message": f"the change {terms.lstrip('+ ')} leaves the residuals unchanged: the "
                       f"parameters {', '.join(nm)} are not separately identifiable"}


# -- the analysis -----------------------------------------------------------------------------------
def _bound_list(bounds, names, p):
    if bounds is None:
        return [(-np.inf, np.inf)] * p
    if isinstance(bounds, dict):
        return [tuple(float(b) for b in bounds.get(k, (-np.inf, np.inf))) for k in names]
    return [tuple(b) for b in np.asarray(bounds, float).reshape(p, 2)]


def analyse(residuals, jacobian, *, names=None, values=None, bounds=None, method: str = "ar",
            level: float = 0.95, inputs=None, segments=None, rcond: float = 1e-7,
            max_rel_se: float = 1.0, weak_rcond: float = 1e-2, weak_rel_se: float = 0.01,
            n_boot: int = 400, block: int | None = None,
            seed: int = 0, dof: int | None = None, warn: bool = True, what: str = "fit",
            bandwidth: float | None = None, log=None, prewhiten: bool = True) -> Uncertainty:
    """Uncertainty of the least-squares estimate θ̂ from residuals r (n,) and the Jacobian
    J = ∂r/∂θ (n, p) at θ̂ (any residual weighting: the covariance does not depend on it).

    names: parameter names (default p0, p1, ...); values: θ̂ (for intervals, relative
    errors and the log-space identifiability analysis); bounds: name -> (lo, hi) or a
    (p, 2) array, to warn about parameters ending on a bound; method: "ar" (default:
    sandwich with an AR-sieve noise model), "hac" (Newey–West, automatic bandwidth) —
    both hold under coloured noise —, "classic" (white noise only) or "bootstrap"; inputs: the input signal(s)
    (n,) or (n, k) for the input–residual cross-correlation test; segments: lengths of
    independently measured records concatenated in r; rcond: smallest relative singular
    value of the scaled Jacobian counted as informative; max_rel_se: a singular direction
    whose relative standard deviation exceeds this (1 = 100 %) is reported as not
    determined by the data at their noise level; weak_rcond, weak_rel_se: a direction
    with relative singular value below weak_rcond and relative standard deviation above
    weak_rel_se (1 %) is reported as poorly determined (e.g. Dahl at an amplitude
    u·ρ << 1: only ρ·Fc is well determined); dof: the residual degrees of freedom
    (default n − p); log: the parameters (names or booleans) analysed in log space, i.e.
    positive scale parameters (default: every non-zero value); the others are scaled by
    their bound width (or to unit column norm). Warns (RuntimeWarning, unless warn=False) with each identifiability
    and bound message. Returns an :class:`Uncertainty`.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (got {method!r})")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1) (got {level!r})")
    r = np.asarray(residuals, float).ravel()
    J = np.asarray(jacobian, float)
    if J.ndim != 2 or J.shape[0] != r.size:
        raise ValueError(f"jacobian must be (n, p) with n = {r.size} residuals (got {J.shape})")
    n, p = J.shape
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(J))):
        raise ValueError("residuals and jacobian must be finite")
    names = [f"p{i}" for i in range(p)] if names is None else [str(k) for k in names]
    if len(names) != p:
        raise ValueError(f"{len(names)} names for {p} jacobian columns")
    x = np.zeros(p) if values is None else np.asarray(values, float).ravel()
    if x.size != p:
        raise ValueError(f"{x.size} values for {p} jacobian columns")
    dof = max(n - p, 1) if dof is None else max(int(dof), 1)
    s2 = float(r @ r) / dof

    # column scaling: relative (log-space) for the positive-scale parameters, by the
    # bound width or to unit column norm for the others (offsets, initial states)
    if log is None:
        logscale = (x != 0) & (values is not None)
    else:
        lg = np.asarray([k in log for k in names] if not np.asarray(log).dtype == bool
                        else log, bool).ravel()
        if lg.size != p:
            raise ValueError(f"log must name parameters or be {p} booleans")
        logscale = lg & (x != 0)
    blist = _bound_list(bounds, names, p)
    colnorm = np.linalg.norm(J, axis=0)
    width = np.array([hi - lo for lo, hi in blist], float)
    D = np.where(colnorm > 0, 1.0 / np.where(colnorm > 0, colnorm, 1.0), 1.0)
    D = np.where(np.isfinite(width) & (width > 0), width, D)
    D = np.where(logscale, np.abs(x), D)
    Js = J * D
    U, sv, Vt = np.linalg.svd(Js, full_matrices=False)
    smax = float(sv[0]) if sv.size and sv[0] > 0 else 0.0
    keep = sv > rcond * smax if smax > 0 else np.zeros(p, bool)
    inv_s = np.where(keep, 1.0 / np.where(keep, sv, 1.0), 0.0)
    # (JᵀJ)⁻¹ Jᵀ on the informative subspace, in the original coordinates
    Jpinv = (D[:, None] * (Vt.T * inv_s)) @ U.T
    B = (D[:, None] * (Vt.T * inv_s ** 2)) @ (Vt * D[None, :])
    cov_classic = s2 * B

    bw = 0.0
    if method == "classic":
        cov = cov_classic
    elif method == "ar":
        gamma, q, _ = ar_autocovariance(r)
        bw = float(q)
        # effective sample size n·γ(0)/(long-run variance): the p fitted parameters
        # remove p of those, not p of n, from the residuals' variance; the interval
        # uses Student's t with n_eff − p degrees of freedom
        lrv = float(gamma[0] + 2.0 * np.sum(gamma[1:]))
        n_eff = float(np.clip(n * gamma[0] / lrv, p + 2, n)) if lrv > 0 else float(n)
        dof_eff = n_eff - p
        cov = B @ _stationary_noise_S(J, gamma * (n_eff / dof_eff), segments) @ B
    elif method == "hac":
        S, bw = long_run_covariance(J * r[:, None], segments=segments, bandwidth=bandwidth,
                                    prewhiten=prewhiten)
        cov = B @ S @ B * (n / dof)
    else:
        if block is None:
            # block length ~ the un-prewhitened Andrews bandwidth: blocks must span the
            # residuals' correlation time
            seg_id = None if segments is None else np.repeat(np.arange(len(segments)),
                                                              [int(q) for q in segments])
            bw_raw = _andrews_bandwidth(J * r[:, None], seg_id)
            block = max(int(round(2 * bw_raw)), int(round(n ** (1 / 3))))
        bw = float(block)
        draws = _block_bootstrap(r, Jpinv, int(n_boot), block, seed)
        cov = np.cov(draws, rowvar=False).reshape(p, p) * (n / dof)
    cov = 0.5 * (cov + cov.T)

    # identifiability: directions with no information, or with too little at this noise
    ident = []
    cov_s = cov / np.outer(D, D)                       # covariance in scaled units
    for i in range(p):
        vdir = Vt[i]
        if not keep[i]:
            ident.append({**describe_direction(names, vdir, logscale), "singular_value": float(sv[i]),
                          "relative": float(sv[i] / smax) if smax > 0 else 0.0, "kind": "null"})
            continue
        sd = float(np.sqrt(max(vdir @ cov_s @ vdir, 0.0)))
        rel = float(sv[i] / smax)
        if not (np.isfinite(sd) and logscale[np.abs(vdir) / np.max(np.abs(vdir)) >= 0.1].all()):
            continue
        if sd > max_rel_se:
            d = describe_direction(names, vdir, logscale)
            d["message"] += (f" at this noise level (relative standard deviation "
                             f"{100 * sd:.0f} % along that direction)")
        elif rel < weak_rcond and sd > weak_rel_se:
            d = describe_direction(names, vdir, logscale, weak=True)
            d["message"] += (f": that direction is {1 / rel:.0f} times less well determined "
                             f"than the best one (relative standard deviation {100 * sd:.2g} %)")
        else:
            continue
        ident.append({**d, "singular_value": float(sv[i]), "relative": rel, "kind": "weak"})
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    se_classic = np.sqrt(np.clip(np.diag(cov_classic), 0.0, None))
    for d in ident:
        if d["kind"] == "null":
            for k in d["params"]:
                se[names.index(k)] = np.inf
                se_classic[names.index(k)] = np.inf
    from scipy.stats import norm, t as student

    z = float(norm.ppf(0.5 + level / 2)) if method != "ar" else \
        float(student.ppf(0.5 + level / 2, max(dof_eff, 1.0)))
    ci = np.column_stack([x - z * se, x + z * se])
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        corr = cov / np.outer(sd, sd)
    corr[~np.isfinite(corr)] = np.nan
    np.fill_diagonal(corr, 1.0)

    msgs = [f"{what}: {d['message']}" for d in ident]
    on_bound = []
    if bounds is not None:
        for k, xi, (lo, hi) in zip(names, x, blist):
            lo, hi = float(lo), float(hi)
            width = hi - lo if np.isfinite(hi - lo) else max(abs(xi), 1.0)
            tol = 1e-6 * width + 1e-12 * abs(xi)
            for side, b in (("lower", lo), ("upper", hi)):
                if np.isfinite(b) and abs(xi - b) <= tol:
                    on_bound.append(k)
                    msgs.append(f"{what}: {k} = {xi:.6g} ends on its {side} bound {b:.6g}: the "
                                "optimum may lie beyond it; its interval is not reliable "
                                "(widen the bound or fix the parameter)")
    white = ljung_box(r) if n >= 10 else {}
    cross = {}
    if inputs is not None:
        ui = np.asarray(inputs, float)
        ui = ui.reshape(n, -1) if ui.ndim > 1 else ui.reshape(n, 1)
        tests = [cross_correlation_test(ui[:, j], r) for j in range(ui.shape[1])]
        cross = max(tests, key=lambda c: c["max_ratio"])
    if method == "classic" and white and not white["white"]:
        msgs.append(f"{what}: the residuals are not white (Ljung-Box p = {white['p_value']:.2g}): "
                    "the classic covariance understates the uncertainty; use method='hac'")
    if warn:
        for m in msgs:
            warnings.warn(m, RuntimeWarning, stacklevel=2)
    return Uncertainty(names=names, values=x, cov=cov, cov_classic=cov_classic, se=se,
                       se_classic=se_classic, ci=ci, corr=corr, method=method, level=level,
                       dof=dof, sigma=math.sqrt(s2), bandwidth=float(bw), whiteness=white,
                       cross=cross, identifiability=ident, on_bound=on_bound,
                       singular_values=sv / smax if smax > 0 else sv, warnings=msgs,
                       inputs_=dict(residuals=r, jacobian=J, names=names, values=x,
                                    bounds=bounds, method=method, level=level, inputs=inputs,
                                    segments=segments, rcond=rcond, max_rel_se=max_rel_se,
                                    weak_rcond=weak_rcond, weak_rel_se=weak_rel_se,
                                    n_boot=n_boot, block=block, seed=seed, dof=dof, what=what,
                                    bandwidth=bandwidth, log=log, prewhiten=prewhiten))


def jacobian_fd(fun, x, *, rel_step: float = 1e-6, abs_step=None):
    """Central-difference Jacobian of the residual function fun at x (for callers without
    sensitivities; a fit's own Jacobian is preferred). Returns (n, p)."""
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        h = rel_step * max(abs(x[i]), 1e-300) if abs_step is None else float(np.ravel(abs_step)[i])
        if h == 0:
            h = rel_step
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        cols.append((np.asarray(fun(xp), float) - np.asarray(fun(xm), float)) / (2 * h))
    return np.column_stack(cols)
