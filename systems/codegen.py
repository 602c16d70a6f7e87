"""The one code generator of assemblies: per structure, straight-line numba code.

For one assembly *structure* (which DOFs each spring, damper and element connects, the
element kernels and state sizes, which inputs are harmonic) this module writes a small
Python module whose functions have every connection index and parameter slice baked
in as constants and the element kernels as globals, so numba compiles them to code as
tight as a loop written by hand for one rig. Every *number* (masses, stiffnesses,
element parameters, harmonic amplitudes and pulsations) stays an argument, in the
:class:`~hystmech.systems.model.Params` record, so one compiled structure serves a
whole parameter sweep.

Generated functions (``prm`` is the Params record, ``aux`` a scratch vector holding
element forces F, deflections u, rates v and node forces, see :class:`Layout`):

``core(t, y, fext, ub, vb, prm, dy, aux)``   right-hand side ẏ of the smooth part
``fun(t, y, prm, dy, work)``                 the same with the inputs computed at t
                                             (for implicit methods: no allocation)
``jac(t, y, prm, J, work)``                  analytic ∂ẏ/∂y from the elements' jac
``jac_core(t, y, ub, vb, prm, J)``           the same with the imposed motions given
``inputs(t, p, prm, TF, TU, TV, fext, ub, vb)``  external forces / imposed motions
``inputs_rot(t, p, cs, prm, TF, TU, TV, fext, ub, vb)`` the same, cos(Ωt+φ) given
``powers(y, fext, vb, prm, aux, pw)``        integrands of the energy account
``signal(y, prm, aux)``                      the observed connection-force sum
``step(y, dy, h, lo, hi, yn)``               Euler step + projection on the boxes
``ops(y0, y1, ub0, ub1, dt, prm, rtol)``     operator elements' own update
``stop(t, y)``                               the user's callback (False if none)

and the generic loops ``projection``, ``rk45`` (with ``dopri_step``) and
``eval_samples``, whose source is taken from :mod:`~hystmech.systems.methods` and
:mod:`~hystmech.systems.model` and which call the functions above as globals. Nothing
takes a function argument, so numba inlines the kernels and can cache everything on disk (:mod:`._codegen` names the file
after a hash of the source and of every module it draws on: an edited kernel gives a
new file). Kernels that cannot be imported by name (closures, FMU kernels) get the
same source compiled in memory; Python kernels get it run as plain Python. Callers
see one :class:`Compiled` object either way.
"""
from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..components.base import is_compiled

_DECOR = "@njit(cache=True)"


@dataclass(frozen=True)
class Layout:
    """Sizes of a structure: nq free DOFs, nb imposed, ne elements, nf forces; aux =
    [F (ne), u (ne), v (ne), node forces (nq + nb)]; work = [fext, ub, vb, aux]."""
    nq: int
    nb: int
    ne: int
    nf: int
    N: int
    nquad: int

    @property
    def n_aux(self) -> int:
        return 3 * self.ne + self.nq + self.nb

    @property
    def n_work(self) -> int:
        return self.nf + 2 * self.nb + self.n_aux


def _x(k, nq):
    if k < 0:
        return "0.0"
    return f"y[{k}]" if k < nq else f"ub[{k - nq}]"


def _v(k, nq):
    if k < 0:
        return "0.0"
    return f"y[{nq + k}]" if k < nq else f"vb[{k - nq}]"


def _input_lines(m, rot: bool):
    """Lines filling fext, ub, vb; rows of the harmonic table H = [HF; HU; HV]."""
    out = []
    groups = (("fext", "HF", "TF", m.fkinds, "fc", 0),
              ("ub", "HU", "TU", m.ukinds, "uc", len(m.fkinds)),
              ("vb", "HV", "TV", m.vkinds, "vc", len(m.fkinds) + len(m.ukinds)))
    for arr, H, T, kinds, pre, r0 in groups:
        for j, k in enumerate(kinds):
            if k == "h":
                c = f"cs[{r0 + j}]" if rot else \
                    f"math.cos(prm.{H}[{j}, 2] * t + prm.{H}[{j}, 3])"
                out.append(f"    {arr}[{j}] = prm.{H}[{j}, 0] + prm.{H}[{j}, 1] * {c}")
            elif k == "c":
                out.append(f"    {arr}[{j}] = {pre}_{j}(t)")
            elif k == "d":          # central difference of a compiled imposed motion
                out += ["    dlt = 1e-6 * (1.0 + abs(t))",
                        f"    {arr}[{j}] = (uc_{j}(t + dlt) - uc_{j}(t - dlt)) / (2.0 * dlt)"]
            else:                   # "t": sampled by Python on the step grid
                out.append(f"    {arr}[{j}] = {T}[p, {j}]")
    return out


