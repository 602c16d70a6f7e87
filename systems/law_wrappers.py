"""Every law called through C function pointers: a law's C wrappers (issue 31).

The generic engine (methods/engine.py) compiles no law's code: each law's numba kernels
(a shipped law's module-level ones, a user's njit functions or closures: LuGre with a
user g, Duhem envelopes) get small ``numba.cfunc`` wrappers of a fixed C signature,
compiled once per kernel (on disk when the kernel is importable by name or
fingerprintable, systems/codegen.py ``kernel_fingerprint``; in memory otherwise), and
compiled code calls them through an address held in a per-law table of int64
(:func:`law_table`) with the intrinsics :func:`call_fr`, :func:`call_jac`,
:func:`call_pjac`, :func:`call_adv`. The addresses are run-time data: the calling code
and its disk cache do not depend on them, so one engine, compiled once per install,
runs every law, and a law's kernels compile once per law, on its first use.

C signatures (x: the element's n states, p: its parameters, row-major outputs):
``fr``   double(double* x, int64 n, double u, double v, double* p, int64 np, double* d)
         F = force(x, u, v, p) and d = ẋ = rate(x, u, v, p)
``jac``  void(x, n, u, v, p, np, double* Je)  Je (n + 1, n + 2) = jac(x, u, v, p)
``pjac`` void(x, n, u, v, p, np, double* Jp)  Jp (n + 1, np) = pjac(x, u, v, p)
``adv``  void(x, n, double u0, double u1, double dt, double v, p, np, double rtol)
         advance(x, u0, u1, dt, v, p, rtol) (an operator's memory, in place)
An operator's ``fr`` is its force with zero rates (its memory moves in ``adv`` only).
No arithmetic is added: an indirect call gives the kernel's own results bit for bit.
"""
from __future__ import annotations

import hashlib
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from . import compile_cache
from .codegen import _BOUND_KERNELS, kernel_fingerprint

# a law id at or above this is the address of a law's table (law_table); the shipped
# operators' ids are small
TABLE_MIN = 1 << 16
SLOTS = ("fr", "jac", "pjac", "adv")

_BODIES = {
    # an exception cannot cross the C call (a cfunc would print it and return 0.0, a
    # silent wrong force): the wrapper turns it into NaN force, rates or Jacobian, which
    # the engine's loops refuse as a non-finite state, as the generated code refuses it
    "fr": ("def wrap(x, n, u, v, p, np_, d):\n"
           "    xa = carray(x, (n,))\n"
           "    pa = carray(p, (np_,))\n"
           "    da = carray(d, (n,))\n"
           "    try:\n"
           "        F = k0(xa, u, v, pa)\n"
           "        k1(xa, u, v, pa, da)\n"
           "    except Exception:\n"
           "        da[:] = math.nan\n"
           "        return math.nan\n"
           "    return F\n"),
    # an operator (or a sum with an operator part): no rates, its memory moves only in
    # its advance, after each accepted step (as the generated core writes it: zeros)
    "fr0": ("def wrap(x, n, u, v, p, np_, d):\n"
            "    xa = carray(x, (n,))\n"
            "    da = carray(d, (n,))\n"
            "    da[:] = 0.0\n"
            "    try:\n"
            "        return k0(xa, u, v, carray(p, (np_,)))\n"
            "    except Exception:\n"
            "        return math.nan\n"),
    "adv": ("def wrap(x, n, u0, u1, dt, v, p, np_, rtol):\n"
            "    xa = carray(x, (n,))\n"
            "    try:\n"
            "        k0(xa, u0, u1, dt, v, carray(p, (np_,)), rtol)\n"
            "    except Exception:\n"
            "        xa[:] = math.nan\n"),
    "jac": ("def wrap(x, n, u, v, p, np_, J):\n"
            "    Ja = carray(J, (n + 1, n + 2))\n"
            "    try:\n"
            "        k0(carray(x, (n,)), u, v, carray(p, (np_,)), Ja)\n"
            "    except Exception:\n"
            "        Ja[:, :] = math.nan\n"),
    "pjac": ("def wrap(x, n, u, v, p, np_, J):\n"
             "    Ja = carray(J, (n + 1, np_))\n"
             "    try:\n"
             "        k0(carray(x, (n,)), u, v, carray(p, (np_,)), Ja)\n"
             "    except Exception:\n"
             "        Ja[:, :] = math.nan\n"),
}
_RET = {"fr": "types.float64", "fr0": "types.float64", "jac": "types.void",
        "pjac": "types.void", "adv": "types.void"}
