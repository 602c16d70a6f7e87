"""Solvers of assemblies: compiled model, scipy BDF, compiled RK45, SimResult, simulate().

The generated ``core`` evaluates, for a state y at time t, every connection force, the
element state rates and the accelerations; it calls each element's own numba kernels
(force, rate, jac), so the whole right-hand side runs without Python. Only the element
kernels are baked into the generated source: every number (masses, stiffnesses,
element parameters, harmonic forcing) is an argument, so one compiled model serves a
whole parameter sweep. Compiled models are cached per process by structure.
"""
from __future__ import annotations

import ast
import inspect
import math
import textwrap

import numpy as np
from numba import njit

from ..components.base import is_compiled

# -- generic compiled helpers -------------------------------------------------------------


@njit(cache=True)
def _pos(y, ub, k, nq):
    if k < 0:
        return 0.0
    if k < nq:
        return y[k]
    return ub[k - nq]


@njit(cache=True)
def _vel(y, vb, k, nq):
    if k < 0:
        return 0.0
    if k < nq:
        return y[nq + k]
    return vb[k - nq]


@njit(cache=True)
def _linear_part(y, ub, vb, fext, mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav,
                 fnode):
    # net force on every node (free DOFs then imposed ones) from gravity, external
    # forces, springs and dampers; a connection (a, b) acts as −F on a, +F on b
    nq = mass.size
    for i in range(fnode.size):
        fnode[i] = 0.0
    for i in range(nq):
        fnode[i] = mass[i] * grav
    for j in range(fdof.size):
        fnode[fdof[j]] += fext[j]
    for s in range(sk.size):
        a = sa[s]
        b = sb[s]
        F = sk[s] * (_pos(y, ub, a, nq) - _pos(y, ub, b, nq) - su0[s]) + spre[s]
        if a >= 0:
            fnode[a] -= F
        if b >= 0:
            fnode[b] += F
    for s in range(dc.size):
        a = da[s]
        b = db[s]
        F = dc[s] * (_vel(y, vb, a, nq) - _vel(y, vb, b, nq))
        if a >= 0:
            fnode[a] -= F
        if b >= 0:
            fnode[b] += F


@njit(cache=True)
def _finish(y, mass, fnode, dy):
    nq = mass.size
    for i in range(nq):
        dy[i] = y[nq + i]
        dy[nq + i] = fnode[i] / mass[i]


@njit(cache=True)
def _powers(y, vb, fext, mass, da, db, dc, fdof, Fel, Vel, fnode, pw):
    # integrands of the energy account, in the order: elements (F·v absorbed),
    # dampers (c·v² dissipated), external forces (f·ẋ input), imposed DOFs (input)
    nq = mass.size
    k = 0
    for e in range(Fel.size):
        pw[k] = Fel[e] * Vel[e]
        k += 1
    for s in range(dc.size):
        v = _vel(y, vb, da[s], nq) - _vel(y, vb, db[s], nq)
        pw[k] = dc[s] * v * v
        k += 1
    for j in range(fdof.size):
        pw[k] = fext[j] * y[nq + fdof[j]]
        k += 1
    for b in range(vb.size):
        pw[k] = -fnode[nq + b] * vb[b]
        k += 1


@njit(cache=True)
def _linear_jac(mass, sa, sb, sk, da, db, dc, J):
    # J (N, N) of the dynamic state; rows nq+i are ∂(ẍ_i)/∂y
    nq = mass.size
    for i in range(nq):
        J[i, nq + i] = 1.0
    for s in range(sk.size):
        a = sa[s]
        b = sb[s]
        k = sk[s]
        for (node, sg) in ((a, -1.0), (b, 1.0)):
            if 0 <= node < nq:
                if 0 <= a < nq:
                    J[nq + node, a] += sg * k / mass[node]
                if 0 <= b < nq:
                    J[nq + node, b] -= sg * k / mass[node]
    for s in range(dc.size):
        a = da[s]
        b = db[s]
        c = dc[s]
        for (node, sg) in ((a, -1.0), (b, 1.0)):
            if 0 <= node < nq:
                if 0 <= a < nq:
                    J[nq + node, nq + a] += sg * c / mass[node]
                if 0 <= b < nq:
                    J[nq + node, nq + b] -= sg * c / mass[node]


@njit(cache=True)
def _scatter_element(J, Je, n, o, a, b, nq, mass, has_rate):
    # element block: Je rows 0..n-1 = ∂ẋe/∂(xe, u, v), row n = ∂F/∂(xe, u, v);
    # u = x_a − x_b and v = ẋ_a − ẋ_b, so ∂/∂x_a = +∂/∂u, ∂/∂x_b = −∂/∂u
    if has_rate:
        for r in range(n):
            for c in range(n):
                J[o + r, o + c] += Je[r, c]
            if 0 <= a < nq:
                J[o + r, a] += Je[r, n]
                J[o + r, nq + a] += Je[r, n + 1]
            if 0 <= b < nq:
                J[o + r, b] -= Je[r, n]
                J[o + r, nq + b] -= Je[r, n + 1]
    for (node, sg) in ((a, -1.0), (b, 1.0)):
        if 0 <= node < nq:
            w = sg / mass[node]
            for c in range(n):
                J[nq + node, o + c] += w * Je[n, c]
            if 0 <= a < nq:
                J[nq + node, a] += w * Je[n, n]
                J[nq + node, nq + a] += w * Je[n, n + 1]
            if 0 <= b < nq:
                J[nq + node, b] -= w * Je[n, n]
                J[nq + node, nq + b] -= w * Je[n, n + 1]


# -- code generation ------------------------------------------------------------------------

_CORE_ARGS = ("t, y, ub, vb, fext, mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, "
              "ea, eb, eo, po, P")


def _gen_core(kinds, sizes):
    lines = [f"def core({_CORE_ARGS}, dy, Fel, Uel, Vel, fnode):",
             "    nq = mass.size",
             "    _linear_part(y, ub, vb, fext, mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, fnode)"]
    for e, (kind, n) in enumerate(zip(kinds, sizes)):
        lines += [
            f"    a = ea[{e}]",
            f"    b = eb[{e}]",
            "    u = _pos(y, ub, a, nq) - _pos(y, ub, b, nq)",
            "    v = _vel(y, vb, a, nq) - _vel(y, vb, b, nq)",
            f"    o = eo[{e}]",
            f"    xe = y[o:o + {n}]",
            f"    pe = P[po[{e}]:po[{e + 1}]]",
            f"    F = force_{e}(xe, u, v, pe)",
        ]
        if kind == "operator":
            lines.append(f"    dy[o:o + {n}] = 0.0")
        else:
            lines.append(f"    rate_{e}(xe, u, v, pe, dy[o:o + {n}])")
        lines += [f"    Fel[{e}] = F", f"    Uel[{e}] = u", f"    Vel[{e}] = v",
                  "    if a >= 0:", "        fnode[a] -= F",
                  "    if b >= 0:", "        fnode[b] += F"]
    lines.append("    _finish(y, mass, fnode, dy)")
    return "\n".join(lines) + "\n"


