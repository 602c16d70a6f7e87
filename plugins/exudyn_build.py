"""Building and loading the compiled Exudyn host (plugins/exudyn_host.cpp): a pybind11
module whose user functions Exudyn calls as plain C function pointers, and the laws'
C kernels (components/LAW.c, plugins/_build.kernel_library) it calls per slot.

Needs a C++ compiler ($CXX, g++, c++ or clang++) and the pybind11 headers (the
``exudyn`` extra installs them); the module is compiled once per content, Exudyn
version and Python, and cached (plugins/_build.cache_dir). Exudyn takes the
pointer only when the module's pybind11 has its function-record layout (Exudyn 1.13
is built with pybind11 2.13): :func:`host_module` checks this once per process with
a probe connector and returns None when it does not hold (or nothing can be built),
and the elements then run through Python user functions.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import warnings
from pathlib import Path

from ._build import HERE, PluginBuildError, cache_dir

SOURCE = HERE / "exudyn_host.cpp"
_MODULE = {}


def _compiler() -> str:
    for c in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        exe = shutil.which(c.split()[0]) if c else None
        if exe:
            return exe
    raise PluginBuildError("no C++ compiler found (tried $CXX, g++, c++, clang++)")


def build_host() -> Path:
    """Compile plugins/exudyn_host.cpp (cached by content) and return the library."""
    try:
        import pybind11
    except ImportError:
        raise PluginBuildError("the pybind11 headers are missing: pip install "
                               "'hystmech[exudyn]' (or pip install 'pybind11<3')") from None
    import exudyn

    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    incs = [pybind11.get_include(), sysconfig.get_paths()["include"]]
    flags = ["-O2", "-fno-math-errno", "-fPIC", "-shared", "-std=c++17",
             "-fvisibility=hidden", "-Wall"]
    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(" ".join(flags + incs + [suffix, pybind11.__version__,
                                      exudyn.__version__]).encode())
    out = cache_dir() / f"exudyn-host-{h.hexdigest()[:20]}" / f"hystmech_exudyn_host{suffix}"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    cmd = [_compiler(), *flags, *[f"-I{i}" for i in incs], str(SOURCE), "-o", str(tmp)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise PluginBuildError(f"compiling the Exudyn host failed ({' '.join(cmd)}):\n"
                               f"{r.stderr.strip()[-2000:]}")
    os.replace(tmp, out)
    return out


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("hystmech_exudyn_host", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _probe(mod) -> bool:
    """Does Exudyn call mod.spring as a C function pointer? A probe connector whose
    slot returns 7·u: through the pointer its force is 7·u; through Python the call
    fails (Exudyn's MainSystem is not a type of this module)."""
    import exudyn as exu
    import numpy as np
    from exudyn.itemInterface import (CoordinateSpringDamper, MarkerNodeCoordinate,
                                      NodeGenericODE2, NodePointGround, ObjectGenericODE2)

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    g = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()),
                                           coordinate=0))
    n = mbs.AddNode(NodeGenericODE2(numberOfODE2Coordinates=1, referenceCoordinates=[0.0],
                                    initialCoordinates=[0.25], initialCoordinates_t=[0.0]))
    mbs.AddObject(ObjectGenericODE2(nodeNumbers=[n], massMatrix=[[1.0]]))
    mk = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n, coordinate=0))
    hid = mod.new_host(None)
    fn = _probe_kernels()
    p, x = np.array([7.0]), np.zeros(1)
    sid = mod.new_slot(hid, -1, fn["adv"], fn["force"], 0, 0, p.ctypes.data, 1, x.ctypes.data,
                       1, 0.0, 1e-8, 3.0)
    try:
        c = mbs.AddObject(CoordinateSpringDamper(markerNumbers=[g, mk], offset=float(sid),
                                                 damping=3.0, springForceUserFunction=mod.spring))
        mod.set_item(sid, c)
        mod.anchor(sid, x.ctypes.data, 0.25, 0.0)
        mbs.Assemble()
        F = float(mbs.GetObjectOutput(c, exu.OutputVariableType.Force))
        # the adaptive route finds its elements by the MainSystem Exudyn passes to a
        # user function: usable when that is the object the Python mbs wraps
        _MODULE["ms"] = mod.host_ms(hid) == mod.ms_address(mbs) != 0
    except Exception:
        return False
    finally:
        mod.close_host(hid)
    return F == 7.0 * 0.25


def _probe_kernels():
    """A linear spring F = p[0]·u as C function pointers (ctypes callbacks)."""
    if "probe" not in _MODULE:
        ADV = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_double), ctypes.c_double,
                               ctypes.c_double, ctypes.c_double, ctypes.c_double,
                               ctypes.POINTER(ctypes.c_double), ctypes.c_double)
        FRC = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                               ctypes.c_double, ctypes.c_double,
                               ctypes.POINTER(ctypes.c_double))
        adv = ADV(lambda *a: None)
        frc = FRC(lambda x, u, v, p: p[0] * u)
        _MODULE["probe"] = {"adv": ctypes.cast(adv, ctypes.c_void_p).value,
                            "force": ctypes.cast(frc, ctypes.c_void_p).value,
                            "keep": (adv, frc)}
    return _MODULE["probe"]


def host_module():
    """The compiled host module, or None (with one warning naming the cause) when it
    cannot be built or Exudyn does not take its functions as C pointers."""
    if "mod" in _MODULE:
        return _MODULE["mod"]
    mod = None
    if os.environ.get("HYSTMECH_EXUDYN_PYTHON"):
        _MODULE["mod"] = None
        return None
    try:
        mod = _load(build_host())
        if not _probe(mod):
            warnings.warn("hystmech.plugins.exudyn: this Exudyn does not call the compiled "
                          "host's user functions as C pointers (a pybind11 other than 2.x "
                          "with Exudyn's function-record layout); the elements run through "
                          "Python user functions (slower)", RuntimeWarning, stacklevel=3)
            mod = None
    except (PluginBuildError, ImportError, OSError) as e:
        warnings.warn(f"hystmech.plugins.exudyn: the compiled host is unavailable ({e}); "
                      f"the elements run through Python user functions (slower)",
                      RuntimeWarning, stacklevel=3)
        mod = None
    _MODULE["mod"] = mod
    return mod


def ode_ready() -> bool:
    """True when the compiled host serves the adaptive route (route="ode1"): built,
    called through C pointers, and the MainSystem of a user-function call identified."""
    return host_module() is not None and bool(_MODULE.get("ms"))


def law_kernels(law):
    """The C kernels of ``law`` as addresses {adv, force, sw, fail, rate} (sw 0: a
    smooth law or none; rate 0: none), or None when the law has no C form (custom Python callables). The library
    stays loaded (plugins/_build.kernel_library keeps every one it loads)."""
    from ..fmu.export import FMUExportError, law_spec
    from ._build import kernel_library

    try:
        spec = law_spec(law)
        lib = kernel_library(spec)
    except (FMUExportError, PluginBuildError, OSError):
        return None
    addr = lambda name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value  # noqa: E731
    try:
        out = {"adv": addr(f"{spec.prefix}_advance"), "force": addr(f"{spec.prefix}_force"),
               "fail": addr("hm_mj_take_fail")}
    except AttributeError:
        return None
    try:
        out["sw"] = addr(f"{spec.prefix}_switch") if law.kind != "smooth" else 0
    except AttributeError:
        out["sw"] = 0
    try:
        out["rate"] = addr(f"{spec.prefix}_rate") if law.kind == "smooth" else 0
    except AttributeError:
        out["rate"] = 0
    return out