_ARGS = ("types.CPointer(types.float64), types.int64, types.float64, types.float64, "
         "types.CPointer(types.float64), types.int64, types.CPointer(types.float64)")
_ARGS_ADV = ("types.CPointer(types.float64), types.int64, types.float64, types.float64, "
             "types.float64, types.float64, types.CPointer(types.float64), types.int64, "
             "types.float64")

_WRAPPERS: dict = {}     # (slot, kernel ids) -> (kernels, cfunc): kernels kept alive
_TABLES: dict = {}       # kernel ids -> (kernels, table)


def wrapper(slot: str, kernels: tuple):
    """The cfunc of ``slot`` ("fr": kernels (force, rate); "jac", "pjac": (kernel,))
    around a law's numba kernels, compiled once per kernel objects; from the disk cache
    (a module ``_hystmech_law_*``) when every kernel is importable by name or
    fingerprintable, else compiled in memory."""
    key = (slot, tuple(map(id, kernels)))
    hit = _WRAPPERS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], kernels)):
        return hit[1]
    refs, mods, bound = [], set(), {}
    for k in kernels:
        ref = compile_cache.kernel_ref(k)
        if ref is None:
            fp = kernel_fingerprint(k)
            if fp is None:
                refs = None
                break
            h = hashlib.sha256(fp[0].encode()).hexdigest()[:32]
            ref, mods = ("bound", h), mods | fp[1]
            bound[h] = k
        else:
            mods.add(ref[0])
        refs.append(ref)
    args = _ARGS_ADV if slot == "adv" else _ARGS
    body = (f"@cfunc({_RET[slot]}({args}), cache=True)\n" + _BODIES[slot])
    head = ['"""Generated by hystmech: a law\'s C wrapper (systems/law_wrappers.py)."""',
            "import math", "", "from numba import carray, cfunc, types", "",
            "from hystmech.systems.compile_cache import resolve",
            "from hystmech.systems.codegen import bound_kernel", ""]
    mod = None
    if refs is not None and compile_cache.cache_dir() is not None:
        for i, ref in enumerate(refs):
            head.append(f"k{i} = bound_kernel({ref[1]!r})" if ref[0] == "bound"
                        else f"k{i} = resolve({ref[0]!r}, {ref[1]!r})")
        _BOUND_KERNELS.update(bound)
        mod, _ = compile_cache.load("\n".join(head) + "\n\n\n" + body, sorted(mods),
                                    prefix="law_", lock=True)
    if mod is None:
        from numba import carray, cfunc
        ns = {"carray": carray, "cfunc": cfunc, "types": types, "math": math}
        ns.update({f"k{i}": k for i, k in enumerate(kernels)})
        exec(compile(body.replace(", cache=True)", ")"), "<hystmech law wrapper>", "exec"), ns)
        cf = ns["wrap"]
    else:
        cf = mod.wrap
    _WRAPPERS[key] = (tuple(kernels), cf)
    return cf


def law_table(element, slots=("fr",)) -> np.ndarray:
    """The int64 table (fr, jac, pjac, adv addresses; 0: none) of ``element``'s
    kernels, one per kernel objects, with the wrappers of ``slots`` built (a slot whose
    kernel the element lacks stays 0; an operator's ``fr`` is its force with zero rates).
    The table's address (``table.ctypes.data``, >= TABLE_MIN) is what compiled code hands
    to :func:`call_fr` and the others; whoever stores it keeps the table alive."""
    op = element.kind == "operator"
    ks = (element.force, None if op else element.rate, element.jac, element.pjac,
          element.advance)
    key = tuple(map(id, ks))
    hit = _TABLES.get(key)
    if hit is None or not all(a is b for a, b in zip(hit[0], ks)):
        hit = (ks, np.zeros(len(SLOTS), dtype=np.int64))
        _TABLES[key] = hit
    tab = hit[1]
    for s in slots:
        i = SLOTS.index(s)
        if s == "fr":
            s, kern = ("fr0", (ks[0],)) if op else ("fr", (ks[0], ks[1]))
        else:
            kern = (ks[i + 1],)
        if tab[i] == 0 and all(k is not None for k in kern):
            tab[i] = wrapper(s, kern).address
    return tab


