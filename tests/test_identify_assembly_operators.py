"""Operators (Preisach, Prandtl-Ishlinskii) in fit_assembly: their weights, k0 and offset
free, with exact forward sensitivities.

Truth: a rig measured as a structure (a mass on a spring, a damper and the operator,
driven by a force, its displacement measured) integrated here in plain numpy by the
classical RK4 scheme (the operator's memory committed at each step's end, its force a
trial evaluation at the stage's input, as the simulation's trial/commit protocol), with
operators written here from their definitions, not hystmech's code:
* relays one by one (Manfredo et al. (2023), eqs. (4)-(7)): a ±1 array switched by the
  committed step-end inputs, M = offset + k0·u + Σ w_i R_i;
* Prandtl-Ishlinskii: the same, with the relays every h along each play line r = r_j
  (weights c_j·h/2), as the PrandtlIshlinskii docstring defines the operator;
* the continuous Preisach operator (density constant on each cell): the Everett function
  as the area integral of the density over {β <= a1 < a2 <= α} cell by cell (a product
  of interval overlaps off the diagonal, a triangle on it) and the output by Mayergoyz's
  sum over the dominant alternating extrema of the history (wiping-out applied to the
  raw history here).
(1) sensitivities vs fourth-order central differences of those independent runs;
(2) recovery of the weights within 0.1 % from clean independent data;
(3) bad input: ValueError naming the parameter and what is allowed.
"""
import numpy as np
import pytest

from hystmech.components.preisach import Preisach, PrandtlIshlinskii, Relay
from hystmech.identify.assembly import Experiment, OutputErrorProblem, fit_assembly
from hystmech.systems import Assembly
from hystmech.systems.assembly import GROUND

FS = 400.0
NS = 241
T = np.arange(NS) / FS
R = 8                                   # RK4 steps per sample
M, K, C = 1.0, 400.0, 0.8
FREQS = np.array([1.3, 2.9, 4.1, 6.7])
PH = np.array([0.3, 1.9, 4.0, 2.2])
MM = 0.01                               # the Preisach triangle's half-size [m]


def force_in(t, amp=1.0):
    # a multisine whose envelope decays: turning points at many levels of the triangle
    t = np.asarray(t)
    env = 1.4 * np.exp(-1.2 * t) + 0.25
    return amp * env * np.sum(np.cos(2 * np.pi * FREQS * t[..., None] + PH), axis=-1)


def one_dof(law):
    a = Assembly()
    a.add_dof("m", mass=M)
    a.add_spring("m", GROUND, k=K, name="s")
    a.add_damper("m", GROUND, c=C, name="d")
    a.add_element("law", law, "m", GROUND)
    a.add_force("m", 0.0, name="u")
    return a


# -- independent operators ---------------------------------------------------------------
class RelayArray:
    """Relays (a1_i, a2_i) with weights w_i, states ±1 (eqs. (4)-(7))."""

    def __init__(self, a1, a2, w, k0, offset, R0):
        self.a1, self.a2, self.w = a1, a2, np.asarray(w, float)
        self.k0, self.offset, self.R = k0, offset, np.asarray(R0, float).copy()

    def out(self, u):
        Rt = np.where(u >= self.a2, 1.0, np.where(u <= self.a1, -1.0, self.R))
        return self.offset + self.k0 * u + self.w @ Rt

    def commit(self, u0, u1):
        for u in (u0, u1):          # a monotone segment: its end values switch the relays
            self.R = np.where(u >= self.a2, 1.0, np.where(u <= self.a1, -1.0, self.R))


def pi_relays(r, c, h, u_bound):
    a1, a2, w = [], [], []
    for rj, cj in zip(r, c):
        n = int(np.ceil((u_bound + rj) / h))
        s = h * (np.arange(-n, n) + 0.5)
        a1.append(s - rj)
        a2.append(s + rj)
        w.append(np.full(s.size, 0.5 * cj * h))
    a1, a2, w = map(np.concatenate, (a1, a2, w))
    # the plays start at 0 with u = 0: relays below the line s = 0 on, above it off
    R0 = np.where(0.5 * (a1 + a2) < 0.0, 1.0, -1.0)
    return a1, a2, w, R0


