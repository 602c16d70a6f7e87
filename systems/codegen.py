"""The one code generator of assemblies: per structure, straight-line numba code.

For one assembly *structure* (which DOFs each spring, damper and element connects, the
element kernels and state sizes, which inputs are harmonic) this module writes a small
Python module whose functions have every connection index and parameter slice baked
in as constants and the element kernels as globals, so numba compiles them to code as
tight as a loop written by hand for one rig. Every *number* (masses, stiffnesses,
element parameters, harmonic amplitudes and pulsations) stays an argument, in the
:class:`~hystmech.systems.model.Params` record, so one compiled structure serves a
whole parameter sweep.

Generated functions. ``prm`` is the Params record; ``w`` one work vector holding the
inputs and what the last evaluation found (see :class:`Layout`: external forces,
imposed positions and velocities, then element forces F, deflections u, rates v and
node forces); ``V = scratch(prm)`` the elements' scratch arrays, made once per loop:

``core(t, y, prm, dy, w, V)``                right-hand side ẏ of the smooth part, with
                                             the inputs already in w
``fun(t, y, prm, dy, w, V)``                 the same with the inputs computed at t (the
                                             compiled rhs implicit methods call)
``jac(t, y, prm, J, w, V)``                  analytic ∂ẏ/∂y from the elements' jac
``jac_core(t, y, prm, J, w, V)``             the same with the inputs already in w
``inputs(t, prm, w)``                        external forces / imposed motions at t
``inputs_rot(t, p, cs, prm, TF, TU, TV, w)`` the same, cos(Ωt+φ) of each row given
``powers(y, w, prm, pw, off)``               integrands of the energy account
``signal(y, w, prm)``                        the observed connection-force sum
``step(y, dy, h, lo, hi, yn)``               Euler step + projection on the boxes
``ops(y0, y1, w0, w1, dt, prm, rtol)``       operator elements' own update
``stop(t, y)``                               the user's callback (False if none)
``var_solve(z, t0, t1, prm, nw, N, atol, rtol, h0)`` the state and its variational
                                             equations (systems/variational.py)
``proj_monodromy(y, t0, h, n, h_last, prm, lo, hi, nw, M)`` the projection scheme's
                                             steps and their chained Jacobian (ditto)

and the generic loops (``projection``, ``rk45`` with ``dopri_step``, ``eval_samples``,
the stiff cores, the variational equations, ...) which call the functions above as
globals; in their hot loops the calls marked ``# INLINE`` are replaced by the
statements themselves (:func:`_inline_calls`: no reference counting of arrays per
step). The generator owns none of those loops: each method or analysis owns its
template, and :mod:`~hystmech.systems.templates` hands the set to :func:`build` as a
:class:`Templates` record, so this module is the ground floor of the compiled model
(it imports neither the model, the methods nor any analysis). Nothing
takes a function argument, so numba inlines the kernels and can cache everything on disk (:mod:`.compile_cache` names the file
after a hash of the source and of every module it draws on: an edited kernel gives a
new file). Kernels that cannot be imported by name (closures, FMU kernels) get the
same source compiled in memory; Python kernels get it run as plain Python. Callers
see one :class:`Compiled` object either way.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import re
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit

from ..components.base import is_compiled
from . import compile_cache
from .observers import observe

# no_cfunc_wrapper: nothing takes these functions as first-class function values, and
# the C-callable wrapper numba would otherwise make for each one unpacks the whole
# Params record (~10 % of the LLVM IR of the RK45 loop, compiled for nothing)
_DECOR = "@njit(cache=True, no_cfunc_wrapper=True)"
# inlined into every caller at numba IR level: across a call boundary numba increfs and
# decrefs every array argument (each field of Params, each scratch array) with atomic
# operations; inlined, its reference-count pruning removes them (measured: ~2 µs of a
# 2.4 µs Dormand–Prince step of the belt rig went to those atomics)
_DECOR_INLINE = '@njit(cache=True, no_cfunc_wrapper=True, inline="always")'
DECOR, DECOR_INLINE = _DECOR, _DECOR_INLINE     # for the template owners


class Params(NamedTuple):
    """Numbers of an assembly, as seen by the compiled code: masses [kg], gravity
    [m/s²], springs k [N/m], u0 [m], preload [N], dampers c [N s/m], the elements'
    parameter vectors P (concatenated) and the harmonic input rows (f0, amplitude,
    Ω [rad/s], φ [rad]) of forces HF, imposed positions HU and velocities HV.

    Then the structure as arrays (int64; read by the generic engine,
    methods/engine.py, ignored by the generated code, which has it baked in): node
    indices (k < nq a DOF, nq <= k < nq + nb an imposed motion, -1 ground) of the
    springs' ends SA, SB and the dampers' DA, DB, the forced DOFs FD, one row per
    element EL = (a, b, state offset, n states, p0, p1, law id, kind 0 smooth /
    1 inclusion / 2 operator), the input kinds KI of the rows of HF, HU, HV (0 Harmonic,
    1 table sampled on the step grid) and the observed connections OB = (0 spring /
    1 damper / 2 element, index)."""
    mass: np.ndarray
    grav: float
    k: np.ndarray
    u0: np.ndarray
    pre: np.ndarray
    c: np.ndarray
    P: np.ndarray
    HF: np.ndarray
    HU: np.ndarray
    HV: np.ndarray
    SA: np.ndarray
    SB: np.ndarray
    DA: np.ndarray
    DB: np.ndarray
    FD: np.ndarray
    EL: np.ndarray
    KI: np.ndarray
    OB: np.ndarray


@dataclass(frozen=True)
class Templates:
    """The generic loops handed to the generator by the methods and analyses that own
    them (collected by :func:`hystmech.systems.templates.templates`).

    source: their decorated source, appended to every structure's module (the calls
    marked ``# INLINE`` are expanded); inline: {name: source} of the templates whose
    call sites are replaced by their statements; globals: {name: (module, object)} the
    loops read as module globals (imported by name into the cached module, bound
    directly in memory); modules: the modules whose source the compiled file depends
    on (part of the disk cache's key)."""
    source: str
    inline: dict = field(default_factory=dict)
    globals: dict = field(default_factory=dict)
    modules: tuple = ()


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


def _x(k, L):
    # position of node k: free DOF in y, imposed in w, ground 0
    if k < 0:
        return "0.0"
    return f"y[{k}]" if k < L.nq else f"w[{L.nf + k - L.nq}]"


def _v(k, L):
    if k < 0:
        return "0.0"
    return f"y[{L.nq + k}]" if k < L.nq else f"w[{L.nf + L.nb + k - L.nq}]"


def _input_lines(m, rot: bool):
    """Lines filling the inputs part of w; rows of the harmonic table H = [HF; HU; HV]."""
    L = m.layout
    out = []
    groups = (("HF", "TF", m.fkinds, "fc", 0, 0),
              ("HU", "TU", m.ukinds, "uc", L.nf, L.nf),
              ("HV", "TV", m.vkinds, "vc", L.nf + L.nb, L.nf + L.nb))
    for H, T, kinds, pre, r0, w0 in groups:
        for j, k in enumerate(kinds):
            if k == "h":
                c = f"cs[{r0 + j}]" if rot else \
                    f"math.cos(prm.{H}[{j}, 2] * t + prm.{H}[{j}, 3])"
                out.append(f"    w[{w0 + j}] = prm.{H}[{j}, 0] + prm.{H}[{j}, 1] * {c}")
            elif k == "c":
                out.append(f"    w[{w0 + j}] = {pre}_{j}(t)")
            elif k == "d":          # central difference of a compiled imposed motion
                out += ["    dlt = 1e-6 * (1.0 + abs(t))",
                        f"    w[{w0 + j}] = (uc_{j}(t + dlt) - uc_{j}(t - dlt)) / (2.0 * dlt)"]
            elif rot:               # "t": sampled by Python on the step grid
                out.append(f"    w[{w0 + j}] = {T}[p, {j}]")
            else:                   # (methods that need inputs at any t refuse "t")
                out.append(f"    w[{w0 + j}] = math.nan")
    return out


# Blocks of more than _UNROLL state components (a Preisach memory stack, a Maxwell-slip
# model with many sliders) are copied in loops: written out, a stack of 10³ states makes
# a module of ~0.5 MB that numba compiles for a minute; a few straight lines more or less
# do not matter for such an element, whose kernel dominates its cost anyway.
_UNROLL = 16


def _copy(dst, d0, src, s0, n, indent="    "):
    """Lines dst[d0 + i] = src[s0 + i] for i < n (src None: = 0.0), unrolled for small n."""
    if n <= _UNROLL:
        return [f"{indent}{dst}[{d0 + i}] = " + ("0.0" if src is None else f"{src}[{s0 + i}]")
                for i in range(n)]
    rhs = "0.0" if src is None else f"{src}[{s0} + _i]"
    return [f"{indent}for _i in range({n}):", f"{indent}    {dst}[{d0} + _i] = {rhs}"]


def _core(m):
    L = m.layout
    nq, nb, ne = L.nq, L.nb, L.ne
    A = L.nf + 2 * nb           # start of aux in w
    lines = ["def core(t, y, prm, dy, w, V):"]
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
        lines.append(f"    F = prm.k[{s}] * ({_x(a, L)} - {_x(b, L)} - prm.u0[{s}]) + prm.pre[{s}]")
        lines += act(a, b)
    for s, (a, b) in enumerate(zip(m.da, m.db)):
        lines.append(f"    F = prm.c[{s}] * ({_v(a, L)} - {_v(b, L)})")
        lines += act(a, b)
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        x, pp, d = f"V[{3 * e}]", f"V[{3 * e + 1}]", f"V[{3 * e + 2}]"
        lines += _copy(x, 0, "y", o, n)
        lines += [f"    u = {_x(a, L)} - {_x(b, L)}",
                  f"    v = {_v(a, L)} - {_v(b, L)}",
                  f"    F = force_{e}({x}, u, v, {pp})"]
        if kind == "operator":
            lines += _copy("dy", o, None, 0, n)
        else:
            lines.append(f"    rate_{e}({x}, u, v, {pp}, {d})")
            lines += _copy("dy", o, d, 0, n)
        lines += [f"    w[{A + e}] = F", f"    w[{A + ne + e}] = u", f"    w[{A + 2 * ne + e}] = v"]
        lines += act(a, b)
    for j, d in enumerate(m.fdof):
        lines.append(f"    f{d} += w[{j}]")
    for i in range(nq + nb):
        lines.append(f"    w[{A + 3 * ne + i}] = f{i}")
    for i in range(nq):
        lines += [f"    dy[{i}] = y[{nq + i}]", f"    dy[{nq + i}] = f{i} / prm.mass[{i}]"]
    lines.append("    return 0")
    # per-element scratch: the element's state and rate copied in and out (a view of y
    # made per call costs reference counting that numba cannot prune across the
    # kernels' branches) and its parameter slice, made once per loop
    items = []
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        items += [f"np.empty({n})", f"prm.P[{p0}:{p1}]", f"np.empty({n})"]
    # (a call: inlined, it saved its compile, ~0.3 s, but the belt rig's RK45 step was
    # ~3 % slower in interleaved runs)
    lines += ["", "", _DECOR, "def scratch(prm):",
              f"    return ({', '.join(items)}{',' if len(items) == 1 else ''})"]
    return "\n".join(lines) + "\n"


def _core_body(m):
    # the statements of core (without its def line and return)
    return _core(m).split("\n\n\n")[0].splitlines()[1:-1]


def _fun(m):
    # inputs and core written out in one body: a numba call of a function that calls
    # others costs far more (measured ~0.7 µs) than the straight-line code itself
    ins = _input_lines(m, False)
    body = _core_body(m)
    return "\n".join([
        "def fun(t, y, prm, dy, w, V):", *ins, *body, "    return 0", "", "", _DECOR_INLINE,
        "def fun_full(t, y, prm, dy, w, V, energy):", *ins, *body,
        # energy None (a run without the account: methods' energy_flag) is a type numba
        # prunes the branch on before typing, so powers is neither compiled nor linked
        # into the loop (~1 s CPU of the first RK45 run); a bool stays a run-time test
        "    if energy is not None and energy:",
        # (the offset as int64, not a literal: one compile of powers serves this call
        # and the sample evaluation's, which writes at offset 0)
        f"        powers(y, w, prm, dy, np.int64({m.layout.N}))",
        "    return 0"]) + "\n"


_INLINE_CALL = re.compile(r"^(\s*)(?:([\w, ]+?) = )?(\w+)\(([^()]*)\)\s*# INLINE$", re.M)
# prm.k, V[3]: an array of the Params record or of the scratch tuple, read through the
# locals bind_locals makes once per loop (each read in the loop would be a new reference)
_BOUND = re.compile(r"(?<![.\w])(prm|V)(?:\.(\w+)|\[(\d+)\])")


def _first_def(src: str):
    """(name, parameter names, body lines, return expression) of the first function
    in ``src`` (a generated function or a template: docstring skipped; the last
    statement must be ``return EXPR``)."""
    import ast

    src = textwrap.dedent(src)
    fn = ast.parse(src).body[0]
    nodes = fn.body
    if isinstance(nodes[0], ast.Expr) and isinstance(getattr(nodes[0], "value", None),
                                                      ast.Constant):
        nodes = nodes[1:]
    last = nodes[-1]
    assert isinstance(last, ast.Return), fn.name
    lines = src.splitlines()
    body = [ln for ln in lines[nodes[0].lineno - 1:last.lineno - 1] if ln.strip()]
    return fn.name, [x.arg for x in fn.args.args], body, ast.get_source_segment(src, last.value)


def _inline_calls(src: str, m, inline: dict) -> str:
    """Replace each template line ``[x = ]f(a, b, ...)  # INLINE`` by f's statements with
    its parameters renamed to the arguments (plain names; prm and V passed as prm and
    V) and ``x = `` its return expression; f is a template (dopri_step) or one of this
    structure's straight-line functions; ``inline``: {name: source} of the templates.
    ``bind_locals(prm, V)  # INLINE`` binds the
    arrays of prm and V to locals, which the inlined statements read. No call and no
    array read from a record in the hot loops, so numba counts no references there (a
    call, even one it inlines at IR level, increfs and decrefs every array argument,
    and so does each ``prm.k`` read: together ~0.6 µs of a 1.3 µs Dormand–Prince step
    of the belt rig). Temporaries of the bodies (f0, F, u, v, z0, acc, ...) must not be
    names the template uses otherwise."""
    fn_full = _fun(m).split("\n\n\n" + _DECOR_INLINE + "\n", 1)[1]
    return inline_calls(_one_copy(src), (_core(m), fn_full, _inputs(m, True), _step(m),
                                         _signal(m)),
                        {k: _one_copy(v) for k, v in inline.items()}, 3 * len(m.el_struct))


# the calls of the right-hand side that stay inlined: the RK45 stage (the hot one) and
# the stiff cores' fun (called per stage of a Radau step)
_HOT_FUN_FULL = ("fun_full(ts, zs,", "fun_full(t, y, a[0], out,")


def _one_copy(text: str) -> str:
    """The template ``text`` with the calls of ``fun_full`` outside the hot loops (the
    first evaluation, the initial step, the outputs, finite-difference Jacobians)
    turned into calls of one compiled copy, ``fun_full_call``: each inlined copy of a
    right-hand side with its laws inlined is compiled anew (as in methods/engine.py)."""
    out = []
    for ln in text.split("\n"):
        if "fun_full(" in ln and not any(h in ln for h in _HOT_FUN_FULL):
            ln = ln.replace("fun_full(", "fun_full_call(").replace("  # INLINE", "")
        out.append(ln)
    return "\n".join(out)


def inline_calls(src: str, functions, inline: dict, n_v: int) -> str:
    """:func:`_inline_calls` over the structure functions of source ``functions`` (each
    a ``def`` ending in ``return EXPR``) and a scratch tuple V of ``n_v`` arrays."""
    gen = {}
    for text in functions:
        name, params, body, ret = _first_def(text)
        gen[name] = (params, body, ret)
    tmpl = {}
    for text in inline.values():
        name, params, body, ret = _first_def(text)
        # (a template binds its own locals when called; inlined, the caller's serve)
        tmpl[name] = (params, [ln for ln in body if "bind_locals(" not in ln], ret)

    def expand(funcs):
        def sub(mt):
            indent, target, name, args = mt.groups()
            if name == "bind_locals" and funcs is gen:
                return "\n".join([f"{indent}prm_{f} = prm.{f}" for f in Params._fields] +
                                 [f"{indent}V_{i} = V[{i}]" for i in range(n_v)] +
                                 [f"{indent}pass"])
            if name not in funcs:
                return mt.group(0)
            params, body, ret = funcs[name]
            args = [a.strip() for a in args.split(",")]
            ren = dict(zip(params, args))
            if (len(args) != len(params) or not all(a.isidentifier() for a in args)
                    or ren.get("prm", "prm") != "prm" or ren.get("V", "V") != "V"):
                raise ValueError(f"cannot inline {name}({mt.group(4)})")
            pat = re.compile(r"(?<![.\w])(" + "|".join(params) + r")(?!\w)")

            def fix(ln):
                if funcs is gen:
                    ln = _BOUND.sub(lambda x: f"{x.group(1)}_{x.group(2) or x.group(3)}", ln)
                return pat.sub(lambda x: ren[x.group(1)], ln)
            out = [indent + fix(ln[4:]) for ln in body]
            if target:
                # a, b = x, b: element-wise, without the self-assignments (an array
                # assigned to itself would still be counted)
                tg = [x.strip() for x in target.split(",")]
                rv = [x.strip() for x in fix(ret).split(",")]
                if len(tg) > 1 and len(rv) != len(tg):
                    raise ValueError(f"cannot inline {target} = {name}(...)")
                if len(tg) == 1:
                    tg, rv = [target.strip()], [fix(ret)]
                out += [f"{indent}{a} = {b}" for a, b in zip(tg, rv) if a != b]
            return "\n".join(out) if out else f"{indent}pass"
        return sub
    return drop_unused_binds(_INLINE_CALL.sub(expand(gen), _INLINE_CALL.sub(expand(tmpl), src)))


_BIND = re.compile(r"^\s*((?:prm|V)_\w+) = (?:prm\.\w+|V\[\d+\])$")


def drop_unused_binds(src: str) -> str:
    """``src`` without the locals ``bind_locals`` made that their function never reads
    (``prm_HU = prm.HU`` where nothing reads prm_HU): each is an array variable numba
    types, lowers and reference-counts at every exit of its function for nothing
    (18 + 3·ne of them per bind, most unused in a given loop)."""
    parts = re.split(r"(?m)^(?=@njit|def )", src)
    out = []
    for part in parts:
        lines = part.split("\n")
        names = {mt.group(1) for ln in lines if (mt := _BIND.match(ln))}
        used = {n for n in names
                if len(re.findall(rf"(?<![.\w]){n}(?!\w)", part)) > 1}
        out.append("\n".join(ln for ln in lines
                             if not ((mt := _BIND.match(ln)) and mt.group(1) not in used)))
    return "".join(out)


_CONST_IF = re.compile(r"^(\s*)if ([\w ()]+):$")


def prune_constant_ifs(src: str, consts: dict) -> str:
    """Drop the ``if COND:`` blocks whose condition is false whatever runs: COND made of
    True, False, and/or/not and the names in ``consts`` (e.g. SIGNAL_NEEDS_W) — the
    dead branches left by inlining a template with a constant argument (a copy of the
    right-hand side in each inlined ``emit`` when the observed signal does not read the
    work vector), which numba would type and lower all the same."""
    ok = {"True", "False", "and", "or", "not", *consts}
    env = {"__builtins__": {}, **consts}
    lines = src.split("\n")
    out = []
    i = 0
    while i < len(lines):
        mt = _CONST_IF.match(lines[i])
        if mt and set(re.findall(r"\w+", mt.group(2))) <= ok \
                and not eval(mt.group(2), env):  # noqa: S307 - literals and constants only
            ind = len(mt.group(1))
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or
                                      len(lines[j]) - len(lines[j].lstrip()) > ind):
                j += 1
            if j < len(lines) and lines[j].strip().startswith(("else", "elif")) and \
                    len(lines[j]) - len(lines[j].lstrip()) == ind:
                out.append(lines[i])            # with an else: left to numba
                i += 1
                continue
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1                          # keep the blank lines after the block
            out.append(f"{mt.group(1)}pass")
            i = j
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _inputs(m, rot):
    head = ("def inputs_rot(t, p, cs, prm, TF, TU, TV, w):" if rot else
            "def inputs(t, prm, w):")
    return "\n".join([head, *_input_lines(m, rot), "    return 0"]) + "\n"


