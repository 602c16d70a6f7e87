"""FMI 3.0 ``terminalsAndIcons/terminalsAndIcons.xml`` of an exported force element.

One terminal, ``flange``: the element's two mechanical ends seen as one relative flange
pair, with the variables u, v (inputs) and F (output) as its members and the sign
convention in its description, the same as hystmech's Assembly (``add_element(name,
element, a, b)``): u = s_a − s_b [m], v = du/dt [m/s], and the element pushes with −F on
end a and +F on end b (F > 0 resists u > 0, e.g. a spring F = k·u). Translational for
every law exported today (u in m); a law whose u is an angle (rad) gets a rotational
flange pair (φ, ω, torque). Checked against the FMI 3.0 schema shipped with fmpy
(fmi3TerminalsAndIcons.xsd) in tests/test_fmu_terminals_icon.py.
"""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

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
