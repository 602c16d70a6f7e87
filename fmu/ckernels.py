"""The laws' C kernels (components/*.c) as a ctypes library, to check them against
the Python kernels and to time them. ``CKernels(element)`` gives advance/force/rate/
setup with the Python calling convention."""
from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
from ctypes import POINTER, c_char_p, c_double, c_int
from pathlib import Path

import numpy as np

from .export import FMUExportError, _cache_dir, find_compiler, law_spec

_LIBS: dict = {}
_DP = POINTER(c_double)


def c_sources() -> list[Path]:
    """Every law's C file (components/*.c)."""
    from .. import components

    return sorted(Path(components.__file__).resolve().parent.glob("*.c"))


def content_key(text: str, sources) -> str:
    """Cache key of a kernel build: hash of ``text`` (generated C, "" for none), the C
    files ``sources`` and the hm_law.h next to them."""
    sources = list(sources)
    key = hashlib.sha256(text.encode())
    for f in sources + [sources[0].parent / "hm_law.h"]:
        key.update(f.name.encode() + f.read_bytes())
    return key.hexdigest()[:20]


def load_library(cc: str | None = None):
    """Compile every components/*.c into one shared library (cached by content)."""
    srcs = c_sources()
    comp = srcs[0].parent
    h = content_key("", srcs)
    if h in _LIBS:
        return _LIBS[h]
    so = _cache_dir() / f"kernels-{h}.so"
    if not so.exists():
        exe = find_compiler(cc)
        so.parent.mkdir(parents=True, exist_ok=True)
        tmp = so.with_suffix(".tmp.so")
        cmd = [exe, "-O2", "-fPIC", "-shared", "-std=c99", f"-I{comp}", *map(str, srcs),
               "-o", str(tmp), "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise FMUExportError(f"compiling the C kernels failed:\n{r.stderr.strip()}")
        tmp.replace(so)
    lib = ctypes.CDLL(str(so))
    _LIBS[h] = lib
    return lib


def load_generated(spec, cc: str | None = None):
    """Compile a generated law (spec.generated, e.g. a SumElement's hm_sum.c, which
    includes its parts' components/*.c) into its own shared library (cached by content)."""
    comp = spec.c_sources()[0].parent
    h = content_key(spec.generated, spec.c_sources())
    if h in _LIBS:
        return _LIBS[h]
    so = _cache_dir() / f"generated-{h}.so"
    if not so.exists():
        exe = find_compiler(cc)
        so.parent.mkdir(parents=True, exist_ok=True)
        src = so.with_suffix(f".{os.getpid()}.c")
        src.write_text(spec.generated)
        tmp = so.with_suffix(f".{os.getpid()}.tmp.so")
        cmd = [exe, "-O2", "-fPIC", "-shared", "-std=c99", "-D_POSIX_C_SOURCE=200809L",
               f"-I{comp}", str(src), "-o", str(tmp), "-lm"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        src.unlink(missing_ok=True)
        if r.returncode != 0:
            raise FMUExportError(f"compiling the generated law failed:\n{r.stderr.strip()}")
        os.replace(tmp, so)
    lib = ctypes.CDLL(str(so))
    _LIBS[h] = lib
    return lib


class CKernels:
    """The C kernels of ``element``'s law, called like the Python ones."""

    def __init__(self, element, cc: str | None = None):
        self.spec = law_spec(element)
        lib = load_generated(self.spec, cc) if self.spec.generated else load_library(cc)
        pre = self.spec.prefix
        self._adv = getattr(lib, f"{pre}_advance")
        self._adv.argtypes = [_DP, c_double, c_double, c_double, c_double, _DP, c_double]
        self._adv.restype = None
        self._force = getattr(lib, f"{pre}_force")
        self._force.argtypes = [_DP, c_double, c_double, _DP]
        self._force.restype = c_double
        self._rate = getattr(lib, f"{pre}_rate", None)
        if self._rate is not None:
            self._rate.argtypes = [_DP, c_double, c_double, _DP, _DP]
            self._rate.restype = None
        self._setup = getattr(lib, f"{pre}_setup")
        self._setup.argtypes = [_DP, c_int, _DP, c_int, _DP, c_int]
        self._setup.restype = c_char_p

    @staticmethod
    def _ptr(a):
        return a.ctypes.data_as(_DP)

    def _check(self, x, p):
        # the C side trusts the sizes: refuse anything that would read past the arrays
        if x.size != self.spec.n_x or np.asarray(p).size != self.spec.n_p:
            raise ValueError(f"x must have {self.spec.n_x} and p {self.spec.n_p} entries "
                             f"(got {x.size}, {np.asarray(p).size})")

    def advance(self, x, u0, u1, dt, v, p, rtol):
        if x.dtype != np.float64 or not x.flags.c_contiguous:
            raise ValueError("x must be a contiguous float64 array (advanced in place)")
        self._check(x, p)
        self._adv(self._ptr(x), u0, u1, dt, v, self._ptr(np.ascontiguousarray(p)), rtol)

    def force(self, x, u, v, p):
        self._check(np.asarray(x), p)
        return self._force(self._ptr(np.ascontiguousarray(x, dtype=float)), u, v,
                           self._ptr(np.ascontiguousarray(p)))

    def rate(self, x, u, v, p, out):
        self._check(np.asarray(x), p)
        if out.size != self.spec.n_x:
            raise ValueError(f"out must have {self.spec.n_x} entries")
        self._rate(self._ptr(np.ascontiguousarray(x, dtype=float)), u, v,
                   self._ptr(np.ascontiguousarray(p)), self._ptr(out))

    def setup(self, q=None):
        """(p, x0) from constructor parameters q (default: the element's); ValueError
        with the C message when the C checks reject them."""
        q = np.asarray(self.spec.q_values if q is None else q, dtype=float)
        p = np.zeros(self.spec.n_p)
        x0 = np.zeros(max(self.spec.n_x, 1))
        err = self._setup(self._ptr(q), q.size, self._ptr(p), p.size, self._ptr(x0),
                          self.spec.n_x)
        if err:
            raise ValueError(err.decode())
        return p, x0[: self.spec.n_x]