def _jac(m, skip_ops=False):
    L = m.layout
    nq = L.nq
    lines = ["def jac_core(t, y, prm, J, w, V):"]
    if skip_ops:
        # operators (their rows and columns stay zero, the sensitivity template adds
        # their tangent): zero only the rest, not an N x N matrix with their memory
        runs = _smooth_runs(m)
        for a0, a1 in runs:
            for b0, b1 in runs:
                lines += [f"    for _r in range({a0}, {a1}):",
                          f"        for _c in range({b0}, {b1}):",
                          "            J[_r, _c] = 0.0"]
    else:
        lines.append("    J[:, :] = 0.0")
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
        if skip_ops and kind == "operator":
            continue
        x, pp = f"V[{3 * e}]", f"V[{3 * e + 1}]"
        lines += _copy(x, 0, "y", o, n)
        lines += [f"    Je = np.zeros(({n + 1}, {n + 2}))",
                  f"    jac_{e}({x}, {_x(a, L)} - {_x(b, L)}, {_v(a, L)} - {_v(b, L)}, {pp}, Je)"]
        # Je rows 0..n-1 = ∂ẋe/∂(xe, u, v), row n = ∂F/∂(xe, u, v); ∂u/∂x_a = +1, ∂u/∂x_b = −1
        big = n > _UNROLL
        if kind != "operator" and big:
            lines += [f"    for _r in range({n}):",
                      f"        for _c in range({n}):",
                      f"            J[{o} + _r, {o} + _c] += Je[_r, _c]"]
            for node, sg in ((a, "+"), (b, "-")):
                if 0 <= node < nq:
                    lines += [f"        J[{o} + _r, {node}] {sg}= Je[_r, {n}]",
                              f"        J[{o} + _r, {nq + node}] {sg}= Je[_r, {n + 1}]"]
        elif kind != "operator":
            for r in range(n):
                for c in range(n):
                    lines.append(f"    J[{o + r}, {o + c}] += Je[{r}, {c}]")
                for node, sg in ((a, "+"), (b, "-")):
                    if 0 <= node < nq:
                        lines.append(f"    J[{o + r}, {node}] {sg}= Je[{r}, {n}]")
                        lines.append(f"    J[{o + r}, {nq + node}] {sg}= Je[{r}, {n + 1}]")
        for node, sg in ((a, "-"), (b, "")):
            if 0 <= node < nq:
                wt = f"{sg}1.0 / prm.mass[{node}]"
                if big:
                    lines += [f"    for _c in range({n}):",
                              f"        J[{nq + node}, {o} + _c] += {wt} * Je[{n}, _c]"]
                for c in range(0 if big else n):
                    lines.append(f"    J[{nq + node}, {o + c}] += {wt} * Je[{n}, {c}]")
                for nd, s2 in ((a, "+"), (b, "-")):
                    if 0 <= nd < nq:
                        lines.append(f"    J[{nq + node}, {nd}] {s2}= {wt} * Je[{n}, {n}]")
                        lines.append(f"    J[{nq + node}, {nq + nd}] {s2}= {wt} * Je[{n}, {n + 1}]")
    lines.append("    return 0")
    lines += ["", "", _DECOR,
              "def jac(t, y, prm, J, w, V):",
              "    inputs(t, prm, w)",
              "    return jac_core(t, y, prm, J, w, V)"]
    return "\n".join(lines) + "\n"


