"""Limits on work, stated before a run starts.

Each runner declares a work estimate (``hystmech.runners.WORK``): the solver steps, the
stored samples and the grid points its config asks for, computed from the config alone
(e.g. the belt rig: (t_end − t0)/h steps). A run whose estimate exceeds a limit is
refused with exit code 2 and the estimate in words ("h = 1e-12 s over 3.3 s is 3.3e+12
steps"), before anything is allocated. The limits are generous for the shipped
scenarios (the full Fig. 21 sweep is 3712 points of 2e6 steps) and can be raised
(``--max-steps``, ``--max-samples``, ``--max-points``) or lifted (``--no-limits``).
"""
from __future__ import annotations

import math

# per run (per point for a sweep): solver steps; stored samples (each sample holds a few
# float64 per state: 5e7 samples is a few GB); points of a parameter sweep
DEFAULT_LIMITS = {"steps": 1e9, "samples": 5e7, "points": 1e5}
FLAGS = {"steps": "--max-steps", "samples": "--max-samples", "points": "--max-points"}


def estimate(runner, cfg: dict) -> dict:
    """{quantity: (value, sentence)} of a resolved runner for cfg ({} if it declares none).
    A config the estimate cannot read (wrong types) gives {}: the schema or the runner
    reports that problem."""
    work = getattr(runner, "work", None)
    if work is None:
        return {}
    try:
        est = work(cfg) or {}
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError):
        return {}
    return {k: v for k, v in est.items() if v is not None}


def check(runner, cfg: dict, limits: dict | None = None) -> dict:
    """Refuse (ScenarioError, exit 2) a run whose estimate exceeds a limit; returns the
    estimate. ``limits`` overrides DEFAULT_LIMITS per quantity; None for a quantity (or
    ``limits=False``) lifts it."""
    from .scenario import ScenarioError

    est = estimate(runner, cfg)
    if limits is False:
        return est
    lim = dict(DEFAULT_LIMITS)
    lim.update(limits or {})
    for q, (value, how) in est.items():
        cap = lim.get(q)
        if cap is None:
            continue
        if not math.isfinite(value) or value > cap:
            flag = FLAGS.get(q, "--no-limits")
            raise ScenarioError(f"{how}, above the limit of {cap:.3g} {q} per run (raise it "
                                f"with {flag} N or lift the limits with --no-limits)")
    return est
