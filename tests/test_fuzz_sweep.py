"""Sweep rows under torn writes and corruption (issue 15, item 4), fuzzed.

Property: whatever prefix of an FRF file survives (a power loss or a full disk cuts it at
any byte) and whatever single byte is changed, every point scan_frf accepts carries its
true value; the rows it drops are exactly those not intact, so a resume recomputes them.
No simulation runs here: the rows hold synthetic values written by the sweep's writer.
"""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hystmech.systems.periodic.sweep import HEADER, format_row, scan_frf

SET = settings(max_examples=300, deadline=None)


@st.composite
def frf_files(draw):
    n = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    truth = {}
    for _ in range(n):
        key = (str(rng.choice(["mdm", "masing"])), float(rng.choice([13.0, 27.0, 300.0])),
               float(np.round(rng.uniform(10, 125), int(rng.integers(0, 6)))))
        truth.setdefault(key, float(rng.lognormal(5.0, 1.0)))
    text = ",".join(HEADER) + "\n" + "".join(format_row(*k, v) for k, v in truth.items())
    return truth, text.encode()


def _write(tmp_path, data: bytes):
    p = tmp_path / "frf.csv"
    p.write_bytes(data)
    return p


@SET
@given(f=frf_files(), frac=st.floats(0.0, 1.0))
def test_a_file_cut_anywhere_keeps_only_intact_rows(tmp_path_factory, f, frac):
    truth, data = f
    cut = int(frac * len(data))
    p = _write(tmp_path_factory.mktemp("cut"), data[:cut])
    done, dropped = scan_frf(p)
    for k, v in done.items():
        assert truth[k] == v                          # never a torn value
    # exactly the rows whose newline survived are kept
    n_complete = data[:cut].count(b"\n") - 1          # minus the header line
    assert len(done) == max(n_complete, 0)
    assert len(dropped) == (1 if cut and not data[:cut].endswith(b"\n") else 0)


@SET
@given(f=frf_files(), pos=st.floats(0.0, 1.0), byte=st.integers(0, 255))
def test_one_changed_byte_is_never_accepted_as_a_result(tmp_path_factory, f, pos, byte):
    truth, data = f
    i = min(int(pos * len(data)), len(data) - 1)
    if data[i] == byte:
        return
    bad = data[:i] + bytes([byte]) + data[i + 1:]
    p = _write(tmp_path_factory.mktemp("flip"), bad)
    done, dropped = scan_frf(p)
    for k, v in done.items():
        assert truth[k] == v                          # CRC32 catches every 1-byte change
    if len(done) < len(truth):
        assert dropped
    if i > data.index(b"\n"):
        # a data row: that row (or the one a lost newline merged it with) is dropped;
        # a damaged header drops every row, which is safe (all are recomputed)
        assert len(done) >= len(truth) - 2
