"""hystmech force elements inside MuJoCo, as native passive-force plugins.

Every law with a C kernel (``components/*.c``, the ones the FMU exporter compiles; sums
included) becomes a MuJoCo plugin ``hystmech.<Law>`` whose configuration attributes
are the law's constructor parameters by their Python names (arrays as
whitespace-separated values) plus ``joint`` or ``tendon`` and ``rtol``::

    import mujoco
    from hystmech.plugins.mujoco import add_element
    spec = mujoco.MjSpec.from_file("arm.xml")
    add_element(spec, LuGre(sigma0=1e4, ...), joint="elbow", name="elbow_friction")
    model = spec.compile()

MJCF only: ``import hystmech.plugins.mujoco`` registers the plugins of the laws with
scalar parameters (:func:`register_laws`), so a file carrying
``<extension><plugin plugin="hystmech.LuGre"><instance name="f"><config key="sigma0"
value="1e5"/> ... <config key="joint" value="elbow"/></instance></plugin></extension>``
loads with ``mujoco.MjModel.from_xml_path``; without mujoco the import raises an
ImportError naming the extra ``hystmech[mujoco]``.

On a joint (slide or hinge) the element sees u = qpos − qpos(first step), v = qvel
and adds −F to qfrc_passive; on a tendon u = length − length(first step), v = tendon
velocity and −F·J (J the tendon Jacobian). Host discipline (trial/commit): a force
evaluation advances a copy of the state committed at the last step; MuJoCo's
once-per-step ``advance`` commits it. The state lives in ``mjData.plugin_state`` so
``mj_copyData`` / ``mj_getState`` save and restore it exactly; read it with
:func:`element_state` and the force with :func:`element_force`.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
from ctypes import POINTER, c_char_p, c_double, c_int, c_void_p
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._build import HERE, build_shared, engine, kernel_library

__all__ = ["add_element", "register", "register_laws", "element_state", "element_force",
           "element_u", "element_failures", "plugin_name", "library_path"]

_LIB = None
_LAWS: dict = {}          # plugin name -> _Law
_DP = POINTER(c_double)


@dataclass
class _Law:
    name: str
    attrs: list            # (attribute name, number of values)
    nx: int
    np_: int
    force: object          # ctypes function of the C force kernel
    keep: object           # the kernel library (kept loaded)
    slot: int              # MuJoCo's plugin slot


def library_path() -> Path:
    """Build (or find in the cache) the MuJoCo plugin library for the installed mujoco."""
    mujoco = engine("mujoco")
    mjdir = Path(mujoco.__file__).resolve().parent
    libs = sorted(mjdir.glob("libmujoco.so*"))
    if not libs:
        raise ImportError(f"libmujoco not found in {mjdir}; reinstall 'hystmech[mujoco]'")
    inc = Path(mujoco.HEADERS_DIR).resolve().parent
    headers = sorted(Path(mujoco.HEADERS_DIR).glob("*.h"))
    return build_shared("hystmech-mujoco", [HERE / "mujoco_plugin.c"], includes=[inc],
                        link=[f"-L{mjdir}", f"-l:{libs[0].name}", f"-Wl,-rpath,{mjdir}"],
                        key=mujoco.__version__ + "".join(
                            hashlib.sha256(h.read_bytes()).hexdigest() for h in headers))


def _lib():
    global _LIB
    if _LIB is None:
        engine("mujoco")  # libmujoco must be loaded by the bindings first
        lib = ctypes.CDLL(str(library_path()))
        lib.hm_mj_register.argtypes = [c_char_p, c_void_p, c_void_p, c_void_p, c_void_p, c_void_p,
                                       c_int, c_int, c_int, POINTER(c_char_p), POINTER(c_int)]
        lib.hm_mj_register.restype = c_int
        lib.hm_mj_header.restype = c_int
        _LIB = lib
    return _LIB


def _attributes(q_names) -> list:
    """Collapse flattened names (k[0], k[1], part0.k[0] ...) into (name, count)."""
    out = []
    for n in q_names:
        base = re.sub(r"\[\d+\]$", "", n)
        if out and out[-1][0] == base and n != base:
            out[-1][1] += 1
        else:
            out.append([base, 1])
    return [(a, c) for a, c in out]


def plugin_name(element) -> str:
    """The MuJoCo plugin name of ``element``'s law: ``hystmech.<Law>``, with a content
    hash for laws whose parameter list depends on the instance (arrays, sums)."""
    from ..fmu.export import law_spec

    spec = law_spec(element)
    base = f"hystmech.{spec.cls_name}"
    fixed = _LAWS.get(base)
    if (spec.generated or any("[" in n for n in spec.q_names)
            or (fixed is not None and (fixed.nx, fixed.np_) != (spec.n_x, spec.n_p))):
        # the state and parameter sizes are part of a plugin (nstate): laws whose sizes
        # depend on the instance (arrays, max_depth, sums) get one plugin per signature
        h = hashlib.sha256(("|".join(spec.q_names) + spec.generated
                            + f"|{spec.n_x}|{spec.n_p}").encode()).hexdigest()
        return f"{base}.{h[:10]}"
    return base




def register(element) -> str:
    """Register ``element``'s law as a MuJoCo plugin (once per process); return its name.

    FMUExportError (a ValueError) for a law without a C form (custom Python callables).
    """
    from ..fmu.export import law_spec

    name = plugin_name(element)
    if name in _LAWS:
        return name
    spec = law_spec(element)
    klib = kernel_library(spec)
    pre = spec.prefix

    def ptr(fn):
        return ctypes.cast(getattr(klib, fn), c_void_p).value

    attrs = _attributes(spec.q_names)
    for a, _ in attrs:
        if a in ("joint", "tendon", "rtol"):
            raise ValueError(f"{spec.cls_name}: parameter name {a!r} clashes with a plugin "
                             f"attribute of the same name")
    names = (c_char_p * len(attrs))(*[a.encode() for a, _ in attrs])
    lens = (c_int * len(attrs))(*[c for _, c in attrs])
    try:    # switch points (jumps/kinks of F) of inclusions and operators
        sw = ptr(f"{pre}_switch") if element.kind != "smooth" else None
    except AttributeError:
        sw = None
    # only kernels that set hm_fail themselves can fail here (the work budget of the
    # adaptive kernels is never set by this host); the others skip the check per step
    can_fail = bool(spec.generated) or "hm_fail =" in spec.c_file.read_text()
    slot = _lib().hm_mj_register(name.encode(), ptr(f"{pre}_advance"), ptr(f"{pre}_force"),
                                 ptr(f"{pre}_setup"),
                                 ptr("hm_mj_take_fail") if can_fail else None, sw,
                                 spec.n_x, spec.n_p, len(attrs), names, lens)
    if slot < 0:
        raise RuntimeError(f"registering the MuJoCo plugin {name} failed (code {slot}); "
                           f"at most 4096 states per element")
    force = getattr(klib, f"{pre}_force")
    force.argtypes = [_DP, c_double, c_double, _DP]
    force.restype = c_double
    _LAWS[name] = _Law(name, attrs, spec.n_x, spec.n_p, force, klib, slot)
    return name


def _fmt(v) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(v))


def add_element(spec, element, *, joint: str | None = None, tendon: str | None = None,
                name: str, rtol: float = 1e-8):
    """Add the force element ``element`` to the ``mujoco.MjSpec`` ``spec`` (before
    ``spec.compile()``) on a slide/hinge ``joint`` or on a ``tendon``, as the plugin
    instance ``name``; returns the ``MjsPlugin``. u [m or rad] is the joint coordinate
    (tendon length) relative to its value at the first step, F [N or N·m] acts as −F on
    the joint (−F·J on the tendon's dofs); ``rtol`` is the tolerance of the law's
    adaptive segment update. ValueError for a law without a C form, a bad name or
    target."""
    engine("mujoco")
    if (joint is None) == (tendon is None):
        raise ValueError("give exactly one of joint= and tendon=")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string (got {name!r})")
    tgt = joint if joint is not None else tendon
    if not isinstance(tgt, str) or not tgt:
        raise ValueError(f"{'joint' if joint is not None else 'tendon'} must be a name "
                         f"(got {tgt!r})")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    find = spec.joint if joint is not None else spec.tendon
    try:
        found = find(tgt)
    except Exception:  # noqa: BLE001 - older bindings: the compiler checks the name
        found = True
    if found is None:
        raise ValueError(f"the spec has no {'joint' if joint is not None else 'tendon'} "
                         f"named {tgt!r}")
    if any(p.name == name for p in spec.plugins):
        raise ValueError(f"the spec already has a plugin instance named {name!r}")
    from ..fmu.export import law_spec

    pname = register(element)
    law = _LAWS[pname]
    ls = law_spec(element)
    cfg, k = {}, 0
    for a, c in law.attrs:
        cfg[a] = _fmt(ls.q_values[k:k + c])
        k += c
    cfg["joint" if joint is not None else "tendon"] = tgt
    cfg["rtol"] = repr(float(rtol))
    if pname not in [p.plugin_name for p in spec.plugins if not p.name]:
        spec.activate_plugin(pname)
    inst = spec.add_plugin(name=name, plugin_name=pname, active=True)
    inst.config = cfg
    return inst


# -- readers ---------------------------------------------------------------------------
def _instance(model, name):
    mujoco = engine("mujoco")
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_PLUGIN, name)
    if i < 0:
        raise ValueError(f"the model has no plugin instance named {name!r}")
    slot = int(model.plugin[i])
    law = next((L for L in _LAWS.values() if L.slot == slot), None)
    if law is None:
        raise ValueError(f"plugin instance {name!r} is not a hystmech element")
    return i, law


def _block(model, data, name):
    i, law = _instance(model, name)
    a = int(model.plugin_stateadr[i])
    return data.plugin_state[a: a + int(model.plugin_statenum[i])], law


def element_state(model, data, name: str) -> np.ndarray:
    """The committed internal state of the element ``name`` (a copy)."""
    s, law = _block(model, data, name)
    H = _lib().hm_mj_header()
    return np.array(s[H:H + law.nx])


def element_u(model, data, name: str) -> float:
    """The committed input u of the element ``name`` [m or rad] (0 before the first step)."""
    s, _ = _block(model, data, name)
    return float(s[2])


def element_failures(model, data, name: str) -> int:
    """How many times the element's kernel could not continue (e.g. a Preisach memory
    stack overflow: more nested reversals than max_depth; the memory then keeps its
    last state for that segment). Reported once per instance on stderr."""
    s, _ = _block(model, data, name)
    return int(s[10])


def element_force(model, data, name: str) -> float:
    """The force [N or N·m] of the element ``name`` at its committed state and input
    and the current velocity (after ``mj_step``: the force at the new time)."""
    s, law = _block(model, data, name)
    H = _lib().hm_mj_header()
    if s[0] == 0.0:
        u = 0.0
    else:
        u = float(s[2])
    if s[4] == 0.0:
        v = float(data.qvel[int(s[7])])
    else:
        v = float(data.ten_velocity[int(s[5])])
    x = np.ascontiguousarray(s[H:H + law.nx], dtype=float)
    p = np.ascontiguousarray(s[H + law.nx:H + law.nx + law.np_], dtype=float)
    return float(law.force(x.ctypes.data_as(_DP), u, v, p.ctypes.data_as(_DP)))


# one instance of each law whose plugin does not depend on the instance (scalar
# parameters only): registering it makes "hystmech.<Law>" known to MuJoCo's MJCF parser;
# the values are placeholders (an MJCF file gives its own as config attributes)
_FIXED_LAWS = {
    "Dahl": dict(rho=1.0, Fc=1.0),
    "LuGre": dict(sigma0=1e5, sigma1=316.0, Fc=1.0, Fs=1.5, vs=1e-3),
    "ModifiedDahl": dict(Lambda=1.0, mu=1.0, a=1.0, b=1.0, d=1.0, e=0.0),
    "ViscousDahl": dict(kx=1.0, kw=1.0, rho=1.0),
    "AsymmetricViscousDahl": dict(kx1=1.0, kw1=1.0, kx2=1.0, kw2=1.0, rho=1.0),
    "BoucWen": dict(A=1.0, beta=1.0, gamma=0.0, n=1.0),
    "Masing": dict(k=1.0, k0=0.0, alpha=1.0),
    "Relay": dict(a1=-1.0, a2=1.0),
    "LinearSpring": dict(k=1.0),
    "LinearDamper": dict(c=1.0),
    "SpringDamper": dict(k=1.0, c=1.0),
}


def register_laws() -> list[str]:
    """Register the MuJoCo plugin of every law whose plugin name is fixed
    (``hystmech.<Law>``: the laws with scalar parameters), so that an MJCF file can
    carry ``<extension><plugin plugin="hystmech.LuGre">`` and instances of it; done on
    ``import hystmech.plugins.mujoco``. Laws with array parameters (MaxwellSlip,
    Preisach) and sums get instance-specific plugins: :func:`register` those (or use
    :func:`add_element`). Returns the registered names."""
    from ..components import get_element_class

    out = []
    for cls, kw in _FIXED_LAWS.items():
        try:
            el = get_element_class(cls)(**kw)
        except ValueError:        # a law module missing from this tree
            continue
        if plugin_name(el) == f"hystmech.{cls}":
            out.append(register(el))
    return out


# MJCF-only use: importing this module (with the 'mujoco' extra installed) registers
# every fixed-name law plugin; without mujoco the import fails naming the extra
engine("mujoco")
register_laws()