def _core(m):
    L = m.layout
    nq, nb, ne = L.nq, L.nb, L.ne
    lines = ["def core_v(t, y, fext, ub, vb, prm, dy, aux, V):"]
    for i in range(nq):
        lines.append(f"    f{i} = prm.mass[{i}] * prm.grav")
    for j in range(nb):
        lines.append(f"    f{nq + j} = 0.0")

    def act(a, b):
        r = []
        if a >= 0:
            r.append(f"    f{a} -= F")
        if b >= 0:
            r.append(f"    f{b} += F")
        return r
    for s, (a, b) in enumerate(zip(m.sa, m.sb)):
        lines.append(f"    F = prm.k[{s}] * ({_x(a, nq)} - {_x(b, nq)} - prm.u0[{s}]) + prm.pre[{s}]")
        lines += act(a, b)
    for s, (a, b) in enumerate(zip(m.da, m.db)):
        lines.append(f"    F = prm.c[{s}] * ({_v(a, nq)} - {_v(b, nq)})")
        lines += act(a, b)
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        lines += [f"    u = {_x(a, nq)} - {_x(b, nq)}",
                  f"    v = {_v(a, nq)} - {_v(b, nq)}",
                  f"    F = force_{e}(V[{3 * e}], u, v, V[{3 * e + 1}])"]
        if kind == "operator":
            lines += [f"    dy[{o + i}] = 0.0" for i in range(n)]
        else:
            lines.append(f"    rate_{e}(V[{3 * e}], u, v, V[{3 * e + 1}], V[{3 * e + 2}])")
        lines += [f"    aux[{e}] = F", f"    aux[{ne + e}] = u", f"    aux[{2 * ne + e}] = v"]
        lines += act(a, b)
    for j, d in enumerate(m.fdof):
        lines.append(f"    f{d} += fext[{j}]")
    for i in range(nq + nb):
        lines.append(f"    aux[{3 * ne + i}] = f{i}")
    for i in range(nq):
        lines += [f"    dy[{i}] = y[{nq + i}]", f"    dy[{nq + i}] = f{i} / prm.mass[{i}]"]
    lines.append("    return 0")
    # the element views of y, P and dy, made once per loop (a view made per step costs
    # reference counting that numba cannot prune across the kernels' branches)
    views = []
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        views += [f"y[{o}:{o + n}]", f"P[{p0}:{p1}]", f"dy[{o}:{o + n}]"]
    lines += ["", "", _DECOR, "def views(y, dy, P):",
              f"    return ({', '.join(views)}{',' if len(views) == 1 else ''})", "", "",
              _DECOR, "def core(t, y, fext, ub, vb, prm, dy, aux):",
              "    return core_v(t, y, fext, ub, vb, prm, dy, aux, views(y, dy, prm.P))"]
    return "\n".join(lines) + "\n"


def _fun(m):
    L = m.layout
    nf, nb = L.nf, L.nb
    return "\n".join([
        "def fun(t, y, prm, dy, work):",
        f"    fext = work[0:{nf}]",
        f"    ub = work[{nf}:{nf + nb}]",
        f"    vb = work[{nf + nb}:{nf + 2 * nb}]",
        "    inputs(t, 0, prm, _E2, _E2, _E2, fext, ub, vb)",
        f"    core(t, y, fext, ub, vb, prm, dy, work[{nf + 2 * nb}:])",
        "    return 0"]) + "\n"


def _inputs(m, rot):
    head = ("def inputs_rot(t, p, cs, prm, TF, TU, TV, fext, ub, vb):" if rot else
            "def inputs(t, p, prm, TF, TU, TV, fext, ub, vb):")
    return "\n".join([head, *_input_lines(m, rot), "    return 0"]) + "\n"


