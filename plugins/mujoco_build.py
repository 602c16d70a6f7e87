"""Building, finding and loading hystmech's MuJoCo plugin library.

The library ``libhystmech_mujoco.so`` is one C translation unit: plugins/mujoco_plugin.c
(the MuJoCo callbacks and a load-time constructor that registers every plugin, as
MuJoCo's first-party plugins do), every law's C kernel (components/*.c) and the law
table ``hm_mj_laws.h`` generated here from the law classes (their constructor keywords,
defaults and Param declarations). It is built once per MuJoCo version and source
content into :func:`plugin_dir` and needs no compiler and no Python afterwards:

* ``hystmech plugins build`` builds it (``--dir DIR`` into another folder, e.g. one
  shipped with an application), ``hystmech plugins path`` prints where it is;
* C/C++: ``mj_loadPluginLibrary("<path>/libhystmech_mujoco.so")`` or
  ``mj_loadAllPluginLibraries("<dir>", NULL)`` before ``mj_loadXML``;
* Python: ``import mujoco`` loads it through the ``mujoco.plugins`` entry point
  (hystmech_mujoco_entry.py) once it is built from the installed sources;
  ``import hystmech.plugins.mujoco`` builds it on first use when needed and loads it.

Folder: ``$HYSTMECH_MUJOCO_PLUGIN_DIR`` if set, else
``$HYSTMECH_PLUGIN_CACHE/mujoco-<version>-<hash>`` (default cache:
``$XDG_CACHE_HOME/hystmech/plugins``, see ``hystmech.paths``).
"""
from __future__ import annotations

import hashlib
import inspect
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._build import HERE, PluginBuildError, cache_dir

LIBNAME = "libhystmech_mujoco.so"

# One instance of each law (any valid values): it gives the order of the constructor
# parameters in the C setup's vector q and which of them are arrays. Defaults, units
# and meanings come from the class (signature, Param declarations).
SAMPLES = {
    "Dahl": dict(rho=1.0, Fc=1.0),
    "LuGre": dict(sigma0=1e5, sigma1=316.0, Fc=1.0, Fs=1.5, vs=1e-3),
    "ModifiedDahl": dict(Lambda=1.0, mu=1.0, a=1.0, b=1.0, d=1.0, e=0.0),
    "ViscousDahl": dict(kx=1.0, kw=1.0, rho=1.0),
    "AsymmetricViscousDahl": dict(kx1=1.0, kw1=1.0, kx2=1.0, kw2=1.0, rho=1.0),
    "BoucWen": dict(A=1.0, beta=1.0, gamma=0.0, n=1.0),
    "Masing": dict(k=1.0, k0=0.0, alpha=1.0),
    "MaxwellSlip": dict(k=[1.0, 2.0], delta=[1.0, 2.0], z0=[0.0, 0.0]),
    "Relay": dict(a1=-1.0, a2=1.0),
    "Preisach": dict(a1=[-1.0, 0.0], a2=[0.0, 1.0], weights=[1.0, 1.0], max_depth=4,
                     slope_width=1.0),
    "LinearSpring": dict(k=1.0),
    "LinearDamper": dict(c=1.0),
    "SpringDamper": dict(k=1.0, c=1.0),
}
# keywords that the C side computes when absent (the constructor's None default) and
# optional fixed-size arrays (absent: the law has no such entries in q)
AUTO = {"MaxwellSlip": {"z0"}, "Preisach": {"slope_width"}}
OPTIONAL = {"Preisach": {"grid": 2}}
SIZES = {"MaxwellSlip": "hm_sizes_maxwell_slip", "Preisach": "hm_sizes_preisach"}
COMPLETE = {"MaxwellSlip": "hm_complete_maxwell_slip", "Preisach": "hm_complete_preisach"}
# configuration keys every element has besides its law's
COMMON = {
    "joint": ("", "name of the slide or hinge joint the element acts on"),
    "tendon": ("", "name of the tendon the element acts on (instead of joint)"),
    "rtol": ("1", "tolerance of the law's adaptive segment update, in (0, 1); default 1e-8"),
    "ref": ("m or rad", "joint coordinate / tendon length where u = 0; default: the joint's "
            "springref if nonzero, else qpos0; a tendon's length at qpos0"),
    "implicit_damping": ("N.s/m or N.m.s/rad", "part of the joint's (tendon's) damping that "
                         "stands for the law's viscous term: the plugin returns F - c·v and "
                         "MuJoCo applies -c·v implicitly; must not exceed that damping; "
                         "default 0"),
}


