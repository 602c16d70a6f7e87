"""What a user of `hystmech export-fmu` / `export_fmu` sees (issue 29): the native binary
only by default, other platforms when asked and each announced with a progress bar on a
terminal, a build failure that says why, the FMU's variables listed by the return value,
the CLI, the FMU's documentation page and the FMI guide, and messages that do not
contradict themselves."""
import fcntl
import math
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import textwrap
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from hystmech.components import Dahl, get_element_class
from hystmech.fmu import FMUExportError, export_fmu
from hystmech.fmu.export import resolve_platforms

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


def _description_variables(path):
    """(name, causality, unit) of every ScalarVariable, read with ElementTree (not with
    the code under test)."""
    with zipfile.ZipFile(path) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    out = []
    for sv in root.iter("ScalarVariable"):
        real = sv.find("Real")
        out.append((sv.get("name"), sv.get("causality", "local"),
                    (real.get("unit") if real is not None else None) or ""))
    return out


def _binaries(path):
    with zipfile.ZipFile(path) as zf:
        return sorted({n.split("/")[1] for n in zf.namelist() if n.startswith("binaries/")})


def test_native_binary_only_by_default(tmp_path, monkeypatch):
    """Without --platforms (and without $HYSTMECH_FMU_PLATFORMS) only linux64 is built,
    even where ziglang (which would cross-build four more) is installed."""
    monkeypatch.delenv("HYSTMECH_FMU_PLATFORMS", raising=False)
    assert resolve_platforms(None) == ["linux64"]
    p = export_fmu(Dahl(rho=200.0, Fc=2.0), tmp_path / "d.fmu")
    assert _binaries(p) == ["linux64"] and p.platforms == ("linux64",)
    env = {k: v for k, v in os.environ.items() if k != "HYSTMECH_FMU_PLATFORMS"}
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "Dahl", "--param", "rho=200",
                        "--param", "Fc=2", "-o", str(tmp_path / "c.fmu")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert _binaries(tmp_path / "c.fmu") == ["linux64"]
    # not a terminal: the build is announced, no bar is drawn
    assert "building binaries/linux64 (1 of 1" in r.stderr and "\r" not in r.stderr


def _run_on_terminal(cmd, env):
    """Run ``cmd`` with stderr on a pseudo-terminal; return (returncode, stdout, stderr)."""
    master, slave = pty.openpty()
    # a terminal 100 columns wide (a fresh pseudo-terminal reports 0 columns)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    out = proc.stdout.read()
    proc.wait(timeout=300)
    os.close(master)
    return proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace")


def test_native_build_announced_with_a_bar_on_a_terminal(tmp_path):
    """On a terminal the native build is announced and its tqdm bar drawn; --quiet:
    nothing on stderr."""
    exe = str(BIN / "hystmech")
    cmd = [exe, "export-fmu", "Dahl", "--param", "rho=200", "--param", "Fc=2",
           "-o", str(tmp_path / "d.fmu")]
    rc, out, err = _run_on_terminal(cmd, dict(os.environ))
    assert rc == 0, err
    assert "building binaries/linux64 (1 of 1, " in err
    assert re.search(r"  linux64: █+ \d\d:\d\d", err), err
    assert "wrote " in out
    rc, out, err = _run_on_terminal(cmd[:-2] + ["--quiet", "-o", str(tmp_path / "q.fmu")],
                                    dict(os.environ))
    assert rc == 0 and err == "", err


@pytest.mark.slow
def test_platforms_announced_with_a_bar_each_on_a_terminal(tmp_path):
    """--platforms linux64,aarch64-linux: both builds announced in order, each with its
    own tqdm bar (drawn with carriage returns) on the terminal; --quiet: nothing. Slow
    (.ci/run's second step): the first aarch64 build on a machine compiles zig's glibc
    stubs."""
    pytest.importorskip("ziglang")
    exe = str(BIN / "hystmech")
    cmd = [exe, "export-fmu", "Dahl", "--param", "rho=200", "--param", "Fc=2",
           "--platforms", "linux64,aarch64-linux", "-o", str(tmp_path / "d.fmu")]
    rc, out, err = _run_on_terminal(cmd, dict(os.environ))
    assert rc == 0, err
    assert _binaries(tmp_path / "d.fmu") == ["aarch64-linux", "linux64"]
    a = err.index("building binaries/linux64 (1 of 2, zig cc -target x86_64-linux-gnu")
    b = err.index("building binaries/aarch64-linux (2 of 2, zig cc -target aarch64-linux")
    assert a < b
    # a finished bar per platform: "  <platform>: <full bar> <elapsed>"
    for plat in ("linux64", "aarch64-linux"):
        assert re.search(rf"  {plat}: █+ \d\d:\d\d", err), err
    rc, out, err = _run_on_terminal(cmd[:-2] + ["--quiet", "-o", str(tmp_path / "q.fmu")],
                                    dict(os.environ))
    assert rc == 0 and err == "", err