def _gen_jac(kinds, sizes):
    lines = [f"def jac({_CORE_ARGS}, J):",
             "    nq = mass.size",
             "    J[:, :] = 0.0",
             "    _linear_jac(mass, sa, sb, sk, da, db, dc, J)"]
    for e, (kind, n) in enumerate(zip(kinds, sizes)):
        lines += [
            f"    a = ea[{e}]", f"    b = eb[{e}]",
            "    u = _pos(y, ub, a, nq) - _pos(y, ub, b, nq)",
            "    v = _vel(y, vb, a, nq) - _vel(y, vb, b, nq)",
            f"    o = eo[{e}]",
            f"    Je = np.zeros(({n + 1}, {n + 2}))",
            f"    jac_{e}(y[o:o + {n}], u, v, P[po[{e}]:po[{e + 1}]], Je)",
            f"    _scatter_element(J, Je, {n}, o, a, b, nq, mass, {kind != 'operator'})",
        ]
    return "\n".join(lines) + "\n"


def _gen_forcing(fkinds, ukinds, vkinds):
    # kinds: "h" harmonic row of H*, "c" compiled callable global, "d" central difference
    lines = ["def forcing(t, HF, HU, HV, fext, ub, vb):"]
    for j, k in enumerate(fkinds):
        if k == "h":
            lines.append(f"    fext[{j}] = HF[{j}, 0] + HF[{j}, 1] * math.cos(HF[{j}, 2] * t + HF[{j}, 3])")
        else:
            lines.append(f"    fext[{j}] = fc_{j}(t)")
    for j, k in enumerate(ukinds):
        if k == "h":
            lines.append(f"    ub[{j}] = HU[{j}, 0] + HU[{j}, 1] * math.cos(HU[{j}, 2] * t + HU[{j}, 3])")
        else:
            lines.append(f"    ub[{j}] = uc_{j}(t)")
    for j, k in enumerate(vkinds):
        if k == "h":
            lines.append(f"    vb[{j}] = HV[{j}, 0] + HV[{j}, 1] * math.cos(HV[{j}, 2] * t + HV[{j}, 3])")
        elif k == "c":
            lines.append(f"    vb[{j}] = vc_{j}(t)")
        else:
            lines.append(f"    dlt = 1e-6 * (1.0 + abs(t))")
            lines.append(f"    vb[{j}] = (uc_{j}(t + dlt) - uc_{j}(t - dlt)) / (2.0 * dlt)")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _gen_module(kinds, sizes, refs, has_jac, ops_idx, harmonic):
    """Source of the per-structure module cached on disk (see _codegen.py): the element
    kernels are module globals imported by name, and the solver loops are copied in with
    core/forcing/ops as globals instead of arguments, so every function can be cached."""
    pkg = __name__.rpartition(".")[0]
    lines = ['"""Generated by hystmech for one assembly structure (see systems/_codegen.py)."""',
             "import math", "", "import numpy as np", "from numba import njit", "",
             f"from {pkg}._codegen import resolve",
             f"from {__name__} import (_pos, _vel, _linear_part, _finish, _linear_jac,",
             "    _scatter_element, _powers)", ""]
    for name, (mod, qual) in sorted(refs.items()):
        lines.append(f"{name} = resolve({mod!r}, {qual!r})")
    out = "\n".join(lines) + "\n\n"
    out += "\n@njit(cache=True)\n" + _gen_core(kinds, sizes)
    if has_jac:
        out += "\n\n@njit(cache=True)\n" + _gen_jac(kinds, sizes)
    out += "\n\n@njit(cache=True)\n" + _gen_ops(ops_idx)
    from .implicit import _projection_loop

    loops = [(_projection_loop, "projection"), (_eval_samples, "eval_samples")]
    if harmonic is not None:
        out += "\n\n@njit(cache=True)\n" + _gen_forcing(*harmonic)
        loops += [(_rhs_full, "_rhs_full"), (_rk45_loop, "rk45")]
    renames = {fn.py_func.__name__: name for fn, name in loops}
    for fn, _ in loops:
        out += "\n\n@njit(cache=True)\n" + _specialise(fn.py_func, renames)
    return out


_KERNEL_PARAMS = ("core", "forcing", "ops")


class _DropKernelArgs(ast.NodeTransformer):
    def __init__(self, renames):
        self.renames = renames

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.renames:
            node.func.id = self.renames[node.func.id]
            node.args = [a for a in node.args
                         if not (isinstance(a, ast.Name) and a.id in _KERNEL_PARAMS)]
        return node


_SPECIALISED: dict = {}


def _specialise(py_func, renames):
    """Source of a generic solver loop with its kernel parameters (core, forcing, ops)
    removed: in the generated module they are globals, which numba compiles in as
    direct calls. Passed as arguments, a dispatcher becomes a run-time object address
    and the function cannot be cached."""
    key = (py_func, tuple(sorted(renames.items())))
    if key in _SPECIALISED:
        return _SPECIALISED[key]
    fd = ast.parse(textwrap.dedent(inspect.getsource(py_func))).body[0]
    fd.decorator_list = []
    fd.name = renames[fd.name]
    fd.args.args = [a for a in fd.args.args if a.arg not in _KERNEL_PARAMS]
    fd = _DropKernelArgs(renames).visit(fd)
    _SPECIALISED[key] = ast.unparse(ast.fix_missing_locations(fd)) + "\n"
    return _SPECIALISED[key]


def _gen_ops(ops_idx):
    # ops_idx: (element index, n_states) of every operator element
    lines = ["def ops(y0, y1, ub0, ub1, dt, nq, ea, eb, eo, po, P, rtol):"]
    for e, n in ops_idx:
        lines += [f"    a = ea[{e}]", f"    b = eb[{e}]",
                  "    u0 = _pos(y0, ub0, a, nq) - _pos(y0, ub0, b, nq)",
                  "    u1 = _pos(y1, ub1, a, nq) - _pos(y1, ub1, b, nq)",
                  f"    o = eo[{e}]",
                  f"    for i in range({n}):",
                  "        y1[o + i] = y0[o + i]",
                  f"    advance_{e}(y1[o:o + {n}], u0, u1, dt, (u1 - u0) / dt, "
                  f"P[po[{e}]:po[{e + 1}]], rtol)"]
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


_CACHE: dict = {}


def _exec(src: str, glb: dict, name: str, compile_: bool):
    ns = dict(glb)
    exec(compile(src, f"<hystmech generated {name}>", "exec"), ns)
    fn = ns[name]
    return njit(fn) if compile_ else fn


def _jit_scalar(fn):
    """numba-compile a user callable t -> float, or None if numba rejects it."""
    if is_compiled(fn):
        return fn
    try:
        jf = njit(fn)
        float(jf(0.0))
        return jf
    except Exception:  # noqa: BLE001 - any numba failure falls back to Python
        return None