@dataclass
class Key:
    name: str
    count: int          # values: > 0 fixed, 0 an array (as long as the law's others)
    need: str           # "required", "default", "optional", "auto"
    default: float | None
    unit: str
    doc: str


@dataclass
class Law:
    name: str
    prefix: str
    c_file: Path
    keys: list
    nx: int | None      # None: depends on the instance (array laws)
    np_: int | None
    switch: bool
    check: bool
    mean: bool = False  # LAW_mean: the exact mean force over a segment (hm_law.h)


def _count_keys(q_names) -> list:
    out = []
    for n in q_names:
        base = n.split("[")[0]
        if out and out[-1][0] == base and "[" in n:
            out[-1][1] = 0
        elif not out or out[-1][0] != base:
            out.append([base, 0 if "[" in n else 1])
    return out


def law_table() -> list:
    """Every law with a C kernel, as the MuJoCo plugin library registers it."""
    from ..components import get_element_class
    from ..fmu.export import law_spec

    laws = []
    for name, kw in SAMPLES.items():
        cls = get_element_class(name)
        el = cls(**{k: (np.asarray(v) if isinstance(v, list) else v) for k, v in kw.items()})
        spec = law_spec(el)
        sig = inspect.signature(cls.__init__).parameters
        info = {p.name: p for p in cls.param_info}
        counts = dict(_count_keys(spec.q_names))
        keys = []
        for k, prm in sig.items():
            if k == "self":
                continue
            if k in counts:
                cnt = counts[k]
            elif k in OPTIONAL.get(name, {}):
                cnt = OPTIONAL[name][k]
            else:
                continue            # not a numeric parameter (callables: g, f)
            d = prm.default
            if d is inspect.Parameter.empty:
                need, dv = "required", None
            elif k in AUTO.get(name, set()):
                need, dv = "auto", None
            elif d is None:
                need, dv = "optional", None
            else:
                need, dv = "default", float(d)
            pi = info.get(k)
            keys.append(Key(k, cnt, need, dv, pi.unit if pi else "", pi.doc if pi else ""))
        order = [k.name for k in keys if k.name in counts]
        if order != list(counts):
            raise RuntimeError(f"{name}: constructor keywords {order} are not in the order of "
                               f"the C setup's parameters {list(counts)}")
        text = spec.c_file.read_text()
        fixed = name not in SIZES
        laws.append(Law(name, spec.prefix, spec.c_file, keys,
                        spec.n_x if fixed else None, spec.n_p if fixed else None,
                        f"{spec.prefix}_switch(" in text, f"{spec.prefix}_check(" in text,
                        f"{spec.prefix}_mean(" in text))
    return laws