def _jac(m):
    L = m.layout
    nq, nb, nf = L.nq, L.nb, L.nf
    lines = ["def jac_core(t, y, ub, vb, prm, J):",
             "    P = prm.P",
             "    J[:, :] = 0.0"]
    for i in range(nq):
        lines.append(f"    J[{i}, {nq + i}] = 1.0")

    def pair(a, b, coef, off):
        # connection force F = coef·(q_a − q_b) (q = x or v): −F on a, +F on b
        r = []
        for node, sg in ((a, "-"), (b, "+")):
            if 0 <= node < nq:
                if 0 <= a < nq:
                    r.append(f"    J[{nq + node}, {off + a}] += {sg}{coef} / prm.mass[{node}]")
                if 0 <= b < nq:
                    r.append(f"    J[{nq + node}, {off + b}] -= {sg}{coef} / prm.mass[{node}]")
        return r
    for s, (a, b) in enumerate(zip(m.sa, m.sb)):
        lines += pair(a, b, f"prm.k[{s}]", 0)
    for s, (a, b) in enumerate(zip(m.da, m.db)):
        lines += pair(a, b, f"prm.c[{s}]", nq)
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        lines += [f"    Je = np.zeros(({n + 1}, {n + 2}))",
                  f"    jac_{e}(y[{o}:{o + n}], {_x(a, nq)} - {_x(b, nq)}, "
                  f"{_v(a, nq)} - {_v(b, nq)}, P[{p0}:{p1}], Je)"]
        # Je rows 0..n-1 = ∂ẋe/∂(xe, u, v), row n = ∂F/∂(xe, u, v); ∂u/∂x_a = +1, ∂u/∂x_b = −1
        if kind != "operator":
            for r in range(n):
                for c in range(n):
                    lines.append(f"    J[{o + r}, {o + c}] += Je[{r}, {c}]")
                for node, sg in ((a, "+"), (b, "-")):
                    if 0 <= node < nq:
                        lines.append(f"    J[{o + r}, {node}] {sg}= Je[{r}, {n}]")
                        lines.append(f"    J[{o + r}, {nq + node}] {sg}= Je[{r}, {n + 1}]")
        for node, sg in ((a, "-"), (b, "")):
            if 0 <= node < nq:
                w = f"{sg}1.0 / prm.mass[{node}]"
                for c in range(n):
                    lines.append(f"    J[{nq + node}, {o + c}] += {w} * Je[{n}, {c}]")
                for nd, s2 in ((a, "+"), (b, "-")):
                    if 0 <= nd < nq:
                        lines.append(f"    J[{nq + node}, {nd}] {s2}= {w} * Je[{n}, {n}]")
                        lines.append(f"    J[{nq + node}, {nq + nd}] {s2}= {w} * Je[{n}, {n + 1}]")
    lines.append("    return 0")
    lines += ["", "", _DECOR,
              "def jac(t, y, prm, J, work):",
              f"    ub = work[{nf}:{nf + nb}]",
              f"    vb = work[{nf + nb}:{nf + 2 * nb}]",
              f"    inputs(t, 0, prm, _E2, _E2, _E2, work[0:{nf}], ub, vb)",
              "    return jac_core(t, y, ub, vb, prm, J)"]
    return "\n".join(lines) + "\n"


def _powers(m):
    L = m.layout
    nq, ne = L.nq, L.ne
    lines = ["def powers(y, fext, vb, prm, aux, pw):"]
    k = 0
    for e in range(ne):          # F·v absorbed by each element
        lines.append(f"    pw[{k}] = aux[{e}] * aux[{2 * ne + e}]")
        k += 1
    for s, (a, b) in enumerate(zip(m.da, m.db)):       # c·v² dissipated by dampers
        lines += [f"    dv = {_v(a, nq)} - {_v(b, nq)}", f"    pw[{k}] = prm.c[{s}] * dv * dv"]
        k += 1
    for j, d in enumerate(m.fdof):                     # f·ẋ input by external forces
        lines.append(f"    pw[{k}] = fext[{j}] * y[{nq + d}]")
        k += 1
    for j in range(L.nb):                              # −R·ẋ input by imposed motions
        lines.append(f"    pw[{k}] = -aux[{3 * ne + nq + j}] * vb[{j}]")
        k += 1
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _signal(m):
    nq, ne = m.layout.nq, m.layout.ne
    terms = []
    for kind, i in m.observed:
        if kind == "element":
            terms.append(f"aux[{i}]")
        elif kind == "spring":
            a, b = m.sa[i], m.sb[i]
            terms.append(f"(prm.k[{i}] * ({_x(a, nq)} - {_x(b, nq)} - prm.u0[{i}]) + prm.pre[{i}])")
        else:
            a, b = m.da[i], m.db[i]
            terms.append(f"prm.c[{i}] * ({_v(a, nq)} - {_v(b, nq)})")
    del ne
    return ("def signal(y, ub, vb, prm, aux):\n"
            f"    return {' + '.join(terms) if terms else '0.0'}\n")


