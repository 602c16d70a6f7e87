"""Source FMUs that build with standard tools (issue 20 item 3): sources/ compiles with
`fmpy compile` (fmpy's CMake project, which links no libm), with the files that the FMI
3.0 buildDescription.xml names, and with a plain `cc -shared` without extra flags, and
the rebuilt binary gives bitwise the results of the shipped one. One FMU holds every
law: the parallel sum of all exportable laws (fmu/export.py writes it as one generated
C law that includes every components/*.c), so one build covers every law's C twin."""
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hystmech.fmu import export_fmu
from hystmech.fmu.export import find_compiler, fmi_headers_dir, glibc_versions, zig_available

from test_fmu_cases import available

LINUX = sys.platform.startswith("linux")
# the newest glibc symbol version a linux64 binary may need: built by zig cc for
# x86_64-linux-gnu.2.17 (the exporter's choice where ziglang is installed) 2.17; built
# by the system compiler 2.29, which holds the current exp/log/pow/exp2/log2
GLIBC_BASELINE = (2, 17) if zig_available() else (2, 29)


def _every_law():
    els = [c[0]() for c in available().values()]
    s = els[0]
    for e in els[1:]:
        s = s + e
    return s


@pytest.fixture(scope="module")
def all_laws_fmu(tmp_path_factory):
    d = tmp_path_factory.mktemp("src")
    return export_fmu(_every_law(), d / "AllLaws.fmu", platforms="native")


def _strip(path, out):
    with zipfile.ZipFile(path) as zi, zipfile.ZipFile(out, "w") as zo:
        for item in zi.namelist():
            if not item.startswith("binaries/"):
                zo.writestr(item, zi.read(item))
    return out


def _run(path):
    """F and every state after 300 co-simulation steps of a two-harmonic input with
    reversals (fmpy), as arrays."""
    from fmpy import simulate_fmu
    from fmpy import read_model_description

    md = read_model_description(str(path))
    states = [v.name for v in md.modelVariables if v.valueReference >= 100000
              and v.valueReference < 200000]
    t = np.linspace(0.0, 0.3, 301)
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float), ("v", float)])
    w = 2 * np.pi * 5.0
    sig["time"] = t
    sig["u"] = 2e-3 * (np.sin(w * t) + 0.3 * np.sin(3.7 * w * t))
    sig["v"] = 2e-3 * w * (np.cos(w * t) + 1.11 * np.cos(3.7 * w * t))
    r = simulate_fmu(str(path), fmi_type="CoSimulation", input=sig, output=["F"] + states,
                     step_size=1e-3, output_interval=1e-3, stop_time=0.3)
    return np.column_stack([r[n] for n in ["F"] + states])


@pytest.mark.skipif(not LINUX, reason="builds a linux64 binary")
def test_fmpy_compile_rebuilds_every_law_bitwise(tmp_path, all_laws_fmu):
    """`fmpy compile` on the FMU stripped of its binaries: builds (no "no symbol version
    section for versioned symbol exp@GLIBC_2.2.5"), and the rebuilt FMU's F and all
    states over 300 steps are bitwise those of the shipped binary."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    bare = _strip(all_laws_fmu, tmp_path / "bare.fmu")
    r = subprocess.run([str(Path(sys.executable).parent / "fmpy"), "compile", str(bare)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    with zipfile.ZipFile(bare) as zf:
        assert any(n.startswith("binaries/linux64/") and n.endswith(".so") for n in zf.namelist())
    a, b = _run(all_laws_fmu), _run(bare)
    assert a.shape[1] > 600 and np.all(np.isfinite(a))
    assert np.array_equal(a, b)


@pytest.mark.skipif(not LINUX, reason="builds a linux64 binary")
def test_build_description_and_plain_cc(tmp_path):
    """FMI 3.0: the source files named in sources/buildDescription.xml, compiled with a
    plain `cc -shared -fPIC` (the FMI headers the only include, no -lm, no defines),
    give a binary whose results equal the shipped one's bitwise; the shipped linux
    binary needs no glibc newer than the baseline."""
    from fmpy import simulate_fmu

    make, amp, freq = available()["ModifiedDahl"]  # exp/log/pow/expm1 users
    path = export_fmu(make(), tmp_path / "MD3.fmu", fmi_version=3, platforms="native")
    d = tmp_path / "unz"
    with zipfile.ZipFile(path) as zf:
        zf.extractall(d)
    shipped = next((d / "binaries" / "x86_64-linux").glob("*.so"))
    assert max(glibc_versions(shipped)) <= GLIBC_BASELINE
    bd = ET.parse(d / "sources" / "buildDescription.xml").getroot()
    conf = bd.find("BuildConfiguration")
    files = [d / "sources" / f.get("name") for f in conf.iter("SourceFile")]
    so = tmp_path / "rebuilt.so"
    r = subprocess.run([find_compiler(), "-shared", "-fPIC", f"-I{fmi_headers_dir()}",
                        *map(str, files), "-o", str(so)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    shutil.copy(so, shipped)
    rebuilt = tmp_path / "MD3_rebuilt.fmu"
    shutil.make_archive(str(rebuilt.with_suffix("")), "zip", d)
    rebuilt.with_suffix(".zip").rename(rebuilt)
    t = np.linspace(0.0, 0.2, 201)
    sig = np.zeros(t.size, dtype=[("time", float), ("u", float), ("v", float)])
    sig["time"], sig["u"] = t, amp * np.sin(2 * np.pi * freq * t)
    sig["v"] = amp * 2 * np.pi * freq * np.cos(2 * np.pi * freq * t)
    kw = dict(fmi_type="CoSimulation", input=sig, output=["F"], step_size=1e-3,
              output_interval=1e-3, stop_time=0.2)
    a = simulate_fmu(str(path), **kw)["F"]
    b = simulate_fmu(str(rebuilt), **kw)["F"]
    assert np.all(np.isfinite(a)) and np.ptp(a) > 1.0
    assert np.array_equal(a, b)


@pytest.mark.skipif(not LINUX, reason="ELF binaries")
def test_glibc_baseline_of_every_law(tmp_path, all_laws_fmu):
    """The linux64 binary holding every law's C twin needs glibc symbol versions no
    newer than the baseline (read from its version-needs table by the exporter's
    reader, and by objdump where installed)."""
    d = tmp_path / "x"
    with zipfile.ZipFile(all_laws_fmu) as zf:
        zf.extractall(d)
    so = next((d / "binaries" / "linux64").glob("*.so"))
    vers = glibc_versions(so)
    assert vers and max(vers) <= GLIBC_BASELINE, sorted(vers)
    if shutil.which("objdump"):
        out = subprocess.run(["objdump", "-T", str(so)], capture_output=True, text=True).stdout
        od = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", out)}
        assert max(od) == max(vers)
