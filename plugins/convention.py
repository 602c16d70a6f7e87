"""The displacement convention of every hystmech host (MuJoCo, Exudyn, PyElastica and
hystmech's own Assembly): what an element's input u is.

u is measured from the model's **reference configuration**, never from wherever the
first force evaluation happened:

* a joint (MuJoCo slide/hinge): u = q − q_ref with q_ref = the joint's ``springref``
  where given (nonzero), else ``qpos0`` (MuJoCo: the joint's ``ref``);
* a tendon: u = L − L(qpos0), its length in the reference configuration;
* a connector between two points or coordinates (Exudyn, Elastica): u = the relative
  displacement from the reference (undeformed, as-built) configuration;
* the Assembly: u = x_a − x_b, the reference configuration being x = 0 for every DOF;
* an explicit offset overrides the default reference: the MuJoCo config ``ref``.

The element starts in its initial state x0 at whatever u the simulation starts: setting
a position before the first step (MuJoCo ``qpos``, Assembly ``add_dof(x0=...)``) means
the element starts at that u, with no path from the reference traversed; a spring law
held away from its free length (LinearSpring's ``u0``) is therefore preloaded and
released at t = 0. Two hosts given the same model and initial positions thus produce the
same trajectory (tested in tests/test_plugins_mujoco_convention.py).
"""
from __future__ import annotations

import math

__all__ = ["joint_reference", "element_input"]


def joint_reference(qpos0: float, springref: float = 0.0, ref: float | None = None) -> float:
    """q_ref [m or rad] of a joint: ``ref`` if given, else ``springref`` if nonzero, else
    ``qpos0`` (the convention above). ValueError for non-finite values."""
    for name, val in (("qpos0", qpos0), ("springref", springref)):
        if not math.isfinite(val):
            raise ValueError(f"{name} must be finite (got {val!r})")
    if ref is not None:
        if not math.isfinite(ref):
            raise ValueError(f"ref must be finite (got {ref!r})")
        return float(ref)
    return float(springref) if springref != 0.0 else float(qpos0)


def element_input(q: float, q_ref: float) -> float:
    """u = q − q_ref [m or rad]: the element's input at coordinate q."""
    return q - q_ref