class Model:
    """Structure arrays of an Assembly plus its compiled core/jac/forcing functions."""

    def __init__(self, asm):
        from .assembly import GROUND, Harmonic

        self.asm = asm
        dofs = list(asm.dofs)
        imp = list(asm.imposed)
        self.dof_names, self.imposed_names = dofs, imp
        self.nq, self.nb = len(dofs), len(imp)
        if self.nq == 0:
            raise ValueError("the assembly has no degree of freedom (add_dof)")
        idx = {n: i for i, n in enumerate(dofs)}
        idx.update({n: self.nq + i for i, n in enumerate(imp)})
        idx[GROUND] = -1
        self.node_index = idx
        i64 = np.int64
        self.mass = np.array([asm.dofs[d].mass for d in dofs])
        self.sa = np.array([idx[s.a] for s in asm.springs], dtype=i64)
        self.sb = np.array([idx[s.b] for s in asm.springs], dtype=i64)
        self.sk = np.array([s.k for s in asm.springs], dtype=float)
        self.su0 = np.array([s.u0 for s in asm.springs], dtype=float)
        self.spre = np.array([s.preload for s in asm.springs], dtype=float)
        self.da = np.array([idx[d.a] for d in asm.dampers], dtype=i64)
        self.db = np.array([idx[d.b] for d in asm.dampers], dtype=i64)
        self.dc = np.array([d.c for d in asm.dampers], dtype=float)
        self.fdof = np.array([idx[f.dof] for f in asm.forces], dtype=i64)
        self.grav = float(asm.gravity)
        els = asm.elements
        self.ne = len(els)
        self.ea = np.array([idx[e.a] for e in els], dtype=i64)
        self.eb = np.array([idx[e.b] for e in els], dtype=i64)
        sizes = [e.element.n_states for e in els]
        self.sizes = sizes
        self.eo = np.array(2 * self.nq + np.concatenate([[0], np.cumsum(sizes)])[:-1]
                           if els else [], dtype=i64)
        self.po = np.concatenate([[0], np.cumsum([e.element.p.size for e in els])]).astype(i64)
        self.P = (np.concatenate([e.element.p for e in els]) if els else np.zeros(0)).astype(float)
        self.kinds = [e.element.kind for e in els]
        self.N = 2 * self.nq + int(sum(sizes))
        self.nquad = self.ne + len(asm.dampers) + len(asm.forces) + self.nb
        lo = np.full(self.N, -np.inf)
        hi = np.full(self.N, np.inf)
        for e, o, n in zip(els, self.eo, sizes):
            if e.element.kind == "inclusion":
                lo[o:o + n] = e.element.box_lo
                hi[o:o + n] = e.element.box_hi
        self.box_lo, self.box_hi = lo, hi
        xs = []
        for e, n in zip(els, sizes):
            s = e.element.x_scale
            xs.append(np.ones(n) if s is None else np.broadcast_to(np.asarray(s, float), (n,)))
        self.x_scale = np.concatenate(xs) if xs else np.zeros(0)

        # forcing: harmonic rows (numbers) or callables
        def harm_rows(items):
            H = np.zeros((len(items), 4))
            kinds = []
            for j, f in enumerate(items):
                if isinstance(f, Harmonic):
                    H[j] = (f.f0, f.amplitude, f.omega, f.phase)
                    kinds.append("h")
                elif f is None:
                    kinds.append("d")
                else:
                    kinds.append("c")
            return H, kinds

        self.f_funcs = [f.f for f in asm.forces]
        self.u_funcs = [asm.imposed[n].u for n in imp]
        self.v_funcs = [asm.imposed[n].v for n in imp]
        self.HF, self.fkinds = harm_rows(self.f_funcs)
        self.HU, self.ukinds = harm_rows(self.u_funcs)
        self.HV, self.vkinds = harm_rows(self.v_funcs)
        self._build()

    # -- compiled functions ---------------------------------------------------------------
    def _build(self):
        els = self.asm.elements
        kern = []
        for e in els:
            el = e.element
            kern.append((el.force, el.rate if el.kind != "operator" else None, el.jac,
                         el.advance, el.kind, el.n_states))
        key = ("core", tuple((id(k[0]), id(k[1]), id(k[2]), k[4], k[5]) for k in kern))
        self.compiled = all(is_compiled(k[0]) and (k[1] is None or is_compiled(k[1]))
                            for k in kern)
        self.has_jac = all(k[2] is not None for k in kern) and \
            all(is_compiled(k[2]) for k in kern if k[2] is not None)
        glb = {"np": np, "math": math, "_pos": _pos, "_vel": _vel,
               "_linear_part": _linear_part, "_finish": _finish,
               "_linear_jac": _linear_jac, "_scatter_element": _scatter_element}
        for i, k in enumerate(kern):
            glb[f"force_{i}"] = k[0] if self.compiled else getattr(k[0], "py_func", k[0])
            glb[f"rate_{i}"] = k[1] if self.compiled else getattr(k[1], "py_func", k[1])
            glb[f"jac_{i}"] = k[2]
            glb[f"advance_{i}"] = k[3]
        if not self.compiled:
            for name in ("_pos", "_vel", "_linear_part", "_finish", "_linear_jac",
                         "_scatter_element"):
                glb[name] = glb[name].py_func
        self.glb = glb
        kinds, sizes = self.kinds, self.sizes
        self.gen = None
        self.compile_cache = {"path": None, "reason": "element kernels not compiled"}
        if self.compiled:
            self.gen = self._load_generated(kern)
            if self.gen is not None:
                self.core = self.gen.core
                self.jac_fn = self.gen.jac if self.has_jac else None
                self._forcing = getattr(self.gen, "forcing", None)
                return
        if key in _CACHE and self.compiled:
            self.core, self.jac_fn = _CACHE[key]
        else:
            self.core = _exec(_gen_core(kinds, sizes), glb, "core", self.compiled)
            self.jac_fn = (_exec(_gen_jac(kinds, sizes), glb, "jac", True)
                           if self.has_jac and self.compiled else None)
            if self.compiled:
                _CACHE[key] = (self.core, self.jac_fn)
        self._forcing = None

    def _load_generated(self, kern):
        """The per-structure module from the disk cache (_codegen.py), or None when an
        element kernel is a run-time closure or the cache is not usable."""
        from . import _codegen

        refs = {}
        ops_idx = []
        for i, (force, rate, jac, advance, kind, n) in enumerate(kern):
            used = {f"force_{i}": force, f"rate_{i}": rate}
            if self.has_jac:
                used[f"jac_{i}"] = jac
            if kind == "operator":
                used[f"advance_{i}"] = advance
                ops_idx.append((i, n))
            for name, fn in used.items():
                if fn is None:
                    continue
                ref = _codegen.kernel_ref(fn)
                if ref is None:
                    self.compile_cache = {"path": None,
                                          "reason": f"{name} is not a module-level kernel"}
                    return None
                refs[name] = ref
        kinds = (tuple(self.fkinds), tuple(self.ukinds), tuple(self.vkinds))
        harmonic = kinds if all(k == "h" for ks in kinds for k in ks) else None
        try:
            src = _gen_module(self.kinds, self.sizes, refs, self.has_jac, ops_idx, harmonic)
        except (OSError, SyntaxError, TypeError) as e:   # e.g. no source of the loops
            self.compile_cache = {"path": None, "reason": f"no generated source ({e})"}
            return None
        mods = {__name__, __name__.rpartition(".")[0] + ".implicit"}
        mods |= {m for m, _ in refs.values()}
        mod, where = _codegen.load(src, sorted(mods))
        if mod is None:
            self.compile_cache = {"path": None, "reason": where}
            return None
        self.compile_cache = {"path": str(where), "reason": "cached on disk" + (
            "" if harmonic is not None else
            " (the RK45 loop is compiled in memory: an input is not a Harmonic)")}
        return mod

    def cache_hits(self) -> int:
        """How many compiled functions of this model numba loaded from its disk cache
        (rather than compiling them) in this process so far."""
        if self.gen is None:
            return 0
        return sum(sum(getattr(self.gen, n).stats.cache_hits.values())
                   for n in ("core", "jac", "ops", "projection", "eval_samples", "forcing",
                             "rk45") if hasattr(self.gen, n))

    def forcing_compiled(self):
        """numba forcing(t, HF, HU, HV, fext, ub, vb) or None when a user callable
        cannot be compiled."""
        if self._forcing is not None:
            return self._forcing
        glb = {"math": math}
        ids = []
        for prefix, funcs, kinds in (("fc", self.f_funcs, self.fkinds),
                                     ("uc", self.u_funcs, self.ukinds),
                                     ("vc", self.v_funcs, self.vkinds)):
            for j, (f, k) in enumerate(zip(funcs, kinds)):
                if k == "c":
                    jf = _jit_scalar(f)
                    if jf is None:
                        return None
                    glb[f"{prefix}_{j}"] = jf
                    ids.append(id(f))
                elif k == "d" and prefix == "vc":
                    if f"uc_{j}" not in glb:
                        return None  # harmonic u always comes with a harmonic v
        key = ("forcing", tuple(self.fkinds), tuple(self.ukinds), tuple(self.vkinds), tuple(ids))
        if key not in _CACHE:
            _CACHE[key] = _exec(_gen_forcing(self.fkinds, self.ukinds, self.vkinds), glb,
                                "forcing", True)
        self._forcing = _CACHE[key]
        return self._forcing

    def ops_present(self) -> bool:
        return any(k == "operator" for k in self.kinds)

    def ops_compiled(self):
        """numba ops(y0, y1, ub0, ub1, dt, ea, eb, eo, po, P, rtol): advance every
        operator element (relay, Preisach) over the step with its own memory update."""
        key = ("ops", tuple((id(e.element.advance), e.element.n_states) if e.element.kind == "operator"
                            else None for e in self.asm.elements))
        if self.gen is not None:
            return self.gen.ops
        if key in _CACHE:
            return _CACHE[key]
        ops_idx = [(e, el.element.n_states) for e, el in enumerate(self.asm.elements)
                   if el.element.kind == "operator"]
        fn = _exec(_gen_ops(ops_idx), self.glb, "ops", self.compiled)
        if self.compiled:
            _CACHE[key] = fn
        return fn

    # -- Python-side forcing (BDF, sampling) ------------------------------------------------
    def forcing_at(self, t: float):
        """(fext, ub, vb) at time t [s] from the user's callables."""
        fext = np.array([float(f(t)) for f in self.f_funcs]) if self.f_funcs else np.zeros(0)
        ub = np.array([float(u(t)) for u in self.u_funcs]) if self.u_funcs else np.zeros(0)
        vb = np.zeros(self.nb)
        for j, (u, v) in enumerate(zip(self.u_funcs, self.v_funcs)):
            if v is not None:
                vb[j] = float(v(t))
            else:
                d = 1e-6 * (1.0 + abs(t))
                vb[j] = (float(u(t + d)) - float(u(t - d))) / (2 * d)
        return fext, ub, vb

    def forcing_on(self, t: np.ndarray):
        """(FE (n, nf), UB (n, nb), VB (n, nb)) sampled on a time grid, vectorised when
        the callables accept arrays."""
        t = np.asarray(t, dtype=float)

        def sample_at(f, tt):
            try:
                r = np.asarray(f(tt), dtype=float)
                if r.shape == tt.shape:
                    return r
            except Exception:  # noqa: BLE001 - scalar-only callables
                pass
            jf = _jit_scalar(f)
            if jf is not None:
                return _sample_jit(jf, tt)
            return np.array([float(f(s)) for s in tt])

        def sample(f):
            return sample_at(f, t)

        n = t.size
        FE = np.empty((n, len(self.f_funcs)))
        for j, f in enumerate(self.f_funcs):
            FE[:, j] = sample(f)
        UB = np.empty((n, self.nb))
        VB = np.empty((n, self.nb))
        for j, (u, v) in enumerate(zip(self.u_funcs, self.v_funcs)):
            UB[:, j] = sample(u)
            if v is not None:
                VB[:, j] = sample(v)
            else:
                d = 1e-6 * (1.0 + np.abs(t))
                VB[:, j] = (sample_at(u, t + d) - sample_at(u, t - d)) / (2 * d)
        # non-finite inputs are not rejected here: the solvers stop at the first
        # non-finite state and report the time reached with the part computed
        return FE, UB, VB

    def eval_on(self, t, Y, FE, UB, VB):
        """Accelerations, element forces, u, v, node forces and energy integrands at
        every sample (rows of Y)."""
        if self.gen is not None:
            return self.gen.eval_samples(t, Y, FE, UB, VB, self.args(), self.ne, self.nq,
                                         self.nb, self.nquad, self.mass, self.da, self.db,
                                         self.dc, self.fdof)
        return _eval_samples(self.core, t, Y, FE, UB, VB, self.args(), self.ne, self.nq,
                             self.nb, self.nquad, self.mass, self.da, self.db, self.dc,
                             self.fdof) if self.compiled else \
            _eval_samples.py_func(self.core, t, Y, FE, UB, VB, self.args(), self.ne, self.nq,
                                  self.nb, self.nquad, self.mass, self.da, self.db, self.dc,
                                  self.fdof)

    def args(self):
        return (self.mass, self.sa, self.sb, self.sk, self.su0, self.spre, self.da, self.db,
                self.dc, self.fdof, self.grav, self.ea, self.eb, self.eo, self.po, self.P)


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _sample_jit(f, t):
    out = np.empty(t.size)
    for i in range(t.size):
        out[i] = f(t[i])
    return out