def test_cli_and_return_value_list_the_variables(tmp_path):
    """Every input, output and parameter of the FMU's modelDescription.xml (read with
    ElementTree) appears with its causality and unit in the CLI's output, in the repr
    of export_fmu's return value and in the FMU's documentation/index.html."""
    el = get_element_class("LuGre")(sigma0=1e5, sigma1=300.0, Fc=1.0, Fs=1.5, vs=0.01)
    p = export_fmu(el, tmp_path / "l.fmu", fmi_version=3)
    # FMI 3.0: the variables are the children of <ModelVariables> (Float64, ...)
    with zipfile.ZipFile(p) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
        html = zf.read("documentation/index.html").decode()
    want = [(e.get("name"), e.get("causality", "local"), e.get("unit") or "")
            for e in root.find("ModelVariables")]
    shown = [v for v in want if v[1] in ("input", "output", "parameter")]
    assert {"u", "v", "F"} <= {n for n, _, _ in shown}
    text = repr(p)
    for name, caus, unit in shown:
        assert re.search(rf"^  {re.escape(name)} +{caus} +\[{re.escape(unit)}\]", text, re.M), \
            (name, text)
        assert f"<tr><td>{name}</td><td>{caus}</td><td>{unit}</td>" in html
    assert [(v.name, v.causality, v.unit) for v in p.variables] == want
    assert p.variable("F").unit == "N" and p.fmi_version == 3
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "Dahl", "--param", "rho=200",
                        "--param", "Fc=2", "-o", str(tmp_path / "d.fmu")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for name, caus, unit in _description_variables(tmp_path / "d.fmu"):
        if caus in ("input", "output", "parameter"):
            assert re.search(rf"^  {re.escape(name)} +{caus} +\[{re.escape(unit)}\]",
                             r.stdout, re.M), (name, r.stdout)


def test_fmi_guide_lists_the_variables(tmp_path):
    """docs/guide/fmi.md has a table row for each variable every exported FMU has
    (u, v, F, rtol) with the causality and unit the FMU declares."""
    guide = (ROOT / "docs" / "guide" / "fmi.md").read_text()
    p = export_fmu(Dahl(rho=200.0, Fc=2.0), tmp_path / "d.fmu")
    for name, caus, unit in _description_variables(p):
        if name in ("u", "v", "F", "rtol"):
            assert re.search(rf"^\| `{name}` \| {caus} \| {re.escape(unit)} \| \S", guide,
                             re.M), name


def test_build_failure_says_why(tmp_path):
    """A compiler that fails printing nothing on stderr: the message still ends in a
    reason (its stdout, else its exit status or signal); one that cannot start: the
    system's reason."""
    el = Dahl(rho=200.0, Fc=2.0)
    cases = {
        "stdout_only.sh": ('echo "fatal: out of licences"; exit 3', "fatal: out of licences"),
        "silent.sh": ("exit 4", "the compiler exited with status 4 and printed nothing"),
        "killed.sh": ("kill -9 $$", "the compiler was killed by signal SIGKILL"),
    }
    for fname, (body, reason) in cases.items():
        cc = tmp_path / fname
        cc.write_text(f"#!/bin/sh\n{body}\n")
        cc.chmod(0o755)
        with pytest.raises(FMUExportError) as ei:
            # a fresh cache: a binary cached by another test must not hide the failure
            os.environ["HYSTMECH_FMU_CACHE"] = str(tmp_path / "cache")
            try:
                export_fmu(el, tmp_path / "x.fmu", cc=str(cc), platforms="native")
            finally:
                del os.environ["HYSTMECH_FMU_CACHE"]
        msg = str(ei.value)
        assert msg.startswith("building the linux64 binary failed (")
        tail = msg.split("):", 1)[1].strip()
        assert tail and reason in tail, msg
    assert not (tmp_path / "x.fmu").exists()
    # the command line: exit 2, one line on stderr, the compiler's lines joined
    cc = tmp_path / "two_lines.sh"
    cc.write_text('#!/bin/sh\necho "x.c:1: error: one" >&2\necho "x.c:2: error: two" >&2\n'
                  'exit 1\n')
    cc.chmod(0o755)
    env = dict(os.environ, CC=str(cc), HYSTMECH_FMU_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "Dahl", "--param", "rho=200",
                        "--param", "Fc=2", "-o", str(tmp_path / "y.fmu")],
                       capture_output=True, text=True, env=env, timeout=300)
    lines = r.stderr.splitlines()
    assert r.returncode == 2 and lines[-1].startswith("hystmech: error: building the linux64")
    assert all(ln.startswith("building binaries/") for ln in lines[:-1]), lines
    assert lines[-1].endswith("x.c:1: error: one | x.c:2: error: two"), lines


