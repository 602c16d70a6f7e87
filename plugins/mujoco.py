"""hystmech force elements inside MuJoCo, as native passive-force plugins.

Every law with a C kernel is a MuJoCo plugin ``hystmech.<Law>`` (``hystmech.LuGre``,
``hystmech.Preisach``, ``hystmech.MaxwellSlip``, ...) and the parallel sum is
``hystmech.Sum``, registered by the plugin library ``libhystmech_mujoco.so`` when it is
loaded (plugins/mujoco_build.py: ``hystmech plugins build`` / ``hystmech plugins
path``). The library needs no Python: a C/C++ program (or MuJoCo's ``simulate``) calls
``mj_loadPluginLibrary(path)`` before ``mj_loadXML``; in Python, ``import mujoco``
loads it once it is built, and ``import hystmech.plugins.mujoco`` builds it if needed.

MJCF (configuration keys: :func:`mjcf_reference`)::

    <extension>
      <plugin plugin="hystmech.LuGre">
        <instance name="elbow_friction">
          <config key="sigma0" value="1e5"/> <config key="sigma1" value="316"/>
          <config key="Fc" value="1"/> <config key="Fs" value="1.5"/>
          <config key="vs" value="0.001"/> <config key="joint" value="elbow"/>
        </instance>
      </plugin>
      <plugin plugin="hystmech.Preisach">   <!-- arrays: whitespace-separated -->
        <instance name="cable"><config key="a1" value="-0.004 -0.002 0"/>
          <config key="a2" value="-0.001 0.003 0.002"/>
          <config key="weights" value="3 5 4"/><config key="tendon" value="t1"/></instance>
      </plugin>
      <plugin plugin="hystmech.Sum">        <!-- parts, then part<i>.<keyword> -->
        <instance name="s"><config key="parts" value="Dahl LinearSpring"/>
          <config key="part0.rho" value="300"/><config key="part0.Fc" value="0.5"/>
          <config key="part1.k" value="30"/><config key="joint" value="elbow"/></instance>
      </plugin>
    </extension>

Keys are the law's constructor keywords; every value passes the constructor's checks
(compile error naming the key and its range). Python: :func:`add_element` writes the
same configuration from a law object.

Displacement convention (the same in every hystmech host; :mod:`.convention`): the
element sees u = q − q_ref, measured from the model's reference configuration —
a joint: q_ref = its ``springref`` where given (nonzero), else ``qpos0`` (the joint's
``ref``); a tendon: its length at ``qpos0``; the config ``ref`` overrides. The element
starts in its initial state at whatever u the simulation starts (set qpos before the
first step and the element sees that u, no path from the reference is traversed), as
the Assembly's elements start at the DOFs' x0 (u = x_a − x_b, reference x = 0). On a
joint it adds −F to qfrc_passive, on a tendon −F·J.

State: ``mjData.plugin_state`` holds only the law's state x and the input and time at
which it was committed (law states + 2 doubles; + 3 for a law with a step-mean kernel
(LuGre, Dahl, Bouc-Wen, modified Dahl) alone on a joint: the velocity prediction of its
implicit step force; laws with switch points or a step-mean kernel under the
semi-implicit integrators commit at the last step's midpoint, their window's back half):
``mj_getState`` / ``mj_setState`` / ``mj_copyData`` save and restore it exactly. A non-finite or
inconsistent state written into it is reported through ``mju_warning`` and the element
restarts from its initial state. Host discipline (trial/commit): a force evaluation
advances a copy of the committed state; MuJoCo's once-per-step ``advance`` commits.

Step-consistent force: LuGre's micro-slip transient (σ1/σ0, g/(σ0|v|)) is far shorter
than MuJoCo's default step, so the plugin hands MuJoCo the exact mean force of the
bristle state over the step's window (components/lugre.c lugre_mean; Dahl, Bouc-Wen and
modified Dahl likewise: dahl_mean, bouc_wen_mean, modified_dahl_mean), not the pointwise
σ1·ż at the step's start; under RK4 each stage takes its share of the step when the
bristles relax faster than the step. The front of the window is travelled at the
velocity the joint reaches under the force (backward Euler of the joint's own DOF,
β = h·Σ|M⁻¹_jk|; RK4: the implicit midpoint force at every stage where the element is
stiff), so a sticking bristle with ω·h ≫ 2 (a light link) stays stable and passive
(mujoco_plugin.c hm_implicit_step). Sensors: ``<sensor><plugin instance="name"/>``
records [F, x] (:func:`element_force`, :func:`element_state` at the step's start).

Implicit integrators: MuJoCo's Euler, ``implicit`` and ``implicitfast`` integrate the
joint's (tendon's) damping implicitly. ``add_element(..., implicit_damping=c)`` (MJCF:
add c to the joint's damping and set the config ``implicit_damping = c``) moves a
constant viscous part c of the law there; the plugin returns F − c·v, so the total is
unchanged and a stiff constant damping (e.g. Masing's c with h·c/m > 2) stays stable.
Measured on the scenario ``mujoco-lugre-joint`` (LuGre σ0 = 1e5, σ1 = 316, J ≈ 1 kg·m²)
at MuJoCo's default h = 2e-3 under ``implicitfast`` without it: the stick phases track
the converged creep velocity (|qvel| < 1e-5 rad/s) and the angle is within 0.006 % of the
converged run (at h = 1e-3, 2e-3 and 4e-3 it follows the converged stick creep to
5e-7 rad/s); RK4 at h = 8e-3 follows it within 0.1 %, and every RK4 stage advances a copy of the committed state from the
step's start (the first step of a fresh element included): order 4. Do not move LuGre's σ1 there: ∂F/∂v is σ1 + σ2 only while sticking,
and a larger constant c adds a spurious inertia c·h while slipping (24 % error).
"""
from __future__ import annotations

