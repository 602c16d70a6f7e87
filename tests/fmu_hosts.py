"""Third-party FMI tools driven by several test files: pythonfmu (a foreign FMU
builder) and libcosim (OSP's C++ co-simulation master, through libcosimpy)."""
import subprocess
import sys
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).parent


def build_pythonfmu(script: str, file_name: str, cwd) -> None:
    """Write ``script`` to cwd/file_name and build it with ``pythonfmu build`` there (the
    FMU is named after the script's slave class)."""
    (Path(cwd) / file_name).write_text(script)
    r = subprocess.run([str(BIN / "pythonfmu"), "build", "-f", file_name], cwd=cwd,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr


def libcosim_mass_law(mass_fmu, law_fmu, h: float, t_end: float, pos: str = "u"):
    """(t [s], position of the mass) from libcosim coupling a mass FMU (outputs ``pos``
    and v, input F) with a hystmech law FMU (inputs u, v, output F) in a closed loop:
    fixed step h [s], Jacobi exchange."""
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)
    n = int(round(t_end / h))
    ex = CosimExecution.from_step_size(step_size=int(round(h * 1e9)))
    ms = ex.add_local_slave(CosimLocalSlave(fmu_path=str(mass_fmu), instance_name="mass"))
    lw = ex.add_local_slave(CosimLocalSlave(fmu_path=str(law_fmu), instance_name="law"))
    vm = {v.name.decode(): v.reference for v in ex.slave_variables(ms)}
    vl = {v.name.decode(): v.reference for v in ex.slave_variables(lw)}
    ex.connect_real_variables(ms, vm[pos], lw, vl["u"])
    ex.connect_real_variables(ms, vm["v"], lw, vl["v"])
    ex.connect_real_variables(lw, vl["F"], ms, vm["F"])
    obs = CosimObserver.create_time_series()
    ex.add_observer(obs)
    obs.start_time_series(ms, vm[pos], CosimVariableType.REAL)
    ex.step(n)
    _, steps, x = obs.time_series_real_samples(ms, vm[pos], from_step=0, sample_count=n + 1)
    return np.asarray(steps) * h, np.asarray(x)