@njit
def _eval_samples(core, t, Y, FE, UB, VB, args, ne, nq, nb, nquad, mass, da, db, dc, fdof):
    n = t.size
    N = Y.shape[1]
    mass_, sa, sb, sk, su0, spre, da_, db_, dc_, fdof_, grav, ea, eb, eo, po, P = args
    A = np.empty((n, nq))
    F = np.empty((n, ne))
    U = np.empty((n, ne))
    V = np.empty((n, ne))
    FN = np.empty((n, nq + nb))
    PW = np.empty((n, nquad))
    dy = np.empty(N)
    Fel = np.empty(ne)
    Uel = np.empty(ne)
    Vel = np.empty(ne)
    fnode = np.empty(nq + nb)
    pw = np.empty(nquad)
    for i in range(n):
        y = Y[i].copy()
        core(t[i], y, UB[i], VB[i], FE[i], mass_, sa, sb, sk, su0, spre, da_, db_, dc_,
             fdof_, grav, ea, eb, eo, po, P, dy, Fel, Uel, Vel, fnode)
        _powers(y, VB[i], FE[i], mass, da, db, dc, fdof, Fel, Vel, fnode, pw)
        for j in range(nq):
            A[i, j] = dy[nq + j]
        for j in range(ne):
            F[i, j] = Fel[j]
            U[i, j] = Uel[j]
            V[i, j] = Vel[j]
        for j in range(nq + nb):
            FN[i, j] = fnode[j]
        for j in range(nquad):
            PW[i, j] = pw[j]
    return A, F, U, V, FN, PW