def _c_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def max_parts(nkeys: int) -> int:
    """Most parts of a hystmech.Sum: MuJoCo takes at most 255 configuration attributes
    per plugin ("parts", the common keys, then part<i>.<key> for every law keyword)."""
    return max(1, min(8, (255 - 1 - len(COMMON)) // nkeys))


def generate_header(laws) -> str:
    """C text of hm_mj_laws.h: the laws' kernels (#include of components/*.c) and the
    table of their plugin names, configuration keys and kernels."""
    from ..fmu.ckernels import c_sources

    need = {"required": "HM_REQ", "default": "HM_DEF", "optional": "HM_OPT", "auto": "HM_AUTO"}
    L = ["/* generated by hystmech.plugins.mujoco_build from the law classes: do not edit */"]
    L += [f'#include "{f.name}"' for f in c_sources()]
    allkeys = []
    for i, law in enumerate(laws):
        L.append(f"static const hm_key_t hm_keys_{i}[] = {{")
        for k in law.keys:
            d = repr(k.default) if k.default is not None else "0.0"
            L.append(f"    {{{_c_str(k.name)}, {k.count}, {need[k.need]}, {d}, "
                     f"{_c_str(k.unit)}, {_c_str(k.doc)}}},")
            if k.name not in allkeys:
                allkeys.append(k.name)
        L.append("};")
    L.append("static const hm_law_t hm_laws[] = {")
    for i, law in enumerate(laws):
        p = law.prefix
        L.append(f"    {{{_c_str(law.name)}, {p}_advance, {p}_force, {p}_setup, "
                 f"{p + '_switch' if law.switch else 'NULL'}, "
                 f"{p + '_check' if law.check else 'NULL'}, "
                 f"{p + '_mean' if law.mean else 'NULL'}, {len(law.keys)}, hm_keys_{i}, "
                 f"{law.nx if law.nx is not None else -1}, "
                 f"{law.np_ if law.np_ is not None else -1}, "
                 f"{SIZES.get(law.name, 'NULL')}, {COMPLETE.get(law.name, 'NULL')}}},")
    L.append("};")
    L.append(f"#define HM_NLAWS {len(laws)}")
    # the laws in table order: PLAIN(prefix, number of states) for the laws without switch
    # points, state check and mean kernel (fast callbacks, mujoco_plugin.c), MEAN(prefix,
    # number of states) for those with a mean kernel (windowed fast callbacks),
    # OTHER(prefix) else
    L.append("#define HM_LAW_LIST(PLAIN, OTHER, MEAN) " + " ".join(
        f"OTHER({law.prefix})" if law.switch or law.check or law.nx is None
        else f"MEAN({law.prefix}, {law.nx})" if law.mean
        else f"PLAIN({law.prefix}, {law.nx})" for law in laws))
    L.append(f"#define HM_LAW_NAMES {_c_str(', '.join(law.name for law in laws))}")
    L.append("static const char *const hm_allkeys[] = {" + ", ".join(map(_c_str, allkeys)) + "};")
    L.append(f"#define HM_NALLKEYS {len(allkeys)}")
    # the sum's attributes: parts, the common keys, part<i>.<key>; MuJoCo allows 255
    L.append(f"#define HM_MAX_PARTS {max_parts(len(allkeys))}")
    return "\n".join(L) + "\n"


def _mujoco():
    from ._build import engine

    return engine("mujoco")


def _sources_key(header: str) -> str:
    from ..fmu.ckernels import c_sources

    mj = _mujoco()
    h = hashlib.sha256(header.encode())
    srcs = c_sources()
    for f in [HERE / "mujoco_plugin.c", *srcs, srcs[0].parent / "hm_law.h",
              *sorted(Path(mj.HEADERS_DIR).glob("*.h"))]:
        h.update(f.name.encode() + f.read_bytes())
    h.update(" ".join(FLAGS).encode())
    return h.hexdigest()[:16]


FLAGS = ["-O2", "-fno-math-errno", "-fPIC", "-shared", "-std=c99", "-fvisibility=hidden",
         "-D_POSIX_C_SOURCE=200809L", "-DHM_NO_SYMVER", "-Wall", "-Wno-unused-function"]


def plugin_dir(header: str | None = None) -> Path:
    """The folder of the MuJoCo plugin library for the installed mujoco (see the module
    docstring); it holds only ``libhystmech_mujoco.so``, so that
    ``mj_loadAllPluginLibraries`` on it loads just hystmech's plugins."""
    d = os.environ.get("HYSTMECH_MUJOCO_PLUGIN_DIR")
    if d:
        return Path(d)
    if header is None:
        header = generate_header(law_table())
    return cache_dir() / f"mujoco-{_mujoco().__version__}-{_sources_key(header)}"


def library_path() -> Path:
    """Path of the library (built or not)."""
    return plugin_dir() / LIBNAME


def _libmujoco() -> Path:
    mj = _mujoco()
    mjdir = Path(mj.__file__).resolve().parent
    libs = sorted(mjdir.glob("libmujoco.so*"))
    if not libs:
        raise PluginBuildError(f"libmujoco not found in {mjdir}; reinstall 'hystmech[mujoco]'")
    return libs[0]


def build(directory: str | os.PathLike | None = None, *, force: bool = False,
          cc: str | None = None) -> Path:
    """Build the plugin library (once: an existing one for the same MuJoCo version and
    sources is kept unless ``force``) into ``directory`` (default :func:`plugin_dir`)
    and return its path. PluginBuildError naming the fix when no C compiler is found or
    the compilation fails."""
    from ..fmu.export import FMUExportError, find_compiler

    header = generate_header(law_table())
    out_dir = Path(directory) if directory is not None else plugin_dir(header)
    so = out_dir / LIBNAME
    if so.exists() and not force:
        if directory is None:
            _write_marker(out_dir)
        return so
    try:
        exe = find_compiler(cc)
    except FMUExportError:
        raise PluginBuildError(
            f"the hystmech MuJoCo plugin library ({LIBNAME}, plugins hystmech.<Law>) is not "
            f"built for MuJoCo {_mujoco().__version__} and no C compiler was found (tried "
            f"{cc or os.environ.get('CC') or 'gcc, cc, clang'}): install gcc (e.g. apt-get "
            f"install gcc) or set CC, then run `hystmech plugins build`; or build it on "
            f"another machine with `hystmech plugins build --dir DIR` and set "
            f"HYSTMECH_MUJOCO_PLUGIN_DIR=DIR") from None
    from ..fmu.ckernels import c_sources

    libmj = _libmujoco()
    out_dir.mkdir(parents=True, exist_ok=True)
    tmpdir = out_dir / f".build-{os.getpid()}"
    tmpdir.mkdir(exist_ok=True)
    (tmpdir / "hm_mj_laws.h").write_text(header)
    tmp = tmpdir / LIBNAME
    inc = Path(_mujoco().HEADERS_DIR).resolve().parent
    comp = c_sources()[0].parent
    cmd = [exe, *FLAGS, f"-I{tmpdir}", f"-I{comp}", f"-I{inc}", str(HERE / "mujoco_plugin.c"),
           "-o", str(tmp), f"-L{libmj.parent}", f"-l:{libmj.name}",
           f"-Wl,-rpath,{libmj.parent}", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise PluginBuildError(f"compiling the hystmech MuJoCo plugin library failed "
                               f"({' '.join(cmd)}):\n{r.stderr.strip()}")
    os.replace(tmp, so)
    if directory is None:
        _write_marker(out_dir)
    (tmpdir / "hm_mj_laws.h").unlink(missing_ok=True)
    try:
        tmpdir.rmdir()
    except OSError:
        pass
    return so


def _marker() -> Path:
    from hystmech_mujoco_entry import install_key

    return cache_dir() / f"mujoco-{_mujoco().__version__}-{install_key()}.json"


def _source_files() -> list:
    """The files the library is generated and compiled from: the law modules and their
    C twins, this module, the plugin source."""
    from ..fmu.ckernels import c_sources

    comp = c_sources()[0].parent
    return [HERE / "mujoco_plugin.c", Path(__file__).resolve(), *sorted(comp.glob("*.py")),
            *sorted(comp.glob("*.[ch]"))]


def _write_marker(out_dir: Path) -> None:
    """Record the default build (and its sources' size and mtime) for `import mujoco`
    (hystmech_mujoco_entry.load, which must not import hystmech)."""
    import json

    rec = {"library": str(out_dir / LIBNAME),
           "sources": [[str(f), f.stat().st_mtime_ns, f.stat().st_size]
                       for f in _source_files()]}
    m = _marker()
    try:
        if not m.exists() or json.loads(m.read_text()) != rec:
            tmp = m.with_name(f".{m.name}.{os.getpid()}")
            tmp.write_text(json.dumps(rec))
            os.replace(tmp, m)
    except (OSError, ValueError):
        pass


_LOADED: dict = {}


def load(path: Path | None = None):
    """Load the library into MuJoCo (building it first if needed) and return its ctypes
    handle (the readers of hystmech.plugins.mujoco call into it)."""
    import ctypes

    if path is None:
        try:        # the up-to-date default build, without generating the law table
            from hystmech_mujoco_entry import built_library

            path = built_library()
        except ImportError:
            path = None
    so = Path(path) if path is not None else build()
    if _LOADED and str(so) not in _LOADED:
        # MuJoCo registers a plugin name once per process: the library loaded first
        # (`import mujoco` loads the default build, or HYSTMECH_MUJOCO_PLUGIN_DIR's)
        # serves every later caller
        return next(iter(_LOADED.values()))
    key = str(so)
    if key not in _LOADED:
        mj = _mujoco()
        mj.mj_loadPluginLibrary(key)       # runs the constructor: registers the plugins
        _LOADED[key] = ctypes.CDLL(key)    # the same handle (dlopen is reference-counted)
    return _LOADED[key]


def add_arguments(parser) -> None:
    """``hystmech plugins build [--dir DIR] [--force]`` / ``hystmech plugins path``."""
    sub = parser.add_subparsers(dest="plugins_cmd", metavar="{build,path}", required=True,
                                parser_class=type(parser))
    b = sub.add_parser("build", help="build the MuJoCo plugin library (once per MuJoCo "
                                     "version) and print its path")
    b.add_argument("--dir", default=None, help="output folder (default: hystmech plugins path)")
    b.add_argument("--force", action="store_true", help="rebuild even if it exists")
    sub.add_parser("path", help="print the path of the MuJoCo plugin library")


def main(args) -> int:
    """Run ``hystmech plugins build|path`` (exit 2 with one line on stderr on failure)."""
    try:
        if args.plugins_cmd == "build":
            print(build(args.dir, force=args.force))
        else:
            p = library_path()
            print(p)
            if not p.exists():
                print("hystmech: note: not built yet: run `hystmech plugins build`",
                      file=sys.stderr)
    except (PluginBuildError, ImportError) as e:
        print(f"hystmech: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    return 0