def _powers(m):
    L = m.layout
    nq, ne = L.nq, L.ne
    A = L.nf + 2 * L.nb
    lines = ["def powers(y, w, prm, pw, off):"]
    k = 0
    for e in range(ne):          # F·v absorbed by each element
        lines.append(f"    pw[off + {k}] = w[{A + e}] * w[{A + 2 * ne + e}]")
        k += 1
    for s, (a, b) in enumerate(zip(m.da, m.db)):       # c·v² dissipated by dampers
        lines += [f"    dv = {_v(a, L)} - {_v(b, L)}", f"    pw[off + {k}] = prm.c[{s}] * dv * dv"]
        k += 1
    for j, d in enumerate(m.fdof):                     # f·ẋ input by external forces
        lines.append(f"    pw[off + {k}] = w[{j}] * y[{nq + d}]")
        k += 1
    for j in range(L.nb):                              # −R·ẋ input by imposed motions
        lines.append(f"    pw[off + {k}] = -w[{A + 3 * ne + nq + j}] * w[{L.nf + L.nb + j}]")
        k += 1
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _signal(m):
    L = m.layout
    A = L.nf + 2 * L.nb
    terms = []
    for kind, i in m.observed:
        if kind == "element":
            terms.append(f"w[{A + i}]")
        elif kind == "spring":
            a, b = m.sa[i], m.sb[i]
            terms.append(f"(prm.k[{i}] * ({_x(a, L)} - {_x(b, L)} - prm.u0[{i}]) + prm.pre[{i}])")
        else:
            a, b = m.da[i], m.db[i]
            terms.append(f"prm.c[{i}] * ({_v(a, L)} - {_v(b, L)})")
    expr = ' + '.join(terms) if terms else '0.0'
    # whether the signal reads the work vector (element forces, imposed motions): the
    # RK45 loop then evaluates the right-hand side at a dense-output point before
    # observing it, else the state alone gives the signal
    return ("def signal(y, w, prm):\n"
            f"    return {expr}\n\n\n"
            f"SIGNAL_NEEDS_W = {'w[' in expr}\n")