class ContinuousPreisach:
    """Density constant on the cells of the triangle cut into n levels on [−m, m]; cell
    (i, j), i <= j, holds weight w (its integral)."""

    def __init__(self, w, m, n, k0, offset):
        self.t = -m + 2.0 * m / n * np.arange(n + 1)
        h = 2.0 * m / n
        self.i, self.j = np.triu_indices(n)
        self.rho = np.where(self.i == self.j, np.asarray(w, float) / (0.5 * h * h),
                            np.asarray(w, float) / (h * h))
        self.W = float(np.sum(w))
        self.k0, self.offset = k0, offset
        self.stack = [-np.inf]          # dominant extrema from negative saturation

    def E(self, al, be):
        t, i, j = self.t, self.i, self.j
        if al <= be:
            return 0.0
        lo_a1 = np.clip(t[i + 1] - np.maximum(be, t[i]), 0.0, None)       # a1 in cell i, >= β
        hi_a2 = np.clip(np.minimum(al, t[j + 1]) - t[j], 0.0, None)       # a2 in cell j, <= α
        tri = 0.5 * np.clip(np.minimum(al, t[i + 1]) - np.maximum(be, t[i]), 0.0, None) ** 2
        area = np.where(i == j, tri, lo_a1 * hi_a2)
        return float(self.rho @ area)

    @staticmethod
    def add(stack, v):
        st = list(stack)
        if v == st[-1]:
            return st
        if len(st) >= 2 and (st[-1] - st[-2]) * (v - st[-1]) >= 0:
            st.pop()                    # the last value was no turning point
        rising = v > st[-1]
        while len(st) >= 3 and (v >= st[-2] if rising else v <= st[-2]):
            del st[-2:]                 # wiping-out of the enclosed pair
        st.append(v)
        return st

    def term(self, st, k):
        # st alternates min (−inf), max, min, ...: +E(max, min before), −E(max before, min)
        return self.E(st[k], st[k - 1]) if k % 2 else -self.E(st[k - 1], st[k])

    def out(self, u):
        st = self.add(self.stack, u)
        q = len(st) - 1                 # add() keeps a prefix of the stack and appends u
        s = self.pre[q - 1] + (self.term(st, q) if q >= 1 else 0.0)
        return self.offset + self.k0 * u - self.W + 2.0 * s

    pre = [0.0]

    def commit(self, u0, u1):
        for u in (u0, u1):
            if u != self.stack[-1]:
                self.stack = self.add(self.stack, u)
        self.pre = [0.0]                # Mayergoyz's sum over the stack's first k entries
        for k in range(1, len(self.stack)):
            self.pre.append(self.pre[-1] + self.term(self.stack, k))


def rk4_run(op, theta_rig, amp=1.5, substeps=R, ns=NS):
    """Plain RK4 of m ẍ = f(t) − k x − c ẋ − M[x], f linear between the samples;
    returns (x, M) at the first ns samples."""
    m, k, c = theta_rig
    fs = force_in(T, amp)
    h = 1.0 / FS / substeps
    x, v = 0.0, 0.0
    # (the operator's memory as built: its first commit is the first step's segment)
    X, F = np.empty(ns), np.empty(ns)

    def acc(t, x, v):
        return (np.interp(t * FS, np.arange(NS), fs) - k * x - c * v - op.out(x)) / m
    for n in range(NS):
        X[n], F[n] = x, op.out(x)
        if n == ns - 1:
            break
        for s in range(substeps):
            t = n / FS + s * h
            k1x, k1v = v, acc(t, x, v)
            k2x, k2v = v + 0.5 * h * k1v, acc(t + 0.5 * h, x + 0.5 * h * k1x, v + 0.5 * h * k1v)
            k3x, k3v = v + 0.5 * h * k2v, acc(t + 0.5 * h, x + 0.5 * h * k2x, v + 0.5 * h * k2v)
            k4x, k4v = v + h * k3v, acc(t + h, x + h * k3x, v + h * k3v)
            x0 = x
            x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
            v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            op.commit(x0, x)
    return X, F


# -- the cases: the law as hystmech builds it, and its independent twin ---------------------
def kern(r, s):
    # a stop-type (dissipative) law: negative weights, reversible slope k0 above the
    # branches' slopes
    return -2e4 * (1.0 + 30.0 * r + 20.0 * s)


