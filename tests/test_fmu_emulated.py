"""The cross-built binaries run (issue 20 item 4): every law's FMU is exported with its
win64 and aarch64-linux binaries (zig cc); one small C co-simulation master
(tests/c/fmu_harness.c, built for each platform by zig cc) loads and steps all of them
in one process, the win64 build under wine, the aarch64 build under qemu-user, the
linux64 build natively; F and every state at 401 communication points equal the
linux64 binary's to 1e-12 (relative to the largest value of each column).

Slow (CI's second step): the first win64 build on a machine compiles zig's mingw-w64
runtime (minutes) and wine initialises its prefix once (about 20 s; kept in the FMU
cache folder). Skipped, naming what is missing, where wine (Debian wine64) or
qemu-user with the aarch64 C library (Debian qemu-user, libc6-arm64-cross) is not
installed."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hystmech.fmu import export_fmu
from hystmech.fmu.export import _cache_dir, fmi_headers_dir, zig_available

from test_fmu_cases import available

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not zig_available(), reason="ziglang is not installed")]
HARNESS = Path(__file__).resolve().parent / "c" / "fmu_harness.c"
AARCH64_SYSROOT = Path("/usr/aarch64-linux-gnu")
N_POINTS = 401


def _wine():
    for w in ("wine64", "wine"):
        if shutil.which(w):
            return shutil.which(w)
    w = Path("/usr/lib/wine/wine64")  # Debian's wine64 without the wine wrapper package
    return str(w) if w.exists() else None


def _build_harness(out: Path, target: str | None):
    inc = fmi_headers_dir()
    if target is None:
        cmd = [shutil.which("gcc") or shutil.which("cc"), "-O2"]
    else:
        cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, "-O2"]
    cmd += [f"-I{inc}", str(HARNESS), "-o", str(out)]
    if target is None or "linux" in target:
        cmd += ["-ldl", "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    """{law: (unzipped folder, guid, n states, amplitude, frequency)} for every law."""
    from fmpy import read_model_description

    d = tmp_path_factory.mktemp("emu")
    out = {}
    for name, (make, amp, freq) in available().items():
        path = export_fmu(make(), d / f"{name}.fmu",
                          platforms=["linux64", "win64", "aarch64-linux"])
        md = read_model_description(str(path))
        nx = sum(1 for v in md.modelVariables if 100000 <= v.valueReference < 200000)
        zipfile.ZipFile(path).extractall(d / name)
        out[name] = (d / name, md.guid, nx, amp, freq, md.coSimulation.modelIdentifier)
    return out


def _plan(fmus, folder, ext, path_of=str):
    lines = [f"{path_of(root / 'binaries' / folder / (ident + ext))} {guid} {nx} {amp!r} {freq!r}"
             for root, guid, nx, amp, freq, ident in fmus.values()]
    return "\n".join(lines) + "\n"


def _parse(text: str, fmus) -> dict:
    """{law: array (N_POINTS, 1 + n states)} from the harness's output."""
    assert "error" not in text, text[text.find("error"):][:500]
    blocks = text.replace("\r", "").split("fmu ")[1:]
    assert len(blocks) == len(fmus), text[:500]
    res = {}
    for name, block in zip(fmus, blocks):
        rows = [ln.split()[1:] for ln in block.splitlines()[1:] if ln.strip()]
        a = np.array(rows, dtype=float)
        assert a.shape == (N_POINTS, 1 + fmus[name][2]), (name, a.shape)
        res[name] = a
    return res


def _run(cmd, plan: str, tmp: Path, env=None) -> str:
    (tmp / "plan.txt").write_text(plan)
    r = subprocess.run([*cmd, "plan.txt"], capture_output=True, text=True, cwd=tmp,
                       env=env, timeout=600)
    assert r.returncode == 0, (r.stdout[-1500:], r.stderr[-1500:])
    return r.stdout


@pytest.fixture(scope="module")
def native(fmus, tmp_path_factory):
    """The linux64 binaries stepped by the natively built harness: the reference."""
    d = tmp_path_factory.mktemp("nat")
    exe = _build_harness(d / "harness", None)
    ref = _parse(_run([str(exe)], _plan(fmus, "linux64", ".so"), d), fmus)
    for name, a in ref.items():  # a real run: F moves, stays finite
        assert np.all(np.isfinite(a)) and np.ptp(a[:, 0]) > 0, name
    return ref


def _compare(got: dict, ref: dict):
    worst = {}
    for name, r in ref.items():
        scale = np.maximum(np.abs(r).max(axis=0), 1e-300)
        worst[name] = float((np.abs(got[name] - r) / scale).max())
    print("largest relative difference to linux64:", worst)
    assert max(worst.values()) <= 1e-12, worst
    return worst


def test_win64_dlls_under_wine_equal_linux64(fmus, native, tmp_path):
    wine = _wine()
    if wine is None:
        pytest.skip("wine is not installed (Debian: apt-get install wine64)")
    env = dict(os.environ, WINEDEBUG="-all", WINEPREFIX=str(_cache_dir() / "wineprefix"))
    if not (Path(env["WINEPREFIX"]) / "system.reg").exists():  # initialised once per machine
        subprocess.run([wine, "wineboot", "--init"], env=env, capture_output=True, timeout=600)
    exe = _build_harness(tmp_path / "harness.exe", "x86_64-windows-gnu")

    def winpath(p):  # wine maps the Unix root to drive Z:
        return "Z:" + str(p).replace("/", "\\")

    got = _parse(_run([wine, str(exe)], _plan(fmus, "win64", ".dll", winpath), tmp_path, env),
                 fmus)
    _compare(got, native)


def test_aarch64_linux_under_qemu_equals_linux64(fmus, native, tmp_path):
    qemu = shutil.which("qemu-aarch64")
    if qemu is None or not (AARCH64_SYSROOT / "lib" / "libc.so.6").exists():
        pytest.skip("qemu-user or the aarch64 C library is not installed (Debian: apt-get "
                    "install qemu-user libc6-arm64-cross)")
    exe = _build_harness(tmp_path / "harness", "aarch64-linux-gnu.2.17")
    got = _parse(_run([qemu, "-L", str(AARCH64_SYSROOT), str(exe)],
                      _plan(fmus, "aarch64-linux", ".so"), tmp_path), fmus)
    _compare(got, native)