def _step(m):
    # explicit Euler step of the smooth part, then the resolvent of the box indicator =
    # projection on the box (Bastien et al. (2007), eq. (A.9)); returns a finite-check sum
    # (branch-free: numba cannot prune the reference counting of array arguments
    # across branches, which would cost more than the step itself)
    N = m.layout.N
    lines = ["def step(y, dy, h, lo, hi, yn):"]
    runs, i = [], 0            # runs of components alike in being boxed or not
    while i < N:
        j = i
        while j < N and m.boxed[j] == m.boxed[i]:
            j += 1
        runs.append((i, j))
        i = j
    if max((j - i for i, j in runs), default=0) > _UNROLL:
        lines.append("    _acc = 0.0")
    terms = []
    for i, j in runs:
        if j - i > _UNROLL:     # a long block: a loop (each component reads only itself)
            z = "y[_i] + h * dy[_i]"
            lines += [f"    for _i in range({i}, {j}):",
                      f"        _z = min(max({z}, lo[_i]), hi[_i])" if m.boxed[i] else
                      f"        _z = {z}",
                      "        yn[_i] = _z", "        _acc += _z"]
            if "_acc" not in terms:
                terms.append("_acc")
            continue
        for k in range(i, j):
            z = f"y[{k}] + h * dy[{k}]"
            lines.append(f"    z{k} = min(max({z}, lo[{k}]), hi[{k}])" if m.boxed[k] else
                         f"    z{k} = {z}")
            terms.append(f"z{k}")
    lines += [f"    yn[{k}] = {t}" for t in terms if t != "_acc" for k in [int(t[1:])]]
    lines.append("    return " + (" + ".join(terms) if terms else "0.0"))
    return "\n".join(lines) + "\n"