def case(name, w=None, k0=None, offset=0.0):
    if name == "continuous":
        law = Preisach.from_kernel(kern, MM, 3, continuous=True, k0=400.0, max_depth=24)
        w = law.weights if w is None else w
        k0 = 400.0 if k0 is None else k0
        law = Preisach(a1=law.a1, a2=law.a2, weights=w, k0=k0, offset=offset,
                       grid=(MM, 3), max_depth=24)
        return law, lambda: ContinuousPreisach(w, MM, 3, k0, offset)
    if name == "relays":
        base = Preisach.from_kernel(kern, MM, 3, k0=400.0, max_depth=24)
        w = base.weights if w is None else w
        k0 = 400.0 if k0 is None else k0
        law = Preisach(a1=base.a1, a2=base.a2, weights=w, k0=k0, offset=offset, max_depth=24)
        return law, lambda: RelayArray(base.a1, base.a2, w, k0, offset, -np.ones(w.size))
    if name == "prandtl-ishlinskii":
        r, h, ub = np.array([1e-3, 3e-3]), 2e-4, 0.02
        c = np.array([-200.0, -100.0]) if w is None else w
        k0 = 300.0 if k0 is None else k0
        law = PrandtlIshlinskii(r=r, weights=c, h=h, u_bound=ub, k0=k0, offset=offset,
                                max_depth=24)

        def ref():
            a1, a2, ww, R0 = pi_relays(r, c, h, ub)
            return RelayArray(a1, a2, ww, k0, offset, R0)
        return law, ref
    if name == "relay":             # no weight: its rig's other parameters free
        return (Relay(a1=-2e-3, a2=3e-3),
                lambda: RelayArray(np.array([-2e-3]), np.array([3e-3]), [1.0], 0.0, 0.0, [-1.0]))
    raise KeyError(name)


# (k0 and a spring to the same ground would be one stiffness: the damper instead)
FREE = {"continuous": ["law.weights", "law.k0", "law.offset", "d.c"],
        "relays": ["law.weights[1]", "law.weights[4]", "law.k0", "s.k"],
        "prandtl-ishlinskii": ["law.weights", "law.k0", "law.offset", "m.m"],
        "relay": ["m.m", "s.k", "d.c"]}


def ref_of(name, theta, names, ns=NS):
    """Independent run at θ (named as fit_assembly names them)."""
    law, mk = case(name)
    vals = dict(zip(names, theta))
    if name == "relay":
        return rk4_run(mk(), (vals["m.m"], vals["s.k"], vals["d.c"]), ns=ns)
    w = np.array(law.c if name == "prandtl-ishlinskii" else law.weights, float)
    for i in range(w.size):
        w[i] = vals.get(f"law.weights[{i}]", w[i])
    k0 = vals.get("law.k0", float(law.p[4]))
    _, mk = case(name, w=w, k0=k0, offset=vals.get("law.offset", 0.0))
    return rk4_run(mk(), (vals.get("m.m", M), vals.get("s.k", K), vals.get("d.c", C)), ns=ns)


def experiment(X, F=None):
    out = {"m.x": X} if F is None else {"m.x": X, "law.F": F}
    return Experiment(dt=1 / FS, inputs={"u": force_in(T, 1.5)}, outputs=out, substeps=R,
                      interpolation="linear")


