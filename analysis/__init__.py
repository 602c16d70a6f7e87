"""Closed forms: variation and normalized input, steady LuGre/Dahl loops with their
minor loops, the Dahl loop area and its inverse, dissipated energy."""
from .variation import normalized_input, psi, turning_points, variation
from .lugre_loop import (LoopResult, MinorLoop, lugre_slow_limit, lugre_steady_loop,
                         lugre_steady_output, slow_params, theorem_a)
from .dahl_loop import dahl_h, dahl_loop_area, dahl_steady_loop, rho_from_loop_area
from .energy import cycle_energies, loop_energy
from .masing import (damping_at_frequency, damping_from_energy, identify_masing,
                     identify_masing_loop, masing_corners, masing_loop, masing_sine_loop,
                     viscous_energy)

__all__ = ["variation", "normalized_input", "psi", "turning_points",
           "LoopResult", "MinorLoop", "lugre_slow_limit", "lugre_steady_loop",
           "lugre_steady_output", "slow_params", "theorem_a",
           "dahl_h", "dahl_loop_area", "dahl_steady_loop", "rho_from_loop_area",
           "cycle_energies", "loop_energy",
           "damping_at_frequency", "damping_from_energy", "identify_masing",
           "identify_masing_loop", "masing_corners", "masing_loop", "masing_sine_loop",
           "viscous_energy"]
