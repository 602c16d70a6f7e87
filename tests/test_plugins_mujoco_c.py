"""The hystmech MuJoCo plugin library used as MuJoCo users outside Python use it: a C
program compiled against the mujoco wheel's headers and libmujoco (tests/c/mj_run.c)
loads the library (mj_loadPluginLibrary / mj_loadAllPluginLibraries), loads MJCF or an
.mjb written by Python, steps it, and must reproduce the Python run bit for bit; a fresh
Python process that loads the MJCF written by ``spec.to_xml()`` must too, for every law
(Preisach, Maxwell-slip and sums included)."""
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from hystmech.plugins import mujoco as hmj  # noqa: E402
from hystmech.plugins import mujoco_build  # noqa: E402
from hystmech.plugins._build import cache_dir  # noqa: E402

from plugin_rig import CASES  # noqa: E402

HERE = Path(__file__).resolve().parent
# laws with a mean kernel (LAW_mean, hm_law.h) and with switch points (LAW_switch)
MEAN_LAWS = {"LuGre", "Dahl", "BoucWen", "ModifiedDahl"}
SWITCH_LAWS = {"Masing", "MaxwellSlip", "Relay", "Preisach"}

# LuGre on a hinge, Preisach on a tendon over two slide joints, a sum (Dahl + spring)
# and a Maxwell-slip element; a keyframe sets the initial velocities
MJCF = """<mujoco><option timestep="2e-4" gravity="0 0 -9.81" integrator="Euler"/>
<extension>
 <plugin plugin="hystmech.LuGre"><instance name="lugre">
  <config key="sigma0" value="1e4"/><config key="sigma1" value="30"/><config key="Fc" value="0.2"/>
  <config key="Fs" value="0.3"/><config key="vs" value="0.01"/><config key="sigma2" value="0.05"/>
  <config key="joint" value="hinge"/></instance></plugin>
 <plugin plugin="hystmech.Preisach"><instance name="preisach">
  <config key="a1" value="-0.004 -0.002 -0.003 0 0.001"/>
  <config key="a2" value="-0.001 0.003 0.001 0.002 0.004"/>
  <config key="weights" value="3 5 2 4 1.5"/><config key="k0" value="200"/>
  <config key="max_depth" value="16"/><config key="tendon" value="span"/></instance></plugin>
 <plugin plugin="hystmech.Sum"><instance name="sum">
  <config key="parts" value="Dahl LinearSpring"/><config key="part0.rho" value="300"/>
  <config key="part0.Fc" value="0.5"/><config key="part1.k" value="30"/>
  <config key="joint" value="s1"/></instance></plugin>
 <plugin plugin="hystmech.MaxwellSlip"><instance name="mslip">
  <config key="k" value="1e3 2e3 3e3"/><config key="delta" value="1e-3 2e-3 0"/>
  <config key="joint" value="s2"/></instance></plugin>
</extension>
<worldbody>
 <body name="arm"><joint name="hinge" type="hinge" axis="0 1 0" stiffness="3"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/></body>
 <body name="b1" pos="0 1 0"><joint name="s1" type="slide" axis="1 0 0" stiffness="40"/>
  <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
  <body name="b2"><joint name="s2" type="slide" axis="1 0 0" stiffness="60"/>
   <inertial pos="0 0 0" mass="0.5" diaginertia="1 1 1"/></body></body>
</worldbody>
<tendon><fixed name="span"><joint joint="s1" coef="1"/><joint joint="s2" coef="0.5"/></fixed></tendon>
<keyframe><key qvel="2 0.3 -0.2"/></keyframe>
</mujoco>"""

N = 3000


