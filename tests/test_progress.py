"""Progress on long work (issue 29): a tqdm bar on stderr when it is a terminal, none on
a pipe or a log and none with ``--quiet``; the API's long calls take progress=True or a
callable."""
import contextlib
import io

import pytest

from hystmech.cli import main


class Terminal(io.StringIO):
    def isatty(self):
        return True


DRIVE = """runner = "drive"
[element]
type = "Dahl"
rho = 300.0
Fc = 2.0
[input]
type = "sine"
amplitude = 0.01
omega = 6.0
duration = 1.0
n = 200
"""


def test_the_bar_is_tqdm_on_a_terminal_and_nothing_elsewhere():
    from hystmech.progress import bar

    term = Terminal()
    p = bar(term)
    for k in range(1, 5):
        p(k / 4, f"point {k}/4")
    text = term.getvalue()
    assert "100.0%" in text and "point 4/4" in text and "|" in text     # tqdm's bar
    assert text.endswith("\n")             # closed at fraction 1: the next line is clean
    pipe = io.StringIO()
    p = bar(pipe)
    p(0.5, "x"); p(1.0, "done")
    assert pipe.getvalue() == ""
    quiet = Terminal()
    p = bar(quiet, quiet=True)
    p(0.5, "x"); p(1.0, "done")
    assert quiet.getvalue() == ""


def test_progress_argument_takes_a_bool_or_a_callable():
    from hystmech.progress import resolve

    assert resolve(None) is None and resolve(False) is None
    assert callable(resolve(True))
    f = lambda frac, msg="": None  # noqa: E731
    assert resolve(f) is f
    with pytest.raises(ValueError, match="progress must be True, False, None or a callable"):
        resolve("yes")


def _run(argv, err):
    out = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def test_run_draws_the_bar_on_a_terminal_and_not_with_quiet(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(DRIVE)
    err = Terminal()
    code, out = _run(["run", p, "--out", tmp_path / "a"], err)
    assert code == 0 and "written:" in out
    assert "100.0%" in err.getvalue()
    for argv, stream in ((["run", p, "--out", tmp_path / "b", "--quiet"], Terminal()),
                         (["run", p, "--out", tmp_path / "c"], io.StringIO())):
        code, out = _run(argv, stream)
        assert code == 0 and "written:" in out
        assert "%" not in stream.getvalue(), stream.getvalue()


def test_a_long_api_call_draws_the_bar_with_progress_true(tmp_path, capsys, monkeypatch):
    # the rod's load steps: progress=True is the bar on stderr (a terminal here)
    import sys

    import numpy as np

    from hystmech.components import get_element_class
    from hystmech.systems.rigs.rod import Rod, quasi_static

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    law = get_element_class("Dahl")(rho=300.0, Fc=2.0)
    rod = Rod(N=4, L=0.4, law=law)
    res = quasi_static(rod, tip_force=np.linspace(0.0, 0.01, 5), progress=True)
    assert res.tip.shape[0] == 5
    assert "load step 5/5" in term.getvalue() and "100.0%" in term.getvalue()


def test_the_bar_is_drawn_on_a_terminal_that_reports_no_width(tmp_path):
    # a pseudo-terminal nobody sized reports 0 x 0 (`script -qc "hystmech run ..."`,
    # `docker exec -t`, some CI runners): tqdm following that width drew an empty line
    # at every update, so a shipped scenario ran with no visible bar
    import fcntl
    import os
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
    assert os.get_terminal_size(slave).columns == 0
    os.set_blocking(master, False)
    err = open(slave, "w", closefd=True)
    try:
        code, out = _run(["run", "mr-damper-fig11", "--out", tmp_path / "o"], err)
        err.flush()
        text = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            text += chunk
    finally:
        err.close()
        os.close(master)
    text = text.decode("utf-8", "replace")
    assert code == 0 and "written:" in out
    assert "100.0%" in text and "|" in text, repr(text[:300])