def _ops(m):
    L = m.layout
    lines = ["def ops(y0, y1, w0, w1, dt, prm, rtol):", "    P = prm.P"]
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        if kind != "operator":
            continue
        def at(k, yy, ww):  # noqa: E306
            return _x(k, L).replace("y[", f"{yy}[").replace("w[", f"{ww}[")
        lines += [f"    u0 = {at(a, 'y0', 'w0')} - {at(b, 'y0', 'w0')}",
                  f"    u1 = {at(a, 'y1', 'w1')} - {at(b, 'y1', 'w1')}"]
        lines += _copy("y1", o, "y0", o, n)
        lines.append(f"    advance_{e}(y1[{o}:{o + n}], u0, u1, dt, (u1 - u0) / dt, "
                     f"P[{p0}:{p1}], rtol)")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"




# the templates' functions that only compiled code calls (no method calls them from
# Python): compiled without a Python wrapper either, whose unboxing of every argument
# (the model record's eighteen arrays, the scratch tuple) numba would otherwise compile
# for each structure (about 0.3 s each)
_DECOR_INTERNAL = "@njit(cache=True, no_cfunc_wrapper=True, no_cpython_wrapper=True)"
INTERNAL = ("initial_step", "stiff_fun", "stiff_jac_an", "stiff_jac_fd", "fun_full_call",
            "radau_step", "dp45_step")     # (the last two: the stiff cores called, not inlined)


def internal_decorators(src: str) -> str:
    """``src`` with the generator's decorator of the functions named in INTERNAL
    replaced by one without a Python wrapper (a generated module or the engine's)."""
    return re.sub(rf"^{re.escape(_DECOR)}\n(def (?:{'|'.join(INTERNAL)})\()",
                  lambda mt: f"{_DECOR_INTERNAL}\n{mt.group(1)}", src, flags=re.M)


def _own_decorators(src: str) -> str:
    # templates decorated @njit(cache=True) by their owners get the generator's
    # decorator (no C-callable wrapper, see _DECOR); those of INTERNAL no Python one
    return internal_decorators(re.sub(r"^@njit\(cache=True\)$", _DECOR, src, flags=re.M))


def _in_memory(src: str) -> str:
    """``src`` with every numba decorator's cache=True dropped (code compiled from a
    string has no file for numba to cache it in)."""
    return re.sub(r"^(@njit\()cache=True(?:, |(\)))", r"\1\2", src, flags=re.M) \
        .replace("@njit()", "@njit")


def _undecorated(src: str) -> str:
    """``src`` without its numba decorators (the same code run by the interpreter)."""
    return re.sub(r"^@njit(\(.*\))?\n", "", src, flags=re.M)


def generate(m, refs: dict, tpl: Templates) -> str:
    """Module source for model ``m`` (see the module docstring); ``refs`` maps each
    kernel global name to (module, qualname) or to None when it is bound at run time;
    ``tpl`` the generic loops appended."""
    pkg = __name__.rpartition(".")[0]
    L = m.layout
    head = ['"""Generated by hystmech for one assembly structure (systems/codegen.py)."""',
            "import math", "", "import numpy as np", "from numba import njit", "",
            f"from {pkg}.compile_cache import resolve",
            f"from {pkg}.observers import observe",
            *(f"from {mod} import {name}" for name, (mod, _) in sorted(tpl.globals.items())),
            ""]
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
    parts.append(_fun(m).split("\n\n\n" + _DECOR_INLINE + "\n", 1)[1]
                 .replace("def fun_full(", "def fun_full_call(", 1))
    for p in parts:
        # the per-step functions of the projection loop: inlined (see _DECOR_INLINE)
        hot = p.startswith(("def core(", "def inputs_rot(", "def step(", "def signal("))
        internal = p.startswith("def fun_full_call(")
        src += f"\n\n{_DECOR_INLINE if hot else _DECOR_INTERNAL if internal else _DECOR}\n" + p
    loops = prune_constant_ifs(_inline_calls(tpl.source, m, tpl.inline),
                               {"SIGNAL_NEEDS_W": "w[" in _signal(m).split("\n")[1]})
    loops = _own_decorators(loops)
    return src + loops + \
        f"\n\nstiff_jac = stiff_jac_{'an' if m.has_jac else 'fd'}\n"


NAMES = ("core", "scratch", "fun", "jac", "jac_core", "inputs", "inputs_rot", "powers",
         "signal", "step", "ops", "stop", "fun_full", "projection", "rk45", "eval_samples",
         "radau5", "auto_stiff", "auto_stiff_explicit", "auto_stiff_implicit", "var_solve",
         "proj_monodromy")


class Compiled:
    """The compiled functions of one structure (attributes named as in the module
    docstring), whatever the path: disk-cached module, in-memory numba or Python."""

    def __init__(self, mod, how: str, path=None):
        self.mod = mod
        self.how = how              # "disk", "memory" or "python"
        self.path = path
        for name in NAMES:
            setattr(self, name, getattr(mod, name, None))

    def cache_hits(self) -> int:
        """Functions numba loaded from the disk cache (not compiled) in this process."""
        if self.how != "disk":
            return 0
        return sum(sum(getattr(self.mod, n).stats.cache_hits.values())
                   for n in NAMES if getattr(self.mod, n, None) is not None)


_MEMORY: dict = {}


def _sample_args(m):
    # arguments of the types Model.eval_on passes to eval_samples
    L = m.layout
    return (np.zeros(1), np.zeros((1, L.N)), np.zeros((1, L.nf)), np.zeros((1, L.nb)),
            np.zeros((1, L.nb)), m.prm, L.nq, L.ne, L.nquad, L.n_work)