@pytest.fixture(scope="session")
def c_runner():
    """tests/c/mj_run.c compiled against the wheel's headers and libmujoco, once per
    content (cached next to the plugin library)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src = HERE / "c" / "mj_run.c"
    libmj = mujoco_build._libmujoco()
    inc = Path(mujoco.HEADERS_DIR).resolve().parent
    key = hashlib.sha256(src.read_bytes() + str(libmj).encode()).hexdigest()[:16]
    exe = cache_dir() / f"mj_run-{key}"
    if not exe.exists():
        exe.parent.mkdir(parents=True, exist_ok=True)
        tmp = exe.with_name(exe.name + ".tmp")
        subprocess.run([cc, "-O2", f"-I{inc}", str(src), "-o", str(tmp), f"-L{libmj.parent}",
                        f"-l:{libmj.name}", f"-Wl,-rpath,{libmj.parent}"], check=True)
        tmp.replace(exe)
    return exe


def run_c(exe, lib, model_file, n, tmp_path, first=None, sensors=False):
    """Rows of qpos, qvel, plugin_state after every step (then sensordata, with
    sensors=True), and the number of plugin instances."""
    out = tmp_path / "out.bin"
    r = subprocess.run([str(exe), str(lib), str(model_file), str(n), str(out)]
                       + ([str(first)] if first else []),
                       capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    nq, nv, ns, nplugin, nsd = map(int, r.stdout.split())
    rows = np.fromfile(out).reshape(n, nq + nv + ns + nsd)
    return (rows if sensors else rows[:, :nq + nv + ns]), nplugin


def run_py(model, n):
    d = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, d, 0)
    rows = []
    for _ in range(n):
        mujoco.mj_step(model, d)
        rows.append(np.concatenate([d.qpos, d.qvel, d.plugin_state]))
    return np.array(rows)


def bitwise(a, b):
    """Same bits (NaN markers included)."""
    a, b = np.ascontiguousarray(a, float), np.ascontiguousarray(b, float)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def test_c_program_matches_python_bitwise(c_runner, tmp_path):
    """MJCF with LuGre on a hinge, Preisach on a tendon, a sum and a Maxwell-slip
    element: the C program (no Python) after mj_loadPluginLibrary(file) and after
    mj_loadAllPluginLibraries(dir) gives the Python trajectory bit for bit; the
    elements really act (the run differs from the one without them)."""
    xml = tmp_path / "model.xml"
    xml.write_text(MJCF)
    model = mujoco.MjModel.from_xml_string(MJCF)
    py = run_py(model, N)
    lib = hmj.library_path()
    c_file, nplugin = run_c(c_runner, lib, xml, N, tmp_path)
    c_dir, _ = run_c(c_runner, lib.parent, xml, N, tmp_path)
    assert nplugin == 4
    assert bitwise(c_file, py)
    assert bitwise(c_dir, py)
    # the plugin_state is the law states plus the committed (u, t): LuGre 1 + 2 + 1
    # (the velocity its implicit step force predicts from the last step), Preisach
    # 3 + 2·16 + 2, Dahl + spring 1 + 2 + 1 (Dahl's implicit step), Maxwell 3 + 2
    assert list(model.plugin_statenum) == [4, 37, 4, 5]
    bare = run_py(mujoco.MjModel.from_xml_string(
        MJCF.split("<extension>")[0] + MJCF.split("</extension>")[1]), N)
    assert np.max(np.abs(bare[:, :3] - py[:, :3])) > 1e-3
    for a in model.plugin_stateadr:       # every element's state moved (each one acts)
        assert np.ptp(py[:, 6 + a]) > 0


def test_mjb_from_python_runs_in_c(c_runner, tmp_path):
    """An .mjb saved by Python (mj_saveModel) loads and runs in the C program exactly as
    in Python. MuJoCo stores plugin slot numbers in an .mjb: the C program registers
    the plugins Python had (the wheel's bundled ones, then hystmech's) in that order."""
    model = mujoco.MjModel.from_xml_string(MJCF)
    mjb = tmp_path / "model.mjb"
    mujoco.mj_saveModel(model, str(mjb), None)
    first = mujoco.PLUGINS_DIR if Path(mujoco.PLUGINS_DIR).is_dir() else None
    c, _ = run_c(c_runner, hmj.library_path(), mjb, N, tmp_path, first)
    assert bitwise(c, run_py(model, N))


def _all_laws_spec(h=1e-4):
    """Every exportable case of the FMU tests (each law, Preisach continuous, sums, the
    cable law) on its own slide joint with a spring, via add_element."""
    bodies = []
    names = sorted(CASES)
    for i, name in enumerate(names):
        bodies.append(f'<body pos="0 {i} 0"><joint name="j{i}" type="slide" axis="1 0 0" '
                      f'stiffness="50"/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
                      f'</body>')
    keys = " ".join(f"{CASES[n][1] * 40:.6g}" for n in names)     # ~ amplitude·ω
    xml = (f'<mujoco><option timestep="{h}" gravity="0 0 0" integrator="Euler"/><worldbody>'
           + "".join(bodies) + f'</worldbody><keyframe><key qvel="{keys}"/></keyframe>'
           '</mujoco>')
    spec = mujoco.MjSpec.from_string(xml)
    for i, name in enumerate(names):
        hmj.add_element(spec, CASES[name][0](), joint=f"j{i}", name=name)
    return spec, names


def test_saved_xml_replays_bitwise_for_every_law(c_runner, tmp_path):
    """mj_saveLastXML-style MJCF (spec.to_xml) of every law, Preisach, Maxwell-slip and
    sums included, with stable plugin names: a fresh Python process and the C program
    replay the in-process run bit for bit. Each element's plugin_state is its law's
    own state (n_states of the Python law) plus the committed input and time, switch
    laws included (no window force or parameter stored there), and for LuGre the
    velocity prediction of its implicit step force."""
    spec, names = _all_laws_spec()
    model = spec.compile()
    for i, name in enumerate(names):
        el = CASES[name][0]()
        # + 1 for a law with a mean kernel (LuGre, Dahl, Bouc-Wen, modified Dahl, or a sum
        # with one and no switch law) on a joint: its implicit step force's velocity
        # prediction
        parts = [type(p).__name__ for p in (getattr(el, "parts", None) or [el])]
        has_e = any(p in MEAN_LAWS for p in parts) and not any(p in SWITCH_LAWS
                                                                for p in parts)
        assert model.plugin_statenum[i] == el.n_states + 2 + has_e, name
    assert any(CASES[n][0]().kind != "smooth" for n in names)
    xml = tmp_path / "all.xml"
    xml.write_text(spec.to_xml())
    text = xml.read_text()
    assert 'plugin="hystmech.Sum"' in text and 'plugin="hystmech.Preisach"' in text
    assert "hystmech.Preisach." not in text            # no instance-hashed names
    n = 1500
    ref = run_py(model, n)
    c, nplugin = run_c(c_runner, hmj.library_path(), xml, n, tmp_path)
    assert nplugin == len(names)
    assert bitwise(c, ref)
    prog = ("import sys, numpy as np, mujoco, hystmech.plugins.mujoco\n"
            f"m = mujoco.MjModel.from_xml_path({str(xml)!r})\n"
            "d = mujoco.MjData(m); mujoco.mj_resetDataKeyframe(m, d, 0)\n"
            "rows = []\n"
            f"for _ in range({n}):\n"
            "    mujoco.mj_step(m, d)\n"
            "    rows.append(np.concatenate([d.qpos, d.qvel, d.plugin_state]))\n"
            f"np.save({str(tmp_path / 'py.npy')!r}, np.array(rows))\n")
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert bitwise(np.load(tmp_path / "py.npy"), ref)
    # every element moved off its initial state
    assert np.all(np.ptp(ref[:, :len(names)], axis=0) > 0)


def test_cli_build_and_path(tmp_path):
    """`hystmech plugins path` prints where the library is; `hystmech plugins build
    --dir DIR` puts it into DIR and keeps an existing build (built once: no compiler
    run, the file is untouched)."""
    import contextlib
    import io
    import os
    import shutil as sh

    from hystmech.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["plugins", "path"]) == 0
    assert buf.getvalue().strip() == str(hmj.library_path())
    (tmp_path / "lib").mkdir()
    so = tmp_path / "lib" / mujoco_build.LIBNAME
    sh.copy(hmj.library_path(), so)
    os.utime(so, (1e9, 1e9))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["plugins", "build", "--dir", str(tmp_path / "lib")]) == 0
    assert Path(buf.getvalue().strip()) == so and so.stat().st_mtime == 1e9


def test_missing_compiler_names_the_plugin_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HYSTMECH_MUJOCO_PLUGIN_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    from hystmech.plugins._build import PluginBuildError

    with pytest.raises(PluginBuildError, match=r"hystmech MuJoCo plugin library.*"
                                               r"hystmech plugins build"):
        mujoco_build.build()


def test_mjcf_reference_matches_the_library():
    """mjcf_reference() (the MuJoCo docs page's table) lists every law with a C kernel
    by its constructor keywords, units from its Param declarations; the library knows
    each plugin and asks for its first required key by that name."""
    import inspect

    from hystmech.components import get_element_class

    ref = hmj.mjcf_reference()
    names = [r["plugin"] for r in ref]
    assert names[-1] == "hystmech.Sum" and len(names) == len(set(names)) >= 13
    for r in ref[:-1]:
        cls = get_element_class(r["law"])
        keys = [k["key"] for k in r["keys"]]
        sig = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
        law_keys = keys[:len(keys) - len(mujoco_build.COMMON)]
        assert law_keys == [p for p in sig if p in law_keys]        # constructor order
        assert keys[-len(mujoco_build.COMMON):] == list(mujoco_build.COMMON)
        units = {p.name: p.unit for p in cls.param_info}
        assert all(k["unit"] == units.get(k["key"], "") for k in r["keys"][:len(law_keys)])
        first = next(k["key"] for k in r["keys"] if k["required"])
        xml = MJCF_ONE.format(plugin=r["plugin"])
        with pytest.raises(ValueError, match=f"missing config '{first}'"):
            mujoco.MjModel.from_xml_string(xml)


MJCF_ONE = """<mujoco><extension><plugin plugin="{plugin}"><instance name="e">
<config key="joint" value="x"/></instance></plugin></extension>
<worldbody><body><joint name="x" type="slide" axis="1 0 0"/>
<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody></mujoco>"""


def test_element_force_as_mjcf_sensor_in_c(c_runner, tmp_path):
    """Every element of MJCF (LuGre on a hinge, Preisach on a tendon, a sum, Maxwell-slip)
    with a <sensor><plugin instance=.../> reads [F, x]: in Python the sensor of each step
    equals element_force and element_state at the step's start bit for bit, and the C
    program (no Python) records the same sensordata bit for bit."""
    names = ["lugre", "preisach", "sum", "mslip"]
    xml = MJCF.replace("</tendon>", "</tendon><sensor>" + "".join(
        f'<plugin name="{n}_F" instance="{n}"/>' for n in names) + "</sensor>")
    model = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    n = 600
    rows, forces = [], []
    for _ in range(n):
        mujoco.mj_forward(model, d)            # tendon lengths at the step's start
        forces.append([hmj.element_force(model, d, e) for e in names]
                      + [list(hmj.element_state(model, d, e)) for e in names])
        mujoco.mj_step(model, d)
        rows.append(np.array(d.sensordata))
    for k in range(n):
        for j, e in enumerate(names):
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{e}_F")
            a, dim = model.sensor_adr[i], model.sensor_dim[i]
            got = rows[k][a:a + dim]
            want = np.array([forces[k][j]] + forces[k][len(names) + j])
            assert dim == len(want) and bitwise(got, want), (k, e, got, want)
    assert np.ptp([f[0] for f in forces]) > 0.1           # the LuGre force moves
    f = tmp_path / "model.xml"
    f.write_text(xml)
    c, _ = run_c(c_runner, hmj.library_path(), f, n, tmp_path, sensors=True)
    nsd = model.nsensordata
    assert bitwise(c[:, -nsd:], np.array(rows))


# one law per model on a spring-loaded slider, and a chain with three laws
MJB_LAWS = {
    "Dahl": dict(rho="300", Fc="0.5"),
    "LuGre": dict(sigma0="1e5", sigma1="316", Fc="1", Fs="1.5", vs="1e-3"),
    "Masing": dict(k="1e4", k0="100", alpha="5", c="2"),
    "BoucWen": dict(A="1e4", beta="2e3", gamma="1e3", n="1.5", k_el="10"),
}


def _mjb_model(laws):
    ext, bodies, close = "", "", ""
    for i, (law, cfg) in enumerate(laws):
        keys = "".join(f'<config key="{k}" value="{v}"/>' for k, v in cfg.items())
        ext += (f'<plugin plugin="hystmech.{law}"><instance name="e{i}">{keys}'
                f'<config key="joint" value="j{i}"/></instance></plugin>')
        bodies += (f'<body pos="0 0 {-0.1 if i else 0}"><joint name="j{i}" type="slide" '
                   f'axis="1 0 0" stiffness="100"/><geom type="box" size=".05 .05 .05" '
                   f'mass="1"/>')
        close += "</body>"
    qv = " ".join(["0.5"] * len(laws))
    return mujoco.MjModel.from_xml_string(
        f'<mujoco><option gravity="0 0 0"/><extension>{ext}</extension><worldbody>'
        f'{bodies}{close}</worldbody><keyframe><key qvel="{qv}"/></keyframe></mujoco>')


@pytest.mark.parametrize("laws", [[n] for n in MJB_LAWS] + [list(MJB_LAWS)],
                         ids=list(MJB_LAWS) + ["chain"])
def test_mjb_from_python_runs_in_c_with_only_hystmech(c_runner, tmp_path, laws):
    """An .mjb saved by Python, where MuJoCo's bundled plugins registered before
    hystmech's (so every slot number in the file is off), runs in a plain C program that
    loads only hystmech's library, bit for bit as in Python: the instance's stored
    configuration names its law (each hystmech plugin has its own attribute count)."""
    bundled = Path(mujoco.PLUGINS_DIR)
    if not (bundled.is_dir() and any(bundled.iterdir())):
        pytest.skip("no bundled MuJoCo plugins: the slots cannot differ")
    model = _mjb_model([(n, MJB_LAWS[n]) for n in laws])
    mjb = tmp_path / "model.mjb"
    mujoco.mj_saveModel(model, str(mjb), None)
    c, nplugin = run_c(c_runner, hmj.library_path(), mjb, 1000, tmp_path)
    assert nplugin == len(laws)
    py = run_py(model, 1000)
    assert bitwise(c, py)
    assert np.ptp(py[:, 0]) > 1e-3                      # it moved


def test_foreign_mjb_instance_is_refused_by_name(c_runner, tmp_path):
    """An .mjb whose instance belongs to one of MuJoCo's bundled plugins (mujoco.pid,
    registered in Python only) points at a hystmech slot in a C program that loads only
    hystmech's library: refused with a message naming the plugin found at the slot and
    the counts, never run as a hystmech law."""
    try:
        model = mujoco.MjModel.from_xml_string(
            '<mujoco><extension><plugin plugin="mujoco.pid"><instance name="pid">'
            '<config key="kp" value="40"/></instance></plugin></extension><worldbody>'
            '<body><joint name="j" type="slide" axis="1 0 0"/><geom type="box" '
            'size=".05 .05 .05" mass="1"/></body></worldbody><actuator><plugin joint="j" '
            'plugin="mujoco.pid" instance="pid"/></actuator></mujoco>')
    except ValueError as e:
        pytest.skip(f"no mujoco.pid plugin: {e}")
    mjb = tmp_path / "pid.mjb"
    mujoco.mj_saveModel(model, str(mjb), None)
    r = subprocess.run([str(c_runner), str(hmj.library_path()), str(mjb), "10",
                        str(tmp_path / "out.bin")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "configuration values" in out and "hystmech." in out, out


def test_every_law_force_as_mjcf_sensor_in_c(c_runner, tmp_path):
    """Every law of the registry (each exportable case on its own joint, sums and
    Preisach continuous included) with a <sensor><plugin instance=.../>: the sensor of
    each step equals element_force and element_state at the step's start bit for bit in
    Python, and the C program (no Python) records the same sensordata bit for bit.
    h = 1e-5: the viscous Dahl cases' viscous terms (kx ≈ 1.6e5 N·s/m on 1 kg) are
    explicit-stable there (h·kx/m < 2; at 1e-4 they need implicit_damping)."""
    spec, names = _all_laws_spec(h=1e-5)
    xml = spec.to_xml()
    sensors = "".join(f'<plugin name="{n}_F" instance="{n}"/>' for n in names)
    xml = xml.replace("</mujoco>", f"<sensor>{sensors}</sensor></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    n = 200
    rows, forces = [], []
    for _ in range(n):
        mujoco.mj_forward(model, d)
        forces.append([np.array([hmj.element_force(model, d, e)]
                                + list(hmj.element_state(model, d, e))) for e in names])
        mujoco.mj_step(model, d)
        rows.append(np.array(d.sensordata))
    moved = []
    for j, e in enumerate(names):
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{e}_F")
        a, dim = model.sensor_adr[i], model.sensor_dim[i]
        got = np.array([r[a:a + dim] for r in rows])
        want = np.array([f[j] for f in forces])
        assert got.shape == want.shape and bitwise(got, want), e
        moved.append(np.ptp(got[:, 0]) > 0)
    # every force moves over the 2 ms but the relay's (piecewise constant, no threshold
    # reached at these speeds)
    assert [e for e, mv in zip(names, moved) if not mv] == ["Relay"]
    f = tmp_path / "model.xml"
    f.write_text(xml)
    c, _ = run_c(c_runner, hmj.library_path(), f, n, tmp_path, sensors=True)
    assert bitwise(c[:, -model.nsensordata:], np.array(rows))