_F64P = ir.PointerType(ir.DoubleType())
_I64 = ir.IntType(64)


def _arrays_ok(*arrs) -> bool:
    return all(isinstance(a, types.Array) and a.dtype == types.float64 and a.layout == "C"
               for a in arrs)


def _table_call(slot: str, ret, kinds: str, doc: str):
    """An intrinsic ``f(tab, *args)`` calling slot ``slot`` of the law's table at
    address ``tab`` through its C pointer; ``kinds`` the arguments after tab ("a": a
    float64 array passed as (data pointer, length), "o": an output array passed as its
    data pointer, "d": a float64). A void slot is called only when its address is not 0
    and returns whether it was called; "fr" always has a wrapper."""
    idx = SLOTS.index(slot)

    def typer(typingctx, tab, *args):
        if len(args) != len(kinds) or not _arrays_ok(*(a for a, k in zip(args, kinds)
                                                        if k != "d")):
            return None

        def codegen(context, builder, sig, llargs):
            cast = context.cast(builder, llargs[0], sig.args[0], types.int64)
            argv, tys = [], []
            for k, ty, v in zip(kinds, sig.args[1:], llargs[1:]):
                if k == "d":
                    argv.append(context.cast(builder, v, ty, types.float64))
                    tys.append(ir.DoubleType())
                    continue
                arr = context.make_array(ty)(context, builder, v)
                argv.append(builder.bitcast(arr.data, _F64P))
                tys.append(_F64P)
                if k == "a":
                    argv.append(builder.extract_value(arr.shape, 0))
                    tys.append(_I64)
            fnty = ir.FunctionType(ret, tys)
            ptab = builder.inttoptr(cast, _I64.as_pointer())
            addr = builder.load(builder.gep(ptab, [ir.Constant(_I64, idx)]))
            fn = builder.inttoptr(addr, fnty.as_pointer())
            if ret != ir.VoidType():
                return builder.call(fn, argv)
            ok = builder.icmp_unsigned("!=", addr, ir.Constant(_I64, 0))
            with builder.if_then(ok):
                builder.call(fn, argv)
            return ok
        rty = types.float64 if ret != ir.VoidType() else types.boolean
        return rty(tab, *args), codegen
    # numba reads the typing function's parameters: spelled out, no *args
    names = ", ".join(f"a{j}" for j in range(len(kinds)))
    ns = {"typer": typer}
    exec(f"def call_{slot}(typingctx, tab, {names}):\n"
         f"    return typer(typingctx, tab, {names})\n", ns)
    impl = ns[f"call_{slot}"]
    impl.__doc__ = doc
    return intrinsic(impl)


call_fr = _table_call("fr", ir.DoubleType(), "addao",
                     "F of the law whose table is at address ``tab``, its rates "
                     "written into d: ``call_fr(tab, x, u, v, p, d)``.")
call_jac = _table_call("jac", ir.VoidType(), "addao",
                      "``call_jac(tab, x, u, v, p, Je)``: Je = jac of the law at "
                      "``tab`` (left as it is when the law has none); True when called.")
call_pjac = _table_call("pjac", ir.VoidType(), "addao",
                       "``call_pjac(tab, x, u, v, p, Jp)``: Jp = pjac of the law at "
                       "``tab`` (left as it is when it has none); True when called.")
call_adv = _table_call("adv", ir.VoidType(), "addddad",
                      "``call_adv(tab, x, u0, u1, dt, v, p, rtol)``: the operator's "
                      "memory x advanced over the segment u0 → u1 [m] in dt [s]; True "
                      "when called.")