CHILD = textwrap.dedent(r'''
    import json, struct, sys
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Slave

    path, field = sys.argv[1], struct.pack("<4d", *map(float, sys.argv[2:6]))
    md = read_model_description(path)
    f = FMU3Slave(guid=md.guid, unzipDirectory=extract(path),
                  modelIdentifier=md.coSimulation.modelIdentifier, instanceName="r")
    msgs = []
    f.instantiate(logMessage=lambda env, st, cat, msg: msgs.append(msg.decode()))
    f.enterInitializationMode(startTime=0.0)
    f.exitInitializationMode()
    f.setFloat64([1, 2], [1e-3, 0.0])
    f.doStep(0.0, 1e-3)
    blob = bytearray(f.serializeFMUState(f.getFMUState()))
    at = blob.find(field)
    assert at >= 0 and blob.find(field, at + 1) < 0
    # max_depth, the last of the four, one ulp above its built value
    blob[at + 24:at + 32] = struct.pack("<d", float(sys.argv[6]))
    try:
        f.deserializeFMUState(bytes(blob))
        status = "ok"
    except Exception:
        status = "error"
    print("RESULT " + json.dumps({"status": status, "messages": msgs}))
''')


def test_preisach_corrupted_max_depth_message_does_not_contradict_itself(tmp_path):
    """A serialised FMI 3 Preisach state whose max_depth is one ulp off is refused, and
    the message shows the two numbers as different (it said "256 (got 256)")."""
    import json

    el = get_element_class("Preisach")(a1=[-0.004, -0.002, 0.0], a2=[-0.001, 0.003, 0.002],
                                       weights=[3.0, 5.0, 2.0], initial=-1, max_depth=256)
    p = export_fmu(el, tmp_path / "P3.fmu", fmi_version=3)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    bad = math.nextafter(256.0, 300.0)
    # initial, k0, offset, max_depth lie side by side in the constructor parameters
    r = subprocess.run([sys.executable, str(script), str(p), "-1", "0", "0", "256", repr(bad)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert out["status"] == "error"
    msg = [m for m in out["messages"] if "max_depth" in m]
    assert msg, out["messages"]
    m = re.search(r"must be (\S+) \(got (\S+)\)", msg[-1])
    assert m and float(m.group(1)) == 256.0 and float(m.group(2)) == bad, msg[-1]


def test_cli_max_size_and_flange(tmp_path):
    """`--max-size` and `--flange` reach export_fmu: the FMI 3 modelDescription (read with
    ElementTree) declares the structural length with max = C and start = the exported
    length, a rotational export declares rad and N.m; a capacity for FMI 2 exits 2 with
    one line naming max_size."""
    out = tmp_path / "m.fmu"
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "MaxwellSlip",
                        "--param", "k=[1e4, 2e4, 3e4]", "--param", "delta=[1e-4, 2e-4, 3e-4]",
                        "--fmi", "3", "--max-size", "7", "-q", "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(out) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    sp = [e for e in root.find("ModelVariables") if e.get("causality") == "structuralParameter"]
    assert [(e.tag, e.get("name"), e.get("start"), e.get("max")) for e in sp] == \
        [("UInt64", "n_elements", "3", "7")]
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "Dahl", "--param", "rho=200",
                        "--param", "Fc=2", "--flange", "rotational", "-q",
                        "-o", str(tmp_path / "r.fmu")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    units = {n: u for n, _, u in _description_variables(tmp_path / "r.fmu")}
    assert units["u"] == "rad" and units["F"] == "N.m", units
    r = subprocess.run([str(BIN / "hystmech"), "export-fmu", "MaxwellSlip",
                        "--param", "k=[1e4]", "--param", "delta=[1e-4]", "--max-size", "4",
                        "-q", "-o", str(tmp_path / "x.fmu")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "max_size" in r.stderr