# ==========================================================================================
# results
# ==========================================================================================

class SimulationError(RuntimeError):
    """A simulation that could not reach t_end: ``t_reached`` [s] is the last time
    computed and ``partial`` the :class:`SimResult` up to it."""

    def __init__(self, message, t_reached, partial=None):
        super().__init__(message)
        self.t_reached = t_reached
        self.partial = partial


def _stored_energy(el, X, U):
    """Energy stored in an element [J] at states X (n, n_states) and deflections U (n,)
    (the element's declared ``stored_energy``), or None."""
    return el.stored_energy(X, U)


class SimResult:
    """Result of :func:`simulate` (arrays over the output times ``t``).

    ``x(dof)``, ``v(dof)``, ``a(dof)`` [m, m/s, m/s²]; ``force(element)`` [N] and
    ``state(element)``; ``y`` the full state (columns ``names``); ``signals()`` every
    named signal; ``energy()`` the energy account; ``method``, ``stats``, ``message``.
    """

    def __init__(self, model, t, Y, Q, method, stats, message="", success=True):
        self.model = model
        self.assembly = model.asm
        self.t = np.asarray(t, dtype=float)
        self.y = np.asarray(Y, dtype=float)
        self.quad = None if Q is None else np.asarray(Q, dtype=float)
        self.method = method
        self.stats = dict(stats)
        self.message = message
        self.success = success
        self.names = model.asm.state_names()
        self._ev = None

    def __len__(self):
        return self.t.size

    def _eval(self):
        if self._ev is None:
            m = self.model
            FE, UB, VB = m.forcing_on(self.t)
            A, F, U, V, FN, PW = m.eval_on(self.t, np.ascontiguousarray(self.y), FE, UB, VB)
            self._ev = dict(FE=FE, UB=UB, VB=VB, A=A, F=F, U=U, V=V, FN=FN, PW=PW)
        return self._ev

    def _dof(self, name):
        m = self.model
        if name in m.dof_names:
            return m.dof_names.index(name)
        raise KeyError(f"no DOF {name!r}; DOFs: {', '.join(m.dof_names)}")

    def _el(self, name):
        names = [e.name for e in self.assembly.elements]
        if name in names:
            return names.index(name)
        raise KeyError(f"no element {name!r}; elements: {', '.join(names)}")

    def x(self, dof: str) -> np.ndarray:
        """Position [m] of a DOF (free or imposed)."""
        if dof in self.model.imposed_names:
            return self._eval()["UB"][:, self.model.imposed_names.index(dof)]
        return self.y[:, self._dof(dof)]

    def v(self, dof: str) -> np.ndarray:
        """Velocity [m/s] of a DOF (free or imposed)."""
        if dof in self.model.imposed_names:
            return self._eval()["VB"][:, self.model.imposed_names.index(dof)]
        return self.y[:, self.model.nq + self._dof(dof)]

    def a(self, dof: str) -> np.ndarray:
        """Acceleration [m/s²] of a free DOF, from the equations of motion."""
        return self._eval()["A"][:, self._dof(dof)]

    def force(self, element: str) -> np.ndarray:
        """Force F [N] of an element, spring or damper (acting −F on a, +F on b)."""
        names = [e.name for e in self.assembly.elements]
        if element in names:
            return self._eval()["F"][:, names.index(element)]
        for s in self.assembly.springs:
            if s.name == element:
                return s.k * (self.rel(s.a, s.b)[0] - s.u0) + s.preload
        for d in self.assembly.dampers:
            if d.name == element:
                return d.c * self.rel(d.a, d.b)[1]
        for j, f in enumerate(self.assembly.forces):
            if f.name == element:
                return self._eval()["FE"][:, j]
        raise KeyError(f"no element, spring, damper or force {element!r}")

    def rel(self, a: str, b: str):
        """(u, v) = (x_a − x_b, ẋ_a − ẋ_b) [m, m/s]; "ground" is 0."""
        def xv(n):
            if n == "ground":
                return 0.0, 0.0
            return self.x(n), self.v(n)
        xa, va = xv(a)
        xb, vb = xv(b)
        return xa - xb + 0 * self.t, va - vb + 0 * self.t

    def deflection(self, element: str):
        """(u, v) seen by an element [m, m/s]."""
        i = self._el(element)
        ev = self._eval()
        return ev["U"][:, i], ev["V"][:, i]

    def state(self, element: str) -> np.ndarray:
        """States of an element, shape (n, n_states)."""
        i = self._el(element)
        o = int(self.model.eo[i])
        return self.y[:, o:o + self.model.sizes[i]]

    def signals(self) -> dict:
        """Every named signal as 1-D arrays (for CSV): t, DOF x/v/a, imposed x/v,
        element F and states, spring and damper forces."""
        out = {"t": self.t}
        for d in self.model.dof_names:
            out[f"{d}.x"] = self.x(d)
            out[f"{d}.v"] = self.v(d)
            out[f"{d}.a"] = self.a(d)
        for d in self.model.imposed_names:
            out[f"{d}.x"] = self.x(d)
            out[f"{d}.v"] = self.v(d)
        for s in self.assembly.springs:
            out[f"{s.name}.F"] = self.force(s.name)
        for s in self.assembly.dampers:
            out[f"{s.name}.F"] = self.force(s.name)
        ns = 2 * self.model.nq
        for i, e in enumerate(self.assembly.elements):
            out[f"{e.name}.F"] = self._eval()["F"][:, i]
            nrep = min(e.element.n_states, e.element.n_report_states)
            for j in range(nrep):
                out[self.names[ns + j]] = self.y[:, ns + j]
            ns += e.element.n_states
        return out

    def energy(self) -> dict:
        """Energy account [J] at the output times (Bastien et al. (2007) rig, §4.1).

        kinetic Σ½m·ẋ²; potential = springs Σ(½k(u − u0)² + preload·u) + gravity
        Σ(−m·g·x) + energy stored in elements that report it; input = work of external
        forces ∫f·ẋ dt + work of imposed motions ∫(−R)·ẋ dt (R: force of the
        connections on the imposed DOF); absorbed[element] = ∫F·v dt;
        dissipated[element] = absorbed − Δstored; dissipated[damper] = ∫c·v² dt.
        ``residual`` = input − (Δkinetic + Δpotential + Σ dissipated), ≈ 0.
        """
        m = self.model
        asm = self.assembly
        nq = m.nq
        if self.quad is None:
            raise ValueError("this result was computed with energy=False")
        Q = self.quad - self.quad[0]
        kin = 0.5 * (m.mass * self.y[:, nq:2 * nq] ** 2).sum(axis=1)
        pot_s = np.zeros(self.t.size)
        for s in asm.springs:
            u = self.rel(s.a, s.b)[0]
            pot_s += 0.5 * s.k * (u - s.u0) ** 2 + s.preload * u
        pot_g = -(m.mass * m.grav * self.y[:, :nq]).sum(axis=1)
        out = {"t": self.t, "kinetic": kin, "potential_springs": pot_s,
               "potential_gravity": pot_g, "absorbed": {}, "stored": {}, "dissipated": {},
               "work_forces": {}, "work_imposed": {}}
        k = 0
        ev = self._eval()
        stored_total = np.zeros(self.t.size)
        for i, e in enumerate(asm.elements):
            W = Q[:, k]
            k += 1
            out["absorbed"][e.name] = W
            st = _stored_energy(e.element, self.state(e.name), ev["U"][:, i])
            if st is not None:
                out["stored"][e.name] = st
                stored_total += st
                out["dissipated"][e.name] = W - (st - st[0])
            else:
                out["dissipated"][e.name] = W
        for d in asm.dampers:
            out["dissipated"][d.name] = Q[:, k]
            k += 1
        for f in asm.forces:
            out["work_forces"][f.name] = Q[:, k]
            k += 1
        for b in m.imposed_names:
            out["work_imposed"][b] = Q[:, k]
            k += 1
        inp = sum(out["work_forces"].values(), np.zeros(self.t.size)) + \
            sum(out["work_imposed"].values(), np.zeros(self.t.size))
        pot = pot_s + pot_g + stored_total
        diss = sum(out["dissipated"].values(), np.zeros(self.t.size))
        out["potential"] = pot
        out["input"] = inp
        out["dissipated_total"] = diss
        out["residual"] = inp - ((kin - kin[0]) + (pot - pot[0]) + diss)
        return out

    def energy_error(self) -> float:
        """max |residual| / max(energy scale): relative error of the energy balance."""
        e = self.energy()
        scale = max(np.max(np.abs(e["input"])), np.max(np.abs(e["kinetic"] - e["kinetic"][0])),
                    np.max(np.abs(e["potential"] - e["potential"][0])),
                    np.max(np.abs(e["dissipated_total"])), 1e-300)
        return float(np.max(np.abs(e["residual"])) / scale)

    def __repr__(self):
        return (f"SimResult(method={self.method!r}, n={self.t.size}, "
                f"t=[{self.t[0]:g}, {self.t[-1]:g}], success={self.success})")