@pytest.mark.parametrize("name", list(FREE))
def test_operator_sensitivities_match_central_differences_of_independent_runs(name):
    """Our RK4 run equals the independent one, and its forward sensitivities (of the
    displacement and of the operator's force) equal the central differences of the
    independent runs in every free parameter (truncation O(step²), below 1e-9 at these
    steps; rounding ~1 ulp over the step dominates): the output is linear in the weights
    along a fixed input path, and the path's own dependence (the memory's extrema moving
    with θ, the force's slope in u) is carried through the memory update."""
    law, mk = case(name)
    X, F = rk4_run(mk(), (M, K, C))
    # a rig measured as a structure: the response is in the operator's range
    assert 0.3 * MM < np.abs(X).max() < 3 * MM
    P = OutputErrorProblem(one_dof(law), FREE[name], [experiment(X, F)])
    th = P.theta0.copy()
    Y, S = P.simulate(th, 0, True)
    np.testing.assert_allclose(Y[:, 0], X, rtol=0, atol=1e-12 * MM)
    np.testing.assert_allclose(Y[:, 1], F, rtol=0, atol=1e-10 * np.abs(F).max())
    n = NS // 2        # (the first second of the record: the reference runs are Python)
    for c, nm in enumerate(P.names):
        # (a relay staircase is flat between thresholds: steps small enough that no stage
        # input crosses one between the runs)
        d = (1e-5 if name == "continuous" else 1e-9) * max(abs(th[c]), 1.0)
        runs = []
        for k in (1, -1):
            tk = th.copy()
            tk[c] += k * d
            runs.append(np.stack(ref_of(name, tk, P.names, n), 1))
        fd = (runs[0] - runs[1]) / (2 * d)
        for o in range(2):
            scale = np.abs(fd[:, o]).max()
            if o == 1 and name == "relay":   # a relay's ±1 output: flat in every parameter
                assert scale == 0 and np.all(S[:n, o, c] == 0), (nm, scale)
                continue
            assert scale > 0, (nm, o)
            err = np.abs(S[:n, o, c] - fd[:, o]).max() / scale
            # (staircase: the differences at step 1e-9 carry ~1e-6 of rounding)
            assert err < (1e-6 if name == "continuous" else 2e-5), (name, nm, o, err)


@pytest.mark.parametrize("name", ["continuous", "prandtl-ishlinskii"])
def test_fit_assembly_recovers_operator_weights_from_independent_clean_data(name):
    """A mass on a spring, a damper and the operator, driven by a force, displacement
    measured: weights (every one), k0 (and the spring) recovered within 0.1 % from a
    start 20 % off."""
    law, mk = case(name)
    X, _ = rk4_run(mk(), (M, K, C))
    names = FREE[name]
    P = OutputErrorProblem(one_dof(law), names, [experiment(X)])
    truth = P.theta0.copy()
    start = truth * np.where(np.arange(truth.size) % 2, 0.8, 1.2)
    res = fit_assembly(one_dof(law), names, [experiment(X)], x0=start, uncertainty=None)
    for k, v, want in zip(res.names, res.theta, truth):
        assert abs(v - want) <= 1e-3 * max(abs(want), 1e-9 if want else 1e-3), (k, v, want)
    assert res.cost < 1e-12


def test_operator_bad_input_names_the_parameter_and_what_is_allowed():
    law, mk = case("continuous")
    X, _ = rk4_run(mk(), (M, K, C))
    a, x = one_dof(law), experiment(X)
    for nm, words in (("law.a1", ["'law.a1'", "threshold", "weights[i]", "k0, offset"]),
                      ("law.A2[0]", ["'law.A2[0]'", "threshold"]),
                      ("law.grid", ["'law.grid'", "threshold"]),
                      ("law.weights[6]", ["'law.weights[6]'", "[0, 5]"]),
                      ("law.weights[x]", ["'law.weights[x]'", "[0, 5]"]),
                      ("law.u_last0", ["'law.u_last0'", "memory", "weights"])):
        with pytest.raises(ValueError) as e:
            OutputErrorProblem(a, [nm], [x])
        for w in words:
            assert w in str(e.value), (nm, w, str(e.value))
    pi = one_dof(case("prandtl-ishlinskii")[0])
    with pytest.raises(ValueError, match=r"'law.r'.*threshold.*weights\[j\] \(j in \[0, 1\]\)"):
        OutputErrorProblem(pi, ["law.r"], [x])
    rl = one_dof(Relay(a1=-1e-3, a2=1e-3))
    with pytest.raises(ValueError, match=r"'law.a2'.*threshold.*Relay: none"):
        OutputErrorProblem(rl, ["law.a2"], [x])
    with pytest.raises(ValueError, match="distinct"):
        OutputErrorProblem(a, ["law.weights", "law.weights[2]"], [x])
    # bounds: an interval per weight, named when it is not one
    for bad, word in (({"law.weights[2]": (1.0, -1.0)}, "lo < hi"),
                      ({"law.weights[2]": (np.nan, 1.0)}, "lo < hi"),
                      ({"law.weights[2]": (1.0, 2.0)}, "inside")):
        with pytest.raises(ValueError) as e:
            fit_assembly(a, ["law.weights[2]", "law.k0"], [x], bounds=bad, uncertainty=None)
        assert "law.weights[2]" in str(e.value) and word in str(e.value), str(e.value)