def build(m, kernels: dict, callback, tpl: Templates) -> Compiled:
    """Compile the generated module of model ``m`` with the generic loops ``tpl``.

    kernels: {global name: function} for force_e, rate_e, jac_e, advance_e and the
    compiled inputs fc_j/uc_j/vc_j; callback: the user's stop(t, y) or None."""
    glb = dict(kernels)
    if callback is not None:
        if not is_compiled(callback):
            try:                # numba-compile a plain callback; else the run is Python
                cb = njit(callback)
                bool(cb(0.0, np.zeros(m.layout.N)))
                callback = cb
            except Exception:  # noqa: BLE001 - not compilable: Python path
                pass
        glb["stop"] = callback
    compiled = all(is_compiled(f) for f in glb.values())
    refs = {name: (compile_cache.kernel_ref(fn) if compiled else None) for name, fn in glb.items()}
    src = generate(m, refs, tpl)
    if compiled and all(r is not None for r in refs.values()):
        mods = {__name__, f"{__package__}.observers", *tpl.modules}
        mods |= {r[0] for r in refs.values()}
        mod, where = compile_cache.load(src, sorted(mods))
        if mod is not None:
            out = Compiled(mod, "disk", where)
            # the sample evaluation every result needs, compiled by a second process
            # meanwhile (when asked for: $HYSTMECH_PREFETCH, set by `hystmech run`)
            child = compile_cache.prefetch(mod, where, "eval_samples", _sample_args(m))
            if child is not None:
                out.eval_samples = compile_cache.Prefetched(out.eval_samples, child)
            return out
        reason = where
    else:
        reason = "a kernel or input is not a module-level numba function"
    key = (src, tuple(sorted((k, id(v)) for k, v in glb.items())))
    if key in _MEMORY:
        _MEMORY[key].reason = reason
        return _MEMORY[key]
    ns = {"__name__": f"_hystmech_asm_mem_{len(_MEMORY)}", "njit": njit}
    ns.update({k: v for k, (_, v) in tpl.globals.items()})
    ns.update(glb)
    if compiled:
        code, how = _in_memory(src), "memory"
        ns["observe"] = observe
    else:
        # Python kernels (e.g. an FMU element without compiled kernels): the same code
        # run by the interpreter
        code, how = _undecorated(src), "python"
        obs_py = observe.py_func

        def observe_py(obs, t, s):
            # attribute access to the record's fields, as numba offers it
            return obs_py(obs.view(np.recarray), t, s)
        ns["observe"] = observe_py
    bound = {f"from {mod} import {name}" for name, (mod, _) in tpl.globals.items()}
    lines = [ln for ln in code.splitlines()
             if not ln.startswith(("from numba", f"from {__package__}"))
             and ln not in bound and " = resolve(" not in ln]
    exec(compile("\n".join(lines) + "\n", f"<hystmech generated {ns['__name__']}>", "exec"), ns)
    out = Compiled(types.SimpleNamespace(**{k: v for k, v in ns.items()
                                            if not k.startswith("__")}), how)
    out.reason = reason
    _MEMORY[key] = out
    return out


# -- parameter sensitivities: the forward sensitivity equations of identify/assembly.py --

def param_columns(m) -> dict:
    """Offsets of the parameter groups among the columns of ``pjac_core``'s G = ∂ẏ/∂θ:
    θ = (masses (nq), spring k, u0, preload (ns each), damper c (nd), element parameter
    vectors P (concatenated), external force values w_j (nf)); key "n": their number."""
    nq, ns, nd = m.layout.nq, len(m.sa), len(m.da)
    off = {"mass": 0, "k": nq, "u0": nq + ns, "pre": nq + 2 * ns, "c": nq + 3 * ns,
           "P": nq + 3 * ns + nd}
    # key "Pe": each element's first P column (-1: an operator, whose parameters enter
    # through its tangent kernels and the DP directions, not through pjac columns)
    col, pe = off["P"], []
    for (a, b, o, n, p0, p1, kind) in m.el_struct:
        pe.append(-1 if kind == "operator" else col)
        col += 0 if kind == "operator" else p1 - p0
    off["Pe"] = pe
    off["fext"] = col
    off["n"] = off["fext"] + m.layout.nf
    return off


def _smooth_runs(m):
    # [start, stop) runs of the state indices that are not operator memory
    runs, i = [], 0
    for (a, b, o, n, p0, p1, kind) in m.el_struct:
        if kind == "operator":
            if o > i:
                runs.append((i, o))
            i = o + n
    if m.layout.N > i:
        runs.append((i, m.layout.N))
    return runs


def _pjac(m, with_pjac):
    """``pjac_core(t, y, prm, dy, G, w, V)``: G[:, :] = ∂ẏ/∂θ (θ as in param_columns)
    at the point where ``core`` just left dy = ẏ and the node forces in w. Element
    parameters through the elements' ``pjac(x, u, v, p, Jp)`` kernels (Jp rows 0..n−1:
    ∂ẋe/∂p, row n: ∂F/∂p); elements not in ``with_pjac`` leave their columns zero."""
    L = m.layout
    nq = L.nq
    A = L.nf + 2 * L.nb
    off = param_columns(m)
    lines = ["def pjac_core(t, y, prm, dy, G, w, V):", "    G[:, :] = 0.0"]
    for i in range(nq):
        # v̇_i = f_i/m_i with f_i ∋ m_i·g: ∂v̇_i/∂m_i = (g − v̇_i)/m_i
        lines.append(f"    G[{nq + i}, {off['mass'] + i}] = (prm.grav - dy[{nq + i}]) / prm.mass[{i}]")

    def act(a, b, col, dF):
        # a connection force F acts −F on a, +F on b
        r = []
        for node, sg in ((a, "-"), (b, "+")):
            if 0 <= node < nq:
                r.append(f"    G[{nq + node}, {col}] {sg}= ({dF}) / prm.mass[{node}]")
        return r
    for s, (a, b) in enumerate(zip(m.sa, m.sb)):
        lines += act(a, b, off["k"] + s, f"{_x(a, L)} - {_x(b, L)} - prm.u0[{s}]")
        lines += act(a, b, off["u0"] + s, f"-prm.k[{s}]")
        lines += act(a, b, off["pre"] + s, "1.0")
    for s, (a, b) in enumerate(zip(m.da, m.db)):
        lines += act(a, b, off["c"] + s, f"{_v(a, L)} - {_v(b, L)}")
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        if e not in with_pjac:
            continue
        x, pp = f"V[{3 * e}]", f"V[{3 * e + 1}]"
        npe = p1 - p0
        c0 = off["Pe"][e]
        lines += _copy(x, 0, "y", o, n)
        lines += [f"    Jp = np.zeros(({n + 1}, {npe}))",
                  f"    pjac_{e}({x}, {_x(a, L)} - {_x(b, L)}, {_v(a, L)} - {_v(b, L)}, {pp}, Jp)",
                  f"    for _j in range({npe}):"]
        for r in range(n) if kind != "operator" else ():
            lines.append(f"        G[{o + r}, {c0} + _j] = Jp[{r}, _j]")
        for node, sg in ((a, "-"), (b, "+")):
            if 0 <= node < nq:
                lines.append(f"        G[{nq + node}, {c0} + _j] {sg}= Jp[{n}, _j] / prm.mass[{node}]")
        if not any(0 <= nd < nq for nd in (a, b)) and kind == "operator":
            lines.append("        pass")
    for j, d in enumerate(m.fdof):
        lines.append(f"    G[{nq + d}, {off['fext'] + j}] = 1.0 / prm.mass[{d}]")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def connection_names(m) -> list:
    """Names of the connections in the order of ``conn_core``'s rows: springs, dampers,
    elements."""
    a = m.asm
    return [s.name for s in a.springs] + [d.name for d in a.dampers] + [e.name for e in a.elements]


