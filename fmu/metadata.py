"""FMI metadata of each exportable law: output/derivative dependencies, parameter
ranges, state names/units/descriptions (read by fmu/export.py and fmu/fmi3.py).

One declaration per law, keyed by the law's ``force`` kernel (the protocol member that
identifies a law's C twin, as in :func:`hystmech.fmu.export.law_spec`), never by a class
name string:

- ``force``/``rate``: which of the knowns the output F and the state rates depend on:
  ``"u"`` (displacement input), ``"v"`` (velocity input), ``"x"`` (the law's own states;
  for a rate: all of them). Only continuous states are FMI knowns, so ``"x"`` appears
  in ``<Dependencies>`` for smooth laws only (inclusions and operators hold discrete
  states). Verified against a finite-difference probe of the compiled FMU in
  tests/test_fmu_metadata.py.
- ``ranges``: the allowed interval of each constructor parameter, the same check the
  constructor (and the C ``setup``) makes; parameters whose Param description states
  its range ("> 0", ">= 0", "in [-1, 1]") take it from there (:func:`parse_range`),
  the table holds the rest. Written as FMI ``min``/``max`` (an open bound becomes the
  next representable double inside it). Bounds relative to another tunable parameter
  (BoucWen gamma in (-beta, beta], Masing w0 in [-eta, eta]) are not fixed numbers and
  stay in the description only.
- ``fixed``: parameters that set sizes compiled into the FMU (Preisach max_depth, the
  continuous grid's n): ``min = max =`` the exported value.
- ``states(element)``: (name, unit, description) per state.
- ``sized(element)``: the FMI 3.0 structural parameter of a law whose array parameters
  share one length that the law's C kernel reads at run time (Maxwell-slip's number of
  elements, the discrete Preisach's number of relays), or None: its name, the arrays it
  sizes, and the state and kernel-parameter counts as C expressions in that length
  ``n`` (the state count None when it does not depend on n). fmu/fmi3.py declares it as
  a ``<UInt64 causality="structuralParameter">`` that the arrays' ``<Dimension>`` refer
  to; the FMU is compiled for a capacity (``export_fmu(..., max_size=)``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..components.bouc_wen import bouc_wen_force
from ..components.dahl import dahl_force
from ..components.linear import damper_force, spring_damper_force, spring_force
from ..components.lugre import lugre_force
from ..components.masing import masing_force
from ..components.maxwell_slip import maxwell_slip_force
from ..components.modified_dahl import modified_dahl_force
from ..components.preisach import preisach_force, relay_force
from ..components.viscous_dahl import asym_force, viscous_dahl_force

# units of a generic operator's input/output inside an FMU, whose input u is in m and
# output F in N (Relay, Preisach declare their thresholds in "input" units)
GENERIC_UNITS = {"input": "m", "output": "N", "output/input": "N/m", "input/output": "m/N"}


@dataclass(frozen=True)
class Range:
    """lo (<|<=) value (<|<=) hi; ``values``: the only allowed values (e.g. ±1)."""

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    values: tuple = ()

    def fmi_min(self) -> float | None:
        """Inclusive lower bound for FMI ``min`` (None: unbounded)."""
        if self.values:
            return float(min(self.values))
        if self.lo == -math.inf:
            return None
        return float(np.nextafter(self.lo, math.inf)) if self.lo_open else float(self.lo)

    def fmi_max(self) -> float | None:
        if self.values:
            return float(max(self.values))
        if self.hi == math.inf:
            return None
        return float(np.nextafter(self.hi, -math.inf)) if self.hi_open else float(self.hi)

    def text(self) -> str:
        if self.values:
            return " or ".join(f"{v:g}" for v in self.values)
        return (("(" if self.lo_open or self.lo == -math.inf else "[") + f"{self.lo:g}, "
                f"{self.hi:g}" + (")" if self.hi_open or self.hi == math.inf else "]"))


POS = Range(0.0, lo_open=True)
NONNEG = Range(0.0)
UNIT = Range(-1.0, 1.0)
SIGN = Range(values=(-1.0, 1.0))


def parse_range(doc: str) -> Range | None:
    """The range a Param description states: "> 0", ">= 0", "in [-1, 1]", "in (0, 1]";
    None when the text states none (or a range relative to another parameter)."""
    d = (doc or "").strip()
    # a bound opens the text or a comma-separated clause ("> 0", "stiffness, > 0"); a
    # comparison of another parameter ("n > 1 needs beta >= 0") is not this one's range
    m = re.search(r"(?:^|,\s*)(>=|>)\s*(-?[\d.]+(?:e-?\d+)?)(?=$|[\s,;)])", d)
    if m:
        return Range(float(m.group(2)), lo_open=m.group(1) == ">")
    m = re.search(r"\bin\s*([\[(])\s*(-?[\d.]+(?:e-?\d+)?|-inf)\s*,\s*(-?[\d.]+(?:e-?\d+)?|inf)"
                  r"\s*([\])])", d)
    if m:
        return Range(float(m.group(2)), float(m.group(3)), m.group(1) == "(",
                     m.group(4) == ")")
    m = re.search(r"(-?\d+) or \+?(\d+)", d)
    if m:
        return Range(values=(float(m.group(1)), float(m.group(2))))
    return None


def _one(name, unit, desc):
    return lambda el: [(name, unit, desc)]


def _maxwell_states(el):
    return [(f"Z[{i}]", "m", f"deflection of asperity spring {i} (stiffness k[{i}]), "
             f"|Z[{i}]| <= delta[{i}] (slips beyond)") for i in range(el.n_states)]


def _preisach_states(el):
    D = (el.n_states - 3) // 2
    out = [("memory.u_last", "m", "last input value (the current, open extremum)"),
           ("memory.depth", "1", f"number of entries in the memory stack (1 to {D})"),
           ("memory.bottom", "1", "type of the bottom stack entry: -1 minimum (negative "
                                  "saturation), +1 maximum (positive saturation)")]
    out += [(f"memory.extremum[{j}]", "m", f"dominant input extremum {j} of the memory "
             f"curve (types alternate from the bottom; valid below memory.depth)")
            for j in range(D)]
    out += [(f"memory.sum[{j}]", "N", f"Everett sum of the memory curve up to "
             f"memory.extremum[{j}] (Manfredo et al. (2023), eq. (10))") for j in range(D)]
    return out


@dataclass(frozen=True)
class Sized:
    """A structural parameter: ``name`` sets the common length n of ``arrays``; the law
    then has ``nx`` states (C expression in n, None: independent of n) and at most ``np``
    kernel parameters (C expression in n, also valid Python)."""

    name: str
    arrays: tuple
    nx: str | None
    np: str
    doc: str

    def n_x(self, n: int) -> int | None:
        return None if self.nx is None else int(eval(self.nx, {}, {"n": int(n)}))  # noqa: S307

    def n_p(self, n: int) -> int:
        return int(eval(self.np, {}, {"n": int(n)}))  # noqa: S307


@dataclass(frozen=True)
class LawMeta:
    force: frozenset
    rate: frozenset = frozenset()
    ranges: dict | Callable = field(default_factory=dict)   # or element -> dict
    fixed: tuple = ()
    states: Callable | None = None
    units: dict = field(default_factory=dict)   # parameters not described in param_info
    tunable: tuple = ()   # changeable mid-run: they size nothing and bound no state
    sized: Callable | None = None   # element -> Sized or None


def _m(force, rate="", ranges=None, fixed=(), states=None, units=None, tunable=(),
       sized=None):
    return LawMeta(frozenset(force), frozenset(rate),
                   ranges if callable(ranges) else dict(ranges or {}), tuple(fixed), states,
                   dict(units or {}), tuple(tunable), sized)


# p = [n, k[n], Delta[n]], x = Z[n] (maxwell_slip.c)
_MAXWELL_N = Sized("n_elements", ("k", "delta", "z0"), nx="n", np="2*n + 1",
                   doc="number of asperity elements n (the length of k, delta and z0)")
# p = [9 header values, A2[n2], A1[n1], T[(n2+1)(n1+1)]] with n1, n2 <= n distinct
# thresholds (preisach.c); the state (the memory stack) is sized by max_depth only
_PREISACH_N = Sized("n_relays", ("a1", "a2", "weights"), nx=None,
                    np="9 + 2*n + (n + 1)*(n + 1)",
                    doc="number of relays n (the length of a1, a2 and weights)")


LAWS = {
    # F = Fc·w: the state only; ẇ = ρ(v − |v| w)
    dahl_force: _m("x", "xv", states=_one("w", "1", "normalised friction state w = F/Fc, "
                                          "in [-1, 1]"), tunable=("rho", "Fc")),
    # F = σ0 z + σ1 ż(v) + σ2 v: through σ1 and f(v) on v
    lugre_force: _m("xv", "xv", ranges={"sigma0": POS, "sigma1": NONNEG, "Fc": POS,
                                        "vs": POS, "beta": POS, "sigma2": NONNEG},
                    states=_one("x", "m", "average bristle deflection z"),
                    tunable=("sigma1", "sigma2", "Fc", "Fs")),
    # the state is the force; its rate follows the envelopes a u + b, d u + e
    modified_dahl_force: _m("x", "xuv", states=_one("F", "N", "force (the state is the "
                                                    "output force)")),
    # an MR damper's coefficients follow its coil current: tunable
    viscous_dahl_force: _m("xv", "xv", states=_one("w", "1", "normalised Dahl state, "
                                                   "in [-1, 1]"), tunable=("kx", "kw")),
    asym_force: _m("xv", "xv", states=_one("w", "1", "normalised Dahl state, in [-1, 1]"),
                   tunable=("kx1", "kw1", "kx2", "kw2")),
    # F = k_el u + z
    bouc_wen_force: _m("xu", "xv", states=_one("z", "N", "hysteretic force z"),
                       tunable=("k_el",)),
    # F = k w + k0 u + c u̇ − F0, w discrete (projection onto [−η, η])
    # k and alpha set eta, the bound of w: not tunable
    masing_force: _m("xuv", "v", states=_one("w", "m", "deflection of the series spring k, "
                                             "in [-eta, eta], eta = alpha/k"),
                     tunable=("k0", "F0", "c")),
    maxwell_slip_force: _m("x", "v", states=_maxwell_states, sized=lambda el: _MAXWELL_N),
    relay_force: _m("xu", states=_one("R", "1", "relay output, -1 or +1")),
    # slope_width is used (and checked) in the discrete mode only, grid in the continuous
    preisach_force: _m("xu", ranges=lambda el: ({"slope_width": POS}
                                               if el.params.get("grid") is None
                                               else {"grid[0]": POS}),
                       fixed=("max_depth", "grid[1]"), states=_preisach_states,
                       units={"slope_width": "input", "grid[0]": "input", "grid[1]": "1"},
                       # the continuous grid's cell count is tied to grid[1], fixed
                       sized=lambda el: _PREISACH_N if el.params.get("grid") is None
                       else None),
    spring_force: _m("u", tunable=("k", "u0")),
    damper_force: _m("v", tunable=("c",)),
    spring_damper_force: _m("uv", tunable=("k", "c", "u0")),
}


def law_meta(element) -> LawMeta | None:
    """The declaration of a single (non-sum) element's law, None if it has none."""
    try:
        return LAWS.get(element.force)
    except TypeError:  # an unhashable custom kernel
        return None