# ==========================================================================================
# scipy BDF (and any solve_ivp method)
# ==========================================================================================

def _jac_sparsity(model):
    N, nquad = model.N, model.nquad
    S = np.zeros((N + nquad, N + nquad), dtype=bool)
    nq = model.nq
    for i in range(nq):
        S[i, nq + i] = True
    dyn = list(range(N))
    S[nq:2 * nq, :N] = True         # accelerations may depend on anything
    for o, n in zip(model.eo, model.sizes):
        S[o:o + n, :2 * nq] = True
        S[o:o + n, o:o + n] = True
    del dyn
    return S


def _run_scipy(model, t0, t1, y0, method, t_eval, energy, opts):
    from scipy.integrate import solve_ivp

    N, nq, nquad = model.N, model.nq, model.nquad
    args = model.args()
    dy = np.empty(N)
    Fel = np.empty(model.ne)
    Uel = np.empty(model.ne)
    Vel = np.empty(model.ne)
    fnode = np.empty(nq + model.nb)
    pw = np.empty(nquad)
    nq_ = nquad if energy else 0
    last = [t0]

    def fun(t, z):
        fext, ub, vb = model.forcing_at(t)
        y = z[:N]
        model.core(t, y, ub, vb, fext, *args, dy, Fel, Uel, Vel, fnode)
        out = np.empty(N + nq_)
        out[:N] = dy
        if energy:
            _powers(y, vb, fext, model.mass, model.da, model.db, model.dc, model.fdof,
                    Fel, Vel, fnode, pw)
            out[N:] = pw
        if not np.all(np.isfinite(out)):
            raise _NonFinite(t)
        last[0] = t
        return out

    opts = dict(opts)
    if method in ("BDF", "Radau", "LSODA") and "jac" not in opts:
        if model.jac_fn is not None:
            Jd = np.zeros((N, N))

            def jac(t, z):
                fext, ub, vb = model.forcing_at(t)
                model.jac_fn(t, z[:N], ub, vb, fext, *args, Jd)
                J = np.zeros((N + nq_, N + nq_))
                J[:N, :N] = Jd
                return J
            opts["jac"] = jac
        else:
            S = _jac_sparsity(model)
            opts["jac_sparsity"] = S[:N + nq_, :N + nq_]
    rtol = opts.pop("rtol", 1e-8)
    atol = opts.pop("atol", None)
    if atol is None:
        atol = _default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (N,)).copy()
    if energy:
        atol = np.concatenate([atol, np.full(nquad, 1e30)])  # quadratures: no error control
    z0 = np.concatenate([y0, np.zeros(nq_)])
    try:
        sol = solve_ivp(fun, (t0, t1), z0, method=method, t_eval=t_eval, rtol=rtol, atol=atol,
                        **opts)
    except _NonFinite as e:
        raise SimulationError(f"{method}: non-finite state derivative at t = {e.t!r} s "
                              f"(reached t = {last[0]!r} s); check the parameters",
                              last[0]) from None
    Y = sol.y[:N].T
    Q = sol.y[N:].T if energy else None
    stats = {"nfev": int(sol.nfev), "njev": int(sol.njev), "nlu": int(sol.nlu)}
    return sol.t, Y, Q, stats, sol.status == 0, sol.message


class _NonFinite(Exception):
    def __init__(self, t):
        self.t = t


def _default_atol(model, rtol):
    # DOF positions 1e-12 m and velocities 1e-10 m/s absolute floors; element states
    # relative to their natural size
    nq = model.nq
    return np.concatenate([np.full(nq, 1e-12), np.full(nq, 1e-10), rtol * model.x_scale])


# ==========================================================================================
# compiled adaptive Dormand-Prince 5(4) with dense output
# ==========================================================================================

