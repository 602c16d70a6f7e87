"""The compiled model of an :class:`~hystmech.systems.Assembly`.

:class:`Model` turns an assembly into (i) its *structure* (connection indices, element
kernels and state sizes, kinds of the inputs), compiled once per structure by
:mod:`~hystmech.systems.codegen` into :attr:`Model.code`, and (ii) its *numbers*, the
:class:`Params` record passed to the compiled code, so a parameter sweep reuses the
machine code. State vector y = (DOF positions, DOF velocities, element states).
The structure is also kept as arrays in the Params record, which the generic engine
(:mod:`~hystmech.systems.methods.engine`, compiled once per install) reads at run time:
:meth:`Model.engine` says whether this model runs there (no compile for a new structure)
or in its generated code (chosen as a tiered JIT chooses: methods/engine.py for_model).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
from numba import njit

from ..components.base import is_compiled, python_of
from .assembly import GROUND, Harmonic
from . import codegen as _codegen
from .codegen import Layout, Params, build  # noqa: F401  (Params: re-exported)
from .compile_cache import cache_dir, cached_on_disk, find_stamped, kernel_ref, record_stamp
from .methods import engine as _engine
from .observers import first_time, new_observer, observe
from .templates import templates


# the structure arrays' codes (Params.EL, KI, OB)
KIND_CODE = {"smooth": 0, "inclusion": 1, "operator": 2}
INPUT_CODE = {"h": 0, "t": 1}
OBSERVED_CODE = {"spring": 0, "damper": 1, "element": 2}

_JITTED: dict = {}
_BY_SOURCE: dict = {}  # _source_key -> jitted: the same lambda written in a loop or a builder
_CODE: dict = {}      # structure key -> (compiled, kernels, callback, Compiled)
_PLAIN = (int, float, complex, bool, str, type(None))


def _source_key(fn):
    """(key, referenced objects): a key under which a new function object compiles to
    the same machine code as an earlier one — its code object and everything numba
    freezes into the machine code (closure cells, defaults and the globals it names, by
    value for numbers and by identity for modules and functions, which the cache keeps
    alive so their ids stay theirs). (None, ()) when that cannot be told (arrays or
    other mutable values among them, nested functions)."""
    code = getattr(fn, "__code__", None)
    if code is None or any(hasattr(c, "co_code") for c in code.co_consts):
        return None, ()
    vals, refs = [], []
    glb = getattr(fn, "__globals__", {})
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    for v in (*cells, *(fn.__defaults__ or ()), *(glb.get(n, KeyError) for n in code.co_names)):
        if isinstance(v, _PLAIN):
            vals.append((type(v), v))
        elif v is KeyError or callable(v) or type(v).__name__ == "module":
            vals.append(id(v))
            refs.append(v)
        else:
            return None, ()
    return (code, id(glb), tuple(vals)), (glb, *refs)


def _jit_scalar(fn):
    """numba-compile a user callable t -> float, or None if numba rejects it (memoised
    per callable and per source, so repeated simulations reuse the compiled input, also
    when a builder makes a new lambda each time)."""
    if is_compiled(fn):
        return fn
    hit = _JITTED.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    skey, refs = _source_key(fn)
    if skey is not None and skey in _BY_SOURCE:
        jf = _BY_SOURCE[skey][1]
    else:
        try:
            jf = njit(fn)
            float(jf(0.0))
        except Exception:  # noqa: BLE001 - any numba failure: sampled by Python instead
            jf = None
        if skey is not None:
            if len(_BY_SOURCE) > 1024:
                _BY_SOURCE.clear()
            _BY_SOURCE[skey] = (refs, jf)
    if len(_JITTED) > 4096:
        _JITTED.clear()
    _JITTED[id(fn)] = (fn, jf)
    return jf


def _harm_rows(items, jitted):
    """(H (n, 4), kinds): "h" Harmonic (numbers in H), "c" compiled callable, "t"
    Python callable sampled on the step grid, "d" (velocities) central difference."""
    H = np.zeros((len(items), 4))
    kinds = []
    for j, f in enumerate(items):
        if isinstance(f, Harmonic):
            H[j] = (f.f0, f.amplitude, f.omega, f.phase)
            kinds.append("h")
        elif f is None:
            kinds.append("d")
        else:
            jf = _jit_scalar(f)
            jitted.append(jf)
            kinds.append("c" if jf is not None else "t")
    return H, kinds


class Model:
    """Structure, numbers and compiled code of an Assembly (see the module docstring).

    observe: connection names (springs, dampers, elements) whose forces are summed into
    the signal the observers watch (e.g. ("belt", "belt_damping") for the belt tension
    of Bastien et al. (2007), eq. (38a)); callback: the user's stop(t, y) -> bool;
    method: the :func:`~hystmech.systems.simulate` method it is built for, which
    chooses between the generic engine and the generated code (:meth:`engine`)."""

    def __init__(self, asm, observe=(), callback=None, method=None):
        self.asm = asm
        self.method = method        # the simulate() method it is built for (or None)
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
        self.sa = [idx[s.a] for s in asm.springs]
        self.sb = [idx[s.b] for s in asm.springs]
        self.da = [idx[d.a] for d in asm.dampers]
        self.db = [idx[d.b] for d in asm.dampers]
        self.fdof = [idx[f.dof] for f in asm.forces]
        els = asm.elements
        self.ne = len(els)
        self.sizes = [e.element.n_states for e in els]
        self.eo = [2 * self.nq + int(sum(self.sizes[:i])) for i in range(self.ne)]
        psz = [e.element.p.size for e in els]
        po = [int(sum(psz[:i])) for i in range(self.ne + 1)]
        self.kinds = [e.element.kind for e in els]
        self.el_struct = [(idx[e.a], idx[e.b], self.eo[i], self.sizes[i], po[i], po[i + 1],
                           self.kinds[i]) for i, e in enumerate(els)]
        self.N = 2 * self.nq + int(sum(self.sizes))
        self.nquad = self.ne + len(asm.dampers) + len(asm.forces) + self.nb
        self.layout = Layout(self.nq, self.nb, self.ne, len(asm.forces), self.N, self.nquad)
        lo = np.full(self.N, -np.inf)
        hi = np.full(self.N, np.inf)
        for e, o, n in zip(els, self.eo, self.sizes):
            if e.element.kind == "inclusion":
                lo[o:o + n] = e.element.box_lo
                hi[o:o + n] = e.element.box_hi
        self.box_lo, self.box_hi = lo, hi
        self.boxed = list(np.isfinite(lo) | np.isfinite(hi))
        xs = [np.broadcast_to(np.asarray(e.element.x_scale, float), (n,))
              for e, n in zip(els, self.sizes)]
        self.x_scale = np.concatenate(xs) if xs else np.zeros(0)
        self.observed = self._observed(observe)

        self.f_funcs = [f.f for f in asm.forces]
        self.u_funcs = [asm.imposed[n].u for n in imp]
        self.v_funcs = [asm.imposed[n].v for n in imp]
        jf, ju, jv = [], [], []
        HF, self.fkinds = _harm_rows(self.f_funcs, jf)
        HU, self.ukinds = _harm_rows(self.u_funcs, ju)
        HV, self.vkinds = _harm_rows(self.v_funcs, jv)
        for j, (ku, kv) in enumerate(zip(self.ukinds, self.vkinds)):
            if kv == "d" and ku != "c":
                self.vkinds[j] = "t" if ku == "t" else "h"   # harmonic u has a harmonic v
        self.has_tables = "t" in self.fkinds + self.ukinds + self.vkinds
        f64 = np.float64
        self.prm = Params(
            mass=np.array([asm.dofs[d].mass for d in dofs], dtype=f64),
            grav=float(asm.gravity),
            k=np.array([s.k for s in asm.springs], dtype=f64),
            u0=np.array([s.u0 for s in asm.springs], dtype=f64),
            pre=np.array([s.preload for s in asm.springs], dtype=f64),
            c=np.array([d.c for d in asm.dampers], dtype=f64),
            P=(np.concatenate([e.element.p for e in els]) if els else np.zeros(0)).astype(f64),
            HF=HF, HU=HU, HV=HV,
            SA=np.array(self.sa, dtype=np.int64), SB=np.array(self.sb, dtype=np.int64),
            DA=np.array(self.da, dtype=np.int64), DB=np.array(self.db, dtype=np.int64),
            FD=np.array(self.fdof, dtype=np.int64),
            # law ids (column 6) are the engine's to fill (methods/engine.py)
            EL=np.array([(a, b, o, n, p0, p1, -1, KIND_CODE[k])
                         for a, b, o, n, p0, p1, k in self.el_struct],
                        dtype=np.int64).reshape(self.ne, 8),
            KI=np.array([INPUT_CODE.get(k, -1) for k in self.fkinds + self.ukinds + self.vkinds],
                        dtype=np.int64),
            OB=np.array([(OBSERVED_CODE[k], i) for k, i in self.observed],
                        dtype=np.int64).reshape(len(self.observed), 2))
        self.callback = callback
        self._engine = None

        kern = {}
        for i, e in enumerate(els):
            el = e.element
            kern[f"force_{i}"] = el.force
            if el.kind == "operator":
                kern[f"advance_{i}"] = el.advance
            else:
                kern[f"rate_{i}"] = el.rate
        self.has_jac = all(e.element.jac is not None and is_compiled(e.element.jac)
                           for e in els)
        if self.has_jac:
            kern.update({f"jac_{i}": e.element.jac for i, e in enumerate(els)})
        for prefix, kinds, funcs, jitted in (("fc", self.fkinds, self.f_funcs, jf),
                                             ("uc", self.ukinds, self.u_funcs, ju),
                                             ("vc", self.vkinds, self.v_funcs, jv)):
            it = iter(jitted)
            for j, (k, f) in enumerate(zip(kinds, funcs)):
                if f is not None and not isinstance(f, Harmonic):
                    g = next(it)
                    if k == "c":
                        kern[f"{prefix}_{j}"] = g
        # the compiled code depends only on the structure and on the kernels' identity:
        # a model of an already-seen structure (a sweep, one period after another in a
        # shooting method) reuses it without generating and hashing the source again
        key = (self.nq, self.nb, tuple(self.sa), tuple(self.sb), tuple(self.da),
               tuple(self.db), tuple(self.fdof), tuple(self.el_struct), tuple(self.boxed),
               tuple(self.fkinds), tuple(self.ukinds), tuple(self.vkinds), self.observed,
               self.has_jac, tuple(sorted((k, id(f)) for k, f in kern.items())),
               id(callback), str(cache_dir()))  # a changed/disabled disk cache builds anew
        self.compiled = all(is_compiled(f) for f in kern.values())
        # built on first use (the property below): a model that runs on the generic
        # engine (methods/engine.py) never generates, hashes nor imports its own module
        self._code_key, self._kern, self._code = key, kern, None

    @property
    def code(self):
        """The structure's generated module (systems/codegen.py), built or loaded from
        the disk cache on first access."""
        if self._code is None:
            key, kern, callback = self._code_key, self._kern, self.callback
            hit = _CODE.get(key)
            if hit is not None and hit[1] == list(kern.values()) and hit[2] is callback:
                self._code = hit[3]
            else:
                tpl = templates()
                self._code = build(self, kern, callback, tpl)
                tag = self._structure_tag()
                if tag is not None and self._code.how == "disk":
                    # found by generated_ready in later processes without its source
                    mods = {_codegen.__name__, f"{__package__}.observers", *tpl.modules,
                            *(kernel_ref(f)[0] for f in kern.values())}
                    record_stamp(tag, self._code.path, sorted(mods))
                if len(_CODE) > 256:
                    _CODE.clear()
                # the kernels and callback are kept so their ids cannot be reused by others
                _CODE[key] = (self.compiled, list(kern.values()), callback, self._code)
        return self._code

    @property
    def compile_cache(self) -> dict:
        """Where the generated module is cached: {"path", "reason"}."""
        code = self.code
        return {"path": None if code.path is None else str(code.path),
                "reason": "cached on disk" if code.how == "disk"
                else getattr(code, "reason", "")}

    # -- structure queries ----------------------------------------------------------------
    def _observed(self, names):
        if isinstance(names, str):
            names = (names,)
        out = []
        for nm in names:
            for kind, items in (("spring", self.asm.springs), ("damper", self.asm.dampers),
                                ("element", self.asm.elements)):
                hit = [i for i, c in enumerate(items) if c.name == nm]
                if hit:
                    out.append((kind, hit[0]))
                    break
            else:
                raise ValueError(f"observe: no spring, damper or element named {nm!r}")
        return tuple(out)

    def engine(self):
        """The generic engine (methods/engine.py: compiled once per install, no compile
        for a new structure) when this model is to run on it, else None: its methods
        then run there instead of in :attr:`code`. Chosen once per model, as a tiered
        JIT chooses (:func:`~hystmech.systems.methods.engine.for_model`): the generated
        code when it is compiled already, else the engine when its loop is, else the
        generated code (compiled) while the engine compiles in the background."""
        if self._engine is None:
            self._engine = _engine.for_model(self) or False
        return self._engine or None

    def generated_ready(self, loop: str) -> bool:
        """Whether the generated code's function ``loop`` (e.g. "rk45") of this
        structure is compiled, in this process or in the disk cache; asked without
        making its source (the stamp :attr:`code` records beside a cached module)."""
        code = self._code
        if code is None:
            hit = _CODE.get(self._code_key)
            if hit is not None and hit[1] == list(self._kern.values()) \
                    and hit[2] is self.callback:
                code = hit[3]
        if code is not None:
            disp = getattr(code, loop, None)
            if disp is not None and disp.signatures:
                return True
            mod = code.mod if code.how == "disk" else None
        else:
            tag = self._structure_tag()
            hit = None if tag is None else find_stamped(tag)
            mod = None if hit is None else hit[0]
        disp = None if mod is None else getattr(mod, loop, None)
        return disp is not None and (bool(disp.signatures) or cached_on_disk(disp))

    def _structure_tag(self):
        # a name of this structure that is the same in every process (the kernels by
        # module and name), for the stamp of its cached module; None when not cacheable
        if not self.compiled or self.callback is not None:
            return None
        refs = tuple(sorted((k, kernel_ref(f)) for k, f in self._kern.items()))
        if any(r is None for _, r in refs):
            return None
        key = repr((self._code_key[:-3], refs))
        return "structure-" + hashlib.sha256(key.encode()).hexdigest()[:24]

    def ops_present(self) -> bool:
        return "operator" in self.kinds

    def cache_hits(self) -> int:
        """Compiled functions numba loaded from its disk cache in this process so far."""
        return self.code.cache_hits()

    # -- stability of the explicit linear part -----------------------------------------------
    def stability_limit(self) -> tuple[float, float]:
        """(h_max [s], |λ|max [1/s]): explicit steps are unstable for every mode when
        h·|λ| > 2, λ the eigenvalues of the linear part [[0, I], [−M⁻¹K, −M⁻¹C]] (springs,
        dampers and each element's initial tangent stiffness and damping at x0)."""
        if hasattr(self, "_stab"):
            return self._stab
        nq = self.nq
        K = np.zeros((nq, nq))
        C = np.zeros((nq, nq))

        def add(Mx, a, b, k):
            for i, si in ((a, 1.0), (b, -1.0)):
                for j, sj in ((a, 1.0), (b, -1.0)):
                    if 0 <= i < nq and 0 <= j < nq:
                        Mx[i, j] += si * sj * k
        for s, a, b in zip(self.asm.springs, self.sa, self.sb):
            add(K, a, b, s.k)
        for d, a, b in zip(self.asm.dampers, self.da, self.db):
            add(C, a, b, d.c)
        for e, (a, b, *_r) in zip(self.asm.elements, self.el_struct):
            el = e.element
            try:
                kt = float(el.initial_tangent())
                x = e.x0.copy()
                dv = 1e-6
                force = python_of(el.force)
                ct = (float(force(x, 0.0, dv, el.p)) - float(force(x, 0.0, 0.0, el.p))) / dv
            except Exception:  # noqa: BLE001 - a law that cannot say: no contribution
                kt, ct = 0.0, 0.0
            add(K, a, b, kt if math.isfinite(kt) else 0.0)
            add(C, a, b, ct if math.isfinite(ct) and ct > 0 else 0.0)
        m = self.prm.mass
        A = np.zeros((2 * nq, 2 * nq))
        A[:nq, nq:] = np.eye(nq)
        A[nq:, :nq] = -K / m[:, None]
        A[nq:, nq:] = -C / m[:, None]
        lam = float(np.max(np.abs(np.linalg.eigvals(A)))) if nq else 0.0
        self._stab = (2.0 / lam if lam > 0 else math.inf, lam)
        return self._stab

    def check_step(self, h: float, method: str, name: str = "h") -> None:
        """ValueError when the step h [s] is beyond the explicit stability limit."""
        h_max, lam = self.stability_limit()
        if h > h_max:
            raise ValueError(f"{name} = {h!r} s is beyond the stability limit of method "
                             f"{method!r} for this assembly: h·|λ|max must be <= 2 with "
                             f"|λ|max = {lam:.4g} 1/s (fastest mode of the linear part), "
                             f"i.e. {name} <= {h_max:.4g} s")

    # -- observers ------------------------------------------------------------------------
    def observer_start(self, obs) -> float:
        return first_time(obs)

    def obs_or_dummy(self, obs):
        return new_observer() if obs is None else obs

    def observe_samples(self, obs, t, Y) -> int:
        """Feed the observed signal at samples (t, Y) to obs (Python-driven methods);
        returns the number of samples up to and including the stop (all if none)."""
        FE, UB, VB = self.forcing_on(t)
        _, F, _, _, _, _ = self.eval_on(t, np.ascontiguousarray(Y), FE, UB, VB)
        s = np.zeros(t.size)
        for kind, i in self.observed:
            if kind == "element":
                s += F[:, i]
            elif kind == "spring":
                sp = self.asm.springs[i]
                s += sp.k * (self._x(sp.a, Y, UB) - self._x(sp.b, Y, UB) - sp.u0) + sp.preload
            else:
                d = self.asm.dampers[i]
                s += d.c * (self._v(d.a, Y, VB) - self._v(d.b, Y, VB))
        for k in range(t.size):
            if observe(obs, float(t[k]), float(s[k])):
                return k + 1
        return t.size

    def _x(self, node, Y, UB):
        k = self.node_index[node]
        return 0.0 if k < 0 else (Y[:, k] if k < self.nq else UB[:, k - self.nq])

    def _v(self, node, Y, VB):
        k = self.node_index[node]
        return 0.0 if k < 0 else (Y[:, self.nq + k] if k < self.nq else VB[:, k - self.nq])

    # -- inputs on the Python side ----------------------------------------------------------
    def forcing_at(self, t: float):
        """(fext, ub, vb) at time t [s] from the user's callables."""
        FE, UB, VB = self.forcing_on(np.array([float(t)]))
        return FE[0], UB[0], VB[0]

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

        n = t.size
        FE = np.empty((n, len(self.f_funcs)))
        for j, f in enumerate(self.f_funcs):
            FE[:, j] = sample_at(f, t)
        UB = np.empty((n, self.nb))
        VB = np.empty((n, self.nb))
        for j, (u, v) in enumerate(zip(self.u_funcs, self.v_funcs)):
            UB[:, j] = sample_at(u, t)
            if v is not None:
                VB[:, j] = sample_at(v, t)
            else:
                d = 1e-6 * (1.0 + np.abs(t))
                VB[:, j] = (sample_at(u, t + d) - sample_at(u, t - d)) / (2 * d)
        # non-finite inputs are not rejected here: the solvers stop at the first
        # non-finite state and report the time reached with the part computed
        return FE, UB, VB

    def tables_on(self, grid):
        """Tables (TF, TU, TV) of the inputs that only Python can evaluate ("t"), on the
        step grid of a fixed-step method; 1×1 placeholders when there are none."""
        if not self.has_tables:
            z = np.zeros((1, 1))
            return z, z, z
        return self.forcing_on(grid)

    def eval_on(self, t, Y, FE, UB, VB):
        """Accelerations, element forces, u, v, node forces and energy integrands at
        every sample (rows of Y)."""
        L = self.layout
        code = self.engine() or self.code
        return code.eval_samples(np.ascontiguousarray(t, dtype=float), Y,
                                 np.ascontiguousarray(FE), np.ascontiguousarray(UB),
                                 np.ascontiguousarray(VB), self.prm, L.nq, L.ne,
                                 L.nquad, L.n_work)


def warm_engine(loop: str) -> None:
    """Compile the generic engine's ``loop`` (the background child of
    methods/engine.py for_model: :func:`compile_cache.background`), then the C wrappers
    of every shipped law (:func:`~hystmech.systems.methods.engine.warm_laws`)."""
    _engine.warm(loop, Model)
    _engine.warm_laws()


@njit(cache=False)  # kernel-typed arguments: see core/drive.py on caching
def _sample_jit(f, t):
    out = np.empty(t.size)
    for i in range(t.size):
        out[i] = f(t[i])
    return out