def sized(element) -> Sized | None:
    """The structural parameter of ``element``'s law (FMI 3.0), None if it has none."""
    meta = law_meta(element)
    return None if meta is None or meta.sized is None else meta.sized(element)


def param_range(element, name: str) -> Range | None:
    """Allowed range of parameter ``name`` as the FMU names it (``k``, or ``k[2]`` for an
    element of an array parameter: elementwise ranges apply to every element)."""
    meta = law_meta(element)
    base = name.split("[", 1)[0]
    if meta is not None:
        table = meta.ranges(element) if callable(meta.ranges) else meta.ranges
        for key in (name, base):
            if key in table:
                return table[key]
    for pi in element.param_info:
        if pi.name == base:
            return parse_range(pi.doc)
    return None


def is_fixed(element, name: str) -> bool:
    """True for a parameter that sets a size compiled into the FMU."""
    meta = law_meta(element)
    return meta is not None and (name in meta.fixed or name.split("[", 1)[0] in meta.fixed)


def is_tunable(element, name: str) -> bool:
    """True for a parameter that may change mid-run (FMI variability "tunable")."""
    meta = law_meta(element)
    return meta is not None and name in meta.tunable


def param_unit(element, name: str, unit: str = "") -> str:
    """Unit of parameter ``name`` as the FMU states it: the Param unit, else the law's
    declaration; generic operator units ("input", "output") mapped to m and N."""
    meta = law_meta(element)
    if not unit and meta is not None:
        unit = meta.units.get(name) or meta.units.get(name.split("[", 1)[0], "")
    return fmu_unit(unit)


def fmu_unit(unit: str) -> str:
    """A Param unit as the FMU states it (generic operator units mapped to m/N)."""
    return GENERIC_UNITS.get(unit, unit)
