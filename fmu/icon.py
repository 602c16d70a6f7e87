"""The FMU's icon (``model.png``, FMI 3.0 also ``terminalsAndIcons/icon.png``): the law's
own force-displacement loop, drawn from the FMU just built.

The loop is what the binary computes: the exported FMU (this machine's binary, before it
is zipped) is stepped in co-simulation through two periods of u = A sin(2πt), v = du/dt,
for amplitudes A from 1e-7 to 1 m (decades), and the second period of the most
open loop (largest enclosed area relative to its bounding box) is drawn, its interior
filled; a law without hysteresis (a spring) gives a line.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

ICON_PX = 128
N_STEPS = 64                        # co-simulation steps per period
AMPLITUDES = np.logspace(-7.0, 0.0, 8)
FILL = "#9ecae1"                    # the loop's interior
LINE = "#08306b"                    # the loop


def _open_fmu(root: Path, fmi_version: int, ident: str):
    """(fmu, set, get, value references, start): start() (re)initialises at t = 0."""
    from fmpy import read_model_description

    md = read_model_description(str(root), validate=False)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    if fmi_version == 2:
        from fmpy.fmi2 import FMU2Slave

        f = FMU2Slave(guid=md.guid, unzipDirectory=str(root), modelIdentifier=ident,
                      instanceName="icon")
        f.instantiate()

        def start():
            f.setupExperiment(startTime=0.0)
            f.enterInitializationMode()
            f.exitInitializationMode()
        return f, f.setReal, f.getReal, vr, start
    from fmpy.fmi3 import FMU3Slave

    f = FMU3Slave(guid=md.guid, unzipDirectory=str(root), modelIdentifier=ident,
                  instanceName="icon")
    f.instantiate()

    def start():
        f.enterInitializationMode(startTime=0.0)
        f.exitInitializationMode()
    return f, f.setFloat64, f.getFloat64, vr, start


def law_loop(root, fmi_version: int, ident: str):
    """(u [m], F [N]) over the second period of the most open loop of the FMU unpacked
    at ``root`` (see the module docstring), or None when it cannot run here."""
    try:
        f, put, get, vr, start = _open_fmu(Path(root), fmi_version, ident)
    except Exception:  # noqa: BLE001 - no binary for this machine: no icon
        return None
    best, best_score = None, -1.0
    w = 2.0 * np.pi
    h = 1.0 / N_STEPS
    try:
        for A in AMPLITUDES:
            us, Fs = [], []
            try:
                f.reset()   # one instance for every amplitude, from its start state
                start()
                for k in range(2 * N_STEPS + 1):
                    t = k * h
                    put([vr["u"], vr["v"]], [A * np.sin(w * t), A * w * np.cos(w * t)])
                    if k >= N_STEPS:
                        us.append(A * np.sin(w * t))
                        Fs.append(get([vr["F"]])[0])
                    f.doStep(t, h)
            except Exception:  # noqa: BLE001 - an amplitude the law refuses: skip it
                continue
            u, F = np.array(us), np.array(Fs)
            span = (u.max() - u.min()) * (F.max() - F.min())
            if not np.all(np.isfinite(F)) or span <= 0.0:
                continue
            # shoelace area of the closed loop, relative to its bounding box
            score = 0.5 * abs(np.dot(u, np.roll(F, -1)) - np.dot(F, np.roll(u, -1))) / span
            if score > best_score + 1e-9:
                best, best_score = (u, F), score
    finally:
        try:
            f.terminate()
        except Exception:  # noqa: BLE001 - terminate after an error may be refused
            pass
        f.freeInstance()
    return best


def write_icon(u, F, path) -> None:
    """Draw the loop (u, F) into the PNG ``path`` (ICON_PX square, transparent)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1.0, 1.0), dpi=ICON_PX)
    ax = fig.add_axes((0.08, 0.08, 0.84, 0.84))
    ax.fill(u, F, color=FILL, linewidth=0)
    ax.plot(u, F, color=LINE, linewidth=2.0)
    ax.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
    ax.axvline(0.0, color="0.6", linewidth=0.6, zorder=0)
    ax.set_axis_off()
    fig.savefig(path, dpi=ICON_PX, transparent=True)