def _conn(m, with_pjac):
    """``conn_core(t, y, prm, w, V, F, FY, FT)``: every connection's force F (springs,
    dampers, elements: :func:`connection_names`), FY = ∂F/∂y (rows, N) and FT = ∂F/∂θ
    (rows, θ as in param_columns), with the inputs in w. Element rows through the
    elements' ``jac`` (row n: ∂F/∂(x, u, v)) and ``pjac`` (row n: ∂F/∂p) kernels."""
    L = m.layout
    nq = L.nq
    off = param_columns(m)
    lines = ["def conn_core(t, y, prm, w, V, F, FY, FT):", "    FY[:, :] = 0.0",
             "    FT[:, :] = 0.0"]

    def dxy(row, a, b, coef, base):
        r = []
        for node, sg in ((a, ""), (b, "-")):
            if 0 <= node < nq:
                r.append(f"    FY[{row}, {base + node}] += {sg}{coef}")
        return r
    row = 0
    for s, (a, b) in enumerate(zip(m.sa, m.sb)):
        lines += [f"    F[{row}] = prm.k[{s}] * ({_x(a, L)} - {_x(b, L)} - prm.u0[{s}]) + prm.pre[{s}]",
                  f"    FT[{row}, {off['k'] + s}] = {_x(a, L)} - {_x(b, L)} - prm.u0[{s}]",
                  f"    FT[{row}, {off['u0'] + s}] = -prm.k[{s}]",
                  f"    FT[{row}, {off['pre'] + s}] = 1.0"]
        lines += dxy(row, a, b, f"prm.k[{s}]", 0)
        row += 1
    for s, (a, b) in enumerate(zip(m.da, m.db)):
        lines += [f"    F[{row}] = prm.c[{s}] * ({_v(a, L)} - {_v(b, L)})",
                  f"    FT[{row}, {off['c'] + s}] = {_v(a, L)} - {_v(b, L)}"]
        lines += dxy(row, a, b, f"prm.c[{s}]", nq)
        row += 1
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        x, pp = f"V[{3 * e}]", f"V[{3 * e + 1}]"
        lines += _copy(x, 0, "y", o, n)
        lines += [f"    u = {_x(a, L)} - {_x(b, L)}", f"    v = {_v(a, L)} - {_v(b, L)}",
                  f"    F[{row}] = force_{e}({x}, u, v, {pp})"]
        if kind == "operator":      # its derivatives: the template's ops_tan (DF)
            row += 1
            continue
        lines += [f"    Je = np.zeros(({n + 1}, {n + 2}))",
                  f"    jac_{e}({x}, u, v, {pp}, Je)",
                  f"    for _j in range({n}):",
                  f"        FY[{row}, {o} + _j] = Je[{n}, _j]"]
        lines += dxy(row, a, b, f"Je[{n}, {n}]", 0)
        lines += dxy(row, a, b, f"Je[{n}, {n + 1}]", nq)
        if e in with_pjac:
            lines += [f"    Jp = np.zeros(({n + 1}, {p1 - p0}))",
                      f"    pjac_{e}({x}, u, v, {pp}, Jp)",
                      f"    for _j in range({p1 - p0}):",
                      f"        FT[{row}, {off['Pe'][e]} + _j] = Jp[{n}, _j]"]
        row += 1
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _ops_sens(m):
    """``ops_tan(y, S, Sm, prm, w, DP, dS, DF, du)``: for each operator element k (in
    element order), DF[k, :] = dF/dθ (its ``force_tan`` kernel ftan_e, the memory's
    derivative rows read from Sm, the input's from S, ∂p/∂θ from DP[:, p0:p1]) added
    to the velocity rows of dS as −F/m on a, +F/m on b; and ``ops_sens(y0, y1, S0, S1,
    w0, w1, dt, prm, DP, du0, du1, rtol, with_s)``: the operators' memory advanced over
    a step's input segment in y1 (as ``ops``), with its derivative rows in S1 (its
    ``advance_tan`` kernel atan_e)."""
    L = m.layout
    nq = L.nq
    t = ["def ops_tan(y, S, Sm, prm, w, DP, dS, DF, du):", "    ns = du.size"]
    s = ["def ops_sens(y0, y1, S0, S1, w0, w1, dt, prm, DP, du0, du1, rtol, with_s):",
         "    ns = du0.size"]
    k = 0

    def dsens(Sv, a, b, out):
        terms = ([f"{Sv}[{a}, _c]"] if 0 <= a < nq else []) + \
                ([f"-{Sv}[{b}, _c]"] if 0 <= b < nq else [])
        return f"{out}[_c] = " + (" + ".join(terms).replace("+ -", "- ") if terms else "0.0")
    for e, (a, b, o, n, p0, p1, kind) in enumerate(m.el_struct):
        if kind != "operator":
            continue
        t += [f"    u = {_x(a, L)} - {_x(b, L)}",
              "    for _c in range(ns):", "        " + dsens("S", a, b, "du"),
              f"    ftan_{e}(y[{o}:{o + n}], Sm[{o}:{o + n}], u, du, prm.P[{p0}:{p1}], "
              f"DP[:, {p0}:{p1}], DF[{k}])",
              "    for _c in range(ns):"]
        for node, sg in ((a, "-"), (b, "+")):
            if 0 <= node < nq:
                t.append(f"        dS[{nq + node}, _c] {sg}= DF[{k}, _c] / prm.mass[{node}]")
        t.append("        pass")

        def at(kk, yy, ww):
            return _x(kk, L).replace("y[", f"{yy}[").replace("w[", f"{ww}[")
        s += [f"    u0 = {at(a, 'y0', 'w0')} - {at(b, 'y0', 'w0')}",
              f"    u1 = {at(a, 'y1', 'w1')} - {at(b, 'y1', 'w1')}",
              "    if with_s:",
              "        for _c in range(ns):",
              "            " + dsens("S0", a, b, "du0"),
              "            " + dsens("S1", a, b, "du1"),
              f"        atan_{e}(y1[{o}:{o + n}], S1[{o}:{o + n}], u0, u1, du0, du1, "
              f"prm.P[{p0}:{p1}], DP[:, {p0}:{p1}])",
              "    else:",
              f"        advance_{e}(y1[{o}:{o + n}], u0, u1, dt, (u1 - u0) / dt, "
              f"prm.P[{p0}:{p1}], rtol)"]
        k += 1
    return "\n".join(t + ["    return 0"]) + "\n", "\n".join(s + ["    return 0"]) + "\n"


# -- a user's kernels (closures, exec'd code) in a module cached on disk --------------------
_PLAIN_FP = (int, float, complex, bool, str, bytes, type(None))