_A = np.array([[0, 0, 0, 0, 0],
               [1 / 5, 0, 0, 0, 0],
               [3 / 40, 9 / 40, 0, 0, 0],
               [44 / 45, -56 / 15, 32 / 9, 0, 0],
               [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0],
               [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]])
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0])
_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84])
_E = np.array([-71 / 57600, 0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
_P = np.array([
    [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0, 0, 0, 0],
    [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]])


@njit
def _rhs_full(core, forcing, t, z, args, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel, fnode,
              pw, out, N, energy):
    mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, ea, eb, eo, po, P = args
    forcing(t, HF, HU, HV, fext, ub, vb)
    y = z[:N]
    core(t, y, ub, vb, fext, mass, sa, sb, sk, su0, spre, da, db, dc, fdof, grav, ea, eb, eo,
         po, P, dy, Fel, Uel, Vel, fnode)
    for i in range(N):
        out[i] = dy[i]
    if energy:
        _powers(y, vb, fext, mass, da, db, dc, fdof, Fel, Vel, fnode, pw)
        for i in range(pw.size):
            out[N + i] = pw[i]


@njit
def _rk45_loop(core, forcing, t0, t1, z0, args, HF, HU, HV, nf, nb, ne, nquad, N, energy,
               rtol, atol, h_init, max_step, t_eval, max_steps, Amat, Cv, Bv, Ev, Pm):
    M = z0.size
    nq = args[0].size
    fext = np.empty(nf)
    ub = np.empty(nb)
    vb = np.empty(nb)
    dy = np.empty(N)
    Fel = np.empty(ne)
    Uel = np.empty(ne)
    Vel = np.empty(ne)
    fnode = np.empty(nq + nb)
    pw = np.empty(nquad)
    K = np.empty((7, M))
    z = z0.copy()
    zn = np.empty(M)
    zs = np.empty(M)
    record_all = t_eval.size == 0
    cap = 1024 if record_all else t_eval.size
    Tout = np.empty(cap)
    Zout = np.empty((cap, M))
    nout = 0
    ie = 0
    if record_all:
        Tout[0] = t0
        Zout[0] = z
        nout = 1
    else:
        while ie < t_eval.size and t_eval[ie] <= t0:
            Tout[nout] = t_eval[ie]
            Zout[nout] = z
            nout += 1
            ie += 1
    t = t0
    _rhs_full(core, forcing, t, z, args, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel, fnode,
              pw, K[0], N, energy)
    nfev = 1
    # initial step (Hairer, Nørsett & Wanner, II.4)
    if h_init > 0:
        h = h_init
    else:
        d0 = 0.0
        d1 = 0.0
        for i in range(N):
            sc = atol[i] + rtol * abs(z[i])
            d0 += (z[i] / sc) ** 2
            d1 += (K[0, i] / sc) ** 2
        d0 = math.sqrt(d0 / N)
        d1 = math.sqrt(d1 / N)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        h0 = min(h0, t1 - t0)
        for i in range(M):
            zs[i] = z[i] + h0 * K[0, i]
        _rhs_full(core, forcing, t + h0, zs, args, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel,
                  fnode, pw, K[1], N, energy)
        nfev += 1
        d2 = 0.0
        for i in range(N):
            sc = atol[i] + rtol * abs(z[i])
            d2 += ((K[1, i] - K[0, i]) / sc) ** 2
        d2 = math.sqrt(d2 / N) / h0
        if max(d1, d2) <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** 0.2
        h = min(100 * h0, h1)
    h = min(h, max_step)
    status = 0
    nsteps = 0
    nrej = 0
    while t < t1:
        if nsteps >= max_steps:
            status = 3
            break
        if t + h > t1:
            h = t1 - t
        if h < 10.0 * 2.2e-16 * max(abs(t), 1e-300):
            status = 1
            break
        for s in range(1, 6):
            for i in range(M):
                acc = 0.0
                for j in range(s):
                    acc += Amat[s, j] * K[j, i]
                zs[i] = z[i] + h * acc
            _rhs_full(core, forcing, t + Cv[s] * h, zs, args, HF, HU, HV, fext, ub, vb, dy,
                      Fel, Uel, Vel, fnode, pw, K[s], N, energy)
        for i in range(M):
            acc = 0.0
            for j in range(6):
                acc += Bv[j] * K[j, i]
            zn[i] = z[i] + h * acc
        _rhs_full(core, forcing, t + h, zn, args, HF, HU, HV, fext, ub, vb, dy, Fel, Uel, Vel,
                  fnode, pw, K[6], N, energy)
        nfev += 6
        err = 0.0
        finite = True
        for i in range(N):
            e = 0.0
            for j in range(7):
                e += Ev[j] * K[j, i]
            e *= h
            sc = atol[i] + rtol * max(abs(z[i]), abs(zn[i]))
            err += (e / sc) ** 2
            if not math.isfinite(zn[i]):
                finite = False
        err = math.sqrt(err / N)
        if not finite or not math.isfinite(err):
            if h < 1e-12 * max(1.0, abs(t)):
                status = 2
                break
            h *= 0.1
            nrej += 1
            continue
        if err <= 1.0:
            tn = t + h
            # outputs in (t, tn] from the free 4th-order continuous extension
            if record_all:
                if nout == cap:
                    cap *= 2
                    T2 = np.empty(cap)
                    Z2 = np.empty((cap, M))
                    T2[:nout] = Tout[:nout]
                    Z2[:nout] = Zout[:nout]
                    Tout = T2
                    Zout = Z2
                Tout[nout] = tn
                Zout[nout] = zn
                nout += 1
            else:
                while ie < t_eval.size and t_eval[ie] <= tn:
                    th = (t_eval[ie] - t) / h
                    for i in range(M):
                        q = 0.0
                        for k in range(4):
                            pk = 0.0
                            for j in range(7):
                                pk += K[j, i] * Pm[j, k]
                            q += pk * th ** (k + 1)
                        Zout[nout, i] = z[i] + h * q
                    Tout[nout] = t_eval[ie]
                    nout += 1
                    ie += 1
            t = tn
            for i in range(M):
                z[i] = zn[i]
                K[0, i] = K[6, i]
            nsteps += 1
            fac = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** -0.2)
            h = min(h * fac, max_step)
        else:
            nrej += 1
            h *= max(0.2, 0.9 * err ** -0.2)
    return status, t, Tout[:nout], Zout[:nout], nfev, nsteps, nrej


def _run_rk45(model, t0, t1, y0, t_eval, energy, opts):
    forcing = model.forcing_compiled()
    if forcing is None or not model.compiled:
        raise ValueError("method='RK45' (compiled) needs numba-compilable forces, imposed "
                         "motions and element kernels; use Harmonic inputs or "
                         "method='BDF'")
    opts = dict(opts)
    rtol = float(opts.pop("rtol", 1e-6))
    if not (0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    atol = opts.pop("atol", None)
    if atol is None:
        atol = _default_atol(model, rtol)
    atol = np.broadcast_to(np.asarray(atol, float), (model.N,)).copy()
    max_step = float(opts.pop("max_step", np.inf))
    if not max_step > 0:
        raise ValueError(f"max_step must be > 0 (got {max_step!r})")
    first_step = float(opts.pop("first_step", 0.0) or 0.0)
    max_steps = int(opts.pop("max_steps", 50_000_000))
    if opts:
        raise ValueError(f"unknown option {next(iter(opts))!r} for method 'RK45'; allowed: "
                         "rtol, atol, max_step, first_step, max_steps")
    nquad = model.nquad if energy else 0
    z0 = np.concatenate([y0, np.zeros(nquad)])
    te = np.zeros(0) if t_eval is None else np.ascontiguousarray(t_eval, dtype=float)
    gen = model.gen
    loop = gen.rk45 if gen is not None and hasattr(gen, "rk45") else \
        (lambda *a: _rk45_loop(model.core, forcing, *a))
    status, t_r, T, Z, nfev, nsteps, nrej = loop(
        float(t0), float(t1), z0, model.args(), model.HF, model.HU,
        model.HV, len(model.f_funcs), model.nb, model.ne, model.nquad, model.N, energy, rtol,
        atol, first_step, max_step, te, max_steps, _A, _C, _B, _E, _P)
    msgs = {0: "the end of the time span was reached",
            1: "step size fell below machine resolution",
            2: "non-finite state",
            3: "too many steps (max_steps)"}
    stats = {"nfev": int(nfev), "nsteps": int(nsteps), "nrejected": int(nrej)}
    return T, Z[:, :model.N], (Z[:, model.N:] if energy else None), stats, status == 0, \
        msgs[status], t_r


def _run_stiff(*a):
    from .methods._adapter_stiff import run_stiff  # compiled Radau IIA 5 and DP/Radau auto

    return run_stiff(*a)


# ==========================================================================================
# the one entry point
# ==========================================================================================

METHODS = ("auto", "BDF", "Radau", "LSODA", "RK45", "radau5", "projection", "event")


def _check_span(t_span):
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"t_span must be (t_start, t_end) in s (got {t_span!r})") from None
    if not (np.isfinite(t0) and np.isfinite(t1)):
        raise ValueError(f"t_span must be finite (got {t_span!r})")
    if t1 <= t0:
        raise ValueError(f"t_span: t_end must be > t_start (got t_start = {t0!r}, t_end = {t1!r})")
    return t0, t1


def _initial(asm, model, x0):
    y0 = asm.initial_state()
    if x0 is None:
        return y0
    names = asm.state_names()
    if isinstance(x0, dict):
        y0 = y0.copy()
        for key, val in x0.items():
            key = str(key)
            if key in model.dof_names:          # "m1": position, or (position, velocity)
                vals = np.atleast_1d(np.asarray(val, float))
                i = model.dof_names.index(key)
                y0[i] = vals[0]
                if vals.size > 1:
                    y0[model.nq + i] = vals[1]
            elif key in [e.name for e in asm.elements]:
                i = [e.name for e in asm.elements].index(key)
                vals = np.atleast_1d(np.asarray(val, float))
                if vals.size != model.sizes[i]:
                    raise ValueError(f"x0[{key!r}] must have {model.sizes[i]} component(s)")
                y0[model.eo[i]:model.eo[i] + model.sizes[i]] = vals
            elif key in names:
                y0[names.index(key)] = float(val)
            else:
                raise ValueError(f"x0: unknown DOF, element or state {key!r}; states: "
                                 f"{', '.join(names)}")
    else:
        y0 = np.asarray(x0, dtype=float).ravel()
        if y0.size != model.N:
            raise ValueError(f"x0 must have {model.N} components ({', '.join(names)}); "
                             f"got {y0.size}")
    if not np.all(np.isfinite(y0)):
        i = int(np.flatnonzero(~np.isfinite(y0))[0])
        raise ValueError(f"x0 must be finite ({names[i]} = {y0[i]!r})")
    lo, hi = model.box_lo, model.box_hi
    bad = (y0 < lo - 1e-12 * np.maximum(1, np.abs(lo))) | (y0 > hi + 1e-12 * np.maximum(1, np.abs(hi)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"x0: {names[i]} = {y0[i]!r} is outside its box [{lo[i]!r}, {hi[i]!r}]")
    return np.clip(y0, lo, hi)


def simulate(assembly, t_span, x0=None, method: str = "auto", t_eval=None, *,
             energy: bool = True, progress=None, **options) -> SimResult:
    """Integrate an :class:`~hystmech.systems.Assembly` over t_span = (t_start, t_end) [s].

    method:
      ``"auto"``: ``"projection"`` when an inclusion (Masing, Maxwell-slip) or an
      operator (relay, Preisach) is present, else compiled Dormand-Prince 5(4)
      switching to Radau IIA 5 while stiff (systems/methods/auto.py; scipy ``"BDF"``
      when an input cannot be compiled); options rtol (1e-8), atol, max_step,
      first_step, max_steps.
      ``"radau5"``: compiled Radau IIA order 5 (Hairer & Wanner (1996), §IV.8) with
      the analytic Jacobian; same options.
      ``"BDF"`` (also ``"Radau"``, ``"LSODA"``): scipy.integrate.solve_ivp with the
      analytic Jacobian assembled from the elements' jac kernels (or a sparse
      finite-difference Jacobian when an element has none); options rtol (1e-8), atol,
      max_step, first_step ...
      ``"RK45"``: compiled adaptive Dormand-Prince 5(4) with dense output, for smooth
      rigs where scipy's Python overhead dominates; options rtol (1e-6), atol,
      max_step, first_step, max_steps.
      ``"projection"``: the first-order implicit scheme of Bastien et al. (2007),
      eqs. (A.7)-(A.9), compiled; options h [s] (default 1e-5, eq. (57)), rtol of the
      operators' advance.
      ``"event"``: event-driven reference for inclusions (each box component held on
      its face or free, switches located by root finding, smooth pieces by scipy
      DOP853 at rtol 1e-10): accurate but Python-driven; options integrator, rtol,
      atol, max_events, max_step.
    x0: full state vector (names: ``assembly.state_names()``) or a dict
    {dof: x or (x, v), element: state, "dof.v": v}; default from the assembly.
    t_eval: output times (default: every step, thinned to ≤ 200 001 points for the
    projection scheme). energy: also integrate the energy account (see
    :meth:`SimResult.energy`). Raises :class:`SimulationError` (with ``.partial``
    and ``.t_reached``) when the solver fails or the state becomes non-finite.
    """
    from .assembly import Assembly

    if not isinstance(assembly, Assembly):
        raise ValueError(f"assembly must be a hystmech.systems.Assembly (got {type(assembly).__name__})")
    t0, t1 = _check_span(t_span)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (got {method!r})")
    model = Model(assembly)
    y0 = _initial(assembly, model, x0)
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float).ravel()
        if t_eval.size == 0 or not np.all(np.isfinite(t_eval)) or np.any(np.diff(t_eval) <= 0) \
                or t_eval[0] < t0 or t_eval[-1] > t1:
            raise ValueError(f"t_eval must be strictly increasing finite times within "
                             f"t_span = [{t0!r}, {t1!r}]")
    if method == "auto" and not assembly.smooth:
        method = "projection"
    if method not in ("projection", "event") and not assembly.smooth:
        bad = [e.name for e in assembly.elements if e.element.kind != "smooth"]
        raise ValueError(f"method {method!r} needs smooth elements only; {', '.join(bad)} "
                         f"{'is' if len(bad) == 1 else 'are'} non-smooth: use method='projection'")
    if progress is not None:
        progress(0.0, f"simulating {assembly!r} with {method}")
    if method == "projection":
        from .implicit import run_projection

        T, Y, Q, stats, ok, msg, t_r = run_projection(model, t0, t1, y0, t_eval, energy, options)
    elif method == "event":
        from .implicit import run_event

        T, Y, Q, stats, ok, msg, t_r = run_event(model, t0, t1, y0, t_eval, energy, options)
    elif method == "RK45":
        T, Y, Q, stats, ok, msg, t_r = _run_rk45(model, t0, t1, y0, t_eval, energy, options)
    elif method in ("radau5", "auto") and (r := _run_stiff(model, method, t0, t1, y0, t_eval,
                                                           energy, options)) is not None:
        T, Y, Q, stats, ok, msg, t_r = r
    else:
        method = "BDF" if method == "auto" else method   # inputs not compilable
        T, Y, Q, stats, ok, msg = _run_scipy(model, t0, t1, y0, method, t_eval, energy, options)
        t_r = float(T[-1]) if len(T) else t0
    res = SimResult(model, T, Y, Q, method, stats, msg, ok)
    if ok and (Y.size and not np.all(np.isfinite(Y))):
        i = int(np.flatnonzero(~np.all(np.isfinite(Y), axis=1))[0])
        ok = False
        msg = "non-finite state"
        t_r = float(T[i])
        res = SimResult(model, T[:i], Y[:i], None if Q is None else Q[:i], method, stats, msg, False)
    if not ok:
        raise SimulationError(f"{method} failed at t = {t_r!r} s of [{t0!r}, {t1!r}]: {msg}; "
                              f"the part computed so far is in .partial", t_r, res)
    if progress is not None:
        progress(1.0, "done")
    return res