import ctypes
from ctypes import c_double, c_int, c_long, c_void_p

import numpy as np

from ._build import engine
from . import mujoco_build

__all__ = ["add_element", "plugin_name", "element_state", "element_force", "element_u",
           "element_failures", "element_reference",
           "mjcf_reference", "library_path"]

_SUM = "SumElement"


def library_path():
    """Path of the MuJoCo plugin library (built on first use; see mujoco_build)."""
    return mujoco_build.build()


def _lib():
    lib = mujoco_build.load()
    if not getattr(lib, "_hm_typed", False):
        for fn, res, args in (("hm_mj_is_element", c_int, [c_void_p, c_void_p, c_int]),
                              ("hm_mj_nx", c_int, [c_void_p, c_int]),
                              ("hm_mj_failures", c_long, [c_void_p, c_int]),
                              ("hm_mj_reference", c_double, [c_void_p, c_int]),
                              ("hm_mj_force", c_double, [c_void_p, c_void_p, c_int])):
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        lib._hm_typed = True
    return lib


def plugin_name(element) -> str:
    """The MuJoCo plugin of ``element``'s law: ``hystmech.<Law>``, ``hystmech.Sum`` for
    a parallel sum. FMUExportError (a ValueError) for a law without a C form."""
    from ..fmu.export import law_spec

    spec = law_spec(element)
    return "hystmech.Sum" if spec.cls_name == _SUM else f"hystmech.{spec.cls_name}"


def _fmt(v) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(v))


def _law_config(element, prefix: str = "") -> dict:
    """Configuration keys of one law from its exported constructor values."""
    from ..fmu.export import law_spec

    spec = law_spec(element)
    cfg, vals = {}, {}
    for n, v in zip(spec.q_names, spec.q_values):
        vals.setdefault(n.split("[")[0], []).append(v)
    for k, v in vals.items():
        cfg[prefix + k] = _fmt(v)
    return cfg