def kernel_fingerprint(fn):
    """A text naming everything the compiled code of numba function ``fn`` depends on,
    for a kernel that cannot be imported by name (a closure: Duhem's envelopes, LuGre's
    user g/f; exec'd code: a SumElement's kernels): its code objects (marshal, nested
    ones included), numba options, and, recursively, every global its code names and
    every closure cell (functions by the same rule, modules by name — their source
    enters the cache key —, numbers, strings, tuples, NumPy arrays by their bytes).
    Returns (text, modules) or None when something is not one of those (the caller then
    compiles in memory, as before). Two kernels with one fingerprint compile to the same
    code, so the module generated with it may be cached on disk under its hash."""
    mods: set = set()
    seen: dict = {}

    def func(f):
        py = getattr(f, "py_func", f)
        code = getattr(py, "__code__", None)
        if code is None:
            return None
        if id(py) in seen:
            return f"<{seen[id(py)]}>"
        seen[id(py)] = len(seen)
        # (marshal format 2: no back-references, whose flags follow reference counts
        # and made one code object hash differently before and after numba compiled it)
        out = [f"fn {getattr(py, '__module__', None)}:{py.__qualname__} "
               f"{hashlib.sha256(marshal.dumps(code, 2)).hexdigest()}"]
        opts = getattr(f, "targetoptions", None)
        if opts is not None:
            out.append(f"opts {sorted(opts.items())!r}")
        if _own_module(sys.modules.get(getattr(py, "__module__", None) or "")):
            mods.add(py.__module__)
        g = getattr(py, "__globals__", {})
        todo, names = [code], set()
        while todo:
            c = todo.pop()
            names |= set(c.co_names)
            todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        for nm in sorted(names):
            if nm in g:
                v = value(g[nm])
                if v is None:
                    return None
                out.append(f"g {nm} {v}")
        for nm, cell in zip(code.co_freevars, py.__closure__ or ()):
            try:
                v = value(cell.cell_contents)
            except ValueError:          # an empty cell
                return None
            if v is None:
                return None
            out.append(f"c {nm} {v}")
        return "(" + "; ".join(out) + ")"

    def value(v):
        if isinstance(v, _PLAIN_FP) or isinstance(v, np.generic):
            return f"{type(v).__name__} {v!r}"
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v)
            return f"array {a.dtype} {a.shape} {hashlib.sha256(a.tobytes()).hexdigest()}"
        if isinstance(v, tuple):
            items = [value(x) for x in v]
            return None if any(x is None for x in items) else "(" + ", ".join(items) + ")"
        if isinstance(v, types.ModuleType):
            if _own_module(v):
                mods.add(v.__name__)
            return f"module {v.__name__}"
        if callable(v) and hasattr(getattr(v, "py_func", v), "__code__"):
            return func(v)
        return None

    text = func(fn)
    return None if text is None else (text, mods)


def _own_module(mod) -> bool:
    # a module whose source enters a fingerprinted module's cache key: hystmech's and
    # the user's (not the standard library or installed packages: numpy, numba —
    # versions in the key, their sources not walked)
    if mod is None:
        return False
    if mod.__name__.split(".")[0] == __name__.split(".")[0]:
        return True
    file = getattr(mod, "__file__", None)
    return bool(file) and not any(d in file for d in ("site-packages", "dist-packages")) \
        and not os.path.realpath(file).startswith(os.path.realpath(sys.base_prefix))


_BOUND_KERNELS: dict = {}


def bound_kernel(key: str):
    """The kernel registered under ``key`` (a fingerprint's hash) for the generated
    module being imported (see :func:`build_sensitivity`)."""
    return _BOUND_KERNELS[key]


def build_sensitivity(m, kernels: dict, template: str, template_modules=()) -> Compiled:
    """Compile, for model ``m``, the structure's ``core``, ``scratch``, ``jac_core``
    (operators left out), ``pjac_core`` (:func:`_pjac`), ``conn_core`` (:func:`_conn`)
    and the operators' ``ops_tan`` / ``ops_sens`` (:func:`_ops_sens`; kernels ftan_e,
    atan_e, advance_e) together with an analysis's ``template`` source (its
    loops call them as globals, e.g. identify/assembly.py's forward sensitivity
    integration), cached on disk like :func:`build`'s modules. kernels: {global name:
    numba function} for force_e, rate_e, jac_e and the pjac_e that exist;
    template_modules: the modules the template's source comes from (part of the cache
    key). The Compiled object's ``mod`` holds every generated and template function."""
    from . import compile_cache

    if not all(is_compiled(f) for f in kernels.values()):
        raise ValueError("sensitivities need numba-compiled element kernels")
    with_pjac = {int(k.split("_")[1]) for k in kernels if k.startswith("pjac_")}
    refs = {name: compile_cache.kernel_ref(fn) for name, fn in kernels.items()}
    # a kernel that cannot be imported by name (a user's closure) enters the module by
    # the hash of its fingerprint, registered before the module is imported: the module
    # is cached on disk per structure and fingerprint, not compiled in every process
    fps, fmods = {}, set()
    for name, ref in refs.items():
        if ref is None:
            fp = kernel_fingerprint(kernels[name])
            if fp is None:
                break
            fps[name] = hashlib.sha256(fp[0].encode()).hexdigest()[:32]
            fmods |= fp[1]
    else:
        for name, h in fps.items():
            refs[name] = ("bound", h)
    head = ['"""Generated by hystmech: sensitivities of one assembly structure '
            '(systems/codegen.py)."""', "import math", "", "import numpy as np",
            "from numba import njit", "", f"from {__package__}.compile_cache import resolve",
            f"from {__name__} import bound_kernel", ""]
    for name, ref in sorted(refs.items()):
        if ref is not None and ref[0] == "bound":
            head.append(f"{name} = bound_kernel({ref[1]!r})")
        elif ref is not None:
            head.append(f"{name} = resolve({ref[0]!r}, {ref[1]!r})")
    src = "\n".join(head) + "\n"
    jac_core = _jac(m, skip_ops=True).split("\n\n\n" + _DECOR)[0] + "\n"
    ops_tan, ops_sens = _ops_sens(m)
    # what the template's stage calls (core, jac_core, pjac_core, ops_tan: one call site
    # each) is inlined into it: a call passes Params and the work arrays across a
    # boundary where numba counts their references with atomics; inlined, the Noël &
    # Schoukens record's sensitivities ran 19 % faster and the module (with the laws'
    # kernels, empty caches) compiled in 8.9 instead of 13.1 s CPU (fewer functions to
    # optimise and link)
    for p in (_core(m), jac_core, _pjac(m, with_pjac), ops_tan):
        src += f"\n\n{_DECOR_INLINE}\n" + p
    for p in (_conn(m, with_pjac), ops_sens):
        src += f"\n\n{_DECOR}\n" + p
    src += "\n\n" + template + "\n"
    if all(r is not None for r in refs.values()):
        mods = {__name__, "hystmech.components._ode", *template_modules}
        mods |= {r[0] for r in refs.values() if r[0] != "bound"} | fmods
        for name, ref in refs.items():
            if ref[0] == "bound":
                _BOUND_KERNELS[ref[1]] = kernels[name]
        mod, where = compile_cache.load(src, sorted(mods))
        if mod is not None:
            return Compiled(mod, "disk", where)
    key = (src, tuple(sorted((k, id(v)) for k, v in kernels.items())))
    if key in _MEMORY:
        return _MEMORY[key]
    ns = {"__name__": f"_hystmech_sens_mem_{len(_MEMORY)}", "njit": njit, "np": np}
    ns.update(kernels)
    code = _in_memory(src)
    lines = [ln for ln in code.splitlines()
             if not ln.startswith(("from numba", f"from {__package__}", f"from {__name__}"))
             and " = resolve(" not in ln and " = bound_kernel(" not in ln]
    exec(compile("\n".join(lines) + "\n", f"<hystmech generated {ns['__name__']}>", "exec"), ns)
    out = Compiled(types.SimpleNamespace(**{k: v for k, v in ns.items()
                                            if not k.startswith("__")}), "memory")
    _MEMORY[key] = out
    return out
