"""FMI 3.0 ``terminalsAndIcons/terminalsAndIcons.xml`` of an exported force element.

One terminal, ``flange``: the element's two mechanical ends seen as one relative flange
pair, with the variables u, v (inputs) and F (output) as its members and the sign
convention in its description, the same as hystmech's Assembly (``add_element(name,
element, a, b)``): u = s_a − s_b [m], v = du/dt [m/s], and the element pushes with −F on
end a and +F on end b (F > 0 resists u > 0, e.g. a spring F = k·u).

Every law is a relation between a relative coordinate and the force it transmits, so
the same law serves a translational pair or, as a torsion law (the Exudyn torsional
connector, a PyElastica rod's twist), a rotational one: ``export_fmu(...,
flange="rotational")`` exports it with u = φ_a − φ_b [rad] (relative angle), v = dφ/dt
[rad/s], F = the torque τ [N.m], every parameter and state unit carried over (m -> rad,
N -> N.m: a stiffness N/m becomes N.m/rad), and the terminal a rotational flange pair
whose members are named phi_rel, w_rel, tau with the same sign convention (−τ on
flange a, +τ on flange b; τ > 0 resists φ > 0). Checked against the FMI 3.0 schema
shipped with fmpy (fmi3TerminalsAndIcons.xsd) in tests/test_fmu_terminals_icon.py.
"""
from __future__ import annotations

import re
from xml.sax.saxutils import quoteattr

# per flange: the units and meanings of the FMU's u, v and F
FLANGES = {
    "translational": dict(u=("m", "relative displacement"),
                          v=("m/s", "relative velocity"), F=("N", "force")),
    "rotational": dict(u=("rad", "relative angle"), v=("rad/s", "relative angular velocity"),
                       F=("N.m", "torque")),
}


def check_flange(flange) -> str:
    """``flange`` if it is one of FLANGES, else a ValueError naming the allowed ones."""
    if flange not in FLANGES:
        raise ValueError(f"flange must be one of {', '.join(map(repr, FLANGES))} "
                         f"(got {flange!r})")
    return flange


def flange_unit(unit: str, flange: str) -> str:
    """A translational unit as the rotational flange states it: length m -> rad, force
    N -> N.m (torque), e.g. "N/m" -> "N.m/rad", "N.s/m" -> "N.m.s/rad", "m/s" -> "rad/s";
    unchanged for the translational flange and for units without m or N."""
    if flange == "translational" or not unit:
        return unit

    def tok(m):
        w, pow_ = m.group(1), m.group(2) or ""
        if w == "m":
            return "rad" + pow_
        if w == "N":
            return "(N.m)" + pow_ if pow_ else "N.m"
        return m.group(0)
    return re.sub(r"\b([A-Za-z]+)\b(\^\S+?(?=[./)]|$)|\^\([^)]*\))?", tok, unit)

KINDS = {
    "translational": dict(
        kind="hystmech.Mechanics.Translational.RelativeFlanges",
        members=(("u", "s_rel"), ("v", "v_rel"), ("F", "f")),
        text="translational flanges a and b: u = s_a - s_b [m] (relative displacement), "
             "v = du/dt [m/s], F [N] the force the element transmits: -F on flange a, "
             "+F on flange b (F > 0 resists u > 0, e.g. a spring F = k*u)"),
    "rotational": dict(
        kind="hystmech.Mechanics.Rotational.RelativeFlanges",
        members=(("u", "phi_rel"), ("v", "w_rel"), ("F", "tau")),
        text="rotational flanges a and b: u = phi_a - phi_b [rad] (relative angle), "
             "v = du/dt [rad/s], F [N.m] the torque the element transmits: -F on "
             "flange a, +F on flange b (F > 0 resists u > 0)"),
}


def flange_kind(u_unit: str) -> str:
    """'rotational' when u is an angle, else 'translational'."""
    return "rotational" if u_unit in ("rad", "deg") else "translational"


def terminals_xml(u_unit: str = "m") -> str:
    """The terminalsAndIcons.xml text (FMI 3.0) for an element with inputs u, v and
    output F; the icon (terminalsAndIcons/icon.png) spans the coordinate system."""
    k = KINDS[flange_kind(u_unit)]
    members = "".join(
        f'\n      <TerminalMemberVariable variableName="{v}" memberName="{m}" '
        f'variableKind="signal"/>' for v, m in k["members"])
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<fmiTerminalsAndIcons fmiVersion="3.0">
  <GraphicalRepresentation>
    <CoordinateSystem x1="-100" y1="-100" x2="100" y2="100" suggestedScalingFactorTo_mm="0.1"/>
    <Icon x1="-100" y1="-100" x2="100" y2="100"/>
  </GraphicalRepresentation>
  <Terminals>
    <Terminal name="flange" matchingRule="bus" terminalKind="{k['kind']}"
      description={quoteattr(k['text'])}>{members}
    </Terminal>
  </Terminals>
</fmiTerminalsAndIcons>
"""