def _step(m):
    # explicit Euler step of the smooth part, then the resolvent of the box indicator =
    # projection on the box (Bastien et al. (2007), eq. (A.9)); finite-check sum returned
    # (branch-free: numba cannot prune the reference counting of array arguments
    # across branches, which would cost more than the step itself)
    N = m.layout.N
    lines = ["def step(y, dy, h, lo, hi, yn):"]
    for i in range(N):
        z = f"y[{i}] + h * dy[{i}]"
        lines.append(f"    z{i} = min(max({z}, lo[{i}]), hi[{i}])" if m.boxed[i] else
                     f"    z{i} = {z}")
    lines += [f"    yn[{i}] = z{i}" for i in range(N)]
    lines.append("    return " + " + ".join(f"z{i}" for i in range(N)))
    return "\n".join(lines) + "\n"


def _ops(m):
    nq = m.layout.nq
    lines = ["def ops(y0, y1, ub0, ub1, dt, prm, rtol):", "    P = prm.P"]
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        if kind != "operator":
            continue
        x0 = lambda k: _x(k, nq).replace("y[", "y0[").replace("ub[", "ub0[")  # noqa: E731
        x1 = lambda k: _x(k, nq).replace("y[", "y1[").replace("ub[", "ub1[")  # noqa: E731
        lines += [f"    u0 = {x0(a)} - {x0(b)}", f"    u1 = {x1(a)} - {x1(b)}"]
        lines += [f"    y1[{o + i}] = y0[{o + i}]" for i in range(n)]
        lines.append(f"    advance_{e}(y1[{o}:{o + n}], u0, u1, dt, (u1 - u0) / dt, "
                     f"P[{p0}:{p1}], rtol)")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


_WRAPPERS = '''
{d}
def fun_full(t, z, prm, out, work, energy):
    fun(t, z[:{N}], prm, out[:{N}], work)
    if energy:
        powers(z[:{N}], work[0:{nf}], work[{nf} + {nb}:{nf} + 2 * {nb}], prm,
               work[{nf} + 2 * {nb}:], out[{N}:])
    return 0


{d}
def signal_at(z, prm, work):
    return signal(z, work[{nf}:{nf} + {nb}], work[{nf} + {nb}:{nf} + 2 * {nb}], prm,
                  work[{nf} + 2 * {nb}:])
'''


def templates() -> str:
    """Source of the generic loops compiled into every structure's module: the
    projection and RK45 loops, the Dormand–Prince step and the sample evaluation.
    They call the structure's functions as globals (never as arguments), so numba
    inlines them and can cache the loops on disk."""
    import inspect

    from .methods import projection, rk45
    from .model import eval_samples

    global _TEMPLATES
    if _TEMPLATES is not None:
        return _TEMPLATES
    out = ""
    for fn in (projection.projection, rk45.dopri_step, rk45.initial_step, rk45.rk45,
               eval_samples):
        out += f"\n\n{_DECOR}\n" + inspect.getsource(fn)
    _TEMPLATES = out
    return out


_TEMPLATES = None


def generate(m, refs: dict) -> str:
    """Module source for model ``m`` (see the module docstring); ``refs`` maps each
    kernel global name to (module, qualname) or to None when it is bound at run time."""
    pkg = __name__.rpartition(".")[0]
    L = m.layout
    head = ['"""Generated by hystmech for one assembly structure (systems/codegen.py)."""',
            "import math", "", "import numpy as np", "from numba import njit", "",
            f"from {pkg}._codegen import resolve",
            f"from {pkg}.observers import observe",
            f"from {pkg}.methods.rk45 import _A, _B, _C, _E, _P", "",
            "_E2 = np.zeros((1, 1))"]
    for name, ref in sorted(refs.items()):
        if ref is not None:
            head.append(f"{name} = resolve({ref[0]!r}, {ref[1]!r})")
    src = "\n".join(head) + "\n"
    parts = [_core(m), _fun(m), _inputs(m, False), _inputs(m, True), _powers(m),
             _signal(m), _step(m), _ops(m)]
    if m.has_jac:
        parts.append(_jac(m))
    if "stop" not in refs:
        parts.append("def stop(t, y):\n    return False\n")
    for p in parts:
        src += f"\n\n{_DECOR}\n" + p
    src += _WRAPPERS.format(d=_DECOR, N=L.N, nf=L.nf, nb=L.nb)
    return src + templates()


