"""Output-error identification of any :class:`~hystmech.systems.Assembly`.

Given experiments (sampled inputs: external forces and imposed motions; measured
outputs: positions, velocities, accelerations, element states) and a list of free
parameters (masses, springs, dampers, element-law parameters, initial states, force
gains), :func:`fit_assembly` minimises the output error

    J(θ) = Σ_experiments Σ_channels Σ_k ((ŷ_c(t_k; θ) − y_c,k) / σ_c)²

with scipy's trust-region least squares (``least_squares(method="trf")``, bounds
respected, a law's own constraints respected: a step into a parameter set the law
refuses is rejected like a non-finite one), from the initial values and optional
random starts (starts the laws refuse are skipped and counted).

The model ŷ is the assembly's compiled right-hand side (``core``: the generic engine's,
compiled once per install, for an assembly of shipped laws and operators —
systems/methods/engine.py ``for_sensitivity``; else, for user kernels, one generated
module per structure, :mod:`hystmech.systems.codegen`) integrated by the
classical fourth-order Runge–Kutta method with ``substeps`` steps per sample, the
inputs read at the stage times from the chosen interpolation of the samples
(``Experiment.interpolation``). The Jacobian ∂ŷ/∂θ is exact for that discrete model:
the forward sensitivity equations Ṡ = (∂f/∂y)·S + ∂f/∂θ, S(0) = ∂y0/∂θ, are
integrated by the same Runge–Kutta stages (an explicit Runge–Kutta step applied to
the sensitivity equations is the derivative of the step itself), with
∂f/∂y the generated ``jac_core`` (the elements' ``jac`` kernels) and ∂f/∂θ the
generated ``pjac_core`` (the elements' ``pjac`` kernels; systems/codegen.py,
:func:`~hystmech.systems.codegen.build_sensitivity`). No finite differences of runs.
Inclusions whose box is set by their parameters (Masing, Maxwell-slip: ``box_p``)
have every stage state and every step's result projected onto the box
(:func:`sens_project`); the sensitivities differentiate that projection, so they are
exact for the projected scheme too. Operators (Preisach, Prandtl-Ishlinskii): their
weights, k0 and offset can be free (p is affine in them, ∂p/∂θ = the rows of DP); the
memory committed at a step's start serves the stages (a trial evaluation at the stage's
input, as the simulation does) and is advanced over the step's input segment once the
step is taken, its prefix sums' derivative rows with it (the law's ``force_tan`` and
``advance_tan`` kernels through ``ops_tan``/``ops_sens``, the engine's or the
generated ones); thresholds are refused.

Uncertainty: :func:`hystmech.identify.uncertainty.analyse` (sandwich/HAC covariance,
intervals, residual tests, identifiability and on-bound warnings) on the weighted
residuals and Jacobian at the optimum.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..systems.methods import engine as _engine

INTERPOLATIONS = ("linear", "hold", "cubic", "fourier")


# -- the template compiled into each structure's sensitivity module -------------------------
def sens_stage(t, y, S, Sm, iw, prm, UF, UB, VB, gain, cols, mult, dy, dS, w, V, J, G, with_s,
               sm, DP, DF, du):
    """TEMPLATE (systems/codegen.py build_sensitivity): ẏ and Ṡ = J·S + ∂f/∂θ at (t, y, S)
    with the inputs of row iw of the fine input tables; over the structure's globals
    ``core``, ``jac_core``, ``pjac_core`` and ``ops_tan``. Only the rows sm (the states
    that are not operator memory) of Ṡ are formed; operators add their force's tangent
    (``ops_tan``: the memory's rows of Sm, the S committed at the step's start;
    ∂p/∂θ = DP) and leave it in DF."""
    nf = gain.size
    nb = UB.shape[1]
    for j in range(nf):
        w[j] = gain[j] * UF[iw, j]
    for j in range(nb):
        w[nf + j] = UB[iw, j]
        w[nf + nb + j] = VB[iw, j]
    core(t, y, prm, dy, w, V)  # noqa: F821 - structure global
    if not with_s:
        return 0
    ns = S.shape[1]
    jac_core(t, y, prm, J, w, V)  # noqa: F821 - structure global
    pjac_core(t, y, prm, dy, G, w, V)  # noqa: F821 - structure global
    for ii in range(sm.size):
        i = sm[ii]
        for c in range(ns):
            dS[i, c] = 0.0
        for kk in range(sm.size):
            k = sm[kk]
            jik = J[i, k]
            if jik != 0.0:
                for c in range(ns):
                    dS[i, c] += jik * S[k, c]
        for c in range(ns):
            col = cols[c]
            if col >= 0:
                g = G[i, col]
                if mult[c] >= 0:
                    g *= UF[iw, mult[c]]
                dS[i, c] += g
    ops_tan(y, S, Sm, prm, w, DP, dS, DF, du)  # noqa: F821 - structure global
    return 0


def sens_project(y, S, prm, bidx, bpidx, bcol, with_s):
    """TEMPLATE: the projection of the inclusions' states onto their boxes
    [−P[bpidx], P[bpidx]] (Masing's w, Maxwell-slip's Z_i) and its derivative: a
    clipped state's sensitivity is that of the bound (+-1 in the column of a free
    half-width bcol >= 0, else 0)."""
    ns = S.shape[1]
    for j in range(bidx.size):
        i = bidx[j]
        eta = prm.P[bpidx[j]]
        sg = 0.0
        if y[i] > eta:
            y[i] = eta
            sg = 1.0
        elif y[i] < -eta:
            y[i] = -eta
            sg = -1.0
        if with_s and sg != 0.0:
            for c in range(ns):
                S[i, c] = 0.0
            if bcol[j] >= 0:
                S[i, bcol[j]] = sg
    return 0


def sens_simulate(y0, S0, prm, UF, UB, VB, gain, r, h, t0, n_out, cols, mult, oidx, oder,
                  nw, NT, nc, Yo, So, with_s, bidx, bpidx, bcol, sm, DP, DF, opk):
    """TEMPLATE: RK4 with ``r`` steps of h [s] per sample from y0 (and S0 = ∂y0/∂θ) at t0;
    output o at sample k: Yo[k, o] = y[oidx[o]] (oder[o] = 0), ẏ[oidx[o]] (1) or the
    force of connection oidx[o] (2, ``conn_core``; nc connections; opk: its operator's
    row of DF, or -1), and So[k, o, :] its derivative. UF/UB/VB rows 2·step + (0, 1, 2)
    are the inputs at a step's start, middle and end. Inclusions (states bidx with
    half-widths P[bpidx]): every stage state and every step's result projected onto the
    box (:func:`sens_project`), so a slipping state stays on its bound through the
    stages and the sensitivities are those of this projected scheme. Operators
    (DF.shape[0] of them): their memory is the one committed at the step's start
    through the stages (their force is a trial evaluation at the stage's input) and is
    advanced over the step's input segment once the step is taken (``ops_sens``, as the
    simulation's ``ops``), its derivative rows with it. Returns the samples computed
    (< n_out: non-finite)."""
    N = y0.size
    ns = S0.shape[1]
    y = y0.copy()
    S = S0.copy()
    w = np.zeros(nw)
    V = scratch(prm)  # noqa: F821 - structure global
    J = np.zeros((N, N))
    G = np.zeros((N, NT))
    k1 = np.empty(N)
    k2 = np.empty(N)
    k3 = np.empty(N)
    k4 = np.empty(N)
    K1 = np.zeros((N, ns))
    K2 = np.zeros((N, ns))
    K3 = np.zeros((N, ns))
    K4 = np.zeros((N, ns))
    yt = np.empty(N)
    St = S0.copy()
    Fc = np.zeros(max(nc, 1))
    FY = np.zeros((max(nc, 1), N))
    FT = np.zeros((max(nc, 1), NT))
    du = np.zeros(ns)
    du1 = np.zeros(ns)
    nops = DF.shape[0]
    y_old = np.empty(N)
    S_old = np.zeros((N, ns))
    w0 = np.zeros(nw)
    w1 = np.zeros(nw)
    nf = gain.size
    nb = UB.shape[1]
    no = oidx.size
    conn = False
    for o in range(no):
        if oder[o] == 2:
            conn = True
    for k in range(n_out):
        step0 = k * r
        sens_stage(t0 + step0 * h, y, S, S, 2 * step0, prm, UF, UB, VB, gain, cols, mult, k1, K1,
                   w, V, J, G, with_s, sm, DP, DF, du)
        if conn:
            conn_core(t0 + step0 * h, y, prm, w, V, Fc, FY, FT)  # noqa: F821 - structure global
        for o in range(no):
            i = oidx[o]
            if oder[o] == 2:
                Yo[k, o] = Fc[i]
                if with_s:
                    for c in range(ns):
                        if opk[i] >= 0:
                            So[k, o, c] = DF[opk[i], c]
                            continue
                        s = 0.0
                        for j in range(N):
                            s += FY[i, j] * S[j, c]
                        if cols[c] >= 0:
                            s += FT[i, cols[c]]
                        So[k, o, c] = s
            elif oder[o] == 0:
                Yo[k, o] = y[i]
                if with_s:
                    for c in range(ns):
                        So[k, o, c] = S[i, c]
            else:
                Yo[k, o] = k1[i]
                if with_s:
                    for c in range(ns):
                        So[k, o, c] = K1[i, c]
        ok = True
        for i in range(N):
            if not math.isfinite(y[i]):
                ok = False
        if not ok:
            return k
        if k == n_out - 1:
            break
        for s_ in range(r):
            st = step0 + s_
            t = t0 + st * h
            if s_ > 0:
                sens_stage(t, y, S, S, 2 * st, prm, UF, UB, VB, gain, cols, mult, k1, K1,
                           w, V, J, G, with_s, sm, DP, DF, du)
            if nops > 0:
                for i in range(N):
                    y_old[i] = y[i]
                if with_s:
                    for ii in range(sm.size):
                        for c in range(ns):
                            S_old[sm[ii], c] = S[sm[ii], c]
            for i in range(N):
                yt[i] = y[i] + 0.5 * h * k1[i]
            if with_s:
                for ii in range(sm.size):
                    i = sm[ii]
                    for c in range(ns):
                        St[i, c] = S[i, c] + 0.5 * h * K1[i, c]
            sens_project(yt, St, prm, bidx, bpidx, bcol, with_s)
            sens_stage(t + 0.5 * h, yt, St, S, 2 * st + 1, prm, UF, UB, VB, gain, cols, mult,
                       k2, K2, w, V, J, G, with_s, sm, DP, DF, du)
            for i in range(N):
                yt[i] = y[i] + 0.5 * h * k2[i]
            if with_s:
                for ii in range(sm.size):
                    i = sm[ii]
                    for c in range(ns):
                        St[i, c] = S[i, c] + 0.5 * h * K2[i, c]
            sens_project(yt, St, prm, bidx, bpidx, bcol, with_s)
            sens_stage(t + 0.5 * h, yt, St, S, 2 * st + 1, prm, UF, UB, VB, gain, cols, mult,
                       k3, K3, w, V, J, G, with_s, sm, DP, DF, du)
            for i in range(N):
                yt[i] = y[i] + h * k3[i]
            if with_s:
                for ii in range(sm.size):
                    i = sm[ii]
                    for c in range(ns):
                        St[i, c] = S[i, c] + h * K3[i, c]
            sens_project(yt, St, prm, bidx, bpidx, bcol, with_s)
            sens_stage(t + h, yt, St, S, 2 * st + 2, prm, UF, UB, VB, gain, cols, mult,
                       k4, K4, w, V, J, G, with_s, sm, DP, DF, du)
            for i in range(N):
                y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
            if with_s:
                for ii in range(sm.size):
                    i = sm[ii]
                    for c in range(ns):
                        S[i, c] += h / 6.0 * (K1[i, c] + 2.0 * K2[i, c] + 2.0 * K3[i, c]
                                              + K4[i, c])
            sens_project(y, S, prm, bidx, bpidx, bcol, with_s)
            if nops > 0:
                # the step's input segment: imposed positions at its start and end
                for j in range(nb):
                    w0[nf + j] = UB[2 * st, j]
                    w1[nf + j] = UB[2 * st + 2, j]
                ops_sens(y_old, y, S_old, S, w0, w1, h, prm, DP, du, du1, 1e-8,  # noqa: F821
                         with_s)
    return n_out


def _template_source() -> str:
    import inspect

    return "".join("\n\n@njit(cache=True)\n" + inspect.getsource(fn)
                   for fn in (sens_stage, sens_project, sens_simulate))


# -- experiments ------------------------------------------------------------------------------
@dataclass
class Experiment:
    """One measured record, sampled every ``dt`` [s] from ``t0`` [s].

    inputs: {force name or imposed-DOF name: samples (n,)} [N or m] (every force and
    imposed DOF of the assembly needs one); outputs: {channel: samples (n,)}, channels
    "<dof>.x" [m], "<dof>.v" [m/s], "<dof>.a" [m/s²], "<connection>.F" [N] (the force
    of a spring, damper or element) or an element state "<element>.<state>" (as
    Assembly.state_names()); sigma: noise level of each channel
    (a number for all, or {channel: σ}), in the channel's unit: the residuals are
    divided by it (default 1); interpolation of the inputs between samples: "linear",
    "hold" (zero-order hold), "cubic" (not-a-knot spline) or "fourier" (band-limited,
    the record one period of a periodic signal, as a multisine); substeps: RK4 steps
    per sample (accuracy of the model's integration, see the module docstring); skip:
    leading samples left out of the residuals (a transient)."""
    dt: float
    inputs: dict
    outputs: dict
    sigma: object = 1.0
    interpolation: str = "linear"
    substeps: int = 4
    skip: int = 0
    t0: float = 0.0
    name: str = "experiment"

    def __post_init__(self):
        if not (math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt must be in (0, inf) s (got {self.dt!r})")
        if self.interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)} "
                             f"(got {self.interpolation!r})")
        if int(self.substeps) != self.substeps or not 1 <= self.substeps <= 1000:
            raise ValueError(f"substeps must be an integer in [1, 1000] (got {self.substeps!r})")
        if not self.outputs:
            raise ValueError("outputs must name at least one measured channel")
        ns = {np.asarray(v).size for v in (*self.inputs.values(), *self.outputs.values())}
        if len(ns) != 1:
            raise ValueError(f"every input and output must have the same number of samples "
                             f"(got {sorted(ns)})")
        self.n = ns.pop()
        if self.n < 2:
            raise ValueError(f"an experiment needs at least 2 samples (got {self.n})")
        if not 0 <= int(self.skip) < self.n:
            raise ValueError(f"skip must be in [0, {self.n - 1}] (got {self.skip!r})")
        for k, v in (*self.inputs.items(), *self.outputs.items()):
            if not np.all(np.isfinite(np.asarray(v, float))):
                raise ValueError(f"samples of {k!r} must be finite")

    def sigma_of(self, ch) -> float:
        s = self.sigma.get(ch, 1.0) if isinstance(self.sigma, dict) else self.sigma
        s = float(s)
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"sigma of channel {ch!r} must be in (0, inf) (got {s!r})")
        return s


def fine_inputs(x, dt: float, r: int, how: str):
    """Samples x (n,) at spacing dt interpolated at the RK4 stage times: spacing
    dt/(2r), (n − 1)·2r + 1 values, and the derivative there (imposed velocities)."""
    x = np.asarray(x, float)
    n = x.size
    m = 2 * r
    tf = np.arange((n - 1) * m + 1) / m           # in units of dt
    if how == "fourier":
        # one period of a band-limited periodic signal: zero-padded spectrum
        X = np.fft.rfft(x)
        M = n * m
        if n % 2 == 0:
            X[-1] *= 0.5                            # the Nyquist line split over ±fs/2
        Xf = np.zeros(M // 2 + 1, complex)
        Xf[:X.size] = X
        xf = np.fft.irfft(Xf, n=M) * m
        kk = np.fft.rfftfreq(M, 1.0 / M)
        dxf = np.fft.irfft(Xf * 2j * np.pi * kk / n, n=M) * m / dt
        xf, dxf = np.append(xf, xf[:1]), np.append(dxf, dxf[:1])
        return xf[:tf.size], dxf[:tf.size]
    if how == "cubic":
        from scipy.interpolate import CubicSpline

        cs = CubicSpline(np.arange(n), x)
        return cs(tf), cs(tf, 1) / dt
    if how == "hold":
        i = np.minimum(np.floor(tf + 1e-9).astype(int), n - 1)
        return x[i], np.zeros(tf.size)
    xf = np.interp(tf, np.arange(n), x)
    i = np.minimum(np.floor(tf).astype(int), n - 2)
    return xf, (x[i + 1] - x[i]) / dt


# -- the free parameters ------------------------------------------------------------------------
@dataclass
class _Free:
    name: str
    kind: str            # mass, k, u0, pre, c, P, gain, init, op (an operator's weight)
    index: int           # into the Params field / P / forces / state
    col: int             # column of pjac_core's G (-1: initial state)
    mult: int = -1       # input whose value multiplies the column (gains)
    element: int = -1    # element of a P entry
    pname: str = ""
    exp: str | None = None   # initial state of this experiment only ("<state>0@<name>")
    value: float = 0.0       # an operator's linear parameter: its value and ∂p/∂θ
    dp: np.ndarray | None = None


def _resolve_free(asm, model, free):
    from ..systems.codegen import param_columns

    off = param_columns(model)
    dof = {d: i for i, d in enumerate(asm.dofs)}
    springs = {s.name: i for i, s in enumerate(asm.springs)}
    dampers = {d.name: i for i, d in enumerate(asm.dampers)}
    forces = {f.name: i for i, f in enumerate(asm.forces)}
    els = {e.name: i for i, e in enumerate(asm.elements)}
    states = {nm + "0": i for i, nm in enumerate(asm.state_names())}
    out = []
    for nm in free:
        obj, _, attr = str(nm).rpartition(".")
        base, at, exp = str(nm).partition("@")
        if at:
            if base not in states:
                raise ValueError(f"free parameter {nm!r}: only initial states take an "
                                 f"experiment (<state>0@<experiment name>); {base!r} is not "
                                 f"one of {', '.join(states)}")
            out.append(_Free(nm, "init", states[base], -1, exp=exp))
        elif nm in states:
            e_op = _element_prefix(nm, els)
            if e_op is not None and asm.elements[els[e_op]].element.kind == "operator":
                raise ValueError(f"free parameter {nm!r}: an operator's memory (stack of "
                                 f"input extrema) is not a continuous initial state; set "
                                 f"it with the element's x0 (e.g. state_after, "
                                 f"demagnetized_state) and free its weights, k0 or offset")
            out.append(_Free(nm, "init", states[nm], -1))
        elif obj in dof and attr == "m":
            out.append(_Free(nm, "mass", dof[obj], off["mass"] + dof[obj]))
        elif obj in springs and attr in ("k", "u0", "preload"):
            kind = "pre" if attr == "preload" else attr
            out.append(_Free(nm, kind, springs[obj], off[kind] + springs[obj]))
        elif obj in dampers and attr == "c":
            out.append(_Free(nm, "c", dampers[obj], off["c"] + dampers[obj]))
        elif obj in forces and attr == "gain":
            j = forces[obj]
            out.append(_Free(nm, "gain", j, off["fext"] + j, mult=j))
        elif _element_prefix(nm, els) and \
                asm.elements[els[_element_prefix(nm, els)]].element.kind == "operator":
            obj = _element_prefix(nm, els)
            e = els[obj]
            el = asm.elements[e].element
            p0 = model.el_struct[e][4]
            try:
                dirs = el.tangent_directions(nm[len(obj) + 1:])
            except ValueError as err:
                raise ValueError(str(err).replace(
                    f"free parameter {nm[len(obj) + 1:]!r}",
                    f"free parameter {nm!r} (element {obj!r})", 1)) from None
            for label, val, dp in dirs:
                out.append(_Free(f"{obj}.{label}", "op", p0, -1, element=e, pname=label,
                                 value=val, dp=dp))
        elif obj in els or _element_prefix(nm, els):
            if obj not in els or attr not in _p_names(asm.elements[els[obj]].element):
                # a sum's parameters are named <element>.part<i>.<name>
                obj = _element_prefix(nm, els) or obj
                attr = nm[len(obj) + 1:]
            e = els[obj]
            el = asm.elements[e].element
            names = _p_names(el)
            if attr not in names:
                raise ValueError(f"free parameter {nm!r}: element {obj!r} "
                                 f"({type(el).__name__}) has parameters {', '.join(names)}; "
                                 f"its initial states are {', '.join(n for n in states if n.startswith(obj + '.'))}")
            if el.pjac is None:
                raise ValueError(f"free parameter {nm!r}: {type(el).__name__} has no parameter "
                                 "Jacobian kernel (pjac): its parameters cannot be fitted here")
            if el.pjac_names is not None and attr not in el.pjac_names:
                raise ValueError(f"free parameter {nm!r}: {type(el).__name__} with a "
                                 f"user-supplied function reads only "
                                 f"{', '.join(el.pjac_names)} from its parameters; the "
                                 f"others live inside that function and cannot be fitted "
                                 f"here (fit_element fits any constructor keyword)")
            j = names.index(attr)
            p0 = model.el_struct[e][4]
            out.append(_Free(nm, "P", p0 + j, off["Pe"][e] + j, element=e, pname=attr))
        else:
            known = ([f"{d}.m" for d in dof] + [f"{s}.k" for s in springs]
                     + [f"{d}.c" for d in dampers] + [f"{f}.gain" for f in forces]
                     + list(states) + [f"{e}.<parameter>" for e in els])
            raise ValueError(f"unknown free parameter {nm!r}; known: {', '.join(known)}")
    if len({f.name for f in out}) != len(out):
        raise ValueError("free parameters must be distinct (an operator's weights freed as "
                         "'weights' already include every weights[i])")
    return out


def _p_names(el):
    return list(el.p_names()) if el.declares_p_layout() else []


def _element_prefix(nm, els):
    """The longest element name that ``nm`` starts with (followed by a dot), or None."""
    hits = [e for e in els if nm.startswith(e + ".")]
    return max(hits, key=len) if hits else None


# inclusions and operators: why fit_assembly refuses them, and what to use instead
_NOT_SMOOTH = ("{law} (element {name!r}) is {kind}: {what}, so its output is not a "
               "differentiable function of the parameters along the Runge-Kutta stages the "
               "forward sensitivity equations follow (no pjac kernel, no sensitivity "
               "equations); fit_assembly supports smooth (ODE) laws, inclusions with a box "
               "set by their parameters (Masing, MaxwellSlip) and operators with tangent "
               "kernels (Preisach, PrandtlIshlinskii, Relay) only. Fit the law to force "
               "measured under imposed displacement with hystmech.identify.fit_element (or a "
               "dedicated fitter: fit_masing, fit_preisach) or `hystmech identify`, then fit "
               "the rest of the assembly with the law's parameters fixed")


def refuse_non_smooth(assembly):
    """ValueError naming the first inclusion or operator of ``assembly`` (see
    :data:`_NOT_SMOOTH`)."""
    for e in assembly.elements:
        el = e.element
        if el.kind == "smooth" or (el.kind == "inclusion" and el.box_p is not None
                                   and el.pjac is not None and not el.parts):
            continue
        if el.kind == "operator" and el.force_tan is not None and not el.parts \
                and el.zero_direction is not None:
            continue
        if el.kind == "operator" and el.parts:
            raise ValueError(f"{type(el).__name__} (element {e.name!r}) is a sum with an "
                             f"operator part: fit_assembly differentiates operators "
                             f"(Preisach, PrandtlIshlinskii, Relay) as elements of their "
                             f"own; put each part in the assembly as its own element "
                             f"between the same nodes")
        what = ("its state is confined to a box by a projection (a stop/play operator), "
                "whose output has kinks where the state reaches the box"
                if el.kind == "inclusion" else
                "a rate-independent operator with discrete memory (relays that switch at "
                "thresholds), whose output jumps")
        raise ValueError(_NOT_SMOOTH.format(law=type(el).__name__, name=e.name,
                                            kind=f"an {el.kind}", what=what))


# -- the problem -------------------------------------------------------------------------------
class OutputErrorProblem:
    """Residuals and exact Jacobian of the output error of ``assembly`` over
    ``experiments`` as functions of the free parameters (names as in
    :func:`fit_assembly`)."""

    def __init__(self, assembly, free, experiments):
        from ..systems.codegen import build_sensitivity, param_columns
        from ..systems.model import Model

        refuse_non_smooth(assembly)
        if isinstance(experiments, Experiment):
            experiments = [experiments]
        if not experiments:
            raise ValueError("experiments must hold at least one Experiment")
        self.asm = assembly
        self.model = m = Model(assembly)
        self.free = _resolve_free(assembly, m, list(free))
        if not self.free:
            raise ValueError("free must name at least one parameter")
        self.names = [f.name for f in self.free]
        kern = {}
        for i, e in enumerate(assembly.elements):
            el = e.element
            kern[f"force_{i}"] = el.force
            if el.kind == "operator":
                kern[f"advance_{i}"] = el.advance
                kern[f"ftan_{i}"] = el.force_tan
                kern[f"atan_{i}"] = el.advance_tan
                continue
            kern[f"rate_{i}"] = el.rate
            if el.jac is None:
                raise ValueError(f"element {e.name!r} ({type(el).__name__}) has no jac kernel")
            kern[f"jac_{i}"] = el.jac
            if el.pjac is not None:
                kern[f"pjac_{i}"] = el.pjac
        # the generic engine's sensitivity loop when the model runs there (shipped laws,
        # operators, a user's numba laws through their C wrappers: nothing compiled for a
        # new structure), else the structure's own generated sensitivity module
        # (methods/engine.py for_sensitivity)
        eng = _engine.for_sensitivity(m, _template_source(), (__name__,))
        self.code = eng.mod if eng is not None else \
            build_sensitivity(m, kern, _template_source(), (__name__,)).mod
        self.NT = param_columns(m)["n"]
        self.nconn = len(assembly.springs) + len(assembly.dampers) + len(assembly.elements)
        # inclusions: their states' boxes [−P[bpidx], P[bpidx]] (sens_project)
        bidx, bpidx, bcol = [], [], []
        pfree = {f.index: c for c, f in enumerate(self.free) if f.kind == "P"}
        for e, ae in enumerate(assembly.elements):
            if ae.element.kind != "inclusion":
                continue
            o, p0 = m.el_struct[e][2], m.el_struct[e][4]
            for j, q in enumerate(ae.element.box_p):
                bidx.append(o + j)
                bpidx.append(p0 + int(q))
                bcol.append(pfree.get(p0 + int(q), -1))
        self.bidx = np.array(bidx, dtype=np.int64)
        self.bpidx = np.array(bpidx, dtype=np.int64)
        self.bcol = np.array(bcol, dtype=np.int64)
        self.cols = np.array([f.col for f in self.free], dtype=np.int64)
        # operators: the states that are not their memory (sm), ∂P/∂θ (DP: each
        # operator's rows hold its zero direction unless the column is one of its own
        # parameters), the row of each operator among the connections (opk)
        ops = [e for e, ae in enumerate(assembly.elements) if ae.element.kind == "operator"]
        self.ops = ops
        nP = m.prm.P.size
        mem = np.zeros(m.layout.N, bool)
        for e in ops:
            o, n = m.el_struct[e][2], m.el_struct[e][3]
            mem[o:o + n] = True
        self.sm = np.flatnonzero(~mem).astype(np.int64)
        p_ = len(self.free)
        from ..limits import check_memory

        check_memory(8.0 * p_ * nP * (1 if ops else 0),
                     f"the parameter directions of {p_} free parameters over {nP} "
                     f"operator table entries", "free fewer weights (e.g. weights[i])")
        self.DP = np.zeros((p_, nP if ops else 0))
        self.zero_dir = {}
        for e in ops:
            p0, p1 = m.el_struct[e][4], m.el_struct[e][5]
            z = assembly.elements[e].element.zero_direction()
            self.zero_dir[e] = z
            self.DP[:, p0:p1] = z
        for c, f in enumerate(self.free):
            if f.kind == "op":
                p0, p1 = m.el_struct[f.element][4], m.el_struct[f.element][5]
                self.DP[c, p0:p1] = f.dp
        conn0 = len(assembly.springs) + len(assembly.dampers)
        self.opk = np.full(conn0 + len(assembly.elements), -1, np.int64)
        for k, e in enumerate(ops):
            self.opk[conn0 + e] = k
        self.mult = np.array([f.mult for f in self.free], dtype=np.int64)
        self.theta0 = self.values_of(assembly)
        names = [x.name for x in experiments]
        for f in self.free:
            if f.exp is not None and names.count(f.exp) != 1:
                raise ValueError(f"free parameter {f.name!r}: the experiments must include "
                                 f"exactly one named {f.exp!r} (names: {', '.join(names)})")
        self.exps = [self._prepare(x) for x in experiments]
        self.n_sim = 0

    def values_of(self, asm=None) -> np.ndarray:
        """The free parameters' values in the assembly (gains: 1)."""
        asm = asm or self.asm
        y0 = asm.initial_state()
        P = self.model.prm.P
        out = []
        for f in self.free:
            out.append({"mass": lambda: list(asm.dofs.values())[f.index].mass,
                        "k": lambda: asm.springs[f.index].k,
                        "u0": lambda: asm.springs[f.index].u0,
                        "pre": lambda: asm.springs[f.index].preload,
                        "c": lambda: asm.dampers[f.index].c,
                        "P": lambda: P[f.index],
                        "gain": lambda: 1.0,
                        "init": lambda: y0[f.index],
                        "op": lambda: f.value}[f.kind]())
        return np.array(out, float)

    def _prepare(self, x: Experiment):
        asm, m = self.asm, self.model
        r = int(x.substeps)
        nf, nb = len(asm.forces), len(asm.imposed)
        nfine = (x.n - 1) * 2 * r + 1
        UF = np.zeros((nfine, nf))
        UB = np.zeros((nfine, nb))
        VB = np.zeros((nfine, nb))
        need = [f.name for f in asm.forces] + list(asm.imposed)
        unknown = set(x.inputs) - set(need)
        if unknown:
            raise ValueError(f"experiment {x.name!r}: inputs {sorted(unknown)} are not forces "
                             f"or imposed DOFs of the assembly ({', '.join(need)})")
        for j, f in enumerate(asm.forces):
            if f.name not in x.inputs:
                raise ValueError(f"experiment {x.name!r}: no samples for force {f.name!r}")
            UF[:, j] = fine_inputs(x.inputs[f.name], x.dt, r, x.interpolation)[0]
        for j, nm in enumerate(asm.imposed):
            if nm not in x.inputs:
                raise ValueError(f"experiment {x.name!r}: no samples for imposed DOF {nm!r}")
            UB[:, j], VB[:, j] = fine_inputs(x.inputs[nm], x.dt, r, x.interpolation)
        from ..systems.codegen import connection_names

        states = asm.state_names()
        conns = connection_names(self.model)
        nq = len(asm.dofs)
        oidx, oder, meas, sig, chans = [], [], [], [], []
        for ch, v in x.outputs.items():
            obj, _, q = ch.rpartition(".")
            if obj in asm.dofs and q in ("x", "v", "a"):
                i = list(asm.dofs).index(obj)
                oidx.append(i if q == "x" else nq + i)
                oder.append(1 if q == "a" else 0)
            elif ch in states:
                oidx.append(states.index(ch))
                oder.append(0)
            elif obj in conns and q == "F":
                oidx.append(conns.index(obj))
                oder.append(2)
            else:
                raise ValueError(f"experiment {x.name!r}: unknown output channel {ch!r}; "
                                 f"channels: <dof>.x, <dof>.v, <dof>.a, <connection>.F or "
                                 f"{', '.join(states[2 * nq:])}")
            meas.append(np.asarray(v, float))
            sig.append(x.sigma_of(ch))
            chans.append(ch)
        return dict(x=x, r=r, UF=UF, UB=UB, VB=VB, oidx=np.array(oidx, np.int64),
                    oder=np.array(oder, np.int64), meas=np.stack(meas, 1),
                    sig=np.array(sig), chans=chans)

    # -- parameters into the compiled model's numbers --
    def check(self, theta):
        """None when the laws and the assembly accept θ, else the reason (a string)."""
        theta = np.asarray(theta, float)
        if not np.all(np.isfinite(theta)):
            return "non-finite parameter"
        changes = {}
        for f, v in zip(self.free, theta):
            if f.kind == "mass" and not v > 0:
                return f"{f.name} must be > 0"
            if f.kind == "c" and v < 0:
                return f"{f.name} must be >= 0"
            if f.kind == "op":
                continue                # weights, k0, offset: any real (Preisach, eq. (7))
            if f.kind == "P":
                if f.index in self.bpidx and not v > 0:
                    return f"{f.name} (an inclusion's box half-width) must be > 0"
                changes.setdefault(f.element, {})[f.pname] = v
        for e, ch in changes.items():
            el = self.asm.elements[e].element
            if all(k in el.params for k in ch):
                try:
                    type(el)(**{**el.params, **ch})
                except (ValueError, TypeError) as err:
                    return str(err)
        return None

    def numbers(self, theta, exp_name=None):
        """(Params, y0, S0, gains) at θ for the experiment called ``exp_name`` (its own
        initial states "<state>0@<name>" apply on top of the shared ones)."""
        prm = self.model.prm
        fields = {k: np.array(getattr(prm, k), float, copy=True)
                  for k in ("mass", "k", "u0", "pre", "c", "P")}
        y0 = self.asm.initial_state().astype(float)
        gain = np.ones(len(self.asm.forces))
        S0 = np.zeros((y0.size, len(self.free)))
        for c, (f, v) in enumerate(zip(self.free, theta)):
            if f.kind == "init":
                if f.exp is None:
                    y0[f.index] = v
                    S0[f.index, c] = 1.0
            elif f.kind == "gain":
                gain[f.index] = v
            elif f.kind == "op":
                # p is affine in the operator's weights, k0, offset
                p0, p1 = self.model.el_struct[f.element][4], self.model.el_struct[f.element][5]
                fields["P"][p0:p1] += (v - f.value) * (f.dp - self.zero_dir[f.element])
            else:
                fields[f.kind][f.index] = v
        for c, (f, v) in enumerate(zip(self.free, theta)):
            if f.kind == "init" and f.exp is not None and f.exp == exp_name:
                S0[f.index, :] = 0.0       # the experiment's own value replaces a shared one
                y0[f.index] = v
                S0[f.index, c] = 1.0
        for e in self.ops:
            # the memory's prefix sums belong to the weights: recomputed with them
            o, n, p0, p1 = (self.model.el_struct[e][k] for k in (2, 3, 4, 5))
            x = y0[o:o + n].copy()
            Se = np.zeros((n, S0.shape[1]))
            self.asm.elements[e].element.resum(x, fields["P"][p0:p1], Se,
                                               np.ascontiguousarray(self.DP[:, p0:p1]))
            y0[o:o + n] = x
            S0[o:o + n] = Se
        return prm._replace(**fields), y0, S0, gain

    def simulate(self, theta, exp_index: int = 0, with_s: bool = False, x=None):
        """(Y (n, channels), S (n, channels, p) or None) of experiment ``exp_index`` (or of
        another Experiment ``x`` with the same channels) at θ."""
        d = self.exps[exp_index] if x is None else self._prepare(x)
        prm, y0, S0, gain = self.numbers(np.asarray(theta, float), d["x"].name)
        xe = d["x"]
        n, no = xe.n, d["oidx"].size
        p = len(self.free)
        Yo = np.full((n, no), np.nan)
        So = np.zeros((n, no, p) if with_s else (1, 1, p))
        S0c = S0 if with_s else np.zeros((y0.size, 0))
        So_c = So if with_s else np.zeros((1, 1, 0))
        self.n_sim += 1
        DP = self.DP if with_s else np.zeros((0, self.DP.shape[1]))
        DF = np.zeros((len(self.ops), p if with_s else 0))
        self.code.sens_simulate(y0, S0c, prm, d["UF"], d["UB"], d["VB"], gain, d["r"],
                                xe.dt / d["r"], xe.t0, n, self.cols, self.mult, d["oidx"],
                                d["oder"], self.model.layout.n_work, self.NT, self.nconn,
                                Yo, So_c, with_s, self.bidx, self.bpidx, self.bcol,
                                self.sm, DP, DF, self.opk)
        return Yo, (So if with_s else None)

    def residuals(self, theta, with_jac: bool = False):
        """Weighted residuals (ŷ − y)/σ of every experiment concatenated (and ∂/∂θ)."""
        R, JJ = [], []
        for i, d in enumerate(self.exps):
            Y, S = self.simulate(theta, i, with_jac)
            k0 = d["x"].skip
            R.append(((Y[k0:] - d["meas"][k0:]) / d["sig"]).T.ravel())
            if with_jac:
                JJ.append((S[k0:] / d["sig"][None, :, None]).transpose(1, 0, 2)
                          .reshape(-1, len(self.free)))
        r = np.concatenate(R)
        return (r, np.concatenate(JJ)) if with_jac else r

    def inputs_aligned(self):
        """The first input of each experiment beside each of its residuals (for the
        input–residual cross-correlation test), or None without inputs."""
        out = []
        for d in self.exps:
            x = d["x"]
            if not x.inputs:
                return None
            u = np.asarray(next(iter(x.inputs.values())), float)[x.skip:]
            out += [u] * len(d["chans"])
        return np.concatenate(out)

    def segments(self):
        return [d["x"].n - d["x"].skip for d in self.exps for _ in d["chans"]]


# -- the fit -------------------------------------------------------------------------------------
@dataclass
class AssemblyFit:
    """Result of :func:`fit_assembly`: values {name: θ}, cost ½Σr², the weighted RMS of
    the residuals, the uncertainty (hystmech.identify.uncertainty.Uncertainty or None),
    starts tried / skipped as infeasible, evaluations, CPU time [s], the problem."""
    names: list
    theta: np.ndarray
    cost: float
    rms: float
    uncertainty: object
    starts: int
    skipped: int
    nfev: int
    njev: int
    cpu: float
    success: bool
    message: str
    problem: OutputErrorProblem = field(repr=False)
    history: list = field(default_factory=list, repr=False)

    @property
    def values(self) -> dict:
        return dict(zip(self.names, map(float, self.theta)))

    def intervals(self) -> dict:
        if self.uncertainty is None:
            return {}
        return self.uncertainty.intervals()

    def summary(self) -> str:
        lines = [f"output-error fit: {len(self.names)} parameters, cost {self.cost:.6g}, "
                 f"weighted RMS {self.rms:.4g}, {self.nfev} simulations + {self.njev} with "
                 f"sensitivities, {self.cpu:.1f} s CPU; starts {self.starts} "
                 f"({self.skipped} infeasible skipped)"]
        ci = self.intervals()
        se = self.uncertainty.stderr() if self.uncertainty is not None else {}
        for k, v in self.values.items():
            s = f"  {k:>24s} = {v:.8g}"
            if k in ci:
                s += f"   SE {se.get(k, float('nan')):.3g}, 95 % [{ci[k][0]:.8g}, {ci[k][1]:.8g}]"
            lines.append(s)
        if self.uncertainty is not None and hasattr(self.uncertainty, "warnings"):
            lines += [f"  warning: {w}" for w in self.uncertainty.warnings]
        return "\n".join(lines)


def _allowed(f) -> str:
    return {"mass": "(0, inf) kg", "c": "[0, inf) N s/m",
            "op": "any real: an operator's weights, k0 and offset (stop-type laws have "
                  "negative weights)"}.get(f.kind, "the law's range")


def _uncertainty(problem, theta, bounds, method):
    from .uncertainty import analyse

    r, J = problem.residuals(theta, True)
    return analyse(r, J, names=problem.names, values=theta,
                   bounds=dict(zip(problem.names, zip(*bounds))) if bounds is not None else None,
                   method=method, segments=problem.segments(), inputs=problem.inputs_aligned(),
                   warn=True, what="assembly fit")


def fit_assembly(assembly, free, experiments, *, x0=None, bounds=None, starts: int = 0,
                 seed: int = 0, spread: float = 0.3, uncertainty: str = "ar",
                 ftol: float = 1e-10, xtol: float = 1e-10, max_nfev: int = 200,
                 progress=None) -> AssemblyFit:
    """Output-error fit of the free parameters of ``assembly`` to ``experiments``.

    free: names of the free parameters: "<dof>.m" [kg], "<spring>.k" [N/m],
    "<spring>.u0" [m], "<spring>.preload" [N], "<damper>.c" [N s/m],
    "<element>.<parameter>" (the law's p_layout names, e.g. "hysteresis.A"; an
    operator's "<element>.weights" (every weight, named weights[0], weights[1], ...),
    "<element>.weights[i]", "<element>.k0", "<element>.offset"),
    "<state>0" for an initial state (e.g. "y.x0", "hysteresis.z0"; shared by every
    experiment) or "<state>0@<experiment name>" (that experiment's own), "<force>.gain" (a
    factor on the measured force); x0: initial values (default: the assembly's);
    bounds: (lo, hi) sequences or {name: (lo, hi)} (default unbounded); starts: extra
    random starts, x0·(1 + spread·N(0, 1)) clipped into the bounds, those the laws
    refuse skipped; uncertainty: the covariance method of
    :func:`hystmech.identify.uncertainty.analyse` ("ar", "hac", "classic", "bootstrap").
    Returns an :class:`AssemblyFit`."""
    from scipy.optimize import least_squares

    t_cpu = time.process_time()
    prob = experiments if isinstance(experiments, OutputErrorProblem) else \
        OutputErrorProblem(assembly, free, experiments)
    p = len(prob.names)
    th0 = prob.theta0.copy() if x0 is None else np.asarray(
        [x0[k] for k in prob.names] if isinstance(x0, dict) else x0, float)
    if th0.size != p:
        raise ValueError(f"x0 must have {p} values (got {th0.size})")
    lo, hi = np.full(p, -np.inf), np.full(p, np.inf)
    if bounds is not None:
        if isinstance(bounds, dict):
            for k, (a, b) in bounds.items():
                if k not in prob.names:
                    raise ValueError(f"bounds: {k!r} is not a free parameter")
                i = prob.names.index(k)
                lo[i], hi[i] = a, b
        else:
            lo, hi = (np.broadcast_to(np.asarray(b, float), (p,)).copy() for b in bounds)
    for i, k in enumerate(prob.names):
        if not lo[i] < hi[i]:       # (NaN fails too)
            raise ValueError(f"bounds of {k} must be an interval lo < hi within its allowed "
                             f"range ({_allowed(prob.free[i])}) (got ({lo[i]!r}, {hi[i]!r}))")
        if not lo[i] <= th0[i] <= hi[i]:
            raise ValueError(f"x0 of {k} = {th0[i]!r} must lie inside its bounds "
                             f"[{lo[i]!r}, {hi[i]!r}]")
    why = prob.check(th0)
    if why is not None:
        raise ValueError(f"x0 is not a valid parameter set: {why}")
    scale = np.where(th0 != 0, np.abs(th0), 1.0)

    def fun(z):
        th = z * scale
        if prob.check(th) is not None:
            return np.full(n_res, np.inf)
        return prob.residuals(th)

    state = {"start": 0, "njac": 0}

    def jac(z):
        th = z * scale
        r, J = prob.residuals(th, True)
        state["njac"] += 1
        if progress:
            progress(min(0.99, (state["start"] + state["njac"] / max_nfev) / len(cands)),
                     f"start {state['start'] + 1}/{len(cands)}: iteration {state['njac']}, "
                     f"cost {0.5 * float(r @ r):.6g}")
        return J * scale

    n_res = prob.residuals(th0).size
    rng = np.random.default_rng(seed)
    cands = [th0]
    for _ in range(int(starts)):
        c = th0 * (1.0 + spread * rng.standard_normal(p))
        cands.append(np.clip(c, np.where(np.isfinite(lo), lo, c), np.where(np.isfinite(hi), hi, c)))
    best, skipped, nfev, njev, hist = None, 0, 0, 0, []
    for i, c in enumerate(cands):
        if prob.check(c) is not None or not np.all(np.isfinite(fun(c / scale))):
            skipped += 1
            continue
        state.update(start=i, njac=0)
        res = least_squares(fun, c / scale, jac=jac, bounds=(lo / scale, hi / scale),
                            method="trf", x_scale="jac", ftol=ftol, xtol=xtol, gtol=1e-12,
                            max_nfev=max_nfev)
        nfev += res.nfev
        njev += res.njev
        hist.append((c, res.x * scale, res.cost))
        if best is None or res.cost < best.cost:
            best = res
    if best is None:
        raise ValueError("every start was refused by the laws' constraints; give a valid x0")
    theta = best.x * scale
    unc = _uncertainty(prob, theta, (lo, hi), uncertainty) if uncertainty else None
    r = prob.residuals(theta)
    return AssemblyFit(prob.names, theta, float(best.cost), float(np.sqrt(np.mean(r * r))),
                       unc, len(cands), skipped, nfev, njev, time.process_time() - t_cpu,
                       bool(best.success), str(best.message), prob, hist)
