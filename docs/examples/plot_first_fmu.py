"""
A law as an FMU, and back
=========================

Export the Dahl law (Ikhouane, Mañosa & Pujol, §1) as a native FMU (FMI 2.0,
co-simulation and model exchange in one binary, the law's own C kernel inside), import
it again as a force element and drive both with the same displacement: the loops are the
same to rounding. See the FMI page of the user guide for what each mode guarantees.
"""
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import hystmech
from hystmech.components import Dahl
from hystmech.fmu import FMUElement, export_fmu

law = Dahl(rho=200.0, Fc=2.0)                       # rho [1/m], Fc [N]
path = Path(tempfile.mkdtemp()) / "dahl.fmu"
export_fmu(law, path)                               # compiles components/dahl.c

t = np.linspace(0.0, 3.0, 3001)                     # s
u = 0.01 * np.sin(2 * np.pi * t) * np.minimum(1.0, t)   # m, growing then steady
direct = hystmech.drive(law, t, u)
fmu = FMUElement(path, parameters={"rho": 200.0, "Fc": 2.0})   # co-simulation FMU
through_fmu = hystmech.drive(fmu, t, u)

print(f"max |F_fmu - F_python| = {np.max(np.abs(through_fmu.force - direct.force)):.2e} N")

# %%
# The loop F(u) of the law and of its FMU:

fig, ax = plt.subplots(figsize=(6, 4.5))
ax.plot(1e3 * u, direct.force, lw=3, alpha=0.4, label="hystmech.drive(Dahl)")
ax.plot(1e3 * u, through_fmu.force, "k--", lw=1, label="the exported FMU")
ax.set_xlabel("u [mm]")
ax.set_ylabel("F [N]")
ax.legend()
ax.grid(alpha=0.3)