class Compiled:
    """The compiled functions of one structure (attributes named as in the module
    docstring), whatever the path: disk-cached module, in-memory numba or Python."""

    def __init__(self, mod, how: str, path=None):
        self.mod = mod
        self.how = how              # "disk", "memory" or "python"
        self.path = path
        for name in ("core", "fun", "jac", "jac_core", "inputs", "inputs_rot", "powers", "signal", "step",
                     "ops", "stop", "projection", "rk45", "fun_full", "signal_at",
                     "eval_samples"):
            setattr(self, name, getattr(mod, name, None))

    def cache_hits(self) -> int:
        """Functions numba loaded from the disk cache (not compiled) in this process."""
        if self.how != "disk":
            return 0
        return sum(sum(getattr(self.mod, n).stats.cache_hits.values())
                   for n in ("core", "fun", "jac", "ops", "projection", "eval_samples", "rk45",
                             "inputs", "inputs_rot", "powers", "signal", "step", "stop",
                             "fun_full", "signal_at")
                   if getattr(self.mod, n, None) is not None)


_MEMORY: dict = {}


def build(m, kernels: dict, callback=None) -> Compiled:
    """Compile the generated module of model ``m``.

    kernels: {global name: function} for force_e, rate_e, jac_e, advance_e and the
    compiled inputs fc_j/uc_j/vc_j; callback: the user's stop(t, y) or None."""
    from . import _codegen
    from .methods.rk45 import _A, _B, _C, _E, _P
    from .observers import observe

    glb = dict(kernels)
    if callback is not None:
        glb["stop"] = callback
    compiled = all(is_compiled(f) for f in glb.values())
    refs = {name: (_codegen.kernel_ref(fn) if compiled else None) for name, fn in glb.items()}
    src = generate(m, refs)
    if compiled and all(r is not None for r in refs.values()):
        mods = {__name__, f"{__package__}.methods.projection", f"{__package__}.methods.rk45",
                f"{__package__}.model", f"{__package__}.observers"}
        mods |= {r[0] for r in refs.values()}
        mod, where = _codegen.load(src, sorted(mods))
        if mod is not None:
            return Compiled(mod, "disk", where)
        reason = where
    else:
        reason = "a kernel or input is not a module-level numba function"
    key = (src, tuple(sorted((k, id(v)) for k, v in glb.items())))
    if key in _MEMORY:
        _MEMORY[key].reason = reason
        return _MEMORY[key]
    ns = {"__name__": f"_hystmech_asm_mem_{len(_MEMORY)}", "_A": _A, "_B": _B, "_C": _C,
          "_E": _E, "_P": _P, "njit": njit}
    ns.update(glb)
    if compiled:
        code, how = src.replace(_DECOR, "@njit"), "memory"
        ns["observe"] = observe
    else:
        # Python kernels (e.g. an FMU element without compiled kernels): the same code
        # run by the interpreter
        code, how = src.replace(_DECOR + "\n", ""), "python"
        obs_py = observe.py_func

        def observe_py(obs, t, s):
            # attribute access to the record's fields, as numba offers it
            return obs_py(obs.view(np.recarray), t, s)
        ns["observe"] = observe_py
    lines = [ln for ln in code.splitlines()
             if not ln.startswith(("from numba", f"from {__package__}"))
             and " = resolve(" not in ln]
    exec(compile("\n".join(lines) + "\n", f"<hystmech generated {ns['__name__']}>", "exec"), ns)
    out = Compiled(types.SimpleNamespace(**{k: v for k, v in ns.items()
                                            if not k.startswith("__")}), how)
    out.reason = reason
    _MEMORY[key] = out
    return out