def element_config(element) -> dict:
    """The MJCF configuration keys (without the target) of ``element``."""
    from ..fmu.export import law_spec

    spec = law_spec(element)
    if spec.cls_name != _SUM:
        return _law_config(element)
    nmax = mujoco_build.max_parts(len({k.name for law in mujoco_build.law_table()
                                        for k in law.keys}))
    if len(element.parts) > nmax:
        raise ValueError(f"a hystmech.Sum in MuJoCo holds at most {nmax} parts "
                         f"(got {len(element.parts)}); add the rest as separate elements")
    cfg = {"parts": " ".join(type(p).__name__ for p in element.parts)}
    for i, p in enumerate(element.parts):
        cfg.update(_law_config(p, f"part{i}."))
    return cfg


def add_element(spec, element, *, joint: str | None = None, tendon: str | None = None,
                name: str, rtol: float = 1e-8, ref: float | None = None,
                implicit_damping: float = 0.0):
    """Add the force element ``element`` to the ``mujoco.MjSpec`` ``spec`` (before
    ``spec.compile()``) on a slide/hinge ``joint`` or a ``tendon``, as the plugin
    instance ``name``; returns the ``MjsPlugin``.

    u [m or rad] = joint coordinate (tendon length) − ``ref`` (default: the module's
    displacement convention), F [N or N·m] acts as −F on the joint (−F·J on the tendon's
    dofs); ``rtol`` is the tolerance of the law's adaptive segment update.
    ``implicit_damping`` c [N·s/m or N·m·s/rad] >= 0 is moved from the element into the
    joint's (tendon's) damping, which MuJoCo's Euler/implicit/implicitfast integrate
    implicitly; the plugin returns F − c·v, so the total force is unchanged. Give only a
    constant viscous part of the law (Masing's c, a damper's c, LuGre's σ2): a c above
    the law's ∂F/∂v in some state (LuGre's σ1 + σ2 while slipping) adds a spurious
    inertia c·h there. ValueError for a law without a C form, a bad name, target or
    option."""
    engine("mujoco")
    _lib()
    if (joint is None) == (tendon is None):
        raise ValueError("give exactly one of joint= and tendon=")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string (got {name!r})")
    what = "joint" if joint is not None else "tendon"
    tgt = joint if joint is not None else tendon
    if not isinstance(tgt, str) or not tgt:
        raise ValueError(f"{what} must be a name (got {tgt!r})")
    if isinstance(rtol, bool) or not (isinstance(rtol, (int, float)) and 0 < rtol < 1):
        raise ValueError(f"rtol must be in (0, 1) (got {rtol!r})")
    if ref is not None and (isinstance(ref, bool) or not isinstance(ref, (int, float))
                            or not np.isfinite(ref)):
        raise ValueError(f"ref must be a finite number [m or rad] or None (got {ref!r})")
    if isinstance(implicit_damping, bool) or not isinstance(implicit_damping, (int, float)) \
            or not (np.isfinite(implicit_damping) and implicit_damping >= 0):
        raise ValueError(f"implicit_damping must be in [0, inf) (got {implicit_damping!r})")
    found = spec.joint(tgt) if joint is not None else spec.tendon(tgt)
    if found is None:
        raise ValueError(f"the spec has no {what} named {tgt!r}")
    if any(p.name == name for p in spec.plugins):
        raise ValueError(f"the spec already has a plugin instance named {name!r}")
    pname = plugin_name(element)
    cfg = element_config(element)
    cfg[what] = tgt
    cfg["rtol"] = repr(float(rtol))
    if ref is not None:
        cfg["ref"] = repr(float(ref))
    if implicit_damping:
        found.damping[0] = found.damping[0] + float(implicit_damping)
        cfg["implicit_damping"] = repr(float(implicit_damping))
    if pname not in [p.plugin_name for p in spec.plugins if not p.name]:
        spec.activate_plugin(pname)
    inst = spec.add_plugin(name=name, plugin_name=pname, active=True)
    inst.config = cfg
    return inst


# -- readers ---------------------------------------------------------------------------
def _instance(model, data, name):
    mujoco = engine("mujoco")
    i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_PLUGIN, name)
    if i < 0:
        raise ValueError(f"the model has no plugin instance named {name!r}")
    if not _lib().hm_mj_is_element(model._address, data._address, i):
        raise ValueError(f"plugin instance {name!r} is not a hystmech element")
    return i


def _block(model, data, name):
    i = _instance(model, data, name)
    a = int(model.plugin_stateadr[i])
    return i, data.plugin_state[a: a + int(model.plugin_statenum[i])]


def element_state(model, data, name: str) -> np.ndarray:
    """The committed internal state x of the element ``name`` (a copy), at the committed
    input :func:`element_u`."""
    i, s = _block(model, data, name)
    return np.array(s[:_lib().hm_mj_nx(data._address, i)])


def element_u(model, data, name: str) -> float:
    """The committed input u of the element ``name`` [m or rad]: the current u after a
    step, or for a law with switch points or a fast transient (LuGre) under
    Euler/implicit/implicitfast the last step's midpoint q − h·v/2 (nan before the first
    step: the element then starts at the current u)."""
    i, s = _block(model, data, name)
    return float(s[_lib().hm_mj_nx(data._address, i)])


def element_reference(model, data, name: str) -> float:
    """The target coordinate [m or rad] at which the element's u is 0 (the convention
    of this module's docstring, or the config ``ref``)."""
    i = _instance(model, data, name)
    return float(_lib().hm_mj_reference(data._address, i))


def element_failures(model, data, name: str) -> int:
    """How many times the element's kernel could not continue in this mjData (e.g. a
    Preisach memory stack overflow: more nested reversals than max_depth; the memory
    then keeps its last state for that segment). Reported once through mju_warning."""
    i = _instance(model, data, name)
    return int(_lib().hm_mj_failures(data._address, i))


def element_force(model, data, name: str) -> float:
    """The force [N or N·m] of the element ``name`` at the current u and velocity (its
    committed state moved on to the current u along a straight segment; after
    ``mj_step``: the force at the new time, pointwise), including the part handed to
    MuJoCo as implicit damping."""
    i = _instance(model, data, name)
    return float(_lib().hm_mj_force(model._address, data._address, i))


# -- MJCF reference --------------------------------------------------------------------
def mjcf_reference() -> list[dict]:
    """For every plugin of the library: ``{"plugin": "hystmech.<Law>", "law": class
    name, "keys": [{"key", "unit", "meaning", "required", "default", "array"}]}``, from
    the law classes (constructor keywords and defaults, Param units and texts); the
    keys every element has (joint, tendon, rtol, ref, implicit_damping) come last in
    each list, and ``hystmech.Sum`` describes its ``parts`` / ``part<i>.<key>`` scheme."""
    laws = mujoco_build.law_table()
    common = [{"key": k, "unit": u, "meaning": m, "required": False, "default": None,
               "array": False} for k, (u, m) in mujoco_build.COMMON.items()]
    out = []
    for law in laws:
        keys = []
        for k in law.keys:
            keys.append({"key": k.name, "unit": k.unit, "meaning": k.doc,
                         "required": k.need == "required",
                         "default": (k.default if k.need == "default" else
                                     "computed as in the constructor" if k.need == "auto"
                                     else None),
                         "array": k.count != 1})
        out.append({"plugin": f"hystmech.{law.name}", "law": law.name, "keys": keys + common})
    nk = len({k.name for law in laws for k in law.keys})
    npart = mujoco_build.max_parts(nk)
    out.append({"plugin": "hystmech.Sum", "law": "SumElement", "keys": [
        {"key": "parts", "unit": "", "required": True, "default": None, "array": True,
         "meaning": f"names of the summed laws, e.g. 'Dahl LinearSpring' (at most {npart}; "
                    f"F = sum of the parts' forces, components/combine.py)"},
        {"key": "part<i>.<keyword>", "unit": "as the law's", "required": True,
         "default": None, "array": False,
         "meaning": "keyword of part i (0-based) as in that law's own plugin"}] + common})
    return out


# importing this module (with the 'mujoco' extra) builds the library once per MuJoCo
# version if needed and loads it; without mujoco the import fails naming the extra
engine("mujoco")
_lib()
